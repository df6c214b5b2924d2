"""The published per-question predictions in tests/data/awg-videomme, for tests.

One place for their location (inside the repository: see tests/data/awg-videomme/README.md for
provenance and licence), the files per model, the loaded frame and the expected values.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path

import pandas as pd

from postprocess.reading.lmms_eval_logs import load_frame

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "awg-videomme"
FILES = {
    "qwen2vl": [
        "qwen2vl_results.json",
        "qwen2vl_black_results.json",
        "qwen2vl_shuffled_results.json",
        "qwen2vl_singleframe_results.json",
    ],
    "llava": ["llava_results.json", "llava_black_results.json", "llava_shuffled_results.json"],
    "internvl2": ["internvl2_results.json", "internvl2_black_results.json"],
}
#: orig and black only: the first two files of each model.
ORIG_BLACK = {model: files[:2] for model, files in FILES.items()}
#: expected.csv's model labels.
MODEL = {"Qwen": "qwen2vl", "LLaVA": "llava", "IV2": "internvl2"}


def reference_predictions(
    models: tuple[str, ...] = tuple(FILES), files: dict[str, list[str]] = FILES
) -> list[tuple[str, Path]]:
    """(model, file) pairs, as ``--predictions MODEL=FILE`` takes them; ``files``: FILES or ORIG_BLACK."""
    return [(m, REFERENCE / f) for m in models for f in files[m]]


@functools.cache
def _frame(predictions: tuple[tuple[str, Path], ...]) -> pd.DataFrame:
    return load_frame(predictions=list(predictions), benchmark="videomme")


def reference_frame(models: tuple[str, ...] = tuple(FILES), files: dict[str, list[str]] = FILES) -> pd.DataFrame:
    """Those models' predictions as vdg's tidy frame (loaded once per selection; a copy: callers may modify it)."""
    return _frame(tuple(reference_predictions(models, files))).copy()


def expected_rows() -> list[dict[str, str]]:
    with (REFERENCE / "expected.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def expected(table: str, quantity: str) -> tuple[float, float]:
    """(value, tolerance) of one expected.csv row."""
    for row in expected_rows():
        if row["table"] == table and row["quantity"] == quantity:
            return float(row["value"]), float(row["tolerance"] or 0.0005)
    raise KeyError((table, quantity))
