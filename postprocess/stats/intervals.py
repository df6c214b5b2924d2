"""Confidence intervals of ``postprocess.stats``: Wilson's score interval (statsmodels) and the percentile
bootstrap of a mean (exact on a lattice, else Monte Carlo, optionally clustered).

The bootstrap is written here because no scipy/statsmodels function resamples clusters, draws multinomial counts
over distinct values or gives the exact bootstrap distribution of a mean on a lattice (``scipy.stats.bootstrap``
resamples items by index only, so it would also draw other numbers from the same seed).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Literal

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from postprocess.stats import checks
from postprocess.stats.records import BootstrapCI, Interval

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
EXACT_MAX_SUPPORT = 1 << 23
#: Lattice steps an exact bootstrap recognises values on: integers and halves (judge scores 0, 0.5, 1).
_LATTICE_STEPS = (1.0, 0.5)
BootstrapMethod = Literal["exact", "resample"]


# ------------------------------------------------------------------------------------ intervals


@functools.lru_cache(maxsize=64)
def two_sided_z(level: float) -> float:
    """Two-sided normal quantile for a confidence level: ``scipy.stats.norm.isf((1 - level) / 2)``, the critical
    value statsmodels' intervals use."""
    return float(stats.norm.isf((1.0 - level) / 2.0))


def wilson(k: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for k successes in n trials: statsmodels ``proportion_confint(k, n, alpha=1 - level,
    method="wilson")`` (clipped to [0, 1]), with the end at k = 0 (k = n) exactly 0 (1)."""
    k = checks.count(k, "k")
    n = checks.count(n, "n")
    level = checks.level(level)
    if n == 0:
        raise ValueError("n is 0: a proportion needs at least one trial.")
    if k > n:
        raise ValueError(f"k = {k} exceeds n = {n}: successes cannot outnumber trials.")
    low, high = proportion_confint(k, n, alpha=1.0 - level, method="wilson")
    # statsmodels' formula leaves ~1e-17 of rounding at the end that is 0 (1) exactly
    return Interval(
        estimate=k / n,
        low=0.0 if k == 0 else float(low),
        high=1.0 if k == n else float(high),
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


def lattice(values: np.ndarray) -> tuple[np.ndarray, float] | None:
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
    grid = lattice(values)
    if grid is None:
        return None
    ints, step = grid
    n = ints.shape[0]
    lowest = int(ints.min())
    width = int(ints.max()) - lowest
    if width == 0:
        return float(values[0]), float(values[0])
    support = n * width + 1
    if support > EXACT_MAX_SUPPORT:
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
    percentiles (package docstring; ``seed`` and ``n_resamples`` are then unused and ``n_resamples`` is
    reported as 0). Otherwise ``n_resamples`` Monte Carlo resamples; with ``mc_se_target`` > 0, when an
    endpoint's estimated MC standard error exceeds it, the CI is drawn again (same seed) with enough resamples
    for the target (SE falls as 1 / sqrt(resamples); at most ``MAX_RESAMPLES``).
    """
    vals = checks.values(values, "values")
    n_resamples = checks.n_resamples(n_resamples)
    seed = checks.seed(seed)
    level = checks.level(level)
    resampler = checks.resampler(resampler)
    method = _method(method)
    cl = None if clusters is None else checks.ids(clusters, vals.shape[0], "clusters")
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
    av = checks.values(a, "a")
    bv = checks.values(b, "b")
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
