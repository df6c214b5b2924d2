"""Which task types need the video more than others: every pair of task types of a model, compared on VDG.

Per (model, benchmark), each task type with at least ``ReportSettings.min_stratum`` questions (and at least 2, for
a variance) enters (smaller ones have no CI in the ``vdg`` table and none here). For every pair the difference of
their mean per-question VDG is tested with Welch's t-test (the questions of two task types are different
questions, so the comparison is two-sample; each question's own orig and black answers are paired in
its VDG value) and given Welch's CI. The p-values of one (model, benchmark) form one Holm family, so a
"most visual" and "least visual" task type is only called different when it survives the adjustment
over every pair that could have been picked. The questions are those of the ``vdg`` table's rows
(``vdg.per_question`` with the same exclusions and shared question set).

Multiplicity. ``ci_low`` / ``ci_high`` are Welch's CI at ``ci_level``, unadjusted: the interval of one pair as if
it were the only one looked at. A decision among the pairs (``significant``, the findings' "most and least visual"
task types) is Holm-adjusted, so beside it stand ``ci_low_adjusted`` / ``ci_high_adjusted``: Welch's CI from the
same statistic at the Bonferroni level ``1 - alpha / n_family`` (``ci_level_adjusted``), simultaneous over the
family. A Bonferroni CI that excludes 0 means ``n_family * p < alpha``, so Holm rejects too (Holm's adjusted p
never exceeds Bonferroni's); the converse need not hold (Holm is the more powerful of the two).

A pair is oriented so that ``task_type_a`` has the larger VDG (``diff >= 0``); ties keep name order.
Where neither task type's VDG varies (every question +1, say, against every question 0) the t statistic
is undefined: ``p`` is 0 when the means differ and 1 when they are equal, and the CI is the difference
itself (``test`` says so).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from postprocess.analyses._paired import OVERALL, task_type_masks
from postprocess.analyses.base import Analysis, ReportSettings, conditions_needed, empty, memo_by_frame
from postprocess.analyses.vdg import (
    ARMS,
    compared_questions,
    conventions,
    in_question_set,
    per_question,
    question_set_cache,
    rule_of,
)
from postprocess.stats import holm, welch

WELCH = "Welch t-test on per-question VDG"
NO_VARIANCE = "no variance in either task type: p is 0 or 1, the CI the difference itself"

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type_a": "the task type with the larger VDG of the pair",
    "task_type_b": "the other task type",
    "n_a": "questions of task_type_a compared (the vdg table's n)",
    "n_b": "questions of task_type_b compared",
    "vdg_a": "mean per-question VDG of task_type_a (the vdg table's vdg)",
    "vdg_b": "mean per-question VDG of task_type_b",
    "diff": "vdg_a - vdg_b (>= 0)",
    "ci_low": "lower bound of Welch's CI of diff at ci_level, unadjusted for the n_family pairs",
    "ci_high": "upper bound of Welch's CI of diff at ci_level, unadjusted",
    "ci_low_adjusted": "lower bound of the Bonferroni CI of diff: Welch's CI at ci_level_adjusted = 1 - alpha / "
    "n_family, simultaneous over the pairs (excluding 0 implies p_holm < alpha)",
    "ci_high_adjusted": "upper bound of that Bonferroni CI",
    "p": "two-sided p-value of the test",
    "p_holm": "p Holm-adjusted over every pair of task types of the model and benchmark",
    "n_family": "number of pairs in that Holm family",
    "significant": "p_holm < alpha",
    "test": "the test behind p and the CI",
    "ci_level": "confidence level of the unadjusted CI",
    "ci_level_adjusted": "confidence level of the Bonferroni CI: 1 - alpha / n_family",
    "alpha": "significance level of significant",
    "missing_policy": "exclude or incorrect",
    "question_rule": "which questions the rows share (the vdg table's rule)",
}


def pair_test(a: np.ndarray, b: np.ndarray, level: float) -> tuple[float, float, float, str]:
    """(p, ci_low, ci_high, test) of mean(a) - mean(b) by Welch's t-test at CI ``level``; the no-variance case as
    documented."""
    diff = float(a.mean() - b.mean())
    if a.var() == 0 and b.var() == 0:
        return (0.0 if diff else 1.0), diff, diff, NO_VARIANCE
    result = welch(a, b, level)
    return result.p, result.low, result.high, WELCH


def bonferroni_level(alpha: float, n_family: int) -> float:
    """The confidence level of a Bonferroni CI over ``n_family`` comparisons at significance level ``alpha``."""
    return 1.0 - alpha / n_family


def _tested_types(table: pd.DataFrame, kept: np.ndarray, options: ReportSettings) -> dict[str, np.ndarray]:
    """Per-question VDG values of each task type (not Overall) with at least min_stratum (and 2) kept questions."""
    gaps = table["vdg"].fillna(0).to_numpy(dtype=float)
    out = {}
    for task_type, rows in task_type_masks(table):
        values = gaps[rows & kept]
        if task_type != OVERALL and len(values) >= max(options.min_stratum, 2):
            out[task_type] = values
    return out


@memo_by_frame
def contrast_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Every pair of task types of a (model, benchmark), compared on VDG; columns as in ``COLUMNS``."""
    questions = per_question(frame, options)
    if questions.empty:
        return empty(COLUMNS)
    rule = rule_of(ARMS, options)
    rows = []
    for (model, benchmark), table in questions.groupby(["model", "benchmark"], sort=True):
        shared = in_question_set(
            table["question_id"].to_numpy(), compared_questions(frame, str(benchmark), ARMS, options)
        )
        kept = ~table["excluded"].to_numpy(dtype=bool) & shared
        values = _tested_types(table, kept, options)
        family, arms = [], []
        for first, second in itertools.combinations(sorted(values), 2):
            a, b = (first, second) if values[first].mean() >= values[second].mean() else (second, first)
            p, low, high, test = pair_test(values[a], values[b], options.ci_level)
            arms.append((values[a], values[b]))
            family.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "task_type_a": a,
                    "task_type_b": b,
                    "n_a": len(values[a]),
                    "n_b": len(values[b]),
                    "vdg_a": values[a].mean(),
                    "vdg_b": values[b].mean(),
                    "diff": values[a].mean() - values[b].mean(),
                    "ci_low": low,
                    "ci_high": high,
                    "p": p,
                    "test": test,
                }
            )
        adjusted = holm([r["p"] for r in family]) if family else []
        level = bonferroni_level(options.alpha, len(family)) if family else np.nan
        for row, (a, b), p_holm in zip(family, arms, adjusted, strict=True):
            _, low, high, _ = pair_test(a, b, level)
            row.update(
                ci_low_adjusted=low,
                ci_high_adjusted=high,
                p_holm=float(p_holm),
                n_family=len(family),
                significant=bool(p_holm < options.alpha),
                ci_level_adjusted=level,
                alpha=options.alpha,
                **conventions(COLUMNS, options, rule=rule),
            )
            rows.append(row)
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows).reindex(columns=list(COLUMNS))


ANALYSES = (
    Analysis(
        "task_type_contrast",
        "Every pair of task types of a model compared on VDG (Welch's test and CI on per-question VDG, Holm over "
        "the model's pairs, with a Bonferroni CI beside the unadjusted one): which task types need the video more "
        "than others.",
        COLUMNS,
        contrast_table,
        needs=conditions_needed("orig", "black"),
        shares=(per_question, question_set_cache, contrast_table),
    ),
)
