"""The analysis tables of the reference predictions, computed once with few resamples."""

from __future__ import annotations

import functools

import pandas as pd

from postprocess.analyses import ReportSettings, run_all
from tests.helpers.reference_data import reference_frame

#: Few resamples: these tests check rendering, not the statistics.
FAST = ReportSettings(n_resamples=200, stability_resamples=50)


@functools.lru_cache(maxsize=1)
def _reference_tables() -> dict[str, pd.DataFrame]:
    return run_all(reference_frame(), FAST, workers=1)


def reference_tables() -> dict[str, pd.DataFrame]:
    """Every table of the reference predictions under ``FAST``, computed in this process (copies: edit freely)."""
    return {name: table.copy() for name, table in _reference_tables().items()}
