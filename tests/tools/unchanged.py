"""Check that a change moved code without changing what vdg writes: the reports and YAMLs of BASE and the tree.

    python tests/tools/unchanged.py BASE [--work DIR] [--questions 600]

BASE is a commit. Its files are unpacked under DIR/base (``git archive``); the inputs are made once
and reported by both trees with the same Python: the published per-question predictions in
tests/data/awg-videomme (``--predictions``), and lmms-eval-shaped samples logs of 3 models x 12
conditions written by benchmarks/report.py's generator. Every file of each ``vdg report --out``
folder (CSVs, report.md, report.html, report.json, plots) must be byte-identical, the committed
yaml_tasks/ must equal BASE's, and ``vdg write-yamls --check`` must pass in the tree. Prints each
difference; exits 1 if there is one.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.report import generate  # noqa: E402
from tests.reference_data import reference_predictions  # noqa: E402


def unpack(commit: str, dest: Path) -> Path:
    """The files of ``commit`` under ``dest`` (made once)."""
    if not (dest / "pyproject.toml").is_file():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True)
        with tempfile.TemporaryFile() as f:
            f.write(archive.stdout)
            f.seek(0)
            with tarfile.open(fileobj=f) as tar:
                tar.extractall(dest, filter="data")
    return dest


def vdg(tree: Path, *args: str) -> subprocess.CompletedProcess:
    """``vdg ARGS`` with the code of ``tree`` (first on the path, ahead of the installed checkout)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, "-m", "vdg_tasks.cli", *args], cwd=tree, env=env, capture_output=True, text=True
    )


def differences(a: Path, b: Path) -> list[str]:
    """Files present in one folder only, or with other bytes, relative to the folders."""
    left = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    right = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    out = [f"only in {a.name}: {p}" for p in sorted(left - right)]
    out += [f"only in {b.name}: {p}" for p in sorted(right - left)]
    out += [f"differs: {p}" for p in sorted(left & right) if not filecmp.cmp(a / p, b / p, shallow=False)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "vdg-unchanged")
    parser.add_argument("--questions", type=int, default=600)
    args = parser.parse_args()
    base = unpack(args.base, args.work / f"base-{args.base}")
    logs = generate(args.work / "inputs", 3, args.questions)
    predictions = [a for model, path in reference_predictions() for a in ("--predictions", f"{model}={path}")]
    inputs = {
        "reference": [*predictions, "--benchmark", "videomme"],
        "logs": [f"model{m:02d}={logs / f'model{m:02d}'}" for m in range(3)],
    }
    problems = []
    for name, report_args in inputs.items():
        outs = {}
        for label, tree in (("base", base), ("tree", ROOT)):
            out = args.work / "out" / f"{name}-{label}"
            if out.exists():
                subprocess.run(["rm", "-rf", str(out)], check=True)
            proc = vdg(tree, "report", *report_args, "--out", str(out))
            if proc.returncode != 0:
                problems.append(f"{name}: vdg report of {label} exited {proc.returncode}: {proc.stderr[-2000:]}")
            outs[label] = out
        problems += [f"{name}: {d}" for d in differences(outs["base"], outs["tree"])]
        print(f"{name}: {sum(1 for p in outs['tree'].rglob('*') if p.is_file())} files compared")
    yamls = subprocess.run(
        ["git", "-C", str(ROOT), "diff", "--stat", args.base, "--", "yaml_tasks"], capture_output=True, text=True
    )
    if yamls.stdout.strip():
        problems.append(f"yaml_tasks/ differs from {args.base}:\n{yamls.stdout}")
    check = vdg(ROOT, "write-yamls", "--check")
    if check.returncode != 0:
        problems.append(f"vdg write-yamls --check failed: {check.stdout[-1000:]}{check.stderr[-1000:]}")
    for problem in problems:
        print(problem)
    print("unchanged" if not problems else f"{len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
