"""`vdg --help`, `vdg stats` and the report side load none of the model side (lmms-eval, torch)."""

from __future__ import annotations

import json
import subprocess
import sys

#: What neither `vdg --help` nor the report side needs: the model side's stack (seconds to load, and a report is read
#: where no GPU stack is installed).
MODEL_SIDE = ("lmms_eval", "torch", "vdg_tasks.jobs.materialize", "vdg_tasks.lmms.yamlgen")

#: Each step runs after the ones before it, in one fresh interpreter: what a step loads alone is within what is loaded
#: once it has run, so none of them loading the model side means none does alone.
STEPS = (
    "from vdg_tasks.cli import build_parser; build_parser()",
    "from vdg_tasks.cli import main; main(['stats', 'wilson', '3', '10'])",
    "import postprocess.reading.lmms_eval_logs, postprocess.report, postprocess.analyses",
)


def _modules_after_each(steps: tuple[str, ...]) -> list[set[str]]:
    dump = "import sys as _s, json as _j; print('MODULES', _j.dumps(sorted(_s.modules)))"
    code = "\n".join(f"{step}\n{dump}" for step in steps)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return [set(json.loads(line.removeprefix("MODULES "))) for line in out.splitlines() if line.startswith("MODULES ")]


def test_no_model_side_imports():
    loaded = _modules_after_each(STEPS)
    for step, modules in zip(STEPS, loaded, strict=True):
        assert not [m for m in modules if m.split(".")[0] in MODEL_SIDE or m in MODEL_SIDE], step


def test_parser_defaults_match_their_modules():
    from vdg_tasks.cli import build_parser
    from vdg_tasks.jobs.materialize import default_workers
    from vdg_tasks.lmms.yamlgen import YAML_ROOT

    parser = build_parser()
    assert parser.parse_args(["materialize", "--tasks", "x"]).workers == default_workers()
    assert parser.parse_args(["synth"]).out == str(YAML_ROOT / "vdgsynth" / "data")
