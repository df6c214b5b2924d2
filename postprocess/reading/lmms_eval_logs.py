"""lmms-eval output folders -> one tidy frame, one row per (model, benchmark, condition, question).

The join key is the question id that vdg's ``process_results`` hook logs (``doc_id`` is a row
position and ``doc_hash`` is constant in lmms-eval 0.7.3). The frame's columns, each with its meaning and how it is
read, are declared once in ``postprocess.reading.frame.FRAME_COLUMNS`` (docs/report-schema.md lists them). A samples
log may
be gzip-compressed, whatever its name (``*_samples_*.jsonl.gz`` is found beside the plain ones;
``postprocess.reading.files.samples_logs`` says which of a log held both ways is read). A logged score that is not a
finite number in [0, 1] (text, a boolean, NaN, an infinity), or that contradicts ``correct``, is an error naming its
``file:line`` (``_check_scores``, ``_first_score_against_correct``).

Any other field of a prediction file (a scalar) is kept as a column of its own ("" where another file
lacks it), to stratify by (``vdg report --by FIELD``).

``load_frame`` also records, per input file, which fields it read (``frame.attrs["vdg_sources"]``,
a JSON list; ``input_files(frame)`` decodes it): the report's ``sources`` table.

This module reads samples logs and joins every input into the frame; the rest of the reader is by job:
``run_labels`` (who wrote a run), ``prediction_files`` (other harnesses' prediction files), ``vlmevalkit``
(VLMEvalKit's prediction files), ``options_file`` (``--options-file``), ``frame_checks`` (what is refused),
``reading`` (what they share), and the frame's schema is ``postprocess.reading.frame``.
"""

from __future__ import annotations

import gc
import json
import logging
import multiprocessing as mp
from collections.abc import Iterable, Mapping
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

from postprocess.parallel import can_fork, cpus
from postprocess.reading.answer_options import (
    MAX_OPTIONS,
    MIN_OPTIONS,
    resolve_option_counts,
)
from postprocess.reading.files import (
    ARROW_TEXT,
    OWN_COUNT,
    PLAIN_RUN_KIND,
    SOURCE_ATTR,
    TEXT_DTYPE,
    LogError,
    check_utf8,
    declared_counts,
    log_name,
    read_log_bytes,
    samples_logs,
    source_info,
    versions_text,
)
from postprocess.reading.frame import (
    ALIGNMENT_ATTR,
    RECORD_TEXT_AS_LOGGED,
    RECORD_TEXT_STRIPPED,
    SAMPLE_COLUMNS,
    SOURCES_ATTR,
    is_graded,
)
from postprocess.reading.frame_checks import (
    MODELS_ATTR,
    check_exports,
    check_fixed_sets,
    check_keys,
    check_models,
    check_question_sets,
    check_settings,
    dedupe,
    fill_scores,
    none_for_missing,
)
from postprocess.reading.options_file import read_options_file, resolve_options
from postprocess.reading.run_labels import (
    RunDir,
    extra_columns,
    mark_quantized,
    model_label,
    model_settings,
    model_source,
    parse_model_args,
    precision,
    results_of,
    text_columns,
)
from postprocess.reading.vlmevalkit import check_prediction_inputs, read_prediction_file
from vdg_tasks.vocabulary.parse import LETTERS
from vdg_tasks.vocabulary.record import BASE_RUN_KEY, OPEN_STATUS, RECORD_KEY, SAMPLES_FILE, STATUSES
from vdg_tasks.vocabulary.scoring import CORRECT_AT

logger = logging.getLogger(__name__)


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
    match = SAMPLES_FILE.match(log_name(path))
    task = match["task"] if match else Path(log_name(path)).stem
    benchmark, sep, condition = task.rpartition("_vdg_")
    return (benchmark, condition) if sep else ("", task)


def _log_counts(own: _Field | None, benchmark: _Field) -> tuple[pd.Series, list[tuple[str, int]]]:
    """A samples log's ``declared_counts`` and its (origin, records) in order of appearance. A log whose every
    record gives its count as an integer (what vdg's hook writes) takes them as they are, without pandas."""
    if own is not None and own.kinds == {int}:
        try:
            values = np.array(own.values, dtype=np.int64)
        except OverflowError:  # beyond int64: pandas' coercion decides
            pass
        else:
            return pd.Series(pd.array(values, dtype="Int64")), [(OWN_COUNT, len(values))]
    texts = pd.Series(benchmark.values).astype(str)
    counts, origin = declared_counts(pd.DataFrame({} if own is None else {"n_options": own.values}), texts)
    codes, names = pd.factorize(origin)
    return counts, [(str(name), int(n)) for name, n in zip(names, np.bincount(codes), strict=True)]


#: Fields of the ``vdg`` record that ``_samples_frame`` reads (besides pred and error: ``_SamplesLog.answers``).
_SAMPLE_FIELDS = (
    *_RECORD_FIELDS,
    *("video_id", "task_type", "duration", "n_options", "correct", "score", "scoring", "duration_s", "provenance"),
    *RECORD_TEXT_AS_LOGGED,
    *RECORD_TEXT_STRIPPED,
)


@dataclass
class _SamplesLog:
    """One samples log as plain per-field values: what a reader process sends back (a DataFrame per file
    cost more to build and to pickle than the JSON took to decode)."""

    path: Path
    model: str
    settings: str
    #: Each record's ``file:line`` (``_packed``).
    lines: list[str] | pa.Array
    #: The file's distinct benchmarks and conditions, as text.
    distinct: dict[str, set[str]]
    #: Per field of ``_SAMPLE_FIELDS`` that some record has, its values as ``_fields`` gives them (``_packed``).
    fields: dict[str, list[Any] | pa.Array]
    #: pred and error as the file's own column (their dtype, which ``pd.concat`` combines, matters downstream).
    answers: dict[str, pd.Series]
    #: Each record's option count as ``declared_counts`` gives it, and the file's (where it came from, records)
    #: in order of appearance.
    n_options: pd.Series
    origins: list[tuple[str, int]]
    #: The model behind the file (``model_source`` of its results file).
    model_source: str = ""
    #: The ``transform_version``s its records were built by, as text ("" when none says).
    transform_version: str = ""
    #: What the file is, for the sources table: a vdg task's samples log, or a plain run of a base task read as orig.
    kind: str = "lmms-eval samples log"


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
    if ARROW_TEXT and field.values and field.kinds == {str}:
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
    data = read_log_bytes(path)
    check_utf8(data, path)
    lines, one_per_line = _record_lines(data)
    if not lines:
        return {}, lines
    if one_per_line:  # the usual case: the whole file in one call, only the fields read are built
        try:
            structs = _LINE_DECODER.decode_lines(data)
        except (msgspec.DecodeError, RecursionError):
            structs = None
        if structs is not None and len(structs) == len(lines):
            columns = list(zip(*map(astuple, map(attrgetter(RECORD_KEY), structs)), strict=True))  # transposed in C
            _check_scores(columns[_SCORE_AT], path, lines)
            return _fields(columns, LOG_FIELDS), lines
    # Line by line, each error naming its line (two objects on one line are one).
    texts = [line for line in data.splitlines() if line.strip()]
    rows = [_record_row(line, f"{path}:{n}") for n, line in zip(lines, texts, strict=True)]
    columns = list(zip(*rows, strict=True))
    _check_scores(columns[_SCORE_AT], path, lines)
    return _fields(columns, LOG_FIELDS), lines


_SCORE_AT = LOG_FIELDS.index("score")
_SCORE_KINDS = {float, int, msgspec.UnsetType, type(None)}


def _score_problem(value: Any) -> str | None:
    """Why a logged ``score`` is not one (None for a score, or for none given: null or absent). A score is a JSON
    number in [0, 1]. A boolean is refused, not read as 1 or 0: vdg's hook writes a letter's score as 1.0 or 0.0
    and its verdict in ``correct``, so ``true`` here is a writer that confused the two (as the judge refuses it)."""
    if value is None or value is msgspec.UNSET:
        return None
    if isinstance(value, bool):
        return "a boolean, not a number"
    if not isinstance(value, (int, float)):
        return "not a number" + (" (a number in quotes is text)" if isinstance(value, str) else "")
    try:
        number = float(value)
    except OverflowError:
        return "outside [0, 1]"
    if number != number:
        return "not a number (NaN)"
    return None if 0.0 <= number <= 1.0 else "outside [0, 1]"


def _check_scores(score: tuple[Any, ...], path: Path, lines: list[int]) -> None:
    """Every logged ``score`` of a samples log is a finite number in [0, 1], or null or absent (not scored yet, or an
    older log: ``correct`` stands for it); the first that is not is an error naming its file and line. Checked on the
    values as decoded, where an absent score (UNSET) and a JSON NaN still differ.

    Raises:
        LogError: ``{file}:{line}: score is {value!r}, ...``: a string, a boolean, NaN, an infinity, or a number
            outside [0, 1] (a per-question mean of a ``mean:`` metric in percent, a metric that is not a
            probability), which would otherwise become an accuracy above 1 or a VDG the data does not hold.
    """
    kinds = set(map(type, score))
    if kinds <= _SCORE_KINDS - {float, int}:
        return
    if kinds <= _SCORE_KINDS:  # the usual case, checked at once (bool is a kind of its own here)
        try:
            numbers = np.array(
                score if kinds <= {float, int} else [0.5 if v is None or v is msgspec.UNSET else v for v in score],
                dtype=float,
            )
        except OverflowError:  # an integer beyond float: the loop below names it
            pass
        else:
            if ((numbers >= 0.0) & (numbers <= 1.0)).all():  # NaN fails both
                return
    for i, value in enumerate(score):
        problem = _score_problem(value)
        if problem is not None:
            raise LogError(
                f"{path}:{lines[i]}: score is {value!r}, {problem}; a score is a number in [0, 1] (or null until "
                "scored), so this record cannot be counted: was the log edited or written by another tool?"
            )


def _sources(path: Path, lines: list[int]) -> list[str] | pa.Array:
    """Each record's ``file:line``, as ``_packed`` holds text (joined by arrow where text is arrow-backed)."""
    if not ARROW_TEXT:
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


def _graded(fields: dict[str, _Field]) -> np.ndarray:
    """Whether each record is graded (``postprocess.reading.frame.is_graded`` of its ``scoring``, asked once per
    distinct
    value): a letter's when none says."""
    scoring = fields.get("scoring")
    if scoring is None:
        return np.zeros(len(fields["status"].values), dtype=bool)
    names = scoring.values if scoring.kinds == {str} else list(map(str, scoring.values))  # hashable, as is_graded reads
    graded = {name: is_graded(name) for name in set(names)}
    if len(set(graded.values())) == 1:  # one kind of scoring (the usual log): no pass over the records
        return np.full(len(names), next(iter(graded.values())), dtype=bool)
    return np.array([graded[name] for name in names], dtype=bool)


def _first_score_against_correct(fields: dict[str, _Field]) -> int | None:
    """The first scored (ok or unparsed) record whose score and ``correct`` disagree: a letter's score is 1.0 or 0.0
    as its answer is right or wrong, and a graded answer is correct when its score is at least ``CORRECT_AT``; None
    when all agree. Run after ``_check_scores`` and the check of ``correct`` (a boolean on every scored record)."""
    score = fields.get("score")
    if score is None:
        return None
    if score.kinds <= {float, int}:
        numbers = np.array(score.values, dtype=float)
    else:
        numbers = pd.to_numeric(pd.Series(score.values, dtype=object), errors="coerce").to_numpy(dtype=float)
    status = pd.Series(fields["status"].values, dtype=object)
    scored = status.isin(("ok", "unparsed")).to_numpy(bool) & ~np.isnan(numbers)
    if not scored.any():
        return None
    correct = fields["correct"]
    if correct.kinds == {bool}:
        right = np.array(correct.values, dtype=bool)
    else:
        right = np.array([value is True for value in correct.values], dtype=bool)
    graded = _graded(fields)
    expected = np.where(graded, numbers >= CORRECT_AT, numbers == 1.0)
    letter_off = ~graded & (numbers != 0.0) & (numbers != 1.0)
    bad = np.flatnonzero(scored & ((expected != right) | letter_off))
    return int(bad[0]) if len(bad) else None


def _read_log(path: Path, label: str | None = None) -> _SamplesLog:
    """Decode and check one samples log: the work ``load_frame`` spreads over reader processes."""
    results = results_of(path)
    config = results["config"]
    args = parse_model_args(config.get("model_args"))
    model = mark_quantized(label, precision(args)) if label else model_label(config)
    fields, lines = _decoded(path)
    base_run = results.get(BASE_RUN_KEY)
    # a plain run of a base task converted to orig, one line per line: its rows point at the base task's log
    shown = Path(base_run["samples"]) if isinstance(base_run, dict) and base_run.get("samples") else path
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
    bad = _first_score_against_correct(fields)
    if bad is not None:
        value, correct = fields["score"].values[bad], fields["correct"].values[bad]
        rule = "its score is its correct flag" if not _graded(fields)[bad] else f"correct means score >= {CORRECT_AT}"
        raise LogError(
            f"{path}:{lines[bad]}: score is {value!r} but correct is {str(correct).lower()}; {rule}, and the "
            "tables on scores and on correctness would disagree"
        )
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
        shown,
        model,
        model_settings(config),
        _sources(shown, lines),
        distinct,
        packed,
        answers,
        n_options,
        origins,
        model_source(results),
        versions_text(versions.values if versions is not None else []),
        PLAIN_RUN_KIND if shown is not path else "lmms-eval samples log",
    )


def _stacked(parts: list[list[Any] | pa.Array | None], sizes: list[int], one_chunk: bool = True) -> pd.Series:
    """Per-file values of one field end to end, NaN for a file without it (as ``DataFrame.from_records``): a
    ``str`` column when every file has it as text (``_packed``), else an object column. ``one_chunk``: the text
    copied into one arrow array (what the analyses group by: each arrow kernel then runs once, not per file)."""
    if ARROW_TEXT and all(isinstance(part, pa.Array) for part in parts):
        chunked = pa.chunked_array(parts, type=pa.large_string())
        return pd.Series(chunked.combine_chunks() if one_chunk else chunked, dtype=TEXT_DTYPE)
    values = (
        [np.nan] * n if part is None else part.to_pylist() if isinstance(part, pa.Array) else part
        for part, n in zip(parts, sizes, strict=True)
    )
    return pd.Series(list(chain.from_iterable(values)), dtype=object)


def _samples_frame(logs: list[_SamplesLog]) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Samples logs read by ``_read_log`` as tidy rows, built once for all of them (one pandas column per
    column, not one per file), and each file's ``source_info``."""
    sizes = [len(log.lines) for log in logs]

    def per_file(values: list[str]) -> pd.Series:
        """One text per file, on each of its rows: categorical, so that what is derived per distinct value
        (frames, precision) costs per file, not per row."""
        codes, names = pd.factorize(pd.Series(values, dtype=object))
        return pd.Series(pd.Categorical.from_codes(np.repeat(codes, sizes), categories=names))

    def per_file_text(column: pd.Series) -> pd.Series:
        """A ``per_file`` column as text: arrow's take of the distinct texts where ``str`` is arrow-backed."""
        if not ARROW_TEXT:
            return column.astype(str)
        names = pa.array([str(name) for name in column.cat.categories], type=pa.large_string())
        return pd.Series(names.take(pa.array(column.cat.codes.to_numpy())), dtype=TEXT_DTYPE)

    keys = dict.fromkeys(key for log in logs for key in log.fields)
    table = pd.DataFrame({key: _stacked([log.fields.get(key) for log in logs], sizes) for key in keys})
    settings = per_file([log.settings for log in logs])

    def answers(key: str) -> pd.Series:
        return pd.concat([log.answers[key] for log in logs], ignore_index=True)

    error_rows = table["status"].isin(["error", OPEN_STATUS])
    correct = table["correct"] if "correct" in table.columns else pd.Series(False, index=table.index)
    benchmark = table["benchmark"].astype(str)
    out = pd.DataFrame(
        {
            "model": per_file_text(per_file([log.model for log in logs])),
            "model_settings": per_file_text(settings),
            "benchmark": benchmark,
            "condition": table["condition"].astype(str),
            "question_id": table["question_id"].astype(str),
            **text_columns(table, ("video_id", "task_type", "duration")),
            "n_options": pd.concat([log.n_options for log in logs], ignore_index=True),
            "answer": table["answer"].astype(str),
            "pred": answers("pred"),
            "status": table["status"].astype(str),
            "error": answers("error"),
            "correct": pd.arrays.BooleanArray(correct.fillna(False).to_numpy(dtype=bool), error_rows.to_numpy(bool)),
            "score": pd.to_numeric(table["score"], errors="coerce").astype(float)
            if "score" in table.columns
            else pd.Series(np.nan, index=table.index, dtype=float),
            **text_columns(table, ("scoring",)),
            "source": _stacked([log.lines for log in logs], sizes, one_chunk=False),  # read for messages only
            **extra_columns(table, settings),
        },
        columns=list(SAMPLE_COLUMNS),
    )
    infos = [
        source_info(
            log.path,
            log.kind,
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
    for prediction files. Option counts are resolved within this log (``postprocess.reading.answer_options``;
    ``load_frame`` resolves them across every file). An empty log is an error naming the file: its
    condition would otherwise silently lack every question.
    """
    frame, (info,) = _samples_frame([_read_log(path, label)])
    frame["n_options"], frame["n_options_rule"] = resolve_option_counts(frame)
    frame.attrs[SOURCE_ATTR] = info
    return frame


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

    ``predictions`` are (model, file) pairs (``--predictions MODEL=FILE``; a VLMEvalKit file's "model" may be
    ``LABEL:CONDITION``: ``postprocess.reading.vlmevalkit``); ``benchmark`` names their benchmark when the
    records (or a VLMEvalKit file's name) do not. See the module docstring for the columns. Each
    question's option count is resolved across every file (``postprocess.reading.answer_options``; ``options_file``,
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
        jobs += [(f, run.label) for f in samples_logs(run.path)]
    frames: list[pd.DataFrame] = []
    infos: list[dict[str, Any]] = []
    behind: list[Mapping[str, str]] = []
    if jobs:  # the per-file values are dropped once the frame holds them
        logs = _read_all_samples(jobs)
        behind += [{"model": log.model, "source": log.model_source, "where": str(log.path)} for log in logs]
        samples, infos = _samples_frame(logs)
        del logs
        frames.append(samples)
    given = []
    for model, path in predictions:
        frames.append(read_prediction_file(model, Path(path), benchmark, options_file=counts_file))
        infos.append(frames[-1].attrs.get(SOURCE_ATTR))
        behind += frames[-1].attrs.get(MODELS_ATTR, [])
        given.append((model, Path(path), frames[-1]))
    check_prediction_inputs(given, frames[: len(frames) - len(given)])  # one file, one arm; one scoring rule
    del given
    check_models(run for run in behind if run["source"])
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
    frame = resolve_options(frame, counts_file)
    check_settings(frame)  # before de-duplication, which would keep one of two runs that answer alike
    check_fixed_sets(frame)  # likewise
    frame = dedupe(fill_scores(frame), on_duplicate)  # a log without scores agrees with one with them
    if not mixed_exports:
        check_exports(frame)
    check_keys(frame)
    if align not in ("strict", "intersect"):
        raise ValueError(f"align must be 'strict' or 'intersect', got {align!r}")
    dropped: list[dict[str, Any]] = []
    if align == "intersect":
        frame, dropped = _intersect_conditions(frame)
    else:
        check_question_sets(frame)
    frame["correct"] = frame["correct"].astype("boolean")
    frame = none_for_missing(frame).reset_index(drop=True)
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
