"""Tango's score interval for a difference of paired proportions, optionally adjusted for clustered items.

A paired binary comparison (a VDG: correct(orig) - correct(black) per question) has per-item differences in
{-1, 0, +1}: b items at +1, c at -1, n in all, and the mean difference is delta = p12 - p21, the probability of
+1 minus that of -1. Tango's asymptotic score interval (T. Tango, "Equivalence test and confidence interval for
the difference in proportions for the paired-sample design", Statistics in Medicine 17:891-908, 1998) is the set
of delta whose score statistic

    T(delta) = (b - c - n delta) / sqrt(n (2 q21 + delta (1 - delta)))

lies within +-z, where q21 is the maximum likelihood estimate of p21 under the constraint p12 - p21 = delta. It is
the interval Fagerland, Lydersen & Laake recommend for the paired difference ("Recommended tests and confidence
intervals for paired binomial proportions", Statistics in Medicine 33:2850-2875, 2014): coverage close to nominal
already at small n and few discordant pairs, where the percentile bootstrap collapses (no discordant item gives
the bootstrap CI [0, 0]). At delta = 0, T^2 is McNemar's statistic (b - c)^2 / (b + c).

It is written here because no scipy/statsmodels function gives a score interval for a paired difference (statsmodels
0.15: ``confint_proportions_2indep`` is for independent samples; ``stats.proportion`` has a private paired risk
*ratio* interval only; scipy has none), nor a design-effect version for clustered items: q21 in closed form and the
two ends by ``scipy.optimize.brentq``, z from ``scipy.stats.norm`` (``two_sided_z``). The closed form: with p21 = p,
p12 = p + delta, the trinomial log-likelihood b log(p + delta) + c log p + (n - b - c) log(1 - 2p - delta) has zero
derivative where A p^2 + B p + C = 0, A = 2n, B = -b - c + (2n - b + c) delta, C = -c delta (1 - delta), and q21 is
its larger root (sqrt(B^2 - 4AC) - B) / (2A) (Tango 1998; the same in R PropCIs ``scoreci.mp`` and contingencytables
``Tango_asymptotic_score_CI_paired_2x2``). The variance term is that of one item's difference under the constraint,
p12 + p21 - delta^2 = 2 q21 + delta (1 - delta). The ends are the extreme real roots of the quartic of Yang, Sun &
Hardin ("A non-iterative implementation of Tango's score confidence interval for a paired difference of
proportions", Statistics in Medicine 32:1336-1342, 2013), which the tests use as a check.

Clustered items (several questions on one video) scale Tango's variance by a design effect (Rao & Scott, "A
simple method for the analysis of clustered binary data", Biometrics 48:577-585, 1992): deff = the
cluster-robust (sandwich, with the G / (G - 1) factor) variance of the mean difference over its i.i.d. variance.
A score test evaluates variances at the hypothesised value rather than at the estimate (Boos, "On generalized
score tests", American Statistician 46:327-333, 1992), and so does this deff: at each delta the residuals are
d_i - delta, so deff(delta) = [G / (G - 1) sum_g (s_g - m_g delta)^2] / [n / (n - 1) sum_i (d_i - delta)^2] for
cluster sums s_g of m_g items, floored at 1 and capped at n. At delta = 0 the clustered T^2 is then (b - c)^2 over
the cluster variance sum_g (b_g - c_g)^2 (up to the small-sample factors and the floor): the clustered McNemar test of
Obuchowski (Statistics in Medicine 17:1495-1507, 1998) and Durkalski et al. (Statistics in Medicine
22:2417-2428, 2003). Centring at the estimate instead (one deff for all delta, b, c and n divided by it: the plain
effective sample size) undercovers when discordant items are few, since with no discordant item that deff is 1
whatever the clustering: 92 % coverage of a 95 % interval for 50 clusters of 3 items sharing their outcome with
probability 0.8 and P(+1) = 0.05, P(-1) = 0 (the tests' simulation; 87 % with 1 to 6 items per cluster sharing it
with probability 0.95), where centring at each delta keeps 95 % (93.8 % or more in every setting tried).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import brentq

from postprocess.stats import checks
from postprocess.stats.intervals import two_sided_z
from postprocess.stats.records import DifferenceCI

#: ``DifferenceCI.method`` of an interval on independent items (no clusters, or every cluster a single item).
TANGO = "tango score"
#: ``DifferenceCI.method`` of an interval whose variance is scaled by the clusters' design effect.
TANGO_CLUSTERED = "tango score (design effect)"
# brentq's absolute tolerance on an end (its default, 2e-12, leaves |T| - z ~ 1e-8 at n ~ 1e4).
_XTOL = 1e-14
# Points between a clustered interval's first root and +-1 searched for an outer crossing (_score_interval).
_SCAN_POINTS = 256
# Largest deltas-by-clusters block of residuals held at once by _ClusterDesign.many.
_CHUNK_ELEMENTS = 1 << 20


def _restricted_p21(b: float, c: float, n: float, delta: float) -> float:
    """The maximum likelihood estimate of P(-1) given P(+1) - P(-1) = delta: the larger root of
    2n p^2 + B p + C, written without cancellation when B > 0 (then C <= 0)."""
    a = 2.0 * n
    b_coef = -b - c + (2.0 * n - b + c) * delta
    c_coef = -c * delta * (1.0 - delta)
    root = math.sqrt(max(b_coef * b_coef - 4.0 * a * c_coef, 0.0))
    if b_coef > 0.0:
        return max(-2.0 * c_coef / (root + b_coef), 0.0)
    return (root - b_coef) / (2.0 * a)


def _variance(b: float, c: float, n: float, delta: float) -> float:
    """n (2 q21 + delta (1 - delta)): n times the restricted variance of one item's difference, clamped at 0
    (a rounding error below it at delta = +-1, where it is 0)."""
    return max(n * (2.0 * _restricted_p21(b, c, n, delta) + delta * (1.0 - delta)), 0.0)


def _variances(b: float, c: float, n: float, delta: np.ndarray) -> np.ndarray:
    """``_variance`` at each of an array of deltas."""
    b_coef = -b - c + (2.0 * n - b + c) * delta
    c_coef = -c * delta * (1.0 - delta)
    root = np.sqrt(np.maximum(b_coef * b_coef - 8.0 * n * c_coef, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        stable = np.maximum(-2.0 * c_coef / (root + b_coef), 0.0)
    p21 = np.where(b_coef > 0.0, stable, (root - b_coef) / (4.0 * n))
    return np.maximum(n * (2.0 * p21 + delta * (1.0 - delta)), 0.0)


def _degenerate_interval(b: float, c: float, n: float, z: float) -> tuple[float, float]:
    """Tango's interval when every item is equal (b = c = 0, b = n or c = n; counts may be effective, i.e.
    fractional), in closed form: there the variance at the estimate is 0, so a root bracket starting at the
    estimate has no sign change.

    b = c = 0: q21 = max(0, -delta), so T = -+z where n |delta| = z^2 (1 - |delta|): +-z^2 / (n + z^2).
    b = n: q21 = (1 - delta) / 2, so T = z where n (1 - delta) = z^2 (1 + delta): low (n - z^2) / (n + z^2),
    high 1. c = n: the mirror image.
    """
    z2 = z * z
    if b <= 0.0 and c <= 0.0:
        half = z2 / (n + z2)
        return -half, half
    end = (n - z2) / (n + z2)
    return (end, 1.0) if b >= n else (-1.0, -end)


def _score_interval(
    b: float, c: float, n: float, z: float, design: _ClusterDesign | None = None
) -> tuple[float, float]:
    """{delta : |T(delta)| <= z} with T's variance times ``design``'s deff(delta) (1 when None), for 0 < b + c and
    b, c < n: each end is a root of (b - c - n delta) -+ z sqrt(var(delta) deff(delta)) between the estimate
    (where it is +-z sqrt(var) != 0) and +-1 (where var is 0 and it is b - c -+ n, of the other sign).

    Without a design effect the accepted set is an interval (checked for every table up to n = 40 and at n = 97
    and 150, levels 0.5, 0.95 and 0.999), so that root is the end. Scaled by a design effect that grows away from
    the estimate, |T| can fall back below z further out (a few clusters with large residual sums): the end is
    then the outermost crossing, found on ``_SCAN_POINTS`` points between the first root and +-1, so the
    interval is the hull of the accepted deltas.
    """
    estimate = (b - c) / n
    ends = []
    for sign, bound in ((1.0, 1.0), (-1.0, -1.0)):

        def excess(delta: float, sign: float = sign) -> float:
            var = _variance(b, c, n, delta)
            return (b - c - n * delta) + sign * z * math.sqrt(var if design is None else var * design(delta))

        end = float(brentq(excess, *sorted((estimate, bound)), xtol=_XTOL))
        if design is not None:
            grid = np.linspace(end, bound, _SCAN_POINTS + 1)[1:]
            spread = z * np.sqrt(_variances(b, c, n, grid) * design.many(grid))
            accepted = np.flatnonzero(np.abs(b - c - n * grid) <= spread)
            if accepted.size:
                i = int(accepted[-1])  # grid[-1] = +-1 is never accepted: there |b - c - n delta| >= 1, spread 0
                inner, outer = float(grid[i]), float(grid[i + 1])
                # (inner's excess is 0 to rounding when the array and scalar arithmetic disagree on its sign)
                if excess(inner) * excess(outer) < 0.0:
                    end = float(brentq(excess, *sorted((inner, outer)), xtol=_XTOL))
                else:
                    end = inner
        ends.append(end)
    return ends[1], ends[0]


def tango_interval(b: float, c: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Tango's score interval for (b - c) / n with b items at +1 and c at -1 out of n (counts may be fractional:
    an effective sample)."""
    z = two_sided_z(level)
    if b + c <= 0.0 or b >= n or c >= n:
        return _degenerate_interval(b, c, n, z)
    return _score_interval(b, c, n, z)


class _ClusterDesign:
    """The design effect of clustered items at a hypothesised mean difference delta (module docstring):
    deff(delta) = [G / (G - 1) sum_g (s_g - m_g delta)^2] / [n / (n - 1) sum_i (d_i - delta)^2], in [1, n]."""

    def __init__(self, b: int, c: int, n: int, sums: np.ndarray, sizes: np.ndarray) -> None:
        self.b, self.c, self.n = b, c, n
        self.sums = sums
        self.sizes = sizes.astype(np.float64)
        groups = sums.shape[0]
        self.factor = groups / (groups - 1) * (n - 1) / n if groups > 1 else math.inf

    def _clamp(self, ratio: float) -> float:
        return min(max(ratio, 1.0), float(self.n))

    def __call__(self, delta: float) -> float:
        iid = self.b * (1.0 - delta) ** 2 + self.c * (1.0 + delta) ** 2 + (self.n - self.b - self.c) * delta**2
        if iid <= 0.0:  # every item equals delta: the caller's constant() case, not reached from _score_interval
            return 1.0
        resid = self.sums - self.sizes * delta
        return self._clamp(self.factor * float(resid @ resid) / iid)

    def many(self, delta: np.ndarray) -> np.ndarray:
        """deff at each of an array of deltas none of which equals every item (rows of at most
        ``_CHUNK_ELEMENTS`` residuals at a time)."""
        iid = self.b * (1.0 - delta) ** 2 + self.c * (1.0 + delta) ** 2 + (self.n - self.b - self.c) * delta**2
        robust = np.empty_like(delta)
        step = max(1, _CHUNK_ELEMENTS // self.sums.shape[0])
        for start in range(0, delta.shape[0], step):
            resid = self.sums[None, :] - self.sizes[None, :] * delta[start : start + step, None]
            robust[start : start + step] = np.einsum("ij,ij->i", resid, resid)
        deff: np.ndarray = np.clip(self.factor * robust / iid, 1.0, float(self.n))
        return deff

    def constant(self) -> float:
        """deff(delta) where it does not depend on delta. Every item equal to v: (s_g - m_g delta)^2 =
        m_g^2 (v - delta)^2 and sum_i (d_i - delta)^2 = n (v - delta)^2, so deff = G / (G - 1) (n - 1) / n
        sum_g m_g^2 / n at every delta != v. A single cluster (G = 1): n, the cap (its items are one
        independent unit; the sandwich variance needs G >= 2)."""
        if self.sizes.shape[0] == 1:
            return float(self.n)
        return self._clamp(self.factor * float(self.sizes @ self.sizes) / self.n)


def paired_difference_ci(differences: Any, *, level: float = 0.95, clusters: Any = None) -> DifferenceCI:
    """Tango's score interval for the mean of per-item paired differences of two binary outcomes.

    ``differences``: one value per item in {-1, 0, +1} (a - b of two 0/1 outcomes, e.g. VDG = correct(orig) -
    correct(black)); any other value raises a ValueError (graded scores: use ``bootstrap_mean``). The estimate is
    (b - c) / n and [low, high] Tango's asymptotic score interval (module docstring), written here by hand since
    statsmodels and scipy have no paired-difference score interval. It has positive width even with no
    discordant item (b = c = 0 gives +-z^2 / (n + z^2)).

    ``clusters``: optional ids, one per item (e.g. the video of each question). When some cluster holds more than
    one item, Tango's variance at each delta is multiplied by the design effect deff(delta) of the module
    docstring; ``design_effect`` reports it at the estimate (the sandwich over the i.i.d. variance of the mean,
    floored at 1), or, when every item is equal or all are in one cluster, its constant value (a single cluster:
    n), on which the interval then is Tango's for b, c and n divided by it. With every cluster a single item the
    result equals the unclustered one.
    """
    vals = checks.values(differences, "differences")
    level = checks.level(level)
    off = np.flatnonzero((vals != -1.0) & (vals != 0.0) & (vals != 1.0))
    if off.size:
        bad = int(off[0])
        raise ValueError(
            f"differences[{bad}] is {float(vals[bad])!r}: paired differences of binary outcomes must be -1, 0 or +1 "
            "(use bootstrap_mean for graded scores)."
        )
    n = int(vals.shape[0])
    b = int(np.count_nonzero(vals == 1.0))
    c = int(np.count_nonzero(vals == -1.0))
    z = two_sided_z(level)
    groups, deff, method = n, 1.0, TANGO
    if clusters is None:
        low, high = tango_interval(b, c, n, level)
    else:
        _, inverse = np.unique(checks.ids(clusters, n, "clusters"), return_inverse=True)
        inverse = inverse.reshape(-1)
        sizes = np.bincount(inverse)
        groups = int(sizes.shape[0])
        if groups == n:
            low, high = tango_interval(b, c, n, level)
        else:
            method = TANGO_CLUSTERED
            design = _ClusterDesign(b, c, n, np.bincount(inverse, weights=vals), sizes)
            if groups == 1 or b + c == 0 or b == n or c == n:
                deff = design.constant()
                low, high = tango_interval(b / deff, c / deff, n / deff, level)
            else:
                deff = design((b - c) / n)
                low, high = _score_interval(b, c, n, z, design)
    return DifferenceCI(
        estimate=(b - c) / n,
        low=min(max(low, -1.0), 1.0),
        high=min(max(high, -1.0), 1.0),
        level=level,
        n=n,
        n_clusters=groups,
        design_effect=deff,
        method=method,
    )
