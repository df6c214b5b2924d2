"""Tests for postprocess.stats.intervals: Wilson intervals and the (cluster, paired) bootstraps."""

from __future__ import annotations

import dataclasses
import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from postprocess import stats
from postprocess.stats import bootstrap_mean, intervals, paired_bootstrap_diff, wilson
from tests.helpers.stats_cases import TIGHT
from vdg_tasks.vocabulary.seeding import stable_seed


def vdg_values(n: int, seed: int, p=(0.12, 0.58, 0.30)) -> np.ndarray:
    """Synthetic per-question VDG in {-1, 0, +1}."""
    return np.random.default_rng(seed).choice([-1, 0, 1], size=n, p=p).astype(float)


# ----------------------------------------------------------------------------------- wilson


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)],
)
def test_wilson_published_values(k, n, low, high):
    # Newcombe, "Two-sided confidence intervals for the single proportion", Statistics in Medicine 17:857-872
    # (1998), Table I, method 3 (score interval without continuity correction), 95 %
    iv = wilson(k, n)
    assert (round(iv.low, 4), round(iv.high, 4)) == (low, high)
    assert iv.estimate == k / n and iv.level == 0.95 and iv.k == k and iv.n == n


def wilson_by_hand(k: int, n: int, level: float) -> tuple[float, float]:
    """The two p with (k / n - p)^2 = z^2 p (1 - p) / n (the score test at p accepts exactly), solved as a quadratic
    in p, with z from the standard library's normal quantile."""
    z = NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)
    phat = k / n
    a, b, c = 1.0 + z * z / n, -(2.0 * phat + z * z / n), phat * phat
    root = math.sqrt(b * b - 4.0 * a * c)
    return (-b - root) / (2.0 * a), (-b + root) / (2.0 * a)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 5000),
    frac=st.floats(0, 1),
    level=st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999]),
)
def test_wilson_solves_the_score_equation(n, frac, level):
    k = round(frac * n)
    iv = wilson(k, n, level=level)
    low, high = wilson_by_hand(k, n, level)
    assert_allclose([iv.low, iv.high], [low, high], atol=TIGHT)
    assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0
    assert (iv.low == 0.0) == (k == 0) and (iv.high == 1.0) == (k == n)


def test_two_sided_z_published_quantiles():
    # the standard normal's 97.5 % and 99.5 % points, 1.959963984540054235... and 2.575829303548900444...
    assert stats.two_sided_z(0.95) == pytest.approx(1.9599639845400542, rel=1e-15)
    assert stats.two_sided_z(0.99) == pytest.approx(2.5758293035489004, rel=1e-15)


def test_wilson_accepts_numpy_integers():
    assert wilson(np.int64(4), np.int32(9)) == wilson(4, 9)


@pytest.mark.parametrize(
    ("k", "n", "level", "match"),
    [
        (0, 0, 0.95, "n is 0"),
        (11, 10, 0.95, "k = 11 exceeds n = 10"),
        (-1, 10, 0.95, "k must be a non-negative integer"),
        (1, -10, 0.95, "n must be a non-negative integer"),
        (1.0, 10, 0.95, "k must be a non-negative integer"),
        (True, 10, 0.95, "k must be a non-negative integer"),
        (1, 10, 1.0, "level must be a number strictly between 0 and 1"),
        (1, 10, 0.0, "level must be a number strictly between 0 and 1"),
        (1, 10, 95, "level must be a number strictly between 0 and 1"),
    ],
)
def test_wilson_validation(k, n, level, match):
    with pytest.raises(ValueError, match=match):
        wilson(k, n, level=level)


# -------------------------------------------------------------------------------- bootstrap


def naive_index_means(values: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Textbook bootstrap: resample item indices with replacement, one row per resample."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(n_resamples, len(values)))
    return values[idx].mean(axis=1)


def naive_cluster_means(values: np.ndarray, clusters: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Textbook cluster bootstrap: resample cluster ids, pool their items, take the mean."""
    rng = np.random.default_rng(seed)
    ids = np.unique(clusters)
    members = [values[clusters == c] for c in ids]
    out = np.empty(n_resamples)
    for r in range(n_resamples):
        pick = rng.integers(0, len(ids), size=len(ids))
        out[r] = np.concatenate([members[i] for i in pick]).mean()
    return out


def test_bootstrap_estimate_and_schema():
    v = vdg_values(600, 1)
    ci = bootstrap_mean(v, seed=7)
    assert ci.estimate == pytest.approx(v.mean(), abs=TIGHT)
    assert ci.low <= ci.estimate <= ci.high
    assert (ci.level, ci.n, ci.n_clusters, ci.n_resamples, ci.seed) == (0.95, 600, 600, 2000, 7)
    assert ci.resampler == "multinomial"  # 3 distinct values among 600 items
    assert set(ci.as_dict()) == {f.name for f in dataclasses.fields(stats.BootstrapCI)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        ci.low = 0.0  # type: ignore[misc]


@pytest.mark.parametrize("resampler", ["multinomial", "index"])
def test_bootstrap_percentiles_are_np_quantile_of_resampled_means(resampler):
    v = vdg_values(300, 2)
    ci = bootstrap_mean(v, 500, seed=11, level=0.9, resampler=resampler)
    means, units, used = stats.resampled_means(v, None, np.random.default_rng(11), 500, resampler)
    assert (units, used) == (300, resampler)
    # percentile CI = np.quantile (linear) at (1 - level) / 2 and 1 - (1 - level) / 2
    assert_allclose([ci.low, ci.high], np.quantile(means, [0.05, 0.95]), atol=TIGHT)


def test_index_resampler_equals_textbook_index_resampling():
    v = vdg_values(200, 3)
    means, _, _ = stats.resampled_means(v, None, np.random.default_rng(5), 300, "index")
    # same draws as the naive loop-free textbook version, so equal up to summation order
    assert_allclose(means, naive_index_means(v, 300, 5), atol=1e-12)


def test_multinomial_and_index_paths_agree_in_distribution():
    v = vdg_values(600, 4)
    multi = bootstrap_mean(v, 20000, seed=21, resampler="multinomial")
    naive = np.quantile(naive_index_means(v, 20000, 22), [0.025, 0.975])
    # Monte Carlo error of a 2.5% quantile with 20000 resamples is ~0.001 here; 0.01 is generous.
    assert_allclose([multi.low, multi.high], naive, atol=0.01)
    idx = bootstrap_mean(v, 20000, seed=23, resampler="index")
    assert_allclose([multi.low, multi.high], [idx.low, idx.high], atol=0.01)


@pytest.mark.parametrize("resampler", ["multinomial", "index"])
def test_resampled_means_match_bootstrap_theory(resampler):
    # The bootstrap distribution of a mean has expectation mean(v) and SD = std(v, ddof=0) / sqrt(n).
    v = vdg_values(600, 5)
    means, _, _ = stats.resampled_means(v, None, np.random.default_rng(9), 20000, resampler)
    sd = v.std() / math.sqrt(len(v))
    # MC error of the mean of 20000 resamples is sd / 141; of their SD about sd / 200.
    assert_allclose(means.mean(), v.mean(), atol=5 * sd / 141)
    assert_allclose(means.std(), sd, rtol=0.03)


def test_bootstrap_continuous_values_use_index_path():
    v = np.random.default_rng(6).normal(size=400)
    ci = bootstrap_mean(v, 4000, seed=1)
    assert ci.resampler == "index"
    se = v.std() / math.sqrt(len(v))
    # percentile CI of a near-normal mean ~ mean +- 1.96 se; tolerance is ~0.1 se of MC + skew error
    assert_allclose([ci.low, ci.high], [v.mean() - 1.96 * se, v.mean() + 1.96 * se], atol=0.15 * se)


def test_bootstrap_deterministic_for_a_seed_and_different_for_another():
    v = vdg_values(500, 7)
    for resampler in ("multinomial", "index"):
        a = bootstrap_mean(v, seed=stable_seed("bootstrap", "m1"), resampler=resampler)
        b = bootstrap_mean(v, seed=stable_seed("bootstrap", "m1"), resampler=resampler)
        c = bootstrap_mean(v, seed=stable_seed("bootstrap", "m2"), resampler=resampler)
        assert a == b
        assert (a.low, a.high) != (c.low, c.high)


def test_bootstrap_chunking_gives_the_same_numbers(monkeypatch):
    v = vdg_values(500, 8)
    cl = np.random.default_rng(0).integers(0, 150, size=500)
    ref = [
        bootstrap_mean(v, 1000, seed=3, resampler=r, clusters=c) for r in ("multinomial", "index") for c in (None, cl)
    ]
    monkeypatch.setattr(intervals, "_CHUNK_ELEMENTS", 997)  # forces many uneven chunks
    got = [
        bootstrap_mean(v, 1000, seed=3, resampler=r, clusters=c) for r in ("multinomial", "index") for c in (None, cl)
    ]
    assert got == ref


def test_bootstrap_degenerate_inputs():
    one = bootstrap_mean([0.5], seed=1)
    assert (one.estimate, one.low, one.high, one.n) == (0.5, 0.5, 0.5, 1)
    const = bootstrap_mean(np.ones(50), seed=1)
    assert (const.low, const.high) == (1.0, 1.0)
    booleans = bootstrap_mean(np.array([True, False, True, True]), seed=1)
    assert booleans.estimate == 0.75


def test_cluster_bootstrap_singletons_equal_plain_bootstrap():
    v = vdg_values(600, 9)
    plain = bootstrap_mean(v, seed=13)
    # multinomial path: distinct (sum, size) pairs of singletons are the distinct values, so the
    # very same counts are drawn
    single = bootstrap_mean(v, seed=13, clusters=np.arange(600)[::-1].astype(str))
    assert single.n_clusters == 600 and single.resampler == "multinomial"
    assert_allclose([single.low, single.high], [plain.low, plain.high], atol=TIGHT)
    # index path: clusters are re-ordered by id, so the draws differ but the distribution agrees
    p_idx = bootstrap_mean(v, 20000, seed=14, resampler="index")
    c_idx = bootstrap_mean(v, 20000, seed=15, resampler="index", clusters=np.random.default_rng(1).permutation(600))
    assert_allclose([c_idx.low, c_idx.high], [p_idx.low, p_idx.high], atol=0.01)


def test_cluster_bootstrap_of_duplicated_items_equals_plain_bootstrap():
    # Each value twice in its own cluster: cluster (sum, size) = (2v, 1*2); resampled means and the
    # multinomial draws are those of the plain bootstrap on v (identity, not just in distribution).
    v = vdg_values(300, 10)
    plain = bootstrap_mean(v, seed=17)
    dup = bootstrap_mean(np.repeat(v, 2), seed=17, clusters=np.repeat(np.arange(300), 2))
    assert (dup.n, dup.n_clusters) == (600, 300)
    assert_allclose([dup.low, dup.high], [plain.low, plain.high], atol=TIGHT)


@pytest.mark.parametrize("resampler", ["multinomial", "index"])
def test_cluster_bootstrap_agrees_with_textbook_cluster_resampling(resampler):
    rng = np.random.default_rng(11)
    clusters = np.repeat(np.arange(120), rng.integers(1, 4, size=120))  # videos with 1-3 questions
    # correlated within a cluster: a per-video effect
    v = np.clip(np.round(rng.normal(size=120)[clusters] * 0.7 + rng.normal(size=len(clusters)) * 0.4), -1, 1)
    fast = bootstrap_mean(v, 20000, seed=31, clusters=clusters, resampler=resampler)
    assert fast.resampler == resampler
    naive = np.quantile(naive_cluster_means(v, clusters, 20000, 32), [0.025, 0.975])
    # SE of the mean here is ~0.06; 20000-resample MC error of the endpoints is ~0.003
    assert_allclose([fast.low, fast.high], naive, atol=0.012)
    plain = bootstrap_mean(v, 20000, seed=33)
    assert fast.high - fast.low > plain.high - plain.low  # positive intra-cluster correlation


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"values": []}, "values is empty"),
        ({"values": np.zeros((3, 2))}, r"values must be one-dimensional, got shape \(3, 2\)"),
        ({"values": [0.0, np.nan]}, r"values\[1\] is nan: values must be finite"),
        ({"values": [0.0, np.inf]}, r"values\[1\] is inf"),
        ({"values": ["a", "b"]}, "values must hold real numbers or booleans"),
        ({"seed": -1}, "seed must be a non-negative int"),
        ({"seed": 1.5}, "seed must be a non-negative int"),
        ({"seed": None}, "seed must be a non-negative int"),
        ({"n_resamples": 0}, "n_resamples must be a positive int"),
        ({"n_resamples": 10.0}, "n_resamples must be a positive int"),
        ({"level": 1.0}, "level must be a number strictly between 0 and 1"),
        ({"clusters": [1, 2]}, "clusters has 2 entries but values has 3"),
        ({"clusters": [[1, 2, 3]]}, "clusters must be one-dimensional"),
        ({"resampler": "fast"}, "resampler must be 'auto', 'multinomial' or 'index'"),
    ],
)
def test_bootstrap_validation(kwargs, match):
    args = {"values": [1.0, 0.0, -1.0], "seed": 1} | kwargs
    with pytest.raises(ValueError, match=match):
        bootstrap_mean(**args)


def test_bootstrap_seed_is_required():
    with pytest.raises(TypeError, match="seed"):
        bootstrap_mean([1.0, 0.0])  # type: ignore[call-arg]


# --------------------------------------------------------------------- paired_bootstrap_diff


def test_paired_bootstrap_diff_is_bootstrap_of_differences():
    rng = np.random.default_rng(14)
    a = rng.random(500) < 0.6
    b = rng.random(500) < 0.5
    d = paired_bootstrap_diff(a, b, seed=3)
    assert d == bootstrap_mean(a.astype(float) - b.astype(float), seed=3)
    assert d.estimate == pytest.approx(a.mean() - b.mean(), abs=TIGHT)


def test_paired_bootstrap_diff_agrees_with_four_outcome_multinomial():
    rng = np.random.default_rng(15)
    a = (rng.random(600) < 0.6).astype(int)
    b = np.where(rng.random(600) < 0.7, a, 1 - a)  # correlated pairs
    joint = np.bincount(2 * a + b, minlength=4)  # (0,0), (0,1), (1,0), (1,1)
    counts = np.random.default_rng(41).multinomial(600, joint / 600, size=20000)
    # diff of a resample = (#(1,0) - #(0,1)) / n
    ref = np.quantile((counts[:, 2] - counts[:, 1]) / 600, [0.025, 0.975])
    got = paired_bootstrap_diff(a, b, 20000, seed=42)
    assert_allclose([got.low, got.high], ref, atol=0.01)


def test_paired_bootstrap_diff_validation():
    with pytest.raises(ValueError, match="a and b must be paired"):
        paired_bootstrap_diff([1, 0, 1], [1, 0], seed=1)
    with pytest.raises(ValueError, match="b is empty"):
        paired_bootstrap_diff([1], [], seed=1)
