"""A user's condition end to end, as docs/conditions.md writes it: the example module installed as a package (its entry
point of group ``vdg.conditions``) into a venv of its own, and the same module named by ``$VDG_CONDITIONS`` alone;
``vdg write-yamls --out`` writes its tasks for vdgsynth and videomme, lmms-eval runs them with vdg_probe, the report
has its rows, every sample its module and source digest, and the cache key follows the module's source.

The venv is made without pip and sees vdg's environment through a ``.pth`` that adds it as a site folder (vdg and its
dependencies are not installed twice); pip of this environment installs the package into it (``pip --python``).
vdg itself is imported from a copy of this checkout, whose own task folder receives the synthetic questions.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.runs import offline_env

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "conditions.md"
MODULE = "my_conditions"
_NOT_COPIED = {".venv", ".git", "__pycache__", "build", "dist", "demo_out", ".pytest_cache", ".ruff_cache", "tmp"}


def documented_module() -> str:
    """The example module, exactly as docs/conditions.md shows it (the python block after ``my_conditions.py``)."""
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(r"`my_conditions\.py`:\s*```python\n(.*?)```", text, re.S)
    assert match, "docs/conditions.md no longer shows my_conditions.py"
    return match.group(1)


def documented_entry_point() -> str:
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(r"```toml\n(\[project\.entry-points\.\"vdg\.conditions\"\]\n.*?)```", text, re.S)
    assert match, "docs/conditions.md no longer shows the entry point"
    return match.group(1)


def _ignore(folder: str, names: list[str]) -> set[str]:
    skip = {n for n in names if n in _NOT_COPIED or n.endswith(".egg-info")}
    if Path(folder).name == "vdgsynth" and "data" in names:
        skip.add("data")
    return skip


def run(cmd: list[str], env: dict[str, str], cwd: Path, ok: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
    if ok:
        assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("user_conditions")
    checkout = root / "vdg"
    shutil.copytree(REPO, checkout, ignore=_ignore)
    package = root / "package"
    package.mkdir()
    (package / f"{MODULE}.py").write_text(documented_module())
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "my-conditions"\nversion = "0.1"\n\n[tool.setuptools]\npy-modules = ["{MODULE}"]\n\n'
        + documented_entry_point()
    )
    venv = root / "venv"
    env = {**offline_env(root), "PYTHONPATH": str(checkout)}
    env.pop("VDG_CONDITIONS", None)
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env, root)
    python = venv / "bin" / "python"
    purelib = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env, root)
                   .stdout.strip())  # fmt: skip
    (purelib / "vdg_environment.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
    )
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    run([*install, "--no-build-isolation", "--no-index", str(package)], env, root)
    run([str(python), "-m", "vdg_tasks.cli", "synth", "--videos", "3"], env, root)
    return {"root": root, "checkout": checkout, "package": package, "python": python, "env": env}


def _samples(out: Path, task: str) -> list[dict]:
    files = sorted(out.rglob(f"*_samples_{task}.jsonl"))
    assert files, f"no samples of {task} under {out}"
    return [json.loads(line) for line in files[0].read_text().splitlines()]


def _write_and_run(python: Path, env: dict[str, str], root: Path, name: str) -> tuple[Path, Path]:
    tasks, runs = root / f"tasks_{name}", root / f"runs_{name}"
    run([str(python), "-m", "vdg_tasks.cli", "write-yamls", "--out", str(tasks)], env, root)
    lmms = [str(python), "-m", "lmms_eval", "--model", "vdg_probe", "--include_path", str(tasks)]
    lmms += ["--tasks", "vdgsynth_vdg_orig,vdgsynth_vdg_greyscale", "--log_samples", "--output_path", str(runs)]
    run([*lmms, "--verbosity", "WARNING"], env, root)
    return tasks, runs


def _check_tasks_and_samples(tasks: Path, runs: Path, installed: Path) -> None:
    for benchmark in ("vdgsynth", "videomme"):
        leaf = tasks / benchmark / f"{benchmark}_vdg_greyscale.yaml"
        text = leaf.read_text()
        assert f"vdg_tasks.hooks.{benchmark}__greyscale__doc_to_visual" in text and "condition: greyscale" in text
        assert f"- {benchmark}_vdg_colour" in text
    assert "vdgsynth_vdg_greyscale" not in (tasks / "vdgsynth" / "vdgsynth_vdg_orig.yaml").read_text()
    rows = _samples(runs, "vdgsynth_vdg_greyscale")
    assert len(rows) == 15 and {r["vdg"]["condition"] for r in rows} == {"greyscale"}
    digest = hashlib.sha256(hashlib.sha256(installed.read_bytes()).hexdigest().encode()).hexdigest()
    for row in rows:
        assert row["vdg"]["status"] == "ok"
        assert row["vdg"]["provenance"]["declared"] == {"module": MODULE, "source_digest": digest}  # one file
        assert row["vdg"]["condition_params"] == {"weights": "bt601"}


def test_the_installed_package_s_condition_runs_through_lmms_eval_and_reaches_the_report(world):
    python, env, root = world["python"], world["env"], world["root"]
    installed = Path(run([str(python), "-c", f"import {MODULE}; print({MODULE}.__file__)"], env, root).stdout.strip())
    assert installed.parent != world["package"]  # pip's copy, in the venv
    tasks, runs = _write_and_run(python, env, root, "installed")
    _check_tasks_and_samples(tasks, runs, installed)
    report = root / "report"
    run([str(python), "-m", "vdg_tasks.cli", "report", f"probe={runs}", "--out", str(report), "--no-plots"], env, root)
    added = pd.read_csv(report / "added_conditions.csv")
    overall = added[(added.condition == "greyscale") & (added.task_type == "Overall")]
    assert len(overall) == 1 and overall.iloc[0].declared_in == MODULE and overall.iloc[0].n == 15
    frame = pd.concat(
        [pd.DataFrame([r["vdg"] for r in _samples(runs, f"vdgsynth_vdg_{c}")]) for c in ("orig", "greyscale")]
    )
    by_condition = frame.groupby("condition")["correct"].mean()  # the report's numbers, from the samples here
    assert overall.iloc[0].acc_orig == pytest.approx(by_condition["orig"])
    assert overall.iloc[0].acc_condition == pytest.approx(by_condition["greyscale"])
    assert "## Added conditions" in (report / "report.md").read_text()


def test_the_same_module_named_in_the_environment_alone_runs_too(world):
    env = {**world["env"], "VDG_CONDITIONS": MODULE, "PYTHONPATH": f"{world['checkout']}{os.pathsep}{world['package']}"}
    tasks, runs = _write_and_run(Path(sys.executable), env, world["root"], "environment")
    _check_tasks_and_samples(tasks, runs, world["package"] / f"{MODULE}.py")


def test_the_cache_key_follows_the_module_s_source(world):
    python, env, root = world["python"], world["env"], world["root"]
    key = [str(python), "-c", "from vdg_tasks.perturb.cache import cache_key; from vdg_tasks.vocabulary.conditions "
           "import CONDITIONS; print(cache_key('a' * 64, CONDITIONS['greyscale'], 1))"]  # fmt: skip
    installed = Path(run([str(python), "-c", f"import {MODULE}; print({MODULE}.__file__)"], env, root).stdout.strip())
    before = run(key, env, root).stdout.strip()
    assert run(key, env, root).stdout.strip() == before
    original = installed.read_text()
    try:
        installed.write_text(original + "\n# an edit, and no version bumped\n")
        after = run(key, env, root).stdout.strip()
    finally:
        installed.write_text(original)
    assert len(before) == len(after) == 32 and after != before


def test_a_name_vdg_declares_is_refused_by_the_command_and_skipped_inside_lmms_eval(world, tmp_path):
    (tmp_path / "clashing.py").write_text(documented_module().replace('"greyscale",', '"black",'))
    env = {**world["env"], "VDG_CONDITIONS": "clashing", "PYTHONPATH": f"{world['checkout']}{os.pathsep}{tmp_path}"}
    proc = run([sys.executable, "-m", "vdg_tasks.cli", "write-yamls", "--out", str(tmp_path / "t")], env, tmp_path,
               ok=False)  # fmt: skip
    assert proc.returncode == 2
    assert "'black' is already declared by vdg's core" in proc.stderr and "'clashing'" in proc.stderr
    assert not (tmp_path / "t").exists()
    hooks = run([sys.executable, "-c", "import vdg_tasks.hooks as h; print(h.vdgsynth__black__doc_to_visual.__name__)"],
                env, tmp_path)  # fmt: skip
    assert hooks.stdout.strip() == "vdgsynth__black__doc_to_visual"
    assert "'black' is already declared by vdg's core" in hooks.stderr  # a logged warning; the hooks loaded


def test_vdg_s_own_task_folder_is_not_written_with_a_user_s_conditions(world):
    env = {**world["env"], "VDG_CONDITIONS": MODULE, "PYTHONPATH": f"{world['checkout']}{os.pathsep}{world['package']}"}
    for extra in ([], ["--check"]):
        proc = run([sys.executable, "-m", "vdg_tasks.cli", "write-yamls", *extra], env, world["root"], ok=False)
        assert proc.returncode == 2 and "write them with --out DIR" in proc.stderr and "greyscale" in proc.stderr
    assert not (world["checkout"] / "yaml_tasks" / "vdgsynth" / "vdgsynth_vdg_greyscale.yaml").exists()
