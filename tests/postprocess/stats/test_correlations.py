"""Tests for postprocess.stats.correlations: Pearson's and Spearman's (scipy.stats') against the textbook formulas
written here (average ranks, the t statistic of r), and their undefined cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from postprocess import stats


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = np.empty(len(values))
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start : end + 1]:
            ranks[i] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def correlation_with_p(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(r, two-sided p) with p from t = r sqrt((n - 2) / (1 - r^2)) on n - 2 df (exact under bivariate normality)."""
    r = float(np.corrcoef(x, y)[0, 1])
    df = len(x) - 2
    if abs(r) >= 1.0:
        return r, 0.0
    t = r * math.sqrt(df / ((1 - r) * (1 + r)))
    return r, float(2 * sps.t.sf(abs(t), df))


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(3, 60),
    seed=st.integers(0, 2**32 - 1),
    ties=st.booleans(),
)
def test_correlations_equal_the_textbook_formulas(n, seed, ties):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n).astype(float) if ties else rng.normal(size=n)
    b = rng.integers(0, 3, n).astype(float) if ties else a + rng.normal(size=n)
    if np.unique(a).size < 2 or np.unique(b).size < 2:
        return
    rank_based = correlation_with_p(average_ranks(a), average_ranks(b))
    for ours, expected in ((stats.spearman(a, b), rank_based), (stats.pearson(a, b), correlation_with_p(a, b))):
        if abs(expected[0]) > 1 - 1e-9:  # p is 0 at |r| = 1, and a rounding error in r moves it to ~1e-8
            assert ours[0] == pytest.approx(expected[0], abs=1e-12) and ours[1] < 1e-6
            continue
        assert ours[0] == pytest.approx(expected[0], rel=1e-12, abs=1e-14)
        assert ours[1] == pytest.approx(expected[1], rel=1e-9, abs=1e-300)


def test_published_spearman_example():
    # IQ and hours of TV per week of ten people, the worked example of Wikipedia's "Spearman's rank correlation
    # coefficient": sum of squared rank differences 194, rho = 1 - 6 * 194 / (10 * 99) = -29 / 165, p = 0.627188
    iq = [106, 100, 86, 101, 99, 103, 97, 113, 112, 110]
    tv = [7, 27, 2, 50, 28, 29, 20, 12, 6, 17]
    rho, p = stats.spearman(iq, tv)
    assert rho == pytest.approx(-29 / 165, rel=1e-12)
    assert p == pytest.approx(0.6272, abs=5e-5)


def test_perfect_correlation_has_p_zero():
    a = np.arange(6.0)
    assert stats.spearman(a, a) == (pytest.approx(1.0), 0.0)
    assert stats.pearson(a, -2 * a) == (pytest.approx(-1.0), pytest.approx(0.0, abs=1e-15))


def test_a_correlation_is_undefined_below_three_points_or_on_a_constant_side():
    for correlation in (stats.spearman, stats.pearson):
        assert np.isnan(correlation([1.0, 2.0], [2.0, 1.0])).all()
        assert np.isnan(correlation([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0])).all()
