"""Every analysis of the report, in the order the report computes and shows them: vdg's own (``CORE``), then
(``declared``, which ``postprocess.analyses`` calls) those of the modules a user names, as conditions are named
(``vdg_tasks.vocabulary.plugins``).

A module of analyses declares ``ANALYSES``, a sequence of ``Analysis`` (``from postprocess import Analysis``), and is
named by an entry point of group ``vdg.analyses`` or in ``$VDG_ANALYSES`` (comma-separated). A module that fails to
import, a declaration that is not an ``Analysis`` or whose name is not a table name, or a name already taken is left
out and said (``postprocess.analyses.REGISTRY_PROBLEMS``): ``vdg report`` then refuses to run, naming each.

Apart from the package's ``__init__`` so that a digest that walks the analyses (``skipped``) can import
the list without importing the package that imports it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from postprocess.analyses import (
    accuracy,
    across,
    added,
    agreement,
    categories,
    chance,
    circular,
    collective,
    consistency,
    contrast,
    coverage,
    crf,
    ladder,
    leakage,
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
from vdg_tasks.vocabulary.plugins import import_named, named_modules

#: The entry point group naming modules of analyses, and the variable naming modules that are not installed.
ENTRY_POINT_GROUP = "vdg.analyses"
MODULES_ENV = "VDG_ANALYSES"
#: A table's name: the stem of its CSV and its key in report.json.
TABLE_NAME = re.compile(r"[a-z][a-z0-9_]{0,59}")
#: The names ``--by FIELD`` gives its tables (``postprocess.analyses.selection.by_field_analyses``).
BY_FIELD = re.compile(r"(vdg|accuracy|ladder)_by_")

#: vdg's own analyses, in report order.
CORE: tuple[Analysis, ...] = (
    *coverage.ANALYSES,
    *question_sets.ANALYSES,
    *accuracy.ANALYSES,
    *vdg.ANALYSES,
    *no_vision.ANALYSES,
    *leakage.ANALYSES,
    *probes.ANALYSES,
    *added.ANALYSES,
    *circular.ANALYSES,
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


def declaration_problem(analysis: object, taken: Iterable[str]) -> str | None:
    """Why a module's declaration cannot join the analyses (None: it can)."""
    if not isinstance(analysis, Analysis):
        return f"{analysis!r} is not an Analysis (from postprocess import Analysis)"
    if not TABLE_NAME.fullmatch(str(analysis.name)):
        return f"analysis name {analysis.name!r} is not lower-case letters, digits and _ (a letter first, at most 60)"
    if analysis.name in set(taken) or BY_FIELD.match(analysis.name):
        return f"analysis name {analysis.name!r} is already a table's (or one --by FIELD makes)"
    if not isinstance(analysis.columns, Mapping) or not analysis.columns:
        return f"analysis {analysis.name!r} declares no columns (name -> description)"
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in analysis.columns.items()):
        return f"analysis {analysis.name!r}: columns must map names to descriptions (str -> str)"
    if not callable(analysis.compute) or (analysis.needs is not None and not callable(analysis.needs)):
        return f"analysis {analysis.name!r}: compute (and needs, when given) must be callable"
    if not isinstance(analysis.min_models, int) or analysis.min_models < 1 or not isinstance(analysis.shares, tuple):
        return f"analysis {analysis.name!r}: min_models must be a positive int and shares a tuple"
    return None


def declared(core: Iterable[Analysis], reserved: Iterable[str] = ()) -> tuple[tuple[Analysis, ...], tuple[str, ...]]:
    """``core`` then the analyses of every named module, and what was left out and why (one sentence each);
    ``reserved``: other tables' names (the digests')."""
    analyses = list(core)
    taken = {a.name for a in analyses} | set(reserved)
    problems: list[str] = []
    for module_name, where in named_modules(ENTRY_POINT_GROUP, MODULES_ENV):
        module, problem = import_named(module_name, where)
        found = getattr(module, "ANALYSES", None)
        if module is not None and not isinstance(found, (list, tuple)):
            problem = f"module {module_name!r} ({where}) has no ANALYSES list of analyses"
        if problem is not None:
            problems.append(problem)
            continue
        for analysis in found:  # type: ignore[union-attr]
            why = declaration_problem(analysis, taken)
            if why is not None:
                problems.append(f"module {module_name!r} ({where}): {why}; it is left out")
                continue
            analyses.append(analysis)
            taken.add(analysis.name)
    return tuple(analyses), tuple(problems)
