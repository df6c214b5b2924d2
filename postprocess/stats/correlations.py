"""Correlations of ``postprocess.stats``: Pearson's and Spearman's, with scipy.stats' p-values."""

from __future__ import annotations

from typing import Any

import numpy as np

from postprocess.stats.distributions import special, t_sf


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their average rank (``scipy.stats.rankdata``'s default)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    before = np.cumsum(counts) - counts
    return (before + (counts + 1) / 2.0)[inverse.reshape(-1)]


#: Fewer paired values than this leave a correlation undefined (NaN), as does a constant side.
MIN_CORRELATION_POINTS = 3


def _undefined(x: np.ndarray, y: np.ndarray) -> bool:
    return len(x) < MIN_CORRELATION_POINTS or np.unique(x).size < 2 or np.unique(y).size < 2


def pearson(a: Any, b: Any) -> tuple[float, float]:
    """(r, two-sided p) as ``scipy.stats.pearsonr``: r from the centred, rescaled vectors; p from r's
    Beta(n/2 - 1, n/2 - 1) null on [-1, 1]. Finite values; (NaN, NaN) when undefined (``_undefined``)."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if _undefined(x, y):
        return np.nan, np.nan
    xm, ym = x - x.mean(), y - y.mean()
    x_scale, y_scale = np.abs(xm).max(), np.abs(ym).max()
    # np.linalg.norm with an axis, as scipy calls it: the axis-less call sums differently (1 ulp in r)
    unit_x = xm / (x_scale * np.linalg.norm(xm / x_scale, axis=0))
    unit_y = ym / (y_scale * np.linalg.norm(ym / y_scale, axis=0))
    r = float(np.clip(np.dot(unit_x, unit_y), -1.0, 1.0))
    shape = x.size / 2.0 - 1.0
    return r, float(2.0 * special.betaincc(shape, shape, (abs(r) + 1.0) / 2.0))


def spearman(a: Any, b: Any) -> tuple[float, float]:
    """(rho, two-sided p) as ``scipy.stats.spearmanr``: the correlation of the average ranks, p from
    Student's t with n - 2 df. Finite values; (NaN, NaN) when undefined (``_undefined``)."""
    if _undefined(np.asarray(a), np.asarray(b)):
        return np.nan, np.nan
    ranks_a = _average_ranks(np.asarray(a))
    ranks_b = _average_ranks(np.asarray(b))
    rho = np.corrcoef(ranks_a, ranks_b)[1, 0]
    df = ranks_a.size - 2
    with np.errstate(divide="ignore"):  # |rho| = 1: t is infinite, p is 0
        t = rho * np.sqrt(np.clip(df / ((rho + 1.0) * (1.0 - rho)), 0.0, None))
    return float(rho), float(2.0 * t_sf(abs(t), df))
