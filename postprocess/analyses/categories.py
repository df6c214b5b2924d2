"""The four orig x black outcome categories, pooled over models, and the cross-model hard core.

Per question (one model, orig and black arms, under the missing-answer policy):

- I   right with the original video only (VDG = +1: the video helped)
- II  right in both (VDG = 0)
- III right with the black video only (VDG = -1)
- IV  wrong in both (VDG = 0)

On a graded benchmark "right" is a score of at least 0.5 (``vdg_tasks.vocabulary.scoring.CORRECT_AT``).

Two tables:

``categories``: counts and shares of I-IV per (model, benchmark, task type) and Overall, plus
``model = "pooled"`` rows whose counts are the sums over the models (each on its own question
set under the policy), so a pooled share is a question-weighted mean of the models' shares.
Pooled rows appear when a benchmark has at least two models with orig and black.

``hard_core``: per (benchmark, task type) and Overall, the share of questions with VDG = +1 for
every model, among the questions every model has and (under ``exclude``) answered in both arms.
Needs at least two models with orig and black on the benchmark.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import by_task_type
from postprocess.analyses.base import Analysis, ReportSettings, conditions_needed, empty
from postprocess.analyses.vdg import conventions, per_question

#: The ``model`` label of rows that pool every model of a benchmark.
POOLED = "pooled"

CATEGORIES: dict[str, str] = {
    "I": "right with the original video only (VDG = +1)",
    "II": "right with both videos (VDG = 0)",
    "III": "right with the black video only (VDG = -1)",
    "IV": "wrong with both videos (VDG = 0)",
}

COLUMNS: dict[str, str] = {
    "model": f"model label, or {POOLED!r} (counts summed over the benchmark's models)",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "n_models": "models counted (1, or the number pooled)",
    "n": "questions counted (summed over models when pooled)",
    **{f"n_{c}": f"questions in category {c}: {text}" for c, text in CATEGORIES.items()},
    **{f"share_{c}": f"n_{c} / n" for c in CATEGORIES},
    "n_error": "questions left out because an arm has no answer (missing_policy=exclude)",
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
}

HARD_CORE_COLUMNS: dict[str, str] = {
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "models": "the models compared, joined by ','",
    "n_models": "number of models compared",
    "n": "questions every model has and (under exclude) answered in both arms",
    "n_hard_core": "questions in category I (right only with the video: VDG = +1 for a letter) for every model",
    "share": "n_hard_core / n",
    "n_error": "shared questions left out because some model has no answer in an arm (exclude)",
    "missing_policy": "exclude or incorrect",
}


def _check_labels(questions: pd.DataFrame) -> None:
    if (questions["model"] == POOLED).any():
        raise ValueError(
            f"a model is labelled {POOLED!r}, the label of the pooled rows; relabel it (--predictions NAME=FILE)"
        )


def _category_flags(questions: pd.DataFrame) -> dict[str, pd.Series]:
    o, b = questions["correct_orig"].astype(bool), questions["correct_black"].astype(bool)
    return {"I": o & ~b, "II": o & b, "III": ~o & b, "IV": ~o & ~b}


def categories_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Categories I-IV per (model, benchmark, task type), then pooled rows; columns as in ``COLUMNS``."""
    questions = per_question(frame, options)
    if questions.empty:
        return empty(COLUMNS)
    _check_labels(questions)
    flags = _category_flags(questions)
    questions = questions.assign(**{f"n_{c}": flag & ~questions["excluded"] for c, flag in flags.items()})
    counted = ["n", *(f"n_{c}" for c in CATEGORIES), "n_error"]
    rows = []
    for (model, benchmark), table in questions.groupby(["model", "benchmark"], sort=True):
        for task_type, part in by_task_type(table):
            row = {"model": model, "benchmark": benchmark, "task_type": task_type, "n_models": 1}
            row["n"] = int((~part["excluded"]).sum())
            row.update({f"n_{c}": int(part[f"n_{c}"].sum()) for c in CATEGORIES})
            row["n_error"] = int(part["excluded"].sum())
            rows.append(row)
    per_model = pd.DataFrame(rows)
    pooled = []
    for benchmark, group in per_model.groupby("benchmark", sort=True):
        if group["model"].nunique() < 2:
            continue
        sums = group.groupby("task_type", sort=False)[["n_models", *counted]].sum().reset_index()
        pooled.append(sums.assign(model=POOLED, benchmark=benchmark))
    out = pd.concat([per_model, *pooled], ignore_index=True)
    for c in CATEGORIES:
        out[f"share_{c}"] = out[f"n_{c}"] / out["n"].where(out["n"] > 0)
    out["missing_policy"] = options.missing
    return out[list(COLUMNS)]


def hard_core_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Share of questions in category I for every model, per (benchmark, task type); ``HARD_CORE_COLUMNS``."""
    questions = per_question(frame, options)
    if questions.empty:
        return empty(HARD_CORE_COLUMNS)
    rows = []
    for benchmark, group in questions.groupby("benchmark", sort=True):
        models = sorted(group["model"].unique())
        if len(models) < 2:
            continue
        by_model = group.set_index(["question_id", "model"])
        shared = group.groupby("question_id")["model"].nunique()
        shared_ids = shared.index[shared == len(models)]
        # category I for every model: right with the video and wrong without (VDG = +1 for a letter; a graded
        # score of at least 0.5 against one below it)
        right_only_with = by_model["correct_orig"].astype(bool) & ~by_model["correct_black"].astype(bool)
        vdg = right_only_with.unstack("model").reindex(index=shared_ids, columns=models)
        excluded = by_model["excluded"].unstack("model").reindex(index=shared_ids, columns=models)
        table = pd.DataFrame(
            {
                "question_id": shared_ids,
                "task_type": group.drop_duplicates("question_id")
                .set_index("question_id")["task_type"]
                .reindex(shared_ids)
                .to_numpy(),
                "any_excluded": excluded.any(axis=1).to_numpy(dtype=bool),
                "all_plus": vdg.fillna(False).astype(bool).all(axis=1).to_numpy(dtype=bool),
            }
        )
        for task_type, part in by_task_type(table):
            kept = part[~part["any_excluded"]]
            n, k = len(kept), int(kept["all_plus"].sum())
            rows.append(
                {
                    "benchmark": benchmark,
                    "task_type": task_type,
                    "models": ",".join(models),
                    "n_models": len(models),
                    "n": n,
                    "n_hard_core": k,
                    "share": k / n if n else np.nan,
                    "n_error": int(part["any_excluded"].sum()),
                    **conventions(HARD_CORE_COLUMNS, options),
                }
            )
    if not rows:
        return empty(HARD_CORE_COLUMNS)
    return pd.DataFrame(rows, columns=list(HARD_CORE_COLUMNS))


ANALYSES = (
    Analysis(
        "categories",
        "Orig x black outcome categories I-IV per model and task type, with rows pooled over models.",
        COLUMNS,
        categories_table,
        needs=conditions_needed("orig", "black"),
        shares=(per_question,),
    ),
    Analysis(
        "hard_core",
        "Share of questions that every model answers right only with the video (VDG = +1 for all).",
        HARD_CORE_COLUMNS,
        hard_core_table,
        needs=conditions_needed("orig", "black"),
        min_models=2,
        shares=(per_question,),
    ),
)
