"""Tests for postprocess.stats: cross-checks against scipy/statsmodels, identities, validation."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import ttost_paired

from postprocess import stats
from postprocess.stats import (
    binomial_test,
    bootstrap_mean,
    chi2_uniform,
    cohen_h,
    distributions,
    fisher,
    holm,
    intervals,
    mcnemar,
    paired_bootstrap_diff,
    tost_paired,
    wilson,
)
from vdg_tasks.vocabulary.seeding import stable_seed

TIGHT = 1e-12  # float-for-float reimplementations of a library formula


def vdg_values(n: int, seed: int, p=(0.12, 0.58, 0.30)) -> np.ndarray:
    """Synthetic per-question VDG in {-1, 0, +1}."""
    return np.random.default_rng(seed).choice([-1, 0, 1], size=n, p=p).astype(float)


# ----------------------------------------------------------------------------------- wilson


def test_wilson_reference_value():
    iv = wilson(3, 10)
    # statsmodels proportion_confint(3, 10, 0.05, method="wilson") = (0.10779126740630104, 0.6032218525388546)
    assert_allclose([iv.low, iv.high], [0.10779126740630104, 0.6032218525388546], atol=TIGHT)
    assert iv.estimate == 0.3 and iv.level == 0.95 and iv.k == 3 and iv.n == 10


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 5000),
    frac=st.floats(0, 1),
    level=st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999]),
)
def test_wilson_equals_statsmodels(n, frac, level):
    k = round(frac * n)
    iv = wilson(k, n, level=level)
    low, high = proportion_confint(k, n, alpha=1 - level, method="wilson")
    assert_allclose([iv.low, iv.high], [low, high], atol=TIGHT)
    assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0


def test_wilson_accepts_numpy_integers():
    assert wilson(np.int64(4), np.int32(9)) == wilson(4, 9)


@pytest.mark.parametrize(
    ("k", "n", "level", "match"),
    [
        (0, 0, 0.95, "n is 0"),
        (11, 10, 0.95, "k = 11 exceeds n = 10"),
        (-1, 10, 0.95, "k must be a non-negative integer"),
        (1, -10, 0.95, "n must be a non-negative integer"),
        (1.0, 10, 0.95, "k must be a non-negative integer"),
        (True, 10, 0.95, "k must be a non-negative integer"),
        (1, 10, 1.0, "level must be a number strictly between 0 and 1"),
        (1, 10, 0.0, "level must be a number strictly between 0 and 1"),
        (1, 10, 95, "level must be a number strictly between 0 and 1"),
    ],
)
def test_wilson_validation(k, n, level, match):
    with pytest.raises(ValueError, match=match):
        wilson(k, n, level=level)


# -------------------------------------------------------------------------------- bootstrap


def naive_index_means(values: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Textbook bootstrap: resample item indices with replacement, one row per resample."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(n_resamples, len(values)))
    return values[idx].mean(axis=1)


def naive_cluster_means(values: np.ndarray, clusters: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Textbook cluster bootstrap: resample cluster ids, pool their items, take the mean."""
    rng = np.random.default_rng(seed)
    ids = np.unique(clusters)
    members = [values[clusters == c] for c in ids]
    out = np.empty(n_resamples)
    for r in range(n_resamples):
        pick = rng.integers(0, len(ids), size=len(ids))
        out[r] = np.concatenate([members[i] for i in pick]).mean()
    return out


def test_bootstrap_estimate_and_schema():
    v = vdg_values(600, 1)
    ci = bootstrap_mean(v, seed=7)
    assert ci.estimate == pytest.approx(v.mean(), abs=TIGHT)
    assert ci.low <= ci.estimate <= ci.high
    assert (ci.level, ci.n, ci.n_clusters, ci.n_resamples, ci.seed) == (0.95, 600, 600, 2000, 7)
    assert ci.resampler == "multinomial"  # 3 distinct values among 600 items
    assert set(ci.as_dict()) == {f.name for f in dataclasses.fields(stats.BootstrapCI)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        ci.low = 0.0  # type: ignore[misc]


@pytest.mark.parametrize("resampler", ["multinomial", "index"])
def test_bootstrap_percentiles_are_np_quantile_of_resampled_means(resampler):
    v = vdg_values(300, 2)
    ci = bootstrap_mean(v, 500, seed=11, level=0.9, resampler=resampler)
    means, units, used = stats.resampled_means(v, None, np.random.default_rng(11), 500, resampler)
    assert (units, used) == (300, resampler)
    # percentile CI = np.quantile (linear) at (1 - level) / 2 and 1 - (1 - level) / 2
    assert_allclose([ci.low, ci.high], np.quantile(means, [0.05, 0.95]), atol=TIGHT)


def test_index_resampler_equals_textbook_index_resampling():
    v = vdg_values(200, 3)
    means, _, _ = stats.resampled_means(v, None, np.random.default_rng(5), 300, "index")
    # same draws as the naive loop-free textbook version, so equal up to summation order
    assert_allclose(means, naive_index_means(v, 300, 5), atol=1e-12)


def test_multinomial_and_index_paths_agree_in_distribution():
    v = vdg_values(600, 4)
    multi = bootstrap_mean(v, 20000, seed=21, resampler="multinomial")
    naive = np.quantile(naive_index_means(v, 20000, 22), [0.025, 0.975])
    # Monte Carlo error of a 2.5% quantile with 20000 resamples is ~0.001 here; 0.01 is generous.
    assert_allclose([multi.low, multi.high], naive, atol=0.01)
    idx = bootstrap_mean(v, 20000, seed=23, resampler="index")
    assert_allclose([multi.low, multi.high], [idx.low, idx.high], atol=0.01)


@pytest.mark.parametrize("resampler", ["multinomial", "index"])
def test_resampled_means_match_bootstrap_theory(resampler):
    # The bootstrap distribution of a mean has expectation mean(v) and SD = std(v, ddof=0) / sqrt(n).
    v = vdg_values(600, 5)
    means, _, _ = stats.resampled_means(v, None, np.random.default_rng(9), 20000, resampler)
    sd = v.std() / math.sqrt(len(v))
    # MC error of the mean of 20000 resamples is sd / 141; of their SD about sd / 200.
    assert_allclose(means.mean(), v.mean(), atol=5 * sd / 141)
    assert_allclose(means.std(), sd, rtol=0.03)


def test_bootstrap_continuous_values_use_index_path():
    v = np.random.default_rng(6).normal(size=400)
    ci = bootstrap_mean(v, 4000, seed=1)
    assert ci.resampler == "index"
    se = v.std() / math.sqrt(len(v))
    # percentile CI of a near-normal mean ~ mean +- 1.96 se; tolerance is ~0.1 se of MC + skew error
    assert_allclose([ci.low, ci.high], [v.mean() - 1.96 * se, v.mean() + 1.96 * se], atol=0.15 * se)


def test_bootstrap_deterministic_for_a_seed_and_different_for_another():
    v = vdg_values(500, 7)
    for resampler in ("multinomial", "index"):
        a = bootstrap_mean(v, seed=stable_seed("bootstrap", "m1"), resampler=resampler)
        b = bootstrap_mean(v, seed=stable_seed("bootstrap", "m1"), resampler=resampler)
        c = bootstrap_mean(v, seed=stable_seed("bootstrap", "m2"), resampler=resampler)
        assert a == b
        assert (a.low, a.high) != (c.low, c.high)


def test_bootstrap_chunking_gives_the_same_numbers(monkeypatch):
    v = vdg_values(500, 8)
    cl = np.random.default_rng(0).integers(0, 150, size=500)
    ref = [
        bootstrap_mean(v, 1000, seed=3, resampler=r, clusters=c) for r in ("multinomial", "index") for c in (None, cl)
    ]
    monkeypatch.setattr(intervals, "_CHUNK_ELEMENTS", 997)  # forces many uneven chunks
    got = [
        bootstrap_mean(v, 1000, seed=3, resampler=r, clusters=c) for r in ("multinomial", "index") for c in (None, cl)
    ]
    assert got == ref


def test_bootstrap_degenerate_inputs():
    one = bootstrap_mean([0.5], seed=1)
    assert (one.estimate, one.low, one.high, one.n) == (0.5, 0.5, 0.5, 1)
    const = bootstrap_mean(np.ones(50), seed=1)
    assert (const.low, const.high) == (1.0, 1.0)
    booleans = bootstrap_mean(np.array([True, False, True, True]), seed=1)
    assert booleans.estimate == 0.75


def test_cluster_bootstrap_singletons_equal_plain_bootstrap():
    v = vdg_values(600, 9)
    plain = bootstrap_mean(v, seed=13)
    # multinomial path: distinct (sum, size) pairs of singletons are the distinct values, so the
    # very same counts are drawn
    single = bootstrap_mean(v, seed=13, clusters=np.arange(600)[::-1].astype(str))
    assert single.n_clusters == 600 and single.resampler == "multinomial"
    assert_allclose([single.low, single.high], [plain.low, plain.high], atol=TIGHT)
    # index path: clusters are re-ordered by id, so the draws differ but the distribution agrees
    p_idx = bootstrap_mean(v, 20000, seed=14, resampler="index")
    c_idx = bootstrap_mean(v, 20000, seed=15, resampler="index", clusters=np.random.default_rng(1).permutation(600))
    assert_allclose([c_idx.low, c_idx.high], [p_idx.low, p_idx.high], atol=0.01)


def test_cluster_bootstrap_of_duplicated_items_equals_plain_bootstrap():
    # Each value twice in its own cluster: cluster (sum, size) = (2v, 1*2); resampled means and the
    # multinomial draws are those of the plain bootstrap on v (identity, not just in distribution).
    v = vdg_values(300, 10)
    plain = bootstrap_mean(v, seed=17)
    dup = bootstrap_mean(np.repeat(v, 2), seed=17, clusters=np.repeat(np.arange(300), 2))
    assert (dup.n, dup.n_clusters) == (600, 300)
    assert_allclose([dup.low, dup.high], [plain.low, plain.high], atol=TIGHT)


@pytest.mark.parametrize("resampler", ["multinomial", "index"])
def test_cluster_bootstrap_agrees_with_textbook_cluster_resampling(resampler):
    rng = np.random.default_rng(11)
    clusters = np.repeat(np.arange(120), rng.integers(1, 4, size=120))  # videos with 1-3 questions
    # correlated within a cluster: a per-video effect
    v = np.clip(np.round(rng.normal(size=120)[clusters] * 0.7 + rng.normal(size=len(clusters)) * 0.4), -1, 1)
    fast = bootstrap_mean(v, 20000, seed=31, clusters=clusters, resampler=resampler)
    assert fast.resampler == resampler
    naive = np.quantile(naive_cluster_means(v, clusters, 20000, 32), [0.025, 0.975])
    # SE of the mean here is ~0.06; 20000-resample MC error of the endpoints is ~0.003
    assert_allclose([fast.low, fast.high], naive, atol=0.012)
    plain = bootstrap_mean(v, 20000, seed=33)
    assert fast.high - fast.low > plain.high - plain.low  # positive intra-cluster correlation


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"values": []}, "values is empty"),
        ({"values": np.zeros((3, 2))}, r"values must be one-dimensional, got shape \(3, 2\)"),
        ({"values": [0.0, np.nan]}, r"values\[1\] is nan: values must be finite"),
        ({"values": [0.0, np.inf]}, r"values\[1\] is inf"),
        ({"values": ["a", "b"]}, "values must hold real numbers or booleans"),
        ({"seed": -1}, "seed must be a non-negative int"),
        ({"seed": 1.5}, "seed must be a non-negative int"),
        ({"seed": None}, "seed must be a non-negative int"),
        ({"n_resamples": 0}, "n_resamples must be a positive int"),
        ({"n_resamples": 10.0}, "n_resamples must be a positive int"),
        ({"level": 1.0}, "level must be a number strictly between 0 and 1"),
        ({"clusters": [1, 2]}, "clusters has 2 entries but values has 3"),
        ({"clusters": [[1, 2, 3]]}, "clusters must be one-dimensional"),
        ({"resampler": "fast"}, "resampler must be 'auto', 'multinomial' or 'index'"),
    ],
)
def test_bootstrap_validation(kwargs, match):
    args = {"values": [1.0, 0.0, -1.0], "seed": 1} | kwargs
    with pytest.raises(ValueError, match=match):
        bootstrap_mean(**args)


def test_bootstrap_seed_is_required():
    with pytest.raises(TypeError, match="seed"):
        bootstrap_mean([1.0, 0.0])  # type: ignore[call-arg]


# --------------------------------------------------------------------- paired_bootstrap_diff


def test_paired_bootstrap_diff_is_bootstrap_of_differences():
    rng = np.random.default_rng(14)
    a = rng.random(500) < 0.6
    b = rng.random(500) < 0.5
    d = paired_bootstrap_diff(a, b, seed=3)
    assert d == bootstrap_mean(a.astype(float) - b.astype(float), seed=3)
    assert d.estimate == pytest.approx(a.mean() - b.mean(), abs=TIGHT)


def test_paired_bootstrap_diff_agrees_with_four_outcome_multinomial():
    rng = np.random.default_rng(15)
    a = (rng.random(600) < 0.6).astype(int)
    b = np.where(rng.random(600) < 0.7, a, 1 - a)  # correlated pairs
    joint = np.bincount(2 * a + b, minlength=4)  # (0,0), (0,1), (1,0), (1,1)
    counts = np.random.default_rng(41).multinomial(600, joint / 600, size=20000)
    # diff of a resample = (#(1,0) - #(0,1)) / n
    ref = np.quantile((counts[:, 2] - counts[:, 1]) / 600, [0.025, 0.975])
    got = paired_bootstrap_diff(a, b, 20000, seed=42)
    assert_allclose([got.low, got.high], ref, atol=0.01)


def test_paired_bootstrap_diff_validation():
    with pytest.raises(ValueError, match="a and b must be paired"):
        paired_bootstrap_diff([1, 0, 1], [1, 0], seed=1)
    with pytest.raises(ValueError, match="b is empty"):
        paired_bootstrap_diff([1], [], seed=1)


# ---------------------------------------------------------------------------------- mcnemar


def test_mcnemar_reference_value():
    r = mcnemar(88, 66)
    # tests/data/awg-videomme/README.md: InternVL2 vs Qwen2-VL, matched 547, orig: b01/b10 = 88/66, p = 0.0906
    assert_allclose(r.p_cc, 0.0906, atol=5e-5)
    assert_allclose(r.chi2_cc, 21**2 / 154, atol=TIGHT)  # (|88 - 66| - 1)^2 / 154


@pytest.mark.parametrize(("b01", "b10"), [(88, 66), (66, 88), (0, 1), (1, 0), (5, 5), (0, 20), (3, 4), (400, 350)])
def test_mcnemar_equals_statsmodels_and_binomtest(b01, b10):
    r = mcnemar(b01, b10)
    table = [[100, b01], [b10, 100]]
    cc = sm_mcnemar(table, exact=False, correction=True)
    ex = sm_mcnemar(table, exact=True)
    assert_allclose([r.chi2_cc, r.p_cc], [cc.statistic, cc.pvalue], atol=TIGHT)
    assert_allclose(r.p_exact, ex.pvalue, atol=1e-12)
    # identity: exact McNemar is a two-sided binomial test on the discordant pairs
    assert_allclose(r.p_exact, sps.binomtest(b01, b01 + b10, 0.5).pvalue, atol=TIGHT)
    assert (r.b01, r.b10) == (b01, b10)


def test_mcnemar_equal_discordant_counts_follow_statsmodels_unclamped_correction():
    r = mcnemar(5, 5)
    # statsmodels: (|5 - 5| - 1)^2 / 10 = 0.1 (the -1 is not clamped at 0), p = chi2.sf(0.1, 1)
    assert_allclose([r.chi2_cc, r.p_cc], [0.1, 0.7518296340458492], atol=TIGHT)
    assert r.p_exact == 1.0


@pytest.mark.parametrize(
    ("b01", "b10", "match"),
    [
        (0, 0, "no discordant pairs"),
        (-1, 3, "b01 must be a non-negative integer"),
        (3, 2.5, "b10 must be a non-negative integer"),
    ],
)
def test_mcnemar_validation(b01, b10, match):
    with pytest.raises(ValueError, match=match):
        mcnemar(b01, b10)


# ----------------------------------------------------------------------------------- fisher


def test_fisher_reference_value():
    r = fisher(3, 1, 1, 3)
    # Fisher's tea-tasting table: P(X >= 3) under the hypergeometric(8, 4, 4) = (16 + 1) / 70
    assert_allclose(r.p_greater, 17 / 70, atol=TIGHT)
    assert_allclose(r.p_two_sided, 34 / 70, atol=TIGHT)
    assert r.odds_ratio == 9.0 and r.table == ((3, 1), (1, 3))
    assert r.as_dict()["table"] == ((3, 1), (1, 3))


@pytest.mark.parametrize("cells", [(3, 1, 1, 3), (10, 2, 3, 15), (0, 5, 5, 0), (7, 0, 2, 9), (40, 37, 12, 80)])
def test_fisher_equals_scipy(cells):
    a, b, c, d = cells
    r = fisher(*cells)
    tab = [[a, b], [c, d]]
    for alt, got in (("two-sided", r.p_two_sided), ("greater", r.p_greater), ("less", r.p_less)):
        assert_allclose(got, sps.fisher_exact(tab, alternative=alt).pvalue, atol=TIGHT)
    assert r.odds_ratio == sps.fisher_exact(tab).statistic


def test_fisher_odds_ratio_infinite_when_off_diagonal_product_is_zero():
    assert fisher(7, 0, 2, 9).odds_ratio == math.inf


@pytest.mark.parametrize(
    ("cells", "match"),
    [
        ((0, 0, 3, 4), r"empty row \(a, b\)"),
        ((0, 3, 0, 4), r"empty column \(a, c\)"),
        ((-1, 3, 2, 4), "a must be a non-negative integer"),
        ((1, 3, 2, 4.5), "d must be a non-negative integer"),
    ],
)
def test_fisher_validation(cells, match):
    with pytest.raises(ValueError, match=match):
        fisher(*cells)


# ------------------------------------------------------------------------------------- tost


@pytest.mark.parametrize(("seed", "margin", "alpha"), [(0, 0.05, 0.05), (1, 0.02, 0.05), (2, 0.1, 0.01)])
def test_tost_equals_statsmodels_ttost_paired(seed, margin, alpha):
    rng = np.random.default_rng(seed)
    a = (rng.random(600) < 0.55).astype(float)
    b = np.where(rng.random(600) < 0.8, a, 1 - a)
    r = tost_paired(a, b, margin=margin, alpha=alpha)
    p, (_, p1, df1), (_, p2, _) = ttost_paired(a, b, -margin, margin)
    assert_allclose([r.p_tost, r.p_lower, r.p_upper], [p, p1, p2], atol=1e-12)
    assert df1 == 599 and r.n == 600
    assert_allclose(r.diff, np.mean(a - b), atol=TIGHT)
    assert_allclose(r.se, np.std(a - b, ddof=1) / math.sqrt(600), atol=TIGHT)
    # (1 - 2 alpha) t interval, cross-checked with scipy's t.interval
    lo, hi = sps.t.interval(1 - 2 * alpha, 599, loc=r.diff, scale=r.se)
    assert_allclose([r.low, r.high], [lo, hi], atol=TIGHT)
    assert r.level == pytest.approx(1 - 2 * alpha)
    # identity: TOST rejects at alpha iff the (1 - 2 alpha) interval lies inside the margins
    assert r.equivalent == (-margin < r.low and r.high < margin)


def test_tost_declares_equivalence_for_nearly_identical_models():
    rng = np.random.default_rng(3)
    a = (rng.random(3000) < 0.6).astype(int)
    b = a.copy()
    flip = rng.choice(3000, size=60, replace=False)
    b[flip] = 1 - b[flip]
    r = tost_paired(a, b, margin=0.03)
    assert r.equivalent and r.p_tost < 0.05
    assert not tost_paired(a, b, margin=0.001).equivalent


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "match"),
    [
        ([1, 0, 1], [1, 0], {}, "a and b must be paired"),
        ([1], [0], {}, "Need at least 2 pairs"),
        ([1, 0, 1], [1, 0, 1], {}, "zero variance"),
        ([1, 0, 1], [0, 0, 1], {"margin": 0}, "margin must be a positive number"),
        ([1, 0, 1], [0, 0, 1], {"alpha": 0.5}, "alpha must be below 0.5"),
        ([1, 0, 1], [0, 0, 1], {"alpha": 0}, "alpha must be a number strictly between 0 and 1"),
        ([], [], {}, "a is empty"),
    ],
)
def test_tost_validation(a, b, kwargs, match):
    with pytest.raises(ValueError, match=match):
        tost_paired(a, b, **kwargs)


# ------------------------------------------------------------------------------------- holm


def test_holm_reference_value():
    # by hand: sorted 0.01, 0.03, 0.04 -> 3*0.01, max(0.03, 2*0.03), max(0.06, 1*0.04)
    assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06], atol=TIGHT)


def test_holm_equals_statsmodels():
    rng = np.random.default_rng(16)
    cases = [[0.0], [1.0], [0.05, 0.05, 0.05], [0.0, 1.0, 0.5, 0.5], [0.2, 0.01, 0.6, 0.01, 0.04]]
    for m in (2, 7, 40, 500):
        cases.append(rng.random(m))
        cases.append(rng.choice([0.001, 0.01, 0.02, 0.5], size=m))  # many ties
        cases.append(rng.random(m) ** 6)  # many small p-values
    for pvalues in cases:
        assert_allclose(holm(pvalues), multipletests(pvalues, method="holm")[1], atol=TIGHT)


@pytest.mark.parametrize(
    ("pvalues", "match"),
    [
        ([], "pvalues is empty"),
        ([0.1, 1.2], r"pvalues must lie in \[0, 1\]"),
        ([0.1, -0.1], r"pvalues must lie in \[0, 1\]"),
        ([0.1, np.nan], "must be finite"),
        ([[0.1, 0.2]], "pvalues must be one-dimensional"),
    ],
)
def test_holm_validation(pvalues, match):
    with pytest.raises(ValueError, match=match):
        holm(pvalues)


# ---------------------------------------------------------------------------------- cohen_h


def test_cohen_h_values():
    assert cohen_h(0.5, 0.5) == 0.0
    assert_allclose(cohen_h(1.0, 0.0), math.pi, atol=TIGHT)  # 2 asin(1) - 2 asin(0) = pi
    # by hand: 2 asin(sqrt 0.5) - 2 asin(sqrt 0.25) = pi/2 - pi/3 = pi/6
    assert_allclose(cohen_h(0.5, 0.25), math.pi / 6, atol=TIGHT)
    assert cohen_h(0.3, 0.7) == -cohen_h(0.7, 0.3)


@pytest.mark.parametrize(
    ("p1", "p2", "match"),
    [
        (1.1, 0.5, "p1 must be a proportion"),
        (0.5, -0.1, "p2 must be"),
        (float("nan"), 0.5, "p1 must be"),
        ("0.5", 0.5, "p1 must be"),
    ],
)
def test_cohen_h_validation(p1, p2, match):
    with pytest.raises(ValueError, match=match):
        cohen_h(p1, p2)


# ----------------------------------------------------------------------------- chi2_uniform


def test_chi2_uniform_reference_value():
    r = chi2_uniform([10, 20, 30])
    # by hand: expected 20 each -> (100 + 0 + 100) / 20 = 10, df = 2, p = exp(-10 / 2)
    assert (r.chi2, r.df) == (10.0, 2)
    assert_allclose(r.p, math.exp(-5), atol=TIGHT)


@pytest.mark.parametrize("counts", [[5, 5], [0, 3, 9, 4], [100, 95, 110, 80, 120, 97], np.array([1.0, 2.0, 0.0])])
def test_chi2_uniform_equals_scipy(counts):
    r = chi2_uniform(counts)
    ref = sps.chisquare(counts)
    assert_allclose([r.chi2, r.p], [ref.statistic, ref.pvalue], atol=TIGHT)
    assert r.df == len(counts) - 1
    assert r.as_dict() == {"chi2": r.chi2, "df": r.df, "p": r.p}


@pytest.mark.parametrize(
    ("counts", "match"),
    [
        ([5], "at least 2 categories"),
        ([0, 0, 0], "counts are all zero"),
        ([1, -2, 3], "non-negative counts"),
        ([1.5, 2], "integer counts"),
        ([True, False], "integer counts"),
        (["a", "b"], "integer counts"),
        ([[1, 2], [3, 4]], "counts must be one-dimensional"),
    ],
)
def test_chi2_uniform_validation(counts, match):
    with pytest.raises(ValueError, match=match):
        chi2_uniform(counts)


# ---------------------------------------------------------------------------- binomial_test


def test_binomial_test_reference_value():
    # by hand: 3 of 3 at p0 = 0.5; outcomes at most as likely: k = 0 and k = 3, each 1/8 -> p = 1/4
    r = binomial_test(3, 3, 0.5)
    assert (r.k, r.n, r.p0, r.estimate) == (3, 3, 0.5, 1.0)
    assert_allclose(r.p_value, 0.25, atol=TIGHT)


@pytest.mark.parametrize(("k", "n", "p0"), [(0, 10, 0.2), (7, 20, 0.25), (40, 129, 0.2), (12, 12, 0.9), (5, 9, 1 / 3)])
def test_binomial_test_equals_scipy(k, n, p0):
    r = binomial_test(k, n, p0)
    assert_allclose(r.p_value, sps.binomtest(k, n, p0).pvalue, atol=TIGHT)
    assert r.estimate == k / n


@pytest.mark.parametrize(
    ("k", "n", "p0", "match"),
    [(1, 0, 0.5, "n is 0"), (4, 3, 0.5, "exceeds"), (1, 3, 1.5, "p0 must be a proportion"), (-1, 3, 0.5, "k must")],
)
def test_binomial_test_validation(k, n, p0, match):
    with pytest.raises(ValueError, match=match):
        binomial_test(k, n, p0)


# ------------------------------------------------------------------------------------ schema


def test_every_result_has_as_dict_with_its_fields():
    results = [
        wilson(1, 2),
        bootstrap_mean([1.0, 0.0], 10, seed=1),
        mcnemar(3, 1),
        fisher(1, 2, 3, 4),
        tost_paired([1, 0, 1, 1], [0, 0, 1, 0]),
        chi2_uniform([1, 2]),
        binomial_test(1, 2, 0.5),
    ]
    for r in results:
        assert dataclasses.is_dataclass(r)
        assert list(r.as_dict()) == [f.name for f in dataclasses.fields(r)]


# ------------------------------------------------------------------- distributions (scipy.special)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 400),
    frac=st.floats(0, 1),
    p=st.sampled_from([0.5, 0.25, 1 / 3, 0.2, 1 / 6]) | st.floats(0.001, 0.999),
)
def test_binomial_functions_equal_scipy_stats(n, frac, p):
    k = np.arange(int(frac * n) + 1)
    assert_allclose(stats.binom_pmf(k, n, p), sps.binom.pmf(k, n, p), rtol=TIGHT, atol=0)
    assert_allclose(stats.binom_cdf(k, n, p), sps.binom.cdf(k, n, p), rtol=TIGHT, atol=0)
    assert_allclose(stats.binom_sf(k, n, p), sps.binom.sf(k, n, p), rtol=TIGHT, atol=0)


def test_binomial_functions_fall_back_to_scipy_stats_without_the_private_ufuncs(monkeypatch):
    monkeypatch.setattr(distributions, "_ufuncs", object())  # a scipy keeping them elsewhere
    k = np.arange(11)
    assert_allclose(stats.binom_pmf(k, 10, 0.3), sps.binom.pmf(k, 10, 0.3), rtol=TIGHT)
    assert_allclose(stats.binom_sf(k, 10, 0.3), sps.binom.sf(k, 10, 0.3), rtol=TIGHT)
    r = fisher(10, 2, 3, 15)
    assert_allclose(r.p_two_sided, sps.fisher_exact([[10, 2], [3, 15]]).pvalue, rtol=TIGHT)
    assert_allclose(r.p_less, sps.fisher_exact([[10, 2], [3, 15]], alternative="less").pvalue, rtol=TIGHT)


@settings(max_examples=60, deadline=None)
@given(x=st.floats(-50, 50), df=st.integers(1, 2000))
def test_continuous_tails_equal_scipy_stats(x, df):
    assert_allclose(stats.chi2_sf(abs(x), df), sps.chi2.sf(abs(x), df), rtol=TIGHT, atol=0)
    assert_allclose(stats.t_sf(x, df), sps.t.sf(x, df), rtol=TIGHT, atol=0)
    assert_allclose(stats.normal_sf(x), sps.norm.sf(x), rtol=TIGHT, atol=0)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 5),
    cols=st.integers(2, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_chi2_independence_equals_scipy_chi2_contingency(rows, cols, seed):
    table = np.random.default_rng(seed).integers(1, 60, (rows, cols))
    result, expected = stats.chi2_independence(table)
    ref = sps.chi2_contingency(table, correction=False)
    assert (result.chi2, result.df) == (pytest.approx(ref.statistic, rel=TIGHT, abs=TIGHT), ref.dof)
    assert_allclose(result.p, ref.pvalue, rtol=TIGHT)
    assert_allclose(expected, ref.expected_freq, rtol=TIGHT)


def test_chi2_independence_by_hand_and_refusals():
    # rows (10, 10), columns (10, 10), total 20: every expected count is 5; chi2 = 4 * (8 - 5)^2 / 5
    result, expected = stats.chi2_independence([[8, 2], [2, 8]])
    assert result.chi2 == pytest.approx(7.2) and result.df == 1 and (expected == 5).all()
    with pytest.raises(ValueError, match="row or column of zeros"):
        stats.chi2_independence([[3, 0], [4, 0]])
    with pytest.raises(ValueError, match="2-D table"):
        stats.chi2_independence([3, 4])


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(3, 60),
    seed=st.integers(0, 2**32 - 1),
    ties=st.booleans(),
)
def test_correlations_equal_scipy_stats(n, seed, ties):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n).astype(float) if ties else rng.normal(size=n)
    b = rng.integers(0, 3, n).astype(float) if ties else a + rng.normal(size=n)
    if np.unique(a).size < 2 or np.unique(b).size < 2:
        return
    for ours, theirs in ((stats.spearman(a, b), sps.spearmanr(a, b)), (stats.pearson(a, b), sps.pearsonr(a, b))):
        assert ours[0] == pytest.approx(theirs.statistic, rel=1e-14, abs=1e-15)
        assert ours[1] == pytest.approx(theirs.pvalue, rel=1e-12, abs=1e-300)


def test_perfect_correlation_has_p_zero():
    a = np.arange(6.0)
    assert stats.spearman(a, a) == (pytest.approx(1.0), 0.0)
    assert stats.pearson(a, -2 * a) == (pytest.approx(-1.0), pytest.approx(0.0, abs=1e-15))


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 500),
    frac=st.floats(0, 1),
    p0=st.sampled_from([0.5, 0.25, 0.2, 1 / 3, 0.1]) | st.floats(0.001, 0.999),
)
def test_two_sided_binomial_p_is_scipys_own_arithmetic(n, frac, p0):
    k = round(frac * n)
    assert binomial_test(k, n, p0).p_value == pytest.approx(sps.binomtest(k, n, p0).pvalue, rel=1e-14, abs=0)


@settings(max_examples=150, deadline=None)
@given(cells=st.tuples(*[st.integers(0, 60)] * 4))
def test_two_sided_fisher_p_is_scipys_own_arithmetic(cells):
    a, b, c, d = cells
    if min(a + b, c + d, a + c, b + d) == 0:
        return
    expected = sps.fisher_exact([[a, b], [c, d]]).pvalue
    assert fisher(*cells).p_two_sided == pytest.approx(expected, rel=1e-14, abs=0)


def test_a_table_as_likely_as_the_mode_has_p_exactly_one():
    # Summing the pmf of every outcome gives 0.9999999999999999 here; the report prints 1.
    assert fisher(3, 3, 3, 3).p_two_sided == 1.0
    assert binomial_test(4, 9, 0.5).p_value == 1.0 == binomial_test(5, 10, 0.5).p_value


def test_a_correlation_is_undefined_below_three_points_or_on_a_constant_side():
    for correlation in (stats.spearman, stats.pearson):
        assert np.isnan(correlation([1.0, 2.0], [2.0, 1.0])).all()
        assert np.isnan(correlation([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0])).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_welch_equals_scipy_ttest_ind_unequal_variances(seed, level):
    rng = np.random.default_rng(seed)
    a = rng.integers(-1, 2, size=40 + seed).astype(float)
    b = rng.normal(0.2, 2.0, size=13)
    ours = stats.welch(a, b, level)
    theirs = sps.ttest_ind(a, b, equal_var=False)
    ci = theirs.confidence_interval(confidence_level=level)
    assert ours.p == pytest.approx(theirs.pvalue, rel=1e-9)
    assert ours.df == pytest.approx(theirs.df, rel=1e-9)
    assert (ours.low, ours.high) == pytest.approx((ci.low, ci.high), rel=1e-9)
    assert ours.diff == pytest.approx(a.mean() - b.mean())


@pytest.mark.parametrize(
    "a, b, match", [([1.0], [0.0, 1.0], "at least 2"), ([1.0, 1.0], [0.0, 0.0], "Neither side varies")]
)
def test_welch_validation(a, b, match):
    with pytest.raises(ValueError, match=match):
        stats.welch(a, b)
