"""lmms-eval output folders -> one tidy frame, one row per (model, benchmark, condition, question).

The join key is the question id that vdg's ``process_results`` hook logs (``doc_id`` is a row
position and ``doc_hash`` is constant in lmms-eval 0.7.3). Columns of the frame (``SAMPLE_COLUMNS``):

- model: the run's label (``NAME=DIR`` on the command line, else lmms-eval's model name and the
  basename of its ``pretrained=`` argument)
- model_settings: model_args and gen_kwargs of the run; one label must have one setting
- benchmark, condition, question_id, video_id, task_type, duration: from the logged record
- n_options: the question's number of options; n_options_rule: the rule that gave it (``postprocess.choices``:
  ``options file`` (``--options-file``), ``record`` (the record's own), ``benchmark declares`` or
  ``inferred per task type``)
- answer: ground-truth letter; pred: parsed letter or None
- status: ``ok`` (a letter among the question's options was read), ``unparsed`` (answered, no such
  letter: scored wrong) or ``error`` (no answer: missing or undecodable video); error: the reason
  for ``error``
- correct: True/False for ok and unparsed rows, <NA> for error and open rows
- source: ``file:line`` the row came from

Columns of the text conditions and the character-tracking protocol (``EXTRA_COLUMNS``; "" / NaN /
<NA> where they do not apply, and for prediction files that lack them):

- character: the character the original question names; idk_letter: the letter of the benchmark's
  own "I don't know" option
- swap_to, swap_gender (``same``/``cross``): ``nameswap`` rows: the name put in the question
- abstain_letter: ``abstain`` rows: the letter of the option vdg added
- question, response, truth: ``open`` rows (status ``open``, no letter, correct <NA>): the question
  asked, the reply and the ground truth it is judged against
- duration_s: the source video's duration in seconds; frames: frames per video the model was run
  with, read from its settings (``max_num_frames``, ``max_frames_num``, ``nframes``, ...)
- judge_score, judge: open rows once judged (``postprocess.judge``): 0, 0.5 or 1, and the judge
- precision: the model's quantization (``nf4``, ``int8``: its label is marked ``†nf4``) or dtype
  (``bf16``...) as its settings state it; "" when they state neither
- export: ``name@revision`` of the export a sample was evaluated from ("" when built from the cache)
- question_set: the digest of the fixed question set (``vdg subset``, ``VDG_QUESTION_SET``) the run was
  restricted to; "" when it ran on every question. Runs of one benchmark made on different sets (or one
  on a set, one on every question) are refused: their question lists differ
- domain, sub_category: the question's domain and sub-category (Video-MME's ``domain`` / ``sub_category``)
  as the record or prediction file gives them; "" when not given (``vdg report --by domain``)
- sampling: the frame-sampling setting of a sweep run (``frames:16``, ``fps:0.5``); "" when not logged.
  A prediction file states it per record in ``sampling`` or ``setting`` (``frames:16``, ``16f``,
  ``0.5fps``), ``frames`` (a number of frames) or ``fps`` (a frame rate); such a record's model is labelled
  ``<model>@<N>f`` / ``<model>@<F>fps`` like a sweep run (``<model>@<setting>`` for another setting), so
  one question answered at two settings is two runs, not a duplicate

Any other field of a prediction file (a scalar) is kept as a column of its own ("" where another file
lacks it), to stratify by (``vdg report --by FIELD``).

``load_frame`` also records, per input file, which fields it read (``frame.attrs["vdg_sources"]``,
a JSON list; ``sources(frame)`` decodes it): the report's ``sources`` table.
"""

from __future__ import annotations

import csv
import gc
import json
import logging
import multiprocessing as mp
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal

import msgspec
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from msgspec.structs import astuple

from postprocess.choices import (
    MAX_OPTIONS,
    MIN_OPTIONS,
    RULE_FILE,
    benchmark_key,
    declared_option_count,
    letter_position,
    resolve_option_counts,
)
from postprocess.frame import (
    ALIGNMENT_ATTR,
    KEY,
    QUANTIZED_MARK,
    SAMPLE_COLUMNS,
    SOURCES_ATTR,
    VIDEO_ID_FIELDS,
)
from postprocess.parallel import can_fork, cpus
from vdg_tasks.parse import LETTERS, parse_answer
from vdg_tasks.record import RECORD_KEY, STATUSES

logger = logging.getLogger(__name__)

_TEXT_EXTRAS = ("character", "swap_to", "swap_gender", "abstain_letter", "idk_letter", "question", "response", "truth")
#: pandas' default text dtype (``str``); from pandas 3 on, arrow strings, which a reader's ``_packed`` arrays join as.
_TEXT_DTYPE = pd.Series([""], dtype=str).dtype
_ARROW_TEXT = isinstance(_TEXT_DTYPE, pd.StringDtype) and _TEXT_DTYPE.storage == "pyarrow"
#: Text fields of the record carried as they are ("" when absent).
_RECORD_TEXT = ("domain", "sub_category", "question_set", "sampling")
#: model_args naming the frames per video, in lmms-eval's video models.
FRAME_ARGS = ("max_num_frames", "max_frames_num", "nframes", "num_frames", "frames", "frames_num", "max_frames")
_SAMPLES_FILE = re.compile(r"^(?P<stamp>.+?)_samples_(?P<task>.+)\.jsonl$")
# Runtime placement arguments that do not change what a model answers.
_PLACEMENT_ARGS = {"device", "device_map", "batch_size", "attn_implementation"}


class LogError(ValueError):
    """An lmms-eval output that cannot be joined, with the file (and line) that says why."""


@dataclass(frozen=True)
class RunDir:
    """A folder to read, optionally labelled (``NAME=DIR`` on the command line)."""

    path: Path
    label: str | None = None

    @classmethod
    def parse(cls, text: str) -> RunDir:
        name, sep, rest = text.partition("=")
        if sep and name and not Path(text).exists():
            return cls(Path(rest), name)
        return cls(Path(text))


def _parse_model_args(model_args: Any) -> dict[str, str]:
    if isinstance(model_args, dict):
        return {str(k): str(v) for k, v in model_args.items()}
    out: dict[str, str] = {}
    for part in str(model_args or "").split(","):
        if "=" in part:
            key, value = part.split("=", 1)
            out[key.strip()] = value.strip()
    return out


def model_label(config: dict[str, Any]) -> str:
    """lmms-eval's model name, plus the basename of ``pretrained=`` when there is one, marked
    ``†<quantization>`` when the model was loaded quantized (``qwen2_vl:Qwen2-VL-72B†nf4``)."""
    name = str(config.get("model", "model"))
    args = _parse_model_args(config.get("model_args"))
    pretrained = args.get("pretrained") or args.get("model")
    label = f"{name}:{Path(pretrained.rstrip('/')).name}" if pretrained and pretrained != name else name
    return mark_quantized(label, precision(args))


_QUANTIZED = ("nf4", "fp4", "int8", "int4")
_DTYPES = {
    "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32",
}  # fmt: skip


def precision(args: dict[str, str]) -> str:
    """The precision a run's model args state: the quantization (``nf4``, ``int8``...) when quantized,
    else the dtype (``bf16``, ``fp16``, ``fp32``); "" when they state neither."""
    quantization = str(args.get("quantization", "")).strip().lower()
    if quantization in _QUANTIZED:
        return quantization
    if str(args.get("load_in_4bit", "")).lower() in ("true", "1"):
        return "nf4" if str(args.get("bnb_4bit_quant_type", "nf4")).lower() == "nf4" else "fp4"
    if str(args.get("load_in_8bit", "")).lower() in ("true", "1"):
        return "int8"
    for key in ("dtype", "torch_dtype"):
        value = str(args.get(key, "")).strip().lower()
        if value in _DTYPES:
            return _DTYPES[value]
    return ""


def is_quantized(value: str) -> bool:
    return value in _QUANTIZED


def mark_quantized(label: str, value: str) -> str:
    """``label`` with ``†<value>`` appended when ``value`` is a quantization (and not already marked)."""
    return f"{label}{QUANTIZED_MARK}{value}" if is_quantized(value) and QUANTIZED_MARK not in label else label


def _settings_args(settings: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in settings.split(";")[0].split(",") if "=" in part)


def frames_setting(settings: str) -> int | None:
    """Frames per video named in a ``model_settings`` string (None when it names none)."""
    args = _settings_args(settings)
    for name in FRAME_ARGS:
        value = str(args.get(name, "")).strip()
        if value.isdigit():
            return int(value)
    return None


def extra_columns(raw: pd.DataFrame, settings: str | pd.Series = "") -> dict[str, pd.Series]:
    """``EXTRA_COLUMNS`` from a table of records (absent fields: "" / NaN / <NA>)."""
    out: dict[str, pd.Series] = {}
    out.update(_text_columns(raw, _TEXT_EXTRAS))
    duration = raw["duration_s"] if "duration_s" in raw.columns else pd.Series(np.nan, index=raw.index)
    out["duration_s"] = pd.to_numeric(duration, errors="coerce").astype(float)
    per_row = settings if isinstance(settings, pd.Series) else pd.Series(settings, index=raw.index, dtype=object)
    out["frames"] = _per_distinct(per_row, frames_setting, "Int64")
    out["judge_score"] = pd.Series(np.nan, index=raw.index, dtype=float)
    out["judge"] = pd.Series("", index=raw.index, dtype=object)
    out["precision"] = _per_distinct(per_row, lambda text: precision(_settings_args(str(text))), object)
    out["export"] = (
        raw["provenance"].map(_export_label) if "provenance" in raw.columns else pd.Series("", index=raw.index)
    ).astype(object)
    for key, column in _text_columns(raw, _RECORD_TEXT).items():
        out[key] = column.str.strip()
    return out


def _text_columns(raw: pd.DataFrame, keys: Iterable[str]) -> dict[str, pd.Series]:
    """Fields of a table of records as text: "" where a record lacks one (one column of "" serves every field
    that no record has)."""
    out, empty = {}, pd.Series("", index=raw.index, dtype=str)
    for key in keys:
        column = raw[key] if key in raw.columns else None
        if column is None:
            out[key] = empty
        elif _ARROW_TEXT and column.dtype == _TEXT_DTYPE and not column.hasnans:  # text throughout already
            out[key] = column
        else:
            out[key] = column.astype(object).where(column.notna(), "").astype(str)
    return out


def _per_distinct(values: pd.Series, fn: Callable[[Any], Any], dtype: Any) -> pd.Series:
    """``fn`` of each value, called once per distinct value (a file has one settings string, a benchmark...)."""
    if isinstance(values.dtype, pd.CategoricalDtype) and not values.isna().any():  # coded already
        codes, distinct = values.cat.codes.to_numpy(), values.cat.categories
    else:
        codes, distinct = pd.factorize(values, use_na_sentinel=False)
    return pd.Series(pd.array([fn(value) for value in distinct], dtype=dtype)[codes], index=values.index, dtype=dtype)


def _export_label(provenance: Any) -> str:
    export = provenance.get("export") if isinstance(provenance, dict) else None
    if not isinstance(export, dict):
        return ""
    return f"{export.get('name', '')}@{export.get('revision', '')}"


def model_settings(config: dict[str, Any]) -> str:
    args = {k: v for k, v in _parse_model_args(config.get("model_args")).items() if k not in _PLACEMENT_ARGS}
    settings = ",".join(f"{k}={v}" for k, v in sorted(args.items()))
    gen = config.get("gen_kwargs") or ""
    return f"{settings};gen_kwargs={gen}" if gen else settings


#: model_args naming the checkpoint, in lmms-eval's precedence (``GeneralConfigTracker._get_model_name``).
CHECKPOINT_ARGS = ("peft", "delta", "pretrained", "model", "model_version", "model_name", "model_id", "path", "engine")
#: Fields of a prediction record naming the model behind it (per record, the first with a value).
MODEL_SOURCE_FIELDS: tuple[str, ...] = ("model_name", "pretrained", "model_path", "checkpoint")


def model_source(results: Mapping[str, Any]) -> str:
    """The model behind an lmms-eval results file: its model class and checkpoint (``qwen2_vl Qwen/Qwen2-VL-2B``),
    the checkpoint from the file's ``model_name`` else the first of ``CHECKPOINT_ARGS`` in its model_args."""
    config = results.get("config") or {}
    name = str(config.get("model", "") or "")
    args = _parse_model_args(config.get("model_args"))
    checkpoint = str(results.get("model_name") or "") or next((args[k] for k in CHECKPOINT_ARGS if args.get(k)), "")
    return " ".join(part for part in (name, checkpoint.rstrip("/")) if part)


def _results_config(samples_file: Path) -> dict[str, Any]:
    return _results(samples_file)["config"]


def _results(samples_file: Path) -> dict[str, Any]:
    """The lmms-eval results file beside a samples log (its ``config`` checked present)."""
    match = _SAMPLES_FILE.match(samples_file.name)
    if not match:
        raise LogError(f"{samples_file}: not an lmms-eval samples file (<stamp>_samples_<task>.jsonl)")
    results = samples_file.with_name(f"{match['stamp']}_results.json")
    if not results.is_file():
        raise LogError(f"{samples_file}: no {results.name} beside it, so the model that wrote it is unknown")
    try:
        data = json.loads(results.read_bytes())
        if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
            raise KeyError("config")
        return data
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError) as exc:
        raise LogError(f"{results}: unreadable lmms-eval results file ({exc})") from None


def samples_files(run: Path) -> list[Path]:
    if run.is_file():
        return [run]
    if not run.is_dir():
        raise LogError(f"{run}: no such file or folder")
    files = sorted(run.rglob("*_samples_*.jsonl"))
    if not files:
        raise LogError(f"{run}: holds no lmms-eval samples log (*_samples_<task>.jsonl); was --log_samples set?")
    return files


_DECODER = json.JSONDecoder()
_ANY_DECODER = msgspec.json.Decoder()
# lmms-eval writes samples with json.dumps' default separators, so the record starts with this.
_RECORD_MARK = f'"{RECORD_KEY}": {{'
_RECORD_FIELDS = ("benchmark", "condition", "question_id", "answer", "status")


def _fast_vdg_record(line: bytes, where: str) -> Any:
    """The ``vdg`` object of one samples line (bytes), decoded whole by msgspec (~10x the json module; integers
    of any size exact, as the json module reads them); a line it refuses (Python's NaN, invalid JSON, nesting
    too deep...) goes through ``_vdg_record``, which reads NaN and says what is wrong with the rest."""
    try:
        record = _ANY_DECODER.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return _vdg_record(line.decode("utf-8"), where)
    rec = record.get(RECORD_KEY) if isinstance(record, dict) else None
    if not isinstance(rec, dict):
        return _vdg_record(line.decode("utf-8"), where)
    return rec


def _vdg_record(line: str, where: str) -> Any:
    """The ``vdg`` object of one samples line, by the json module (which reads Python's NaN and Infinity); a line
    nested beyond its recursion limit decodes only that object, when it can be found."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise LogError(f"{where}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        at = line.find(_RECORD_MARK)
        try:
            if at >= 0:
                return _DECODER.raw_decode(line, at + len(_RECORD_MARK) - 1)[0]
        except (json.JSONDecodeError, RecursionError):
            pass
        raise LogError(f"{where}: nested too deeply to read its '{RECORD_KEY}' record") from None
    rec = record.get(RECORD_KEY) if isinstance(record, dict) else None
    if not isinstance(rec, dict):
        raise LogError(f"{where}: no '{RECORD_KEY}' record; was this written by a vdg task (<benchmark>_vdg_<cond>)?")
    return rec


def _task_condition(path: Path) -> tuple[str, str]:
    """(benchmark, condition) named by a samples file (``..._samples_<benchmark>_vdg_<condition>.jsonl``)."""
    match = _SAMPLES_FILE.match(path.name)
    task = match["task"] if match else path.stem
    benchmark, sep, condition = task.rpartition("_vdg_")
    return (benchmark, condition) if sep else ("", task)


def _declared_counts(table: pd.DataFrame, benchmark: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(the record's own n_options, where its count comes from) per record: its ``n_options`` field (<NA>
    where it has none: ``load_frame`` resolves those across every file, ``postprocess.choices``), and for the
    sources table the field, or the rule that gives a record without one its count (an ``--options-file``
    overrides either)."""
    own = pd.to_numeric(table["n_options"], errors="coerce") if "n_options" in table.columns else None
    counts = pd.Series(pd.NA, index=benchmark.index, dtype="Int64")

    def label(name: str) -> str:
        n = declared_option_count(name)
        return _INFERRED if n is None else f"benchmark {name!r} declares {n}"

    origin = _per_distinct(benchmark, label, object)
    if own is not None:
        has_own = own.notna()
        counts[has_own] = own[has_own].round().astype("int64")
        origin[has_own] = _OWN_COUNT
    return counts, origin


def _log_counts(own: _Field | None, benchmark: _Field) -> tuple[pd.Series, list[tuple[str, int]]]:
    """A samples log's ``_declared_counts`` and its (origin, records) in order of appearance. A log whose every
    record gives its count as an integer (what vdg's hook writes) takes them as they are, without pandas."""
    if own is not None and own.kinds == {int}:
        try:
            values = np.array(own.values, dtype=np.int64)
        except OverflowError:  # beyond int64: pandas' coercion decides
            pass
        else:
            return pd.Series(pd.array(values, dtype="Int64")), [(_OWN_COUNT, len(values))]
    texts = pd.Series(benchmark.values).astype(str)
    counts, origin = _declared_counts(pd.DataFrame({} if own is None else {"n_options": own.values}), texts)
    codes, names = pd.factorize(origin)
    return counts, [(str(name), int(n)) for name, n in zip(names, np.bincount(codes), strict=True)]


#: Fields of the ``vdg`` record that ``_samples_frame`` reads (besides pred and error: ``_SamplesLog.answers``).
_SAMPLE_FIELDS = (
    *_RECORD_FIELDS,
    *("video_id", "task_type", "duration", "n_options", "correct", "duration_s", "provenance"),
    *_TEXT_EXTRAS,
    *_RECORD_TEXT,
)


@dataclass
class _SamplesLog:
    """One samples log as plain per-field values: what a reader process sends back (a DataFrame per file
    cost more to build and to pickle than the JSON took to decode)."""

    path: Path
    model: str
    settings: str
    #: Each record's ``file:line`` (``_packed``).
    sources: list[str] | pa.Array
    #: The file's distinct benchmarks and conditions, as text.
    distinct: dict[str, set[str]]
    #: Per field of ``_SAMPLE_FIELDS`` that some record has, its values as ``_fields`` gives them (``_packed``).
    fields: dict[str, list[Any] | pa.Array]
    #: pred and error as the file's own column (their dtype, which ``pd.concat`` combines, matters downstream).
    answers: dict[str, pd.Series]
    #: Each record's option count as ``_declared_counts`` gives it, and the file's (where it came from, records)
    #: in order of appearance.
    n_options: pd.Series
    origins: list[tuple[str, int]]
    #: The model behind the file (``model_source`` of its results file).
    model_source: str = ""
    #: The ``transform_version``s its records were built by, as text ("" when none says).
    transform_version: str = ""


#: Every field of the ``vdg`` record the reader keeps.
LOG_FIELDS = (*_SAMPLE_FIELDS, "pred", "error", "transform_version")
#: A samples line as far as the reader looks: its ``vdg`` record's ``LOG_FIELDS``, UNSET where one lacks a
#: field. Everything else on the line (lmms-eval's ``arguments``, ``resps``, the doc...) is skipped unbuilt.
# gc=False: decoded JSON holds no reference cycles, and the collector need not track ~10^5 structs per log.
_Record = msgspec.defstruct("_Record", [(key, Any, msgspec.UNSET) for key in LOG_FIELDS], gc=False)
_SamplesLine = msgspec.defstruct("_SamplesLine", [(RECORD_KEY, _Record)], gc=False)
_LINE_DECODER = msgspec.json.Decoder(_SamplesLine)


@dataclass
class _Field:
    """One field of a file's records: its values as ``DataFrame.from_records`` holds them, and their types."""

    values: list[Any]
    kinds: set[type]


#: Mixes of types a field's values keep as they are (pandas would keep True/None, and make None NaN beside text).
_KEPT_MIXES = ({str, type(None)}, {bool, type(None)})


def _fields(columns: Iterable[tuple[Any, ...]], keys: Iterable[str]) -> dict[str, _Field]:
    """Per key that some record has (UNSET: a record lacks it), its ``_Field``: NaN where a record lacks it.
    Only a mix of types goes through pandas, whose inference changes values there (the ints of a field that also
    holds a float or a gap become floats, per file); one type, or text or booleans with nulls, are kept as they are."""
    fields = {}
    for key, column in zip(keys, columns, strict=True):
        if column and column[0] is msgspec.UNSET and column.count(msgspec.UNSET) == len(column):
            continue  # no record has it (count compares by identity first: a C loop)
        values = list(column)
        kinds = set(map(type, values))
        if msgspec.UnsetType in kinds:
            if len(kinds) == 1:
                continue
            values = [np.nan if value is msgspec.UNSET else value for value in values]
            kinds = kinds - {msgspec.UnsetType} | {float}
        if len(kinds) > 1 and kinds not in _KEPT_MIXES:
            values = pd.Series(values).tolist()
            kinds = set(map(type, values))
        fields[key] = _Field(values, kinds)
    return fields


def _packed(field: _Field) -> list[Any] | pa.Array:
    """A field that is text in every record as one arrow string array (what a pandas ``str`` column holds:
    cheap to send and to join), any other as it is."""
    if _ARROW_TEXT and field.values and field.kinds == {str}:
        return pa.array(field.values, type=pa.large_string())
    return field.values


def _first_missing(field: _Field) -> int | None:
    """The position of the field's first null (None or NaN), None when there is none."""
    if not field.kinds & {type(None), float}:
        return None
    return next((i for i, value in enumerate(field.values) if value is None or value != value), None)


def _record_lines(data: bytes) -> tuple[list[int], bool]:
    """The number of each non-blank line of a samples log (bytes.splitlines splits where text-mode reading
    does: \n, \r\n, \r), and whether each line holds one JSON object alone: \n endings, every line opening
    with "{" and closing with "}". JSON cannot end a line inside an object with "}" and open the next line with
    "{", so a stream decoder that reads as many values as there are such lines read one per line."""
    if data and b"\r" not in data:
        body = np.frombuffer(data, dtype=np.uint8)
        breaks = np.flatnonzero(body[:-1] == ord("\n"))  # a final newline ends the last line
        last = body.shape[0] - (2 if body[-1] == ord("\n") else 1)
        if (
            body[0] == ord("{")
            and body[last] == ord("}")
            and (body[breaks + 1] == ord("{")).all()
            and (body[breaks - 1] == ord("}")).all()
        ):
            return list(range(1, breaks.shape[0] + 2)), True
    return [n for n, line in enumerate(data.splitlines(), 1) if line.strip()], False


def _record_row(line: bytes, where: str) -> tuple[Any, ...]:
    """The ``LOG_FIELDS`` of one samples line's ``vdg`` record (UNSET where it lacks one), decoded as a
    ``_Record`` when msgspec reads the line, else by ``_fast_vdg_record``."""
    try:
        return astuple(getattr(_LINE_DECODER.decode(line), RECORD_KEY))
    except (msgspec.DecodeError, RecursionError):
        record = _fast_vdg_record(line, where)
        return tuple(record.get(key, msgspec.UNSET) for key in LOG_FIELDS)


def _decoded(path: Path) -> tuple[dict[str, _Field], list[int]]:
    """Per ``LOG_FIELDS`` field that some ``vdg`` record of a samples log has, its ``_Field``, and the line
    number of each record (non-blank lines)."""
    data = path.read_bytes()
    _check_utf8(data, path)
    lines, one_per_line = _record_lines(data)
    if not lines:
        return {}, lines
    if one_per_line:  # the usual case: the whole file in one call, only the fields read are built
        try:
            structs = _LINE_DECODER.decode_lines(data)
        except (msgspec.DecodeError, RecursionError):
            structs = None
        if structs is not None and len(structs) == len(lines):
            columns = zip(*map(astuple, map(attrgetter(RECORD_KEY), structs)), strict=True)  # transposed in C
            return _fields(columns, LOG_FIELDS), lines
    # Line by line, each error naming its line (two objects on one line are one).
    texts = [line for line in data.splitlines() if line.strip()]
    rows = [_record_row(line, f"{path}:{n}") for n, line in zip(lines, texts, strict=True)]
    return _fields(zip(*rows, strict=True), LOG_FIELDS), lines


def _versions(values: Iterable[Any]) -> str:
    """The distinct transform versions of a file's records, sorted, joined by ","; "" when none gives one."""
    found = set()
    for value in values:
        if value is None or value is msgspec.UNSET or (isinstance(value, float) and not np.isfinite(value)):
            continue
        text = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value).strip()
        if text:
            found.add(text)
    return ",".join(sorted(found, key=lambda t: (len(t), t)))


def _check_utf8(data: bytes, path: Path) -> None:
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


def _sources(path: Path, lines: list[int]) -> list[str] | pa.Array:
    """Each record's ``file:line``, as ``_packed`` holds text (joined by arrow where text is arrow-backed)."""
    if not _ARROW_TEXT:
        return [f"{path}:{n}" for n in lines]
    text = pa.large_string()
    numbers = pa.array(lines, type=pa.int64()).cast(text)
    return pc.binary_join_element_wise(pa.scalar(f"{path}:", text), numbers, pa.scalar("", text))


def _distinct_text(field: _Field) -> set[str]:
    """A field's distinct values as text."""
    return set(field.values) if field.kinds == {str} else set(map(str, field.values))


def _first_malformed_correct(correct: _Field | None, status: _Field) -> int | None:
    """The first record scored (ok or unparsed) whose ``correct`` is not a JSON boolean (a string such as "false",
    a number, null or absent), or None. Error and open records carry no score."""
    if correct is not None and correct.kinds == {bool}:
        return None
    values = correct.values if correct is not None else [None] * len(status.values)
    scored = ("ok", "unparsed")
    return next(
        (
            i
            for i, (v, st) in enumerate(zip(values, status.values, strict=True))
            if st in scored and type(v) is not bool
        ),
        None,
    )


def _read_log(path: Path, label: str | None = None) -> _SamplesLog:
    """Decode and check one samples log: the work ``load_frame`` spreads over reader processes."""
    results = _results(path)
    config = results["config"]
    args = _parse_model_args(config.get("model_args"))
    model = mark_quantized(label, precision(args)) if label else model_label(config)
    fields, lines = _decoded(path)
    if not lines:
        benchmark, condition = _task_condition(path)
        raise LogError(
            f"{path}: holds no samples, so condition {condition!r} of {model}"
            + (f" / {benchmark}" if benchmark else "")
            + " has no rows and lacks every question the other conditions have; was the run interrupted "
            "(or run with --limit 0)? Rerun it, or remove the file."
        )
    absent = _Field([None] * len(lines), {type(None)})
    answers = {key: pd.Series(fields.pop(key, absent).values) for key in ("pred", "error")}
    versions = fields.pop("transform_version", None)
    for key in _RECORD_FIELDS:
        missing = _first_missing(fields[key]) if key in fields else 0
        if missing is not None:
            raise LogError(f"{path}:{lines[missing]}: the '{RECORD_KEY}' record lacks {key}")
    bad = next((i for i, status in enumerate(fields["status"].values) if status not in STATUSES), None)
    if bad is not None:
        status = pd.Series(fields["status"].values).iloc[bad]  # as pandas shows it
        raise LogError(f"{path}:{lines[bad]}: unknown status {status!r} (expected {', '.join(STATUSES)})")
    bad = _first_malformed_correct(fields.get("correct"), fields["status"])
    if bad is not None:
        value, status = fields["correct"].values[bad], fields["status"].values[bad]
        raise LogError(f"{path}:{lines[bad]}: correct is {value!r}, not true or false, on a scored ({status}) record")
    n_options, origins = _log_counts(fields.pop("n_options", None), fields["benchmark"])
    beyond = np.flatnonzero((n_options > MAX_OPTIONS).fillna(False).to_numpy(bool))  # no letter beyond H
    if len(beyond):
        raise LogError(
            f"{path}:{lines[int(beyond[0])]}: n_options is {n_options.iloc[int(beyond[0])]}; vdg reads questions of "
            f"{MIN_OPTIONS} to {MAX_OPTIONS} options ({LETTERS[0]}-{LETTERS[-1]})"
        )
    packed = {key: _packed(field) for key, field in fields.items()}
    distinct = {key: _distinct_text(fields[key]) for key in ("benchmark", "condition")}
    return _SamplesLog(
        path,
        model,
        model_settings(config),
        _sources(path, lines),
        distinct,
        packed,
        answers,
        n_options,
        origins,
        model_source(results),
        _versions(versions.values if versions is not None else []),
    )


def _stacked(parts: list[list[Any] | pa.Array | None], sizes: list[int], one_chunk: bool = True) -> pd.Series:
    """Per-file values of one field end to end, NaN for a file without it (as ``DataFrame.from_records``): a
    ``str`` column when every file has it as text (``_packed``), else an object column. ``one_chunk``: the text
    copied into one arrow array (what the analyses group by: each arrow kernel then runs once, not per file)."""
    if _ARROW_TEXT and all(isinstance(part, pa.Array) for part in parts):
        chunked = pa.chunked_array(parts, type=pa.large_string())
        return pd.Series(chunked.combine_chunks() if one_chunk else chunked, dtype=_TEXT_DTYPE)
    values = (
        [np.nan] * n if part is None else part.to_pylist() if isinstance(part, pa.Array) else part
        for part, n in zip(parts, sizes, strict=True)
    )
    return pd.Series(list(chain.from_iterable(values)), dtype=object)


def _samples_frame(logs: list[_SamplesLog]) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Samples logs read by ``_read_log`` as tidy rows, built once for all of them (one pandas column per
    column, not one per file), and each file's ``_source_info``."""
    sizes = [len(log.sources) for log in logs]

    def per_file(values: list[str]) -> pd.Series:
        """One text per file, on each of its rows: categorical, so that what is derived per distinct value
        (frames, precision) costs per file, not per row."""
        codes, names = pd.factorize(pd.Series(values, dtype=object))
        return pd.Series(pd.Categorical.from_codes(np.repeat(codes, sizes), categories=names))

    def per_file_text(column: pd.Series) -> pd.Series:
        """A ``per_file`` column as text: arrow's take of the distinct texts where ``str`` is arrow-backed."""
        if not _ARROW_TEXT:
            return column.astype(str)
        names = pa.array([str(name) for name in column.cat.categories], type=pa.large_string())
        return pd.Series(names.take(pa.array(column.cat.codes.to_numpy())), dtype=_TEXT_DTYPE)

    keys = dict.fromkeys(key for log in logs for key in log.fields)
    table = pd.DataFrame({key: _stacked([log.fields.get(key) for log in logs], sizes) for key in keys})
    settings = per_file([log.settings for log in logs])

    def answers(key: str) -> pd.Series:
        return pd.concat([log.answers[key] for log in logs], ignore_index=True)

    error_rows = table["status"].isin(["error", "open"])
    correct = table["correct"] if "correct" in table.columns else pd.Series(False, index=table.index)
    benchmark = table["benchmark"].astype(str)
    out = pd.DataFrame(
        {
            "model": per_file_text(per_file([log.model for log in logs])),
            "model_settings": per_file_text(settings),
            "benchmark": benchmark,
            "condition": table["condition"].astype(str),
            "question_id": table["question_id"].astype(str),
            **_text_columns(table, ("video_id", "task_type", "duration")),
            "n_options": pd.concat([log.n_options for log in logs], ignore_index=True),
            "answer": table["answer"].astype(str),
            "pred": answers("pred"),
            "status": table["status"].astype(str),
            "error": answers("error"),
            "correct": pd.arrays.BooleanArray(correct.fillna(False).to_numpy(dtype=bool), error_rows.to_numpy(bool)),
            "source": _stacked([log.sources for log in logs], sizes, one_chunk=False),  # read for messages only
            **extra_columns(table, settings),
        },
        columns=list(SAMPLE_COLUMNS),
    )
    infos = [
        _source_info(
            log.path,
            "lmms-eval samples log",
            {"model": [log.model], **log.distinct},
            size,
            question_id_field=f"{RECORD_KEY}.question_id",
            video_id_field=f"{RECORD_KEY}.video_id" if "video_id" in log.fields else "",
            n_options_origins=log.origins,
            model_source=log.model_source,
            transform_version=log.transform_version,
        )
        for log, size in zip(logs, sizes, strict=True)
    ]
    return out, infos


def read_samples(path: Path, label: str | None = None) -> pd.DataFrame:
    """One lmms-eval samples log as tidy rows.

    A logged letter that is not one of its question's options (``n_options``) is ``unparsed``, as
    for prediction files. Option counts are resolved within this log (``postprocess.choices``;
    ``load_frame`` resolves them across every file). An empty log is an error naming the file: its
    condition would otherwise silently lack every question.
    """
    frame, (info,) = _samples_frame([_read_log(path, label)])
    frame["n_options"], frame["n_options_rule"] = resolve_option_counts(frame)
    frame.attrs[_SOURCE_ATTR] = info
    return frame


#: ``n_options`` origin of a record with no count of its own, of a benchmark that declares none: inferred across
#: every file (``postprocess.choices``).
_INFERRED = "not given: inferred per task type (largest letter of its key and replies)"
#: ``n_options`` origin of a record that gives its own count.
_OWN_COUNT = "n_options field"
_SOURCE_ATTR = "vdg_source"


def _summarise_origins(counts: Sequence[tuple[Any, int]]) -> str:
    """'n_options field' or 'n_options field (10 records); benchmark 'x' declares 4 (2 records)'."""
    if len(counts) == 1:
        return str(counts[0][0])
    return "; ".join(f"{o} ({int(n)} records)" for o, n in counts)


def _source_info(
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
    from postprocess.analyses._paired import ordered_conditions

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


def _dedupe(frame: pd.DataFrame, on_duplicate: Literal["error", "last"] = "error") -> pd.DataFrame:
    """A valid record supersedes an error record of the same key; two different valid answers are
    an error naming both sources, unless ``on_duplicate="last"`` (the last one read wins)."""
    dup = frame.duplicated(list(KEY), keep=False)
    if not dup.any():
        return frame
    keep = []
    for _, group in frame[dup].groupby(list(KEY), sort=False):
        valid = group[group["status"] != "error"]
        disagree = valid["pred"].astype(str).nunique() > 1 or valid["status"].nunique() > 1
        if disagree and on_duplicate == "error":
            a, b = valid.iloc[0], valid.iloc[1]
            raise LogError(
                f"question {a['question_id']} ({a['model']}, {a['benchmark']}, {a['condition']}) has two different "
                f"answers: {a['pred']!r} at {a['source']} and {b['pred']!r} at {b['source']}"
            )
        keep.append((valid if len(valid) else group).index[-1])
    return pd.concat([frame[~dup], frame.loc[keep]]).sort_index()


def _check_settings(frame: pd.DataFrame) -> None:
    conflict = _first_conflict(frame, ["model"], "model_settings")
    if conflict is not None:
        a, b = conflict
        model = a["model"]
        raise LogError(
            f"model {model!r} was run with different settings: {a['model_settings']!r} ({a['source']}) vs "
            f"{b['model_settings']!r} ({b['source']}). Label them apart with NAME=DIR, or rerun one."
        )


def _source_file(source: str) -> str:
    """The file of a row's ``source`` (``file:line`` or ``file[#i]``)."""
    return re.sub(r"(:\d+|\[#\d+\])$", "", str(source))


def _check_fixed_sets(frame: pd.DataFrame) -> None:
    """One question set per benchmark: runs restricted to different ``vdg subset`` lists (or one restricted,
    one not) answered different questions, so they are not compared. Before de-duplication, which could drop
    every row of one of them."""
    conflict = _first_conflict(frame, ["benchmark"], "question_set")
    if conflict is None:
        return

    def run(row: pd.Series) -> str:
        name = f"question set {row['question_set']}" if row["question_set"] else "no question set (every question)"
        return f"{row['model']} / {row['condition']} on {name} ({_source_file(row['source'])})"

    a, b = conflict
    raise LogError(
        f"{a['benchmark']}: runs were made on different question sets, so their question lists differ: {run(a)} "
        f"vs {run(b)}. Rerun them with the same VDG_QUESTION_SET (one `vdg subset` file), or report them apart."
    )


def _check_exports(frame: pd.DataFrame) -> None:
    """One export per benchmark: runs evaluated from two exports (or two revisions) saw different pixels."""
    exported = (frame["export"] != "").to_numpy()
    if not exported.any():  # no run says where its videos came from
        return
    conflict = _first_conflict(frame[exported], ["benchmark"], "export")
    if conflict is not None:
        a, b = conflict
        raise LogError(
            f"{a['benchmark']}: runs were evaluated from different exports, {a['export']} ({a['source']}) and "
            f"{b['export']} ({b['source']}), so their videos may differ; pass --mixed-exports to join them anyway"
        )


def _check_question_sets(frame: pd.DataFrame) -> None:
    keys = ["model", "benchmark"]
    per_condition = frame.groupby([*keys, "condition"]).size()  # its questions: KEY is unique (de-duplicated)
    union = frame.groupby(keys)["question_id"].nunique()
    short = per_condition[per_condition.to_numpy() < union.reindex(per_condition.index.droplevel(-1)).to_numpy()]
    if short.empty:
        return
    model, benchmark, cond = short.index[0]
    group = frame[(frame["model"] == model) & (frame["benchmark"] == benchmark)]
    missing = sorted(set(group["question_id"].unique()) - set(group.loc[group["condition"] == cond, "question_id"]))
    raise LogError(
        f"{model} / {benchmark}: condition {cond!r} lacks {len(missing)} of {union[(model, benchmark)]} questions "
        f"the other conditions have (e.g. {', '.join(missing[:3])}); "
        "was it run with --limit or on another split?"
    )


#: From this many samples logs on, they are parsed in parallel (JSON decoding dominates reading).
_PARALLEL_FILES = 8


def _read_one(job: tuple[Path, str | None]) -> _SamplesLog:
    return _read_log(*job)


def _read_all_samples(jobs: list[tuple[Path, str | None]]) -> list[_SamplesLog]:
    workers = min(len(jobs) // _PARALLEL_FILES, cpus(), 8)
    if workers < 2 or not can_fork():
        return [_read_log(path, label) for path, label in jobs]
    # gc.disable: a reader's records and lists hold no reference cycles (what it drops, reference counting
    # frees), and the collector's passes over its live ones cost about a tenth of its time.
    context = mp.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=gc.disable) as pool:
        return list(pool.map(_read_one, jobs, chunksize=4))


def load_frame(
    runs: Iterable[RunDir | str | Path] = (),
    predictions: Iterable[tuple[str, str | Path]] = (),
    benchmark: str | None = None,
    on_duplicate: Literal["error", "last"] = "error",
    mixed_exports: bool = False,
    align: Literal["strict", "intersect"] = "strict",
    options_file: str | Path | None = None,
) -> pd.DataFrame:
    """lmms-eval output folders and prediction files -> one checked, de-duplicated tidy frame.

    ``predictions`` are (model, file) pairs (``--predictions MODEL=FILE``); ``benchmark`` names
    their benchmark when the records do not. See the module docstring for the columns. Each
    question's option count is resolved across every file (``postprocess.choices``; ``options_file``,
    a CSV that ``read_options_file`` reads, overrides every other rule), and a letter beyond it is
    ``unparsed``; ``frame.attrs`` records which fields each file was read from. Runs
    evaluated from different exports of one benchmark are refused unless ``mixed_exports``, and runs
    of one benchmark made on different question sets (``question_set``) always. Conditions of one
    (model, benchmark) holding different questions are refused with ``align="strict"``; with
    ``"intersect"`` each keeps the questions present in all of them, and ``alignment(frame)`` lists how
    many each dropped.
    """
    counts_file = None if options_file is None else read_options_file(Path(options_file))
    jobs = []
    for run in runs:
        run = run if isinstance(run, RunDir) else RunDir.parse(str(run))
        jobs += [(f, run.label) for f in samples_files(run.path)]
    frames: list[pd.DataFrame] = []
    infos: list[dict[str, Any]] = []
    behind: list[Mapping[str, str]] = []
    if jobs:  # the per-file values are dropped once the frame holds them
        logs = _read_all_samples(jobs)
        behind += [{"model": log.model, "source": log.model_source, "where": str(log.path)} for log in logs]
        samples, infos = _samples_frame(logs)
        del logs
        frames.append(samples)
    for model, path in predictions:
        frames.append(read_predictions(Path(path), model, benchmark, options_file=counts_file))
        infos.append(frames[-1].attrs.get(_SOURCE_ATTR))
        behind += frames[-1].attrs.get(_MODELS_ATTR, [])
    _check_models(run for run in behind if run["source"])
    if not frames:
        raise LogError("nothing to read: give lmms-eval run folders or --predictions MODEL=FILE")
    # One part (run folders only, or one predictions file) needs no concat, which would copy every row.
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    del frames
    kept = [c for c in frame.columns if c not in SAMPLE_COLUMNS]
    if kept:  # prediction-file fields one file has and another lacks
        frame[kept] = frame[kept].astype(object).where(frame[kept].notna(), "")
    if counts_file is not None:
        counts_file.check_benchmarks(frame["benchmark"])
    frame = _resolve_options(frame, counts_file)
    _check_settings(frame)  # before de-duplication, which would keep one of two runs that answer alike
    _check_fixed_sets(frame)  # likewise
    frame = _dedupe(frame, on_duplicate)
    if not mixed_exports:
        _check_exports(frame)
    _check_keys(frame)
    if align not in ("strict", "intersect"):
        raise ValueError(f"align must be 'strict' or 'intersect', got {align!r}")
    dropped: list[dict[str, Any]] = []
    if align == "intersect":
        frame, dropped = _intersect_conditions(frame)
    else:
        _check_question_sets(frame)
    frame["correct"] = frame["correct"].astype("boolean")
    frame = _none_for_missing(frame).reset_index(drop=True)
    frame.attrs = {SOURCES_ATTR: json.dumps([i for i in infos if i])}
    if align == "intersect":
        frame.attrs[ALIGNMENT_ATTR] = json.dumps(dropped)
    return frame


def _intersect_conditions(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Each (model, benchmark) on the questions every one of its conditions holds, and per (model, benchmark,
    condition) how many questions it had and dropped. Refused when no question is in all of them."""
    keys = ["model", "benchmark"]
    n_conditions = frame.groupby(keys)["condition"].transform("nunique")
    per_question = frame.groupby([*keys, "question_id"])["condition"].transform("nunique")
    keep = (per_question == n_conditions).to_numpy()
    counts = frame.assign(_keep=keep).groupby([*keys, "condition"], sort=True)["_keep"].agg(["size", "sum"])
    rows = []
    for (model, benchmark, condition), (size, kept) in counts.iterrows():
        if int(kept) == 0:
            raise LogError(
                f"{model} / {benchmark}: no question is present in every condition, so --align intersect leaves "
                "nothing to compare; check the runs' splits and --limit"
            )
        rows.append(
            {
                "model": str(model),
                "benchmark": str(benchmark),
                "condition": str(condition),
                "n_questions": int(size),
                "n_dropped": int(size - kept),
            }
        )
    return frame[keep], rows


@dataclass(frozen=True)
class OptionsFile:
    """An ``--options-file``: option counts keyed by (benchmark, question id) or (benchmark, task type), the
    benchmark in ``benchmark_key`` form; ``lines`` the file line of each benchmark's first row."""

    path: Path
    by_question: dict[tuple[str, str], int]
    by_task_type: dict[tuple[str, str], int]
    lines: dict[str, int]

    def counts(self, frame: pd.DataFrame) -> pd.Series:
        """Per row of ``frame`` the file's count (Float64; <NA> where it names neither the question nor its
        task type): a question's own row wins over its task type's."""
        keys = _per_distinct(frame["benchmark"].astype(str), benchmark_key, object).to_numpy()
        out = pd.Series(np.nan, index=frame.index, dtype="Float64")
        for table, column in ((self.by_task_type, "task_type"), (self.by_question, "question_id")):
            if table:
                index = pd.MultiIndex.from_arrays([keys, frame[column].astype(str).to_numpy()])
                given = pd.Series(table, dtype="Float64").reindex(index).to_numpy(dtype=float, na_value=np.nan)
                out = out.where(np.isnan(given), pd.array(given, dtype="Float64"))
        return out

    def check_benchmarks(self, benchmarks: pd.Series) -> None:
        """A row naming a benchmark no input holds is an error (a typo would silently leave its counts out)."""
        present = {benchmark_key(b) for b in benchmarks.astype(str).unique()}
        for key, line in self.lines.items():
            if key not in present:
                raise LogError(
                    f"{self.path}:{line}: benchmark {key!r} is in none of the inputs "
                    f"(they hold {', '.join(sorted(present))}; names compare lowercase, without punctuation)"
                )


def read_options_file(path: Path) -> OptionsFile:
    """Read an ``--options-file``: a CSV with columns ``benchmark``, ``n_options`` and ``question_id`` and/or
    ``task_type``; each row fills one of the last two (a question, or every question of a task type).

    Raises:
        LogError: naming the file and line: a missing column, an empty benchmark, a row with neither or both
            of question_id and task_type, an n_options that is not an integer from 2 to 8, or a question (or
            task type) of a benchmark in two rows.
    """
    if not path.is_file():
        raise LogError(f"{path}: no such options file")
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = [str(c).strip() for c in reader.fieldnames or []]
        for column in ("benchmark", "n_options"):
            if column not in header:
                raise LogError(
                    f"{path}:1: no {column!r} column (an options file has benchmark, question_id or task_type, "
                    f"and n_options; it has {', '.join(header) or 'no header'})"
                )
        if "question_id" not in header and "task_type" not in header:
            raise LogError(f"{path}:1: neither a 'question_id' nor a 'task_type' column: say what each count is for")
        reader.fieldnames = header
        tables: dict[str, dict[tuple[str, str], int]] = {"question_id": {}, "task_type": {}}
        seen: dict[tuple[str, str, str], int] = {}
        lines: dict[str, int] = {}
        for row in reader:
            line = reader.line_num
            value = {k: str(v or "").strip() for k, v in row.items() if k is not None}
            bench = benchmark_key(value["benchmark"])
            if not bench:
                raise LogError(f"{path}:{line}: the benchmark is empty")
            keyed = [k for k in ("question_id", "task_type") if value.get(k, "")]
            if len(keyed) != 1:
                raise LogError(f"{path}:{line}: give a question_id or a task_type (one of them), not {len(keyed)}")
            text = value["n_options"]
            n = int(float(text)) if re.fullmatch(r"\d+(\.0*)?", text) else -1
            if not MIN_OPTIONS <= n <= MAX_OPTIONS:
                raise LogError(
                    f"{path}:{line}: n_options {text!r} is not a number of options from {MIN_OPTIONS} to {MAX_OPTIONS}"
                )
            column = keyed[0]
            key = (bench, value[column])
            if (column, *key) in seen:
                what = "question" if column == "question_id" else "task type"
                raise LogError(
                    f"{path}:{line}: {what} {key[1]!r} of {value['benchmark']} is given twice "
                    f"(lines {seen[(column, *key)]} and {line})"
                )
            seen[(column, *key)] = line
            lines.setdefault(bench, line)
            tables[column][key] = n
    return OptionsFile(path, tables["question_id"], tables["task_type"], lines)


def _resolve_options(frame: pd.DataFrame, options_file: OptionsFile | None = None) -> pd.DataFrame:
    """Fill every row's n_options and n_options_rule (``postprocess.choices``), refuse an answer key beyond
    the count, and make an ``ok`` answer whose letter is not one of its question's options ``unparsed``
    (scored wrong)."""
    file_counts = None if options_file is None else options_file.counts(frame)
    frame["n_options"], frame["n_options_rule"] = resolve_option_counts(frame, file_counts)
    n = frame["n_options"].to_numpy(dtype=np.int64)
    key = letter_position(frame["answer"])
    bad_key = ((key < 0) | (key >= n)) & (frame["status"] != "error").to_numpy()  # no answer key: an error row
    if bad_key.any():
        row = frame.iloc[int(np.flatnonzero(bad_key)[0])]
        where = f"the {options_file.path} row of" if row["n_options_rule"] == RULE_FILE else "its n_options / options"
        raise LogError(
            f"{row['source']}: the answer key {row['answer']!r} is not one of the question's {row['n_options']} "
            f"option letters ({LETTERS[0]}-{LETTERS[min(int(row['n_options']), MAX_OPTIONS) - 1]}; n_options from "
            "the rule "
            f"'{row['n_options_rule']}'); check {where} field or the benchmark (--benchmark)"
        )
    pred = letter_position(frame["pred"])
    outside = (frame["status"] == "ok").to_numpy() & ((pred < 0) | (pred >= n))
    if outside.any():
        frame["pred"] = frame["pred"].astype(object).where(~outside, None)
        frame["status"] = frame["status"].astype(object).where(~outside, "unparsed")
        frame["correct"] = frame["correct"].where(~outside, False)
        first = frame.iloc[int(np.flatnonzero(outside)[0])]
        logger.info(
            "%d answers name a letter outside their question's options and count as unparsed (first: %s)",
            int(outside.sum()),
            first["source"],
        )
    return frame


def _first_conflict(table: pd.DataFrame, by: list[str], column: str) -> tuple[pd.Series, pd.Series] | None:
    """Two rows of the first ``by`` group holding different ``column`` values, or None when none differs."""
    counts = table.groupby(by, sort=False)[column].nunique()
    clash = counts[counts > 1]
    if clash.empty:
        return None
    first = clash.index[0]
    rows = table
    for key, value in zip(by, first if isinstance(first, tuple) else (first,), strict=True):
        rows = rows[rows[key] == value]
    a = rows.iloc[0]
    return a, rows[rows[column] != a[column]].iloc[0]


def _check_keys(frame: pd.DataFrame) -> None:
    """One question id is one question: the same answer key in every file and condition."""
    conflict = _first_conflict(frame, ["benchmark", "question_id"], "answer")
    if conflict is None:
        return
    a, b = conflict
    raise LogError(
        f"question {a['question_id']!r} of {a['benchmark']} has two different answer keys: {a['answer']!r} at "
        f"{a['source']} and {b['answer']!r} at {b['source']}; is the question id field unique per question "
        "(NExT-QA's 'qid', for one, counts the questions of a video)?"
    )


def _check_one_video_per_question(table: pd.DataFrame) -> None:
    """Within one prediction file a question id names one video (a per-video question index does not)."""
    conflict = _first_conflict(table[table["video_id"] != ""], ["condition", "question_id"], "video_id")
    if conflict is None:
        return
    a, b = conflict
    raise LogError(
        f"question id {a['question_id']!r} ({a['condition']}) names two videos: {a['video_id']!r} at {a['source']} "
        f"and {b['video_id']!r} at {b['source']}; the question id field must be unique per question (NExT-QA's "
        "'qid', for one, counts the questions of a video: combine it with the video id)"
    )


def _none_for_missing(table: pd.DataFrame) -> pd.DataFrame:
    """One missing-value marker in pred and error: None (NaN != NaN would split "no answer" apart)."""
    for column in ("pred", "error"):
        table[column] = table[column].astype(object).where(table[column].notna(), None)
    return table


#: Condition names other harnesses use for vdg's conditions.
CONDITION_ALIASES = {
    "original": "orig",
    "singleframe": "single",
    "single_frame": "single",
    "blackscreen": "black",
    "black_screen": "black",
    "shuffle": "shuffled",
    "order": "ordered",
}
_PREDICTION_FIELDS = ("condition", "question_id", "task_type", "ground_truth", "prediction")
#: Fields read as the question id of a prediction record, in precedence order: per record, the first
#: one with a value.
QUESTION_ID_FIELDS: tuple[str, ...] = (
    "question_id",
    "questionID",
    "question_uid",
    "q_uid",
    "qid",
    "question_idx",
    "uid",
    "id",
)


def normalise_condition(name: str) -> str:
    key = str(name).strip().lower()
    return CONDITION_ALIASES.get(key, key)


def _prediction_table(path: Path) -> pd.DataFrame:
    """The raw records of a JSON array, JSONL or CSV predictions file, with a ``_where`` column."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        _check_utf8(path.read_bytes().removeprefix(b"\xef\xbb\xbf"), path)
        try:
            table = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        except pd.errors.EmptyDataError:
            raise LogError(f"{path}: empty predictions file (no header, no records)") from None
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise LogError(f"{path}: not a readable CSV file ({' '.join(str(exc).split())})") from None
        table["_where"] = [f"{path}:{i}" for i in range(2, len(table) + 2)]
        return table
    data = path.read_bytes()
    _check_utf8(data, path)
    text = data.decode("utf-8")
    if not text.strip():
        raise LogError(f"{path}: empty predictions file (no records)")
    if suffix == ".json" or text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LogError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise LogError(f"{path}: expected a JSON array of prediction records (objects)")
        table = pd.DataFrame.from_records(data)
        table["_where"] = [f"{path}[#{i}]" for i in range(len(table))]
        return table
    records, where = [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise LogError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(records[-1], dict):
                raise LogError(f"{path}:{lineno}: expected a JSON object (one prediction record per line)")
            where.append(f"{path}:{lineno}")
    table = pd.DataFrame.from_records(records)
    table["_where"] = where
    return table


def _first_field(raw: pd.DataFrame, fields: Sequence[str]) -> tuple[pd.Series, list[str]]:
    """Per record the first of ``fields`` that has a value (None when none has), and the fields used."""
    value = pd.Series(None, index=raw.index, dtype=object)
    used = []
    for field in fields:
        if field not in raw.columns:
            continue
        column = raw[field].astype(object)
        present = column.notna() & (column.astype(str).str.strip() != "")
        take = value.isna() & present
        if take.any():
            value[take] = column[take].astype(str)
            used.append(field)
    return value, used


#: Fields of a prediction record listing its option texts, in precedence order (per record, the first with a value).
OPTION_LIST_FIELDS: tuple[str, ...] = ("options", "candidates")


def _option_lists(raw: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """(option texts, the field they came from) per record: the first of ``OPTION_LIST_FIELDS`` with a value, as a
    list of texts (None when it has none); a CSV cell holds a JSON array."""
    out = pd.Series(None, index=raw.index, dtype=object)
    fields = pd.Series(None, index=raw.index, dtype=object)
    for field in OPTION_LIST_FIELDS:
        if field in raw.columns:
            _read_option_list(raw, field, out, fields)
    return out, fields


def _read_option_list(raw: pd.DataFrame, field: str, out: pd.Series, fields: pd.Series) -> None:
    """``_option_lists`` for one field, filling ``out`` / ``fields`` where no earlier field gave a list."""
    for idx, value in raw[field].items():
        if isinstance(out[idx], list) or value is None or (isinstance(value, float) and np.isnan(value)):
            continue
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                value = None
        if not isinstance(value, list) or not value:
            raise LogError(
                f"{raw.at[idx, '_where']}: {field!r} must be a non-empty list of the option texts "
                '(in a CSV file: a JSON array such as ["A. red", "B. blue"])'
            )
        out[idx] = [str(v) for v in value]
        fields[idx] = field


def _record_counts(raw: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
    """(n_options, origin, option texts) per record from its own ``n_options`` / ``options`` / ``candidates``
    fields, else <NA> (resolved across every file by ``load_frame``: ``postprocess.choices``)."""
    counts, origin = _declared_counts(raw.drop(columns=["n_options"], errors="ignore"), raw["benchmark"].astype(str))
    texts, list_fields = _option_lists(raw)
    has_texts = texts.map(lambda t: isinstance(t, list)).astype(bool)
    counts[has_texts] = texts[has_texts].map(len).astype("int64")
    origin[has_texts] = list_fields[has_texts] + " field"
    if "n_options" in raw.columns:
        given = raw["n_options"]
        has = given.notna() & (given.astype(str).str.strip() != "")
        for idx in raw.index[has]:
            text = str(given[idx]).strip()
            n = int(float(text)) if re.fullmatch(r"\d+(\.0*)?", text) else -1
            if not 2 <= n <= MAX_OPTIONS:
                raise LogError(
                    f"{raw.at[idx, '_where']}: n_options {given[idx]!r} is not a number of options "
                    f"from 2 to {MAX_OPTIONS}"
                )
            if has_texts[idx] and len(texts[idx]) != n:
                raise LogError(
                    f"{raw.at[idx, '_where']}: n_options is {n} but {list_fields[idx]!r} lists {len(texts[idx])} "
                    "options"
                )
            counts[idx] = n
            origin[idx] = _OWN_COUNT
    too_many = counts.notna() & ((counts < 2) | (counts > MAX_OPTIONS)).fillna(False)
    if too_many.any():
        idx = raw.index[too_many][0]
        raise LogError(
            f"{raw.at[idx, '_where']}: {counts[idx]} options; vdg reads 2 to {MAX_OPTIONS} ({LETTERS[0]}-{LETTERS[-1]})"
        )
    return counts, origin, texts


def _parse_counts(
    raw: pd.DataFrame, question_id: pd.Series, own: pd.Series, options_file: OptionsFile | None
) -> pd.Series:
    """The option count each prediction is read against: the options file's, else the record's own, else the
    benchmark's declared count (<NA>: every letter)."""
    counts = own.astype("Float64")
    if options_file is not None:
        keys = pd.DataFrame(
            {"benchmark": raw["benchmark"].astype(str), "question_id": question_id.astype(str),
             "task_type": raw["task_type"].astype(str)}
        )  # fmt: skip
        given = options_file.counts(keys)
        counts = given.where(given.notna(), counts)
    declared = _per_distinct(raw["benchmark"].astype(str), declared_option_count, "Float64")
    return counts.fillna(declared).round().astype("Int64")


def _letters(predictions: pd.Series, n_options: pd.Series, texts: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(letter or None, ok|unparsed) for answered predictions; bare letters fast, the rest parsed.

    ``n_options`` <NA> (no count known yet) reads every letter A-H; ``texts`` (option texts or None) help parse."""
    n = n_options.fillna(MAX_OPTIONS).to_numpy(dtype=int)
    text = predictions.astype(object).astype(str).str.strip()
    position = np.array([LETTERS.find(t) for t in text.str.upper()], dtype=int)
    bare = text.str.fullmatch(r"[A-Ha-h]").astype(bool) & (position < n)
    letter = text.str.upper().where(bare)
    status = pd.Series("ok", index=text.index).where(bare)
    for i, idx in enumerate(text.index):
        if bare[idx]:
            continue
        options = texts[idx] if isinstance(texts[idx], list) and len(texts[idx]) == n[i] else None
        parsed = parse_answer(text[idx], n_options=int(n[i]), options=options)
        letter[idx], status[idx] = parsed.letter, parsed.status
    return letter, status


#: Fields of a prediction record stating its sampling setting, in precedence order (per record, the first
#: with a value): ``sampling`` / ``setting`` (``frames:16``, ``fps:0.5``, ``16f``, ``0.5fps``, or any other
#: text), ``frames`` (frames per video), ``fps`` (frames per second).
SETTING_FIELDS: tuple[str, ...] = ("sampling", "setting", "frames", "fps")
_FRAMES_TEXT = re.compile(r"^(?:frames\s*:\s*(?P<a>\d+)|(?P<b>\d+)\s*(?:f|frames?))$", re.I)
_FPS_TEXT = re.compile(r"^(?:fps\s*:\s*(?P<a>\S+)|(?P<b>\S+?)\s*fps)$", re.I)
#: Fields ``read_predictions`` reads itself; any other (scalar) field is kept as a column of its own.
_READ_FIELDS = frozenset(
    {
        "model",
        "benchmark",
        "duration",
        "n_options",
        *OPTION_LIST_FIELDS,
        "correct",
        "error",
        "ground_truth",
        "prediction",
    }
)


def _format_rate(rate: float) -> str:
    text = repr(float(rate))
    return text[:-2] if text.endswith(".0") else text


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        return float("nan")
    return value if np.isfinite(value) and value > 0 else float("nan")


def _setting_text(field: str, value: Any, where: str) -> str:
    """One record's setting: ``frames:<N>`` / ``fps:<F>``, or other ``sampling`` / ``setting`` text as it is."""
    text = str(value).strip()
    frames, fps = _FRAMES_TEXT.match(text), _FPS_TEXT.match(text)
    if field == "frames" or (frames and field != "fps"):
        n = _number(frames["a"] or frames["b"]) if frames else _number(text)
        if not (n == n and float(n).is_integer()):
            raise LogError(f"{where}: {field} {value!r} is not a number of frames (a positive integer)")
        return f"frames:{int(n)}"
    if field == "fps" or fps:
        rate = _number(fps["a"] or fps["b"]) if fps else _number(text)
        if rate != rate:
            raise LogError(f"{where}: {field} {value!r} is not a frame rate (a positive number)")
        return f"fps:{_format_rate(rate)}"
    return text


def _label_suffix(setting: str) -> str:
    """The run-label suffix of a setting: ``@16f``, ``@0.5fps``, ``@<setting>``; "" for no setting."""
    if not setting:
        return ""
    axis, _, value = setting.partition(":")
    return f"@{value}f" if axis == "frames" else f"@{value}fps" if axis == "fps" else f"@{setting}"


def _prediction_settings(raw: pd.DataFrame) -> pd.Series:
    """Per record its setting (``frames:16``, ``fps:0.5``, other ``sampling`` / ``setting`` text; "" when none)."""
    fields = [f for f in SETTING_FIELDS if f in raw.columns]
    out = pd.Series("", index=raw.index, dtype=object)
    if not fields:
        return out
    field = pd.Series(None, index=raw.index, dtype=object)
    for name in reversed(fields):
        column = raw[name].astype(object)
        field[column.notna() & (column.astype(str).str.strip() != "")] = name
    cache: dict[tuple[str, str], str] = {}
    for idx in raw.index[field.notna()]:
        value = raw.at[idx, field[idx]]
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        key = (str(field[idx]), str(value))
        if key not in cache:
            cache[key] = _setting_text(key[0], key[1], str(raw.at[idx, "_where"]))
        out[idx] = cache[key]
    return out


def _apply_settings(table: pd.DataFrame, setting: pd.Series) -> None:
    """Settings as an axis: ``sampling`` (and ``frames``) from them, the model label suffixed (``@16f``)."""
    if not (setting != "").any():
        return
    labels = [
        label if not suffix or label.endswith(suffix) else label + suffix
        for label, suffix in zip(table["model"].astype(str), setting.map(_label_suffix), strict=True)
    ]
    table["model"] = pd.Series(labels, index=table.index, dtype=object)
    sampling = setting.str.startswith(("frames:", "fps:"))
    table["sampling"] = setting.where(sampling, table["sampling"].where(setting == "", "")).astype(object)
    frames = setting.str.startswith("frames:")
    table.loc[frames, "frames"] = setting[frames].str.slice(len("frames:")).astype("int64").to_numpy()


def _kept_fields(raw: pd.DataFrame) -> dict[str, pd.Series]:
    """The fields of a prediction file that vdg does not read itself, as text columns ("" when empty);
    fields holding lists or objects are left out."""
    read = _READ_FIELDS | set(_PREDICTION_FIELDS) | set(QUESTION_ID_FIELDS) | set(VIDEO_ID_FIELDS)
    read |= set(SETTING_FIELDS) | set(SAMPLE_COLUMNS) | {"_where"}
    out = {}
    for name in raw.columns:
        if not isinstance(name, str) or name in read or name.startswith("_"):
            continue
        column = raw[name].astype(object)
        if column.map(lambda v: isinstance(v, (list, dict, tuple, set))).any():
            continue

        def text(v: Any) -> str:
            if v is None or (isinstance(v, float) and np.isnan(v)):
                return ""
            return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)

        out[name] = column.map(text).astype(object)
    return out


def read_predictions(
    path: Path, model: str | None = None, benchmark: str | None = None, options_file: OptionsFile | None = None
) -> pd.DataFrame:
    """A predictions file from any harness (JSON array, JSONL or CSV) as tidy rows.

    Records need condition, a question id, task_type, ground_truth, prediction; optional correct
    (checked against prediction == ground_truth), error, model, benchmark, a video id, duration,
    n_options and options or candidates (the option texts). The question id is the first of
    ``QUESTION_ID_FIELDS`` with a value, the video id the first of ``VIDEO_ID_FIELDS``. A null
    prediction, or a record with an error, is an ``error`` row (the pipeline failed, not the model);
    a prediction with no letter among the question's options is ``unparsed`` (scored wrong). A sampling
    setting (``SETTING_FIELDS``) is an axis: ``sampling`` holds it and the model label gets its suffix
    (``<model>@16f``); any other scalar field is kept as a column of its own (``vdg report --by``).
    ``n_options`` is the record's own (n_options, or the length of options / candidates), else <NA>:
    ``load_frame`` resolves it across every file (``postprocess.choices``). A prediction is read against
    the count ``options_file`` gives, else the record's own, else the benchmark's declared count, else any
    letter A-H (``load_frame`` then makes a letter beyond the resolved count ``unparsed``).
    """
    if not path.is_file():
        raise LogError(f"{path}: no such predictions file")
    raw = _prediction_table(path)
    if raw.empty:
        raise LogError(f"{path}: holds no prediction records")
    question_id, question_fields = _first_field(raw, QUESTION_ID_FIELDS)
    missing = [k for k in _PREDICTION_FIELDS if k != "question_id" and k not in raw.columns]
    if not question_fields and not any(f in raw.columns for f in QUESTION_ID_FIELDS):
        missing.insert(1, "question_id")
    if missing:
        raise LogError(
            f"{path}: missing field(s) {', '.join(missing)} (need {', '.join(_PREDICTION_FIELDS)}; the question id "
            f"may be any of {', '.join(QUESTION_ID_FIELDS)})"
        )
    raw = raw.astype(object).where(raw.notna(), None)
    if question_id.isna().any():
        where = raw.at[raw.index[question_id.isna()][0], "_where"]
        raise LogError(f"{where}: no question id (none of {', '.join(QUESTION_ID_FIELDS)} has a value)")
    for key in ("condition", "task_type", "ground_truth"):
        empty_at = raw.index[raw[key].isna()]
        if len(empty_at):
            raise LogError(f"{raw.at[empty_at[0], '_where']}: '{key}' is empty")
    for key, fallback in (("model", model), ("benchmark", benchmark)):
        values = raw[key] if key in raw.columns else pd.Series(None, index=raw.index, dtype=object)
        raw[key] = values.where(values.notna(), fallback)
        if raw[key].isna().any():
            where = raw.at[raw.index[raw[key].isna()][0], "_where"]
            raise LogError(f"{where}: no {key}: give MODEL=FILE and --benchmark, or a '{key}' field in the record")
    answer = raw["ground_truth"].astype(str).str.strip().str.upper()
    n_options, origin, texts = _record_counts(raw)
    error_text = raw["error"] if "error" in raw.columns else pd.Series(None, index=raw.index, dtype=object)
    failed = raw["prediction"].isna() | error_text.notna()
    read_as = _parse_counts(raw, question_id, n_options, options_file)
    letter, status = _letters(raw.loc[~failed, "prediction"], read_as[~failed], texts[~failed])
    pred = pd.Series(None, index=raw.index, dtype=object)
    pred[~failed] = letter
    statuses = pd.Series("error", index=raw.index, dtype=object)
    statuses[~failed] = status
    correct = pd.Series(pd.NA, index=raw.index, dtype="boolean")
    correct[~failed] = (pred[~failed] == answer[~failed]).astype(bool)
    if "correct" in raw.columns:
        claimed = raw["correct"].map(lambda v: None if v is None else str(v).strip().lower() in ("true", "1"))
        checked = ~failed & claimed.notna()
        clash = pd.Series(False, index=raw.index)
        clash[checked] = claimed[checked].astype(bool).to_numpy() != correct[checked].astype(bool).to_numpy()
        if clash.any():
            i = raw.index[clash][0]
            raise LogError(
                f"{raw.at[i, '_where']}: 'correct' is {raw.at[i, 'correct']!r} but prediction "
                f"{raw.at[i, 'prediction']!r} vs ground truth {answer[i]!r} says {bool(correct[i])}"
            )
    video, video_fields = _first_field(raw, VIDEO_ID_FIELDS)
    duration = raw["duration"] if "duration" in raw.columns else pd.Series("", index=raw.index, dtype=object)
    table = pd.DataFrame(
        {
            "model": raw["model"].astype(str),
            "model_settings": "",
            "benchmark": raw["benchmark"].astype(str),
            "condition": raw["condition"].map(normalise_condition),
            "question_id": question_id.astype(str),
            "video_id": video.fillna("").astype(str),
            "task_type": raw["task_type"].astype(str),
            "duration": duration.fillna("").astype(str),
            "n_options": n_options,
            "n_options_rule": None,  # resolved by load_frame
            "answer": answer,
            "pred": pred,
            "status": statuses,
            "error": error_text.where(~failed | error_text.notna(), "null prediction").where(failed, None),
            "correct": correct,
            "source": raw["_where"],
            **extra_columns(raw),
        }
    )
    table = _none_for_missing(table[list(SAMPLE_COLUMNS)].copy())
    _apply_settings(table, _prediction_settings(raw))
    for name, column in _kept_fields(raw).items():
        table[name] = column
    _check_one_video_per_question(table)
    behind, _ = _first_field(raw, MODEL_SOURCE_FIELDS)
    runs = pd.DataFrame({"model": table["model"], "source": behind.fillna("").astype(str).str.strip(),
                         "where": raw["_where"]})  # fmt: skip
    runs = runs[runs["source"] != ""]
    _check_models(runs.drop_duplicates(["model", "source"]).to_dict("records"))
    info = _source_info(
        path,
        "predictions",
        {column: table[column].unique() for column in ("model", "benchmark", "condition")},
        len(table),
        question_id_field=", then ".join(question_fields),
        video_id_field=", then ".join(video_fields),
        n_options_origins=list(origin.value_counts(sort=False).items()),
        model_source=", ".join(dict.fromkeys(runs["source"])),
        transform_version=_versions(raw["transform_version"] if "transform_version" in raw.columns else []),
    )
    logger.info(
        "%s: question id from %s, video id from %s, options: %s",
        path,
        info["question_id_field"],
        info["video_id_field"] or "no field (collective accuracy and --cluster need one)",
        info["n_options_source"],
    )
    table.attrs[_SOURCE_ATTR] = info
    table.attrs[_MODELS_ATTR] = runs.drop_duplicates(["model", "source"]).to_dict("records")
    return table


_MODELS_ATTR = "vdg_models"


def _check_models(runs: Iterable[Mapping[str, str]]) -> None:
    """One model per label: ``runs`` are (model label, source: the model behind it, where it says so); two
    different sources under one label would pool two models' answers into one row of every table."""
    first: dict[str, Mapping[str, str]] = {}
    for run in runs:
        seen = first.setdefault(run["model"], run)
        if seen["source"] != run["source"]:
            raise LogError(
                f"label {run['model']!r} holds answers of two different models: {seen['source']} "
                f"({_source_file(seen['where'])}) and {run['source']} ({_source_file(run['where'])}); give each "
                "model its own label (NAME=DIR, MODEL=FILE or the records' model field)"
            )


def conditions_present(frame: pd.DataFrame, model: str, benchmark: str) -> Sequence[str]:
    sub = frame[(frame["model"] == model) & (frame["benchmark"] == benchmark)]
    return list(dict.fromkeys(sub["condition"]))
