"""The question_sets table: what the VDG comparison's shared question set drops, counted by hand."""

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact

from postprocess.analyses._paired import question_rule, question_set_digest, shared_questions
from postprocess.analyses.base import ReportSettings
from postprocess.analyses.question_sets import question_sets_table


def _frame() -> pd.DataFrame:
    """Two models, 40 questions. Model b has an error under black on q30-q39; model a answers everything.
    a is right on orig for even questions, and on black for multiples of 3."""
    rows = []
    for i in range(40):
        q = f"q{i:02d}"
        for model in ("a", "b"):
            for condition in ("orig", "black"):
                failed = model == "b" and condition == "black" and i >= 30
                right = (i % 2 == 0) if condition == "orig" else (i % 3 == 0)
                rows.append(
                    {
                        "model": model,
                        "benchmark": "bench",
                        "condition": condition,
                        "question_id": q,
                        "video_id": q,
                        "task_type": "T",
                        "status": "error" if failed else "ok",
                        "correct": None if failed else right,
                    }
                )
    frame = pd.DataFrame(rows)
    frame["correct"] = frame["correct"].astype("boolean")
    return frame


def test_shared_set_drops_another_models_failures_and_compares_them():
    frame = _frame()
    table = question_sets_table(frame, ReportSettings(question_set="shared")).set_index(["model", "condition"])
    a_orig = table.loc[("a", "orig")]
    assert (a_orig["n_questions"], a_orig["n_kept"], a_orig["n_dropped"], a_orig["n_dropped_own"]) == (40, 30, 10, 0)
    # a's orig answers: right on even i; kept i < 30 (15 of 30 right), dropped i >= 30 (5 of 10 right).
    assert a_orig["acc_kept"] == 15 / 30 and a_orig["acc_dropped"] == 5 / 10
    expected_p = fisher_exact([[5, 5], [15, 15]]).pvalue
    assert np.isclose(a_orig["p_fisher"], expected_p)
    b_black = table.loc[("b", "black")]
    assert b_black["n_dropped_own"] == 10 and b_black["n_dropped_answered"] == 0 and np.isnan(b_black["acc_dropped"])
    assert set(table["question_rule"]) == {question_rule(("orig", "black"), "exclude", "shared")}


def test_per_model_set_drops_only_own_failures_and_incorrect_drops_nothing():
    frame = _frame()
    per_model = question_sets_table(frame, ReportSettings(question_set="per-model")).set_index(["model", "condition"])
    assert per_model.loc[("a", "orig"), "n_dropped"] == 0 and per_model.loc[("b", "orig"), "n_dropped"] == 10
    incorrect = question_sets_table(frame, ReportSettings(missing="incorrect"))
    assert (incorrect["n_dropped"] == 0).all() and (incorrect["n_kept"] == 40).all()


def test_shared_questions_and_digest_ignore_labels_and_order():
    frame = _frame()
    kept = shared_questions(frame, "bench", ("orig", "black"), "exclude")
    assert kept == {f"q{i:02d}" for i in range(30)}
    renamed = frame.assign(model=frame["model"].map({"a": "zz", "b": "aa"})).iloc[::-1]
    assert shared_questions(renamed, "bench", ("orig", "black"), "exclude") == kept
    assert question_set_digest(sorted(kept)) == question_set_digest(reversed(sorted(kept)))
    assert question_set_digest(kept) != question_set_digest(kept - {"q00"})


def test_a_question_one_model_never_logged_is_not_shared():
    frame = _frame()
    # b never logged q00 under black: no row at all, not an error row.
    frame = frame[~((frame["model"] == "b") & (frame["condition"] == "black") & (frame["question_id"] == "q00"))]
    kept = shared_questions(frame, "bench", ("orig", "black"), "exclude")
    assert kept == {f"q{i:02d}" for i in range(1, 30)}
    assert shared_questions(frame, "bench", ("orig", "black"), "incorrect") == {f"q{i:02d}" for i in range(40)}
