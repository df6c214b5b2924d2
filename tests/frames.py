"""Small tidy frames (the columns postprocess.io.load_frame produces) for analysis tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from postprocess.io import SAMPLE_COLUMNS

_DEFAULTS: dict[str, Any] = {"model_settings": "", "duration": "short", "answer": "A", "error": None, "source": "test"}


def outcome_fields(
    value: object, answer: str = "A", unparsed_pred: str | None = None, error: str = "OOM"
) -> dict[str, Any]:
    """status, pred, correct and error for an outcome: True (right), False (wrong), "u" (unparsed), "e" (error)."""
    status = {"u": "unparsed", "e": "error"}.get(value, "ok") if isinstance(value, str) else "ok"
    if status == "error":
        return {"status": status, "pred": None, "correct": pd.NA, "error": error}
    if status == "unparsed":
        return {"status": status, "pred": unparsed_pred, "correct": False, "error": None}
    wrong = "B" if answer != "B" else "A"
    return {"status": status, "pred": answer if value is True else wrong, "correct": value is True, "error": None}


def tidy_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Rows (missing columns take test defaults) -> a frame with exactly SAMPLE_COLUMNS."""
    frame = pd.DataFrame([{**_DEFAULTS, **row} for row in rows], columns=list(SAMPLE_COLUMNS))
    frame["correct"] = frame["correct"].astype("boolean")
    return frame
