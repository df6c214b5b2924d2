"""A condition says how the report reads it, and the report names no condition but orig and black.

A user's module, written only against the public API outside vdg's tree, declares two conditions with their
readings; with no other change they get their tasks, their cache keys and their rows in the report's tables. An AST
walk over postprocess/ finds no string literal naming any other condition. A user's module of analyses, named in
$VDG_ANALYSES, gets its table written by `vdg report` beside vdg's.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from tests.helpers.condition_modules import condition_modules
from tests.helpers.fakelogs import sample, write_run
from tests.helpers.frames import answer_fields, tidy_frame, tidy_row
from vdg_tasks.data.benchmarks import BENCHMARKS, task_name
from vdg_tasks.lmms.yamlgen import render_all
from vdg_tasks.perturb.cache import cache_key
from vdg_tasks.vocabulary.conditions import CONDITIONS, CORE

ROOT = Path(__file__).resolve().parents[1]

#: A user's module: a picture condition read beside black with its own sentence, and a question condition read as
#: a question dependency (orig - the condition) in the probes table.
USER_MODULE = """
from vdg_tasks.extend import frame_condition, text_condition

def grey(frame, context):
    return frame.mean(axis=2, keepdims=True).repeat(3, axis=2).astype(frame.dtype)

def stem_removed(doc, context):
    return {**doc, "question": "..."}

CONDITIONS = [
    frame_condition("greyscale", grey, description="Colour removed.", family="colour", beside="black",
                    beside_reading="colour carries {own:+.3f}, the pictures {beside:+.3f}"),
    text_condition("stem_removed", stem_removed, description="The question text removed.", family="stems",
                   requires={"options"}, measure="question_dependency"),
]
"""

N = 40
LETTERS = "ABCD"


@pytest.fixture
def declared(tmp_path, monkeypatch):
    for write, load in condition_modules(tmp_path, monkeypatch):
        write("colour_audit", USER_MODULE)
        assert load("colour_audit").problems == ()
        yield


def _frame(right_under: dict[str, int]) -> pd.DataFrame:
    """N questions of model m on vdgsynth; under each condition the first ``right_under[c]`` are answered right."""
    rows = []
    for i in range(N):
        answer = LETTERS[i % 4]
        for condition, k in right_under.items():
            chosen = answer if i < k else LETTERS[(i + 1) % 4]
            rows.append(tidy_row("m", condition, f"v{i:02d}-1", benchmark="vdgsynth", task_type="T", n_options=4,
                                 **answer_fields(answer, chosen, "ok")))  # fmt: skip
    return tidy_frame(rows)


def test_a_users_conditions_get_tasks_cache_keys_and_their_report_rows(declared):
    files = render_all()
    for name in ("greyscale", "stem_removed"):
        task = task_name("vdgsynth", name)
        assert Path(BENCHMARKS["vdgsynth"].report_name) / f"{task}.yaml" in files, f"no task for {name}"
    keys = {name: cache_key("source-digest", CONDITIONS[name], 0) for name in ("greyscale", "black", "orig")}
    assert len(set(keys.values())) == 3 and CONDITIONS["greyscale"].source_digest  # its module's text keys it

    tables = run_all(
        _frame({"orig": 36, "black": 12, "greyscale": 30, "stem_removed": 20}), ReportSettings(min_stratum=10)
    )
    added = tables["added_conditions"].set_index("condition")
    assert list(added.index.unique()) == ["greyscale"], "a question condition read otherwise is not an added one"
    grey = added[added.task_type == "Overall"].loc["greyscale"]
    assert grey["diff"] == pytest.approx((30 - 36) / N) and grey.diff_beside == pytest.approx((12 - 36) / N)
    assert f"colour carries {(36 - 30) / N:+.3f}, the pictures {(36 - 12) / N:+.3f}" in grey.reading
    probes = tables["probes"]
    stem = probes[(probes.probe == "stem_removed") & (probes.task_type == "Overall")].iloc[0]
    assert stem.measure == "question_dependency" and stem.value == pytest.approx((36 - 20) / N)
    assert stem.value_low == pytest.approx(-stem.ci_high) and "question dependency" in stem.reading


def test_a_measure_the_report_reads_only_for_its_own_protocols_is_refused(tmp_path, monkeypatch):
    body = USER_MODULE.replace('measure="question_dependency"', 'measure="abstention"')
    for write, load in condition_modules(tmp_path, monkeypatch):
        write("bad_reading", body.replace('beside_reading="colour', 'beside_reading="{unknown} colour'))
        problems = load("bad_reading").problems
        assert any("greyscale" in p and "beside_reading" in p for p in problems), problems
        assert any("stem_removed" in p and "measure 'abstention'" in p for p in problems), problems


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ('beside_reading="colour carries {own:+.3f}, the pictures {beside:+.3f}"', "beside_reading is not a template"),
        ('description="Colour removed."', "already stands for a declared condition"),
    ],
)
def test_a_reading_or_a_name_the_registry_cannot_take_is_left_out_and_said(tmp_path, monkeypatch, change, said):
    """A template that raises (any error) or a name another condition's alias takes: said, never raised."""
    body = USER_MODULE.replace('beside_reading="colour carries {own:+.3f}, the pictures {beside:+.3f}"',
                               'beside_reading="{own[0]} colour"')  # fmt: skip
    if "already stands" in said:
        body = USER_MODULE.replace('frame_condition("greyscale"', 'frame_condition("order"')
    for write, load in condition_modules(tmp_path, monkeypatch):
        write("odd_reading", body)
        problems = load("odd_reading").problems
        assert any(said in p for p in problems), problems


def condition_literals(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of each string literal in ``source`` equal to one of ``names``; docstrings are prose."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in names and id(node) not in docstrings
    ]


def test_the_walk_finds_a_condition_named_in_code_but_not_in_prose():
    source = '"""About mute."""\ndef f(c):\n    """mute"""\n    return c == "mute" or c == "orig" or f"{c} mute"\n'
    assert condition_literals(source, {"mute"}) == [(4, "mute")]


def test_postprocess_names_no_condition_but_orig_and_black():
    names = {*CONDITIONS, *CORE} - {"orig", "black"}
    assert {"mute", "blind", "nameswap", "options_shuffled", "single"} <= names
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name!r}"
        for path in sorted((ROOT / "postprocess").rglob("*.py"))
        for line, name in condition_literals(path.read_text(encoding="utf-8"), names)
    ]
    assert found == [], "postprocess names conditions; read them from their declarations (Condition.measure)"


#: A user's module of analyses: a table over columns the frame already has.
ANALYSIS_MODULE = """
from postprocess import Analysis

COLUMNS = {"model": "model label", "benchmark": "benchmark", "n_questions": "questions answered under orig"}

def questions_per_model(frame, options):
    orig = frame[frame["condition"] == "orig"]
    counts = orig.groupby(["model", "benchmark"])["question_id"].nunique()
    return counts.rename("n_questions").reset_index()[list(COLUMNS)]

ANALYSES = [Analysis(NAME, "Questions each model answered under orig.", COLUMNS, questions_per_model)]
"""


def _report(tmp_path: Path, name: str) -> subprocess.CompletedProcess[str]:
    """`vdg report` in a fresh process with a module of analyses declaring the table ``name``."""
    (tmp_path / "my_tables.py").write_text(f"NAME = {name!r}\n{ANALYSIS_MODULE}")
    logs = {
        f"vdgsynth_vdg_{c}": [sample(f"v{i}-1", c, "A", answer="AB"[i % 2]) for i in range(7)]
        for c in ("orig", "black")
    }
    run = write_run(tmp_path / "run", "m", logs)
    env = {**os.environ, "VDG_ANALYSES": "my_tables", "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    args = ["report", str(run), "--out", str(tmp_path / "out"), "--no-plots", "--workers", "1", "--resamples", "100"]
    return subprocess.run([sys.executable, "-m", "vdg_tasks.cli", *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip


def test_a_users_analysis_named_in_the_environment_is_written_with_the_report(tmp_path):
    done = _report(tmp_path, "questions_per_model")
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "out" / "questions_per_model.csv")
    assert table.to_dict("records") == [{"model": "m", "benchmark": "vdgsynth", "n_questions": 7}]
    written = json.loads((tmp_path / "out" / "report.json").read_text())["tables"]["questions_per_model"]
    assert written["n_rows"] == 1 and written["columns"]["n_questions"] == "questions answered under orig"
    assert "questions_per_model" in (tmp_path / "out" / "report.html").read_text()


CANNOT_JOIN = [
    ("vdg", "already a table's"),
    ("summary", "already a table's"),
    ("../escape", "is not lower-case letters"),
]


@pytest.mark.parametrize(("name", "why"), CANNOT_JOIN)
def test_a_users_analysis_that_cannot_join_is_left_out_naming_its_module(tmp_path, monkeypatch, name, why):
    from postprocess import analyses
    from postprocess.analyses.registry import CORE, declared

    module = f"my_tables_{len(name)}_{name.isalpha()}"  # a module per case: each is imported afresh
    (tmp_path / f"{module}.py").write_text(f"NAME = {name!r}\n{ANALYSIS_MODULE}")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("VDG_ANALYSES", module)
    joined, problems = declared(CORE, reserved=[d.name for d in analyses.DIGESTS])
    assert [a.name for a in joined] == [a.name for a in CORE]
    assert len(problems) == 1 and module in problems[0] and "$VDG_ANALYSES" in problems[0] and why in problems[0]


# The whole command for one case (the others: in this process, above; all three in the slow tier).
@pytest.mark.parametrize(
    ("name", "why"),
    [pytest.param(*case, marks=() if case[0] == "../escape" else pytest.mark.slow) for case in CANNOT_JOIN],
)
def test_a_users_analysis_that_cannot_join_stops_the_report_naming_its_module(tmp_path, name, why):
    done = _report(tmp_path, name)
    assert done.returncode == 2 and "my_tables" in done.stderr and why in done.stderr
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out*")) and not list(tmp_path.glob("escape*"))


def test_a_users_analysis_that_raises_has_its_table_skipped_and_the_report_written(tmp_path):
    broken = ANALYSIS_MODULE.replace('orig = frame[frame["condition"] == "orig"]', 'orig = frame["no_such_column"]')
    (tmp_path / "my_tables.py").write_text(f"NAME = 'questions_per_model'\n{broken}")
    logs = {f"vdgsynth_vdg_{c}": [sample(f"v{i}-1", c, "A") for i in range(3)] for c in ("orig", "black")}
    run = write_run(tmp_path / "run", "m", logs)
    env = {**os.environ, "VDG_ANALYSES": "my_tables", "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    args = ["report", str(run), "--out", str(tmp_path / "out"), "--no-plots", "--workers", "1", "--resamples", "100"]
    done = subprocess.run([sys.executable, "-m", "vdg_tasks.cli", *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    skipped = json.loads((tmp_path / "out" / "report.json").read_text())["tables"]["questions_per_model"]["skipped"]
    assert "$VDG_ANALYSES" in skipped and "KeyError" in skipped and "no_such_column" in skipped
