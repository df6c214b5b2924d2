"""Question-by-question alignment under the missing-answer policies, and its validation."""

import pandas as pd
import pytest

from postprocess.analyses._paired import by_task_type, paired
from postprocess.analyses.base import ReportSettings


def _frame(rows):
    frame = pd.DataFrame(
        [
            {
                "model": "m",
                "benchmark": "b",
                "condition": c,
                "question_id": q,
                "video_id": q[:1],
                "task_type": t,
                "status": s,
                "correct": None if s == "error" else ok,
            }
            for c, q, t, s, ok in rows
        ]
    )
    frame["correct"] = frame["correct"].astype("boolean")
    return frame


ROWS = [
    ("orig", "a1", "T1", "ok", True),
    ("black", "a1", "T1", "ok", False),
    ("orig", "a2", "T1", "error", None),
    ("black", "a2", "T1", "ok", True),
    ("orig", "b1", "T2", "unparsed", False),
    ("black", "b1", "T2", "ok", True),
]


def test_exclude_flags_errors_and_incorrect_scores_them_wrong():
    excl = paired(_frame(ROWS), ["orig", "black"], "exclude").set_index("question_id")
    assert excl["error"].tolist() == [False, True, False]
    assert excl.loc["b1", "unparsed_orig"] and not excl.loc["b1", "correct_orig"]
    incl = paired(_frame(ROWS), ["orig", "black"], "incorrect").set_index("question_id")
    assert not incl["error"].any() and not incl.loc["a2", "correct_orig"] and incl.loc["a2", "correct_black"]


def test_a_condition_missing_for_a_model_is_named():
    with pytest.raises(ValueError, match=r"condition\(s\) single missing for model 'm' \(it has black, orig\)"):
        paired(_frame(ROWS), ["orig", "single"], "exclude")


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="missing policy must be 'exclude' or 'incorrect'"):
        paired(_frame(ROWS), ["orig", "black"], "drop")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="missing policy must be"):
        ReportSettings(missing="drop")  # type: ignore[arg-type]


def test_task_types_then_overall():
    table = paired(_frame(ROWS), ["orig", "black"], "exclude")
    assert [name for name, _ in by_task_type(table)] == ["T1", "T2", "Overall"]


def test_a_question_logged_twice_under_one_condition_is_refused():
    with pytest.raises(ValueError, match="question 'a1' appears twice under 'orig'"):
        paired(_frame([*ROWS, ("orig", "a1", "T1", "ok", False)]), ["orig", "black"], "exclude")


def test_rows_follow_question_id_order_whatever_the_input_order():
    table = paired(_frame(list(reversed(ROWS))), ["orig", "black"], "exclude")
    assert table["question_id"].tolist() == ["a1", "a2", "b1"]
    assert table["correct_orig"].tolist() == [True, False, False]


def test_rows_without_a_condition_and_conditions_not_asked_for_are_left_out():
    rows = [*ROWS, (None, "c1", "T2", "ok", True), ("single", "a1", "T1", "ok", True)]
    table = paired(_frame(rows), ["orig", "black"], "exclude")
    pd.testing.assert_frame_equal(table, paired(_frame(ROWS), ["orig", "black"], "exclude"))
    # a condition-less row beside a real one of its question is no duplicate either
    assert len(paired(_frame([*ROWS, (None, "a1", "T1", "ok", True)]), ["black", "orig"], "exclude")) == 3


def test_a_condition_asked_for_twice_is_refused():
    with pytest.raises(ValueError, match="conditions to pair must be distinct, got orig, orig"):
        paired(_frame(ROWS), ["orig", "orig"], "exclude")
