"""Tests for postprocess.stats.hypothesis_tests: cross-checks against scipy/statsmodels, identities, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ttost_paired

from postprocess import stats
from postprocess.stats import binomial_test, chi2_uniform, cohen_h, fisher, holm, mcnemar, tost_paired
from tests.helpers.stats_cases import TIGHT

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


# ------------------------------------------------------------------------ chi2_independence


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


# ----------------------------------------------------------------- two-sided exact p-values


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


# ------------------------------------------------------------------------------------ welch


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
