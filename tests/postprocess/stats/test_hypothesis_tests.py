"""Tests for postprocess.stats.hypothesis_tests: each wrapper of scipy/statsmodels against a published value or a
calculation written here (exact enumeration in rational arithmetic, the textbook formula), identities, validation.
``mcnemar_many`` (statsmodels' formulas over arrays) is also checked against statsmodels' ``mcnemar``."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import special
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from postprocess import stats
from postprocess.stats import binomial_test, chi2_uniform, cohen_h, fisher, holm, mcnemar, tost_paired
from tests.helpers.stats_cases import TIGHT


def chi2_upper_tail(x: float, df: int) -> float:
    """P(chi2_df > x) as the regularized upper incomplete gamma Q(df / 2, x / 2)."""
    return float(special.gammaincc(df / 2.0, x / 2.0))


def two_sided_exact(pmf: list[Fraction], observed: int, relative_tolerance: float) -> float:
    """Sum of the outcomes at most as likely as the observed one (within the relative tolerance scipy allows),
    from an exact pmf."""
    threshold = pmf[observed] * (1 + Fraction(relative_tolerance))
    return float(min(Fraction(1), sum(p for p in pmf if p <= threshold)))


def binomial_pmf(n: int, p0: float) -> list[Fraction]:
    q = Fraction(p0)
    return [math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(n + 1)]


def hypergeometric_pmf(total: int, row1: int, col1: int) -> dict[int, Fraction]:
    """P(a = x) for a 2 x 2 table with fixed margins: first row row1, first column col1, total items."""
    low, high = max(0, col1 - (total - row1)), min(col1, row1)
    denominator = math.comb(total, col1)
    return {
        x: Fraction(math.comb(row1, x) * math.comb(total - row1, col1 - x), denominator) for x in range(low, high + 1)
    }


# ---------------------------------------------------------------------------------- mcnemar


def test_mcnemar_reference_value():
    r = mcnemar(88, 66)
    # tests/data/awg-videomme/README.md: InternVL2 vs Qwen2-VL, matched 547, orig: b01/b10 = 88/66, p = 0.0906
    assert_allclose(r.p_cc, 0.0906, atol=5e-5)
    assert_allclose(r.chi2_cc, 21**2 / 154, atol=TIGHT)  # (|88 - 66| - 1)^2 / 154


@pytest.mark.parametrize(("b01", "b10"), [(88, 66), (66, 88), (0, 1), (1, 0), (5, 5), (0, 20), (3, 4), (400, 350)])
def test_mcnemar_equals_its_formulas(b01, b10):
    r = mcnemar(b01, b10)
    total = b01 + b10
    chi2 = (abs(b01 - b10) - 1) ** 2 / total
    assert_allclose([r.chi2_cc, r.p_cc], [chi2, math.erfc(math.sqrt(chi2 / 2))], rtol=TIGHT, atol=0)
    # exact McNemar: a two-sided binomial test at 1/2 on the discordant pairs
    assert_allclose(r.p_exact, two_sided_exact(binomial_pmf(total, 0.5), b01, 1e-7), rtol=TIGHT, atol=0)
    assert (r.b01, r.b10) == (b01, b10)
    expected = 1.0 if b01 == b10 else (r.p_exact if total < stats.MCNEMAR_EXACT_BELOW else r.p_cc)
    assert r.p == expected


def test_mcnemar_many_equals_statsmodels_table_by_table():
    b01 = np.array([88, 66, 0, 1, 5, 0, 3, 400, 0, 12, 24])
    b10 = np.array([66, 88, 1, 0, 5, 20, 4, 350, 0, 13, 1])
    chi2, p_cc, p_exact = stats.mcnemar_many(b01, b10)
    for i, (x, y) in enumerate(zip(b01, b10, strict=True)):
        if x + y == 0:
            assert np.isnan([chi2[i], p_cc[i], p_exact[i]]).all()
            continue
        corrected = sm_mcnemar([[0, x], [y, 0]], exact=False, correction=True)
        exact = sm_mcnemar([[0, x], [y, 0]], exact=True)
        assert (chi2[i], p_cc[i], p_exact[i]) == (corrected.statistic, corrected.pvalue, exact.pvalue)
        assert mcnemar(int(x), int(y)).p_cc == p_cc[i]


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
def test_fisher_equals_the_exact_hypergeometric_sums(cells):
    a, b, c, d = cells
    r = fisher(*cells)
    pmf = hypergeometric_pmf(a + b + c + d, a + b, a + c)
    assert_allclose(r.p_less, float(sum(p for x, p in pmf.items() if x <= a)), rtol=TIGHT, atol=0)
    assert_allclose(r.p_greater, float(sum(p for x, p in pmf.items() if x >= a)), rtol=TIGHT, atol=0)
    ordered = [pmf[x] for x in sorted(pmf)]
    assert_allclose(r.p_two_sided, two_sided_exact(ordered, a - min(pmf), 1e-14), rtol=TIGHT, atol=0)
    assert r.odds_ratio == (a * d / (b * c) if b * c else math.inf)


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
def test_tost_equals_two_one_sided_t_tests(seed, margin, alpha):
    rng = np.random.default_rng(seed)
    a = (rng.random(600) < 0.55).astype(float)
    b = np.where(rng.random(600) < 0.8, a, 1 - a)
    r = tost_paired(a, b, margin=margin, alpha=alpha)
    diff = np.mean(a - b)
    se = np.std(a - b, ddof=1) / math.sqrt(600)
    assert r.n == 600
    assert_allclose([r.diff, r.se], [diff, se], rtol=TIGHT, atol=0)
    p_lower = sps.t.sf((diff + margin) / se, 599)  # H0: mean <= -margin
    p_upper = sps.t.cdf((diff - margin) / se, 599)  # H0: mean >= +margin
    assert_allclose([r.p_lower, r.p_upper, r.p_tost], [p_lower, p_upper, max(p_lower, p_upper)], rtol=TIGHT, atol=0)
    crit = sps.t.isf(alpha, 599)
    assert_allclose([r.low, r.high], [diff - crit * se, diff + crit * se], rtol=TIGHT, atol=0)
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


def holm_by_definition(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down: the i-th smallest p-value times (m - i + 1), made non-decreasing in that order, capped
    at 1; ties in any order (they get the same adjusted value)."""
    m = len(pvalues)
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda j: pvalues[j])):
        running = max(running, (m - rank) * pvalues[i])
        adjusted[i] = min(running, 1.0)
    return adjusted


def test_holm_equals_its_definition_and_statsmodels():
    rng = np.random.default_rng(16)
    cases = [[0.0], [1.0], [0.05, 0.05, 0.05], [0.0, 1.0, 0.5, 0.5], [0.2, 0.01, 0.6, 0.01, 0.04]]
    for m in (2, 7, 40, 500):
        cases.append(rng.random(m))
        cases.append(rng.choice([0.001, 0.01, 0.02, 0.5], size=m))  # many ties
        cases.append(rng.random(m) ** 6)  # many small p-values
    for pvalues in cases:
        assert_allclose(holm(pvalues), holm_by_definition(np.asarray(pvalues)), rtol=TIGHT, atol=0)
    for pvalues in cases[:5]:  # multipletests collects garbage on every call: a few cases, not hundreds of ms each
        assert_allclose(holm(pvalues), multipletests(pvalues, method="holm")[1], rtol=TIGHT, atol=0)


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
    for p1, p2 in ((0.3, 0.7), (0.01, 0.99), (0.61, 0.6)):
        assert_allclose(cohen_h(p1, p2), 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2)), atol=TIGHT)


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
def test_chi2_uniform_equals_its_formula(counts):
    r = chi2_uniform(counts)
    observed = np.asarray(counts, dtype=float)
    expected = observed.sum() / len(observed)
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    assert r.df == len(counts) - 1
    assert_allclose([r.chi2, r.p], [chi2, chi2_upper_tail(chi2, r.df)], rtol=TIGHT, atol=0)
    assert r.as_dict() == {"chi2": r.chi2, "df": r.df, "p": r.p}


def test_chi2_counts_equals_its_formula_without_the_empty_categories():
    r = stats.chi2_counts([10, 0, 25, 15], [12.5, 0.0, 25.0, 12.5])
    # by hand: (2.5^2 + 0 + 2.5^2) / 12.5 = 1, df = 3 kept categories - 1; P(chi2_2 > 1) = exp(-1 / 2)
    assert (r.chi2, r.df) == (pytest.approx(1.0, abs=TIGHT), 2)
    assert_allclose(r.p, math.exp(-0.5), rtol=TIGHT)


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
def test_binomial_test_equals_the_exact_sum(k, n, p0):
    r = binomial_test(k, n, p0)
    assert_allclose(r.p_value, two_sided_exact(binomial_pmf(n, p0), k, 1e-7), rtol=TIGHT, atol=0)
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
def test_chi2_independence_equals_its_formula(rows, cols, seed):
    table = np.random.default_rng(seed).integers(1, 60, (rows, cols)).astype(float)
    result, expected = stats.chi2_independence(table)
    by_hand = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()
    chi2 = float(((table - by_hand) ** 2 / by_hand).sum())
    assert result.df == (rows - 1) * (cols - 1)
    assert_allclose(expected, by_hand, rtol=TIGHT, atol=0)
    if result.df == 0:  # one row: nothing to test
        assert (result.chi2, result.p) == (0.0, 1.0)
    else:
        assert_allclose([result.chi2, result.p], [chi2, chi2_upper_tail(chi2, result.df)], rtol=TIGHT, atol=1e-300)


def test_chi2_independence_by_hand_and_refusals():
    # rows (10, 10), columns (10, 10), total 20: every expected count is 5; chi2 = 4 * (8 - 5)^2 / 5
    result, expected = stats.chi2_independence([[8, 2], [2, 8]])
    assert result.chi2 == pytest.approx(7.2) and result.df == 1 and (expected == 5).all()
    with pytest.raises(ValueError, match="row or column of zeros"):
        stats.chi2_independence([[3, 0], [4, 0]])
    with pytest.raises(ValueError, match="2-D table"):
        stats.chi2_independence([3, 4])


# ----------------------------------------------------------------- two-sided exact p-values


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 150),
    frac=st.floats(0, 1),
    p0=st.sampled_from([0.5, 0.25, 0.2, 1 / 3, 0.1]) | st.floats(0.001, 0.999),
)
def test_two_sided_binomial_p_sums_the_outcomes_at_most_as_likely(n, frac, p0):
    k = round(frac * n)
    expected = two_sided_exact(binomial_pmf(n, p0), k, 1e-7)
    assert binomial_test(k, n, p0).p_value == pytest.approx(expected, rel=1e-12, abs=0)


@settings(max_examples=60, deadline=None)
@given(cells=st.tuples(*[st.integers(0, 40)] * 4))
def test_two_sided_fisher_p_sums_the_tables_at_most_as_likely(cells):
    a, b, c, d = cells
    if min(a + b, c + d, a + c, b + d) == 0:
        return
    pmf = hypergeometric_pmf(a + b + c + d, a + b, a + c)
    expected = two_sided_exact([pmf[x] for x in sorted(pmf)], a - min(pmf), 1e-14)
    assert fisher(*cells).p_two_sided == pytest.approx(expected, rel=1e-12, abs=0)


def test_a_table_as_likely_as_the_mode_has_p_exactly_one():
    # Summing the pmf of every outcome gives 0.9999999999999999 here; the report prints 1.
    assert fisher(3, 3, 3, 3).p_two_sided == 1.0
    assert binomial_test(4, 9, 0.5).p_value == 1.0 == binomial_test(5, 10, 0.5).p_value


# ------------------------------------------------------------------------------------ welch


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_welch_equals_its_formula(seed, level):
    rng = np.random.default_rng(seed)
    a = rng.integers(-1, 2, size=40 + seed).astype(float)
    b = rng.normal(0.2, 2.0, size=13)
    ours = stats.welch(a, b, level)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))  # Welch-Satterthwaite
    diff = a.mean() - b.mean()
    crit = sps.t.isf((1 - level) / 2, df)
    assert_allclose([ours.diff, ours.se, ours.df], [diff, se, df], rtol=TIGHT, atol=0)
    assert_allclose(ours.p, 2 * sps.t.sf(abs(diff) / se, df), rtol=TIGHT, atol=0)
    assert_allclose([ours.low, ours.high], [diff - crit * se, diff + crit * se], rtol=TIGHT, atol=0)


def test_welch_takes_a_constant_side_quietly():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = stats.welch([1.0, 1.0, 1.0], [0.0, 1.0, 0.0, 1.0])
    # by hand: diff 1/2, se = sqrt((1/3) / 4), df = 3; t = sqrt(3)
    assert_allclose([result.diff, result.se, result.df], [0.5, math.sqrt(1 / 12), 3.0], rtol=TIGHT)
    assert_allclose(result.p, 2 * sps.t.sf(math.sqrt(3), 3), rtol=TIGHT)


@pytest.mark.parametrize(
    "a, b, match", [([1.0], [0.0, 1.0], "at least 2"), ([1.0, 1.0], [0.0, 0.0], "Neither side varies")]
)
def test_welch_validation(a, b, match):
    with pytest.raises(ValueError, match=match):
        stats.welch(a, b)
