"""The published per-question predictions in shared/reference/awg-videomme, for tests.

One place for their location (shared/ sits beside the checkout, in CI as here), the files per
model, the loaded frame and the expected values.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path

import pandas as pd
import pytest

from postprocess.io import load_frame

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "awg-videomme"
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
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference data not found at {REFERENCE}")


def reference_predictions(models: tuple[str, ...] = tuple(FILES)) -> list[tuple[str, Path]]:
    """(model, file) pairs, as ``--predictions MODEL=FILE`` takes them."""
    return [(m, REFERENCE / f) for m in models for f in FILES[m]]


@functools.lru_cache(maxsize=1)
def _frame() -> pd.DataFrame:
    return load_frame(predictions=reference_predictions(), benchmark="videomme")


def reference_frame() -> pd.DataFrame:
    """The three models' predictions as vdg's tidy frame (a copy: callers may modify it)."""
    return _frame().copy()


def expected_rows() -> list[dict[str, str]]:
    with (REFERENCE / "expected.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def expected(table: str, quantity: str) -> tuple[float, float]:
    """(value, tolerance) of one expected.csv row."""
    for row in expected_rows():
        if row["table"] == table and row["quantity"] == quantity:
            return float(row["value"]), float(row["tolerance"] or 0.0005)
    raise KeyError((table, quantity))
