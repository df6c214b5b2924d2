"""Hypothesis tests of ``postprocess.stats``: McNemar, sign flip, binomial, Fisher, TOST, Welch, chi-square, and
Holm's adjustment and Cohen's h.

Each test is scipy.stats' or statsmodels' (its docstring names the function), behind this package's argument checks
and result records. Three are written here, each docstring saying why: ``sign_flip_test`` (no scipy/statsmodels
function gives the exact sign-flip distribution of hundreds of items), ``mcnemar_many`` (statsmodels' McNemar
formulas over arrays: its ``mcnemar`` takes one table at a time) and ``holm`` (statsmodels' ``multipletests`` runs
the garbage collector on every call).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as statsmodels_mcnemar
from statsmodels.stats.proportion import proportion_effectsize
from statsmodels.stats.weightstats import DescrStatsW, ttost_paired

from postprocess.stats import checks
from postprocess.stats.distributions import binom_cdf, binom_pmf, chi2_sf
from postprocess.stats.intervals import EXACT_MAX_SUPPORT, lattice
from postprocess.stats.records import (
    BinomialResult,
    Chi2Result,
    FisherResult,
    McNemarResult,
    SignFlipResult,
    TostResult,
    WelchResult,
)


def mcnemar(b01: int, b10: int) -> McNemarResult:
    """McNemar test from the discordant counts b01 = #(0, 1) and b10 = #(1, 0): statsmodels
    ``mcnemar([[., b01], [b10, .]], exact=False, correction=True)`` gives chi2_cc and p_cc, ``exact=True`` gives
    p_exact (= scipy ``binomtest(b01, b01 + b10, 0.5)``); p and test are ``mcnemar_p``'s choice between them.
    """
    b01 = checks.count(b01, "b01")
    b10 = checks.count(b10, "b10")
    if b01 + b10 == 0:
        raise ValueError(
            "b01 = b10 = 0: there are no discordant pairs, so McNemar's test is undefined "
            "(the two arms agree on every item)."
        )
    table = [[0, b01], [b10, 0]]  # the concordant cells do not enter the test
    corrected = statsmodels_mcnemar(table, exact=False, correction=True)
    exact = statsmodels_mcnemar(table, exact=True)
    p, test = _chosen_p(np.array([b01]), np.array([b10]), np.array([corrected.pvalue]), np.array([exact.pvalue]))
    return McNemarResult(
        b01=b01,
        b10=b10,
        chi2_cc=float(corrected.statistic),
        p_cc=float(corrected.pvalue),
        p_exact=float(exact.pvalue),
        p=float(p[0]),
        test=str(test[0]),
    )


#: Discordant pairs below which McNemar's p is the exact binomial test (the chi-square approximation is poor there).
MCNEMAR_EXACT_BELOW = 25
MCNEMAR_EXACT = "exact binomial"
MCNEMAR_CHI2 = "chi-square (continuity corrected)"


def mcnemar_p(b01: Any, b10: Any) -> tuple[np.ndarray, np.ndarray]:
    """McNemar's p-value and the test behind it, for arrays of discordant counts.

    1 when b01 = b10 (no evidence either way, as statsmodels' exact test gives); the exact binomial test when
    b01 + b10 < ``MCNEMAR_EXACT_BELOW``; else the continuity-corrected chi-square. NaN (and an empty test) where
    b01 = b10 = 0: there is nothing to test."""
    b01 = np.asarray(b01, dtype=float)
    b10 = np.asarray(b10, dtype=float)
    _, p_cc, p_exact = mcnemar_many(b01, b10)
    return _chosen_p(b01, b10, p_cc, p_exact)


def _chosen_p(b01: np.ndarray, b10: np.ndarray, p_cc: np.ndarray, p_exact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``mcnemar_p``'s rule, given both p-values of each pair of counts."""
    total = b01 + b10
    exact = total < MCNEMAR_EXACT_BELOW
    p = np.where(b01 == b10, 1.0, np.where(exact, p_exact, p_cc))
    p = np.where(total > 0, p, np.nan)
    test = np.where(total > 0, np.where(exact, MCNEMAR_EXACT, MCNEMAR_CHI2), "")
    return p, test


def sign_flip_test(d: Any) -> SignFlipResult:
    """Exact two-sided sign-flip permutation test of mean(d) = 0 for paired differences on a lattice (integers or
    halves: a difference of differences of correct flags lies in {-2, ..., 2}).

    Under the null the statistic sum(d) is a sum of independent +-|d_i|. The |d_i| of one size k (lattice units)
    contribute k (2 B_k - n_k) with B_k ~ Binomial(n_k, 1/2); their distributions are convolved (one FFT), and
    p = P(|T| >= |t|). Equals enumerating all 2^n sign vectors (the test suite checks it at small n). Written here
    because no scipy/statsmodels function computes this exact distribution for hundreds of items:
    ``scipy.stats.permutation_test`` enumerates the 2^n sign vectors or samples them.
    """
    values = checks.values(d, "d")
    grid = lattice(values)
    if grid is None:
        raise ValueError("d must lie on a lattice of integers or halves for the exact sign-flip test.")
    ints, _ = grid
    size_of = np.abs(ints)
    nonzero = int((size_of > 0).sum())
    observed = int(ints.sum())
    if nonzero == 0:
        return SignFlipResult(estimate=float(values.mean()), p_value=1.0, n=int(values.shape[0]), n_nonzero=0)
    span = int(size_of.sum())
    support = 2 * span + 1
    if support > EXACT_MAX_SUPPORT:
        raise ValueError(f"d spans {support} possible sums: too many for the exact sign-flip test.")
    length = 1 << (support - 1).bit_length()
    spectrum = np.ones(length // 2 + 1, dtype=np.complex128)
    for k, n_k in zip(*np.unique(size_of[size_of > 0], return_counts=True), strict=True):
        factor = np.zeros(2 * int(k) * int(n_k) + 1)
        factor[:: 2 * int(k)] = binom_pmf(np.arange(int(n_k) + 1), int(n_k), 0.5)
        spectrum *= np.fft.rfft(factor, length)
    pmf = np.clip(np.fft.irfft(spectrum, length)[:support], 0.0, None)  # index i: sum i - span
    sums = np.arange(support) - span
    p_value = float(min(1.0, pmf[np.abs(sums) >= abs(observed)].sum() / pmf.sum()))
    return SignFlipResult(estimate=float(values.mean()), p_value=p_value, n=int(values.shape[0]), n_nonzero=nonzero)


def binomial_test(k: int, n: int, p0: float) -> BinomialResult:
    """Two-sided exact binomial test of k successes in n trials at success probability p0:
    ``scipy.stats.binomtest(k, n, p0, alternative="two-sided")``, e.g. accuracy against chance when every question
    has the same number of options.
    """
    k = checks.count(k, "k")
    n = checks.count(n, "n")
    p0 = checks.probability(p0, "p0")
    if n == 0:
        raise ValueError("n is 0: a binomial test needs at least one trial.")
    if k > n:
        raise ValueError(f"k = {k} exceeds n = {n}: successes cannot outnumber trials.")
    p_value = float(stats.binomtest(k, n, p0).pvalue)
    return BinomialResult(k=k, n=n, p0=p0, estimate=k / n, p_value=p_value)


def fisher(a: int, b: int, c: int, d: int) -> FisherResult:
    """Fisher's exact test on ((a, b), (c, d)): ``scipy.stats.fisher_exact`` (sample odds ratio; the two-sided
    p-value sums the tables at most as likely as the observed one) and its one-sided alternatives."""
    a, b, c, d = (checks.count(v, name) for v, name in ((a, "a"), (b, "b"), (c, "c"), (d, "d")))
    table = ((a, b), (c, d))
    margins = {"row (a, b)": a + b, "row (c, d)": c + d, "column (a, c)": a + c, "column (b, d)": b + d}
    empty = [name for name, total in margins.items() if total == 0]
    if empty:
        raise ValueError(
            f"Table {table} has an empty {' and '.join(empty)}: the odds ratio and the test are undefined."
        )
    two_sided = stats.fisher_exact(table)
    return FisherResult(
        table=table,
        odds_ratio=float(two_sided.statistic),
        p_greater=float(stats.fisher_exact(table, alternative="greater").pvalue),
        p_less=float(stats.fisher_exact(table, alternative="less").pvalue),
        p_two_sided=float(two_sided.pvalue),
    )


def tost_paired(a: Any, b: Any, margin: float = 0.05, alpha: float = 0.05) -> TostResult:
    """Equivalence (TOST) of two paired means, e.g. two models' correctness on the same questions.

    Uses d = a - b: two one-sided t-tests (n - 1 df) of mean(d) against -margin and +margin, p_tost the larger of
    their p-values (statsmodels ``ttost_paired(a, b, -margin, margin)``), and the (1 - 2 alpha) t interval of
    mean(d) (statsmodels ``DescrStatsW(a - b).tconfint_mean(2 alpha)``).
    """
    av = checks.values(a, "a")
    bv = checks.values(b, "b")
    if av.shape != bv.shape:
        raise ValueError(f"a and b must be paired (same length), got {av.shape[0]} and {bv.shape[0]}.")
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not float(margin) > 0:
        raise ValueError(f"margin must be a positive number, got {margin!r}.")
    alpha = checks.level(alpha, "alpha")
    if alpha >= 0.5:
        raise ValueError(f"alpha must be below 0.5 (the interval has level 1 - 2 alpha), got {alpha}.")
    n = av.shape[0]
    if n < 2:
        raise ValueError(f"Need at least 2 pairs for a standard error, got {n}.")
    d = av - bv
    if np.all(d == d[0]):
        raise ValueError(f"All {n} paired differences equal {d[0]}: zero variance, so the t statistics are undefined.")
    margin = float(margin)
    p_tost, (_, p_lower, _), (_, p_upper, _) = ttost_paired(av, bv, -margin, margin)
    described = DescrStatsW(d)
    low, high = described.tconfint_mean(alpha=2.0 * alpha)
    return TostResult(
        diff=float(described.mean),
        se=float(described.std_mean),
        low=float(low),
        high=float(high),
        level=1.0 - 2.0 * alpha,
        p_lower=float(p_lower),
        p_upper=float(p_upper),
        p_tost=float(p_tost),
        alpha=alpha,
        equivalent=bool(p_tost < alpha),
        margin=margin,
        n=n,
    )


def welch(a: Any, b: Any, level: float = 0.95) -> WelchResult:
    """Welch's t-test and CI of mean(a) - mean(b): ``scipy.stats.ttest_ind(a, b, equal_var=False)`` and its
    ``confidence_interval(level)``; se is sqrt(var(a) / n_a + var(b) / n_b). Needs 2+ values per side and some
    variance."""
    av = checks.values(a, "a")
    bv = checks.values(b, "b")
    level = checks.level(level)
    if av.shape[0] < 2 or bv.shape[0] < 2:
        raise ValueError(f"Need at least 2 values on each side, got {av.shape[0]} and {bv.shape[0]}.")
    variance_of_mean_a = float(av.var(ddof=1)) / av.shape[0]
    variance_of_mean_b = float(bv.var(ddof=1)) / bv.shape[0]
    if variance_of_mean_a + variance_of_mean_b == 0.0:
        raise ValueError("Neither side varies: the t statistic is undefined.")
    with warnings.catch_warnings():
        # scipy warns of precision loss on a constant side, whose variance 0 is exact (the other side varies)
        warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        result = stats.ttest_ind(av, bv, equal_var=False)
    interval = result.confidence_interval(confidence_level=level)
    return WelchResult(
        diff=float(av.mean() - bv.mean()),
        se=math.sqrt(variance_of_mean_a + variance_of_mean_b),
        df=float(result.df),
        p=float(result.pvalue),
        low=float(interval.low),
        high=float(interval.high),
        level=level,
    )


def holm(pvalues: Any) -> np.ndarray:
    """Holm step-down adjusted p-values, in the input order: the i-th smallest p-value times (m - i + 1), made
    non-decreasing in that order and capped at 1.

    Equals statsmodels ``multipletests(pvalues, method="holm")[1]`` (the test suite checks it), written here because
    that function runs a full ``gc.collect()`` on every Holm call (statsmodels 0.15): ~60 ms each in a report
    process, 2.3 of the 3.9 s of every analysis of the published reference data.
    """
    p = checks.values(pvalues, "pvalues")
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"pvalues must lie in [0, 1], got {p[(p < 0) | (p > 1)].tolist()}.")
    m = p.shape[0]
    order = np.argsort(p, kind="mergesort")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m, dtype=np.float64)
    out[order] = np.minimum(stepped, 1.0)
    return out


def cohen_h(p1: float, p2: float) -> float:
    """Cohen's h effect size between two proportions, 2 asin(sqrt p1) - 2 asin(sqrt p2): statsmodels
    ``proportion_effectsize(p1, p2)``."""
    p1 = checks.probability(p1, "p1")
    p2 = checks.probability(p2, "p2")
    return float(proportion_effectsize(p1, p2))


def chi2_uniform(counts: Any) -> Chi2Result:
    """Pearson chi-square test of counts against a uniform expectation (df = categories - 1):
    ``scipy.stats.chisquare(counts)``."""
    obs = checks.count_array(counts, "counts")
    if obs.shape[0] < 2:
        raise ValueError(f"counts needs at least 2 categories, got {obs.shape[0]}.")
    total = int(obs.sum())
    if total == 0:
        raise ValueError("counts are all zero: the expected counts would be 0 and the test undefined.")
    result = stats.chisquare(obs)
    return Chi2Result(chi2=float(result.statistic), df=obs.shape[0] - 1, p=float(result.pvalue))


def chi2_counts(counts: Any, expected: Any) -> Chi2Result:
    """Pearson chi-square test of counts against given expected counts (same total).

    Categories expected 0 times and observed 0 times carry no information and are left out (df =
    remaining categories - 1): ``scipy.stats.chisquare(counts, expected)`` on the rest.
    """
    obs = checks.count_array(counts, "counts")
    exp = np.asarray(expected, dtype=np.float64)
    if exp.shape != obs.shape or not np.all(np.isfinite(exp)) or np.any(exp < 0):
        raise ValueError(f"expected must be {obs.shape[0]} non-negative numbers, got {np.asarray(expected).tolist()}.")
    if np.any((exp == 0) & (obs > 0)):
        raise ValueError(f"a category expected 0 times was observed: counts {obs.tolist()}, expected {exp.tolist()}.")
    total = int(obs.sum())
    if total == 0:
        raise ValueError("counts are all zero: the test is undefined.")
    if not math.isclose(float(exp.sum()), total, rel_tol=1e-9):
        raise ValueError(f"expected counts sum to {exp.sum():g}, observed to {total}.")
    keep = exp > 0
    if keep.sum() < 2:
        raise ValueError(f"counts needs at least 2 categories with a non-zero expectation, got {int(keep.sum())}.")
    result = stats.chisquare(obs[keep], exp[keep])
    return Chi2Result(chi2=float(result.statistic), df=int(keep.sum()) - 1, p=float(result.pvalue))


def chi2_independence(counts: Any) -> tuple[Chi2Result, np.ndarray]:
    """Pearson's chi-square test of independence of a table's rows and columns, and the expected counts.

    ``scipy.stats.chi2_contingency(counts, correction=False)`` (statistic, dof, p-value, expected_freq). Rows or
    columns that sum to 0 make the expectation 0 there: refused, as scipy does.
    """
    obs = np.asarray(counts, dtype=np.float64)
    if obs.ndim != 2 or not np.all(np.isfinite(obs)) or np.any(obs < 0):
        raise ValueError(f"counts must be a 2-D table of non-negative numbers, got {np.asarray(counts).tolist()}.")
    if obs.size == 0 or np.any(obs.sum(axis=0) == 0) or np.any(obs.sum(axis=1) == 0):
        raise ValueError(f"table {obs.tolist()} has a row or column of zeros: an expected count is 0.")
    result = stats.chi2_contingency(obs, correction=False)
    chi2 = Chi2Result(chi2=float(result.statistic), df=int(result.dof), p=float(result.pvalue))
    return chi2, result.expected_freq


def mcnemar_many(b01: np.ndarray, b10: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``postprocess.stats.mcnemar`` over arrays of counts: (chi2_cc, p_cc, p_exact), NaN where b01 = b10 = 0.

    statsmodels' two formulas, ``(|b01 - b10| - 1)^2 / (b01 + b10)`` with its ``chi2.sf(., 1)``, and
    ``min(1, 2 * binom.cdf(min(b01, b10), b01 + b10, 0.5))`` (at p = 0.5 the binomial is symmetric), applied to
    arrays with scipy.stats' distributions: statsmodels' ``mcnemar`` takes one table at a time, and the bootstrap
    stability check of ``postprocess.analyses.mcnemar`` recomputes thousands of p-values per resample. The test
    suite checks all three numbers against statsmodels' ``mcnemar``.
    """
    b01 = np.asarray(b01, dtype=float)
    b10 = np.asarray(b10, dtype=float)
    total = b01 + b10
    defined = total > 0
    safe = np.where(defined, total, 1.0)
    chi2 = (np.abs(b01 - b10) - 1.0) ** 2 / safe
    p_cc = chi2_sf(chi2, 1.0)
    p_exact = np.minimum(1.0, 2.0 * binom_cdf(np.minimum(b01, b10), safe, 0.5))
    nan = np.full(total.shape, np.nan)
    return np.where(defined, chi2, nan), np.where(defined, p_cc, nan), np.where(defined, p_exact, nan)
