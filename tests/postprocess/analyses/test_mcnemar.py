"""mcnemar and dissociation: pairwise model tests on shared question sets, checked by hand counts."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from postprocess.analyses._paired import question_set_seed
from postprocess.analyses.base import ReportSettings
from postprocess.analyses.mcnemar import (
    ANALYSES,
    COLUMNS,
    DISSOCIATION_COLUMNS,
    dissociation_table,
    holm_rows,
    mcnemar_table,
    resample_weights,
    stability_pvalues,
)
from postprocess.stats import mcnemar, mcnemar_many, paired_bootstrap_diff, paired_difference_ci, tost_paired
from tests.helpers.frames import outcome_fields, tidy_frame, tidy_row
from tests.helpers.reference_data import ORIG_BLACK, expected, reference_frame


def make_frame(outcomes: dict[tuple[str, str], list[object]], benchmark: str = "b") -> pd.DataFrame:
    """{(model, condition): [outcome per question]} -> a tidy frame; question i is ``v{i//2}-{i%2}``.

    outcome: True (right), False (wrong), "u" (unparsed, wrong) or "e" (error, no answer).
    """
    return tidy_frame(
        tidy_row(
            model,
            condition,
            f"v{i // 2:03d}-{i % 2}",
            benchmark,
            task_type=f"T{i % 3}",
            **outcome_fields(value, error="CUDA OOM"),
        )
        for (model, condition), values in outcomes.items()
        for i, value in enumerate(values)
    )


T, F, U, E = True, False, "u", "e"
# Ten questions; a has an error on orig q1, b on black q2, a on crf38 q3; c ran orig only.
SMALL = {
    ("a", "orig"): [T, E, T, F, T, F, T, T, F, U],
    ("a", "black"): [F, T, T, F, F, F, T, F, T, F],
    ("a", "crf38"): [T, T, T, E, T, F, F, T, F, F],
    ("b", "orig"): [F, T, T, T, F, T, T, F, F, T],
    ("b", "black"): [T, T, E, F, T, T, F, T, F, T],
    ("b", "crf38"): [F, F, T, T, F, T, T, F, F, T],
    ("c", "orig"): [T, T, F, F, T, T, F, T, E, T],
}


def naive_row(outcomes, a, b, condition, anchors, missing):
    """Question by question: the compared set, the four cells and the accuracies."""
    n_q = len(outcomes[(a, condition)])
    cells = {"b00": 0, "b01": 0, "b10": 0, "b11": 0}
    n = 0
    for q in range(n_q):
        arms = [condition, *anchors]
        if missing == "exclude" and any(outcomes[(m, c)][q] == E for m in (a, b) for c in arms):
            continue
        n += 1
        ra, rb = outcomes[(a, condition)][q] is True, outcomes[(b, condition)][q] is True
        cells[f"b{int(ra)}{int(rb)}"] += 1
    return n, n_q - n, cells


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_cells_and_sets_match_hand_counts(missing):
    table = mcnemar_table(make_frame(SMALL), ReportSettings(cluster="question", missing=missing, n_resamples=200))
    assert list(table.columns) == list(COLUMNS)
    # a-b share orig, black, crf38 (anchors orig+black); a-c and b-c share orig only (anchor orig).
    expected_keys = [
        ("a", "b", "orig"),
        ("a", "b", "black"),
        ("a", "b", "crf38"),
        ("a", "c", "orig"),
        ("b", "c", "orig"),
    ]
    assert list(zip(table["model_a"], table["model_b"], table["condition"], strict=True)) == expected_keys
    for row in table.itertuples():
        anchors = ["orig", "black"] if row.model_b == "b" else ["orig"]
        n, n_excl, cells = naive_row(SMALL, row.model_a, row.model_b, row.condition, anchors, missing)
        assert (row.n, row.n_excluded) == (n, n_excl)
        assert (row.b00, row.b01, row.b10, row.b11) == (cells["b00"], cells["b01"], cells["b10"], cells["b11"])
        assert_allclose(row.acc_a, (cells["b10"] + cells["b11"]) / n, atol=1e-12)
        assert_allclose(row.acc_b, (cells["b01"] + cells["b11"]) / n, atol=1e-12)
        assert_allclose(row.diff, row.acc_a - row.acc_b, atol=1e-12)
        assert row.missing_policy == missing
    if missing == "exclude":
        # orig and black of a pair share one question set: q1 (a orig) and q2 (b black) out of both.
        ab = table[(table["model_a"] == "a") & (table["model_b"] == "b")].set_index("condition")
        assert ab.loc["orig", "n"] == ab.loc["black", "n"] == 8
        assert ab.loc["crf38", "n"] == 7  # and a's crf38 error on q3
    else:
        assert (table["n"] == 10).all() and (table["n_excluded"] == 0).all()


def test_b01_is_a_wrong_b_right_as_stats_mcnemar():
    # a right on 6 of 8, b right on 2 of them plus ... : b01 = #(a wrong, b right).
    outcomes = {("a", "orig"): [T, T, T, T, T, T, F, F], ("b", "orig"): [T, T, F, F, F, F, F, T]}
    row = mcnemar_table(make_frame(outcomes), ReportSettings(cluster="question", n_resamples=50)).iloc[0]
    assert (row.b00, row.b01, row.b10, row.b11) == (1, 1, 4, 2)
    ref = mcnemar(1, 4)  # stats.mcnemar(b01, b10): b01 = (a, b) = (0, 1)
    assert_allclose([row.chi2_cc, row.p_cc, row.p_exact], [ref.chi2_cc, ref.p_cc, ref.p_exact], atol=1e-12)
    assert row["diff"] > 0  # a is the better model and b10 > b01


def test_mcnemar_many_equals_stats_mcnemar():
    b01, b10 = np.meshgrid(np.arange(0, 41), np.arange(0, 41))
    b01 = np.concatenate([b01.ravel(), [88, 105, 1000, 2500, 0]])
    b10 = np.concatenate([b10.ravel(), [66, 61, 1100, 2400, 700]])
    chi2, p_cc, p_exact = mcnemar_many(b01, b10)
    for i in range(b01.size):
        if b01[i] + b10[i] == 0:
            assert np.isnan(chi2[i]) and np.isnan(p_cc[i]) and np.isnan(p_exact[i])
            continue
        ref = mcnemar(int(b01[i]), int(b10[i]))
        assert_allclose([chi2[i], p_cc[i]], [ref.chi2_cc, ref.p_cc], rtol=1e-12, atol=1e-300)
        assert_allclose(p_exact[i], ref.p_exact, rtol=1e-9, atol=1e-300)


def test_holm_families_orig_black_jointly_and_each_other_condition_alone():
    frame = pd.concat([make_frame(SMALL, "b1"), make_frame(SMALL, "b2")], ignore_index=True)
    table = mcnemar_table(frame, ReportSettings(cluster="question", n_resamples=50))
    for (_, condition), part in table.groupby(["benchmark", "condition"]):
        family = "orig+black" if condition in ("orig", "black") else condition
        assert (part["family"] == family).all()
    for _, part in table.groupby(["benchmark", "family"]):
        ok = part["p"].notna()
        assert (part["n_family"] == ok.sum()).all()
        assert_allclose(part.loc[ok, "p_holm"], _holm_by_hand(part.loc[ok, "p"].to_numpy()), atol=1e-15)
        assert part.loc[~ok, "p_holm"].isna().all()
        assert (part.loc[~ok, "b01"] + part.loc[~ok, "b10"] == 0).all()


def test_mcnemar_p_is_exact_below_25_discordant_pairs_and_1_when_they_tie():
    # b01 + b10 = 20 < 25 (exact), 12 = 12 (tie: p = 1), 30 + 10 = 40 (chi-square)
    cells = {"orig": (3, 17), "black": (12, 12), "crf28": (30, 10)}
    outcomes = {}
    for condition, (b01, b10) in cells.items():
        outcomes[("a", condition)] = [F] * b01 + [T] * b10 + [T] * 20
        outcomes[("b", condition)] = [T] * b01 + [F] * b10 + [T] * 20
    n = max(len(v) for v in outcomes.values())
    outcomes = {k: v + [F] * (n - len(v)) for k, v in outcomes.items()}
    table = mcnemar_table(make_frame(outcomes), ReportSettings(cluster="question", n_resamples=50)).set_index(
        "condition"
    )
    for condition, (b01, b10) in cells.items():
        row = table.loc[condition]
        assert (row["b01"], row["b10"]) == (b01, b10)
        sm = sm_mcnemar([[0, b01], [b10, 0]], exact=b01 + b10 < 25, correction=True).pvalue
        assert_allclose(row["p"], sm, rtol=1e-10)
        assert_allclose(row["p_exact"], sps.binomtest(b01, b01 + b10, 0.5).pvalue, rtol=1e-10)
        assert_allclose(row["p_cc"], sm_mcnemar([[0, b01], [b10, 0]], exact=False).pvalue, rtol=1e-10)
    assert table.loc["orig", "test"] == "exact binomial" and table.loc["black", "p"] == 1.0
    assert table.loc["crf28", "test"] == "chi-square (continuity corrected)"
    assert table.loc["orig", "p"] != table.loc["orig", "p_cc"]


def brute_bootstrap_ci(d: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile bootstrap CI of mean(d) by enumerating every multinomial draw of the distinct values:
    the smallest resampled mean whose cumulative probability reaches each tail."""
    values, counts = np.unique(d, return_counts=True)
    n, probs = len(d), counts / len(d)
    dist: dict[int, float] = {}

    def walk(k: int, left: int, total: int, logp: float, ways: float) -> None:
        if k == len(values) - 1:
            key = total + left * int(values[k])
            dist[key] = dist.get(key, 0.0) + ways * probs[k] ** left * np.exp(logp)
            return
        for j in range(left + 1):
            walk(k + 1, left - j, total + j * int(values[k]), logp + j * np.log(probs[k]), ways * math.comb(left, j))

    walk(0, n, 0, 0.0, 1.0)
    sums = sorted(dist)
    cdf = np.cumsum([dist[x] for x in sums])
    tail = (1 - level) / 2
    low = sums[int(np.searchsorted(cdf, tail - 1e-12))]
    high = sums[int(np.searchsorted(cdf, 1 - tail - 1e-12))]
    return low / n, high / n


def test_diff_ci_is_tangos_by_default_the_exact_bootstrap_as_an_option_and_monte_carlo_when_clustered():
    frame = make_frame(SMALL)
    keep = [0, 3, 4, 5, 6, 7, 8, 9]  # a vs b on orig: questions 0, 3..9
    a = np.array([SMALL[("a", "orig")][q] is True for q in keep])
    b = np.array([SMALL[("b", "orig")][q] is True for q in keep])
    videos = np.array([f"v{q // 2:03d}" for q in keep])  # two questions of one video: the default clusters
    row = mcnemar_table(frame, ReportSettings(ci_level=0.9)).iloc[0]
    tango = paired_difference_ci(a.astype(int) - b, level=0.9, clusters=videos)
    assert_allclose([row.diff_ci_low, row.diff_ci_high], [tango.low, tango.high], atol=1e-12)
    assert row.ci_method == tango.method and row.resample_unit == "video" and row.n_resamples == 0
    row = mcnemar_table(frame, ReportSettings(cluster="question", ci_level=0.9, ci_method="exact")).iloc[0]
    assert_allclose([row.diff_ci_low, row.diff_ci_high], brute_bootstrap_ci(a.astype(int) - b, 0.9), atol=1e-12)
    assert (row.ci_method, row.mc_se, row.n_resamples) == ("exact", 0.0, 0)
    options = ReportSettings(n_resamples=300, ci_level=0.9, cluster=True, ci_method="exact", mc_se_target=0.0)
    row = mcnemar_table(frame, options).iloc[0]
    qids = [f"v{q // 2:03d}-{q % 2}" for q in keep]
    ci = paired_bootstrap_diff(  # d's first non-zero entry is +1: the table's own orientation
        a,
        b,
        300,
        seed=question_set_seed(options, "mcnemar", "b", "orig", question_ids=qids),
        level=0.9,
        clusters=np.array([f"v{q // 2:03d}" for q in keep]),
    )
    assert_allclose([row.diff_ci_low, row.diff_ci_high], [ci.low, ci.high], atol=1e-12)
    assert (row.ci_method, row.n_resamples, row.resample_unit) == ("monte carlo", 300, "video")
    assert row.mc_se == max(ci.mc_se_low, ci.mc_se_high)


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_diff_ci_of_many_questions_is_the_paired_bootstrap_of_each_row(missing):
    # 240 questions: the bootstrap draws multinomial counts, so the table draws them from the cells alone.
    rng = np.random.default_rng(7)
    outcomes = {
        (model, condition): [E if rng.random() < 0.03 else bool(rng.random() < skill) for _ in range(240)]
        for model, skill in (("a", 0.7), ("b", 0.55))
        for condition in ("orig", "black", "crf38")
    }
    options = ReportSettings(
        cluster="question", n_resamples=400, missing=missing, ci_method="resample", mc_se_target=0.0
    )
    table = mcnemar_table(make_frame(outcomes), options)
    for row in table.itertuples():
        arms = (row.condition, "orig", "black")
        keep = [
            missing == "incorrect" or not any(outcomes[(m, c)][q] is E for m in "ab" for c in arms) for q in range(240)
        ]
        a = np.array([v is True for v in outcomes[("a", row.condition)]])[keep]
        b = np.array([v is True for v in outcomes[("b", row.condition)]])[keep]
        qids = [f"v{q // 2:03d}-{q % 2}" for q in range(240) if keep[q]]
        seed = question_set_seed(options, "mcnemar", "b", row.condition, question_ids=qids)
        d = a.astype(int) - b
        forward = d[np.flatnonzero(d)[0]] > 0  # resampled in the orientation of the first non-zero d
        ci = paired_bootstrap_diff(*((a, b) if forward else (b, a)), 400, seed=seed)
        assert ci.resampler == "multinomial"
        want = (ci.low, ci.high) if forward else (-ci.high, -ci.low)
        assert (row.diff_ci_low, row.diff_ci_high) == want
        assert (row.n, row.acc_a, row.acc_b) == (len(a), a.mean(), b.mean())


def test_validation_errors():
    frame = make_frame(SMALL)
    dup = pd.concat([frame, frame.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match=r"question 'v000-0' appears more than once under condition 'orig'"):
        mcnemar_table(dup)
    short = frame[~((frame["model"] == "c") & (frame["question_id"] == "v004-1"))]
    with pytest.raises(ValueError, match=r"models 'a' and 'c' answered different question sets .*v004-1"):
        mcnemar_table(short)
    with pytest.raises(ValueError, match="different question sets"):
        dissociation_table(short)


def test_empty_when_nothing_to_compare():
    one_model = make_frame({("a", "orig"): [T, F], ("a", "black"): [F, F]})
    assert list(mcnemar_table(one_model).columns) == list(COLUMNS) and mcnemar_table(one_model).empty
    no_black = make_frame({("a", "orig"): [T, F, T], ("b", "orig"): [F, F, T]})
    table = dissociation_table(no_black)
    assert table.empty and list(table.columns) == list(DISSOCIATION_COLUMNS)
    assert [a.name for a in ANALYSES] == ["mcnemar", "dissociation"]


def dissociated_frame(n_rest: int = 100) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """a and b tie on orig (b01 = 12, b10 = 10) but b wins on black (b01 = 40, b10 = 5)."""
    ao = [F] * 12 + [T] * 10 + [T] * n_rest
    bo = [T] * 12 + [F] * 10 + [T] * n_rest
    ab = [F] * 40 + [T] * 5 + [F] * 37 + [T] * (n_rest - 60)
    bb = [T] * 40 + [F] * 5 + [F] * 37 + [T] * (n_rest - 60)
    n = len(ao)
    ab, bb = ab + [F] * (n - len(ab)), bb + [F] * (n - len(bb))
    outcomes = {("a", "orig"): ao, ("b", "orig"): bo, ("a", "black"): ab, ("b", "black"): bb}
    arrays = {k[0] + "_" + k[1]: np.array(v, dtype=bool) for k, v in outcomes.items()}
    return make_frame(outcomes), arrays


def test_dissociation_pattern_tost_and_holm():
    frame, arr = dissociated_frame()
    options = ReportSettings(cluster="question", stability_resamples=400)
    row = dissociation_table(frame, options).iloc[0]
    assert (row.b01_orig, row.b10_orig, row.b01_black, row.b10_black) == (12, 10, 40, 5)
    p_o = sps.binomtest(12, 22, 0.5).pvalue  # 22 discordant pairs: the exact test
    p_b = sm_mcnemar([[0, 40], [5, 0]], exact=False, correction=True).pvalue
    assert_allclose([row.p_orig, row.p_black], [p_o, p_b], rtol=1e-10)
    assert_allclose([row.p_holm_orig, row.p_holm_black], _holm_by_hand(np.array([p_o, p_b])), rtol=1e-10)
    assert row.n_family == 2
    assert (row.differs_orig, row.differs_black, row.pattern, row.dissociation) == (False, True, "black only", True)
    d = (arr["a_orig"].astype(int) - arr["b_orig"]) - (arr["a_black"].astype(int) - arr["b_black"])
    assert_allclose(row.interaction, d.mean(), atol=1e-15)
    assert row.p_interaction < 0.05 and row.p_holm_interaction == row.p_interaction and row.n_family_interaction == 1
    tost_o = tost_paired(arr["a_orig"], arr["b_orig"], margin=0.05, alpha=0.05)
    tost_b = tost_paired(arr["a_black"], arr["b_black"], margin=0.05, alpha=0.05)
    assert_allclose([row.p_tost_orig, row.p_tost_black], [tost_o.p_tost, tost_b.p_tost], atol=1e-12)
    assert (row.equivalent_orig, row.equivalent_black) == (tost_o.equivalent, tost_b.equivalent)
    # The stability shares come from stability_pvalues with the documented seed.
    p_o_rs, p_b_rs = stability_pvalues(
        np.column_stack([arr["a_orig"], arr["b_orig"], arr["a_black"], arr["b_black"]]),
        400,
        question_set_seed(options, "dissociation", "b", "pair", question_ids=sorted(frame["question_id"].unique())),
    )
    assert row.share_black_p01 == (p_b_rs < 0.01).mean()
    assert row.share_orig_p01 == (p_o_rs < 0.01).mean()
    assert row.share_black_only_unadjusted == ((p_o_rs >= 0.05) & (p_b_rs < 0.05)).mean()
    # share_pattern: the label's own rule (Holm over the family) on the benchmark's resamples.
    want = naive_holm_shares(frame, options, "b")
    assert_allclose(row.share_pattern, want[("a", "b")], atol=1e-12)
    assert row.stability_resamples == 400 and row.resample_unit == "question"


def _sm_p(a: np.ndarray, b: np.ndarray, weight: np.ndarray) -> float:
    """statsmodels' McNemar p on weighted questions, exact below 25 discordant pairs (statsmodels gives 1 when
    they tie), else continuity-corrected chi-square, 1 when b01 = b10; NaN without a discordant pair."""
    b01 = float(weight[~a & b].sum())
    b10 = float(weight[a & ~b].sum())
    if b01 + b10 == 0:
        return np.nan
    if b01 == b10:
        return 1.0
    both = float(weight[a & b].sum())
    neither = float(weight[~a & ~b].sum())
    return float(sm_mcnemar([[neither, b01], [b10, both]], exact=b01 + b10 < 25, correction=True).pvalue)


def _holm_by_hand(p: np.ndarray) -> np.ndarray:
    """Holm step-down, written out: the i-th smallest p times (m - i), running maximum, capped at 1."""
    m = len(p)
    out = np.empty(m)
    running = 0.0
    for i, j in enumerate(sorted(range(m), key=lambda k: (p[k], k))):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out


def naive_holm_shares(frame: pd.DataFrame, options: ReportSettings, benchmark: str) -> dict[tuple[str, str], float]:
    """share_pattern recomputed independently: per resample of the benchmark's questions, every pair's
    orig and black p (statsmodels), Holm over all of them (statsmodels), and the pattern compared with the
    pattern the table reports for the full data."""
    sub = frame[frame["benchmark"] == benchmark]
    table = dissociation_table(sub, options)
    qids = np.array(sorted(sub["question_id"].unique()))
    right = sub.pivot_table(index="question_id", columns=["model", "condition"], values="correct", aggfunc="first")
    err = sub.assign(e=sub["status"] == "error").pivot_table(
        index="question_id", columns=["model", "condition"], values="e", aggfunc="first"
    )
    right, err = right.reindex(qids).fillna(False).astype(bool), err.reindex(qids).fillna(True).astype(bool)
    pairs = list(zip(table["model_a"], table["model_b"], table["pattern"], strict=True))
    arms = []
    for a, b, _ in pairs:
        keep = np.ones(len(qids), dtype=bool)
        if options.missing == "exclude":
            keep = ~(err[(a, "orig")] | err[(a, "black")] | err[(b, "orig")] | err[(b, "black")]).to_numpy()
        for cond in ("orig", "black"):
            arms.append((right[(a, cond)].to_numpy(), right[(b, cond)].to_numpy(), keep))
    hits = dict.fromkeys(((a, b) for a, b, _ in pairs), 0)
    total = 0
    seed = question_set_seed(options, "dissociation", benchmark, question_ids=qids)
    draws = resample_weights(len(qids), options.stability_resamples, seed)
    for weights in draws:
        for w in weights:
            ps = np.array([_sm_p(ca, cb, w * keep) for ca, cb, keep in arms])
            ok = ~np.isnan(ps)
            adjusted = np.full(ps.shape, np.nan)
            adjusted[ok] = _holm_by_hand(ps[ok])
            differs = np.nan_to_num(adjusted, nan=1.0) < options.alpha
            for i, (a, b, pattern) in enumerate(pairs):
                observed = {(True, True): "both", (True, False): "orig only", (False, True): "black only"}.get(
                    (bool(differs[2 * i]), bool(differs[2 * i + 1])), "neither"
                )
                hits[(a, b)] += observed == pattern
            total += 1
    return {k: v / total for k, v in hits.items()}


def holm_family_frame() -> pd.DataFrame:
    """Three models on 240 questions. On orig, a and b differ at p_cc = 0.027 (b01 = 15, b10 = 31): reliable
    unadjusted, not after Holm over the six orig/black p-values of the three pairs (it ranks fifth, so its Holm
    p is 2 x 0.027). On black they differ at p ~ 1e-6 (b01 = 40, b10 = 5)."""
    rng = np.random.default_rng(5)
    n = 240
    ao, bo, ab, bb = (np.zeros(n, dtype=bool) for _ in range(4))
    ao[:31] = True  # a right, b wrong: b10 = 31
    bo[31:46] = True  # a wrong, b right: b01 = 15
    ao[46:150] = bo[46:150] = True
    bb[:40] = True
    ab[40:45] = True
    outcomes = {
        ("a", "orig"): ao.tolist(),
        ("b", "orig"): bo.tolist(),
        ("c", "orig"): (rng.random(n) < 0.6).tolist(),
        ("a", "black"): ab.tolist(),
        ("b", "black"): bb.tolist(),
        ("c", "black"): (rng.random(n) < 0.3).tolist(),
    }
    return make_frame(outcomes)


def test_dissociation_label_and_its_stability_follow_one_rule():
    frame = holm_family_frame()
    options = ReportSettings(cluster="question", stability_resamples=60)
    table = dissociation_table(frame, options).set_index(["model_a", "model_b"])
    ab = table.loc[("a", "b")]
    assert (ab["b01_orig"], ab["b10_orig"], ab["b01_black"], ab["b10_black"]) == (15, 31, 40, 5)
    # Unadjusted, a and b differ on orig (p < 0.05); Holm over the family says they do not.
    assert_allclose(ab["p_orig"], mcnemar(15, 31).p_cc, atol=1e-15)  # 46 discordant pairs: the chi-square
    assert ab["p_orig"] < 0.05 < ab["p_holm_orig"] and ab["p_holm_black"] < 0.05
    assert ab["pattern"] == "black only"
    assert bool(ab["dissociation"]) == (ab["p_holm_interaction"] < 0.05)
    want = naive_holm_shares(frame, options, "b")
    for pair, share in want.items():
        assert_allclose(table.loc[pair, "share_pattern"], share, atol=1e-12, err_msg=str(pair))
    # The unadjusted event is another quantity, under its own name (and here another number).
    assert ab["share_black_only_unadjusted"] != ab["share_pattern"]


def test_holm_rows_equals_holm_row_by_row():
    rng = np.random.default_rng(1)
    p = rng.random((15, 7)) ** 3
    p[rng.random(p.shape) < 0.2] = np.nan
    p[0] = np.nan
    out = holm_rows(p)
    for row, got in zip(p, out, strict=True):
        ok = ~np.isnan(row)
        assert np.isnan(got[~ok]).all()
        if ok.any():
            assert_allclose(got[ok], _holm_by_hand(row[ok]), atol=1e-15)
    assert_allclose(out[1][~np.isnan(p[1])], multipletests(p[1][~np.isnan(p[1])], method="holm")[1], atol=1e-15)


def test_resample_weights_are_bootstrap_counts_independent_of_chunking():
    whole = np.vstack(list(resample_weights(30, 25, seed=4)))
    assert whole.shape == (25, 30) and (whole.sum(axis=1) == 30).all()
    again = np.vstack(list(resample_weights(30, 25, seed=4)))
    assert (whole == again).all()


def test_dissociation_pattern_names():
    frame, _ = dissociated_frame()
    swapped = frame.assign(condition=frame["condition"].map({"orig": "black", "black": "orig"}))
    row = dissociation_table(swapped, ReportSettings(cluster="question", stability_resamples=50)).iloc[0]
    assert (row.pattern, row.dissociation) == ("orig only", True)
    same = frame[frame["condition"] == "black"]
    both = pd.concat([same, same.assign(condition="orig")], ignore_index=True)
    row = dissociation_table(both, ReportSettings(cluster="question", stability_resamples=50)).iloc[0]
    assert (row.pattern, row.dissociation) == ("both", False)
    tied = frame[frame["condition"] == "orig"]
    neither = pd.concat([tied, tied.assign(condition="black")], ignore_index=True)
    row = dissociation_table(neither, ReportSettings(cluster="question", stability_resamples=50)).iloc[0]
    assert (row.pattern, row.dissociation) == ("neither", False)
    # the share of the observed pattern counts resamples with both p >= alpha
    assert row.share_pattern >= 0.5


def naive_stability(correct: np.ndarray, n_resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Resample question indices, recount the discordant cells, McNemar p via scipy's chi-square."""
    n = correct.shape[0]
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    out = []
    for a, b in ((0, 1), (2, 3)):
        ca, cb = correct[idx, a], correct[idx, b]
        b01 = (~ca & cb).sum(axis=1).astype(float)
        b10 = (ca & ~cb).sum(axis=1).astype(float)
        total = b01 + b10
        chi2 = (np.abs(b01 - b10) - 1) ** 2 / np.where(total > 0, total, 1)
        out.append(np.where(total > 0, sps.chi2.sf(chi2, 1), 1.0))
    return out[0], out[1]


def test_stability_matches_index_resampling_in_distribution():
    _, arr = dissociated_frame(n_rest=60)
    correct = np.column_stack([arr["a_orig"], arr["b_orig"], arr["a_black"], arr["b_black"]])
    p_o, p_b = stability_pvalues(correct, 20000, seed=1)
    q_o, q_b = naive_stability(correct, 20000, seed=2)
    for x, y in ((p_o, q_o), (p_b, q_b)):
        for cut in (0.01, 0.05):
            # two independent 20000-draw estimates of one share: SD of the difference <= 0.005
            assert abs((x < cut).mean() - (y < cut).mean()) < 0.02


def test_stability_by_cluster_runs_and_groups():
    _, arr = dissociated_frame(n_rest=60)
    correct = np.column_stack([arr["a_orig"], arr["b_orig"], arr["a_black"], arr["b_black"]])
    # one cluster holding every question: every resample is the observed data
    p_o, p_b = stability_pvalues(correct, 30, seed=3, clusters=np.zeros(len(correct)))
    assert_allclose(p_o, mcnemar(12, 10).p_cc, rtol=1e-12)
    assert_allclose(p_b, mcnemar(40, 5).p_cc, rtol=1e-12)
    frame, _ = dissociated_frame(n_rest=60)
    row = dissociation_table(frame, ReportSettings(cluster=True, stability_resamples=100)).iloc[0]
    assert row.resample_unit == "video" and 0 <= row.share_pattern <= 1


# ------------------------------------------------------------------------------ reference rows


@pytest.fixture(scope="module", name="reference_frame")
def reference_frame_fixture() -> pd.DataFrame:
    return reference_frame(files=ORIG_BLACK)


def test_reference_t2_and_42(reference_frame):
    table = mcnemar_table(reference_frame).set_index(["model_a", "model_b", "condition"])
    orig = table.loc[("internvl2", "qwen2vl", "orig")]
    black = table.loc[("internvl2", "qwen2vl", "black")]
    # the paper's matched 547: questions both answered under orig and black
    assert orig["n"] == black["n"] == 547 and orig["n_excluded"] == 53
    assert (orig["b01"], orig["b10"], black["b01"], black["b10"]) == (88, 66, 105, 61)
    checks = [
        ("T2", "VME IV2 vs Qwen p_orig", orig["p_cc"]),
        ("T2", "VME IV2 vs Qwen p_black (n=547)", black["p_cc"]),
        ("4.2", "VME matched IV2 orig acc", orig["acc_a"]),
        ("4.2", "VME matched Qwen orig acc", orig["acc_b"]),
        ("4.2", "IV2-Qwen diff CI lo (%)", 100 * orig["diff_ci_low"]),
        ("4.2", "IV2-Qwen diff CI hi (%)", 100 * orig["diff_ci_high"]),
    ]
    for tab, quantity, value in checks:
        want, tol = expected(tab, quantity)
        assert abs(value - want) <= tol, (tab, quantity, value, want)


def test_reference_42_stability(reference_frame):
    row = dissociation_table(reference_frame).set_index(["model_a", "model_b"]).loc[("internvl2", "qwen2vl")]
    # the paper's black-only dissociation is the descriptive pattern; the interaction test does not support it
    assert (row["n"], row["pattern"], row["dissociation"]) == (547, "black only", False)
    assert row["p_holm_interaction"] >= 0.05
    want, tol = expected("4.2", "% resamples black p<0.01")
    assert abs(100 * row["share_black_p01"] - want) <= tol  # 77.7 (expected 79.2 +- 3)
    # "% joint (orig p>.05 & black p<.05)": expected 50.3 +- 3 comes from one 1000-resample
    # stream; the share's long-run value is ~54.8 (checked against naive resampling below), so a
    # 1000-resample estimate has SD ~1.6 points and two of them differ by SD ~2.2. We get 53.9:
    # assert agreement within 3 SD of that difference instead of re-seeding to hit the tolerance.
    want, _ = expected("4.2", "% resamples joint (orig p>.05 & black p<.05)")
    assert abs(100 * row["share_black_only_unadjusted"] - want) <= 3 * 2.2


def test_reference_42_stability_long_run(reference_frame):
    """The vectorized multinomial draw and naive index resampling agree on the reference pair."""
    sub = reference_frame[
        reference_frame["model"].isin(["internvl2", "qwen2vl"]) & reference_frame["condition"].isin(["orig", "black"])
    ]
    wide = sub.pivot(index="question_id", columns=["model", "condition"], values="status")
    keep = ~(wide == "error").any(axis=1)
    right = sub.pivot(index="question_id", columns=["model", "condition"], values="correct").fillna(False)[keep]
    correct = right[
        [("internvl2", "orig"), ("qwen2vl", "orig"), ("internvl2", "black"), ("qwen2vl", "black")]
    ].to_numpy(dtype=bool)
    assert correct.shape == (547, 4)
    p_o, p_b = stability_pvalues(correct, 20000, seed=11)
    q_o, q_b = naive_stability(correct, 20000, seed=12)
    joint = ((p_o >= 0.05) & (p_b < 0.05)).mean()
    naive_joint = ((q_o >= 0.05) & (q_b < 0.05)).mean()
    assert abs(joint - naive_joint) < 0.02
    assert abs((p_b < 0.01).mean() - (q_b < 0.01).mean()) < 0.02
    assert abs(joint - 0.548) < 0.02  # the long-run joint share (reported), above the paper's 50.3


# ------------------------------------------------------------------------------ interaction


def equal_gap_frame() -> pd.DataFrame:
    """a leads b by 12 questions on orig and on black: orig b01 = 0, b10 = 12 (exact p = 2 / 2^12), black
    b01 = 40, b10 = 52 (p ~ 0.25). One p alone is significant; the gaps, and so the interaction, are equal."""
    n = 150
    ao, bo, ab, bb = (np.zeros(n, dtype=bool) for _ in range(4))
    ao[:12] = True
    ao[12:100] = bo[12:100] = True
    bb[:40] = True
    ab[40:92] = True
    return make_frame(
        {
            ("a", "orig"): ao.tolist(),
            ("b", "orig"): bo.tolist(),
            ("a", "black"): ab.tolist(),
            ("b", "black"): bb.tolist(),
        }
    )


def test_equal_gaps_are_no_dissociation_although_one_p_alone_is_significant():
    row = dissociation_table(equal_gap_frame(), ReportSettings(cluster="question", stability_resamples=50)).iloc[0]
    assert (row.b01_orig, row.b10_orig, row.b01_black, row.b10_black) == (0, 12, 40, 52)
    assert row.p_holm_orig < 0.05 <= row.p_holm_black and row.pattern == "orig only"
    assert row.interaction == 0 and row.p_interaction == 1.0
    assert not row.dissociation
    # a real interaction (dissociated_frame: gaps -2 and -35 questions) is labelled
    frame, _ = dissociated_frame()
    row = dissociation_table(frame, ReportSettings(cluster="question", stability_resamples=50)).iloc[0]
    assert row.pattern == "black only" and row.p_holm_interaction < 0.05 and row.dissociation


def brute_sign_flip(d: np.ndarray) -> float:
    """Two-sided sign-flip p by enumerating all 2^n sign vectors."""
    observed = abs(d.sum())
    signs = np.array(list(itertools.product([-1, 1], repeat=len(d))))
    return float((np.abs(signs @ d) >= observed - 1e-9).mean())


def test_interaction_p_and_ci_against_brute_force():
    rng = np.random.default_rng(2)
    n = 14
    outcomes = {(m, c): (rng.random(n) < q).tolist() for m, q in (("a", 0.6), ("b", 0.4)) for c in ("orig", "black")}
    row = dissociation_table(
        make_frame(outcomes), ReportSettings(cluster="question", stability_resamples=20, ci_level=0.9)
    ).iloc[0]
    arr = {k: np.array(v, dtype=int) for k, v in outcomes.items()}
    d = (arr[("a", "orig")] - arr[("b", "orig")]) - (arr[("a", "black")] - arr[("b", "black")])
    assert row.n_interaction_nonzero == np.count_nonzero(d)
    assert_allclose(row.p_interaction, brute_sign_flip(d), rtol=1e-9)
    assert_allclose([row.interaction_ci_low, row.interaction_ci_high], brute_bootstrap_ci(d, 0.9), atol=1e-12)
    assert (row.ci_method, row.mc_se, row.n_resamples) == ("exact", 0.0, 0)


def test_holm_interaction_over_the_pairs_of_the_benchmark():
    table = dissociation_table(holm_family_frame(), ReportSettings(cluster="question", stability_resamples=20))
    ok = table["p_interaction"].notna()
    assert_allclose(table.loc[ok, "p_holm_interaction"], _holm_by_hand(table.loc[ok, "p_interaction"].to_numpy()))
    assert (table["n_family_interaction"] == ok.sum()).all()


# ------------------------------------------------------------------------------ families, invariance


def test_one_holm_family_shared_with_dissociation_and_untouched_by_crf_levels():
    frame = holm_family_frame()
    options = ReportSettings(cluster="question", stability_resamples=20)
    mcn = mcnemar_table(frame, options).set_index(["model_a", "model_b", "condition"])
    dis = dissociation_table(frame, options).set_index(["model_a", "model_b"])
    for (a, b), row in dis.iterrows():
        for c in ("orig", "black"):
            assert row[f"p_{c}"] == mcn.loc[(a, b, c), "p"]
            assert row[f"p_holm_{c}"] == mcn.loc[(a, b, c), "p_holm"]
            assert row["n_family"] == mcn.loc[(a, b, c), "n_family"] == 6
    rng = np.random.default_rng(9)
    crf = frame[frame["condition"] == "orig"].assign(
        condition="crf28", correct=lambda f: rng.random(len(f)) < 0.5, parsed_pred="A"
    )
    more = pd.concat([frame, crf], ignore_index=True)
    mcn2 = mcnemar_table(more, options).set_index(["model_a", "model_b", "condition"])
    dis2 = dissociation_table(more, options).set_index(["model_a", "model_b"])
    anchor = mcn.index.get_level_values("condition").isin(["orig", "black"])
    pd.testing.assert_frame_equal(mcn2.loc[mcn.index[anchor]], mcn[anchor])
    pd.testing.assert_frame_equal(dis2, dis)
    assert (mcn2.xs("crf28", level="condition")["n_family"] == 3).all()


def _mirror(row: pd.Series) -> dict[str, object]:
    """A mcnemar or dissociation row as the swapped pair reports it."""
    out = dict(row)
    for x, y in [
        ("acc_a", "acc_b"),
        ("b01", "b10"),
        ("acc_a_orig", "acc_b_orig"),
        ("acc_a_black", "acc_b_black"),
        ("b01_orig", "b10_orig"),
        ("b01_black", "b10_black"),
    ]:
        if x in out:
            out[x], out[y] = row[y], row[x]
    for x in ("diff", "interaction"):
        if x in out:
            out[x] = -row[x]
    for low, high in (("diff_ci_low", "diff_ci_high"), ("interaction_ci_low", "interaction_ci_high")):
        if low in out:
            out[low], out[high] = -row[high], -row[low]
    return out


def _random_pair_frame(seed: int, models: dict[str, float], errors: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 120
    latent = rng.random(n)
    outcomes = {}
    for m, skill in models.items():
        for c, scale in (("orig", 1.0), ("black", 0.5), ("crf28", 0.9)):
            values = (latent * 0.5 + rng.random(n) * 0.5) < skill * scale
            outcomes[(m, c)] = [E if errors and rng.random() < 0.03 else bool(v) for v in values]
    return make_frame(outcomes)


@pytest.mark.parametrize("cluster", [False, True])
def test_rename_and_reverse_leave_pair_values_unchanged_up_to_orientation(cluster):
    frame = _random_pair_frame(4, {"a": 0.7, "b": 0.55})
    options = ReportSettings(stability_resamples=200, n_resamples=300, cluster=cluster, mc_se_target=0.0)
    renamed = frame.assign(model=frame["model"].map({"a": "zz_a", "b": "b"})).iloc[::-1].reset_index(drop=True)
    for compute in (mcnemar_table, dissociation_table):
        before = compute(frame, options)
        after = compute(renamed, options)
        assert (after["model_a"] == "b").all() and (after["model_b"] == "zz_a").all()
        for (_, x), (_, y) in zip(before.iterrows(), after.iterrows(), strict=True):
            want = _mirror(x)
            for key, value in want.items():
                if key in ("model_a", "model_b"):
                    continue
                got = y[key]
                if isinstance(value, float) and np.isnan(value):
                    assert np.isnan(got), key
                elif isinstance(value, (float, np.floating)):
                    assert_allclose(got, value, rtol=1e-12, atol=1e-15, err_msg=key)
                else:
                    assert got == value, key


def test_a_third_model_leaves_the_pairs_unadjusted_values_unchanged():
    options = ReportSettings(cluster="question", stability_resamples=200, n_resamples=300)
    two = _random_pair_frame(6, {"a": 0.7, "b": 0.55})
    third = _random_pair_frame(7, {"c": 0.6}, errors=False)
    three = pd.concat([two, third], ignore_index=True)
    unadjusted = {
        mcnemar_table: ["n", "acc_a", "acc_b", "diff", "diff_ci_low", "diff_ci_high", "b01", "b10", "p", "p_cc"],
        dissociation_table: [
            "n",
            "p_orig",
            "p_black",
            "interaction",
            "interaction_ci_low",
            "interaction_ci_high",
            "p_interaction",
            "share_black_p01",
            "share_orig_p01",
            "share_black_only_unadjusted",
        ],
    }
    for compute, columns in unadjusted.items():
        before = compute(two, options)
        after = compute(three, options)
        after = after[(after["model_a"] == "a") & (after["model_b"] == "b")].reset_index(drop=True)
        pd.testing.assert_frame_equal(after[columns], before[columns])


def test_on_a_graded_benchmark_a_score_of_one_half_or_more_counts_as_correct_and_the_table_says_so():
    rng = np.random.default_rng(5)
    scores = {(m, c, q): float(rng.choice([0.0, 0.4, 0.5, 0.9])) for m in ("a", "b") for c in ("orig", "black")
              for q in range(30)}  # fmt: skip

    def row(model, condition, question):
        score = scores[(model, condition, question)]
        return tidy_row(model, condition, f"q{question}", "graded", status="ok", pred=None, answer="4",
                        correct=score >= 0.5, score=score, scoring="metric:mra")  # fmt: skip

    frame = tidy_frame(row(m, c, q) for (m, c, q) in scores)
    table = mcnemar_table(frame, ReportSettings(cluster="question", n_resamples=200)).set_index("condition")
    for condition in ("orig", "black"):
        a = np.array([scores[("a", condition, q)] >= 0.5 for q in range(30)])
        b = np.array([scores[("b", condition, q)] >= 0.5 for q in range(30)])
        assert (table.at[condition, "b01"], table.at[condition, "b10"]) == (int((~a & b).sum()), int((a & ~b).sum()))
    assert set(table["scale"]) == {"graded score, correct when at least 0.5"}


@pytest.mark.parametrize("clustered", [False, True])
def test_stability_discordant_counts_are_the_sixteen_cells_summed(clustered):
    """``stability_pvalues`` reads the four discordant counts off the patterns before multiplying by the draws: the
    very p-values of totalling all 16 joint cells per resample, then summing out the other arm (bit for bit)."""
    from postprocess.analyses.mcnemar import _SWAP_CELL, _mcnemar_p_vector

    rng = np.random.default_rng(45)
    correct = rng.random((300, 4)) < np.array([0.7, 0.5, 0.4, 0.45])
    clusters = np.array([f"v{i // 3:03d}" for i in range(300)]) if clustered else None
    p_o, p_b = stability_pvalues(correct, 500, seed=9, clusters=clusters)
    # the straightforward computation, from the same multinomial draws
    cell = correct.astype(np.int64) @ np.array([8, 4, 2, 1])
    swapped = _SWAP_CELL[cell]
    differ = np.flatnonzero(cell != swapped)
    if differ.size and swapped[differ[0]] < cell[differ[0]]:
        cell = swapped
    if clusters is None:
        freq = np.bincount(cell, minlength=16)
        present = np.flatnonzero(freq)
        patterns, freq = np.eye(16, dtype=np.int64)[present], freq[present]
    else:
        _, inverse = np.unique(clusters, return_inverse=True)
        per_unit = np.zeros((inverse.max() + 1, 16), dtype=np.int64)
        np.add.at(per_unit, (inverse, cell), 1)
        rows = np.ascontiguousarray(per_unit).view(np.dtype((np.void, 16 * 8))).ravel()
        _, first, freq = np.unique(rows, return_index=True, return_counts=True)
        patterns = per_unit[first]
    draws = np.random.default_rng(9).multinomial(int(freq.sum()), freq / freq.sum(), size=500)
    counts = (draws @ patterns.astype(float)).reshape(500, 2, 2, 2, 2)
    orig, black = counts.sum(axis=(3, 4)), counts.sum(axis=(1, 2))
    assert np.array_equal(p_o, _mcnemar_p_vector(orig[:, 0, 1], orig[:, 1, 0]))
    assert np.array_equal(p_b, _mcnemar_p_vector(black[:, 0, 1], black[:, 1, 0]))
