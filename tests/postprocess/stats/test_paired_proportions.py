"""Tests for postprocess.stats.paired_proportions: Tango's score interval for a paired binary difference.

Every value is checked against a calculation written here (the restricted maximum likelihood found numerically,
Yang, Sun & Hardin's closed-form quartic, Monte Carlo coverage) or a published number, never against output
copied from the code under test.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from scipy.optimize import minimize_scalar
from scipy.special import xlogy

from postprocess import stats
from postprocess.stats import DifferenceCI, bootstrap_mean, paired_difference_ci
from postprocess.stats.paired_proportions import tango_interval

Z95 = float(sps.norm.isf(0.025))


def items(b: int, c: int, n: int) -> np.ndarray:
    """n per-item differences: b at +1, c at -1, the rest 0."""
    return np.repeat([1.0, -1.0, 0.0], [b, c, n - b - c])


# ------------------------------------------------------- an independent score statistic (numerical MLE)


def restricted_p21(b: int, c: int, n: int, delta: float) -> float:
    """argmax over p21 of the trinomial log-likelihood b log p12 + c log p21 + (n - b - c) log p0 with
    p12 = p21 + delta, p0 = 1 - p12 - p21, found numerically over its feasible range."""
    lo, hi = max(0.0, -delta), (1.0 - delta) / 2.0
    if hi - lo < 1e-15:
        return lo

    def negloglik(p: float) -> float:
        return -(xlogy(b, p + delta) + xlogy(c, p) + xlogy(n - b - c, 1.0 - 2.0 * p - delta))

    res = minimize_scalar(negloglik, bounds=(lo, hi), method="bounded", options={"xatol": 1e-14})
    return float(res.x)


def score_statistic(b: int, c: int, n: int, delta: float, deff: float = 1.0) -> float:
    """(b - c - n delta) / sqrt(n deff Var_delta(d)), Var_delta(d) = p12 + p21 - delta^2 at the restricted MLE."""
    p21 = restricted_p21(b, c, n, delta)
    var = n * deff * ((p21 + delta) + p21 - delta**2)
    return (b - c - n * delta) / math.sqrt(var)


CASES = [
    (0, 0, 150),
    (0, 0, 31),
    (31, 0, 31),
    (0, 31, 31),
    (1, 0, 1),
    (3, 0, 31),
    (0, 2, 50),
    (1, 7, 21),
    (6, 16, 161),
    (40, 20, 160),
    (12, 11, 30),
    (150, 86, 1600),
    (400, 380, 1000),
]


@pytest.mark.parametrize(("b", "c", "n"), CASES)
def test_ends_solve_the_score_equation(b, c, n):
    ci = paired_difference_ci(items(b, c, n))
    assert ci.estimate == (b - c) / n
    assert -1.0 <= ci.low <= ci.estimate <= ci.high <= 1.0 and ci.low < ci.high
    for end, inward in ((ci.low, +1.0), (ci.high, -1.0)):
        if abs(end) == 1.0:  # b = n (c = n): the interval is closed at 1 (-1), where T = 0/0
            assert (b == n and end == 1.0) or (c == n and end == -1.0)
            continue
        assert abs(abs(score_statistic(b, c, n, end)) - Z95) < 1e-6
        step = 1e-4 * (ci.high - ci.low)
        assert abs(score_statistic(b, c, n, end + inward * step)) < Z95
        if abs(end - inward * step) < 1.0:
            assert abs(score_statistic(b, c, n, end - inward * step)) > Z95
    # the set {|T| <= z} is the interval: every point strictly inside is in it
    for delta in np.linspace(ci.low, ci.high, 41)[1:-1]:
        assert abs(score_statistic(b, c, n, float(delta))) < Z95


def test_zero_discordance_has_positive_width():
    ci = paired_difference_ci(np.zeros(150))
    assert ci.low < 0.0 < ci.high
    assert ci.high - ci.low > 0.04  # +-z^2 / (n + z^2) = +-0.025 (test above: T = +-z there)
    assert ci.estimate == 0.0 and ci.n == 150


# --------------------------------------------------------------------------------- published values


def test_published_cavo_2012_example():
    """Complete response before/after consolidation therapy, Cavo et al. 2012: the paired table ((59, 6), (16, 80)),
    n12 = 6, n21 = 16, N = 161; Tango asymptotic score CI -0.1240 to -0.0054, estimate -0.0621 (Fagerland,
    Lydersen & Laake, Statistical Analysis of Contingency Tables, ch. 8; R contingencytables
    tests/testthat/test-ch8.R)."""
    ci = paired_difference_ci(items(6, 16, 161))
    assert (round(ci.estimate, 4), round(ci.low, 4), round(ci.high, 4)) == (-0.0621, -0.1240, -0.0054)


def yang_sun_hardin_limits(b: int, c: int, n: int, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest real roots of the quartic whose extreme roots are Tango's limits (Yang, Sun &
    Hardin, Statistics in Medicine 32:1336-1342, 2013; their R TangoCI, as posted with Agresti's Categorical Data
    Analysis material), coefficients m0..m4 with g = z^2, and an estimate of their floating-point error:
    100 eps sum_k |m_k r^(4-k)| / |p'(r)| plus |imag(r)|. A limit close to another root (b or c near n) is
    ill-conditioned: a close pair of real roots may even come out of np.roots as a complex pair, so roots within
    1e-3 of the real line count as real."""
    g = float(sps.norm.isf((1 - level) / 2)) ** 2
    d, s = b - c, b + c
    m0 = n**2 * (n / g + 1) ** 2
    m1 = -n * d * (n / g + 1) * (4 * n / g + 1)
    m2 = 2 * n * d**2 * (3 * n / g + 2) / g - n**2 * (s / g + 1)
    m3 = n * d * (2 * s / g + 1) - d**3 * (4 * n / g + 1) / g
    m4 = d**2 * (d**2 / g - s) / g
    coefs = np.array([m0, m1, m2, m3, m4], dtype=float)
    roots = np.roots(coefs)
    near_real = roots[np.abs(roots.imag) < 1e-3]
    extremes = near_real[np.argsort(near_real.real)][[0, -1]]
    limits = extremes.real
    scale = np.abs(coefs)[None, :] * np.abs(limits)[:, None] ** np.arange(4, -1, -1)[None, :]
    slope = np.abs(np.polyval(np.polyder(coefs), limits))
    return limits, 100 * np.finfo(float).eps * scale.sum(axis=1) / slope + np.abs(extremes.imag)


@pytest.mark.parametrize(("b", "c", "n"), [case for case in CASES if case[0] < case[2] and case[1] < case[2]])
def test_ends_are_the_extreme_roots_of_the_closed_form_quartic(b, c, n):
    limits, error = yang_sun_hardin_limits(b, c, n)
    ci = paired_difference_ci(items(b, c, n))
    assert np.all(np.abs([ci.low, ci.high] - limits) <= 1e-9 + error)
    assert np.all(error < 1e-9)  # well-conditioned here: a tight check


@settings(max_examples=150, deadline=None)
@given(n=st.integers(2, 2000), frac_b=st.floats(0, 1), frac_c=st.floats(0, 1), level=st.sampled_from([0.9, 0.95, 0.99]))
def test_ends_match_the_quartic_for_any_counts(n, frac_b, frac_c, level):
    b = round(frac_b * (n - 1))  # b, c < n: at b = n (c = n) the quartic has a double root at 1 (-1)
    c = min(round(frac_c * (n - b)), n - 1)
    limits, error = yang_sun_hardin_limits(b, c, n, level)
    assume(np.all(error < 1e-6))  # where the quartic's float roots are reliable (test_ends_solve_... covers edges)
    ci = paired_difference_ci(items(b, c, n), level=level)
    assert np.all(np.abs([ci.low, ci.high] - limits) <= 1e-9 + error), ([ci.low, ci.high], limits, error)
    assert ci.low <= ci.estimate <= ci.high


# --------------------------------------------------------------------------------------- coverage

GRID_N = (30, 31, 50, 100, 150)
GRID_P = ((0.05, 0.0), (0.02, 0.0), (0.05, 0.05), (0.1, 0.02), (0.2, 0.1), (0.3, 0.05), (0.4, 0.4), (0.0, 0.0))
DRAWS = 4000


def test_coverage_of_the_score_interval_on_a_grid():
    """Monte Carlo coverage of the 95 % interval: DRAWS trinomial samples per (n, P(+1), P(-1)) cell, the interval
    computed once per distinct (b, c). Tango's exact coverage in these cells is 0.943 to 1 (MC SE 0.0035)."""
    rng = np.random.default_rng(20240611)
    worst = 1.0
    for n in GRID_N:
        for p, q in GRID_P:
            counts = rng.multinomial(n, [p, q, 1.0 - p - q], size=DRAWS)
            pairs, freq = np.unique(counts[:, :2], axis=0, return_counts=True)
            covered = 0
            for (b, c), k in zip(pairs.tolist(), freq.tolist(), strict=True):
                ci = paired_difference_ci(items(b, c, n))
                covered += k * (ci.low <= p - q <= ci.high)
            assert covered / DRAWS >= 0.93, (n, p, q, covered / DRAWS)
            worst = min(worst, covered / DRAWS)
    assert worst < 0.97  # the check has teeth: some cell is near nominal, not everything trivially covered


def test_percentile_bootstrap_undercovers_where_the_score_interval_does_not():
    """Why the score interval: n = 31, P(+1) = 0.05, P(-1) = 0. A sample with no +1 (probability 0.95^31 = 0.20)
    gives the bootstrap CI [0, 0], which misses 0.05; the exact bootstrap (no seed) covers at most 80 %."""
    n, p = 31, 0.05
    rng = np.random.default_rng(31)
    b_counts = rng.binomial(n, p, size=DRAWS)
    boot = score = 0
    for b, k in zip(*np.unique(b_counts, return_counts=True), strict=True):
        d = items(int(b), 0, n)
        ci_boot = bootstrap_mean(d, seed=0, method="exact")
        ci_score = paired_difference_ci(d)
        boot += k * (ci_boot.low <= p <= ci_boot.high)
        score += k * (ci_score.low <= p <= ci_score.high)
    assert boot / DRAWS < 0.85
    assert score / DRAWS >= 0.95
    assert paired_difference_ci(items(0, 0, n)).high > p > bootstrap_mean(items(0, 0, n), seed=0, method="exact").high


# -------------------------------------------------------------------------------------- clusters


def correlated_clusters(
    rng: np.random.Generator, sizes: np.ndarray, p: float, q: float, keep: float, draws: int = 1
) -> np.ndarray:
    """``draws`` rows of per-item differences of clusters of ``sizes`` items: each cluster draws a type in
    (+1, -1, 0) with probabilities (p, q, 1 - p - q); each item keeps it with probability ``keep``, else draws its
    own from the same distribution (so every item's marginal is (p, q, 1 - p - q) and the mean difference is
    p - q)."""
    probs = [p, q, 1.0 - p - q]
    values = np.array([1.0, -1.0, 0.0])
    n = int(sizes.sum())
    shared = np.repeat(rng.choice(3, size=(draws, sizes.shape[0]), p=probs), sizes, axis=1)
    own = rng.choice(3, size=(draws, n), p=probs)
    return values[np.where(rng.random((draws, n)) < keep, shared, own)]


def centred_design_effect(d: np.ndarray, clusters: np.ndarray, delta: float) -> float:
    """[G / (G - 1) sum_g (sum_{i in g} (d_i - delta))^2] / [n / (n - 1) sum_i (d_i - delta)^2], floored at 1."""
    _, group = np.unique(clusters, return_inverse=True)
    cluster_sums = np.bincount(group.reshape(-1), weights=d - delta)
    groups, n = cluster_sums.shape[0], d.shape[0]
    robust = groups / (groups - 1) * float((cluster_sums**2).sum())
    iid = n / (n - 1) * float(((d - delta) ** 2).sum())
    return max(robust / iid, 1.0)


def test_clustered_ends_solve_the_clustered_score_equation():
    """At each end, Tango's T with its variance times the design effect centred at that end is +-z."""
    rng = np.random.default_rng(5)
    for groups in (8, 20, 50):
        sizes = rng.integers(1, 6, size=groups)
        clusters = np.repeat(np.arange(groups), sizes)
        d = correlated_clusters(rng, sizes, 0.3, 0.1, 0.8)[0]
        b, c, n = int((d == 1).sum()), int((d == -1).sum()), d.shape[0]
        ci = paired_difference_ci(d, clusters=clusters)
        assert ci.method == "tango score (design effect)" and ci.n_clusters == groups
        assert ci.design_effect == pytest.approx(centred_design_effect(d, clusters, d.mean()), rel=1e-12)
        for end in (ci.low, ci.high):
            t = score_statistic(b, c, n, end, centred_design_effect(d, clusters, end))
            assert abs(abs(t) - Z95) < 1e-6
        for delta in np.linspace(ci.low, ci.high, 21)[1:-1]:
            assert abs(score_statistic(b, c, n, float(delta), centred_design_effect(d, clusters, delta))) < Z95
        plain = paired_difference_ci(d)
        assert ci.low <= plain.low and plain.high <= ci.high


def test_clustered_interval_is_the_hull_of_the_accepted_differences():
    """Five clusters of 6-9 items, 9 at +1 and none at -1: far below the estimate the centred design effect grows
    (every cluster's residual sum grows with m_g delta) faster than Tango's variance shrinks, and |T| falls back
    below z after exceeding it. The interval spans every accepted delta, its ends solving |T| = z."""
    sizes = np.array([8, 7, 9, 7, 6])
    positives = np.array([2, 2, 3, 1, 1])
    d = np.concatenate([np.repeat([1.0, 0.0], [k, m - k]) for k, m in zip(positives, sizes, strict=True)])
    clusters = np.repeat(np.arange(5), sizes)
    b, c, n = 9, 0, 37
    ci = paired_difference_ci(d, clusters=clusters)
    grid = np.linspace(-0.999, 0.999, 999)
    t = np.array([score_statistic(b, c, n, x, centred_design_effect(d, clusters, x)) for x in grid])
    accepted = grid[np.abs(t) <= Z95]
    assert ci.low <= accepted.min() and accepted.max() <= ci.high
    inside = (grid > ci.low) & (grid < ci.high)
    assert np.any(np.abs(t[inside]) > Z95)  # the accepted set is not an interval here: its hull is reported
    for end in (ci.low, ci.high):
        assert abs(abs(score_statistic(b, c, n, end, centred_design_effect(d, clusters, end))) - Z95) < 1e-6


CLUSTER_DRAWS = 1500


@pytest.mark.parametrize("groups", [20, 50])
def test_clustered_interval_covers_under_within_cluster_correlation(groups):
    """Clusters of 3 items sharing their type with probability 0.8 (intra-cluster correlation 0.64, design
    effect 1 + 2 * 0.64 = 2.28). The clustered interval keeps coverage at 0.95-1 in these cells; the unclustered
    one falls to 0.78-0.83 (0.94 in the sparse cell with 20 clusters).

    The (0.05, 0) cell is the sparse one: a sample often has no, one or two +1 items. A single design effect
    centred at the estimate (b, c and n divided by it, the plain Rao-Scott effective sample) is then about 1,
    whatever the clustering, and undercovers (0.92 with 50 clusters); centring it at each hypothesised
    difference (the implementation) does not."""
    sizes = np.full(groups, 3)
    clusters = np.repeat(np.arange(groups), sizes)
    rng = np.random.default_rng(1000 + groups)
    for p, q in ((0.3, 0.1), (0.1, 0.02), (0.05, 0.0)):
        clustered = plain = point = 0
        for d in correlated_clusters(rng, sizes, p, q, 0.8, CLUSTER_DRAWS):
            ci = paired_difference_ci(d, clusters=clusters)
            clustered += ci.low <= p - q <= ci.high
            ci = paired_difference_ci(d)
            plain += ci.low <= p - q <= ci.high
            if d.var() > 0:  # the single, estimate-centred design effect (1 when every item is equal)
                deff = centred_design_effect(d, clusters, d.mean())
                b, c, n = (d == 1).sum() / deff, (d == -1).sum() / deff, d.shape[0] / deff
                low, high = tango_interval(b, c, n)
            else:
                low, high = ci.low, ci.high
            point += low <= p - q <= high
        assert clustered / CLUSTER_DRAWS >= 0.93, (groups, p, q, clustered / CLUSTER_DRAWS)
        assert plain / CLUSTER_DRAWS < clustered / CLUSTER_DRAWS - 0.05, (groups, p, q, plain / CLUSTER_DRAWS)
        if (groups, p, q) == (50, 0.05, 0.0):
            assert point / CLUSTER_DRAWS < 0.93, point / CLUSTER_DRAWS


def test_clustered_all_equal_items_use_the_cluster_sizes():
    """No discordant item: the design effect at every delta != 0 is G / (G - 1) (n - 1) / n sum(m_g^2) / n, and
    the interval is Tango's closed form on the effective n: +-z^2 / (n / deff + z^2)."""
    sizes = np.array([3, 3, 2, 4, 1, 3, 3, 5])
    clusters = np.repeat(np.arange(sizes.shape[0]), sizes)
    n, groups = int(sizes.sum()), sizes.shape[0]
    deff = groups / (groups - 1) * (n - 1) / n * float((sizes**2).sum()) / n
    for value in (0.0, 1.0, -1.0):
        ci = paired_difference_ci(np.full(n, value), clusters=clusters)
        assert ci.design_effect == pytest.approx(deff, rel=1e-12)
        assert ci.design_effect == pytest.approx(centred_design_effect(np.full(n, value), clusters, 0.5), rel=1e-12)
        z2 = Z95**2
        if value == 0.0:
            assert [ci.low, ci.high] == pytest.approx([-z2 / (n / deff + z2), z2 / (n / deff + z2)], rel=1e-12)
        else:  # all +1: [(n' - z^2) / (n' + z^2), 1]; all -1 mirrored
            end = (n / deff - z2) / (n / deff + z2)
            assert [ci.low, ci.high] == pytest.approx([end, 1.0] if value > 0 else [-1.0, -end], rel=1e-12)


def test_a_single_cluster_counts_as_one_unit():
    """One cluster: no between-cluster variance to estimate; its items are one unit (design effect n)."""
    d = items(3, 1, 8)
    ci = paired_difference_ci(d, clusters=np.zeros(8, dtype=int))
    assert ci.design_effect == 8.0 and ci.n_clusters == 1
    for end in (ci.low, ci.high):
        assert abs(abs(score_statistic(3, 1, 8, end, deff=8.0)) - Z95) < 1e-6


def test_singleton_clusters_equal_the_unclustered_interval():
    d = np.random.default_rng(3).choice([-1.0, 0.0, 1.0], size=57, p=[0.1, 0.6, 0.3])
    plain = paired_difference_ci(d)
    assert paired_difference_ci(d, clusters=[f"video{i}" for i in range(57)]) == plain
    assert paired_difference_ci(d, clusters=np.arange(57)[::-1]) == plain
    assert plain.design_effect == 1.0 and plain.n_clusters == 57 and plain.method == "tango score"


# ------------------------------------------------------------------------------ record and inputs


def test_record_reads_like_a_bootstrap_ci():
    ci = paired_difference_ci([1, 0, 1, -1, 0, True, False], level=0.9)
    assert isinstance(ci, DifferenceCI) and ci.level == 0.9 and ci.n == 7
    assert ci.n_resamples == 0 and ci.mc_se_low == 0.0 and ci.mc_se_high == 0.0
    assert list(ci.as_dict()) == [f.name for f in dataclasses.fields(ci)]
    assert stats.paired_difference_ci is paired_difference_ci
    with pytest.raises(dataclasses.FrozenInstanceError):
        ci.low = 0.0  # type: ignore[misc]


def test_higher_level_gives_a_wider_interval():
    d = items(9, 3, 40)
    widths = [paired_difference_ci(d, level=lv).high - paired_difference_ci(d, level=lv).low for lv in (0.8, 0.95)]
    assert widths[0] < widths[1]


@pytest.mark.parametrize(
    ("differences", "kwargs", "match"),
    [
        ([1.0, math.nan, 0.0], {}, r"differences\[1\] is nan"),
        ([1.0, 0.5, 0.0], {}, r"differences\[1\] is 0\.5: .* must be -1, 0 or \+1"),
        ([0, 2, -1], {}, r"differences\[1\] is 2\.0"),
        ([], {}, "differences is empty"),
        ([[1, 0], [0, 1]], {}, "one-dimensional"),
        (["a", "b"], {}, "real numbers"),
        ([1, 0], {"level": 1.0}, "level must be a number strictly between 0 and 1"),
        ([1, 0], {"level": True}, "level must be"),
        ([1, 0, -1], {"clusters": [1, 2]}, "clusters has 2 entries but values has 3"),
    ],
)
def test_invalid_inputs_raise(differences, kwargs, match):
    with pytest.raises(ValueError, match=match):
        paired_difference_ci(differences, **kwargs)
