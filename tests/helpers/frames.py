"""Small tidy frames (the columns postprocess.reading.lmms_eval_logs.load_frame produces) for analysis tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from postprocess.reading.frame import RECORD_TEXT_AS_LOGGED, SAMPLE_COLUMNS

_DEFAULTS: dict[str, Any] = {
    "model_settings": "",
    "duration": "short",
    "answer": "A",
    "error": None,
    "source": "test",
    **dict.fromkeys(RECORD_TEXT_AS_LOGGED, ""),
    "duration_s": float("nan"),
    "frames": pd.NA,
    "judge_score": float("nan"),
    "judge": "",
    "precision": "",
    "export": "",
    "domain": "",
    "sub_category": "",
    "question_set": "",
    "sampling": "",
}


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


def answer_fields(answer: str, pred: str | None, status: str, error: str = "OOM") -> dict[str, Any]:
    """answer, pred, status, error and correct for a given predicted letter: correct when ok and pred == answer."""
    return {
        "answer": answer,
        "pred": pred,
        "status": status,
        "error": error if status == "error" else None,
        "correct": pd.NA if status == "error" else (status == "ok" and pred == answer),
    }


def tidy_row(model: str, condition: str, question_id: str, benchmark: str = "b", **columns: Any) -> dict[str, Any]:
    """One row; video_id is the question id up to its "-" unless given; ``columns`` set the rest."""
    return {
        "model": model,
        "benchmark": benchmark,
        "condition": condition,
        "question_id": question_id,
        "video_id": question_id.split("-")[0],
        **columns,
    }


def tidy_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Rows (missing columns take test defaults) -> a frame with exactly SAMPLE_COLUMNS."""
    frame = pd.DataFrame([{**_DEFAULTS, **row} for row in rows], columns=list(SAMPLE_COLUMNS))
    frame["correct"] = frame["correct"].astype("boolean")
    frame["frames"] = frame["frames"].astype("Int64")
    frame["duration_s"] = frame["duration_s"].astype(float)
    frame["judge_score"] = frame["judge_score"].astype(float)
    return frame


def make_frame(records: list[tuple[str, str, str, str, object]], benchmark: str = "b") -> pd.DataFrame:
    """(model, condition, question_id, task_type, outcome) -> a tidy frame as load_frame builds.

    outcome: True (right), False (wrong), "u" (unparsed, scored wrong) or "e" (error: no answer).
    """
    return tidy_frame(
        tidy_row(
            model,
            condition,
            qid,
            benchmark,
            task_type=task_type,
            **outcome_fields(value, unparsed_pred="zzz", error="CUDA OOM"),
        )
        for model, condition, qid, task_type, value in records
    )


def graded_row(model: str, condition: str, question_id: str, benchmark: str, score: float, **columns: Any) -> dict:
    """A tidy row of a graded answer (scored by its task's own metric): its score, correct at 0.5 or more."""
    return tidy_row(
        model, condition, question_id, benchmark, status="ok", pred=None, answer="4", correct=score >= 0.5,
        score=score, scoring="metric:mra", **columns,
    )  # fmt: skip
