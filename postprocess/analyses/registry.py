"""Every analysis of the report, in the order the report computes and shows them (``ANALYSES``).

Apart from the package's ``__init__`` so that a digest that walks the analyses (``skipped``) can import
the list without importing the package that imports it.
"""

from __future__ import annotations

from postprocess.analyses import (
    accuracy,
    across,
    added,
    agreement,
    categories,
    chance,
    collective,
    consistency,
    contrast,
    coverage,
    crf,
    ladder,
    letters,
    mcnemar,
    named_sets,
    no_vision,
    option_counts,
    probes,
    question_sets,
    sampling,
    shortcut_links,
    sources,
    temporal_gap,
    tiers,
    tracking,
    vdg,
)
from postprocess.analyses.base import Analysis

ANALYSES: tuple[Analysis, ...] = (
    *coverage.ANALYSES,
    *question_sets.ANALYSES,
    *accuracy.ANALYSES,
    *vdg.ANALYSES,
    *no_vision.ANALYSES,
    *probes.ANALYSES,
    *added.ANALYSES,
    *shortcut_links.ANALYSES,
    *named_sets.ANALYSES,
    *categories.ANALYSES,
    *contrast.ANALYSES,
    *ladder.ANALYSES,
    *mcnemar.ANALYSES,
    *crf.ANALYSES,
    *sampling.ANALYSES,
    *consistency.ANALYSES,
    *tiers.ANALYSES,
    *letters.ANALYSES,
    *chance.ANALYSES,
    *option_counts.ANALYSES,
    *agreement.ANALYSES,
    *across.ANALYSES,
    *temporal_gap.ANALYSES,
    *collective.ANALYSES,
    *tracking.ANALYSES,
    *sources.ANALYSES,
)
