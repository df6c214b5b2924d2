"""How many options each task type's questions have, and which rule said so (``postprocess.reading.answer_options``).

``option_counts``: one row per (benchmark, task type, option count, rule), with the questions it covers.
Chance levels (``above_chance``, ``letters``, ``accuracy``) are 1 / this count, so a count the report
inferred (rule ``inferred per task type``: no options file, record or benchmark gave it) is a convention
a reader must see: the report's first screen names every inferred row, and ``--options-file`` corrects it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses.base import Analysis, ReportSettings, empty
from postprocess.reading.answer_options import MAX_OPTIONS, RULES, option_counts, rule_codes, task_type_codes

COLUMNS: dict[str, str] = {
    "benchmark": "benchmark name",
    "task_type": "task type",
    "n_questions": "distinct questions of the task type with this option count and rule",
    "n_options": "their option count (chance is 1 / n_options)",
    "n_options_rule": "the rule that gave it (postprocess.reading.answer_options, first that applies): options file, "
    "record, "
    "benchmark declares, inferred per task type (the largest letter in the task type's key and replies)",
}


def option_counts_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Questions per (benchmark, task type, option count, rule); columns as in ``COLUMNS``."""
    if frame.empty:
        return empty(COLUMNS)
    # Integer codes throughout: the frame can hold ~10^6 rows, and this is one distinct-count per group.
    group = task_type_codes(frame["benchmark"], frame["task_type"])
    counts = option_counts(frame).to_numpy(dtype=np.int64)
    rules = rule_codes(frame)
    key = (group * (MAX_OPTIONS + 1) + counts) * len(RULES) + rules
    question, _ = pd.factorize(frame["question_id"], use_na_sentinel=False)
    distinct = pd.DataFrame({"key": key, "question": question}).drop_duplicates()
    n_questions = distinct["key"].value_counts(sort=False)
    first = pd.Series(np.arange(len(key))).groupby(key, sort=False).first()  # a row of each key
    rows = frame.iloc[first.to_numpy()]
    table = pd.DataFrame(
        {
            "benchmark": rows["benchmark"].astype(str).to_numpy(),
            "task_type": rows["task_type"].astype(str).to_numpy(),
            "n_questions": n_questions.reindex(first.index).to_numpy(dtype=np.int64),
            "n_options": counts[first.to_numpy()],
            "n_options_rule": [RULES[i] for i in rules[first.to_numpy()]],
        }
    )
    return table.sort_values(["benchmark", "task_type", "n_options", "n_options_rule"], ignore_index=True)


ANALYSES = (
    Analysis(
        "option_counts",
        "Per benchmark and task type: its questions' option count and the rule that gave it (options file, "
        "record, benchmark declares, inferred per task type); the first screen names every inferred count.",
        COLUMNS,
        option_counts_table,
    ),
)
