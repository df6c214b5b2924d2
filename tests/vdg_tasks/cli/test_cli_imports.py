"""`vdg report` and `vdg stats` import only what they use (start-up time is most of a small report)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


HEAVY = ("matplotlib", "statsmodels", "lmms_eval", "torch", "vdg_tasks.jobs.materialize", "vdg_tasks.lmms.yamlgen")


@pytest.mark.parametrize(
    "code",
    [
        "from vdg_tasks.cli import build_parser; build_parser()",
        "from vdg_tasks.cli import main; main(['stats', 'wilson', '3', '10'])",
        "import postprocess.io, postprocess.report, postprocess.analyses",
    ],
)
def test_no_heavy_imports(code):
    loaded = _modules_after(code)
    assert not [m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY]


def test_parser_defaults_match_their_modules():
    from vdg_tasks.cli import build_parser
    from vdg_tasks.jobs.materialize import default_workers
    from vdg_tasks.lmms.yamlgen import YAML_ROOT

    parser = build_parser()
    assert parser.parse_args(["materialize", "--tasks", "x"]).workers == default_workers()
    assert parser.parse_args(["synth"]).out == str(YAML_ROOT / "vdgsynth" / "data")


@pytest.mark.parametrize(
    "code",
    [
        "from vdg_tasks.cli import build_parser; build_parser()",
        "from vdg_tasks.cli import main; main(['stats', 'wilson', '3', '10'])",
        "from vdg_tasks.cli import main; main(['stats', 'cohen-h', '0.3', '0.5'])",
        "import postprocess.plot_worker, postprocess.options",
    ],
)
def test_the_parser_and_quick_stats_need_neither_pandas_nor_scipy(code):
    loaded = _modules_after(code)
    assert not [m for m in loaded if m.split(".")[0] in ("pandas", "scipy", "matplotlib")]


@pytest.mark.parametrize(
    "code",
    [
        "from vdg_tasks.cli import main; main(['stats', 'mcnemar', '12', '5'])",
        "from vdg_tasks.cli import main; main(['stats', 'fisher', '3', '4', '5', '6'])",
        "from vdg_tasks.cli import main; main(['stats', 'chi2-uniform', '3', '4', '5'])",
        # Every analysis on the published reference data (Video-MME, CRF levels, several models).
        "from tests.helpers.reference_data import reference_frame\n"
        "from postprocess.analyses import Options, run_all\n"
        "run_all(reference_frame(), Options(n_resamples=20), workers=1)",
    ],
)
def test_no_analysis_imports_scipy_stats(code):
    """scipy.stats costs ~0.7 s to import, more than a small report's analyses: postprocess.stats calls
    the scipy.special functions underneath it."""
    assert "scipy.stats" not in _modules_after(code)
