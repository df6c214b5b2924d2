"""Check that a change moved code without changing what vdg writes: the reports and YAMLs of BASE and the tree.

    python tests/tools/unchanged.py BASE [--work DIR] [--questions 600]

BASE is a commit. Its files are unpacked under DIR/base (``git archive``); the inputs are made once
and reported by both trees with the same Python: the published per-question predictions in
tests/data/awg-videomme (``--predictions``), and lmms-eval-shaped samples logs of 3 models x 12
conditions written by benchmarks/report.py's generator, and the same generator's logs of 2 models under the
conditions the declared readings compare (blind, mute, blur, the five probes, one no module declares), with each
option shuffle's ``shuffled_from`` and its answer mapped, and option counts from 4 to 8 under video_only. Every file
of each ``vdg report --out``
folder (CSVs, report.md, report.html, report.json, plots) must be byte-identical, the committed
yaml_tasks/ must equal BASE's, and ``vdg write-yamls --check`` must pass in the tree. Then each
tree's hooks run one lmms-eval job (``vdg_probe`` over every vdgsynth condition, on 3 synthetic
videos of which one is corrupt, each tree with its own video cache): every logged ``vdg`` record
must be equal. Prints each difference; exits 1 if there is one.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.report import generate  # noqa: E402
from tests.helpers.reference_data import reference_predictions  # noqa: E402


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


def lmms_eval_records(tree: Path, data: Path, work: Path) -> dict[str, list[dict]]:
    """``vdg_probe`` over vdgsynth_vdg with ``tree``'s hooks: each samples log's ``vdg`` records, by task."""
    env = {**os.environ, "PYTHONPATH": str(tree), "VDG_CACHE": str(work / "cache"), "HF_HUB_OFFLINE": "1"}
    env |= {"HF_HOME": str(work / "hf"), "HF_DATASETS_OFFLINE": "1"}
    subprocess.run(["rm", "-rf", str(work)], check=True)
    tasks = work / "tasks"
    write_yamls = (  # the module moved into vdg_tasks.lmms with the package redesign
        "import importlib, importlib.util, pathlib; new = importlib.util.find_spec('vdg_tasks.lmms'); "
        "g = importlib.import_module('vdg_tasks.lmms.yamlgen' if new else 'vdg_tasks.yamlgen'); "
        f"g.write_all(pathlib.Path({str(tasks)!r}), synth_data={str(data)!r})"
    )
    subprocess.run([sys.executable, "-c", write_yamls], cwd=tree, env=env, check=True)
    command = [sys.executable, "-m", "lmms_eval", "--model", "vdg_probe", "--tasks", "vdgsynth_vdg"]
    command += ["--include_path", str(tasks), "--log_samples", "--output_path", str(work / "runs")]
    subprocess.run(command, cwd=tree, env=env, check=True, capture_output=True)
    out = {}
    for log in sorted((work / "runs").rglob("*_samples_*.jsonl")):
        task = log.name.split("_samples_", 1)[1]
        out[task] = [json.loads(line)["vdg"] for line in log.read_text().splitlines()]
    return out


#: Conditions of the ``readings`` input: every table of declared readings (no_vision, added_conditions, probes).
READINGS = ["orig", "black", "blind", "mute", "blur", "options_shuffled", "none_option", "no_question", "video_only",
            "numbered", "undeclared_here"]  # fmt: skip


def shuffle_options(root: Path, seed: int = 0) -> Path:
    """Give ``root``'s options_shuffled logs what vdg's hook logs: a ``shuffled_from`` per question, the answer at
    its shuffled letter, and a reply that follows orig's choice by its content on about half the questions (by its
    letter otherwise); once (a ``shuffled`` marker)."""
    if (root / "shuffled").is_file():
        return root
    rng = np.random.default_rng(seed)
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        orig = {}
        for log in folder.glob("*_samples_bench_vdg_orig.jsonl"):
            orig = {json.loads(line)["vdg"]["question_id"]: json.loads(line)["vdg"]["pred"] for line in log.open()}
        for log in folder.glob("*_samples_bench_vdg_options_shuffled.jsonl"):
            lines = []
            for line in log.read_text().splitlines():
                sample = json.loads(line)
                record = sample["vdg"]
                order = "".join(rng.permutation(list("ABCD")))
                record["shuffled_from"] = order
                record["answer"] = sample["target"] = "ABCD"[order.index(record["answer"])]
                chosen = orig.get(record["question_id"])
                if record["pred"] is not None and chosen is not None:
                    record["pred"] = "ABCD"[order.index(chosen)] if rng.random() < 0.5 else chosen
                    record["correct"] = record["pred"] == record["answer"]
                    sample["filtered_resps"] = record["pred"]
                lines.append(json.dumps(sample))
            log.write_text("\n".join(lines) + "\n")
        for log in folder.glob("*_samples_bench_vdg_video_only.jsonl"):  # chance levels of their own
            samples = [json.loads(line) for line in log.read_text().splitlines()]
            for sample in samples:
                sample["vdg"]["n_options"] = int(rng.integers(4, 9))
            log.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    (root / "shuffled").write_text("")
    return root


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
    readings = shuffle_options(generate(args.work / "inputs", 2, args.questions, seed=1, conditions=READINGS))
    predictions = [a for model, path in reference_predictions() for a in ("--predictions", f"{model}={path}")]
    inputs = {
        "reference": [*predictions, "--benchmark", "videomme"],
        "logs": [f"model{m:02d}={logs / f'model{m:02d}'}" for m in range(3)],
        "readings": [f"model{m:02d}={readings / f'model{m:02d}'}" for m in range(2)],
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
    from vdg_tasks.synthetic.synth import generate as synth

    data = args.work / "synth"
    if not (data / "questions.jsonl").is_file():
        docs = synth(data, n_videos=3, seed=0)
        first = json.loads(docs.read_text().splitlines()[0])["video"]
        Path(first).write_bytes(b"\0" * 1000)  # a corrupt source: the error rows must match too
    records = {
        label: lmms_eval_records(tree, data / "questions.jsonl", args.work / f"lmms-{label}")
        for label, tree in (("base", base), ("tree", ROOT))
    }
    if not records["tree"]:
        problems.append("the lmms-eval run of the tree logged no samples")
    for task in sorted(set(records["base"]) | set(records["tree"])):
        if records["base"].get(task) != records["tree"].get(task):
            problems.append(f"lmms-eval: the vdg records of {task} differ")
    print(f"lmms-eval: {sum(map(len, records['tree'].values()))} records compared")
    check = vdg(ROOT, "write-yamls", "--check")
    if check.returncode != 0:
        problems.append(f"vdg write-yamls --check failed: {check.stdout[-1000:]}{check.stderr[-1000:]}")
    for problem in problems:
        print(problem)
    print("unchanged" if not problems else f"{len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
