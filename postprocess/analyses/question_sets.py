"""What one question set per comparison costs: the questions the VDG comparison's rule drops, and whether they differ.

The tables that compare rows (models, conditions) compute them on one question set per benchmark
(``ReportSettings.question_set``; ``postprocess.analyses._paired.question_rule`` names it in each table's
``question_rule`` column). Under ``missing=exclude`` that set leaves out every question some compared model
has an error for, so a model loses questions for another model's failures. Errors are not random (a video
that fails to decode may hold harder questions), so this table says, per model and anchor condition (orig,
black), how many questions the rule of the VDG comparison dropped, and the model's accuracy on the dropped
questions it did answer against the kept ones, with Fisher's exact test of the difference.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import (
    QUESTION_SET_PER_MODEL,
    by_model_benchmark,
    question_rule,
    shared_questions,
)
from postprocess.analyses.base import Analysis, ReportSettings, conditions_needed, empty
from postprocess.analyses.vdg import conventions
from postprocess.stats import fisher

#: The comparison whose question set this table accounts for: VDG's.
ANCHORS: tuple[str, ...] = ("orig", "black")

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "anchor condition (orig or black) whose answers are compared",
    "question_rule": "the rule that chose the compared questions (postprocess.analyses._paired.question_rule)",
    "n_questions": "questions the model has on the benchmark",
    "n_kept": "questions the rule keeps",
    "n_dropped": "questions the rule drops",
    "n_dropped_own": "of the dropped, those this model has an error for under orig or black",
    "n_dropped_answered": "dropped questions this model answered under this condition (no error)",
    "acc_kept": "the model's accuracy on the kept questions under this condition",
    "acc_dropped": "its accuracy on the dropped questions it answered under this condition (empty when none)",
    "p_fisher": "two-sided Fisher's exact test of acc_dropped against acc_kept (1 when every answer in both is "
    "right, or every one wrong; empty when either set is empty)",
    "dropped_differ": "p_fisher < alpha: the dropped questions are answered differently (missingness is not random)",
    "alpha": "significance level of dropped_differ",
    "missing_policy": "exclude or incorrect",
}


def question_sets_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Per (model, benchmark, anchor condition): what the VDG comparison's question rule dropped (``COLUMNS``)."""
    rule = question_rule(ANCHORS, options.missing, options.question_set)
    kept_by_benchmark: dict[str, set] = {}
    rows = []
    for (model, benchmark), group in by_model_benchmark(frame):
        if not set(ANCHORS) <= set(group["condition"].unique()):
            continue
        anchors = group[group["condition"].isin(ANCHORS)]
        qids = anchors["question_id"].astype(str).to_numpy()
        error = anchors["status"].eq("error").to_numpy(dtype=bool, na_value=False)
        own_error = set(qids[error]) if options.missing == "exclude" else set()
        if options.question_set == QUESTION_SET_PER_MODEL:
            kept = set(qids) - own_error
        else:
            if benchmark not in kept_by_benchmark:
                kept_by_benchmark[benchmark] = shared_questions(frame, benchmark, ANCHORS, options.missing)
            kept = kept_by_benchmark[benchmark] & set(qids)
        questions = set(qids)
        dropped = questions - kept
        for condition in ANCHORS:
            arm = anchors[anchors["condition"] == condition]
            arm_ids = arm["question_id"].astype(str).to_numpy()
            answered = ~arm["status"].eq("error").to_numpy(dtype=bool, na_value=False)
            right = arm["correct"].fillna(False).to_numpy(dtype=bool)
            # set look-ups: np.isin on strings sorts both sides, every model and condition over
            in_kept = np.fromiter((q in kept for q in arm_ids), dtype=bool, count=len(arm_ids))
            in_dropped = np.fromiter((q in dropped for q in arm_ids), dtype=bool, count=len(arm_ids)) & answered
            k_right, k_n = int(right[in_kept].sum()), int(in_kept.sum())
            d_right, d_n = int(right[in_dropped].sum()), int(in_dropped.sum())
            p = np.nan
            if k_n and d_n:
                # Every answer right (or every one wrong) in both: nothing differs, and Fisher's table is degenerate.
                same = d_right + k_right in (0, d_n + k_n)
                p = 1.0 if same else fisher(d_right, d_n - d_right, k_right, k_n - k_right).p_two_sided
            rows.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "condition": condition,
                    "n_questions": len(questions),
                    "n_kept": len(kept),
                    "n_dropped": len(dropped),
                    "n_dropped_own": len(dropped & own_error),
                    "n_dropped_answered": d_n,
                    "acc_kept": k_right / k_n if k_n else np.nan,
                    "acc_dropped": d_right / d_n if d_n else np.nan,
                    "p_fisher": p,
                    "dropped_differ": bool(p < options.alpha) if not np.isnan(p) else False,
                    "alpha": options.alpha,
                    **conventions(COLUMNS, options, rule=rule),
                }
            )
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows)[list(COLUMNS)]


ANALYSES = (
    Analysis(
        "question_sets",
        "Per model and anchor condition: the questions the VDG comparison's question rule dropped, and whether the "
        "model answered them differently from the kept ones.",
        COLUMNS,
        question_sets_table,
        needs=conditions_needed(*ANCHORS),
    ),
)
