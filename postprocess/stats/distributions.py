"""Distribution functions of ``postprocess.stats`` (chi-square, t, normal, binomial, hypergeometric): the
scipy.special ufuncs under scipy.stats, imported on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

# Importing scipy.stats costs ~0.7 s (it rewrites hundreds of docstrings), more than a small report's
# whole analysis. Its distributions used here are scipy.special ufuncs underneath: these functions
# call the same ufuncs (so the values are scipy.stats' own), and fall back to scipy.stats where a
# scipy release keeps them elsewhere.


class _Lazy:
    """A module imported on first use: ``scipy.stats`` alone costs ~0.5 s of start-up, which ``vdg stats
    wilson`` and every analysis that needs none of it should not pay."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        return getattr(module, attr)


special = _Lazy("scipy.special")
_ufuncs = _Lazy("scipy.special._ufuncs")
_st = _Lazy("scipy.stats")


def _stats_ufunc(name: str, fallback: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:
    ufunc = getattr(_ufuncs, name, None)
    return ufunc if ufunc is not None else fallback()


def chi2_sf(x: Any, df: Any) -> Any:
    """Upper tail of the chi-square distribution: ``scipy.stats.chi2.sf(x, df)`` for x >= 0."""
    return special.chdtrc(df, x)


def t_sf(x: Any, df: Any) -> Any:
    """Upper tail of Student's t: ``scipy.stats.t.sf(x, df)``."""
    return special.stdtr(df, -np.asarray(x, dtype=np.float64))


def t_isf(q: float, df: float) -> float:
    """Upper-tail quantile of Student's t: ``scipy.stats.t.isf(q, df)``."""
    return float(-special.stdtrit(df, q))  # scipy.stats.t.isf


def binom_pmf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.pmf(k, n, p)`` for integer k in 0..n (NaN outside it, where scipy gives 0)."""
    return _stats_ufunc("_binom_pmf", lambda: _st.binom.pmf)(k, n, p)


def binom_cdf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.cdf(k, n, p)`` = P(X <= k), for integer k in 0..n (NaN outside it)."""
    return _stats_ufunc("_binom_cdf", lambda: _st.binom.cdf)(k, n, p)


def binom_sf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.sf(k, n, p)`` = P(X > k), for integer k in 0..n (NaN outside it)."""
    return _stats_ufunc("_binom_sf", lambda: _st.binom.sf)(k, n, p)


def hypergeom(method: str) -> Callable[..., Any]:
    """``scipy.stats.hypergeom.<method>(k, total, successes, draws)`` for k in the support (NaN outside it)."""
    ufunc = getattr(_ufuncs, f"_hypergeom_{method}", None)
    if ufunc is None:
        return getattr(_st.hypergeom, method)
    return lambda k, total, successes, draws: ufunc(k, successes, draws, total)


def normal_sf(x: Any) -> Any:
    """Upper tail of the standard normal: ``scipy.stats.norm.sf(x)``."""
    return special.ndtr(-np.asarray(x, dtype=np.float64))
