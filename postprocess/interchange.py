"""Every per-question result of a report, written for others to read: a long-format ``datasets`` dataset and
Every Eval Ever records.

- ``results_table(frame)``: the tidy frame as the interchange rows (``INTERCHANGE_COLUMNS``), one per (model,
  benchmark, question, condition), in a fixed order, free text redacted.
- ``write_results_dataset(frame, out)``: those rows as parquet files under ``out/data/`` with a dataset card
  (``out/README.md``) naming the files and the columns' types: ``datasets.load_dataset(str(out))`` reads it back,
  and ``datasets.load_dataset(str(out))["train"].push_to_hub(repo)`` publishes it.
- ``write_eee_records(frame, out, ...)``: one Every Eval Ever aggregate (``<uuid>.json``) and its instance-level
  companion (``<uuid>_samples.jsonl``) per (model, benchmark, condition), in the datastore's layout
  ``out/data/<benchmark>/<developer>/<model>/``. ``validate_eee_records(out)`` runs that package's own validator
  on them (the ``interchange`` extra: ``pip install 'vdg[interchange]'``).

Secrets are redacted as everywhere else (``vdg_tasks.vocabulary.untrusted.redact``): the run's settings, the
error messages, the predictions and targets.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from postprocess.reading.files import harness_of
from postprocess.reading.frame import input_files, is_graded
from postprocess.settings import natural_key
from vdg_tasks.vocabulary.record import OPEN_STATUS
from vdg_tasks.vocabulary.untrusted import redact, redact_value

__all__ = [
    "EEE_EXTRA",
    "EEE_SCHEMA_VERSION",
    "INTERCHANGE_COLUMNS",
    "UNKNOWN_HARNESS",
    "EeeExport",
    "results_table",
    "validate_eee_records",
    "write_eee_records",
    "write_results_dataset",
]

#: The interchange rows' columns: name -> (datasets feature type, meaning). ``write_results_dataset`` types them
#: so; the dataset card lists them.
INTERCHANGE_COLUMNS: dict[str, tuple[str, str]] = {
    "model": ("string", "the run's label"),
    "benchmark": ("string", "the benchmark"),
    "question_id": ("string", "the question's id (the join key)"),
    "video_id": ("string", "the video's id"),
    "task_type": ("string", "the question's task type"),
    "condition": ("string", "the condition the video was shown under (orig, black, blind, shuffled, crf28...)"),
    "prediction": ("string", "the parsed letter; for an open answer the reply; null when there is none"),
    "target": ("string", "the ground-truth letter; for an open answer the ground truth it is judged against"),
    "status": ("string", "ok, unparsed (scored wrong), error (no answer) or open (a free-text answer)"),
    "correct": ("bool", "answered right; null for error rows and answers not yet judged"),
    "score": ("float64", "the question's score in [0, 1] (a letter's: correct as 1 / 0); null for error rows and "
                "answers not yet judged"),
    "scoring": ("string", "how score was made: letter, judge, metric:<key>"),
    "n_options": ("int64", "the question's number of options; null when unknown"),
    "error": ("string", "the reason for an error row (redacted); null otherwise"),
    "settings": ("string", "the run's settings as a JSON object (model_settings: model_args and gen_kwargs; "
                 "precision, frames, sampling, export, question_set when stated), secrets redacted"),
}  # fmt: skip

#: The frame columns whose non-empty values ``settings`` carries besides ``model_settings``.
_SETTING_COLUMNS: tuple[str, ...] = ("precision", "frames", "sampling", "export", "question_set")
#: The optional dependency that holds Every Eval Ever's validator.
EEE_EXTRA = "interchange"
#: The Every Eval Ever schema version the records are written in (every-eval-ever 0.3.0's bundled schemas).
EEE_SCHEMA_VERSION = "0.3.0"


def _text(value: Any) -> str | None:
    """A cell as text, None when missing or empty."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value)
    return text if text != "" else None


def _settings(row: Mapping[str, Any]) -> str:
    settings: dict[str, Any] = {"model_settings": _text(row.get("model_settings")) or ""}
    for column in _SETTING_COLUMNS:
        value = row.get(column)
        text = _text(value)
        if text is not None and text != "<NA>":
            settings[column] = int(value) if column == "frames" else text
    return json.dumps(redact_value(settings), sort_keys=True, ensure_ascii=False)


def _letter_score(row: Mapping[str, Any], correct: Any) -> float | None:
    """A letter's score when the frame holds none (a frame built by hand): correct as 1.0 / 0.0."""
    if is_graded(row.get("scoring", "")) or correct is None or correct is pd.NA:
        return None
    return 1.0 if bool(correct) else 0.0


def _is_open(row: Mapping[str, Any]) -> bool:
    return str(row.get("status")) == OPEN_STATUS or (
        _text(row.get("pred")) is None and _text(row.get("response")) is not None
    )


def results_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The interchange rows of a tidy frame: exactly ``INTERCHANGE_COLUMNS``, one row per (model, benchmark,
    question, condition), sorted by model (natural order), benchmark, question id (natural order: ``q2`` before
    ``q10``) and condition.

    ``prediction`` and ``target`` are the parsed letter and the answer letter, or for an open answer (status open,
    or no letter but a reply) the reply and the ground truth; free text is redacted.

    Raises:
        ValueError: the frame lacks a column the rows are made from (named), or holds a key twice.
    """
    needed = ["model", "benchmark", "question_id", "video_id", "task_type", "condition", "answer", "pred", "status"]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"the frame has no {', '.join(missing)} column (a tidy frame from load_frame/load_inputs)")
    key = ["model", "benchmark", "question_id", "condition"]
    dup = frame.duplicated(key, keep=False)
    if dup.any():
        first = frame.loc[dup, key].iloc[0].tolist()
        raise ValueError(f"the frame holds (model, benchmark, question_id, condition) {first} more than once")
    rows = []
    for row in frame.to_dict("records"):
        is_open = _is_open(row)
        correct = row.get("correct")
        score = row.get("score")
        n_options = row.get("n_options")
        rows.append(
            {
                "model": str(row["model"]),
                "benchmark": str(row["benchmark"]),
                "question_id": str(row["question_id"]),
                "video_id": _text(row["video_id"]) or "",
                "task_type": _text(row["task_type"]) or "",
                "condition": str(row["condition"]),
                "prediction": redact(_text(row.get("response") if is_open else row["pred"])),
                "target": redact(_text(row.get("truth") if is_open else row["answer"])),
                "status": str(row["status"]),
                "correct": None if correct is None or correct is pd.NA else bool(correct),
                "score": float(score) if _text(score) is not None else _letter_score(row, correct),
                "scoring": _text(row.get("scoring")) or "",
                "n_options": None if _text(n_options) in (None, "<NA>") else int(n_options),
                "error": redact(_text(row.get("error"))) if str(row["status"]) == "error" else None,
                "settings": _settings(row),
            }
        )
    table = pd.DataFrame(rows, columns=list(INTERCHANGE_COLUMNS))
    table = table.astype({"correct": "boolean", "score": "Float64", "n_options": "Int64"})
    if not len(table):
        return table
    table = table.sort_values("condition", kind="mergesort")
    table = table.sort_values("question_id", kind="mergesort", key=lambda c: c.map(natural_key))
    table = table.sort_values("benchmark", kind="mergesort")
    table = table.sort_values("model", kind="mergesort", key=lambda c: c.map(natural_key)).reset_index(drop=True)
    for name, (kind, _) in INTERCHANGE_COLUMNS.items():  # a missing text is None, never NaN
        if kind == "string":
            table[name] = table[name].astype(object).where(table[name].notna(), None)
    return table


def _features() -> Any:
    from datasets import Features, Value  # datasets and pyarrow: only the export writes with them

    return Features({name: Value(kind) for name, (kind, _) in INTERCHANGE_COLUMNS.items()})


def _card(table: pd.DataFrame, pretty_name: str) -> str:
    features = "\n".join(f"  - name: {name}\n    dtype: {kind}" for name, (kind, _) in INTERCHANGE_COLUMNS.items())
    columns = "\n".join(f"| `{name}` | {kind} | {meaning} |" for name, (kind, meaning) in INTERCHANGE_COLUMNS.items())
    models = ", ".join(sorted(table["model"].unique(), key=natural_key)) or "none"
    benchmarks = ", ".join(sorted(table["benchmark"].unique())) or "none"
    conditions = ", ".join(sorted(table["condition"].unique())) or "none"
    return f"""---
pretty_name: {json.dumps(pretty_name)}
tags:
- video
- evaluation
- vdg
dataset_info:
  features:
{features}
---

# {pretty_name}

Per-question results of video-LLM benchmarks under perturbed videos, written by `vdg` (one row per model,
benchmark, question and condition). The VDG of a question is `correct` under `orig` minus `correct` under
`black`: how much its answer needed the video.

- models: {models}
- benchmarks: {benchmarks}
- conditions: {conditions}
- rows: {len(table)}

| column | type | meaning |
| --- | --- | --- |
{columns}

Load it with `datasets.load_dataset("<this folder or repo>")["train"]`. Secrets in the run settings are redacted.
"""


def write_results_dataset(frame: pd.DataFrame, out: Path, pretty_name: str = "vdg per-question results") -> Path:
    """Write the interchange rows of ``frame`` (``results_table``) as a ``datasets`` dataset folder and return it.

    ``out/data/train-00000-of-00001.parquet`` holds the rows, typed as ``INTERCHANGE_COLUMNS`` says (string,
    bool, float64, int64; null where a value is missing), in ``results_table``'s order; ``out/README.md`` is the
    dataset card: its YAML header lists the features (the parquet file carries them too), so
    ``datasets.load_dataset(str(out))["train"]`` reads back the same rows and types, and ``push_to_hub`` publishes
    the folder as it is. Files vdg wrote there before are replaced; nothing else in ``out`` is touched.

    The card has no ``configs:`` block: the file's name (``data/train-...``) makes it the ``train`` split by
    ``datasets``' own discovery. With ``configs:``, ``datasets`` (5.x) keys its cache on the folder's name and the
    patterns alone, not on the files, so a second export in another folder of the same name (every export's is
    ``dataset``) loaded from the first's cached rows.

    Raises:
        ValueError: as ``results_table``; ``out`` is a file.
    """
    from datasets import Dataset  # datasets and pyarrow: only the export writes with them

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: not a folder (the dataset is written as a folder of parquet files and a card)")
    table = results_table(frame)
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    for old in data.glob("train-*.parquet"):
        old.unlink()
    dataset = Dataset.from_pandas(table, features=_features(), preserve_index=False)
    dataset.to_parquet(str(data / "train-00000-of-00001.parquet"))
    (out / "README.md").write_text(_card(table, pretty_name), encoding="utf-8")
    return out


# ------------------------------------------------------------------------------------------ Every Eval Ever

_PRETRAINED = re.compile(r"(?:^|[,;])pretrained=([^,;]+)")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_UNSAFE = re.compile(r'[<>:"\\|?*\x00-\x1f/]')
#: Windows device names, which no datastore folder may take (every-eval-ever's validator refuses them).
_RESERVED_NAMES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


@dataclass(frozen=True)
class EeeExport:
    """What ``write_eee_records`` wrote: ``aggregates`` and ``samples`` (paths, in the same order, one pair per
    (model, benchmark, condition)) and ``skipped`` (``model / benchmark / condition: reason`` for those with no
    scored answer, which the schema cannot hold)."""

    aggregates: list[Path] = field(default_factory=list)
    samples: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _stable_uuid(*parts: str) -> str:
    """A version-4-shaped UUID derived from ``parts``: the same export writes the same file names."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _model_id(label: str, settings: str, model_ids: Mapping[str, str]) -> str:
    """The model's id in the hub's ``org/name`` form: the map's, else the ``pretrained=`` of its settings."""
    if label in model_ids:
        given = str(model_ids[label]).strip()
        if not _HUB_ID.match(given):
            raise ValueError(f"model id {given!r} given for {label!r} is not of the form org/name")
        return given
    match = _PRETRAINED.search(settings or "")
    checkpoint = match.group(1).strip().rstrip("/") if match else ""
    if _HUB_ID.match(checkpoint):
        return checkpoint
    raise ValueError(
        f"model {label!r}: no hub id (org/name) for its Every Eval Ever records: its settings name no pretrained="
        "org/name checkpoint; give one in model_ids (LABEL=org/name)"
    )


def _component(value: str, what: str) -> str:
    """``value`` when it can name one folder of the datastore (as every-eval-ever's validator demands: not empty,
    ``.``, ``..``, ``data``, ``unknown`` or a Windows device name, no path or unportable character, no trailing dot
    or space), else ValueError."""
    if (
        not value
        or value in {".", "..", "data"}
        or value.lower() == "unknown"
        or _UNSAFE.search(value)
        or value.endswith((".", " "))
        or value.split(".", 1)[0].upper() in _RESERVED_NAMES
    ):
        raise ValueError(f"{what} {value!r} cannot name a datastore folder")
    return value


def _datastore_ids(models: list[str], settings_of: Mapping[str, str], ids: Mapping[str, str]) -> dict[str, str]:
    """vdg label -> hub id of every model, each id's developer and model name checked as datastore folders, before
    anything is written.

    Raises:
        ValueError: a model without a hub id, or one whose developer or name cannot name a folder (both named).
    """
    out = {}
    for model in models:
        model_id = _model_id(model, settings_of.get(model, ""), ids)
        developer, _, name = model_id.partition("/")
        try:
            _component(developer, "its developer")
            _component(name, "its model name")
        except ValueError as exc:
            raise ValueError(
                f"model {model!r}: hub id {model_id!r}: {exc} (data/<benchmark>/<developer>/<model>/); give another "
                "in model_ids (LABEL=org/name)"
            ) from None
        out[model] = model_id
    return out


#: The harness of a model read from a prediction file of another harness (which names none) or from a frame that
#: records no file.
UNKNOWN_HARNESS = "unknown"


def _harnesses(frame: pd.DataFrame) -> dict[str, str]:
    """vdg label -> the harness its rows came from, by the files the frame records (``input_files``, each kind's
    ``harness_of``): lmms-eval for its samples logs, VLMEvalKit for its files, several joined by ", "; a model read
    from prediction files of another harness only, or from a frame that records no file, is absent
    (``UNKNOWN_HARNESS``)."""
    found: dict[str, set[str]] = {}
    for source in input_files(frame):
        harness = harness_of(str(source.get("kind", "")))
        if not harness:
            continue
        for model in str(source.get("model", "")).split(","):
            found.setdefault(model, set()).add(harness)
    return {model: ", ".join(sorted(names)) for model, names in found.items()}


def _value(value: Any) -> Any:
    """A cell as JSON takes it: None for a missing value."""
    return None if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)) else value


def _instance(row: Mapping[str, Any], evaluation_id: str, model_id: str, name: str, result_id: str) -> dict:
    row = {k: _value(v) for k, v in row.items()}
    scored = row["score"] is not None
    prediction = row["prediction"]
    record: dict[str, Any] = {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": model_id,
        "evaluation_name": name,
        "evaluation_result_id": result_id,
        "sample_id": row["question_id"],
        "interaction_type": "single_turn",
        "input": {"raw": "", "reference": [row["target"]] if row["target"] is not None else []},
        "output": {"raw": [prediction] if prediction is not None else []},
        "answer_attribution": (
            [
                {
                    "turn_idx": 0,
                    "source": "output.raw",
                    "extracted_value": prediction,
                    "extraction_method": row["scoring"] or "letter",
                    "is_terminal": True,
                }
            ]
            if prediction is not None
            else []
        ),
        "evaluation": {"score": float(row["score"]) if scored else 0.0, "is_correct": bool(row["correct"] or False)},
    }
    record.update(  # a keyword: the record's field shares its name with a condition, which postprocess never spells
        metadata={
            "benchmark": row["benchmark"],
            "condition": row["condition"],
            "video_id": row["video_id"],
            "task_type": row["task_type"],
            "status": row["status"],
            "scoring": row["scoring"],
            "scored": scored,
            "n_options": None if row["n_options"] is None else int(row["n_options"]),
        }
    )
    if row["status"] == "error":
        record["error"] = row["error"] or "no answer"
    elif not scored:
        record["error"] = "not scored (an open answer not yet judged)"
    return record


def write_eee_records(
    frame: pd.DataFrame,
    out: Path,
    *,
    model_ids: Mapping[str, str] | None = None,
    organization: str = "vdg",
    retrieved_timestamp: str,
    vdg_version: str = "",
) -> EeeExport:
    """Write Every Eval Ever records of ``frame``: per (model, benchmark, condition) an aggregate
    ``EvaluationLog`` and its instance-level companion, under ``out/data/<benchmark>/<developer>/<model>/``.

    The aggregate names the evaluation ``<benchmark>_vdg_<condition>`` (the task's name) and holds one result,
    ``accuracy``: the mean score over the scored questions (errors and unjudged answers left out and counted in
    ``score_details.details``), score type continuous in [0, 1]. ``source_data`` is ``other`` with the benchmark
    and condition; ``model_info.additional_details`` carries the run's settings (redacted);
    ``eval_library.additional_details.harness`` names the harness the model's rows came from, as the frame records
    its files (``lmms-eval`` for samples logs, ``VLMEvalKit`` for its files, several joined by ", "; ``unknown``
    for a prediction file, which names none, or a frame that records no file). Its companion holds
    one single-turn record per question of the condition: ``sample_id`` the question id, ``input.reference`` the
    target, ``output.raw`` the prediction, ``evaluation`` the score and correctness (an error row scores 0, not
    correct, and carries ``error``), ``metadata`` the video id, task type, condition, status and scoring. File
    names are version-4-shaped UUIDs derived from the model, benchmark and condition, so a rerun writes the same
    names.

    Args:
        frame: the tidy frame (``load_inputs``).
        out: the datastore root the ``data/`` folder goes in.
        model_ids: vdg label -> hub id ``org/name`` (default: the ``pretrained=`` of the run's settings).
        organization: ``source_metadata.source_organization_name``: who ran the evaluation.
        retrieved_timestamp: the records' ``retrieved_timestamp`` (Unix epoch seconds as text).
        vdg_version: ``eval_library.version`` (vdg's version).

    Raises:
        ValueError: a model without a hub id, or whose hub id's developer or name cannot name a datastore folder
            (``..``, ``data``, ``unknown``, ...: the label and the id named), a benchmark that cannot name a
            folder, or as ``results_table``; all checked before anything is written.
    """
    table = results_table(frame)
    ids = {str(k): str(v) for k, v in (model_ids or {}).items()}
    settings_of = {
        str(m): _text(s) or "" for m, s in frame.drop_duplicates("model")[["model", "model_settings"]].values.tolist()
    } if "model_settings" in frame.columns else {}  # fmt: skip
    model_ids_of = _datastore_ids(list(table["model"].unique()), settings_of, ids)
    for benchmark in table["benchmark"].unique():
        _component(benchmark, "benchmark")
    harness_of = _harnesses(frame)
    export = EeeExport()
    for (model, benchmark, condition), group in table.groupby(
        ["model", "benchmark", "condition"], sort=False, dropna=False
    ):
        model_id = model_ids_of[model]
        developer, _, name = model_id.partition("/")
        folder = Path("data") / benchmark / developer / name
        scored = group[group["score"].notna()]
        if not len(scored):
            export.skipped.append(f"{model} / {benchmark} / {condition}: no scored answer")
            continue
        task = f"{benchmark}_vdg_{condition}"
        stem = _stable_uuid(model, benchmark, condition)
        evaluation_id = f"{task}/{model_id}/{retrieved_timestamp}"
        result_id = f"{task}/accuracy"
        lines = [
            json.dumps(_instance(r, evaluation_id, model_id, task, result_id), ensure_ascii=False)
            for r in group.to_dict("records")
        ]
        body = "\n".join(lines) + "\n"
        samples_path = (folder / f"{stem}_samples.jsonl").as_posix()
        first = group.iloc[0]
        aggregate = {
            "schema_version": EEE_SCHEMA_VERSION,
            "evaluation_id": evaluation_id,
            "retrieved_timestamp": retrieved_timestamp,
            "source_metadata": {
                "source_name": "vdg",
                "source_type": "evaluation_run",
                "source_organization_name": organization,
                "evaluator_relationship": "third_party",
            },
            "eval_library": {
                "name": "vdg",
                "version": vdg_version or "unknown",
                "additional_details": {"harness": harness_of.get(model, UNKNOWN_HARNESS)},
            },
            "model_info": {
                "name": model,
                "id": model_id,
                "developer": developer,
                "additional_details": {
                    "settings": first["settings"],
                    "deployment_type": "self_deployed",
                    "model_availability": "unknown",
                },
            },
            "evaluation_results": [
                {
                    "evaluation_result_id": result_id,
                    "evaluation_name": task,
                    "source_data": {
                        "dataset_name": benchmark,
                        "source_type": "other",
                        "additional_details": {"benchmark": benchmark, "condition": condition},
                    },
                    "metric_config": {
                        "evaluation_description": f"accuracy on {benchmark} under the {condition} condition "
                        "(mean score over the answered questions; errors and unjudged answers left out)",
                        "metric_id": "accuracy",
                        "metric_name": "accuracy",
                        "lower_is_better": False,
                        "score_type": "continuous",
                        "min_score": 0.0,
                        "max_score": 1.0,
                    },
                    "score_details": {
                        "score": float(scored["score"].mean()),
                        "details": {
                            "n_questions": str(len(group)),
                            "n_scored": str(len(scored)),
                            "n_correct": str(int(scored["correct"].fillna(False).astype(bool).sum())),
                            "n_error": str(int((group["status"] == "error").sum())),
                        },
                        "uncertainty": {"num_samples": len(scored)},
                    },
                }
            ],
            "detailed_evaluation_results": {
                "format": "jsonl",
                "file_path": samples_path,
                "hash_algorithm": "sha256",
                "checksum": hashlib.sha256(body.encode("utf-8")).hexdigest(),
                "total_rows": len(lines),
            },
        }
        target = Path(out) / folder
        target.mkdir(parents=True, exist_ok=True)
        (target / f"{stem}_samples.jsonl").write_text(body, encoding="utf-8")
        (target / f"{stem}.json").write_text(json.dumps(aggregate, indent=2, ensure_ascii=False) + "\n", "utf-8")
        export.aggregates.append(target / f"{stem}.json")
        export.samples.append(target / f"{stem}_samples.jsonl")
    return export


def _validator() -> Any:
    try:
        from every_eval_ever import validator  # the optional `interchange` extra
    except ImportError as exc:
        raise ImportError(
            f"validating Every Eval Ever records needs the every-eval-ever package: pip install 'vdg[{EEE_EXTRA}]' "
            f"({exc})"
        ) from exc
    return validator


def validate_eee_records(out: Path) -> list[str]:
    """Every Eval Ever's own validator (``every_eval_ever.validator.validate_file``, with its repository checks:
    datastore path, companion file, score metadata, model deployment) run on every record under ``out/data``;
    returns one line per error and warning (empty when all are valid).

    Raises:
        ImportError: every-eval-ever is not installed (the ``interchange`` extra).
        ValueError: ``out/data`` holds no record.
    """
    validator = _validator()
    root = Path(out)
    files = sorted([*root.glob("data/*/*/*/*.json"), *root.glob("data/*/*/*/*_samples.jsonl")])
    if not files:
        raise ValueError(f"{root}: no Every Eval Ever records under data/<benchmark>/<developer>/<model>/")
    present = {f.relative_to(root).as_posix() for f in files}
    problems = []
    for path in files:
        repo_path = path.relative_to(root).as_posix()
        report = validator.validate_file(
            path,
            repo_path=repo_path,
            available_files=present,
            read_repo_file=lambda p: (root / p).read_text(encoding="utf-8"),
            run_semantic_checks=True,
        )
        problems += [f"{repo_path}: error: {validator.format_error(e)}" for e in report.errors]
        problems += [f"{repo_path}: warning: {validator.format_warning(w)}" for w in report.warnings]
    return problems
