"""What the samples-log and prediction-file readers share: ``LogError`` (naming the file and line), how a log's
bytes are read (gzip or not) and found (``samples_logs``), the text fields they carry, option counts a benchmark
declares, and what ``input_files(frame)`` records per file."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from postprocess.analyses._paired import ordered_conditions
from postprocess.reading.answer_options import (
    declared_option_count,
)
from vdg_tasks.vocabulary.record import LogTooLarge, log_bytes


class LogError(ValueError):
    """An lmms-eval output that cannot be joined, with the file (and line) that says why."""


#: pandas' default text dtype (``str``); from pandas 3 on, arrow strings, which a reader's ``_packed`` arrays join as.
TEXT_DTYPE = pd.Series([""], dtype=str).dtype


ARROW_TEXT = isinstance(TEXT_DTYPE, pd.StringDtype) and TEXT_DTYPE.storage == "pyarrow"


def declared_counts(table: pd.DataFrame, benchmark: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(the record's own n_options, where its count comes from) per record: its ``n_options`` field (<NA>
    where it has none: ``load_frame`` resolves those across every file, ``postprocess.reading.answer_options``), and
    for the
    sources table the field, or the rule that gives a record without one its count (an ``--options-file``
    overrides either)."""
    own = pd.to_numeric(table["n_options"], errors="coerce") if "n_options" in table.columns else None
    counts = pd.Series(pd.NA, index=benchmark.index, dtype="Int64")

    def label(name: str) -> str:
        n = declared_option_count(name)
        return INFERRED_COUNT if n is None else f"benchmark {name!r} declares {n}"

    origin = per_distinct(benchmark, label, object)
    if own is not None:
        has_own = own.notna()
        counts[has_own] = own[has_own].round().astype("int64")
        origin[has_own] = OWN_COUNT
    return counts, origin


def versions_text(values: Iterable[Any]) -> str:
    """The distinct transform versions of a file's records, sorted, joined by ","; "" when none gives one."""
    found = set()
    for value in values:
        if value is None or value is msgspec.UNSET or (isinstance(value, float) and not np.isfinite(value)):
            continue
        text = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value).strip()
        if text:
            found.add(text)
    return ",".join(sorted(found, key=lambda t: (len(t), t)))


#: The name ending of a gzip-compressed log (``x_samples_task.jsonl.gz``), taken off to read the log's name.
GZIP_SUFFIX = ".gz"


def read_log_bytes(path: Path) -> bytes:
    """The bytes of a samples log or prediction file, decompressed when they are gzip (told by the magic bytes,
    whatever the name: a gzip file named ``x.jsonl`` reads as ``x.jsonl.gz`` does). Line numbers in later messages
    count lines of the decompressed text.

    Raises:
        LogError: naming the file, when it cannot be read, or is gzip that ends early (truncated) or is damaged.
    """
    try:
        return log_bytes(path)
    except LogTooLarge as exc:
        raise LogError(str(exc)) from None
    except EOFError:
        raise LogError(
            f"{path}: gzip-compressed, but it ends before its end-of-stream marker (truncated: was it copied or "
            "compressed while still being written?); `gzip -t` checks it. Recompress it from the original."
        ) from None
    except gzip.BadGzipFile as exc:  # a bad header or CRC
        raise LogError(f"{path}: gzip-compressed, but damaged ({exc}); `gzip -t` checks it") from None
    except zlib.error as exc:
        raise LogError(f"{path}: gzip-compressed, but damaged ({exc}); `gzip -t` checks it") from None
    except OSError as exc:
        raise LogError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def log_name(path: Path) -> str:
    """The name a log is known by: its own, less ``.gz`` (``x_samples_task.jsonl.gz`` is ``x_samples_task.jsonl``)."""
    return path.name.removesuffix(GZIP_SUFFIX)


def samples_logs(run: Path) -> list[Path]:
    """The lmms-eval samples logs of a run folder, sorted: ``*_samples_*.jsonl`` and ``*_samples_*.jsonl.gz`` at any
    depth (a file given itself is read as it is, gzip or not: ``read_log_bytes`` tells by its bytes).

    A folder holding one log both ways (``x.jsonl`` and ``x.jsonl.gz``, as ``gzip -k`` leaves them) is read once:
    when the two hold the same lines, the plain one is read and the copy skipped; when they differ, neither is
    preferred (the copy may be an older run, or the plain one a rerun) and it is an error naming both.

    Raises:
        LogError: no such file or folder, a folder with no samples log, or a log held twice with different lines.
    """
    if run.is_file():
        return [run]
    if not run.is_dir():
        raise LogError(f"{run}: no such file or folder")
    plain = {p for p in run.rglob("*_samples_*.jsonl") if p.is_file()}
    for packed in sorted(p for p in run.rglob(f"*_samples_*.jsonl{GZIP_SUFFIX}") if p.is_file()):
        twin = packed.with_name(log_name(packed))
        if twin not in plain:
            plain.add(packed)
        elif read_log_bytes(packed) != read_log_bytes(twin):
            raise LogError(
                f"{twin} and {packed}: one samples log both plain and compressed, with different lines, so "
                "vdg cannot tell which holds the run; keep the one you mean and remove (or move) the other"
            )
    if not plain:
        raise LogError(
            f"{run}: holds no lmms-eval samples log (*_samples_<task>.jsonl or .jsonl.gz); was --log_samples set?"
        )
    return sorted(plain)


def check_utf8(data: bytes, path: Path) -> None:
    """A byte that is not UTF-8 (which JSON requires) is an error naming its line: msgspec skips the fields it
    does not read unchecked, so such a byte would otherwise pass silently or end in a traceback."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise LogError(
            f"{path}:{line}: byte 0x{data[exc.start]:02x} at column {column} is not UTF-8 text; lmms-eval writes "
            "its logs as UTF-8: was the file re-encoded or damaged?"
        ) from None


#: ``n_options`` origin of a record with no count of its own, of a benchmark that declares none: inferred across
#: every file (``postprocess.reading.answer_options``).
INFERRED_COUNT = "not given: inferred per task type (largest letter of its key and replies)"


#: ``n_options`` origin of a record that gives its own count.
OWN_COUNT = "n_options field"


SOURCE_ATTR = "vdg_source"
#: The ``kind`` of a VLMEvalKit prediction file and of its evaluation's ``_score`` file
#: (``postprocess.reading.vlmevalkit``): each says VLMEvalKit (``harness_of``).
VLMEVALKIT_PREDICTIONS = "VLMEvalKit predictions"
VLMEVALKIT_SCORES = "VLMEvalKit scores"
#: The ``kind`` of a plain run of a benchmark's base task read as its orig (``vdg_tasks.jobs.base_runs``).
PLAIN_RUN_KIND = "plain run of the base task, read as orig (its prompt is the base task's)"


def harness_of(kind: str) -> str:
    """The harness behind an input file of ``kind`` (a ``sources`` entry's): "VLMEvalKit", "lmms-eval" (a samples
    log, a plain run of a base task), or "" (a prediction file of another harness, which names none)."""
    if kind in (VLMEVALKIT_PREDICTIONS, VLMEVALKIT_SCORES):
        return "VLMEvalKit"
    if kind == PLAIN_RUN_KIND or kind.startswith("lmms-eval"):
        return "lmms-eval"
    return ""


def _summarise_origins(counts: Sequence[tuple[Any, int]]) -> str:
    """'n_options field' or 'n_options field (10 records); benchmark 'x' declares 4 (2 records)'."""
    if len(counts) == 1:
        return str(counts[0][0])
    return "; ".join(f"{o} ({int(n)} records)" for o, n in counts)


def source_info(
    path: Path,
    kind: str,
    distinct: Mapping[str, Iterable[Any]],
    n_records: int,
    question_id_field: str,
    video_id_field: str,
    n_options_origins: Sequence[tuple[Any, int]],
    model_source: str = "",
    transform_version: str = "",
) -> dict[str, Any]:
    """One input file's entry of ``sources``: ``distinct`` holds its models, benchmarks and conditions,
    ``n_options_origins`` (where the option count came from, records) in order of appearance."""
    return {
        "file": str(path),
        "kind": kind,
        "model": ",".join(sorted({str(v) for v in distinct["model"]})),
        "benchmark": ",".join(sorted({str(v) for v in distinct["benchmark"]})),
        "conditions": ",".join(ordered_conditions(distinct["condition"])),
        "n_records": n_records,
        "question_id_field": question_id_field,
        "video_id_field": video_id_field,
        "n_options_source": _summarise_origins(n_options_origins),
        "model_source": model_source,
        "transform_version": transform_version,
    }


def per_distinct(values: pd.Series, fn: Callable[[Any], Any], dtype: Any) -> pd.Series:
    """``fn`` of each value, called once per distinct value (a file has one settings string, a benchmark...)."""
    if isinstance(values.dtype, pd.CategoricalDtype) and not values.isna().any():  # coded already
        codes, distinct = values.cat.codes.to_numpy(), values.cat.categories
    else:
        codes, distinct = pd.factorize(values, use_na_sentinel=False)
    return pd.Series(pd.array([fn(value) for value in distinct], dtype=dtype)[codes], index=values.index, dtype=dtype)
