"""``vdg shortcuts`` and ``vdg debias``: what a benchmark's text gives away, before any model runs.

Both read a benchmark's questions (vdg's own, or a ``--docs`` file), hand them as text to the answerers of
``postprocess.shortcuts`` and write their tables; ``vdg debias`` writes question-set files
(``vdg_tasks.data.question_sets``) that ``VDG_QUESTION_SET``, ``vdg export`` and ``vdg report --question-set``
take.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from postprocess.debias import (
    bias_pruning,
    kept_ids,
    proportional_counts,
    random_pruning,
    removal_total,
    removed_per_type,
    type_sizes,
)
from postprocess.rendering.formatting import brief_p
from postprocess.shortcuts import shortcut_scores
from vdg_tasks.cli.common import fail
from vdg_tasks.data import question_sets
from vdg_tasks.data.text_questions import text_questions

#: The files ``vdg shortcuts`` writes into its folder.
SHORTCUTS_CSV = "shortcuts.csv"
SHORTCUT_TYPES_CSV = "shortcut_types.csv"
#: What ``vdg debias`` writes besides its question sets.
PRUNED_CSV = "pruned.csv"
DEBIASED = "debiased"


def _questions(args: argparse.Namespace) -> Any:
    """The benchmark's questions as the answerers' input frame."""
    # the benchmarks' loaders (vdg_tasks.jobs.materialize: the model side's, lmms-eval) only for these commands
    from vdg_tasks.jobs.materialize import load_docs

    if args.docs:
        docs = question_sets.read_docs(args.docs)
    elif args.derived:
        docs = derived_docs(args.benchmark, Path(args.derived))
    else:
        docs = load_docs(args.benchmark)
    questions, unanswered = text_questions(args.benchmark, docs)
    if unanswered:
        shown = ", ".join(unanswered[:5]) + (", ..." if len(unanswered) > 5 else "")
        print(f"vdg: {len(unanswered)} question(s) without a ground-truth answer left out: {shown}", file=sys.stderr)
    if not questions:
        raise ValueError(f"{args.benchmark}: no question has a ground-truth answer")
    return pd.DataFrame(questions)


def derived_docs(task: str, folder: Path) -> list[dict[str, Any]]:
    """The docs of ``task`` as the ``vdg derive`` folder ``folder`` reads them (its orig task's dataset, through
    the derived benchmark's view).

    Raises:
        ValueError: ``folder`` holds no derived ``task`` (the message names the file looked for).
    """
    # the derived tasks' machinery (lmms-eval's task loading) only for --derived
    from vdg_tasks.jobs.materialize import benchmark_docs
    from vdg_tasks.lmms.derive_spec import SPEC_FILE, DeriveSpec, derived_benchmark

    spec_file = folder / task / SPEC_FILE
    if not spec_file.is_file():
        raise ValueError(f"--derived {folder}: no {spec_file} (the folder `vdg derive {task} --out {folder}` writes)")
    benchmark = derived_benchmark(DeriveSpec.from_json(spec_file.read_text(encoding="utf-8")))
    return [benchmark.view(doc) for doc in benchmark_docs(task, f"{task}_vdg_orig", folder)]


def _markdown(table: Any) -> str:
    shown = table[["task_type", "answerer", "n", "accuracy", "ci_low", "ci_high", "chance", "p_holm", "above_chance"]]
    return shown.assign(p_holm=shown["p_holm"].map(brief_p)).to_markdown(index=False, floatfmt=".3f")


def default_out(benchmark: str) -> Path:
    """``shortcuts_<benchmark>`` in the working folder, the name kept to letters, digits, ``-`` and ``_`` (a
    benchmark name never reaches outside the folder)."""
    return Path("shortcuts_" + re.sub(r"[^A-Za-z0-9_-]", "_", benchmark))


def cmd_shortcuts(args: argparse.Namespace) -> int:
    try:
        questions = _questions(args)
        scores, types = shortcut_scores(questions, progress=True)
    except (ValueError, OSError) as exc:
        return fail("shortcuts", exc)
    out = Path(args.out) if args.out else default_out(args.benchmark)
    out.mkdir(parents=True, exist_ok=True)
    scores.to_csv(out / SHORTCUTS_CSV, index=False)
    types.to_csv(out / SHORTCUT_TYPES_CSV, index=False)
    print(_markdown(types[types["answerer"] == "combined"]))
    print(f"{len(questions)} questions; per question: {out / SHORTCUTS_CSV}, per task type: {out / SHORTCUT_TYPES_CSV}")
    return 0


def _write_set(benchmark: str, ids: list[str], path: Path, description: str, counts: dict[str, int]) -> Path:
    chosen = question_sets.make_set(benchmark, ids, counts=counts.items(), description=description)
    return question_sets.write(chosen, path)


def cmd_debias(args: argparse.Namespace) -> int:
    try:
        if args.rounds < 1 or args.controls < 0:
            raise ValueError(
                f"--rounds must be at least 1 and --controls at least 0 (got {args.rounds}, {args.controls})"
            )
        questions = _questions(args)
        total = removal_total(len(questions), budget=args.budget, frac=args.frac)
        pruned = bias_pruning(questions, total, rounds=args.rounds, progress=True)
    except (ValueError, OSError) as exc:
        return fail("debias", exc)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stale = sorted(p for pattern in (f"{DEBIASED}.json", "uniform_*.json", "matched_*.json") for p in out.glob(pattern))
    for path in stale:  # an earlier run's sets (more controls, another budget) would be read as this run's
        path.unlink()
    if stale:
        print(f"vdg debias: removed {len(stale)} question sets an earlier run wrote in {out}", file=sys.stderr)
    pruned.to_csv(out / PRUNED_CSV, index=False)
    if pruned.empty:
        print(
            f"no task type's text-only accuracy is above chance on {args.benchmark} (or none has the videos to "
            f"cross-validate): nothing to prune, no question sets written ({out / PRUNED_CSV} is empty)",
            file=sys.stderr,
        )
        return 0
    if len(pruned) < total:
        print(
            f"stopped after {len(pruned)} of the {total} questions asked for: the task types whose text-only "
            f"accuracy is above chance are emptied (their Holm-adjusted p in {out / PRUNED_CSV})",
            file=sys.stderr,
        )
    counts = removed_per_type(pruned)
    removed_text = ", ".join(f"{t}: {n}" for t, n in sorted(counts.items()))
    sizes = type_sizes(questions)
    kept_counts = {t: sizes[t] - counts.get(t, 0) for t in sizes}
    debiased = _write_set(
        args.benchmark,
        kept_ids(questions, pruned["question_id"]),
        out / f"{DEBIASED}.json",
        f"debiased: iterative bias pruning (vdg debias, {args.rounds} rounds) removed the {len(pruned)} questions "
        f"the text-only answerers favoured most ({removed_text})",
        kept_counts,
    )
    print(debiased)
    controls = {
        "uniform": (
            proportional_counts(sizes, len(pruned)),
            "as many questions removed in all, each task type its proportional share",
        ),
        "matched": (counts, "as many questions of each task type removed as the pruning did"),
    }
    for kind, (kind_counts, how) in controls.items():
        removed_here = ", ".join(f"{t}: {n}" for t, n in sorted(kind_counts.items()))
        for control in range(args.controls):
            path = _write_set(
                args.benchmark,
                kept_ids(questions, random_pruning(questions, kind_counts, control, kind)),
                out / f"{kind}_{control:02d}.json",
                f"{kind} random control {control} of vdg debias: {how}, drawn uniformly ({removed_here})",
                {t: sizes[t] - kind_counts.get(t, 0) for t in sizes},
            )
            print(path)
    print(
        f"removed {len(pruned)} of {len(questions)} questions ({removed_text}); compare the sets with "
        f"vdg report --question-set {DEBIASED}={debiased} --question-set uniform_00={out / 'uniform_00.json'} ... "
        f"--question-set matched_00={out / 'matched_00.json'} ...",
        file=sys.stderr,
    )
    return 0
