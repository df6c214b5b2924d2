"""Analyses: tidy frame in, tidy frames out, each with declared columns.

``ANALYSES`` lists every output table in report order; ``run_all`` computes them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from postprocess.analyses import (
    accuracy,
    categories,
    collective,
    consistency,
    coverage,
    crf,
    ladder,
    letters,
    mcnemar,
    temporal_gap,
    tiers,
    vdg,
)
from postprocess.analyses.base import Analysis, Options

ANALYSES: tuple[Analysis, ...] = (
    *coverage.ANALYSES,
    *accuracy.ANALYSES,
    *vdg.ANALYSES,
    *categories.ANALYSES,
    *ladder.ANALYSES,
    *mcnemar.ANALYSES,
    *crf.ANALYSES,
    *consistency.ANALYSES,
    *tiers.ANALYSES,
    *letters.ANALYSES,
    *temporal_gap.ANALYSES,
    *collective.ANALYSES,
)


def run_all(
    frame: pd.DataFrame,
    options: Options = Options(),
    names: Sequence[str] | None = None,
    on_table: Callable[[str, pd.DataFrame], None] | None = None,
) -> dict[str, pd.DataFrame]:
    """Every analysis (only ``names`` when given) in ``ANALYSES`` order, by name.

    Each table has exactly its declared columns (possibly no rows). ``on_table(name, table)`` is
    called as soon as a table is computed (to write it before a later analysis can fail); an
    analysis' ValueError is re-raised naming the analysis.
    """
    tables: dict[str, pd.DataFrame] = {}
    for analysis in ANALYSES:
        if names is not None and analysis.name not in names:
            continue
        try:
            table = analysis.run(frame, options)
        except ValueError as exc:
            raise ValueError(f"analysis {analysis.name!r}: {exc}") from exc
        tables[analysis.name] = table
        if on_table is not None:
            on_table(analysis.name, table)
    return tables


__all__ = ["ANALYSES", "Analysis", "Options", "run_all"]
