"""Visual Dependency Gap: VDG(q) = correct(orig) - correct(black), in {-1, 0, +1}."""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import by_model_benchmark, paired, task_type_masks
from postprocess.analyses.base import Analysis, Options, conditions_needed, empty, memo_by_frame
from postprocess.stats import bootstrap_mean

PER_QUESTION_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "question_id": "question id",
    "video_id": "video id",
    "task_type": "task type",
    "correct_orig": "answered right with the original video",
    "correct_black": "answered right with the black video",
    "vdg": "correct_orig - correct_black (-1, 0, +1); empty when excluded",
    "excluded": "an arm has no answer and missing_policy is exclude",
    "missing_policy": "exclude or incorrect",
}

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "n": "questions compared (both arms answered, or errors scored wrong under missing_policy=incorrect)",
    "acc_orig": "accuracy on the original video over the n questions",
    "acc_black": "accuracy on the black video over the n questions",
    "vdg": "mean per-question VDG = acc_orig - acc_black",
    "ci_low": "lower bound of the paired percentile bootstrap CI of vdg",
    "ci_high": "upper bound of the paired percentile bootstrap CI of vdg",
    "d": "questions with VDG = +1 (right only with the video)",
    "c": "questions with VDG = -1 (right only without it)",
    "dc_ratio": "d / c (inf when c = 0 < d; empty when both are 0)",
    "n_error": "questions excluded because an arm has no answer (missing or undecodable video)",
    "n_unparsed": "answers among the n questions with no readable letter (scored wrong), both arms",
    "ci_level": "confidence level of the CI",
    "n_resamples": "bootstrap resamples",
    "resample_unit": "question, or video (cluster bootstrap)",
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
}


@memo_by_frame
def per_question(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """One row per (model, benchmark, question) with its VDG; columns as in ``PER_QUESTION_COLUMNS``."""
    parts = []
    for (model, benchmark), group in by_model_benchmark(frame):
        if not {"orig", "black"} <= set(group["condition"].unique()):
            continue
        table = paired(group, ["orig", "black"], options.missing)
        gap = table["correct_orig"].astype(int) - table["correct_black"].astype(int)
        parts.append(
            pd.DataFrame(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "question_id": table["question_id"],
                    "video_id": table["video_id"],
                    "task_type": table["task_type"],
                    "correct_orig": table["correct_orig"],
                    "correct_black": table["correct_black"],
                    "vdg": gap.where(~table["error"]).astype("Int64"),
                    "excluded": table["error"],
                    "missing_policy": options.missing,
                }
            )
        )
    if not parts:
        return empty(PER_QUESTION_COLUMNS)
    return pd.concat(parts, ignore_index=True)[list(PER_QUESTION_COLUMNS)]


def _dc_ratio(d: int, c: int) -> float:
    if c:
        return d / c
    return float("inf") if d else float("nan")


@memo_by_frame
def vdg_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """VDG per (model, benchmark, task type) with Overall rows; columns as in ``COLUMNS``."""
    questions = per_question(frame, options)
    if questions.empty:
        return empty(COLUMNS)
    unparsed = _unparsed_counts(frame)
    rows = []
    for (model, benchmark), table in questions.groupby(["model", "benchmark"], sort=True):
        excluded = table["excluded"].to_numpy(dtype=bool)
        gaps = table["vdg"].fillna(0).to_numpy(dtype=int)
        correct_orig = table["correct_orig"].to_numpy(dtype=bool)
        correct_black = table["correct_black"].to_numpy(dtype=bool)
        question_ids = table["question_id"].to_numpy()
        videos = table["video_id"].to_numpy()
        for task_type, rows_of_task in task_type_masks(table):
            kept = rows_of_task & ~excluded
            n = int(kept.sum())
            gap = gaps[kept]
            d, c = int((gap == 1).sum()), int((gap == -1).sum())
            row = {
                "model": model,
                "benchmark": benchmark,
                "task_type": task_type,
                "n": n,
                "acc_orig": correct_orig[kept].mean() if n else np.nan,
                "acc_black": correct_black[kept].mean() if n else np.nan,
                "vdg": gap.mean() if n else np.nan,
                "ci_low": np.nan,
                "ci_high": np.nan,
                "d": d,
                "c": c,
                "dc_ratio": _dc_ratio(d, c),
                "n_error": int((rows_of_task & excluded).sum()),
                "n_unparsed": _count_unparsed(unparsed, model, benchmark, question_ids[kept]),
                "ci_level": options.ci_level,
                "n_resamples": options.n_resamples,
                "resample_unit": "video" if options.cluster else "question",
                "missing_policy": options.missing,
            }
            if n:
                ci = bootstrap_mean(
                    gap,
                    n_resamples=options.n_resamples,
                    seed=options.seed_for("vdg", model, benchmark, task_type),
                    level=options.ci_level,
                    clusters=videos[kept] if options.cluster else None,
                )
                row["ci_low"], row["ci_high"] = ci.low, ci.high
            rows.append(row)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _unparsed_counts(frame: pd.DataFrame) -> pd.Series:
    """Unparsed answers in the orig and black arms per (model, benchmark, question)."""
    arms = frame[frame["condition"].isin(["orig", "black"]) & (frame["status"] == "unparsed")]
    return arms.groupby(["model", "benchmark", "question_id"]).size()


def _count_unparsed(counts: pd.Series, model: str, benchmark: str, question_ids: np.ndarray) -> int:
    if counts.empty:
        return 0
    try:
        sub = counts.loc[(model, benchmark)]
    except KeyError:
        return 0
    return int(sub.reindex(question_ids).fillna(0).sum())


ANALYSES = (
    Analysis(
        "vdg",
        "VDG per model and task type, with a paired bootstrap CI and D:C.",
        COLUMNS,
        vdg_table,
        needs=conditions_needed("orig", "black"),
        shares=(per_question, vdg_table),
    ),
    Analysis(
        "vdg_per_question",
        "Each question's VDG per model.",
        PER_QUESTION_COLUMNS,
        per_question,
        needs=conditions_needed("orig", "black"),
        shares=(per_question,),
    ),
)
