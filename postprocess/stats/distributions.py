"""Distribution functions of ``postprocess.stats`` (chi-square, t, normal, binomial): scipy.stats' own, under the
names the analyses call them by."""

from __future__ import annotations

from typing import Any

from scipy import stats


def chi2_sf(x: Any, df: Any) -> Any:
    """Upper tail of the chi-square distribution: ``scipy.stats.chi2.sf(x, df)``."""
    return stats.chi2.sf(x, df)


def t_sf(x: Any, df: Any) -> Any:
    """Upper tail of Student's t: ``scipy.stats.t.sf(x, df)``."""
    return stats.t.sf(x, df)


def binom_pmf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.pmf(k, n, p)`` = P(X = k)."""
    return stats.binom.pmf(k, n, p)


def binom_cdf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.cdf(k, n, p)`` = P(X <= k)."""
    return stats.binom.cdf(k, n, p)


def binom_sf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.sf(k, n, p)`` = P(X > k)."""
    return stats.binom.sf(k, n, p)


def normal_sf(x: Any) -> Any:
    """Upper tail of the standard normal: ``scipy.stats.norm.sf(x)``."""
    return stats.norm.sf(x)
