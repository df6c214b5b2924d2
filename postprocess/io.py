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

import csv
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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


def _row(record: dict[str, Any], where: str) -> dict[str, Any]:
    rec = record.get(RECORD_KEY)
    if not isinstance(rec, dict):
        raise LogError(f"{where}: no '{RECORD_KEY}' record; was this written by a vdg task (<benchmark>_vdg_<cond>)?")
    missing = [k for k in ("benchmark", "condition", "question_id", "answer", "status") if k not in rec]
    if missing:
        raise LogError(f"{where}: the '{RECORD_KEY}' record lacks {', '.join(missing)}")
    if rec["status"] not in ("ok", "unparsed", "error"):
        raise LogError(f"{where}: unknown status {rec['status']!r} (expected ok, unparsed or error)")
    return {
        "benchmark": rec["benchmark"],
        "condition": rec["condition"],
        "question_id": str(rec["question_id"]),
        "video_id": str(rec.get("video_id", "")),
        "task_type": str(rec.get("task_type", "")),
        "duration": str(rec.get("duration", "")),
        "answer": rec["answer"],
        "pred": rec.get("pred"),
        "status": rec["status"],
        "error": rec.get("error"),
        "correct": None if rec["status"] == "error" else bool(rec.get("correct")),
        "source": where,
    }


def read_samples(path: Path, label: str | None = None) -> pd.DataFrame:
    """One lmms-eval samples log as tidy rows."""
    config = _results_config(path)
    model, settings = label or model_label(config), model_settings(config)
    rows = []
    with path.open() as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LogError(f"{where}: not valid JSON ({exc.msg})") from None
            rows.append({"model": model, "model_settings": settings, **_row(record, where)})
    return pd.DataFrame(rows, columns=list(SAMPLE_COLUMNS))


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
    for (model, benchmark), group in frame.groupby(["model", "benchmark"]):
        sets = {cond: set(g["question_id"]) for cond, g in group.groupby("condition")}
        union = set().union(*sets.values())
        for cond, ids in sets.items():
            if ids != union:
                missing = sorted(union - ids)
                raise LogError(
                    f"{model} / {benchmark}: condition {cond!r} lacks {len(missing)} of {len(union)} questions "
                    f"the other conditions have (e.g. {', '.join(missing[:3])}); "
                    "was it run with --limit or on another split?"
                )


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
    frames = []
    for run in runs:
        run = run if isinstance(run, RunDir) else RunDir.parse(str(run))
        frames += [read_samples(f, run.label) for f in samples_files(run.path)]
    for model, path in predictions:
        frames.append(read_predictions(Path(path), model, benchmark))
    if not frames:
        raise LogError("nothing to read: give lmms-eval run folders or --predictions MODEL=FILE")
    frame = pd.concat(frames, ignore_index=True)
    frame = _dedupe(frame, on_duplicate)
    _check_settings(frame)
    _check_question_sets(frame)
    frame["correct"] = frame["correct"].astype("boolean")
    return frame.reset_index(drop=True)


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


def _prediction_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(``file:line`` or ``file[#i]``, record) for a JSON array, JSONL or CSV predictions file."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        with path.open(newline="") as f:
            for lineno, rec in enumerate(csv.DictReader(f), 2):
                yield f"{path}:{lineno}", {k: (v if v != "" else None) for k, v in rec.items()}
        return
    text = path.read_text()
    if suffix == ".json" or text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LogError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, list):
            raise LogError(f"{path}: expected a JSON array of prediction records")
        for i, rec in enumerate(data):
            yield f"{path}[#{i}]", rec
        return
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                yield f"{path}:{lineno}", json.loads(line)
            except json.JSONDecodeError as exc:
                raise LogError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None


def _prediction_row(rec: Any, where: str, model: str | None, benchmark: str | None) -> dict[str, Any]:
    if not isinstance(rec, dict):
        raise LogError(f"{where}: a prediction record must be an object")
    missing = [k for k in _PREDICTION_FIELDS if k not in rec]
    if missing:
        raise LogError(f"{where}: missing field(s) {', '.join(missing)} (need {', '.join(_PREDICTION_FIELDS)})")
    model = rec.get("model") or model
    benchmark = rec.get("benchmark") or benchmark
    if not model or not benchmark:
        raise LogError(f"{where}: no model/benchmark: give MODEL=FILE and --benchmark, or fields in the record")
    answer = str(rec["ground_truth"]).strip().upper()
    prediction, error = rec.get("prediction"), rec.get("error")
    if prediction is None or (isinstance(prediction, float) and prediction != prediction) or error:
        # No answer: the pipeline failed (a decode error, an OOM), not the model.
        status, pred, correct = "error", None, None
        error = str(error) if error else "null prediction"
    else:
        parsed = parse_answer(str(prediction), n_options=max(4, LETTERS.index(answer) + 1 if answer in LETTERS else 4))
        status, pred, correct, error = parsed.status, parsed.letter, parsed.letter == answer, None
        claimed = rec.get("correct")
        if claimed is not None and str(claimed).strip().lower() in ("true", "false", "1", "0"):
            if (str(claimed).strip().lower() in ("true", "1")) != correct:
                raise LogError(
                    f"{where}: 'correct' is {claimed!r} but prediction {prediction!r} vs ground truth {answer!r} "
                    f"says {correct}"
                )
    video_id = rec.get("video_id") or rec.get("videoID") or ""
    return {
        "model": model,
        "model_settings": "",
        "benchmark": benchmark,
        "condition": normalise_condition(rec["condition"]),
        "question_id": str(rec["question_id"]),
        "video_id": str(video_id),
        "task_type": str(rec["task_type"]),
        "duration": str(rec.get("duration") or ""),
        "answer": answer,
        "pred": pred,
        "status": status,
        "error": error,
        "correct": correct,
        "source": where,
    }


def read_predictions(path: Path, model: str | None = None, benchmark: str | None = None) -> pd.DataFrame:
    """A predictions file from any harness (JSON array, JSONL or CSV) as tidy rows.

    Records need condition, question_id, task_type, ground_truth, prediction; optional correct
    (checked against prediction == ground_truth), error, model, benchmark, video_id/videoID,
    duration. A null prediction, or a record with an error, is an ``error`` row.
    """
    if not path.is_file():
        raise LogError(f"{path}: no such predictions file")
    rows = [_prediction_row(rec, where, model, benchmark) for where, rec in _prediction_records(path)]
    return pd.DataFrame(rows, columns=list(SAMPLE_COLUMNS))


def conditions_present(frame: pd.DataFrame, model: str, benchmark: str) -> Sequence[str]:
    sub = frame[(frame["model"] == model) & (frame["benchmark"] == benchmark)]
    return list(dict.fromkeys(sub["condition"]))
