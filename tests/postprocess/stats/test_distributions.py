"""Tests for postprocess.stats.distributions: scipy.stats' distribution functions, checked against closed forms
written here (exact binomial sums in rational arithmetic, the chi-square, t and normal tails in elementary
functions)."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import accumulate

import numpy as np
import pytest
from numpy.testing import assert_allclose

from postprocess import stats
from tests.helpers.stats_cases import TIGHT


def exact_binomial_pmf(n: int, p: float) -> list[Fraction]:
    """P(X = k) for k = 0..n, exactly, for the float p as given."""
    q = Fraction(p)
    return [math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(n + 1)]


@pytest.mark.parametrize(("n", "p"), [(1, 0.5), (10, 0.3), (40, 0.25), (129, 0.2), (200, 1 / 3), (57, 0.999)])
def test_binomial_functions_equal_the_exact_sums(n, p):
    pmf = exact_binomial_pmf(n, p)
    k = np.arange(n + 1)
    cdf = list(accumulate(pmf))
    sf = [1 - c for c in cdf]  # the pmf sums to 1 exactly
    assert_allclose(stats.binom_pmf(k, n, p), [float(v) for v in pmf], rtol=TIGHT, atol=0)
    assert_allclose(stats.binom_cdf(k, n, p), [float(v) for v in cdf], rtol=TIGHT, atol=0)
    assert_allclose(stats.binom_sf(k[:-1], n, p), [float(v) for v in sf[:-1]], rtol=TIGHT, atol=0)
    assert stats.binom_sf(n, n, p) == 0.0


def chi2_sf_even(x: float, df: int) -> float:
    """Upper chi-square tail for even df: exp(-x / 2) sum_{i < df / 2} (x / 2)^i / i! (a Poisson cdf)."""
    half = x / 2.0
    return math.exp(-half) * math.fsum(half**i / math.factorial(i) for i in range(df // 2))


@pytest.mark.parametrize("x", [0.0, 0.1, 1.0, 3.84, 10.0, 40.0])
def test_continuous_tails_equal_their_closed_forms(x):
    for df in (2, 4, 10):
        assert_allclose(stats.chi2_sf(x, df), chi2_sf_even(x, df), rtol=TIGHT, atol=0)
    assert_allclose(stats.chi2_sf(x, 1), math.erfc(math.sqrt(x / 2.0)), rtol=TIGHT, atol=0)
    for signed in (x, -x):
        assert_allclose(stats.normal_sf(signed), 0.5 * math.erfc(signed / math.sqrt(2.0)), rtol=TIGHT, atol=0)
        # t with 1 df is the Cauchy distribution; with 2 df its cdf is 1/2 + x / (2 sqrt(2 + x^2))
        assert_allclose(stats.t_sf(signed, 1), 0.5 - math.atan(signed) / math.pi, rtol=TIGHT, atol=0)
        assert_allclose(stats.t_sf(signed, 2), 0.5 - signed / (2.0 * math.sqrt(2.0 + signed**2)), rtol=TIGHT, atol=0)


def test_functions_take_arrays():
    x = np.array([0.5, 2.0])
    assert stats.chi2_sf(x, 2).shape == stats.t_sf(x, 3).shape == stats.normal_sf(x).shape == (2,)
