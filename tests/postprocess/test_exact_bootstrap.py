"""The exact bootstrap CI, the Monte Carlo SE target, the sign-flip test and McNemar's p against independent
calculations: enumeration of multinomial counts and sign vectors, large Monte Carlo runs, statsmodels."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import multinomial
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from postprocess.stats import bootstrap_mean, mcnemar_p, sign_flip_test


def _enumerated_percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    """Percentiles of the bootstrap distribution of the mean by brute force: every vector of counts over the
    distinct values (multinomial, probabilities = their frequencies), its probability and its mean; each end is the
    smallest mean whose cumulative probability reaches the tail."""
    distinct, freq = np.unique(values, return_counts=True)
    n = len(values)
    means, probs = [], []
    for counts in itertools.product(range(n + 1), repeat=len(distinct)):
        if sum(counts) == n:
            means.append(float(np.dot(counts, distinct)) / n)
            probs.append(multinomial.pmf(counts, n, freq / n))
    order = np.argsort(means, kind="stable")
    means, cdf = np.asarray(means)[order], np.cumsum(np.asarray(probs)[order])
    tail = (1 - level) / 2
    return tuple(float(means[np.flatnonzero(cdf >= q - 1e-12)[0]]) for q in (tail, 1 - tail))


@pytest.mark.parametrize(
    "values",
    [
        [1, 0, 0, 1, -1, 1, 0, 1, 1, 0],  # a VDG in {-1, 0, +1}
        [1, 1, 0, 1, 1, 1, 0, 1],  # correct flags
        [0.5, 1.0, 0.0, 0.5, 0.5, 1.0, -0.5, 0.5, 1.0],  # judge-score differences in halves
        [2, -1, 0, 1, 1, 0, 2],  # a difference of differences
    ],
)
@pytest.mark.parametrize("level", [0.95, 0.9])
def test_exact_ci_is_the_enumerated_bootstrap_distributions_percentiles(values, level):
    values = np.asarray(values, dtype=float)
    ci = bootstrap_mean(values, 100, seed=1, level=level, method="exact")
    assert ci.method == "exact" and ci.n_resamples == 0 and ci.mc_se_low == ci.mc_se_high == 0
    assert (ci.low, ci.high) == pytest.approx(_enumerated_percentiles(values, level), abs=1e-12)
    assert ci.estimate == pytest.approx(values.mean())


def test_exact_ci_agrees_with_a_large_monte_carlo_run_within_its_error():
    rng = np.random.default_rng(4)
    values = rng.choice([-1, 0, 1], size=200, p=[0.15, 0.55, 0.3]).astype(float)
    exact = bootstrap_mean(values, seed=0, method="exact")
    mc = bootstrap_mean(values, 100_000, seed=7, method="resample")
    assert mc.method == "monte carlo" and mc.n_resamples == 100_000
    step = 1 / len(values)  # the exact end is on the lattice of means; Monte Carlo interpolates between
    assert abs(mc.low - exact.low) <= 4 * mc.mc_se_low + step
    assert abs(mc.high - exact.high) <= 4 * mc.mc_se_high + step


def test_values_off_the_lattice_and_clusters_fall_back_to_monte_carlo():
    values = np.array([0.3, 0.1, 0.7, 0.2] * 10)
    assert bootstrap_mean(values, 400, seed=0, method="exact").method == "monte carlo"
    flags = np.array([1, 0, 1, 1] * 10, dtype=float)
    clustered = bootstrap_mean(flags, 400, seed=0, method="exact", clusters=np.arange(40) // 4)
    assert clustered.method == "monte carlo" and clustered.n_resamples == 400


def test_mc_se_target_is_met_on_a_500_question_cluster_bootstrap():
    rng = np.random.default_rng(11)
    values = rng.choice([-1, 0, 1], size=500, p=[0.1, 0.6, 0.3]).astype(float)
    videos = np.arange(500) // 3
    ci = bootstrap_mean(values, 2000, seed=3, clusters=videos, method="exact", mc_se_target=0.002)
    assert ci.method == "monte carlo" and max(ci.mc_se_low, ci.mc_se_high) < 0.002 and ci.n_resamples >= 2000
    # the estimated SE is the spread of the endpoint over independent streams of that many resamples
    ends = np.array(
        [
            (r.low, r.high)
            for r in (
                bootstrap_mean(values, ci.n_resamples, seed=100 + s, clusters=videos, method="resample")
                for s in range(12)
            )
        ]
    )
    spread = ends.std(axis=0, ddof=1)
    assert np.all(spread < 0.004)  # twice the target: 12 streams estimate an SD within ~40 %
    assert 0.3 < ci.mc_se_low / spread[0] < 3 and 0.3 < ci.mc_se_high / spread[1] < 3


def _enumerated_sign_flip_p(d: np.ndarray) -> float:
    observed = abs(d.sum())
    sums = [abs(np.dot(signs, d)) for signs in itertools.product((-1, 1), repeat=len(d))]
    return float(np.mean(np.asarray(sums) >= observed - 1e-9))


@pytest.mark.parametrize("n", [1, 3, 7, 12])
@pytest.mark.parametrize("halves", [False, True])
def test_sign_flip_test_equals_enumerating_every_sign_vector(n, halves):
    rng = np.random.default_rng(n + 20 * halves)
    d = rng.integers(-2, 3, size=n).astype(float)
    if halves:
        d = d / 2
    result = sign_flip_test(d)
    assert result.p_value == pytest.approx(_enumerated_sign_flip_p(d), abs=1e-12)
    assert result.n == n and result.n_nonzero == int((d != 0).sum())
    assert result.estimate == pytest.approx(d.mean())


@pytest.mark.parametrize(("b01", "b10"), [(0, 3), (3, 9), (12, 12), (7, 17), (10, 14), (20, 35), (40, 40), (5, 60)])
def test_mcnemar_p_follows_statsmodels_test_choice(b01, b10):
    table = [[50, b01], [b10, 50]]
    exact = b01 + b10 < 25
    want = 1.0 if b01 == b10 else sm_mcnemar(table, exact=exact, correction=True).pvalue
    p, test = mcnemar_p(np.array([b01]), np.array([b10]))
    assert p[0] == pytest.approx(want, rel=1e-9, abs=1e-15)
    assert test[0] == ("exact binomial" if exact else "chi-square (continuity corrected)")
