"""The frozen result records of ``postprocess.stats``: one dataclass per kind of result, ``.as_dict()`` for a row."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any


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
class DifferenceCI(_Record):
    """A mean paired difference of two binary outcomes (items in {-1, 0, +1}) with Tango's score interval
    (``paired_difference_ci``); its method, resample and Monte Carlo fields read as a ``BootstrapCI``'s do."""

    estimate: float
    """(b - c) / n: the mean difference, b items at +1 and c at -1 out of n."""
    low: float
    """Lower end of the score interval, in [-1, 1]."""
    high: float
    """Upper end of the score interval, in [-1, 1]."""
    level: float
    """Two-sided confidence level, e.g. 0.95."""
    n: int
    """Number of paired items (questions)."""
    n_clusters: int
    """Number of distinct cluster ids if clusters were given, else equal to n."""
    design_effect: float
    """The clusters' design effect at the estimate: the cluster-robust (sandwich, G / (G - 1)) variance of the
    mean over its i.i.d. variance, floored at 1 and capped at n (the interval scales Tango's variance by it
    evaluated at each hypothesised difference). When every item is equal, its value at every other difference,
    G / (G - 1) (n - 1) / n sum(cluster size^2) / n; n for a single cluster. 1.0 without clusters or with every
    cluster a single item."""
    method: str
    """"tango score": Tango's interval for independent items; "tango score (design effect)": with its
    variance scaled by the clusters' design effect (some cluster holds more than one item)."""
    n_resamples: int = 0
    """Always 0: no resampling."""
    mc_se_low: float = 0.0
    """Always 0.0: no resampling, so no Monte Carlo error in ``low``."""
    mc_se_high: float = 0.0
    """Always 0.0: no resampling, so no Monte Carlo error in ``high``."""


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
