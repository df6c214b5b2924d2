"""``json_ready``: a result as JSON, without importing pandas."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np


def json_ready(value: Any, missing: tuple[Any, ...] = ()) -> Any:
    """A result as JSON (NaN and ``missing`` -> None, +/-inf -> "inf"/"-inf", numpy scalars -> Python),
    without importing pandas: what ``vdg stats`` prints, and, with pandas' NA and NaT as ``missing``,
    every cell of ``report.json``."""
    if value is None or any(value is m for m in missing):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return None
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return {str(k): json_ready(v, missing) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_ready(v, missing) for v in value]
    return str(value)
