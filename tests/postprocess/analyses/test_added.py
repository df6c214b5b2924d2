"""The added-conditions table: each condition vdg's core does not declare against orig per question, mute beside
black on the same questions, every number counted by hand here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import ReportSettings
from postprocess.analyses.added import COLUMNS, added_conditions, added_table
from tests.helpers.condition_modules import INVERT, condition_modules
from tests.helpers.frames import answer_fields, tidy_frame, tidy_row

N = 40
LETTERS = "ABCD"


def _frame(picks: dict[str, callable]) -> pd.DataFrame:
    """Question i (answer LETTERS[i % 4], task type T0/T1) under each condition; ``picks[c](i, answer)``: the letter
    chosen, or "e" for an error row."""
    rows = []
    for i in range(N):
        question_id, answer = f"v{i:02d}-1", LETTERS[i % 4]
        for condition, pick in picks.items():
            chosen = pick(i, answer)
            fields = answer_fields(answer, None, "error") if chosen == "e" else answer_fields(answer, chosen, "ok")
            rows.append(tidy_row("m", condition, question_id, task_type=f"T{i % 2}", n_options=4, **fields))
    return tidy_frame(rows)


def right(i, answer):
    return answer


def wrong(i, answer):
    return LETTERS[(LETTERS.index(answer) + 1) % 4]


def _overall(table: pd.DataFrame, condition: str) -> pd.Series:
    return table[(table.task_type == "Overall") & (table.condition == condition)].iloc[0]


def test_only_conditions_the_core_does_not_declare_are_added():
    assert added_conditions({"orig", "black", "crf28", "mute", "blur", "mine", "another"}) == [
        "blur",
        "mute",
        "another",
        "mine",
    ]


def test_a_condition_against_orig_counted_by_hand():
    def sometimes(i, answer):  # wrong on every third question
        return wrong(i, answer) if i % 3 == 0 else answer

    table = added_table(_frame({"orig": right, "blur": sometimes}), ReportSettings(min_stratum=10))
    assert list(table.columns) == list(COLUMNS)
    row = _overall(table, "blur")
    lost = sum(i % 3 == 0 for i in range(N))
    assert (row.n, row.acc_orig, row.acc_condition) == (N, 1.0, (N - lost) / N)
    assert row["diff"] == pytest.approx(-lost / N)
    assert row.agreement == pytest.approx((N - lost) / N)  # the same letter wherever both are right
    assert row.ci_low <= row["diff"] <= row.ci_high < 0
    assert row.declared_in == "vdg_tasks.extend.shipped" and row.beside == ""
    t0 = table[(table.task_type == "T0") & (table.condition == "blur")].iloc[0]
    assert t0.n == N // 2 and t0.acc_condition == pytest.approx(1 - sum(i % 3 == 0 for i in range(0, N, 2)) / (N // 2))
    assert row.reading.startswith("accuracy -0.350 [")


def test_mute_sits_beside_black_on_the_same_questions():
    def deaf(i, answer):  # loses the sound: wrong on the even questions (T0)
        return wrong(i, answer) if i % 2 == 0 else answer

    def blind(i, answer):  # loses the pictures: wrong on the odd ones, an error on the last question
        return "e" if i == N - 1 else (wrong(i, answer) if i % 2 else answer)

    table = added_table(_frame({"orig": right, "mute": deaf, "black": blind}), ReportSettings(min_stratum=10))
    row = _overall(table, "mute")
    assert (row.beside, row.n, row.n_error) == ("black", N, 0)  # mute against orig: every question
    assert row["diff"] == pytest.approx(-(N // 2) / N)
    kept = N - 1  # beside black: the question without an answer under black is left out
    assert row.n_beside == kept
    assert row.diff_same_questions == pytest.approx(-sum(i % 2 == 0 for i in range(kept)) / kept)
    assert row.acc_beside == pytest.approx(1 - sum(i % 2 == 1 for i in range(kept)) / kept)
    assert row.diff_beside == pytest.approx(row.acc_beside - 1.0)
    assert row.beside_ci_low <= row.diff_beside <= row.beside_ci_high
    sound, pictures = -row.diff_same_questions, -row.diff_beside
    assert f"the sound carries {sound + 0.0:+.3f} of the accuracy, the pictures {pictures + 0.0:+.3f}" in row.reading
    t0, t1 = (table[(table.task_type == t) & (table.condition == "mute")].iloc[0] for t in ("T0", "T1"))
    assert (t0.acc_condition, t0.acc_beside) == (0.0, 1.0) and (t1.acc_condition, t1.acc_beside) == (1.0, 0.0)


def test_without_black_mute_has_no_beside_columns_and_without_orig_no_rows():
    table = added_table(_frame({"orig": right, "mute": right}), ReportSettings(min_stratum=10))
    row = _overall(table, "mute")
    assert row.beside == "" and np.isnan(row.acc_beside) and row["diff"] == 0
    assert added_table(_frame({"mute": right, "black": right}), ReportSettings(min_stratum=10)).empty


def test_a_condition_unknown_here_is_read_as_added_with_no_module():
    table = added_table(_frame({"orig": right, "their_condition": wrong}), ReportSettings(min_stratum=10))
    row = _overall(table, "their_condition")
    assert (row.acc_condition, row.declared_in, row.too_small) == (0.0, "", False)


@pytest.fixture()
def modules(tmp_path, monkeypatch):
    yield from condition_modules(tmp_path, monkeypatch)


def test_a_user_condition_placed_beside_a_ladder_rung_is_read_beside_it(modules):
    write, load = modules
    write("detail_probe", INVERT.format(name="lowres", family="detail").replace(
        "family='detail')", "family='detail', beside='single')"))  # fmt: skip
    assert load("detail_probe").problems == ()

    def half(i, answer):  # right on the first half of the questions
        return answer if i < N // 2 else wrong(i, answer)

    def quarter(i, answer):  # right on the first quarter; no answer on the last question
        return "e" if i == N - 1 else (answer if i < N // 4 else wrong(i, answer))

    table = added_table(_frame({"orig": right, "lowres": half, "single": quarter}), ReportSettings(min_stratum=10))
    row = _overall(table, "lowres")
    assert (row.declared_in, row.beside, row.n, row.n_beside) == ("detail_probe", "single", N, N - 1)
    assert row["diff"] == pytest.approx(-0.5)
    assert row.diff_same_questions == pytest.approx(-(N // 2 - 1) / (N - 1))
    assert row.acc_beside == pytest.approx((N // 4) / (N - 1))
    assert row.diff_beside == pytest.approx(row.acc_beside - 1.0)
    assert f"on the questions answered under single too, {row.diff_same_questions:+.3f} beside" in row.reading
    assert "sound" not in row.reading
