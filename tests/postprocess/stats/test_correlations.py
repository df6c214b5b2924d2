"""Tests for postprocess.stats.correlations: Spearman and Pearson against scipy.stats."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from postprocess import stats


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(3, 60),
    seed=st.integers(0, 2**32 - 1),
    ties=st.booleans(),
)
def test_correlations_equal_scipy_stats(n, seed, ties):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n).astype(float) if ties else rng.normal(size=n)
    b = rng.integers(0, 3, n).astype(float) if ties else a + rng.normal(size=n)
    if np.unique(a).size < 2 or np.unique(b).size < 2:
        return
    for ours, theirs in ((stats.spearman(a, b), sps.spearmanr(a, b)), (stats.pearson(a, b), sps.pearsonr(a, b))):
        assert ours[0] == pytest.approx(theirs.statistic, rel=1e-14, abs=1e-15)
        assert ours[1] == pytest.approx(theirs.pvalue, rel=1e-12, abs=1e-300)


def test_perfect_correlation_has_p_zero():
    a = np.arange(6.0)
    assert stats.spearman(a, a) == (pytest.approx(1.0), 0.0)
    assert stats.pearson(a, -2 * a) == (pytest.approx(-1.0), pytest.approx(0.0, abs=1e-15))


def test_a_correlation_is_undefined_below_three_points_or_on_a_constant_side():
    for correlation in (stats.spearman, stats.pearson):
        assert np.isnan(correlation([1.0, 2.0], [2.0, 1.0])).all()
        assert np.isnan(correlation([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0])).all()
