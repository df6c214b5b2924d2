"""Check that what BASE's code made still loads and runs with the code of HEAD: a registration, a
``vdg derive`` folder and an export.

    python tests/tools/made_before.py BASE [--work DIR]

BASE and HEAD are commits; each is unpacked under DIR (``git archive``) and runs first on the path.
With BASE: the small vdgsynth benchmark and its task YAMLs are written, three of its tasks exported,
the base task of tests/helpers/derive_base.py derived, and the YAMLs registered into a copy of the installed
lmms-eval. With HEAD: ``vdg_probe`` runs each through lmms-eval, the export's revision is recomputed
and ``vdg register --check`` reads the registration. Every run must log a ``vdg`` record for every
question, and those records must equal the ones BASE's code logs for the same run. Prints each
problem; exits 1 if there is one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.helpers.derive_base import BASE_TASK, write_base_task  # noqa: E402
from tests.tools.unchanged import unpack  # noqa: E402

EXPORTED = ("vdgsynth_vdg_orig", "vdgsynth_vdg_black", "vdgsynth_vdg_abstain")
REGISTERED = "vdgsynth_vdg_shuffled"


def run(tree: Path, work: Path, code: str, extra_path: Path | None = None) -> subprocess.CompletedProcess:
    """``python -c CODE`` with ``tree``'s code first on the path (and ``extra_path`` before it)."""
    path = [str(extra_path)] if extra_path else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(tree)]), "MPLBACKEND": "Agg"}
    env |= {"VDG_CACHE": str(work / "cache"), "HF_HOME": str(work / "hf"), "HF_HUB_OFFLINE": "1"}
    env |= {"HF_DATASETS_OFFLINE": "1", "VDG_EXPORTS": str(work / "exports")}
    return subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)


def lmms_eval(tree: Path, work: Path, name: str, tasks: str, include: Path | None, site: Path | None = None) -> str:
    """Code running ``vdg_probe`` over ``tasks`` (with ``--include_path include``), logs under work/runs/name."""
    argv = ["lmms_eval", "--model", "vdg_probe", "--tasks", tasks, "--log_samples"]
    argv += ["--output_path", str(work / "runs" / name), "--verbosity", "WARNING"]
    argv += ["--include_path", str(include)] if include else []
    return f"import sys, runpy; sys.argv = {argv!r}; runpy.run_module('lmms_eval', run_name='__main__')"


def records(folder: Path) -> dict[str, list[dict]]:
    out = {}
    for log in sorted(folder.rglob("*_samples_*.jsonl")):
        task = log.name.split("_samples_", 1)[1].removesuffix(".jsonl")
        out[task] = [json.loads(line)["vdg"] for line in log.read_text().splitlines()]
    return out


def synth_main(out: Path) -> str:
    """Code writing three vdgsynth videos to ``out`` with the tree's ``vdg synth`` (module moved in the redesign)."""
    return (
        "import importlib, importlib.util; new = importlib.util.find_spec('vdg_tasks.synthetic'); "
        "m = importlib.import_module('vdg_tasks.synthetic.synth' if new else 'vdg_tasks.synth'); "
        f"m.main([{str(out)!r}, '--n-videos', '3'])"
    )


def made(base: Path, work: Path, site: Path) -> list[str]:
    """Make the synthetic data, task YAMLs, an export, a derive folder and a registration with BASE's code."""
    problems = []
    synth = f"from vdg_tasks.synth import generate; generate({str(work / 'synth')!r}, n_videos=3, seed=0, width=96, "
    synth += "height=72, seconds=8)"
    steps = {
        "synth data": synth,
        "default synth data": synth_main(base / "yaml_tasks" / "vdgsynth" / "data"),
        "task YAMLs": f"import pathlib, vdg_tasks.yamlgen as g; g.write_all(pathlib.Path({str(work / 'tasks')!r}), "
        f"synth_data={str(work / 'synth' / 'questions.jsonl')!r})",
        "export": f"from pathlib import Path; from vdg_tasks.export import export; print(export({list(EXPORTED)!r}, "
        f"Path({str(work / 'export')!r}), name='made-before', yaml_root=Path({str(work / 'tasks')!r})).revision)",
        "derive": f"from vdg_tasks.cli import main; raise SystemExit(main(['derive', {BASE_TASK!r}, '--include_path', "
        f"{str(work / 'base_task')!r}, '--out', {str(work / 'derived')!r}, '--conditions', 'orig,black,abstain', "
        "'--video-id', 'clip', '--task-type', 'category']))",
        "register": "from pathlib import Path; from vdg_tasks.register import register, default_yaml_root, "
        f"lmms_eval_tasks_dir; assert str(lmms_eval_tasks_dir()).startswith({str(site)!r}); "
        "print(register(default_yaml_root(), lmms_eval_tasks_dir()))",
    }
    write_base_task(work / "base_task")
    for step, code in steps.items():
        done = run(base, work, code, site if step == "register" else None)
        if done.returncode:
            problems.append(f"BASE: {step} failed:\n{done.stderr[-2000:]}")
        elif step == "export":
            (work / "revision").write_text(done.stdout.strip().splitlines()[-1])
    return problems


def runs(tree: Path, work: Path, site: Path, label: str) -> dict[str, dict[str, list[dict]]]:
    """The three runs with ``tree``'s code: task -> its vdg records, per run."""
    jobs = {
        "derived": (f"{BASE_TASK}_vdg", work / "derived", None),
        "export": (",".join(EXPORTED), work / "export" / "tasks", None),
        "registered": (REGISTERED, None, site),
    }
    out = {}
    for name, (tasks, include, extra) in jobs.items():
        shutil.rmtree(work / "runs" / f"{label}-{name}", ignore_errors=True)
        done = run(tree, work, lmms_eval(tree, work, f"{label}-{name}", tasks, include), extra)
        out[name] = records(work / "runs" / f"{label}-{name}")
        if done.returncode or not out[name]:
            out[name] = {"failed": [{"rc": done.returncode, "stderr": done.stderr[-2000:]}]}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base")
    parser.add_argument("--head", default="HEAD")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "vdg-made-before")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    base = unpack(args.base, args.work / "base")
    head = unpack(args.head, args.work / "head")
    import lmms_eval

    site = args.work / "site"
    shutil.copytree(Path(lmms_eval.__file__).parent, site / "lmms_eval", ignore=shutil.ignore_patterns("__pycache__"))
    problems = made(base, args.work, site)
    # HEAD's vdgsynth prompt checks HEAD's default data, as BASE's checked BASE's.
    done = run(head, args.work, synth_main(head / "yaml_tasks" / "vdgsynth" / "data"))
    if done.returncode:
        problems.append(f"HEAD: default synth data failed:\n{done.stderr[-2000:]}")
    before, after = runs(base, args.work, site, "base"), runs(head, args.work, site, "head")
    for name in after:
        counts = [sum(map(len, side[name].values())) for side in (after, before)]
        print(f"{name}: {counts[0]} records with HEAD, {counts[1]} with BASE")
        if "failed" in after[name]:
            problems.append(f"HEAD: the {name} run failed: {after[name]['failed'][0]}")
        elif after[name] != before[name]:
            problems.append(f"{name}: HEAD's records differ from BASE's")
    revision = run(
        head,
        args.work,
        f"from vdg_tasks.export import compute_revision; print(compute_revision({str(args.work / 'export')!r}))",
    )
    written = (args.work / "revision").read_text().strip() if (args.work / "revision").is_file() else None
    if revision.stdout.strip() != written:
        problems.append(f"export: HEAD recomputes revision {revision.stdout.strip()!r}, BASE wrote {written!r}")
    check = run(
        head, args.work, "from vdg_tasks.cli import main; raise SystemExit(main(['register', '--check']))", site
    )
    print(
        "register --check:",
        (check.stdout + check.stderr).strip().splitlines()[-1:] or "(nothing)",
        "rc",
        check.returncode,
    )
    for problem in problems:
        print(problem)
    print("problems:", len(problems) if problems else "none")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
