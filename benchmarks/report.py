"""Speed and memory of the full report on synthetic lmms-eval logs.

Generates samples logs for MODELS x CONDITIONS x QUESTIONS (default 20 x 12 x 3,000 = 720,000
rows, in the layout lmms-eval writes with --log_samples), then, in a fresh child process per size,
runs what `vdg report` runs: the imports, read + join the logs, every analysis (all bootstraps at
2,000 resamples; in worker processes from 20,000 rows; each CSV kept as it is computed), then the
report's CSVs, markdown, HTML, JSON and plots. Prints wall seconds per stage (the total from the
first import), the peak RSS of the report process and of its largest worker, for the full size and
a 4x smaller one (a quarter of the questions), their ratio, and the full size's total against a bare
import of the libraries the report needs (``FLOOR``, timed in a fresh process just before).

Then the small size (3 models x orig/black x 500 questions, a prediction file's size): the whole
`vdg report` command, plots included, timed side by side with that bare import, alternating runs,
medians and their ratio.

With ``--baseline COMMIT``: only the full size, this checkout's report code and COMMIT's (``git archive``d into a
temporary folder, removed afterwards) on the very same logs, each run in a fresh process, alternating
``--repeats`` rounds; each run's stages and peak RSS, the medians and their ratio.

    python benchmarks/report.py [--workdir DIR] [--models 20] [--questions 3000] [--small-only]
    python benchmarks/report.py --baseline dcaca1b [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONDITIONS = [
    "orig",
    "black",
    "single",
    "shuffled",
    "ordered",
    "crf13",
    "crf18",
    "crf23",
    "crf28",
    "crf33",
    "crf38",
    "crf43",
]
TASK_TYPES = [
    "Attribute Perception",
    "Object Recognition",
    "OCR Problems",
    "Action Recognition",
    "Action Reasoning",
    "Temporal Reasoning",
]
# Accuracy of a typical model under each condition (the ladder rises, compression costs a little).
BASE_ACC = {"orig": 0.62, "black": 0.38, "single": 0.5, "shuffled": 0.58, "ordered": 0.6}


def generate(
    workdir: Path, n_models: int, n_questions: int, seed: int = 0, conditions: list[str] | None = None
) -> Path:
    """Write lmms-eval-shaped runs (one folder per model); skipped when already there."""
    conditions = list(conditions or CONDITIONS)
    root = workdir / f"logs_{n_models}x{len(conditions)}x{n_questions}"
    if (root / "done").is_file():
        return root
    rng = np.random.default_rng(seed)
    qids = [f"{i // 3:04d}-{i % 3 + 1}" for i in range(n_questions)]
    tasks = [TASK_TYPES[i % len(TASK_TYPES)] for i in range(n_questions)]
    answers = rng.choice(list("ABCD"), n_questions)
    ability = rng.random(n_questions)  # question difficulty shared by models: correlated answers
    for m in range(n_models):
        folder = root / f"model{m:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        stamp = "20261130_120000"
        (folder / f"{stamp}_results.json").write_text(
            json.dumps({"config": {"model": f"model{m:02d}", "model_args": ""}})
        )
        skill = rng.normal(0, 0.05)
        for cond in conditions:
            acc = BASE_ACC.get(cond, 0.6) + skill
            right = (ability + rng.normal(0, 0.25, n_questions)) < acc
            error = rng.random(n_questions) < 0.005
            wrong = np.array([chr(ord("A") + (ord(a) - ord("A") + 1) % 4) for a in answers])
            preds = np.where(right, answers, wrong)
            with (folder / f"{stamp}_samples_bench_vdg_{cond}.jsonl").open("w") as f:
                for i, q in enumerate(qids):
                    rec = {
                        "benchmark": "bench",
                        "condition": cond,
                        "condition_params": {},
                        "transform_version": 1,
                        "question_id": q,
                        "video_id": q.split("-")[0],
                        "task_type": tasks[i],
                        "duration": "short",
                        "n_options": 4,
                        "answer": answers[i],
                        "visual_key": "",
                        "pred": None if error[i] else preds[i],
                        "parse_status": None if error[i] else "ok",
                        "parse_rule": None if error[i] else "bare_letter",
                        "status": "error" if error[i] else "ok",
                        "error": "VideoDecodeError: x" if error[i] else None,
                        "correct": None if error[i] else bool(preds[i] == answers[i]),
                    }
                    f.write(
                        json.dumps(
                            {
                                "doc_id": i,
                                "target": answers[i],
                                "filtered_resps": preds[i],
                                "doc_hash": "h",
                                "vdg": rec,
                                "input": "Question?\nA. a\nB. b\nC. c\nD. d",
                            }
                        )
                    )
                    f.write("\n")
    (root / "done").write_text("")
    return root


#: What every report imports before it reads a line: the libraries of the reader, the analyses and the plots.
FLOOR = "import pandas, scipy.stats, statsmodels.api, sklearn.linear_model, matplotlib.pyplot"


def _stages(root: str, out: str) -> tuple[float, float, float, float, float, int, int]:
    """Imports, load, analyses, files of the report code on ``sys.path``: this tree's, or an older commit's
    (``--baseline``: its names as they were then; the plot worker, where that commit had one, as it ran it)."""
    start = time.perf_counter()
    try:
        from postprocess.analyses import ReportSettings as Settings
        from postprocess.reading.lmms_eval_logs import load_frame
    except ImportError:  # before the settings and the readers were renamed
        from postprocess.io import load_frame  # type: ignore[import-not-found,no-redef]

        from postprocess.analyses import Options as Settings  # type: ignore[attr-defined,no-redef]
    from postprocess.report import compute_tables, write_report

    try:
        from postprocess.plot_worker import PLOT_TABLES, BackgroundPlots  # type: ignore[import-not-found]
    except ImportError:
        PLOT_TABLES, BackgroundPlots = None, None
    t0 = time.perf_counter()
    runs = sorted(str(p) for p in Path(root).iterdir() if p.is_dir())
    frame = load_frame(runs)
    t1 = time.perf_counter()
    if BackgroundPlots is None:
        tables = compute_tables(frame, Settings(n_resamples=2000), Path(out))
        t2 = time.perf_counter()
        write_report(tables, Path(out), kept=True)
    else:
        with BackgroundPlots() as worker:
            tables = compute_tables(
                frame, Settings(n_resamples=2000), Path(out), on_table=worker.offer, first=PLOT_TABLES
            )
            t2 = time.perf_counter()
            write_report(tables, Path(out), plots=worker, kept=True)
    t3 = time.perf_counter()
    from postprocess.analyses import worker_count

    return start, t0, t1, t2, t3, len(frame), worker_count(frame)


def _measure(root: str, out: str, queue, tree: str | None = None) -> None:
    """What `vdg report` does, stage by stage: imports, load, analyses, files (with ``tree``: its code)."""
    if tree is not None:
        sys.path.insert(0, tree)
    start, t0, t1, t2, t3, rows, workers = _stages(root, out)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    queue.put(
        {
            "rows": rows,
            "workers": workers,
            "import_s": t0 - start,
            "load_s": t1 - t0,
            "analyses_s": t2 - t1,
            "write_s": t3 - t2,
            "total_s": t3 - start,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "child_rss_mb": children,
        }
    )


def measure(root: Path, out: Path, tree: Path | None = None) -> dict:
    """``_measure`` in a fresh process (the report code of ``tree`` when given, else this checkout's)."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_measure, args=(str(root), str(out), queue, None if tree is None else str(tree)))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def _wall(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - t


def small_ratio(workdir: Path, repeats: int = 5) -> dict:
    """`vdg report` (every table, plots) on 3 models x orig/black x 500 questions vs ``FLOOR``, alternating;
    medians."""
    root = generate(workdir, 3, 500, conditions=["orig", "black"])
    runs = sorted(str(p) for p in root.iterdir() if p.is_dir())
    report = [sys.executable, "-m", "vdg_tasks.cli", "report", *runs, "--out", str(workdir / "report_small")]
    floor = [sys.executable, "-c", FLOOR]
    _wall(floor), _wall(report)  # warm the file cache (and the __pycache__)
    times: dict[str, list[float]] = {"report": [], "import": []}
    for _ in range(repeats):
        times["import"].append(_wall(floor))
        times["report"].append(_wall(report))
    out = {f"{k}_s": statistics.median(v) for k, v in times.items()}
    out["ratio"] = out["report_s"] / out["import_s"]
    print(
        f"[small] 3 models x 2 conditions x 500 questions: vdg report {out['report_s']:.2f} s, "
        f"bare import {out['import_s']:.2f} s (medians of {repeats}): ratio {out['ratio']:.2f}",
        flush=True,
    )
    return out


def _tree_of(commit: str, into: Path) -> Path:
    """The files of ``commit`` (``git archive``: no worktree, the repository untouched) under ``into``."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def side_by_side(workdir: Path, n_models: int, n_questions: int, commit: str, repeats: int) -> dict:
    """The full-size report of this checkout and of ``commit`` on the very same logs, each run in a fresh process,
    alternating (the order flipped every round, so that neither always runs on a warmer or quieter machine);
    every run printed, then the medians and their ratio (this checkout / ``commit``)."""
    root = generate(workdir, n_models, n_questions)
    runs: dict[str, list[dict]] = {"this": [], commit: []}
    with tempfile.TemporaryDirectory(prefix="vdg_baseline_") as tmp:
        trees: dict[str, Path | None] = {"this": None, commit: _tree_of(commit, Path(tmp) / "tree")}
        for round_ in range(repeats):
            order = ["this", commit] if round_ % 2 else [commit, "this"]
            for label in order:
                out = workdir / f"report_side_{'this' if label == 'this' else 'baseline'}"
                r = measure(root, out, trees[label])
                runs[label].append(r)
                print(
                    f"[{label:>10}] round {round_ + 1}: total {r['total_s']:.2f} s (import / load / analyses / write "
                    f"{r['import_s']:.2f} / {r['load_s']:.2f} / {r['analyses_s']:.2f} / {r['write_s']:.2f}); "
                    f"peak RSS {r['peak_rss_mb']:.0f} MB, largest worker {r['child_rss_mb']:.0f} MB",
                    flush=True,
                )
    medians = {
        label: {key: statistics.median(r[key] for r in rs) for key in ("total_s", "analyses_s", "load_s")}
        for label, rs in runs.items()
    }
    this, base = medians["this"], medians[commit]
    print(
        f"\n{runs['this'][0]['rows']} rows, medians of {repeats}: this checkout {this['total_s']:.2f} s "
        f"(analyses {this['analyses_s']:.2f} s), {commit} {base['total_s']:.2f} s "
        f"(analyses {base['analyses_s']:.2f} s): "
        f"ratio {this['total_s'] / base['total_s']:.2f} (analyses {this['analyses_s'] / base['analyses_s']:.2f})"
    )
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", default=str(ROOT / ".bench_report"))
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--questions", type=int, default=3000)
    parser.add_argument("--small-only", action="store_true", help="only the small `vdg report` vs import timing")
    parser.add_argument("--repeats", type=int, default=5, help="alternating runs of the small comparison")
    parser.add_argument(
        "--baseline",
        metavar="COMMIT",
        help="only the full size, this checkout against the report code of COMMIT, side by side on the same logs",
    )
    args = parser.parse_args()
    workdir = Path(args.workdir)
    if args.baseline:
        side_by_side(workdir, args.models, args.questions, args.baseline, max(1, args.repeats))
        return
    small = small_ratio(workdir, args.repeats)
    if args.small_only:
        return
    sizes = [("full", args.questions), ("quarter", args.questions // 4)]
    results = {}
    for label, n_q in sizes:
        t = time.perf_counter()
        root = generate(workdir, args.models, n_q)
        print(f"[{label}] logs ready in {time.perf_counter() - t:.1f} s: {root}", flush=True)
        floor = _wall([sys.executable, "-c", FLOOR])
        results[label] = {**measure(root, workdir / f"report_{label}"), "floor_s": floor}
    print()
    print(
        f"{'size':8} {'rows':>8} {'import s':>8} {'load s':>7} {'analyses s':>10} {'write s':>8} {'total s':>8} "
        f"{'peak RSS MB':>12} {'largest worker MB':>17}"
    )
    for label, r in results.items():
        print(
            f"{label:8} {r['rows']:>8} {r['import_s']:>8.2f} {r['load_s']:>7.2f} {r['analyses_s']:>10.2f} "
            f"{r['write_s']:>8.2f} {r['total_s']:>8.2f} {r['peak_rss_mb']:>12.0f} {r['child_rss_mb']:>17.0f}"
        )
    print(f"analyses ran in {results['full']['workers']} worker process(es)")
    full, quarter = results["full"], results["quarter"]
    print(
        f"\nfull / quarter: rows x{full['rows'] / quarter['rows']:.2f}, "
        f"time x{full['total_s'] / quarter['total_s']:.2f} (linear or better when <= the rows ratio)"
    )
    print(
        f"full: {full['total_s']:.2f} s against a bare import of the report's libraries ({full['floor_s']:.2f} s, "
        f"timed just before): ratio {full['total_s'] / full['floor_s']:.1f}; peak RSS target <= 1500 MB"
    )
    print(
        f"small: vdg report {small['report_s']:.2f} s vs the bare import {small['import_s']:.2f} s: "
        f"ratio {small['ratio']:.2f}"
    )


if __name__ == "__main__":
    main()
