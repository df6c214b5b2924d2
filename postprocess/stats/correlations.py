"""Correlations of ``postprocess.stats``: Pearson's and Spearman's (scipy.stats' ``pearsonr`` and ``spearmanr``),
NaN where they are undefined."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy import stats

#: Fewer paired values than this leave a correlation undefined (NaN), as does a constant side.
MIN_CORRELATION_POINTS = 3


def _undefined(x: np.ndarray, y: np.ndarray) -> bool:
    return len(x) < MIN_CORRELATION_POINTS or np.unique(x).size < 2 or np.unique(y).size < 2


def pearson(a: Any, b: Any) -> tuple[float, float]:
    """(r, two-sided p): ``scipy.stats.pearsonr(a, b)`` (p from r's Beta(n/2 - 1, n/2 - 1) null on [-1, 1]).
    Finite values; (NaN, NaN) when undefined (``_undefined``), where scipy would warn or give r = +-1."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if _undefined(x, y):
        return np.nan, np.nan
    with warnings.catch_warnings():
        # values a rounding apart (0.1 + 0.2 and 0.3) are not constant here, as before; scipy's warning would reach
        # the report's reader without saying which table
        warnings.simplefilter("ignore", stats.NearConstantInputWarning)
        result = stats.pearsonr(x, y)
    return float(result.statistic), float(result.pvalue)


def spearman(a: Any, b: Any) -> tuple[float, float]:
    """(rho, two-sided p): ``scipy.stats.spearmanr(a, b)`` (the correlation of the average ranks, p from Student's
    t with n - 2 df). Finite values; (NaN, NaN) when undefined (``_undefined``)."""
    x = np.asarray(a)
    y = np.asarray(b)
    if _undefined(x, y):
        return np.nan, np.nan
    result = stats.spearmanr(x, y)
    return float(result.statistic), float(result.pvalue)
