"""Hypothesis tests of ``postprocess.stats``: McNemar, sign flip, binomial, Fisher, TOST, Welch, chi-square, and
Holm's adjustment and Cohen's h."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from postprocess.stats import checks
from postprocess.stats.distributions import binom_cdf, binom_pmf, binom_sf, chi2_sf, hypergeom, t_isf, t_sf
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
    """McNemar test from the discordant counts b01 = #(0, 1) and b10 = #(1, 0).

    chi2_cc matches statsmodels ``mcnemar([[., b01], [b10, .]], exact=False, correction=True)``
    and p_exact matches ``exact=True`` (= scipy ``binomtest(b01, b01 + b10, 0.5)``).
    """
    b01 = checks.count(b01, "b01")
    b10 = checks.count(b10, "b10")
    total = b01 + b10
    if total == 0:
        raise ValueError(
            "b01 = b10 = 0: there are no discordant pairs, so McNemar's test is undefined "
            "(the two arms agree on every item)."
        )
    chi2, p_cc, p_exact = mcnemar_many(np.array([b01]), np.array([b10]))
    p, test = mcnemar_p(np.array([b01]), np.array([b10]))
    return McNemarResult(
        b01=b01,
        b10=b10,
        chi2_cc=float(chi2[0]),
        p_cc=float(p_cc[0]),
        p_exact=float(p_exact[0]),
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
    p = P(|T| >= |t|). Equals enumerating all 2^n sign vectors (the test suite checks it at small n).
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
    """Two-sided exact binomial test of k successes in n trials at success probability p0.

    Equals ``scipy.stats.binomtest(k, n, p0, alternative="two-sided")``: e.g. accuracy against
    chance when every question has the same number of options.
    """
    k = checks.count(k, "k")
    n = checks.count(n, "n")
    p0 = checks.probability(p0, "p0")
    if n == 0:
        raise ValueError("n is 0: a binomial test needs at least one trial.")
    if k > n:
        raise ValueError(f"k = {k} exceeds n = {n}: successes cannot outnumber trials.")
    return BinomialResult(k=k, n=n, p0=p0, estimate=k / n, p_value=_binomial_two_sided(k, n, p0))


def _binomial_two_sided(k: int, n: int, p0: float) -> float:
    """scipy's two-sided binomial p-value, float for float: the observed tail by cdf or sf, plus the
    other side's outcomes at most as likely as k (relative tolerance 1e-7), found on its pmf."""
    if k == p0 * n:
        return 1.0
    if p0 in (0.0, 1.0):  # k is impossible
        return 0.0
    threshold = float(binom_pmf(k, n, p0)) * (1.0 + 1e-7)
    if k < p0 * n:
        start = math.ceil(p0 * n)
        far = np.flatnonzero(binom_pmf(np.arange(start, n + 1), n, p0) <= threshold)
        other = float(binom_sf(start + far[0] - 1, n, p0)) if far.size else 0.0
        return min(1.0, float(binom_cdf(k, n, p0)) + other)
    far = np.flatnonzero(binom_pmf(np.arange(math.floor(p0 * n) + 1), n, p0) <= threshold)
    other = float(binom_cdf(far[-1], n, p0)) if far.size else 0.0
    return min(1.0, other + float(binom_sf(k - 1, n, p0)))


def fisher(a: int, b: int, c: int, d: int) -> FisherResult:
    """Fisher's exact test on ((a, b), (c, d)), as ``scipy.stats.fisher_exact`` (sample odds ratio).

    Under fixed margins ``a`` is hypergeometric; the two-sided p-value sums the tables at most as
    likely as the observed one (scipy's relative tolerance 1e-14)."""
    a, b, c, d = (checks.count(v, name) for v, name in ((a, "a"), (b, "b"), (c, "c"), (d, "d")))
    table = ((a, b), (c, d))
    margins = {"row (a, b)": a + b, "row (c, d)": c + d, "column (a, c)": a + c, "column (b, d)": b + d}
    empty = [name for name, total in margins.items() if total == 0]
    if empty:
        raise ValueError(
            f"Table {table} has an empty {' and '.join(empty)}: the odds ratio and the test are undefined."
        )
    total, row1, col1 = a + b + c + d, a + b, a + c
    cdf = hypergeom("cdf")
    return FisherResult(
        table=table,
        odds_ratio=a * d / (b * c) if b > 0 and c > 0 else math.inf,
        p_greater=float(min(1.0, cdf(b, total, row1, b + d))),
        p_less=float(min(1.0, cdf(a, total, row1, col1))),
        p_two_sided=_fisher_two_sided(a, total, row1, col1),
    )


def _fisher_two_sided(a: int, total: int, row1: int, col1: int) -> float:
    """scipy's two-sided Fisher p-value, float for float: 1 when the observed table is (within 1e-14) as
    likely as the mode; else the observed tail by cdf or sf plus the other side's tables at most as
    likely, found on the hypergeometric pmf over the support."""
    pmf, cdf, sf = hypergeom("pmf"), hypergeom("cdf"), hypergeom("sf")
    low, high = max(0, col1 - (total - row1)), min(col1, row1)
    mode = int((col1 + 1) * (row1 + 1) / (total + 2))
    p_observed, p_mode = float(pmf(a, total, row1, col1)), float(pmf(mode, total, row1, col1))
    if abs(p_observed - p_mode) / max(p_observed, p_mode) <= 1e-14:
        return 1.0
    threshold = p_observed * (1.0 + 1e-14)
    if a < mode:
        far = np.flatnonzero(pmf(np.arange(mode, high + 1), total, row1, col1) <= threshold)
        other = float(sf(mode + far[0] - 1, total, row1, col1)) if far.size else 0.0
        return min(1.0, float(cdf(a, total, row1, col1)) + other)
    far = np.flatnonzero(pmf(np.arange(low, mode + 1), total, row1, col1) <= threshold)
    other = float(cdf(low + far[-1], total, row1, col1)) if far.size else 0.0
    observed_tail = 1.0 if a == low else float(sf(a - 1, total, row1, col1))
    return min(1.0, observed_tail + other)


def tost_paired(a: Any, b: Any, margin: float = 0.05, alpha: float = 0.05) -> TostResult:
    """Equivalence (TOST) of two paired means, e.g. two models' correctness on the same questions.

    Uses d = a - b: two one-sided t-tests (n - 1 df) of mean(d) against -margin and +margin;
    p_tost = max of the two. Matches statsmodels ``ttost_paired(a, b, -margin, margin)``.
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
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        raise ValueError(f"All {n} paired differences equal {d[0]}: zero variance, so the t statistics are undefined.")
    margin = float(margin)
    diff = float(d.mean())
    se = sd / math.sqrt(n)
    df = n - 1
    p_lower = float(t_sf((diff + margin) / se, df))
    p_upper = float(t_sf(-(diff - margin) / se, df))  # the lower tail at x is the upper tail at -x
    crit = t_isf(alpha, df)
    p_tost = max(p_lower, p_upper)
    return TostResult(
        diff=diff,
        se=se,
        low=diff - crit * se,
        high=diff + crit * se,
        level=1.0 - 2.0 * alpha,
        p_lower=p_lower,
        p_upper=p_upper,
        p_tost=p_tost,
        alpha=alpha,
        equivalent=bool(p_tost < alpha),
        margin=margin,
        n=n,
    )


def welch(a: Any, b: Any, level: float = 0.95) -> WelchResult:
    """Welch's t-test and CI of mean(a) - mean(b): ``scipy.stats.ttest_ind(a, b, equal_var=False)`` and its
    ``confidence_interval(level)``, without importing scipy.stats. Needs 2+ values per side and some variance."""
    av = checks.values(a, "a")
    bv = checks.values(b, "b")
    level = checks.level(level)
    if av.shape[0] < 2 or bv.shape[0] < 2:
        raise ValueError(f"Need at least 2 values on each side, got {av.shape[0]} and {bv.shape[0]}.")
    va = float(av.var(ddof=1)) / av.shape[0]
    vb = float(bv.var(ddof=1)) / bv.shape[0]
    if va + vb == 0.0:
        raise ValueError("Neither side varies: the t statistic is undefined.")
    diff = float(av.mean() - bv.mean())
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (av.shape[0] - 1) + vb**2 / (bv.shape[0] - 1))
    p = min(1.0, 2.0 * float(t_sf(abs(diff) / se, df)))
    crit = t_isf((1.0 - level) / 2.0, df)
    return WelchResult(diff=diff, se=se, df=df, p=p, low=diff - crit * se, high=diff + crit * se, level=level)


def holm(pvalues: Any) -> np.ndarray:
    """Holm step-down adjusted p-values, in the input order.

    Equals statsmodels ``multipletests(pvalues, method="holm")[1]``.
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
    """Cohen's h effect size between two proportions: 2 asin(sqrt p1) - 2 asin(sqrt p2)."""
    p1 = checks.probability(p1, "p1")
    p2 = checks.probability(p2, "p2")
    return 2.0 * math.asin(math.sqrt(p1)) - 2.0 * math.asin(math.sqrt(p2))


def chi2_uniform(counts: Any) -> Chi2Result:
    """Pearson chi-square test of counts against a uniform expectation (df = categories - 1).

    Equals ``scipy.stats.chisquare(counts)``.
    """
    obs = checks.count_array(counts, "counts")
    if obs.shape[0] < 2:
        raise ValueError(f"counts needs at least 2 categories, got {obs.shape[0]}.")
    total = int(obs.sum())
    if total == 0:
        raise ValueError("counts are all zero: the expected counts would be 0 and the test undefined.")
    expected = total / obs.shape[0]
    chi2 = float(((obs - expected) ** 2).sum() / expected)
    df = obs.shape[0] - 1
    return Chi2Result(chi2=chi2, df=df, p=float(chi2_sf(chi2, df)))


def chi2_counts(counts: Any, expected: Any) -> Chi2Result:
    """Pearson chi-square test of counts against given expected counts (same total).

    Categories expected 0 times and observed 0 times carry no information and are left out (df =
    remaining categories - 1). Equals ``scipy.stats.chisquare(counts, expected)`` on the rest.
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
    chi2 = float(((obs[keep] - exp[keep]) ** 2 / exp[keep]).sum())
    df = int(keep.sum()) - 1
    return Chi2Result(chi2=chi2, df=df, p=float(chi2_sf(chi2, df)))


def chi2_independence(counts: Any) -> tuple[Chi2Result, np.ndarray]:
    """Pearson's chi-square test of independence of a table's rows and columns, and the expected counts.

    Equals ``scipy.stats.chi2_contingency(counts, correction=False)`` (statistic, dof, p-value,
    expected_freq). Rows or columns that sum to 0 make the expectation 0 there: refused, as scipy does.
    """
    obs = np.asarray(counts, dtype=np.float64)
    if obs.ndim != 2 or not np.all(np.isfinite(obs)) or np.any(obs < 0):
        raise ValueError(f"counts must be a 2-D table of non-negative numbers, got {np.asarray(counts).tolist()}.")
    total = obs.sum()
    expected = np.outer(obs.sum(axis=1), obs.sum(axis=0)) / total if total > 0 else np.zeros_like(obs)
    if np.any(expected == 0):
        raise ValueError(f"table {obs.tolist()} has a row or column of zeros: an expected count is 0.")
    df = (obs.shape[0] - 1) * (obs.shape[1] - 1)
    if df == 0:
        return Chi2Result(chi2=0.0, df=0, p=1.0), expected
    chi2 = float(((obs - expected) ** 2 / expected).sum())
    return Chi2Result(chi2=chi2, df=df, p=float(chi2_sf(chi2, df))), expected


def mcnemar_many(b01: np.ndarray, b10: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``postprocess.stats.mcnemar`` over arrays of counts: (chi2_cc, p_cc, p_exact), NaN where b01 = b10 = 0.

    Vectorized because scipy's ``binomtest`` costs ~2 ms a call (thousands of pair x condition
    rows). At p = 0.5 the binomial is symmetric, so the two-sided exact p-value (outcomes at most
    as likely as the observed one) is ``min(1, 2 * cdf(min(b01, b10)))``; the test suite checks
    all three numbers against ``stats.mcnemar``.
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
