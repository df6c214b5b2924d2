"""Tests for postprocess.stats.distributions: the scipy.special functions against scipy.stats."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats as sps

from postprocess import stats
from postprocess.stats import distributions, fisher
from tests.helpers.stats_cases import TIGHT


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 400),
    frac=st.floats(0, 1),
    p=st.sampled_from([0.5, 0.25, 1 / 3, 0.2, 1 / 6]) | st.floats(0.001, 0.999),
)
def test_binomial_functions_equal_scipy_stats(n, frac, p):
    k = np.arange(int(frac * n) + 1)
    assert_allclose(stats.binom_pmf(k, n, p), sps.binom.pmf(k, n, p), rtol=TIGHT, atol=0)
    assert_allclose(stats.binom_cdf(k, n, p), sps.binom.cdf(k, n, p), rtol=TIGHT, atol=0)
    assert_allclose(stats.binom_sf(k, n, p), sps.binom.sf(k, n, p), rtol=TIGHT, atol=0)


def test_binomial_functions_fall_back_to_scipy_stats_without_the_private_ufuncs(monkeypatch):
    monkeypatch.setattr(distributions, "_ufuncs", object())  # a scipy keeping them elsewhere
    k = np.arange(11)
    assert_allclose(stats.binom_pmf(k, 10, 0.3), sps.binom.pmf(k, 10, 0.3), rtol=TIGHT)
    assert_allclose(stats.binom_sf(k, 10, 0.3), sps.binom.sf(k, 10, 0.3), rtol=TIGHT)
    r = fisher(10, 2, 3, 15)
    assert_allclose(r.p_two_sided, sps.fisher_exact([[10, 2], [3, 15]]).pvalue, rtol=TIGHT)
    assert_allclose(r.p_less, sps.fisher_exact([[10, 2], [3, 15]], alternative="less").pvalue, rtol=TIGHT)


@settings(max_examples=60, deadline=None)
@given(x=st.floats(-50, 50), df=st.integers(1, 2000))
def test_continuous_tails_equal_scipy_stats(x, df):
    assert_allclose(stats.chi2_sf(abs(x), df), sps.chi2.sf(abs(x), df), rtol=TIGHT, atol=0)
    assert_allclose(stats.t_sf(x, df), sps.t.sf(x, df), rtol=TIGHT, atol=0)
    assert_allclose(stats.normal_sf(x), sps.norm.sf(x), rtol=TIGHT, atol=0)
