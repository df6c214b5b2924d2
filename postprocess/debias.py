"""Iterative bias pruning: remove the questions the text alone answers best, and random controls.

At most ``removal_total`` questions are removed in ``rounds`` batches: each round re-fits the text-only
answerers (``postprocess.shortcuts``, fitted per task type) on the questions that remain and removes the batch
whose right option they favour most, ranked over the whole benchmark by s(q) above chance (the ``combined``
answerer's s(q) minus 1 / options, so that questions with more options are not spared for that alone; ties broken
by question id). Only the task types whose text-only accuracy is above chance on the whole benchmark are pruned
(the one-sided binomial test of ``shortcuts.type_summary``, Holm over the task types, ``ALPHA``; decided once,
before any removal, since a type's last few questions are too few to train an answerer on): in a task type the text
does not answer, a high s(q) is noise, and removing by it would be random pruning under another name. Pruning stops
early when those task types are emptied. A question whose shortcut shows only once the most obvious ones are gone is
still found, and a task type the text answers outright goes first. Two kinds of
random control, each drawn uniformly within task types with a seed from the kind, the benchmark, the task type, the
control's number and the question ids:

- ``uniform``: as many questions in all, each task type losing its proportional share (``proportional_counts``):
  a debiased set whose visual dependency exceeds every one of these did more than shrink the set;
- ``matched``: as many questions of each task type as the pruning removed: one that exceeds these too chose
  better questions within task types, not only a different mix of task types.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd
from tqdm import tqdm

from postprocess.shortcuts import check_questions, ids_digest, shortcut_scores
from postprocess.stats import holm
from vdg_tasks.vocabulary.seeding import rng_for

#: Rounds of re-fitting.
ROUNDS = 5
#: Random controls.
CONTROLS = 10
#: The answerer whose s(q) orders the removals.
RANKED_BY = "combined"
#: A task type is pruned while its text-only accuracy is above chance at this level (Holm over task types).
ALPHA = 0.05

PRUNED_COLUMNS: dict[str, str] = {
    "benchmark": "benchmark name",
    "task_type": "task type",
    "question_id": "a removed question",
    "round": "the round (from 1) that removed it",
    "s": "its s(q) in that round (combined answerer, cross-validated on the questions left)",
    "excess": "s minus 1 / n_options: what the removals are ranked by",
    "type_accuracy": "its task type's text-only accuracy (combined answerer) on the whole benchmark",
    "type_p_holm": "one-sided binomial p of that accuracy above chance, Holm-adjusted over the task types",
}


def removal_total(n_questions: int, budget: int | None = None, frac: float | None = None) -> int:
    """Questions to remove: ``budget``, or ``frac`` of ``n_questions`` (rounded).

    Raises:
        ValueError: neither or both given, a budget outside [1, n_questions - 1], a fraction outside (0, 1).
    """
    if (budget is None) == (frac is None):
        raise ValueError("give exactly one of --budget N (questions to remove) or --frac F (share to remove)")
    if frac is not None:
        if not 0 < frac < 1:
            raise ValueError(f"--frac must be between 0 and 1 (exclusive), got {frac}")
        return max(1, round(frac * n_questions))
    assert budget is not None
    if not 1 <= budget < n_questions:
        raise ValueError(
            f"--budget must be between 1 and {n_questions - 1} (the benchmark has {n_questions}), got {budget}"
        )
    return int(budget)


def _batches(n: int, rounds: int) -> list[int]:
    """``n`` removals as ``rounds`` batches as equal as can be (the larger first), none empty."""
    rounds = max(1, min(rounds, n))
    return [n // rounds + (1 if i < n % rounds else 0) for i in range(rounds)] if n else []


def bias_pruning(questions: pd.DataFrame, total: int, rounds: int = ROUNDS, progress: bool = False) -> pd.DataFrame:
    """The questions iterative bias pruning removes, in order: ``PRUNED_COLUMNS`` rows (fewer than ``total`` when
    no task type is left whose text-only accuracy is above chance, or too few questions are left to
    cross-validate).

    ``questions``: one benchmark's questions (``postprocess.shortcuts.QUESTION_INPUT``). ``progress``: a bar over
    the rounds.
    """
    check_questions(questions)
    rows: list[dict[str, object]] = []
    remaining = questions.reset_index(drop=True)
    prunable: pd.DataFrame | None = None
    batches = _batches(int(total), rounds)
    bar = tqdm(total=len(batches), desc="vdg debias: rounds", unit="round", disable=not progress)
    for number, size in enumerate(batches, start=1):
        bar.update()
        scores, types = shortcut_scores(remaining)
        ranked = scores[scores["answerer"] == RANKED_BY].assign(excess=lambda t: t["s"] - t["chance"])
        if prunable is None:  # decided once, on every question: a type's last few questions train no answerer
            prunable = types_above_chance(types[types["answerer"] == RANKED_BY])
        ranked = ranked.merge(prunable, on="task_type", how="inner")
        removed = ranked.sort_values(["excess", "question_id"], ascending=[False, True]).head(size)
        if removed.empty:
            break
        rows += [
            {
                "benchmark": r.benchmark,
                "task_type": r.task_type,
                "question_id": r.question_id,
                "round": number,
                "s": float(r.s),
                "excess": float(r.excess),
                "type_accuracy": float(r.type_accuracy),
                "type_p_holm": float(r.type_p_holm),
            }
            for r in removed.itertuples(index=False)
        ]
        remaining = remaining[~remaining["question_id"].isin(set(removed["question_id"]))].reset_index(drop=True)
    bar.close()
    return pd.DataFrame(rows, columns=list(PRUNED_COLUMNS))


def types_above_chance(summary: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """The task types of ``summary`` (one answerer's rows of ``shortcuts.type_summary``) whose text-only accuracy
    is above chance: columns ``task_type``, ``type_accuracy``, ``type_p_holm`` (the one-sided binomial p, Holm over
    the task types)."""
    summary = summary[(summary["task_type"] != "Overall") & (summary["n"] > 0)]
    columns = ["task_type", "type_accuracy", "type_p_holm"]
    if summary.empty:
        return pd.DataFrame(columns=columns)
    adjusted = holm(summary["p_above_chance"].to_numpy())
    found = summary.assign(type_accuracy=summary["accuracy"], type_p_holm=adjusted)
    return found.loc[found["type_p_holm"] < alpha, columns].reset_index(drop=True)


def removed_per_type(pruned: pd.DataFrame) -> dict[str, int]:
    """How many questions of each task type ``pruned`` holds."""
    return {str(t): int(n) for t, n in pruned.groupby("task_type").size().items()}


def proportional_counts(sizes: Mapping[str, int], total: int) -> dict[str, int]:
    """``total`` removals split over task types in proportion to their sizes (largest remainders first, then task
    type order): what removing ``total`` questions uniformly at random takes from each task type on average."""
    whole = sum(sizes.values())
    exact = {t: total * n / whole for t, n in sorted(sizes.items())}
    counts = {t: math.floor(x) for t, x in exact.items()}
    for t in sorted(exact, key=lambda t: (-(exact[t] - counts[t]), t))[: total - sum(counts.values())]:
        counts[t] += 1
    return counts


def random_pruning(questions: pd.DataFrame, counts: Mapping[str, int], control: int, kind: str) -> list[str]:
    """The question ids random control number ``control`` of ``kind`` removes: ``counts`` per task type, drawn
    uniformly within each (``kind`` is part of the seed: ``matched`` and ``uniform`` controls draw apart)."""
    removed: list[str] = []
    digest = ids_digest(questions["question_id"])
    for task_type, group in questions.groupby("task_type", sort=True):
        ids = sorted(map(str, group["question_id"]))
        n = int(counts.get(str(task_type), 0))
        benchmark = str(group["benchmark"].iloc[0])
        rng = rng_for("debias-random", kind, benchmark, str(task_type), control, digest)
        removed += [ids[i] for i in sorted(rng.choice(len(ids), size=n, replace=False))] if n else []
    return removed


def kept_ids(questions: pd.DataFrame, removed: list[str] | pd.Series) -> list[str]:
    """The question ids of ``questions`` not in ``removed``, sorted."""
    gone = set(map(str, removed))
    return sorted(q for q in map(str, questions["question_id"]) if q not in gone)


def type_sizes(questions: pd.DataFrame) -> dict[str, int]:
    return {str(t): int(n) for t, n in questions.groupby("task_type").size().items()}


__all__ = [
    "ALPHA",
    "CONTROLS",
    "PRUNED_COLUMNS",
    "ROUNDS",
    "bias_pruning",
    "kept_ids",
    "random_pruning",
    "proportional_counts",
    "removal_total",
    "removed_per_type",
    "type_sizes",
    "types_above_chance",
]
