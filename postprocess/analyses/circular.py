"""Circular evaluation: a question counts only if it is answered right under every rotation of its options.

A question with ``N`` options is asked under ``orig`` and under its own ``N - 1`` rotations (the conditions of family
``circular``, ``vdg_tasks.vocabulary.conditions.circular_rotations``: rotation ``k`` asks option ``i`` at position
``(i + k) mod N``, the answer moved with it). Per (model, benchmark, task type), then Overall, on the questions
answered under ``orig`` and every one of their own rotations (in the benchmark's compared question set, as the vdg
table's)::

    acc_single   = mean_q correct_q(orig)
    acc_circular = mean_q  prod_{k=0}^{N_q - 1} correct_q(rotation k)      (rotation 0 = orig)
    drop         = acc_single - acc_circular = mean_q [correct_q(orig) - circular_q]

``drop`` is a mean of per-question paired differences of two 0/1 outcomes (every one 0 or 1: a question right under
every rotation is right under orig), so its CI is the vdg table's paired CI (``vdg.ci_or_none``). A model that follows
an option's content answers the same option under every rotation (``drop`` = 0); one that always answers "A" is
right under exactly one rotation of each question (``acc_circular`` = 0, ``acc_single`` = the share keyed A).

A rotation ``k >= N`` asks the question rotated by ``k mod N``: a repeat of orig or of a rotation below N, left out
here. A question one of whose own rotations was not run, or not logged, is left out too (``n_missing``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from postprocess.analyses._paired import PAIRED_COLUMNS, SCALE_CORRECT, question_rule, task_type_masks
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.analyses.vdg import CI_COLUMNS, ci_or_none, conventions, paired_arms, question_set_cache
from postprocess.reading.answer_options import option_counts
from vdg_tasks.vocabulary.conditions import CIRCULAR, circular_rotations

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "n": "questions answered under orig and under every one of their own rotations (N - 1 for N options), in the "
    "benchmark's compared question set",
    "n_options": "the option counts N of the n questions ('4', or a range '3-5')",
    "rotations": "the rotations besides orig each question was asked under: N - 1 ('3', or a range '2-4')",
    "acc_single": "accuracy under orig over the n questions (single-pass accuracy)",
    "acc_circular": "share of the n questions answered right under orig and every one of their own rotations",
    "drop": "acc_single - acc_circular (mean per-question correct(orig) - circular; 0 <= drop <= acc_single)",
    "ci_low": "lower bound of the paired CI of drop (ci_method; empty when too_small)",
    "ci_high": "upper bound of the paired CI of drop (ci_method; empty when too_small)",
    "acc_rotated": "mean accuracy under the questions' own rotations (orig left out) over the n questions",
    "chance_single": "a uniform guesser's single-pass accuracy on the n questions: mean of 1 / N",
    "chance_circular": "a uniform guesser's circular accuracy on the n questions: mean of (1 / N)^N",
    "reading": "the sentence a reader needs",
    "n_error": "questions left out because orig or one of their own rotations has no answer (missing_policy=exclude)",
    "n_missing": "questions answered under orig left out because one of their own rotations was not run or not "
    "logged for them (the tag <benchmark>_vdg_circular<N> runs the rotations N options need)",
    "n_not_shared": "questions this model answered under every arm but left out because another model has an error on "
    "them (question_set=shared); 0 under per-model or missing_policy=incorrect",
    "n_unparsed": "replies among the n questions' orig and rotations with no readable letter (scored wrong)",
    "too_small": "n is below min_stratum: descriptive values only, no CI",
    "ci_level": "confidence level of the CI",
    **CI_COLUMNS,
    "missing_policy": "exclude (errors dropped) or incorrect (errors scored wrong)",
    "question_rule": "which questions the rows share: orig and each question's own rotations, question_set and "
    "missing_policy",
    "scale": f"{SCALE_CORRECT!r}",
}

#: How the ``question_rule`` column names the arms (each question has its own set of rotations).
_ARMS_LABEL = ("orig", "each question's own rotations")


def _needs(present: frozenset[str]) -> str | None:
    if "orig" not in present:
        return "orig not run"
    if not set(circular_rotations()) & present:
        return f"no rotation of family {CIRCULAR} run (<benchmark>_vdg_{CIRCULAR}<N> runs those N options need)"
    return None


_needs.conditions = ("orig", *list(circular_rotations())[:1])  # type: ignore[attr-defined]  # skipped: offered


@dataclass(frozen=True)
class _Questions:
    """One (model, benchmark)'s circular-evaluated questions, one entry each, every option count together."""

    task_type: np.ndarray
    question_ids: np.ndarray
    videos: np.ndarray
    n_options: np.ndarray
    right_under_orig: np.ndarray
    circular: np.ndarray
    rotated: np.ndarray  # share of the question's own rotations answered right
    unparsed: np.ndarray  # replies with no readable letter, orig and rotations
    error: np.ndarray
    shared: np.ndarray


def _span(values: np.ndarray) -> str:
    if not len(values):
        return ""
    low, high = int(values.min()), int(values.max())
    return str(low) if low == high else f"{low}-{high}"


#: The column holding each row's option count in the rows ``_questions`` reads.
_N = "_n_options"


def _questions(
    frame: pd.DataFrame, group: pd.DataFrame, benchmark: str, options: ReportSettings
) -> tuple[_Questions | None, pd.Series]:
    """The questions of one model's rows ``group`` (with its option counts, column ``_N``) paired over orig and their
    own rotations, and the task types of those answered under orig but missing a rotation of theirs."""
    by_k = {k: name for name, k in circular_rotations().items()}
    present = set(group["condition"].unique())
    orig = group[group["condition"] == "orig"]
    per_question = pd.Series(orig[_N].to_numpy(), index=orig["question_id"].to_numpy())
    missing: list[pd.Series] = []
    parts: list[dict[str, np.ndarray]] = []
    for n in sorted(int(v) for v in pd.unique(per_question.dropna())):
        ids = per_question.index[per_question.to_numpy() == n]
        arms = ["orig", *(by_k.get(k, "") for k in range(1, n))]
        asked = orig["question_id"].isin(ids)
        if n < 2 or any(arm not in present for arm in arms):
            missing.append(orig.loc[asked, "task_type"])
            continue
        rows = group[group["question_id"].isin(ids) & group["condition"].isin(arms)]
        complete = rows.groupby("question_id", sort=False)["condition"].nunique()
        whole = complete.index[complete.to_numpy() == len(arms)]
        missing.append(orig.loc[asked & ~orig["question_id"].isin(whole), "task_type"])
        rows = rows[rows["question_id"].isin(whole)]
        if rows.empty:
            continue
        pair = paired_arms(frame, rows, benchmark, arms, options)
        right = np.column_stack([pair.correct[arm] for arm in arms])
        parts.append(
            {
                "task_type": pair.table["task_type"].to_numpy(dtype=object),
                "question_ids": pair.question_ids,
                "videos": pair.videos,
                "n_options": np.full(len(pair.question_ids), n),
                "right_under_orig": right[:, 0],
                "circular": np.asarray(right.all(axis=1), dtype=bool),
                "rotated": np.asarray(right[:, 1:].mean(axis=1), dtype=float),
                "unparsed": np.column_stack([pair.table[f"unparsed_{arm}"].to_numpy(dtype=bool) for arm in arms]).sum(
                    axis=1
                ),
                "error": pair.error,
                "shared": pair.shared,
            }
        )
    lacking = pd.concat(missing) if missing else pd.Series([], dtype=object)
    if not parts:
        return None, lacking
    return _Questions(**{key: np.concatenate([p[key] for p in parts]) for key in parts[0]}), lacking


def _reading(single: float, circular: float, drop: float, low: float, high: float, n: int) -> str:
    if not n:
        return "no question answered under orig and all of its rotations"
    ci = "" if np.isnan(low) else f" [{low + 0.0:+.3f}, {high + 0.0:+.3f}]"
    return (
        f"right under every rotation of the options on {circular:.3f} of the questions against {single:.3f} "
        f"single-pass: {drop + 0.0:.3f}{ci} of the accuracy depends on where the options stand"
    )


@memo_by_frame
def circular_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Single-pass and circular accuracy and their paired difference per (model, benchmark, task type); columns as
    in ``COLUMNS``."""
    rotations = set(circular_rotations())
    if frame.empty or not rotations:
        return empty(COLUMNS)
    read = frame[[c for c in PAIRED_COLUMNS if c in frame.columns]].assign(**{_N: option_counts(frame).to_numpy()})
    rule = question_rule(list(_ARMS_LABEL), options.missing, options.question_set)
    rows = []
    for (model, benchmark), group in read.groupby(["model", "benchmark"], sort=True):
        present = set(group["condition"].unique())
        if "orig" not in present or not rotations & present:
            continue
        found, lacking = _questions(frame, group, str(benchmark), options)
        if found is None:
            continue
        for task_type, of_task in task_type_masks(pd.DataFrame({"task_type": found.task_type})):
            kept = of_task & ~found.error & found.shared
            n = int(kept.sum())
            single = found.right_under_orig[kept].astype(float)
            circular = found.circular[kept].astype(float)
            differences = single - circular
            ci = ci_or_none(
                differences, options, ("circular", benchmark, task_type), found.question_ids[kept], found.videos[kept]
            )
            acc_single, acc_circular = (single.mean(), circular.mean()) if n else (np.nan, np.nan)
            drop = differences.mean() if n else np.nan
            low, high = (ci.low, ci.high) if ci else (np.nan, np.nan)
            sizes = found.n_options[kept].astype(float)
            of_lacking = lacking if task_type == "Overall" else lacking[lacking.astype(str) == task_type]
            rows.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "task_type": task_type,
                    "n": n,
                    "n_options": _span(found.n_options[kept]),
                    "rotations": _span(found.n_options[kept] - 1),
                    "acc_single": acc_single,
                    "acc_circular": acc_circular,
                    "drop": drop,
                    "ci_low": low,
                    "ci_high": high,
                    "acc_rotated": found.rotated[kept].mean() if n else np.nan,
                    "chance_single": float(np.mean(1.0 / sizes)) if n else np.nan,
                    "chance_circular": float(np.mean(sizes**-sizes)) if n else np.nan,
                    "reading": _reading(acc_single, acc_circular, drop, low, high, n),
                    "n_error": int((of_task & found.error).sum()),
                    "n_missing": int(len(of_lacking)),
                    "n_not_shared": int((of_task & ~found.error & ~found.shared).sum()),
                    "n_unparsed": int(found.unparsed[kept].sum()),
                    "too_small": n < options.min_stratum,
                    **conventions(COLUMNS, options, rule=rule, scale=SCALE_CORRECT, cis=[ci]),
                }
            )
    if not rows:
        return empty(COLUMNS)
    table: pd.DataFrame = pd.DataFrame(rows, columns=list(COLUMNS))
    return table


ANALYSES = (
    Analysis(
        "circular",
        "Circular evaluation per model and task type: single-pass accuracy (orig), circular accuracy (right under orig "
        "and every rotation of the question's options) and the drop between them, with paired CIs.",
        COLUMNS,
        circular_table,
        needs=_needs,
        shares=(circular_table, question_set_cache),
    ),
)
