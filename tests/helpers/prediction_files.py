"""Prediction files from "other harnesses", generated with stable seeds, for the report tests."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vdg_tasks.vocabulary.seeding import rng_for


def write_records(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    """JSON array (.json), JSONL (.jsonl) or CSV (.csv, a list value as a JSON array) by suffix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps(list(records)))
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        keys = list(dict.fromkeys(k for r in records for k in r))
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, keys)
            writer.writeheader()
            for r in records:
                writer.writerow({k: json.dumps(v) if isinstance(v, list) else v for k, v in r.items()})
    return path


def five_option_records(
    model: str,
    n_questions: int = 60,
    conditions: Iterable[str] = ("orig", "black"),
    accuracy: dict[str, float] | None = None,
    id_fields: tuple[str, str] = ("q_uid", "video_uid"),
    questions_per_video: int = 3,
) -> list[dict[str, Any]]:
    """EgoSchema-like records: 5 options, keys spread over A-E, answers any of A-E (a wrong answer is another
    letter, E included), the ids under ``id_fields`` (question field, video field). Seeded from the model."""
    accuracy = accuracy or {"orig": 0.7, "black": 0.3}
    q_field, v_field = id_fields
    records = []
    for condition in conditions:
        rng = rng_for("five-option", model, condition)
        for q in range(n_questions):
            answer = "ABCDE"[q % 5]
            right = bool(rng.random() < accuracy.get(condition, 0.5))
            wrong = [x for x in "ABCDE" if x != answer]
            pred = answer if right else str(wrong[int(rng.integers(4))])
            records.append(
                {
                    q_field: f"q{q:03d}",
                    v_field: f"vid{q // questions_per_video:03d}",
                    "condition": condition,
                    "task_type": f"T{q % 2}",
                    "ground_truth": answer,
                    "prediction": pred,
                }
            )
    return records


def letter_counts(records: Iterable[dict[str, Any]], condition: str, field: str = "prediction") -> dict[str, int]:
    """How many records of ``condition`` have each letter in ``field`` (bare letters)."""
    values = [r[field] for r in records if r["condition"] == condition]
    return {x: int(np.sum([v == x for v in values])) for x in "ABCDEF"}
