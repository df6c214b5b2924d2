"""Accuracy per condition, with a Wilson interval, under the missing-answer policy.

Each condition is scored on its own: with ``missing="exclude"`` a question whose row in that
condition is an ``error`` is not scored (``n`` leaves it out); with ``"incorrect"`` it is scored
wrong. ``n_error`` counts those questions either way. No pairing across conditions happens here
(paired comparisons are in ``vdg`` and ``ladder``).

``chance`` is the accuracy of uniform guessing on the same questions: the mean of 1 / (the
question's option count, ``postprocess.choices``), so a task type of 3-option questions has chance
1/3 next to one of 5-option questions at 1/5.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import OVERALL, ordered_conditions
from postprocess.analyses.base import Analysis, Options, empty
from postprocess.choices import option_counts
from postprocess.stats import wilson

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "condition name",
    "task_type": "task type, or Overall",
    "n": "questions scored (errors left out under missing_policy=exclude, scored wrong under incorrect)",
    "correct": "questions answered right among the n",
    "acc": "correct / n (empty when n = 0)",
    "ci_low": "lower end of the Wilson score interval of acc",
    "ci_high": "upper end of the Wilson score interval of acc",
    "chance": "accuracy of uniform guessing on the same n questions: the mean of 1 / (the question's number of "
    "options); empty when n = 0",
    "ci_level": "confidence level of the interval",
    "n_error": "questions with no answer in this condition (missing or undecodable video)",
    "n_unparsed": "answers among the n with no readable letter (scored wrong)",
    "missing_policy": "exclude (errors not scored) or incorrect (errors scored wrong)",
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


def accuracy_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Accuracy per (model, benchmark, condition, task type) with Overall rows; columns as in ``COLUMNS``."""
    if frame.empty:
        return empty(COLUMNS)
    _check(frame)
    error = frame["status"] == "error"
    scored = ~error if options.missing == "exclude" else pd.Series(True, index=frame.index)
    flags = pd.DataFrame(
        {
            "model": frame["model"],
            "benchmark": frame["benchmark"],
            "condition": frame["condition"],
            "task_type": frame["task_type"].astype(str),
            "n": scored,
            "correct": frame["correct"].fillna(False).astype(bool) & scored,
            "n_error": error,
            "n_unparsed": (frame["status"] == "unparsed") & scored,
            "_inverse_options": (1.0 / option_counts(frame).to_numpy(dtype=float)) * scored.to_numpy(),
        }
    )
    keys = ["model", "benchmark", "condition"]
    counts = ["n", "correct", "n_error", "n_unparsed", "_inverse_options"]
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
    for i in np.flatnonzero(n > 0):
        interval = wilson(int(k[i]), int(n[i]), options.ci_level)
        low[i], high[i] = interval.low, interval.high
    table["acc"] = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    table["ci_low"], table["ci_high"] = low, high
    table["chance"] = np.where(n > 0, table["_inverse_options"].to_numpy(dtype=float) / np.maximum(n, 1), np.nan)
    table["ci_level"] = options.ci_level
    table["missing_policy"] = options.missing
    for column in counts[:-1]:
        table[column] = table[column].astype(np.int64)
    return table[list(COLUMNS)]


ANALYSES = (
    Analysis(
        "accuracy",
        "Accuracy per model, condition and task type with a Wilson interval, under the missing-answer policy.",
        COLUMNS,
        accuracy_table,
    ),
)
