"""Accuracy per condition, with a Wilson interval, under the missing-answer policy.

Each condition is scored on its own: with ``missing="exclude"`` a question whose row in that
condition is an ``error`` is not scored (``n`` leaves it out); with ``"incorrect"`` it is scored
wrong. ``n_error`` counts those questions either way. No pairing across conditions happens here
(paired comparisons are in ``vdg`` and ``ladder``).

``chance`` is the accuracy of uniform guessing on the same questions: the mean of 1 / (the
question's option count, ``postprocess.reading.answer_options``), so a task type of 3-option questions has chance
1/3 next to one of 5-option questions at 1/5.

The models of a benchmark are scored on one question set per condition (``ReportSettings.question_set="shared"``,
``shared_rows``): the questions no model has an error for under that condition, so one model's failures never
change another model's row (and a pair's accuracies are on the questions McNemar compares them on);
``"per-model"`` scores each model on its own answered questions. Strata below ``ReportSettings.min_stratum``
questions keep n, correct and acc but no interval (``too_small``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import (
    OVERALL,
    QUESTION_SET_PER_MODEL,
    SCALE_AT_THRESHOLD,
    SCALE_CORRECT,
    correct_scales,
    ordered_conditions,
    question_rule,
)
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.reading.answer_options import option_counts
from postprocess.stats import wilson

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "condition name",
    "task_type": "task type, or Overall",
    "n": "questions scored (errors left out under missing_policy=exclude, scored wrong under incorrect; under "
    "question_set=shared also questions another model has an error for under this condition)",
    "correct": "questions answered right among the n",
    "acc": "correct / n (empty when n = 0)",
    "ci_low": "lower end of the Wilson score interval of acc (empty when too_small)",
    "ci_high": "upper end of the Wilson score interval of acc (empty when too_small)",
    "chance": "accuracy of uniform guessing on the same n questions: the mean of 1 / (the question's number of "
    "options); empty when n = 0 and for a graded benchmark",
    "ci_level": "confidence level of the interval",
    "n_error": "questions with no answer in this condition (missing or undecodable video)",
    "n_not_shared": "questions this model answered under this condition but left out because another model has an "
    "error on them there (question_set=shared); 0 under per-model or missing_policy=incorrect",
    "n_unparsed": "answers among the n with no readable letter (scored wrong)",
    "too_small": "n is below min_stratum: descriptive values only, no interval",
    "missing_policy": "exclude (errors not scored) or incorrect (errors scored wrong)",
    "question_rule": "which questions the models' rows of this condition share (question_set and missing_policy)",
    "scale": f"{SCALE_CORRECT!r}, or {SCALE_AT_THRESHOLD!r} for a benchmark with graded questions (no chance then)",
}

_STATUSES = ("ok", "unparsed", "error")


def _check(frame: pd.DataFrame) -> None:
    bad = frame[~frame["status"].isin(_STATUSES)]
    if len(bad):
        row = bad.iloc[0]
        raise ValueError(
            f"model {row['model']!r} / {row['condition']!r} / question {row['question_id']!r} has status "
            f"{row['status']!r}; expected one of {', '.join(_STATUSES)}"
        )
    unscored = frame[(frame["status"] != "error") & frame["correct"].isna()]
    if len(unscored):
        row = unscored.iloc[0]
        raise ValueError(
            f"model {row['model']!r} / {row['condition']!r} / question {row['question_id']!r} has an answer "
            f"(status {row['status']!r}) but no correct flag; only error rows may lack one"
        )


def _per_model(options: ReportSettings) -> bool:
    return options.question_set == QUESTION_SET_PER_MODEL or options.missing == "incorrect"


@memo_by_frame
def shared_rows(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> np.ndarray:
    """Per row of ``frame``: whether its (benchmark, condition, question) is in the condition's shared question
    set, i.e. no model has an error row for it (``_paired.shared_questions`` of that one condition, for every
    benchmark and condition at once). All True when each model keeps its own questions (question_set=per-model,
    or missing=incorrect, where nothing is dropped). Callers must not mutate it."""
    if _per_model(options) or frame.empty:
        return np.ones(len(frame), dtype=bool)
    error = frame["status"].eq("error").to_numpy(dtype=bool, na_value=False)
    codes, sizes = [], []
    for key in ("benchmark", "condition", "question_id"):
        code, levels = pd.factorize(frame[key])
        codes.append(code)
        sizes.append(max(len(levels), 1))
    cell = np.ravel_multi_index(tuple(codes), tuple(sizes))
    return ~np.isin(cell, np.unique(cell[error]))


def condition_rule(condition: str, options: ReportSettings) -> str:
    """The ``question_rule`` of a condition's rows (``shared_rows``' set)."""
    return question_rule([condition], options.missing, options.question_set)


def accuracy_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Accuracy per (model, benchmark, condition, task type) with Overall rows; columns as in ``COLUMNS``."""
    if frame.empty:
        return empty(COLUMNS)
    _check(frame)
    error = frame["status"] == "error"
    shared = shared_rows(frame, options)
    scored = (~error & shared) if options.missing == "exclude" else pd.Series(True, index=frame.index)
    flags = pd.DataFrame(
        {
            "model": frame["model"],
            "benchmark": frame["benchmark"],
            "condition": frame["condition"],
            "task_type": frame["task_type"].astype(str),
            "n": scored,
            "correct": frame["correct"].fillna(False).astype(bool) & scored,
            "n_error": error,
            "n_not_shared": ~error & ~shared,
            "n_unparsed": (frame["status"] == "unparsed") & scored,
            "_inverse_options": (1.0 / option_counts(frame).to_numpy(dtype=float)) * scored.to_numpy(),
        }
    )
    keys = ["model", "benchmark", "condition"]
    counts = ["n", "correct", "n_error", "n_not_shared", "n_unparsed", "_inverse_options"]
    per_type = flags.groupby([*keys, "task_type"], sort=False)[counts].sum().reset_index()
    overall = flags.groupby(keys, sort=False)[counts].sum().reset_index().assign(task_type=OVERALL)
    table = pd.concat([per_type, overall], ignore_index=True)
    # Order: model, benchmark, condition (declared order), task types alphabetically, Overall last.
    table["_cond"] = table["condition"].map(
        {c: i for i, c in enumerate(ordered_conditions(table["condition"].unique()))}
    )
    table["_overall"] = table["task_type"] == OVERALL
    table = table.sort_values(["model", "benchmark", "_cond", "_overall", "task_type"], kind="stable")
    table = table.reset_index(drop=True)

    n = table["n"].to_numpy(dtype=np.int64)
    k = table["correct"].to_numpy(dtype=np.int64)
    low, high = np.full(len(table), np.nan), np.full(len(table), np.nan)
    too_small = n < options.min_stratum
    for i in np.flatnonzero((n > 0) & ~too_small):
        interval = wilson(int(k[i]), int(n[i]), options.ci_level)
        low[i], high[i] = interval.low, interval.high
    table["acc"] = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    table["ci_low"], table["ci_high"] = low, high
    table["chance"] = np.where(n > 0, table["_inverse_options"].to_numpy(dtype=float) / np.maximum(n, 1), np.nan)
    table["ci_level"] = options.ci_level
    table["too_small"] = too_small
    table["missing_policy"] = options.missing
    table["question_rule"] = table["condition"].map(
        {c: condition_rule(str(c), options) for c in table["condition"].unique()}
    )
    table["scale"] = correct_scales(frame, table["benchmark"])
    table.loc[table["scale"] != SCALE_CORRECT, "chance"] = np.nan  # a graded answer has no options to guess among
    for column in counts[:-1]:
        table[column] = table[column].astype(np.int64)
    return table[list(COLUMNS)]


ANALYSES = (
    Analysis(
        "accuracy",
        "Accuracy per model, condition and task type with a Wilson interval (none below min_stratum questions), "
        "the models of a condition on one question set, under the missing-answer policy.",
        COLUMNS,
        accuracy_table,
        shares=(shared_rows,),
    ),
)
