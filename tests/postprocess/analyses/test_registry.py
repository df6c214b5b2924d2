"""postprocess.analyses.registry: every analysis a module of the package declares is registered once, under a
unique name, with declared columns it returns, and a model that ran every condition is left out of none."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

import postprocess.analyses
from postprocess.analyses import DIGESTS
from postprocess.analyses.base import Analysis, ReportSettings
from postprocess.analyses.registry import CORE as ANALYSES
from tests.helpers.frames import make_frame
from vdg_tasks.vocabulary.conditions import CONDITIONS


def assigns_analyses(source: str) -> bool:
    """Whether a module assigns ``ANALYSES`` at its top level (declares them, rather than importing the list)."""
    for node in ast.parse(source).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == "ANALYSES" for t in targets):
            return True
    return False


def declared_analyses() -> dict[str, tuple[Analysis, ...]]:
    """Module name -> the ``ANALYSES`` it declares, for every module of postprocess.analyses but the registry."""
    out = {}
    for info in pkgutil.iter_modules(postprocess.analyses.__path__):
        name = f"postprocess.analyses.{info.name}"
        if info.name != "registry" and assigns_analyses(Path(importlib.util.find_spec(name).origin).read_text()):
            out[info.name] = tuple(importlib.import_module(name).ANALYSES)
    return out


def test_a_module_declares_analyses_by_assigning_them_not_by_importing_them():
    assert assigns_analyses("ANALYSES = (a,)\n") and assigns_analyses("ANALYSES: tuple = ()\n")
    assert not assigns_analyses("from x import ANALYSES\n\ndef f():\n    ANALYSES = ()\n")


def test_every_declared_analysis_is_registered_exactly_once_and_nothing_else_is():
    declared = [analysis for analyses in declared_analyses().values() for analysis in analyses]
    assert declared, "no module declares ANALYSES: the discovery is broken"
    twice = [a.name for a in ANALYSES if sum(a is b for b in ANALYSES) > 1]
    missing = [a.name for a in declared if not any(a is b for b in ANALYSES)]
    extra = [a.name for a in ANALYSES if not any(a is b for b in declared)]
    assert (twice, missing, extra) == ([], [], [])
    assert len(ANALYSES) == len(declared) == len(set(map(id, declared)))


def test_the_analyses_of_one_module_stay_together_in_its_declared_order():
    for module, analyses in declared_analyses().items():
        positions = [next(i for i, a in enumerate(ANALYSES) if a is analysis) for analysis in analyses]
        assert positions == list(range(positions[0], positions[0] + len(analyses))), module


def test_names_are_unique_among_every_table_the_report_writes():
    names = [table.name for table in (*ANALYSES, *DIGESTS)]
    assert [name for name, count in Counter(names).items() if count > 1] == []
    assert all(name and name == name.strip() and "/" not in name for name in names)  # a file stem


@pytest.mark.parametrize("analysis", ANALYSES, ids=lambda a: a.name)
def test_each_analysis_declares_described_columns_and_memoised_intermediates(analysis):
    assert isinstance(analysis, Analysis) and analysis.description.strip()
    assert analysis.columns and all(isinstance(c, str) and c for c in analysis.columns)
    assert all(isinstance(text, str) and text.strip() for text in analysis.columns.values())
    assert callable(analysis.compute) and analysis.min_models >= 1
    # shares lists memo_by_frame intermediates: functools.wraps leaves the plain function as __wrapped__
    assert all(callable(getattr(shared, "__wrapped__", None)) for shared in analysis.shares)


@pytest.mark.parametrize("analysis", [a for a in ANALYSES if a.needs is not None], ids=lambda a: a.name)
def test_a_model_that_ran_every_condition_is_never_left_out_and_one_that_ran_none_is(analysis):
    assert analysis.needs(frozenset(CONDITIONS)) is None
    reason = analysis.needs(frozenset())
    assert isinstance(reason, str) and reason.strip()


@pytest.fixture(scope="module")
def small_frame() -> pd.DataFrame:
    """Two models, twelve questions of two task types; m ran five ladder rungs, n orig and black."""
    records = [
        ("m", c, f"v{i // 2}-{i % 2}", f"T{i % 2}", (i * 7 + len(c)) % 3 == 0)
        for c in ("orig", "black", "single", "shuffled", "ordered")
        for i in range(12)
    ]
    records += [
        ("n", c, f"v{i // 2}-{i % 2}", f"T{i % 2}", (i * 5 + len(c)) % 2 == 0)
        for c in ("orig", "black")
        for i in range(12)
    ]
    return make_frame(records)


#: Analyses with no row on ``small_frame``: it holds no CRF level, text condition, added condition, sweep, tier or
#: sources record, and one benchmark. Every other analysis must compute rows from it.
NO_ROWS_ON_SMALL_FRAME = frozenset(
    {
        "crf",
        "crf_flips",
        "crf_stability",
        "crf_enrichment",
        "crf_vdg",
        "sampling_sweep",
        "tier_agreement",
        "vdg_across",
        "letters_across",
        "metadata_chance",
        "name_swap",
        "probes",
        "added_conditions",
        "name_swap_pairs",
        "open_ended",
        "abstention",
        "frame_budget",
        "tracking_tests",  # no tracking condition: orig against black is no tracking row (tracking_benchmarks)
        "sources",
        "no_vision",  # no blind arm
        "leakage",  # no backbone run
        "circular",  # no rotation run
        "shortcut_types",  # no vdg shortcuts scores
        "shortcut_links",
        "vdg_by_shortcut",
        "question_set_comparison",  # no named question set
    }
)


@pytest.mark.parametrize("analysis", ANALYSES, ids=lambda a: a.name)
def test_each_analysis_returns_exactly_its_declared_columns(analysis, small_frame):
    options = ReportSettings(n_resamples=50, stability_resamples=20, min_stratum=3)
    try:
        table = analysis.run(small_frame, options)  # run raises RuntimeError when the columns differ
    except ValueError:
        pytest.skip(f"{analysis.name} cannot run on the small frame")  # the documented refusal
    assert list(table.columns) == list(analysis.columns)
    assert table.empty == (analysis.name in NO_ROWS_ON_SMALL_FRAME), analysis.name
