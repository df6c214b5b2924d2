"""Prediction files of other harnesses (a JSON array, JSON lines or CSV): their odd field names, option lists,
settings and letters, read into the tidy frame's rows (``read_predictions``)."""

from __future__ import annotations

import functools
import io
import json
import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from postprocess.reading.answer_options import (
    MAX_OPTIONS,
    declared_option_count,
)
from postprocess.reading.files import (
    OWN_COUNT,
    SOURCE_ATTR,
    LogError,
    check_utf8,
    declared_counts,
    log_name,
    per_distinct,
    read_log_bytes,
    source_info,
    versions_text,
)
from postprocess.reading.frame import (
    SAMPLE_COLUMNS,
    VIDEO_ID_FIELDS,
)
from postprocess.reading.frame_checks import MODELS_ATTR, check_models, check_one_video_per_question, none_for_missing
from postprocess.reading.options_file import OptionsFile
from postprocess.reading.run_labels import MODEL_SOURCE_FIELDS, extra_columns
from vdg_tasks.vocabulary.conditions import aliases
from vdg_tasks.vocabulary.parse import LETTERS, parse_answer

logger = logging.getLogger(__name__)


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


def normalise_condition(name: str, names: Mapping[str, str] | None = None) -> str:
    """The condition ``name`` stands for: itself, lower-cased, or the condition declaring it as an alias (``names``:
    ``vdg_tasks.vocabulary.conditions.aliases()``, looked up when not given)."""
    key = str(name).strip().lower()
    return (aliases() if names is None else names).get(key, key)


def _prediction_table(path: Path) -> pd.DataFrame:
    """The raw records of a JSON array, JSONL or CSV predictions file, with a ``_where`` column. Any of them may
    be gzip-compressed (``preds.jsonl.gz``, or gzip under a plain name: ``read_log_bytes`` tells by the bytes); the
    format is told by the name less ``.gz``."""
    suffix = Path(log_name(path)).suffix.lower()
    data = read_log_bytes(path)
    if suffix == ".csv":
        check_utf8(data.removeprefix(b"\xef\xbb\xbf"), path)
        try:
            table = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, na_values=[""])
        except pd.errors.EmptyDataError:
            raise LogError(f"{path}: empty predictions file (no header, no records)") from None
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise LogError(f"{path}: not a readable CSV file ({' '.join(str(exc).split())})") from None
        table["_where"] = [f"{path}:{i}" for i in range(2, len(table) + 2)]
        return table
    check_utf8(data, path)
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


def first_field(raw: pd.DataFrame, fields: Sequence[str]) -> tuple[pd.Series, list[str]]:
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
    fields, else <NA> (resolved across every file by ``load_frame``: ``postprocess.reading.answer_options``)."""
    counts, origin = declared_counts(raw.drop(columns=["n_options"], errors="ignore"), raw["benchmark"].astype(str))
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
            origin[idx] = OWN_COUNT
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
    declared = per_distinct(raw["benchmark"].astype(str), declared_option_count, "Float64")
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


def apply_settings(table: pd.DataFrame, setting: pd.Series) -> None:
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
    ``load_frame`` resolves it across every file (``postprocess.reading.answer_options``). A prediction is read against
    the count ``options_file`` gives, else the record's own, else the benchmark's declared count, else any
    letter A-H (``load_frame`` then makes a letter beyond the resolved count ``unparsed``).
    """
    if not path.is_file():
        raise LogError(f"{path}: no such predictions file")
    raw = _prediction_table(path)
    if raw.empty:
        raise LogError(f"{path}: holds no prediction records")
    question_id, question_fields = first_field(raw, QUESTION_ID_FIELDS)
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
    video, video_fields = first_field(raw, VIDEO_ID_FIELDS)
    duration = raw["duration"] if "duration" in raw.columns else pd.Series("", index=raw.index, dtype=object)
    table = pd.DataFrame(
        {
            "model": raw["model"].astype(str),
            "model_settings": "",
            "benchmark": raw["benchmark"].astype(str),
            "condition": raw["condition"].map(functools.partial(normalise_condition, names=aliases())),
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
            "score": np.nan,  # a letter's: ``correct``, filled by load_frame
            "scoring": "",
            "source": raw["_where"],
            **extra_columns(raw),
        }
    )
    table = none_for_missing(table[list(SAMPLE_COLUMNS)].copy())
    apply_settings(table, _prediction_settings(raw))
    for name, column in _kept_fields(raw).items():
        table[name] = column
    check_one_video_per_question(table)
    behind, _ = first_field(raw, MODEL_SOURCE_FIELDS)
    runs = pd.DataFrame({"model": table["model"], "source": behind.fillna("").astype(str).str.strip(),
                         "where": raw["_where"]})  # fmt: skip
    runs = runs[runs["source"] != ""]
    check_models(runs.drop_duplicates(["model", "source"]).to_dict("records"))
    info = source_info(
        path,
        "predictions",
        {column: table[column].unique() for column in ("model", "benchmark", "condition")},
        len(table),
        question_id_field=", then ".join(question_fields),
        video_id_field=", then ".join(video_fields),
        n_options_origins=list(origin.value_counts(sort=False).items()),
        model_source=", ".join(dict.fromkeys(runs["source"])),
        transform_version=versions_text(raw["transform_version"] if "transform_version" in raw.columns else []),
    )
    logger.info(
        "%s: question id from %s, video id from %s, options: %s",
        path,
        info["question_id_field"],
        info["video_id_field"] or "no field (collective accuracy and --cluster need one)",
        info["n_options_source"],
    )
    table.attrs[SOURCE_ATTR] = info
    table.attrs[MODELS_ATTR] = runs.drop_duplicates(["model", "source"]).to_dict("records")
    return table
