"""The probes table: each probe against orig per question, its measures counted by hand here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import ReportSettings
from postprocess.analyses.probes import COLUMNS, probes_table
from postprocess.stats import wilson
from tests.helpers.frames import answer_fields, tidy_frame, tidy_row
from vdg_tasks.perturb.text import shuffle_order

N = 40
LETTERS = "ABCD"


def _question(i: int) -> tuple[str, str, list[int]]:
    """(question id, answer letter, the order options_shuffled asks its four options in)."""
    question_id, answer = f"v{i:02d}-1", LETTERS[i % 4]
    return question_id, answer, shuffle_order(question_id, 4, LETTERS.index(answer))


def _frame(pick_orig, pick_shuffled, model: str = "m") -> pd.DataFrame:
    """Each question under orig and options_shuffled; ``pick_*``: (i, answer, order) -> the letter chosen."""
    rows = []
    for i in range(N):
        question_id, answer, order = _question(i)
        moved_answer = LETTERS[order.index(LETTERS.index(answer))]
        shuffled_from = "".join(LETTERS[k] for k in order)
        rows.append(tidy_row(model, "orig", question_id, task_type=f"T{i % 2}", n_options=4,
                             **answer_fields(answer, pick_orig(i, answer, order), "ok")))  # fmt: skip
        rows.append(tidy_row(model, "options_shuffled", question_id, task_type=f"T{i % 2}", n_options=4,
                             shuffled_from=shuffled_from,
                             **answer_fields(moved_answer, pick_shuffled(i, answer, order), "ok")))  # fmt: skip
    return tidy_frame(rows)


def _overall(table: pd.DataFrame, probe: str) -> pd.Series:
    return table[(table.task_type == "Overall") & (table.probe == probe)].iloc[0]


def _content(i, answer, order):  # the same option text as under orig, wherever the shuffle put it
    return LETTERS[order.index(LETTERS.index(_orig_pick(i, answer)))]


def _orig_pick(i, answer, order=None):  # right on two questions in three, else the option after the answer
    return answer if i % 3 else LETTERS[(LETTERS.index(answer) + 1) % 4]


def test_a_model_following_the_content_has_a_content_share_of_one_and_agrees_everywhere():
    table = probes_table(_frame(_orig_pick, _content), ReportSettings(min_stratum=10))
    assert list(table.columns) == list(COLUMNS)
    row = _overall(table, "options_shuffled")
    assert (row.n, row.measure, row.value, row.agreement) == (N, "content_share", 1.0, 1.0)
    # every question counts: its orig choice moved unless the shuffle left that option at its letter
    moved = sum(
        _question(i)[2][LETTERS.index(_orig_pick(i, _question(i)[1]))] != LETTERS.index(_orig_pick(i, _question(i)[1]))
        for i in range(N)
    )
    assert row.n_measure == moved and 0 < moved <= N
    low, high = wilson(moved, moved).low, wilson(moved, moved).high
    assert (row.value_low, row.value_high) == pytest.approx((low, high))
    assert row.acc_probe == row.acc_orig == pytest.approx(np.mean([bool(i % 3) for i in range(N)]))
    assert row["diff"] == 0.0 and row.reading.startswith("follows the option's content on 100%")


def test_a_model_answering_by_position_has_a_content_share_of_zero():
    table = probes_table(_frame(lambda i, a, o: "A", lambda i, a, o: "A"), ReportSettings(min_stratum=10))
    row = _overall(table, "options_shuffled")
    expected_n = sum(_question(i)[2][0] != 0 for i in range(N))  # the option asked as A moved
    assert (row.value, row.n_measure) == (0.0, expected_n)
    agree = np.mean([_question(i)[2][0] == 0 for i in range(N)])  # A is the same text only where it stayed
    assert row.agreement == pytest.approx(agree)
    # orig right where the answer is A; shuffled, A never holds the answer's text when the answer was A
    acc_orig = np.mean([_question(i)[1] == "A" for i in range(N)])
    acc_probe = np.mean([LETTERS[_question(i)[2].index(LETTERS.index(_question(i)[1]))] == "A" for i in range(N)])
    assert (row.acc_orig, row.acc_probe) == pytest.approx((acc_orig, acc_probe))
    assert row["diff"] == pytest.approx(acc_probe - acc_orig)


def test_none_option_no_question_and_video_only_are_read_against_orig():
    rows = []
    for i in range(N):
        question_id, answer, _ = _question(i)
        picks = {"orig": answer, "none_option": answer if i % 4 == 0 else "A",
                 "no_question": answer if i % 2 else "D", "video_only": "B"}  # fmt: skip
        for condition, pick in picks.items():
            rows.append(tidy_row("m", condition, question_id, task_type="T", n_options=4,
                                 **answer_fields(answer, pick, "ok")))  # fmt: skip
    table = probes_table(tidy_frame(rows), ReportSettings(min_stratum=10))
    answers = [_question(i)[1] for i in range(N)]
    none = _overall(table, "none_option")
    k = sum(1 for i, a in enumerate(answers) if (a if i % 4 == 0 else "A") == a)
    assert (none.measure, none.value, none.n_measure) == ("none_rate", k / N, N)
    assert (none.value_low, none.value_high) == pytest.approx((wilson(k, N).low, wilson(k, N).high))
    asked = _overall(table, "no_question")
    acc_no_question = np.mean([(a if i % 2 else "D") == a for i, a in enumerate(answers)])
    assert asked.value == pytest.approx(1.0 - acc_no_question) and asked.value == pytest.approx(-asked["diff"])
    assert (asked.value_low, asked.value_high) == pytest.approx((-asked.ci_high, -asked.ci_low))
    guess = _overall(table, "video_only")
    assert guess.value == pytest.approx(np.mean([a == "B" for a in answers]) - 0.25)
    assert guess.value_low < guess.value < guess.value_high and guess.n_unparsed == 0
    few = probes_table(tidy_frame(rows), ReportSettings(min_stratum=N + 1))  # too few questions: no CI of any kind
    assert few[["ci_low", "value_low", "value_high"]].isna().all().all()
    assert guess.agreement == pytest.approx(np.mean([a == "B" for a in answers]))  # orig picks the answer
