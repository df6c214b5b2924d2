"""above_chance: accuracy against per-question chance, exact one-sided tests, Holm, and the blind flag."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from postprocess.analyses import ANALYSES
from postprocess.analyses.base import ReportSettings
from postprocess.analyses.chance import COLUMNS, chance_table, poisson_binomial_sf
from tests.helpers.frames import outcome_fields, tidy_frame, tidy_row


def make(records, benchmark: str = "b") -> pd.DataFrame:
    """records: (model, condition, qid, task_type, outcome, n_options)."""
    return tidy_frame(
        tidy_row(m, c, q, benchmark, task_type=t, n_options=k, **outcome_fields(v)) for m, c, q, t, v, k in records
    )


def random_records(seed=3, n=120, k_choices=(4,), models=("m1", "m2")):
    rng = np.random.default_rng(seed)
    out = []
    for model in models:
        for condition in ("orig", "black"):
            for i in range(n):
                task = f"T{i % 3}"
                p = {"orig": 0.6, "black": 0.2 + 0.15 * (i % 3)}[condition]
                value = "e" if rng.random() < 0.05 else bool(rng.random() < p)
                out.append((model, condition, f"v{i:03d}-0", task, value, int(k_choices[i % len(k_choices)])))
    return out


def test_equal_options_match_scipy_binomtest_and_holm_matches_statsmodels():
    records = random_records()
    table = chance_table(make(records))
    assert list(table.columns) == list(COLUMNS)
    for (model, condition), rows in table.groupby(["model", "condition"]):
        for row in rows.itertuples():
            # Hand count: answered questions (errors excluded) of this task type (or all).
            kept = [
                r
                for r in records
                if r[0] == model and r[1] == condition and r[4] != "e" and row.task_type in (r[3], "Overall")
            ]
            k = sum(r[4] is True for r in kept)
            assert (row.n, row.n_correct) == (len(kept), k)
            assert row.chance == pytest.approx(0.25) and row.n_options == "4"
            expected = stats.binomtest(k, len(kept), 0.25, alternative="greater").pvalue
            assert row.p_chance == pytest.approx(expected, rel=1e-9, abs=1e-300)
            assert row.test.startswith("exact binomial")
        holm = multipletests(rows["p_chance"].to_numpy(), method="holm")[1]
        np.testing.assert_allclose(rows["p_holm"].to_numpy(dtype=float), holm, rtol=1e-12)
        assert (rows["n_family"] == 4).all()  # three task types and Overall
        assert (rows["above_chance"].to_numpy(dtype=bool) == (holm < 0.05)).all()


def brute_force_tail(k: int, counts: list[int]) -> float:
    """P(at least k right) for a uniform guesser, by enumerating every right/wrong pattern."""
    total = 0.0
    for pattern in itertools.product((0, 1), repeat=len(counts)):
        if sum(pattern) >= k:
            total += math.prod(1 / c if hit else 1 - 1 / c for hit, c in zip(pattern, counts, strict=True))
    return total


@pytest.mark.parametrize("k", [0, 1, 3, 5, 8, 11])
def test_mixed_option_counts_are_the_exact_poisson_binomial(k):
    counts = [3, 4, 5, 5, 4, 3, 3, 5, 4, 4, 5]
    p, test = poisson_binomial_sf(k, np.array(counts))
    assert p == pytest.approx(brute_force_tail(k, counts), rel=1e-10)
    assert test.startswith("exact Poisson-binomial")


def test_mixed_table_row_uses_each_questions_options():
    counts = [3, 4, 5, 3, 4, 5, 3, 4, 5, 4]
    outcomes = [True, True, False, True, False, True, True, False, False, True]
    records = [("m", "black", f"q{i}", "T", v, c) for i, (v, c) in enumerate(zip(outcomes, counts, strict=True))]
    row = chance_table(make(records), ReportSettings(min_stratum=1)).set_index("task_type").loc["Overall"]
    assert row["expected_correct"] == pytest.approx(sum(1 / c for c in counts))
    assert row["n_options"] == "3-5"
    assert row["p_chance"] == pytest.approx(brute_force_tail(sum(outcomes), counts), rel=1e-10)


def test_missing_incorrect_counts_errors_as_wrong():
    records = [("m", "orig", f"q{i}", "T", v, 4) for i, v in enumerate([True, True, "e", False, "e"])]
    frame = make(records)
    exclude = chance_table(frame, ReportSettings(min_stratum=1)).set_index("task_type").loc["Overall"]
    incorrect = (
        chance_table(frame, ReportSettings(missing="incorrect", min_stratum=1)).set_index("task_type").loc["Overall"]
    )
    assert (exclude["n"], exclude["n_correct"], exclude["n_error"]) == (3, 2, 2)
    assert (incorrect["n"], incorrect["n_correct"], incorrect["n_error"]) == (5, 2, 2)
    assert incorrect["p_chance"] == pytest.approx(stats.binomtest(2, 5, 0.25, alternative="greater").pvalue)


def test_black_flag_marks_task_types_answered_without_the_video():
    records = []
    for i in range(40):
        # Under black: T0 always right (above chance), T1 never right.
        records.append(("m", "black", f"a{i}", "T0", True, 4))
        records.append(("m", "black", f"b{i}", "T1", False, 4))
        records.append(("m", "orig", f"a{i}", "T0", True, 4))
        records.append(("m", "orig", f"b{i}", "T1", True, 4))
    table = chance_table(make(records))
    flags = table.set_index(["condition", "task_type"])["above_chance_black"]
    assert flags[("orig", "T0")] and flags[("black", "T0")] and not flags[("orig", "T1")]
    assert table.set_index(["condition", "task_type"])["above_chance"][("orig", "T1")]
    # Conditions in declared order: orig before black.
    assert table["condition"].tolist()[0] == "orig"


def test_small_strata_keep_descriptive_values_but_no_test_and_leave_the_holm_family():
    records = [("m", "black", f"a{i}", "Big", i % 2 == 0, 4) for i in range(40)]
    records += [("m", "black", f"s{i}", "Small", True, 4) for i in range(6)]
    table = chance_table(make(records)).set_index("task_type")
    small, big, overall = table.loc["Small"], table.loc["Big"], table.loc["Overall"]
    assert small["too_small"] and (small["n"], small["n_correct"], small["acc"]) == (6, 6, 1.0)
    assert small["chance"] == pytest.approx(0.25)
    assert np.isnan(small["p_chance"]) and np.isnan(small["ci_low"]) and pd.isna(small["above_chance"])
    assert not big["too_small"] and not overall["too_small"]
    # Family: Big and Overall only.
    p = [stats.binomtest(20, 40, 0.25, alternative="greater").pvalue]
    p.append(stats.binomtest(26, 46, 0.25, alternative="greater").pvalue)
    expected = multipletests(p, method="holm")[1]
    assert (big["n_family"], overall["n_family"]) == (2, 2)
    assert [big["p_holm"], overall["p_holm"]] == pytest.approx(list(expected), rel=1e-12)


def test_a_benchmark_with_one_task_type_enters_the_holm_family_once():
    records = [("m", "black", f"a{i}", "Only", i % 3 == 0, 4) for i in range(60)]
    table = chance_table(make(records)).set_index("task_type")
    p = stats.binomtest(20, 60, 0.25, alternative="greater").pvalue
    for task_type in ("Only", "Overall"):
        assert table.loc[task_type, "n_family"] == 1
        assert table.loc[task_type, "p_holm"] == pytest.approx(p, rel=1e-12)  # unadjusted: a family of one
    # A question without a task type makes Overall differ from the one task type: two p-values again.
    frame = make(records + [("m", "black", "x", None, True, 4)])
    assert (chance_table(frame)["n_family"] == 2).all()


def test_registered_and_empty():
    assert any(a.name == "above_chance" and a.columns is COLUMNS for a in ANALYSES)
    assert list(chance_table(make([]).iloc[:0]).columns) == list(COLUMNS)
    no_black = chance_table(make([("m", "orig", "q", "T", True, 4)]))
    assert no_black["above_chance_black"].isna().all()
