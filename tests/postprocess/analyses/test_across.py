"""vdg_across and letters_across: one model compared with itself across benchmarks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from postprocess.analyses import ANALYSES
from postprocess.analyses.across import LETTER_COLUMNS, VDG_COLUMNS, letters_across_table, vdg_across_table
from postprocess.analyses.base import ReportSettings
from tests.helpers.frames import answer_fields, outcome_fields, tidy_frame, tidy_row

LETTERS = "ABCDE"


def vdg_records(seed=2, sizes=(("b1", 300, 0.7), ("b2", 200, 0.5))):
    rng = np.random.default_rng(seed)
    rows = []
    for model in ("m1", "m2"):
        for bench, n, p_orig in sizes:
            for i in range(n):
                for condition, p in (("orig", p_orig), ("black", 0.35)):
                    value = "e" if rng.random() < 0.03 else bool(rng.random() < p)
                    rows.append(
                        tidy_row(
                            model,
                            condition,
                            f"{bench}v{i:03d}-0",
                            bench,
                            task_type=f"T{i % 3}",
                            n_options=4,
                            **outcome_fields(value),
                        )
                    )
    return rows


def hand_vdgs(rows, model, bench):
    arms: dict[str, dict[str, object]] = {}
    for r in rows:
        if r["model"] == model and r["benchmark"] == bench:
            arms.setdefault(r["question_id"], {})[r["condition"]] = r
    out = []
    for arm in arms.values():
        if "error" in (arm["orig"]["status"], arm["black"]["status"]):
            continue
        out.append(int(arm["orig"]["correct"] is True) - int(arm["black"]["correct"] is True))
    return np.array(out)


def test_vdg_difference_and_its_bootstrap_ci_against_a_normal_approximation():
    rows = vdg_records()
    table = vdg_across_table(tidy_frame(rows), ReportSettings(n_resamples=20000))
    assert list(table.columns) == list(VDG_COLUMNS)
    assert table[["model", "benchmark_a", "benchmark_b"]].values.tolist() == [["m1", "b1", "b2"], ["m2", "b1", "b2"]]
    for row in table.itertuples():
        a, b = hand_vdgs(rows, row.model, "b1"), hand_vdgs(rows, row.model, "b2")
        assert (row.n_a, row.n_b) == (len(a), len(b))
        assert row.vdg_a == pytest.approx(a.mean()) and row.vdg_b == pytest.approx(b.mean())
        assert row.diff == pytest.approx(a.mean() - b.mean())
        # Independent samples: SE of a difference of means; the percentile CI is close to +- 1.96 SE.
        se = math.sqrt(a.var() / len(a) + b.var() / len(b))
        z = stats.norm.ppf(0.975)
        assert row.ci_low == pytest.approx(row.diff - z * se, abs=0.2 * se)
        assert row.ci_high == pytest.approx(row.diff + z * se, abs=0.2 * se)


def test_vdg_across_is_seeded_and_empty_for_one_benchmark():
    frame = tidy_frame(vdg_records())
    first, again = (
        vdg_across_table(frame, ReportSettings(n_resamples=500)),
        vdg_across_table(frame, ReportSettings(n_resamples=500)),
    )
    pd.testing.assert_frame_equal(first, again)
    other = vdg_across_table(frame, ReportSettings(n_resamples=500, seed=9))
    assert not np.allclose(first["ci_low"], other["ci_low"])
    one = tidy_frame(vdg_records(sizes=(("b1", 30, 0.7),)))
    assert vdg_across_table(one).empty and letters_across_table(one).empty
    cluster = vdg_across_table(frame, ReportSettings(n_resamples=200, cluster=True))
    assert (cluster["resample_unit"] == "video").all()


def test_vdg_across_seed_comes_from_the_question_sets_not_the_model_label():
    rows = [r for r in vdg_records() if r["model"] == "m1"]
    frame = tidy_frame(rows)
    renamed = tidy_frame([dict(r, model="another name") for r in rows])
    options = ReportSettings(n_resamples=500)
    first, second = vdg_across_table(frame, options), vdg_across_table(renamed, options)
    cols = ["ci_low", "ci_high"]
    pd.testing.assert_frame_equal(first[cols], second[cols])


def letter_rows(model, bench, condition, preds, n_options):
    return [
        tidy_row(
            model, condition, f"{bench}q{i}", bench, task_type="T", n_options=n_options, **answer_fields("A", p, "ok")
        )
        for i, p in enumerate(preds)
    ]


def test_letters_across_matches_scipy_on_sets_with_the_same_option_count():
    pa = ["A"] * 30 + ["B"] * 20 + ["C"] * 25 + ["D"] * 25
    pb = ["A"] * 10 + ["B"] * 40 + ["C"] * 20 + ["D"] * 15
    frame = tidy_frame(letter_rows("m", "a4", "black", pa, 4) + letter_rows("m", "b4", "black", pb, 4))
    table = letters_across_table(frame)
    assert list(table.columns) == list(LETTER_COLUMNS)
    row = table.iloc[0]
    assert (row["benchmark_a"], row["benchmark_b"], row["n_options_a"], row["n_options_b"]) == ("a4", "b4", "4", "4")
    assert row["not_compared"] == "" and row["letters"] == "A,B,C,D" and (row["n_a"], row["n_b"]) == (100, 85)
    observed = np.array([[30, 20, 25, 25], [10, 40, 20, 15]])
    ref = stats.chi2_contingency(observed, correction=False)
    assert row["chi2"] == pytest.approx(ref.statistic) and row["p"] == pytest.approx(ref.pvalue)
    assert row["df"] == 3 and (row["top_a"], row["top_b"]) == ("A", "B")
    assert row["cramers_v"] == pytest.approx(math.sqrt(ref.statistic / 185))


def test_letters_across_refuses_sets_with_different_or_mixed_option_counts():
    # b4 has 4 options, b5 5, and "mix" 3- and 4-option questions: no pair has one shared count, so no test.
    p4 = ["A"] * 30 + ["B"] * 20 + ["C"] * 25 + ["D"] * 25
    p5 = ["A"] * 10 + ["B"] * 40 + ["C"] * 20 + ["D"] * 15 + ["E"] * 15
    mixed = letter_rows("m", "mix", "black", ["A", "B", "C"] * 5, 3)
    mixed += [dict(r, question_id=f"{r['question_id']}x") for r in letter_rows("m", "mix", "black", ["D"] * 5, 4)]
    frame = tidy_frame(letter_rows("m", "b4", "black", p4, 4) + letter_rows("m", "b5", "black", p5, 5) + mixed)
    table = letters_across_table(frame).set_index(["benchmark_a", "benchmark_b"])
    assert table.loc[("b4", "b5"), "not_compared"] == "option counts differ: 4 on b4, 5 on b5"
    assert (table.loc[("b4", "b5"), "n_options_a"], table.loc[("b4", "b5"), "n_options_b"]) == ("4", "5")
    assert table.loc[("b4", "mix"), "not_compared"] == "mix mixes questions with 3 to 4 options"
    assert table.loc[("b4", "mix"), "n_options_b"] == "3-4"
    assert table["chi2"].isna().all() and table["p"].isna().all() and (table["letters"] == "").all()
    assert (table.loc[("b4", "b5"), "n_a"], table.loc[("b4", "b5"), "n_b"]) == (len(p4), len(p5))


def test_letters_no_answer_uses_are_dropped():
    frame = tidy_frame(
        letter_rows("m", "x", "orig", ["A"] * 5 + ["B"] * 5, 4)
        + letter_rows("m", "y", "orig", ["A"] * 2 + ["B"] * 8, 4)
    )
    row = letters_across_table(frame).iloc[0]
    assert row["letters"] == "A,B" and row["df"] == 1
    ref = stats.chi2_contingency(np.array([[5, 5], [2, 8]]), correction=False)
    assert row["p"] == pytest.approx(ref.pvalue)


def test_registered():
    names = {a.name for a in ANALYSES}
    assert {"vdg_across", "letters_across"} <= names


def test_a_graded_benchmark_s_gaps_are_not_cut_to_whole_numbers():
    from tests.helpers.frames import graded_row

    rows = [graded_row("m", c, f"g{i}-0", "graded", s) for i in range(10) for c, s in (("orig", 1.0), ("black", 0.5))]
    rows += [tidy_row("m", c, f"l{i}-0", "lettered", **outcome_fields(c == "orig")) for i in range(10)
             for c in ("orig", "black")]  # fmt: skip
    row = vdg_across_table(tidy_frame(rows), ReportSettings(n_resamples=200)).iloc[0]
    assert (row.benchmark_a, row.vdg_a, row.benchmark_b, row.vdg_b) == ("graded", 0.5, "lettered", 1.0)
    assert row["diff"] == -0.5
