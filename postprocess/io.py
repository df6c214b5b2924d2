"""lmms-eval output folders -> one tidy frame, one row per (model, benchmark, condition, question).

The join key is the question id that vdg's ``process_results`` hook logs (``doc_id`` is a row
position and ``doc_hash`` is constant in lmms-eval 0.7.3). Columns of the frame (``SAMPLE_COLUMNS``):

- model: the run's label (``NAME=DIR`` on the command line, else lmms-eval's model name and the
  basename of its ``pretrained=`` argument)
- model_settings: model_args and gen_kwargs of the run; one label must have one setting
- benchmark, condition, question_id, video_id, task_type, duration: from the logged record
- answer: ground-truth letter; pred: parsed letter or None
- status: ``ok`` (a letter was read), ``unparsed`` (answered, no letter: scored wrong) or
  ``error`` (no answer: missing or undecodable video); error: the reason for ``error``
- correct: True/False for ok and unparsed rows, <NA> for error rows
- source: ``file:line`` the row came from
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from vdg_tasks.parse import LETTERS, parse_answer

RECORD_KEY = "vdg"

SAMPLE_COLUMNS: tuple[str, ...] = (
    "model",
    "model_settings",
    "benchmark",
    "condition",
    "question_id",
    "video_id",
    "task_type",
    "duration",
    "answer",
    "pred",
    "status",
    "error",
    "correct",
    "source",
)
KEY = ("model", "benchmark", "condition", "question_id")
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
    """lmms-eval's model name, plus the basename of ``pretrained=`` when there is one."""
    name = str(config.get("model", "model"))
    args = _parse_model_args(config.get("model_args"))
    pretrained = args.get("pretrained") or args.get("model")
    if pretrained and pretrained != name:
        return f"{name}:{Path(pretrained.rstrip('/')).name}"
    return name


def model_settings(config: dict[str, Any]) -> str:
    args = {k: v for k, v in _parse_model_args(config.get("model_args")).items() if k not in _PLACEMENT_ARGS}
    settings = ",".join(f"{k}={v}" for k, v in sorted(args.items()))
    gen = config.get("gen_kwargs") or ""
    return f"{settings};gen_kwargs={gen}" if gen else settings


def _results_config(samples_file: Path) -> dict[str, Any]:
    match = _SAMPLES_FILE.match(samples_file.name)
    if not match:
        raise LogError(f"{samples_file}: not an lmms-eval samples file (<stamp>_samples_<task>.jsonl)")
    results = samples_file.with_name(f"{match['stamp']}_results.json")
    if not results.is_file():
        raise LogError(f"{samples_file}: no {results.name} beside it, so the model that wrote it is unknown")
    try:
        return json.loads(results.read_text())["config"]
    except (json.JSONDecodeError, KeyError) as exc:
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
# lmms-eval writes samples with json.dumps' default separators, so the record starts with this.
_RECORD_MARK = f'"{RECORD_KEY}": {{'
_RECORD_FIELDS = ("benchmark", "condition", "question_id", "answer", "status")


def _vdg_record(line: str, where: str) -> Any:
    """The ``vdg`` object of one samples line, decoding only that object when it can be found."""
    at = line.find(_RECORD_MARK)
    if at >= 0:
        try:
            return _DECODER.raw_decode(line, at + len(_RECORD_MARK) - 1)[0]
        except json.JSONDecodeError:
            pass  # the mark was inside another string: parse the whole line below
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise LogError(f"{where}: not valid JSON ({exc.msg})") from None
    rec = record.get(RECORD_KEY) if isinstance(record, dict) else None
    if not isinstance(rec, dict):
        raise LogError(f"{where}: no '{RECORD_KEY}' record; was this written by a vdg task (<benchmark>_vdg_<cond>)?")
    return rec


def read_samples(path: Path, label: str | None = None) -> pd.DataFrame:
    """One lmms-eval samples log as tidy rows."""
    config = _results_config(path)
    model, settings = label or model_label(config), model_settings(config)
    records, lines = [], []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                records.append(_vdg_record(line, f"{path}:{lineno}"))
                lines.append(lineno)
    table = pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=list(_RECORD_FIELDS))
    where = pd.Series([f"{path}:{n}" for n in lines], dtype=object)
    for key in _RECORD_FIELDS:
        absent = table[key].isna() if key in table.columns else pd.Series(True, index=table.index)
        if absent.any():
            raise LogError(f"{where[int(np.flatnonzero(absent)[0])]}: the '{RECORD_KEY}' record lacks {key}")
    bad = ~table["status"].isin(["ok", "unparsed", "error"])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise LogError(f"{where[i]}: unknown status {table['status'].iloc[i]!r} (expected ok, unparsed or error)")

    def text(key: str) -> pd.Series:
        return table[key].fillna("").astype(str) if key in table.columns else pd.Series("", index=table.index)

    error_rows = table["status"] == "error"
    correct = table["correct"] if "correct" in table.columns else pd.Series(False, index=table.index)
    return pd.DataFrame(
        {
            "model": model,
            "model_settings": settings,
            "benchmark": table["benchmark"].astype(str),
            "condition": table["condition"].astype(str),
            "question_id": table["question_id"].astype(str),
            "video_id": text("video_id"),
            "task_type": text("task_type"),
            "duration": text("duration"),
            "answer": table["answer"].astype(str),
            "pred": table["pred"] if "pred" in table.columns else None,
            "status": table["status"],
            "error": table["error"] if "error" in table.columns else None,
            "correct": correct.fillna(False).astype(bool).astype(object).where(~error_rows, None),
            "source": where,
        },
        columns=list(SAMPLE_COLUMNS),
    )


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
    for model, group in frame.groupby("model"):
        settings = group.drop_duplicates("model_settings")
        if len(settings) > 1:
            a, b = settings.iloc[0], settings.iloc[1]
            raise LogError(
                f"model {model!r} was run with different settings: {a['model_settings']!r} ({a['source']}) vs "
                f"{b['model_settings']!r} ({b['source']}). Label them apart with NAME=DIR, or rerun one."
            )


def _check_question_sets(frame: pd.DataFrame) -> None:
    keys = ["model", "benchmark"]
    per_condition = frame.groupby([*keys, "condition"])["question_id"].nunique()
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


def _read_one(job: tuple[Path, str | None]) -> pd.DataFrame:
    return read_samples(*job)


def _read_all_samples(jobs: list[tuple[Path, str | None]]) -> list[pd.DataFrame]:
    workers = min(len(jobs) // _PARALLEL_FILES, os.cpu_count() or 1, 8)
    if workers < 2 or "fork" not in mp.get_all_start_methods():
        return [read_samples(path, label) for path, label in jobs]
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("fork")) as pool:
        return list(pool.map(_read_one, jobs, chunksize=4))


def load_frame(
    runs: Iterable[RunDir | str | Path] = (),
    predictions: Iterable[tuple[str, str | Path]] = (),
    benchmark: str | None = None,
    on_duplicate: Literal["error", "last"] = "error",
) -> pd.DataFrame:
    """lmms-eval output folders and prediction files -> one checked, de-duplicated tidy frame.

    ``predictions`` are (model, file) pairs (``--predictions MODEL=FILE``); ``benchmark`` names
    their benchmark when the records do not. See the module docstring for the columns.
    """
    jobs = []
    for run in runs:
        run = run if isinstance(run, RunDir) else RunDir.parse(str(run))
        jobs += [(f, run.label) for f in samples_files(run.path)]
    frames = _read_all_samples(jobs)
    for model, path in predictions:
        frames.append(read_predictions(Path(path), model, benchmark))
    if not frames:
        raise LogError("nothing to read: give lmms-eval run folders or --predictions MODEL=FILE")
    frame = pd.concat(frames, ignore_index=True)
    frame = _dedupe(frame, on_duplicate)
    _check_settings(frame)
    _check_question_sets(frame)
    frame["correct"] = frame["correct"].astype("boolean")
    return _none_for_missing(frame).reset_index(drop=True)


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


def normalise_condition(name: str) -> str:
    key = str(name).strip().lower()
    return CONDITION_ALIASES.get(key, key)


def _prediction_table(path: Path) -> pd.DataFrame:
    """The raw records of a JSON array, JSONL or CSV predictions file, with a ``_where`` column."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        table = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        table["_where"] = [f"{path}:{i}" for i in range(2, len(table) + 2)]
        return table
    text = path.read_text()
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
            where.append(f"{path}:{lineno}")
    table = pd.DataFrame.from_records(records)
    table["_where"] = where
    return table


def _letters(predictions: pd.Series, n_options: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(letter or None, ok|unparsed) for answered predictions; bare letters fast, the rest parsed."""
    text = predictions.astype(object).astype(str).str.strip()
    position = np.array([LETTERS.find(t) for t in text.str.upper()], dtype=int)
    bare = text.str.fullmatch(r"[A-Fa-f]").astype(bool) & (position < n_options.to_numpy(dtype=int))
    letter = text.str.upper().where(bare)
    status = pd.Series("ok", index=text.index).where(bare)
    for idx in text.index[~bare]:
        parsed = parse_answer(text[idx], n_options=int(n_options[idx]))
        letter[idx], status[idx] = parsed.letter, parsed.status
    return letter, status


def read_predictions(path: Path, model: str | None = None, benchmark: str | None = None) -> pd.DataFrame:
    """A predictions file from any harness (JSON array, JSONL or CSV) as tidy rows.

    Records need condition, question_id, task_type, ground_truth, prediction; optional correct
    (checked against prediction == ground_truth), error, model, benchmark, video_id/videoID,
    duration. A null prediction, or a record with an error, is an ``error`` row (the pipeline
    failed, not the model); a prediction with no readable letter is ``unparsed`` (scored wrong).
    """
    if not path.is_file():
        raise LogError(f"{path}: no such predictions file")
    raw = _prediction_table(path)
    if raw.empty:
        raise LogError(f"{path}: holds no prediction records")
    missing = [k for k in _PREDICTION_FIELDS if k not in raw.columns]
    if missing:
        raise LogError(f"{path}: missing field(s) {', '.join(missing)} (need {', '.join(_PREDICTION_FIELDS)})")
    raw = raw.astype(object).where(raw.notna(), None)
    for key in ("condition", "question_id", "task_type", "ground_truth"):
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
    n_options = answer.map(lambda a: max(4, LETTERS.find(a) + 1))
    error_text = raw["error"] if "error" in raw.columns else pd.Series(None, index=raw.index, dtype=object)
    failed = raw["prediction"].isna() | error_text.notna()
    letter, status = _letters(raw.loc[~failed, "prediction"], n_options[~failed])
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
    video = raw["video_id"] if "video_id" in raw.columns else pd.Series(None, index=raw.index, dtype=object)
    if "videoID" in raw.columns:
        video = video.where(video.notna(), raw["videoID"])
    duration = raw["duration"] if "duration" in raw.columns else pd.Series("", index=raw.index, dtype=object)
    table = pd.DataFrame(
        {
            "model": raw["model"].astype(str),
            "model_settings": "",
            "benchmark": raw["benchmark"].astype(str),
            "condition": raw["condition"].map(normalise_condition),
            "question_id": raw["question_id"].astype(str),
            "video_id": video.fillna("").astype(str),
            "task_type": raw["task_type"].astype(str),
            "duration": duration.fillna("").astype(str),
            "answer": answer,
            "pred": pred,
            "status": statuses,
            "error": error_text.where(~failed | error_text.notna(), "null prediction").where(failed, None),
            "correct": correct,
            "source": raw["_where"],
        }
    )
    return _none_for_missing(table[list(SAMPLE_COLUMNS)].copy())


def conditions_present(frame: pd.DataFrame, model: str, benchmark: str) -> Sequence[str]:
    sub = frame[(frame["model"] == model) & (frame["benchmark"] == benchmark)]
    return list(dict.fromkeys(sub["condition"]))
