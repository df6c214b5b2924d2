"""Analyses: tidy frame in, tidy frames out, each with declared columns.

``ANALYSES`` lists every output table in report order; ``run_all`` computes them all.
"""

from __future__ import annotations

import pandas as pd

from postprocess.analyses import accuracy, categories, consistency, coverage, crf, ladder, tiers, vdg
from postprocess.analyses.base import Analysis, Options

ANALYSES: tuple[Analysis, ...] = (
    *coverage.ANALYSES,
    *accuracy.ANALYSES,
    *vdg.ANALYSES,
    *categories.ANALYSES,
    *ladder.ANALYSES,
    *crf.ANALYSES,
    *consistency.ANALYSES,
    *tiers.ANALYSES,
)


def run_all(frame: pd.DataFrame, options: Options = Options()) -> dict[str, pd.DataFrame]:
    """Every analysis by name; each table has exactly its declared columns (possibly no rows)."""
    return {a.name: a.run(frame, options) for a in ANALYSES}


__all__ = ["ANALYSES", "Analysis", "Options", "run_all"]
