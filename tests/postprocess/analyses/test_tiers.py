"""tiers and tier_agreement: VDG tiers per task type, pooled, against a predicted tier map."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses.base import ReportSettings
from postprocess.analyses.categories import POOLED
from postprocess.analyses.tiers import (
    AGREEMENT_COLUMNS,
    ANALYSES,
    COLUMNS,
    agreement_from_tiers,
    tier_agreement_table,
    tier_of,
    tiers_table,
)
from postprocess.analyses.vdg import vdg_table
from tests.helpers.frames import make_frame
from tests.helpers.reference_data import MODEL, ORIG_BLACK, expected_rows, reference_frame

#: task type -> VDG (in questions out of 100) per model m1, m2, m3.
GAPS = {
    "A": (0, 34, 56),  # pooled mean 30/100 exactly; np.mean([0.0, 0.34, 0.56]) is above 0.3
    "B": (30, 30, 30),  # on tier_high: mid
    "C": (31, 9, 10),  # high, low, on tier_low: mid
    "D": (9, 5, 0),
}
#: tiers of the point estimates by hand under the default thresholds (high > 0.30, low < 0.10): the tier of a
#: pooled row (no CI) and the point_tier of every row.
TIERS = {
    ("m1", "A"): "low",
    ("m2", "A"): "high",
    ("m3", "A"): "high",
    (POOLED, "A"): "mid",
    ("m1", "B"): "mid",
    ("m2", "B"): "mid",
    ("m3", "B"): "mid",
    (POOLED, "B"): "mid",
    ("m1", "C"): "high",
    ("m2", "C"): "low",
    ("m3", "C"): "mid",
    (POOLED, "C"): "mid",
    ("m1", "D"): "low",
    ("m2", "D"): "low",
    ("m3", "D"): "low",
    (POOLED, "D"): "low",
}
OPTIONS = ReportSettings(n_resamples=50, tier_map={"A": "high", "B": "mid", "D": "low", "Z": "mid"})


def gap_frame(models=("m1", "m2", "m3")) -> pd.DataFrame:
    """100 questions per task type; the first k right with the video, all wrong with the black video."""
    records = []
    for j, model in enumerate(("m1", "m2", "m3")):
        if model not in models:
            continue
        for task, ks in GAPS.items():
            for i in range(100):
                qid = f"{task}{i:03d}-0"
                records += [(model, "orig", qid, task, i < ks[j]), (model, "black", qid, task, False)]
    return make_frame(records)


def hand_ci_tier(low: float, high: float, t_low: float = 0.10, t_high: float = 0.30) -> str:
    """The CI's tier by hand: each end's tier; the tiers between them and the thresholds crossed when they differ."""

    def one(v):
        return "high" if v > t_high else "low" if v < t_low else "mid"

    top, bottom = one(high), one(low)
    if top == bottom:
        return top
    order = ["high", "mid", "low"]
    spanned = order[order.index(top) : order.index(bottom) + 1]
    crossed = [f"{t:.2f}" for t, side in ((t_high, "high"), (t_low, "low")) if side in (top, bottom)]
    return f"{'/'.join(spanned)} (CI straddles {' and '.join(crossed)})"


def test_tiers_by_hand_with_exact_thresholds():
    table = tiers_table(gap_frame(), OPTIONS)
    assert list(table.columns) == list(COLUMNS)
    cells = table.set_index(["model", "task_type"])
    for (model, task), tier in TIERS.items():
        assert cells.loc[(model, task), "point_tier"] == tier, (model, task)
        if model == POOLED:  # no CI, so no tier: the point estimate is descriptive only
            assert pd.isna(cells.loc[(model, task), "tier"])
            assert cells.loc[(model, task), "tier_basis"].startswith("no CI, so no tier")
        assert cells.loc[(model, task), "review"] == (cells.loc[(model, task), "tier"] == "low")
    assert np.mean([0.0, 0.34, 0.56]) > 0.3  # a float mean would call pooled A high
    assert cells.loc[(POOLED, "A"), "vdg"] == 0.3 and cells.loc[(POOLED, "A"), "n_models"] == 3
    assert cells.loc[(POOLED, "C"), "vdg"] == pytest.approx(50 / 300)
    assert cells.loc[(POOLED, "Overall"), "n"] == 1200 and cells.loc[(POOLED, "Overall"), "n_smallest"] == 400
    assert table["model"].tolist()[-5:] == [POOLED] * 5
    assert math.isnan(cells.loc[(POOLED, "A"), "ci_low"])


def test_tiers_are_decided_by_the_ci_not_the_point_estimate():
    table = tiers_table(gap_frame(), OPTIONS)
    models = table[table["model"] != POOLED]
    for row in models.itertuples():
        assert row.tier == hand_ci_tier(row.ci_low, row.ci_high), (row.model, row.task_type)
        assert row.tier_basis == "CI"
    cells = models.set_index(["model", "task_type"])
    # m2 A: VDG 0.34 is above 0.30, but its CI reaches below it.
    m2a = cells.loc[("m2", "A")]
    assert m2a["point_tier"] == "high" and m2a["ci_low"] < 0.30 < m2a["ci_high"]
    assert m2a["tier"] == "high/mid (CI straddles 0.30)" and not m2a["review"]
    # m1 D: VDG 0.09 is low by its point estimate, but the CI reaches 0.10: not a confident low (no review).
    m1d = cells.loc[("m1", "D")]
    assert m1d["point_tier"] == "low" and m1d["ci_low"] < 0.10 <= m1d["ci_high"]
    assert m1d["tier"] == "mid/low (CI straddles 0.10)" and not m1d["review"]
    # m3 A (VDG 0.56) and m3 D (VDG 0, CI [0, 0]) are decided.
    assert cells.loc[("m3", "A"), "tier"] == "high" and cells.loc[("m3", "D"), "tier"] == "low"
    assert cells.loc[("m3", "D"), "review"]


def test_a_ci_across_both_thresholds_names_both():
    options = ReportSettings(tier_low=0.25, tier_high=0.35)
    table = tiers_table(gap_frame(models=("m1",)), options).set_index("task_type")
    row = table.loc["B"]  # VDG 0.30, CI about [0.21, 0.39]
    assert row["ci_low"] < 0.25 and row["ci_high"] > 0.35
    assert row["tier"] == "high/mid/low (CI straddles 0.35 and 0.25)"
    assert row["tier"] == hand_ci_tier(row["ci_low"], row["ci_high"], 0.25, 0.35)


def test_a_task_type_below_min_stratum_is_too_small():
    """Exactly 30 questions (the default min_stratum) get a tier; 29 get 'too small', with their n."""
    records = []
    for task, size in (("Small", 29), ("Enough", 30)):
        for i in range(size):
            qid = f"{task}{i:03d}-0"
            records += [("m1", "orig", qid, task, i < 20), ("m1", "black", qid, task, False)]
    cells = tiers_table(make_frame(records), ReportSettings()).set_index("task_type")
    small, enough = cells.loc["Small"], cells.loc["Enough"]
    assert small["tier"] == "too small" and small["tier_basis"] == "too small" and small["n"] == 29
    assert small["vdg"] == pytest.approx(20 / 29) and small["point_tier"] == "high" and not small["review"]
    assert enough["n"] == 30 and enough["tier_basis"] == "CI"
    assert enough["tier"] == hand_ci_tier(enough["ci_low"], enough["ci_high"])
    assert (cells["min_stratum"] == 30).all()
    # Under min_stratum=1 the small one gets a tier too.
    row = tiers_table(make_frame(records), ReportSettings(min_stratum=1)).set_index("task_type").loc["Small"]
    assert row["tier_basis"] == "CI" and row["tier"] == hand_ci_tier(row["ci_low"], row["ci_high"])


def test_tiers_reuse_the_vdg_table():
    frame = gap_frame()
    table = tiers_table(frame, OPTIONS)
    vdg = vdg_table(frame, OPTIONS)
    models = table[table["model"] != POOLED].reset_index(drop=True)
    for column in ("model", "task_type", "n", "vdg", "ci_low", "ci_high", "n_resamples"):
        pd.testing.assert_series_equal(models[column], vdg[column], check_dtype=False, check_names=False)
    # what the CIs drew, not the option: a score interval draws nothing, a Monte Carlo bootstrap its resamples
    assert (table["n_resamples"] == 0).all() and (table["missing_policy"] == "exclude").all()
    resampled = ReportSettings(n_resamples=50, ci_method="resample", mc_se_target=0.0)
    drawn = tiers_table(frame, resampled)
    assert (drawn.loc[drawn["model"] != POOLED, "n_resamples"] == 50).all()
    assert (drawn.loc[drawn["model"] == POOLED, "n_resamples"] == 0).all()


def test_predicted_tiers_and_agreement():
    frame = gap_frame()
    table = tiers_table(frame, OPTIONS).set_index(["model", "task_type"])
    assert table.loc[("m1", "A"), "predicted_tier"] == "high"
    assert not table.loc[("m1", "A"), "in_predicted_tier"]  # CI [0, 0]: low, not high
    assert table.loc[("m3", "A"), "in_predicted_tier"]  # CI within high
    assert pd.isna(table.loc[("m1", "B"), "in_predicted_tier"])  # CI spans high and mid, predicted mid: undecided
    assert pd.isna(table.loc[("m1", "C"), "predicted_tier"]) and pd.isna(table.loc[("m1", "C"), "in_predicted_tier"])
    agreement = tier_agreement_table(frame, OPTIONS)
    assert list(agreement.columns) == list(AGREEMENT_COLUMNS)
    rows = agreement.set_index("model")
    assert rows.index.tolist() == ["m1", "m2", "m3", POOLED]
    # m1: A low (predicted high), B high/mid and D mid/low (undecided: they span the predicted tier); C unmapped.
    assert rows.loc["m1", ["n_mapped", "n_agree", "n_undecided", "n_unmapped"]].tolist() == [1, 0, 2, 1]
    assert rows.loc["m1", "share_agree"] == 0 and rows.loc["m1", "off_tier"] == "A: high -> low"
    # By hand: a mapped type agrees when its CI's tier is the predicted one, disagrees when the predicted tier is
    # none of those its CI spans, and is undecided otherwise; pooled rows (no CI, so no tier) are not counted.
    for model in ("m1", "m2", "m3", POOLED):
        agree = undecided = mapped = 0
        for t in ("A", "B", "D"):
            cell = table.loc[(model, t)]
            if model == POOLED:
                continue
            tier = hand_ci_tier(cell["ci_low"], cell["ci_high"])
            spanned = tier.split(" ")[0].split("/")
            if len(spanned) > 1 and OPTIONS.tier_map[t] in spanned:
                undecided += 1
            else:
                mapped += 1
                agree += tier == OPTIONS.tier_map[t]
        assert rows.loc[model, ["n_mapped", "n_agree", "n_undecided"]].tolist() == [mapped, agree, undecided]
    pd.testing.assert_frame_equal(agreement, agreement_from_tiers(tiers_table(frame, OPTIONS), OPTIONS))


def test_custom_thresholds():
    options = ReportSettings(n_resamples=20, tier_low=0.05, tier_high=0.09)
    table = tiers_table(gap_frame(), options)
    cells = table.set_index(["model", "task_type"])["point_tier"]
    assert cells[("m1", "D")] == "mid" and cells[("m2", "D")] == "mid" and cells[("m3", "D")] == "low"
    assert cells[("m1", "A")] == "low" and cells[("m1", "B")] == "high"
    for row in table[table["model"] != POOLED].itertuples():
        assert row.tier == hand_ci_tier(row.ci_low, row.ci_high, 0.05, 0.09)


def test_tier_of_compares_exactly():
    options = ReportSettings()
    assert tier_of(Fraction(30, 100), options) == "mid"
    assert tier_of(Fraction(3001, 10000), options) == "high"
    assert tier_of(Fraction(1, 10), options) == "mid"
    assert tier_of(Fraction(-1, 2), options) == "low"
    assert tier_of(0.3, options) == "mid" and tier_of(0.30000000000000004, options) == "high"
    assert tier_of(float("nan"), options) is None


def test_without_a_map_the_agreement_table_is_empty():
    options = ReportSettings(n_resamples=20)
    table = tiers_table(gap_frame(), options)
    assert table["predicted_tier"].isna().all() and table["in_predicted_tier"].isna().all()
    agreement = tier_agreement_table(gap_frame(), options)
    assert agreement.empty and list(agreement.columns) == list(AGREEMENT_COLUMNS)


def test_one_model_has_no_pooled_rows_and_no_black_gives_empty_tables():
    table = tiers_table(gap_frame(models=("m2",)), OPTIONS)
    assert set(table["model"]) == {"m2"}
    frame = gap_frame()
    none = frame[frame["condition"] != "black"]
    for fn, columns in ((tiers_table, COLUMNS), (tier_agreement_table, AGREEMENT_COLUMNS)):
        out = fn(none, OPTIONS)
        assert out.empty and list(out.columns) == list(columns)


def test_a_tier_outside_high_mid_low_is_rejected():
    options = ReportSettings(tier_map={"A": "HIGH"})
    for fn in (tiers_table, tier_agreement_table):
        with pytest.raises(ValueError, match="task type 'A' the tier 'HIGH'"):
            fn(gap_frame(), options)


def test_a_model_labelled_pooled_is_rejected():
    frame = gap_frame()
    frame["model"] = frame["model"].replace("m3", POOLED)
    with pytest.raises(ValueError, match="a model is labelled 'pooled'"):
        tiers_table(frame, OPTIONS)


def test_analyses_declare_their_tables():
    assert [(a.name, a.columns) for a in ANALYSES] == [("tiers", COLUMNS), ("tier_agreement", AGREEMENT_COLUMNS)]
    for analysis in ANALYSES:
        assert list(analysis.run(gap_frame(), OPTIONS).columns) == list(analysis.columns)


# ------------------------------------------------------------------------------- reference rows


def test_reference_t1_vdg_through_the_tiers_table():
    """expected.csv T1 VDG rows (matched: missing=exclude, each model on its own set: question_set=per-model), read
    from the tiers table's vdg column."""
    frame = reference_frame(files=ORIG_BLACK)
    options = ReportSettings(n_resamples=50, question_set="per-model")
    table = tiers_table(frame, options).set_index(["model", "task_type"])
    rows = [r for r in expected_rows() if r["table"] == "T1" and " VDG (n=" in r["quantity"]]
    assert len(rows) == 21
    for row in rows:
        m = re.fullmatch(r"(?P<task>.+) (?P<m>Qwen|LLaVA|IV2) VDG \(n=(?P<n>\d+)\)", row["quantity"])
        cell = table.loc[(MODEL[m["m"]], m["task"])]
        assert cell["n"] == int(m["n"])
        assert abs(cell["vdg"] - float(row["value"])) <= float(row["tolerance"]), row["quantity"]
    # The pooled row is the unweighted mean of the three models' VDGs.
    pooled = table.loc[(POOLED, "Overall"), "vdg"]
    means = [table.loc[(m, "Overall"), "vdg"] for m in ("qwen2vl", "llava", "internvl2")]
    np.testing.assert_allclose(pooled, np.mean(means), atol=1e-12)


def test_a_graded_benchmark_s_tier_is_decided_on_its_mean_score_gap():
    from tests.helpers.frames import graded_row, tidy_frame

    rows = [graded_row("m", c, f"q{i}", "graded", s, task_type="T") for i in range(12)
            for c, s in (("orig", 1.0), ("black", 0.5))]  # fmt: skip
    tiers = tiers_table(tidy_frame(rows), ReportSettings(min_stratum=5)).set_index("task_type")
    assert tiers.at["Overall", "vdg"] == 0.5  # d - c over n would say 1.0: every gap is positive
    assert tiers.at["Overall", "tier"] == "high"
