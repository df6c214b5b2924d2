"""Statistics for per-question correctness: intervals, bootstraps and paired tests.

Pure functions on arrays and counts; each returns a frozen dataclass whose fields are documented
and never change with the arguments (``.as_dict()`` gives a flat dict for a table row).
Randomness enters only as an integer ``seed`` (derive it with
``vdg_tasks.seeding.stable_seed``); every bootstrap uses ``np.random.default_rng(seed)``.

Conventions
-----------
- Bootstrap CIs are percentile intervals: ``np.quantile`` (default ``linear`` method) of the
  resampled means at ``(1 - level) / 2`` and ``1 - (1 - level) / 2``.
- Resampling n items with replacement is the same, in distribution, as drawing multinomial counts
  over the distinct values (or distinct cluster (sum, size) pairs) with probabilities equal to
  their frequencies. When there are few distinct values (a VDG in {-1, 0, +1}) the counts are drawn
  directly (``resampler="multinomial"``); otherwise item indices are drawn
  (``resampler="index"``). Both are vectorized over resamples; ``"auto"`` picks by the data only,
  so a result is a function of (data, seed, n_resamples, level).
- Exact bootstrap CIs (``method="exact"``): resampling n per-item values with replacement makes their sum a sum
  of n independent draws from the values' empirical distribution. When the values lie on a lattice (integers, or
  halves: a VDG in {-1, 0, +1}, a correct flag, a paired difference of judge scores in steps of 0.5) the
  distribution of that sum is the n-th convolution power of the value frequencies, computed exactly (one FFT), and
  its percentiles (the limit of the Monte Carlo percentiles as resamples grow) are the CI; no seed is used. Values
  off a lattice, or a cluster bootstrap (resampled units are (sum, size) pairs), fall back to Monte Carlo, with
  each endpoint's estimated Monte Carlo standard error (``mc_se_low``, ``mc_se_high``) and, given
  ``mc_se_target``, as many resamples as it takes to bring both below it.
- McNemar: b01 counts pairs with (a, b) = (0, 1), b10 pairs with (1, 0). The corrected statistic
  is ``(|b01 - b10| - 1)^2 / (b01 + b10)`` exactly as statsmodels
  ``mcnemar(table, exact=False, correction=True)`` computes it: not clamped at zero, so
  ``b01 == b10`` gives ``1 / (b01 + b10)`` rather than 0 (p slightly below 1).
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np


class _Lazy:
    """A module imported on first use: ``scipy.stats`` alone costs ~0.5 s of start-up, which ``vdg stats
    wilson`` and every analysis that needs none of it should not pay."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        import importlib

        module = importlib.import_module(self._name)
        return getattr(module, attr)


_special = _Lazy("scipy.special")
_ufuncs = _Lazy("scipy.special._ufuncs")
_STANDARD_NORMAL = NormalDist()
_st = _Lazy("scipy.stats")

__all__ = [
    "BinomialResult",
    "BootstrapCI",
    "BootstrapMethod",
    "MC_SE_BATCHES",
    "SignFlipResult",
    "Chi2Result",
    "FisherResult",
    "Interval",
    "McNemarResult",
    "Resampler",
    "TostResult",
    "binomial_test",
    "bootstrap_mean",
    "binom_cdf",
    "binom_pmf",
    "binom_sf",
    "chi2_independence",
    "chi2_sf",
    "chi2_uniform",
    "cohen_h",
    "fisher",
    "holm",
    "mcnemar",
    "mcnemar_many",
    "mcnemar_p",
    "normal_sf",
    "paired_bootstrap_diff",
    "pearson",
    "sign_flip_test",
    "spearman",
    "t_sf",
    "tost_paired",
    "two_sided_z",
    "wilson",
]

Resampler = Literal["auto", "multinomial", "index"]

# "auto" draws multinomial counts when distinct outcomes * _MULTINOMIAL_RATIO <= items: one
# binomial draw per outcome costs about 20 times one index draw (measured, numpy 2.x).
_MULTINOMIAL_RATIO = 20
# Largest resamples-by-outcomes block held in memory at once; draws are made in consecutive
# chunks of one stream, which gives exactly the numbers one large draw would.
_CHUNK_ELEMENTS = 1 << 22
#: Disjoint batches of the resamples whose endpoints estimate a Monte Carlo CI endpoint's standard error.
MC_SE_BATCHES = 20
#: Most resamples a Monte Carlo CI draws to meet its ``mc_se_target``.
MAX_RESAMPLES = 200_000
#: Largest support (possible sums) of an exact bootstrap distribution; beyond it the CI is resampled.
_EXACT_MAX_SUPPORT = 1 << 23
#: Lattice steps an exact bootstrap recognises values on: integers and halves (judge scores 0, 0.5, 1).
_LATTICE_STEPS = (1.0, 0.5)
BootstrapMethod = Literal["exact", "resample"]


class _Record:
    """Mixin: ``as_dict()`` for a frozen dataclass."""

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (nested tuples kept as tuples)."""
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Interval(_Record):
    """A proportion k / n with its Wilson score interval."""

    estimate: float
    """The observed proportion k / n."""
    low: float
    """Lower end of the Wilson interval, in [0, 1]."""
    high: float
    """Upper end of the Wilson interval, in [0, 1]."""
    level: float
    """Two-sided confidence level, e.g. 0.95."""
    k: int
    """Number of successes."""
    n: int
    """Number of trials."""


@dataclass(frozen=True)
class BootstrapCI(_Record):
    """A mean with its percentile bootstrap interval."""

    estimate: float
    """Mean of the values over all items (for a difference: mean(a) - mean(b))."""
    low: float
    """Percentile at (1 - level) / 2 of the resampled means."""
    high: float
    """Percentile at 1 - (1 - level) / 2 of the resampled means."""
    level: float
    """Two-sided confidence level, e.g. 0.95."""
    n: int
    """Number of items (questions)."""
    n_clusters: int
    """Number of resampled units: clusters if given, else equal to n."""
    n_resamples: int
    """Number of bootstrap resamples."""
    seed: int
    """Seed passed to np.random.default_rng."""
    resampler: str
    """How resamples were drawn: "multinomial" (counts over distinct outcomes) or "index"; "exact" when none were."""
    method: str = "monte carlo"
    """"exact": the percentiles of the bootstrap distribution itself, computed in closed form (no resampling;
    ``n_resamples`` is 0); "monte carlo": the percentiles of ``n_resamples`` drawn resamples."""
    mc_se_low: float = math.nan
    """Estimated Monte Carlo standard error of ``low`` (0 when exact): the spread of the endpoint over
    ``MC_SE_BATCHES`` disjoint batches of the resamples, sd(batch endpoints) / sqrt(batches)."""
    mc_se_high: float = math.nan
    """Estimated Monte Carlo standard error of ``high`` (0 when exact), as ``mc_se_low``."""


@dataclass(frozen=True)
class McNemarResult(_Record):
    """McNemar test on the discordant pairs of two paired binary outcomes."""

    b01: int
    """Pairs with (a, b) = (0, 1): first wrong, second right."""
    b10: int
    """Pairs with (a, b) = (1, 0): first right, second wrong."""
    chi2_cc: float
    """(|b01 - b10| - 1)^2 / (b01 + b10), as statsmodels computes it (not clamped at 0)."""
    p_cc: float
    """Chi-square (1 df) survival function of chi2_cc."""
    p_exact: float
    """Two-sided exact binomial test of b01 successes in b01 + b10 trials at p = 0.5."""
    p: float
    """The test's p-value (``mcnemar_p``): 1 when b01 = b10, p_exact when b01 + b10 < ``MCNEMAR_EXACT_BELOW``,
    else p_cc."""
    test: str
    """Which test gave p: "exact binomial" or "chi-square (continuity corrected)"."""


@dataclass(frozen=True)
class SignFlipResult(_Record):
    """Exact sign-flip permutation test that paired differences d have mean 0."""

    estimate: float
    """mean(d)."""
    p_value: float
    """Two-sided exact p-value: under the null each d_i's sign is + or - with probability 1/2, independently;
    P(|sum of signed d| >= |sum d|), enumerated in closed form (no sampling)."""
    n: int
    """Number of paired items."""
    n_nonzero: int
    """Items with d != 0 (the others carry no information)."""


@dataclass(frozen=True)
class BinomialResult(_Record):
    """Exact binomial test of k successes in n trials against a success probability p0."""

    k: int
    """Number of successes."""
    n: int
    """Number of trials."""
    p0: float
    """Success probability under the null hypothesis (e.g. chance accuracy)."""
    estimate: float
    """The observed proportion k / n."""
    p_value: float
    """Two-sided exact p-value: the probability under the null of outcomes at most as likely as k
    (scipy's ``binomtest`` convention)."""


@dataclass(frozen=True)
class FisherResult(_Record):
    """Fisher's exact test on the 2x2 table ((a, b), (c, d))."""

    table: tuple[tuple[int, int], tuple[int, int]]
    """The table as ((a, b), (c, d))."""
    odds_ratio: float
    """Sample odds ratio a*d / (b*c); inf when b*c = 0."""
    p_greater: float
    """One-sided p-value, alternative: odds ratio > 1."""
    p_less: float
    """One-sided p-value, alternative: odds ratio < 1."""
    p_two_sided: float
    """Two-sided p-value (scipy's convention: tables at most as likely as the observed one)."""


@dataclass(frozen=True)
class TostResult(_Record):
    """Two one-sided paired t-tests (TOST) for equivalence of two paired means within +-margin."""

    diff: float
    """Mean paired difference mean(a - b)."""
    se: float
    """Standard error of diff: sample SD (ddof=1) of a - b over sqrt(n)."""
    low: float
    """Lower end of the (1 - 2 alpha) t interval for diff."""
    high: float
    """Upper end of the (1 - 2 alpha) t interval for diff."""
    level: float
    """Confidence level of [low, high]: 1 - 2 alpha."""
    p_lower: float
    """p-value of H0: diff <= -margin against diff > -margin (t, n - 1 df)."""
    p_upper: float
    """p-value of H0: diff >= +margin against diff < +margin (t, n - 1 df)."""
    p_tost: float
    """max(p_lower, p_upper): p-value of the equivalence test."""
    alpha: float
    """Significance level of each one-sided test."""
    equivalent: bool
    """p_tost < alpha (equivalently, [low, high] lies inside (-margin, margin))."""
    margin: float
    """Equivalence margin on the difference scale."""
    n: int
    """Number of pairs."""


@dataclass(frozen=True)
class WelchResult(_Record):
    """Welch's two-sample t-test of mean(a) - mean(b) (unequal variances)."""

    diff: float
    """mean(a) - mean(b)."""
    se: float
    """sqrt(var(a) / n_a + var(b) / n_b), sample variances (ddof=1)."""
    df: float
    """Welch-Satterthwaite degrees of freedom."""
    p: float
    """Two-sided p-value of diff = 0 (t with df degrees of freedom)."""
    low: float
    """Lower end of the t interval for diff at ``level``."""
    high: float
    """Upper end of the t interval for diff at ``level``."""
    level: float
    """Confidence level of [low, high]."""


@dataclass(frozen=True)
class Chi2Result(_Record):
    """Pearson chi-square goodness-of-fit test against equal (``chi2_uniform``) or given (``chi2_counts``) expected
    counts."""

    chi2: float
    """Sum over categories of (observed - expected)^2 / expected."""
    df: int
    """Degrees of freedom: number of categories - 1."""
    p: float
    """Chi-square survival function of chi2 at df."""


# ----------------------------------------------------------------------------------- validation


def _count(x: Any, name: str) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be a non-negative integer count, got {x!r}.")
    x = int(x)
    if x < 0:
        raise ValueError(f"{name} must be a non-negative integer count, got {x}.")
    return x


def _level(level: Any, name: str = "level") -> float:
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"{name} must be a number strictly between 0 and 1, got {level!r}.")
    return float(level)


def _values(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: need at least one value.")
    if arr.dtype != np.float64:  # what the analyses pass: checked for finiteness only
        if arr.dtype == bool:
            arr = arr.astype(np.float64)
        if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
            raise ValueError(f"{name} must hold real numbers or booleans, got dtype {arr.dtype}.")
        arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name}[{bad}] is {arr[bad]}: values must be finite (drop or recode failed items first).")
    return arr


def _ids(x: Any, n: int, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}.")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries but values has {n}: give one id per value.")
    return arr


def _seed(seed: Any) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
        raise ValueError(
            f"seed must be a non-negative int (derive one with vdg_tasks.seeding.stable_seed), got {seed!r}."
        )
    return int(seed)


def _n_resamples(n_resamples: Any) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive int, got {n_resamples!r}.")
    return int(n_resamples)


def _resampler(resampler: Any) -> str:
    if resampler not in ("auto", "multinomial", "index"):
        raise ValueError(f"resampler must be 'auto', 'multinomial' or 'index', got {resampler!r}.")
    return str(resampler)


def _probability(p: Any, name: str) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{name} must be a proportion in [0, 1], got {p!r}.")
    return float(p)


def _count_array(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}.")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must hold integer counts, got dtype {arr.dtype}.")
    if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold integer counts, got {arr.tolist()}.")
    if np.any(arr < 0):
        raise ValueError(f"{name} must hold non-negative counts, got {arr.tolist()}.")
    return arr.astype(np.int64)


# ------------------------------------------------------------------------------------ intervals


@functools.lru_cache(maxsize=64)
def two_sided_z(level: float) -> float:
    """Two-sided normal quantile for a confidence level: the standard library's (Wichura's AS241, within
    2e-15 of scipy's norm.isf), so a Wilson interval does not import scipy.stats (~0.7 s)."""
    return _STANDARD_NORMAL.inv_cdf(1.0 - (1.0 - level) / 2.0)


def wilson(k: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for k successes in n trials.

    Equals statsmodels ``proportion_confint(k, n, alpha=1 - level, method="wilson")`` (clipped to
    [0, 1] as statsmodels clips).
    """
    k = _count(k, "k")
    n = _count(n, "n")
    level = _level(level)
    if n == 0:
        raise ValueError("n is 0: a proportion needs at least one trial.")
    if k > n:
        raise ValueError(f"k = {k} exceeds n = {n}: successes cannot outnumber trials.")
    z = two_sided_z(level)
    p = k / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    # At k = 0 (k = n) the end is 0 (1) exactly; the formula leaves ~1e-17 of rounding there.
    return Interval(
        estimate=p,
        low=0.0 if k == 0 else min(max(center - half, 0.0), 1.0),
        high=1.0 if k == n else min(max(center + half, 0.0), 1.0),
        level=level,
        k=k,
        n=n,
    )


# ------------------------------------------------------------------------------------ bootstrap


def _chunks(n_resamples: int, width: int) -> list[int]:
    size = max(1, _CHUNK_ELEMENTS // max(width, 1))
    return [min(size, n_resamples - start) for start in range(0, n_resamples, size)]


def _distinct_pairs(sums: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (sum, size) rows sorted by sum then size, and how many units share each.

    Exchangeable units share a pair. With singleton units this is exactly np.unique(sums), so a
    cluster bootstrap over singleton clusters draws the very numbers of the plain one.
    """
    order = np.lexsort((sizes, sums))
    s, z = sums[order], sizes[order]
    starts = np.flatnonzero(np.concatenate([[True], (s[1:] != s[:-1]) | (z[1:] != z[:-1])]))
    freq = np.diff(np.append(starts, s.shape[0]))
    return np.column_stack([s[starts], z[starts]]), freq


def resampled_means(
    values: np.ndarray,
    clusters: np.ndarray | None,
    rng: np.random.Generator,
    n_resamples: int,
    resampler: str,
) -> tuple[np.ndarray, int, str]:
    """Resampled means (length n_resamples), the number of resampled units, and the resampler used."""
    n = values.shape[0]
    if clusters is None:
        sums = values
        sizes = np.ones(n, dtype=np.float64)
    else:
        _, inverse = np.unique(clusters, return_inverse=True)
        inverse = inverse.reshape(-1)
        sums = np.bincount(inverse, weights=values)
        sizes = np.bincount(inverse).astype(np.float64)
    units = sums.shape[0]
    if clusters is None:  # singleton units: _distinct_pairs is np.unique, which sorts one key, not two
        distinct, freq = np.unique(sums, return_counts=True)
        pairs = np.column_stack([distinct, np.ones(distinct.shape[0])])
    else:
        pairs, freq = _distinct_pairs(sums, sizes)
    if resampler == "auto":
        resampler = "multinomial" if pairs.shape[0] * _MULTINOMIAL_RATIO <= units else "index"
    out = np.empty(n_resamples, dtype=np.float64)
    start = 0
    if resampler == "multinomial":
        pvals = freq / units
        for size in _chunks(n_resamples, pairs.shape[0]):
            counts = rng.multinomial(units, pvals, size=size)
            out[start : start + size] = (counts @ pairs[:, 0]) / (counts @ pairs[:, 1])
            start += size
    else:
        for size in _chunks(n_resamples, units):
            idx = rng.integers(0, units, size=(size, units))
            out[start : start + size] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
            start += size
    return out, units, resampler


def percentile_interval(means: np.ndarray, level: float) -> tuple[float, float]:
    """``np.quantile(means, [tail, 1 - tail])`` (``linear`` method) of finite means, float for float: the
    same virtual index, neighbours and interpolation, from one partial sort instead of its general
    machinery (a fifth of a bootstrap's time over thousands of small CIs)."""
    tail = (1.0 - level) / 2.0
    last = means.shape[0] - 1
    neighbours = []
    for quantile in (tail, 1.0 - tail):
        position = last * quantile
        below = last if position >= last else math.floor(position)
        neighbours.append((below, min(below + 1, last), position - below))
    ordered = np.partition(means, sorted({i for below, above, _ in neighbours for i in (below, above)}))
    bounds = []
    for below, above, gamma in neighbours:
        a, b = float(ordered[below]), float(ordered[above])
        diff = b - a
        bounds.append(b - diff * (1.0 - gamma) if gamma >= 0.5 else a + diff * gamma)
    return bounds[0], bounds[1]


def _lattice(values: np.ndarray) -> tuple[np.ndarray, float] | None:
    """(values / step as int64, step) for the first of ``_LATTICE_STEPS`` the values all lie on, else None."""
    for step in _LATTICE_STEPS:
        scaled = values / step
        ints = np.rint(scaled)
        if np.array_equal(ints, scaled):
            return ints.astype(np.int64), step
    return None


def _exact_percentiles(values: np.ndarray, level: float) -> tuple[float, float] | None:
    """The percentile bootstrap CI of the mean in closed form, or None when the values are off a lattice or
    their sum's support is too large (the caller resamples then).

    The resampled sum of n lattice values is the n-th convolution power of their frequencies (one real FFT of
    a length past the support, so nothing wraps). Each endpoint is the smallest sum whose cumulative
    probability reaches the tail: the limit of ``np.quantile`` over ever more Monte Carlo resamples.
    """
    lattice = _lattice(values)
    if lattice is None:
        return None
    ints, step = lattice
    n = ints.shape[0]
    lowest = int(ints.min())
    width = int(ints.max()) - lowest
    if width == 0:
        return float(values[0]), float(values[0])
    support = n * width + 1
    if support > _EXACT_MAX_SUPPORT:
        return None
    freq = np.bincount(ints - lowest, minlength=width + 1) / n
    size = 1 << (support - 1).bit_length()
    pmf = np.fft.irfft(np.fft.rfft(freq, size) ** n, size)[:support]
    cdf = np.cumsum(np.clip(pmf, 0.0, None))
    cdf /= cdf[-1]
    tail = (1.0 - level) / 2.0
    # A cumulative probability a rounding error (~1e-13) below the tail counts as reaching it.
    ends = np.searchsorted(cdf, [tail - 1e-12, 1.0 - tail - 1e-12], side="left")
    low, high = ((np.minimum(ends, support - 1) + n * lowest) * step / n).tolist()
    return float(low), float(high)


def _mc_standard_errors(means: np.ndarray, level: float) -> tuple[float, float]:
    """Estimated Monte Carlo standard errors of the two percentile endpoints of ``means``: the endpoints of
    ``MC_SE_BATCHES`` disjoint batches of the resamples vary ~batches times as much as those of all of them,
    so SE = sd(batch endpoints) / sqrt(batches). NaN with fewer than two resamples per batch."""
    per_batch = means.shape[0] // MC_SE_BATCHES
    if per_batch < 2:
        return math.nan, math.nan
    tail = (1.0 - level) / 2.0
    batches = means[: per_batch * MC_SE_BATCHES].reshape(MC_SE_BATCHES, per_batch)
    ends = np.quantile(batches, [tail, 1.0 - tail], axis=1)
    se = ends.std(axis=1, ddof=1) / math.sqrt(MC_SE_BATCHES)
    return float(se[0]), float(se[1])


def _method(method: Any) -> str:
    if method not in ("exact", "resample"):
        raise ValueError(f"method must be 'exact' or 'resample', got {method!r}.")
    return str(method)


def bootstrap_mean(
    values: Any,
    n_resamples: int = 2000,
    *,
    seed: int,
    level: float = 0.95,
    clusters: Any = None,
    resampler: Resampler = "auto",
    method: BootstrapMethod = "resample",
    mc_se_target: float = 0.0,
) -> BootstrapCI:
    """Percentile bootstrap CI of the mean of per-item values.

    For a paired comparison pass the per-question differences (e.g. VDG = correct(orig) -
    correct(black)). With ``clusters`` (one id per value, e.g. the video id of each question)
    whole clusters are resampled with replacement and each resampled mean is
    sum of resampled values / number of resampled items.

    ``method="exact"``: without clusters and with values on a lattice, the bootstrap distribution's own
    percentiles (module docstring; ``seed`` and ``n_resamples`` are then unused and ``n_resamples`` is
    reported as 0). Otherwise ``n_resamples`` Monte Carlo resamples; with ``mc_se_target`` > 0, when an
    endpoint's estimated MC standard error exceeds it, the CI is drawn again (same seed) with enough resamples
    for the target (SE falls as 1 / sqrt(resamples); at most ``MAX_RESAMPLES``).
    """
    vals = _values(values, "values")
    n_resamples = _n_resamples(n_resamples)
    seed = _seed(seed)
    level = _level(level)
    resampler = _resampler(resampler)
    method = _method(method)
    cl = None if clusters is None else _ids(clusters, vals.shape[0], "clusters")
    if method == "exact" and cl is None:
        exact = _exact_percentiles(vals, level)
        if exact is not None:
            return BootstrapCI(
                estimate=float(vals.mean()),
                low=exact[0],
                high=exact[1],
                level=level,
                n=int(vals.shape[0]),
                n_clusters=int(vals.shape[0]),
                n_resamples=0,
                seed=seed,
                resampler="exact",
                method="exact",
                mc_se_low=0.0,
                mc_se_high=0.0,
            )
    while True:
        means, units, used = resampled_means(vals, cl, np.random.default_rng(seed), n_resamples, resampler)
        se_low, se_high = _mc_standard_errors(means, level)
        worst = max(se_low, se_high)
        if not mc_se_target > 0 or not worst > mc_se_target or n_resamples >= MAX_RESAMPLES:
            break
        n_resamples = min(
            MAX_RESAMPLES, max(n_resamples + 1, math.ceil(n_resamples * 1.2 * (worst / mc_se_target) ** 2))
        )
    low, high = percentile_interval(means, level)
    return BootstrapCI(
        estimate=float(vals.mean()),
        low=low,
        high=high,
        level=level,
        n=int(vals.shape[0]),
        n_clusters=units,
        n_resamples=n_resamples,
        seed=seed,
        resampler=used,
        method="monte carlo",
        mc_se_low=se_low,
        mc_se_high=se_high,
    )


def paired_bootstrap_diff(
    a: Any,
    b: Any,
    n_resamples: int = 2000,
    *,
    seed: int,
    level: float = 0.95,
    clusters: Any = None,
    resampler: Resampler = "auto",
    method: BootstrapMethod = "resample",
    mc_se_target: float = 0.0,
) -> BootstrapCI:
    """Percentile bootstrap CI of mean(a) - mean(b) over paired items (pairs resampled together).

    For binary a, b the pair has four joint outcomes; resampling pairs is a multinomial over them,
    and merging (0, 0) and (1, 1) (both difference 0) leaves a multinomial over a - b in
    {-1, 0, +1}. So this is exactly ``bootstrap_mean(a - b, ...)`` with the same seed, and works
    for any real-valued paired scores, not only binary ones.
    """
    av = _values(a, "a")
    bv = _values(b, "b")
    if av.shape != bv.shape:
        raise ValueError(f"a and b must be paired (same length), got {av.shape[0]} and {bv.shape[0]}.")
    return bootstrap_mean(
        av - bv,
        n_resamples,
        seed=seed,
        level=level,
        clusters=clusters,
        resampler=resampler,
        method=method,
        mc_se_target=mc_se_target,
    )


# -------------------------------------------------------------------------------- distributions
# Importing scipy.stats costs ~0.7 s (it rewrites hundreds of docstrings), more than a small report's
# whole analysis. Its distributions used here are scipy.special ufuncs underneath: these functions
# call the same ufuncs (so the values are scipy.stats' own), and fall back to scipy.stats where a
# scipy release keeps them elsewhere.


def _stats_ufunc(name: str, fallback: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:
    ufunc = getattr(_ufuncs, name, None)
    return ufunc if ufunc is not None else fallback()


def chi2_sf(x: Any, df: Any) -> Any:
    """Upper tail of the chi-square distribution: ``scipy.stats.chi2.sf(x, df)`` for x >= 0."""
    return _special.chdtrc(df, x)


def t_sf(x: Any, df: Any) -> Any:
    """Upper tail of Student's t: ``scipy.stats.t.sf(x, df)``."""
    return _special.stdtr(df, -np.asarray(x, dtype=np.float64))


def _t_isf(q: float, df: float) -> float:
    return float(-_special.stdtrit(df, q))  # scipy.stats.t.isf


def binom_pmf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.pmf(k, n, p)`` for integer k in 0..n (NaN outside it, where scipy gives 0)."""
    return _stats_ufunc("_binom_pmf", lambda: _st.binom.pmf)(k, n, p)


def binom_cdf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.cdf(k, n, p)`` = P(X <= k), for integer k in 0..n (NaN outside it)."""
    return _stats_ufunc("_binom_cdf", lambda: _st.binom.cdf)(k, n, p)


def binom_sf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.sf(k, n, p)`` = P(X > k), for integer k in 0..n (NaN outside it)."""
    return _stats_ufunc("_binom_sf", lambda: _st.binom.sf)(k, n, p)


def _hypergeom(method: str) -> Callable[..., Any]:
    """``scipy.stats.hypergeom.<method>(k, total, successes, draws)`` for k in the support (NaN outside it)."""
    ufunc = getattr(_ufuncs, f"_hypergeom_{method}", None)
    if ufunc is None:
        return getattr(_st.hypergeom, method)
    return lambda k, total, successes, draws: ufunc(k, successes, draws, total)


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


def normal_sf(x: Any) -> Any:
    """Upper tail of the standard normal: ``scipy.stats.norm.sf(x)``."""
    return _special.ndtr(-np.asarray(x, dtype=np.float64))


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their average rank (``scipy.stats.rankdata``'s default)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    before = np.cumsum(counts) - counts
    return (before + (counts + 1) / 2.0)[inverse.reshape(-1)]


#: Fewer paired values than this leave a correlation undefined (NaN), as does a constant side.
MIN_CORRELATION_POINTS = 3


def _undefined(x: np.ndarray, y: np.ndarray) -> bool:
    return len(x) < MIN_CORRELATION_POINTS or np.unique(x).size < 2 or np.unique(y).size < 2


def pearson(a: Any, b: Any) -> tuple[float, float]:
    """(r, two-sided p) as ``scipy.stats.pearsonr``: r from the centred, rescaled vectors; p from r's
    Beta(n/2 - 1, n/2 - 1) null on [-1, 1]. Finite values; (NaN, NaN) when undefined (``_undefined``)."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if _undefined(x, y):
        return np.nan, np.nan
    xm, ym = x - x.mean(), y - y.mean()
    x_scale, y_scale = np.abs(xm).max(), np.abs(ym).max()
    # np.linalg.norm with an axis, as scipy calls it: the axis-less call sums differently (1 ulp in r)
    unit_x = xm / (x_scale * np.linalg.norm(xm / x_scale, axis=0))
    unit_y = ym / (y_scale * np.linalg.norm(ym / y_scale, axis=0))
    r = float(np.clip(np.dot(unit_x, unit_y), -1.0, 1.0))
    shape = x.size / 2.0 - 1.0
    return r, float(2.0 * _special.betaincc(shape, shape, (abs(r) + 1.0) / 2.0))


def spearman(a: Any, b: Any) -> tuple[float, float]:
    """(rho, two-sided p) as ``scipy.stats.spearmanr``: the correlation of the average ranks, p from
    Student's t with n - 2 df. Finite values; (NaN, NaN) when undefined (``_undefined``)."""
    if _undefined(np.asarray(a), np.asarray(b)):
        return np.nan, np.nan
    ranks_a = _average_ranks(np.asarray(a))
    ranks_b = _average_ranks(np.asarray(b))
    rho = np.corrcoef(ranks_a, ranks_b)[1, 0]
    df = ranks_a.size - 2
    with np.errstate(divide="ignore"):  # |rho| = 1: t is infinite, p is 0
        t = rho * np.sqrt(np.clip(df / ((rho + 1.0) * (1.0 - rho)), 0.0, None))
    return float(rho), float(2.0 * t_sf(abs(t), df))


# ---------------------------------------------------------------------------------------- tests


def mcnemar(b01: int, b10: int) -> McNemarResult:
    """McNemar test from the discordant counts b01 = #(0, 1) and b10 = #(1, 0).

    chi2_cc matches statsmodels ``mcnemar([[., b01], [b10, .]], exact=False, correction=True)``
    and p_exact matches ``exact=True`` (= scipy ``binomtest(b01, b01 + b10, 0.5)``).
    """
    b01 = _count(b01, "b01")
    b10 = _count(b10, "b10")
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
    values = _values(d, "d")
    lattice = _lattice(values)
    if lattice is None:
        raise ValueError("d must lie on a lattice of integers or halves for the exact sign-flip test.")
    ints, _ = lattice
    size_of = np.abs(ints)
    nonzero = int((size_of > 0).sum())
    observed = int(ints.sum())
    if nonzero == 0:
        return SignFlipResult(estimate=float(values.mean()), p_value=1.0, n=int(values.shape[0]), n_nonzero=0)
    span = int(size_of.sum())
    support = 2 * span + 1
    if support > _EXACT_MAX_SUPPORT:
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
    k = _count(k, "k")
    n = _count(n, "n")
    p0 = _probability(p0, "p0")
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
    a, b, c, d = (_count(v, name) for v, name in ((a, "a"), (b, "b"), (c, "c"), (d, "d")))
    table = ((a, b), (c, d))
    margins = {"row (a, b)": a + b, "row (c, d)": c + d, "column (a, c)": a + c, "column (b, d)": b + d}
    empty = [name for name, total in margins.items() if total == 0]
    if empty:
        raise ValueError(
            f"Table {table} has an empty {' and '.join(empty)}: the odds ratio and the test are undefined."
        )
    total, row1, col1 = a + b + c + d, a + b, a + c
    cdf = _hypergeom("cdf")
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
    pmf, cdf, sf = _hypergeom("pmf"), _hypergeom("cdf"), _hypergeom("sf")
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
    av = _values(a, "a")
    bv = _values(b, "b")
    if av.shape != bv.shape:
        raise ValueError(f"a and b must be paired (same length), got {av.shape[0]} and {bv.shape[0]}.")
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not float(margin) > 0:
        raise ValueError(f"margin must be a positive number, got {margin!r}.")
    alpha = _level(alpha, "alpha")
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
    crit = _t_isf(alpha, df)
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
    av = _values(a, "a")
    bv = _values(b, "b")
    level = _level(level)
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
    crit = _t_isf((1.0 - level) / 2.0, df)
    return WelchResult(diff=diff, se=se, df=df, p=p, low=diff - crit * se, high=diff + crit * se, level=level)


def holm(pvalues: Any) -> np.ndarray:
    """Holm step-down adjusted p-values, in the input order.

    Equals statsmodels ``multipletests(pvalues, method="holm")[1]``.
    """
    p = _values(pvalues, "pvalues")
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
    p1 = _probability(p1, "p1")
    p2 = _probability(p2, "p2")
    return 2.0 * math.asin(math.sqrt(p1)) - 2.0 * math.asin(math.sqrt(p2))


def chi2_uniform(counts: Any) -> Chi2Result:
    """Pearson chi-square test of counts against a uniform expectation (df = categories - 1).

    Equals ``scipy.stats.chisquare(counts)``.
    """
    obs = _count_array(counts, "counts")
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
    obs = _count_array(counts, "counts")
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


def json_ready(value: Any, missing: tuple[Any, ...] = ()) -> Any:
    """A result as JSON (NaN and ``missing`` -> None, +/-inf -> "inf"/"-inf", numpy scalars -> Python),
    without importing pandas: what ``vdg stats`` prints, and, with pandas' NA and NaT as ``missing``,
    every cell of ``report.json``."""
    if value is None or any(value is m for m in missing):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return None
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return {str(k): json_ready(v, missing) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_ready(v, missing) for v in value]
    return str(value)
