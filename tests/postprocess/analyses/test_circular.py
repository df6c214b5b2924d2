"""The circular table: single-pass accuracy (orig), circular accuracy (right under orig and every rotation of the
options) and their paired difference, every number counted by hand here.

The simulated models answer as the rotations ask: rotation k shows a question's option i at (i + k) mod N, its
answer moved with it. A model that follows content chooses the same option (its text) under every rotation; the
position follower always answers "A"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from postprocess.analyses import ReportSettings
from postprocess.analyses.circular import ANALYSES, COLUMNS, circular_table
from postprocess.stats import paired_difference_ci
from tests.helpers.frames import answer_fields, tidy_frame, tidy_row
from vdg_tasks.vocabulary.conditions import circular_rotations

LETTERS = "ABCDEFGH"
#: Rotation k -> its condition (k = 0: orig), as the registry declares them.
ARMS = {0: "orig", **{k: name for name, k in circular_rotations().items()}}
SETTINGS = ReportSettings(min_stratum=5)


def _frame(questions: list[tuple[int, int, str]], pick, model: str = "m", ks=None) -> pd.DataFrame:
    """``questions``: (N, original answer index, task type) per question; under each rotation k of ``ks`` (every
    declared one and orig by default) ``pick(i, n, answer, k)`` gives the letter chosen, or "e" for an error row."""
    rows = []
    for i, (n, answer, task_type) in enumerate(questions):
        for k in ARMS if ks is None else ks:
            key = LETTERS[(answer + k) % n]
            chosen = pick(i, n, answer, k)
            fields = answer_fields(key, None, "error") if chosen == "e" else answer_fields(key, chosen, "ok")
            rows.append(tidy_row(model, ARMS[k], f"v{i:02d}-1", task_type=task_type, n_options=n, **fields))
    return tidy_frame(rows)


def content(known: set[int]):
    """Follows content: the right option's text on the questions ``known``, else the text of the option after it."""

    def pick(i, n, answer, k):
        chosen = answer if i in known else (answer + 1) % n
        return LETTERS[(chosen + k) % n]

    return pick


def always_a(i, n, answer, k):
    return "A"


def _questions(count: int = 24) -> list[tuple[int, int, str]]:
    """Options 3, 4 and 5 in turn, the answer at every position in turn, two task types."""
    return [(3 + i % 3, (i // 3) % (3 + i % 3), f"T{i % 2}") for i in range(count)]


def _row(table: pd.DataFrame, task_type: str = "Overall", model: str = "m") -> pd.Series:
    rows = table[(table.model == model) & (table.task_type == task_type)]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def test_a_content_follower_is_as_right_under_every_rotation_as_once():
    questions = _questions()
    known = {i for i in range(len(questions)) if i % 4 != 1}
    table = circular_table(_frame(questions, content(known)), SETTINGS)
    assert list(table.columns) == list(COLUMNS)
    assert list(table.task_type) == ["T0", "T1", "Overall"]
    overall = _row(table)
    assert overall.n == 24 and overall.n_options == "3-5" and overall.rotations == "2-4"
    assert overall.acc_single == overall.acc_circular == len(known) / 24 == 18 / 24
    assert overall["drop"] == 0.0 and overall.acc_rotated == 18 / 24
    assert overall.n_error == overall.n_missing == overall.n_unparsed == 0
    for task_type in ("T0", "T1"):
        row = _row(table, task_type)
        mine = [i for i in range(24) if f"T{i % 2}" == task_type]
        assert row.n == 12 and row.acc_circular == row.acc_single == len(known & set(mine)) / 12


def test_always_a_is_never_right_under_every_rotation_and_right_once_as_often_as_the_answer_is_a():
    questions = _questions()
    keyed_a = sum(answer == 0 for _, answer, _ in questions)
    assert keyed_a == 3 + 2 + 2  # by hand: answer index (i // 3) % N is 0 for i // 3 in {0, 3, 6}, {0, 4}, {0, 5}
    overall = _row(circular_table(_frame(questions, always_a), SETTINGS))
    assert overall.n == 24 and overall.acc_single == keyed_a / 24
    assert overall.acc_circular == 0.0 and overall["drop"] == keyed_a / 24
    # each question is keyed A under exactly one of its N rotations (orig included)
    rotated = np.mean([(1 - (answer == 0)) / (n - 1) for n, answer, _ in questions])
    assert_allclose(overall.acc_rotated, rotated, atol=1e-12)


def test_the_drop_and_its_ci_are_the_paired_differences_of_single_and_circular():
    """10 four-option questions: right under orig on 8 (0-7); under rotation 2 wrong on 5, 6 and 7; circular 5."""
    questions = [(4, i % 4, "T") for i in range(10)]

    def pick(i, n, answer, k):
        right = i < 8 and not (k == 2 and i in (5, 6, 7))
        return LETTERS[(answer + k + (0 if right else 1)) % n]

    row = _row(circular_table(_frame(questions, pick), SETTINGS))
    assert (row.n, row.acc_single, row.acc_circular) == (10, 0.8, 0.5)
    assert_allclose(row["drop"], 0.3, atol=1e-12)
    want = paired_difference_ci(np.array([0] * 5 + [1] * 3 + [0] * 2, dtype=float), level=SETTINGS.ci_level)
    assert_allclose([row.ci_low, row.ci_high], [want.low, want.high], atol=1e-12)
    assert row.ci_method == want.method and row.resample_unit == "question"
    assert_allclose(row.acc_rotated, (8 + 8 + 5) / 30, atol=1e-12)
    assert_allclose([row.chance_single, row.chance_circular], [1 / 4, 4.0**-4], atol=1e-15)
    assert "0.500" in row.reading and "0.800" in row.reading


def test_a_rotation_at_or_beyond_a_questions_option_count_is_a_repeat_left_out():
    """Three-option questions: rotations 3.. repeat orig and rotations 1-2; answering them wrong changes nothing."""
    questions = [(3, i % 3, "T") for i in range(9)]

    def pick(i, n, answer, k):
        return "H" if k >= n else LETTERS[(answer + k) % n]

    row = _row(circular_table(_frame(questions, pick), SETTINGS))
    assert (row.n, row.acc_single, row.acc_circular, row.rotations) == (9, 1.0, 1.0, "2")


def test_errors_and_missing_rotations_leave_questions_out_and_say_so():
    questions = [(4, i % 4, "T") for i in range(8)]

    def pick(i, n, answer, k):
        return "e" if (i == 0 and k == 1) else LETTERS[(answer + k) % n]

    frame = _frame(questions, pick)
    frame = frame[~((frame.question_id == "v01-1") & (frame.condition == ARMS[3]))]  # not logged
    row = _row(circular_table(frame, SETTINGS))
    assert (row.n, row.n_error, row.n_missing, row.acc_circular) == (6, 1, 1, 1.0)
    # incorrect: the error counts as a wrong answer under its rotation, and the question is kept
    row = _row(circular_table(frame, ReportSettings(min_stratum=5, missing="incorrect")))
    assert (row.n, row.n_error, row.n_missing) == (7, 0, 1)
    assert_allclose(row.acc_circular, 6 / 7, atol=1e-12)
    assert row.question_rule == "every question; errors scored wrong"


def test_a_benchmark_asked_under_too_few_rotations_counts_its_questions_missing():
    """Five-option questions asked under rotations 1-3 only (the tag circular4): none is circular-evaluated."""
    questions = [(5, i % 5, "T") for i in range(5)] + [(4, i % 4, "T") for i in range(4)]
    frame = _frame(questions, lambda i, n, a, k: LETTERS[(a + k) % n], ks=[0, 1, 2, 3])
    row = _row(circular_table(frame, SETTINGS))
    assert (row.n, row.n_missing, row.n_options, row.too_small) == (4, 5, "4", True)
    assert np.isnan(row.ci_low) and row.ci_method == ""


def test_models_are_read_apart_and_the_table_needs_orig_and_a_rotation():
    questions = _questions(12)
    frame = pd.concat([_frame(questions, always_a, "a"), _frame(questions, content(set(range(12))), "c")])
    table = circular_table(frame, SETTINGS)
    assert _row(table, model="a").acc_circular == 0.0 and _row(table, model="c").acc_circular == 1.0
    (analysis,) = ANALYSES
    assert analysis.needs(frozenset({"orig", ARMS[1]})) is None
    assert analysis.needs(frozenset({ARMS[1]})) == "orig not run"
    assert "no rotation" in analysis.needs(frozenset({"orig", "black"}))
    only_orig = _frame(questions, always_a, ks=[0])
    assert circular_table(only_orig, SETTINGS).empty and list(circular_table(only_orig, SETTINGS).columns) == list(
        COLUMNS
    )


def test_the_declared_rotations_are_one_to_seven():
    assert sorted(ARMS) == list(range(8))


@pytest.mark.parametrize("question_set", ["shared", "per-model"])
def test_the_rule_names_orig_and_each_questions_own_rotations(question_set):
    row = _row(
        circular_table(_frame(_questions(6), always_a), ReportSettings(min_stratum=5, question_set=question_set))
    )
    whose = "any model" if question_set == "shared" else "this model"
    assert row.question_rule == f"no error under orig, each question's own rotations for {whose}"
