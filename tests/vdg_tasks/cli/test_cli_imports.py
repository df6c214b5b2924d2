"""`vdg --help`, `vdg stats` and the report side load none of the model side (lmms-eval, torch)."""

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


#: What neither `vdg --help` nor the report side needs: the model side's stack (seconds to load, and a report is read
#: where no GPU stack is installed).
MODEL_SIDE = ("lmms_eval", "torch", "vdg_tasks.jobs.materialize", "vdg_tasks.lmms.yamlgen")


@pytest.mark.parametrize(
    "code",
    [
        "from vdg_tasks.cli import build_parser; build_parser()",
        "from vdg_tasks.cli import main; main(['stats', 'wilson', '3', '10'])",
        "import postprocess.reading.lmms_eval_logs, postprocess.report, postprocess.analyses",
    ],
)
def test_no_model_side_imports(code):
    loaded = _modules_after(code)
    assert not [m for m in loaded if m.split(".")[0] in MODEL_SIDE or m in MODEL_SIDE]


def test_parser_defaults_match_their_modules():
    from vdg_tasks.cli import build_parser
    from vdg_tasks.jobs.materialize import default_workers
    from vdg_tasks.lmms.yamlgen import YAML_ROOT

    parser = build_parser()
    assert parser.parse_args(["materialize", "--tasks", "x"]).workers == default_workers()
    assert parser.parse_args(["synth"]).out == str(YAML_ROOT / "vdgsynth" / "data")
