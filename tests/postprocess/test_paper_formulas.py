"""The statistics of the character-tracking paper (InfiniBench "global appearance"), from its published counts.

Each value below is written as the paper prints it, with where it comes from; the code must give it
back at the paper's rounding. An independent computation (scipy, or by hand in the comment) checks
each formula as well, so a test passes only when the formula is right, not merely self-consistent.
"""

from __future__ import annotations

import math

import pytest
from numpy.testing import assert_allclose
from scipy import stats as sps

from postprocess.stats import binomial_test, chi2_uniform, cohen_h, mcnemar, wilson

#: Paper, Table 1: questions of the global-appearance subset.
N_QUESTIONS = 129


@pytest.mark.parametrize(
    ("correct", "low_pct", "high_pct"),
    [
        (49, 30.1, 46.6),  # paper Table 1: 49/129 = 38.0 % [30.1, 46.6]
        (24, 12.8, 26.2),  # paper Table 1: 24/129 = 18.6 % [12.8, 26.2]
    ],
)
def test_wilson_interval_of_table_1(correct, low_pct, high_pct):
    iv = wilson(correct, N_QUESTIONS, 0.95)
    assert (round(100 * iv.low, 1), round(100 * iv.high, 1)) == (low_pct, high_pct)
    # Independent: the Wilson score interval from its closed form, z from scipy.
    z = sps.norm.ppf(0.975)
    p, n = correct / N_QUESTIONS, N_QUESTIONS
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    assert_allclose([iv.low, iv.high], [centre - half, centre + half], rtol=1e-12)


def test_chi_square_against_uniform_letters_p_value():
    # Paper: predicted letters against uniform over 5 options (4 df), statistic 58.64 -> p = 5.6e-12.
    p = sps.chi2.sf(58.64, 4)
    assert float(f"{p:.1e}") == 5.6e-12
    # Independent: the chi-square survival function with an even df has a closed form,
    # sf(x, 4) = exp(-x / 2) * (1 + x / 2).
    assert_allclose(p, math.exp(-58.64 / 2) * (1 + 58.64 / 2), rtol=1e-12)


def test_chi2_uniform_of_a_129_answer_letter_vector():
    # A letter-count vector of 129 answers whose statistic rounds to the paper's 58.64 (one of many; the paper
    # does not print its counts). By hand: expected 129 / 5 = 25.8 per letter; deviations 20.2, 14.2, 6.2, -15.8,
    # -24.8; squares 408.04 + 201.64 + 38.44 + 249.64 + 615.04 = 1512.8; 1512.8 / 25.8 = 58.6357.
    counts = [46, 40, 32, 10, 1]
    assert sum(counts) == N_QUESTIONS
    r = chi2_uniform(counts)
    assert r.df == 4
    assert_allclose(r.chi2, 1512.8 / 25.8, rtol=1e-12)
    assert round(r.chi2, 2) == 58.64
    assert_allclose(r.p, math.exp(-r.chi2 / 2) * (1 + r.chi2 / 2), rtol=1e-12)
    assert float(f"{r.p:.1e}") == 5.6e-12
    ref = sps.chisquare(counts)
    assert_allclose([r.chi2, r.p], [ref.statistic, ref.pvalue], rtol=1e-12)


def test_exact_mcnemar_on_31_against_6_discordant_pairs():
    # Paper: 31 questions right only in one arm, 6 only in the other: exact McNemar p < 1e-4.
    r = mcnemar(6, 31)
    assert r.p_exact < 1e-4
    assert mcnemar(31, 6).p_exact == r.p_exact  # two-sided: symmetric in the arms
    # The exact McNemar test is the two-sided binomial test of one discordant count at 0.5.
    assert_allclose(r.p_exact, sps.binomtest(6, 37, 0.5).pvalue, rtol=1e-12)
    # By hand: 2 * sum_{k <= 6} C(37, k) / 2^37.
    assert_allclose(r.p_exact, 2 * sum(math.comb(37, k) for k in range(7)) / 2**37, rtol=1e-12)
    assert_allclose(binomial_test(6, 37, 0.5).p_value, r.p_exact, rtol=1e-12)


def test_cohen_h_of_38_0_against_18_6_percent():
    # Paper: Cohen's h for 38.0 % against 18.6 % is about 0.44 (medium).
    assert round(cohen_h(0.380, 0.186), 2) == 0.44
    assert round(cohen_h(49 / N_QUESTIONS, 24 / N_QUESTIONS), 2) == 0.44
    # By hand: 2 asin(sqrt 0.380) - 2 asin(sqrt 0.186).
    assert_allclose(cohen_h(0.380, 0.186), 2 * math.asin(0.380**0.5) - 2 * math.asin(0.186**0.5), rtol=1e-12)
