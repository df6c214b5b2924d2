"""Argument validators of ``postprocess.stats``: each returns the value normalised or raises a ValueError that
names the argument."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def count(x: Any, name: str) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be a non-negative integer count, got {x!r}.")
    x = int(x)
    if x < 0:
        raise ValueError(f"{name} must be a non-negative integer count, got {x}.")
    return x


def level(level: Any, name: str = "level") -> float:
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"{name} must be a number strictly between 0 and 1, got {level!r}.")
    return float(level)


def values(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: need at least one value.")
    if arr.dtype != np.float64:  # what the analyses pass: checked for finiteness only
        if arr.dtype == bool:
            arr = arr.astype(np.float64)
        if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
            raise ValueError(f"{name} must hold real numbers or booleans, got dtype {arr.dtype}.")
        arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name}[{bad}] is {arr[bad]}: values must be finite (drop or recode failed items first).")
    return arr


def ids(x: Any, n: int, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}.")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries but values has {n}: give one id per value.")
    return arr


def seed(seed: Any) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
        raise ValueError(
            f"seed must be a non-negative int (derive one with vdg_tasks.vocabulary.seeding.stable_seed), got {seed!r}."
        )
    return int(seed)


def n_resamples(n_resamples: Any) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive int, got {n_resamples!r}.")
    return int(n_resamples)


def resampler(resampler: Any) -> str:
    if resampler not in ("auto", "multinomial", "index"):
        raise ValueError(f"resampler must be 'auto', 'multinomial' or 'index', got {resampler!r}.")
    return str(resampler)


def probability(p: Any, name: str) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{name} must be a proportion in [0, 1], got {p!r}.")
    return float(p)


def count_array(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}.")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must hold integer counts, got dtype {arr.dtype}.")
    if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold integer counts, got {arr.tolist()}.")
    if np.any(arr < 0):
        raise ValueError(f"{name} must hold non-negative counts, got {arr.tolist()}.")
    return arr.astype(np.int64)
