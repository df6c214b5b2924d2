"""Speed and memory of ``vdg shortcuts`` on generated questions.

Writes the planted-shortcut benchmark (``vdg_tasks.synthetic.shortcut_bench``: four task types, 750 questions
each, 3,000 in all by default), then times the whole ``vdg shortcuts --docs FILE`` command side by side with
``python -c "import sklearn.ensemble, sklearn.linear_model, pandas"`` (the floor the command pays before it
computes anything), alternating runs, and prints the medians, their ratio (target <= 10) and the command's
peak RSS.

    python benchmarks/shortcuts.py [--workdir DIR] [--per-task-type 750] [--repeats 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FLOOR = "import sklearn.ensemble, sklearn.linear_model, pandas"


def timed(command: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS in MiB of the child) of one run."""
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return time.perf_counter() - start, max(peak, before) // 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--per-task-type", type=int, default=750)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from vdg_tasks.synthetic.shortcut_bench import TASK_TYPES, write_shortcut_docs

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="vdg-shortcuts-bench-"))
    docs = write_shortcut_docs(workdir / "docs.jsonl", per_task_type=args.per_task_type)
    n = args.per_task_type * len(TASK_TYPES)
    command = [sys.executable, "-m", "vdg_tasks.cli", "shortcuts", "planted", "--docs", str(docs)]
    command += ["--out", str(workdir / "out")]
    floor = [sys.executable, "-c", FLOOR]
    runs: dict[str, list[float]] = {"shortcuts": [], "floor": []}
    peak = 0
    for _ in range(args.repeats):
        seconds, rss = timed(command)
        runs["shortcuts"].append(seconds)
        peak = max(peak, rss)
        runs["floor"].append(timed(floor)[0])
    shortcuts, floor_s = statistics.median(runs["shortcuts"]), statistics.median(runs["floor"])
    print(f"questions: {n} ({args.per_task_type} per task type, {len(TASK_TYPES)} task types)")
    print(
        f"vdg shortcuts {shortcuts:.2f} s vs {FLOOR} {floor_s:.2f} s: ratio {shortcuts / floor_s:.1f} "
        f"(target <= 10; medians of {args.repeats})"
    )
    print(f"peak RSS of vdg shortcuts: {peak} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
