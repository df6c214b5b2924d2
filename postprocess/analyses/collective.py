"""Collective accuracy: the share of groups (a video's questions) a model gets entirely right.

Plain accuracy credits a model that answers one of a video's three questions by luck; collective
accuracy asks whether it got the whole video right. Groups are the values of ``options.group_by``
(``video_id`` by default). Under ``"incorrect"`` an error is a wrong answer. Under ``missing="exclude"`` a
group keeps only its counted questions (a group left with none is dropped and counted), and the rows a table
compares share one question set (``question_rule``): with ``options.question_set="shared"`` a question is left
out of every row of its benchmark when any model has an error for it under any condition, so models and
conditions are compared on the same questions; with ``"per-model"`` a model's rows leave out the questions
it has an error for under any of its conditions (its conditions compared on one set).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from postprocess.analyses._paired import (
    CELL_KEYS,
    QUESTION_SET_SHARED,
    condition_sort_key,
    group_index,
    ordered_conditions,
    question_rule,
)
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.analyses.vdg import conventions
from postprocess.reading.frame import VIDEO_ID_FIELDS
from postprocess.stats import wilson

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "condition name",
    "n": "questions counted (question_rule: the benchmark's shared set, or all under missing_policy=incorrect)",
    "n_error": "questions with no answer in this cell (dropped under exclude, wrong under incorrect)",
    "n_excluded": "questions of the cell left out of n by question_rule (its own errors and, under a shared "
    "set, other cells' errors)",
    "question_rule": "which questions every row of the benchmark counts (question_set, missing_policy)",
    "n_groups": "groups with at least one counted question",
    "n_groups_dropped": "groups all of whose questions are left out (missing_policy=exclude only)",
    "mean_group_size": "n / n_groups",
    "accuracy": "correct answers / n",
    "collective_accuracy": "groups whose every counted question is right / n_groups",
    "collective_ci_low": "lower end of the Wilson interval of collective_accuracy (groups as trials)",
    "collective_ci_high": "upper end of that interval",
    "group_by": "the column that defines a group",
    "ci_level": "confidence level of the interval",
    "missing_policy": "exclude or incorrect",
}

DISTRIBUTION_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "condition name",
    "group_size": "counted questions in the group",
    "n_correct": "of which answered right (every value 0..group_size gets a row)",
    "n_groups": "groups of this size with this many right",
    "share": "n_groups / groups of this size (per model, benchmark, condition, group_size the shares sum to 1)",
    "group_by": "the column that defines a group",
    "missing_policy": "exclude or incorrect",
}


@dataclass(frozen=True)
class _Groups:
    """Per group (model, benchmark, condition, group value): counted questions, right answers, errors."""

    owner: np.ndarray  # the group's row in ``cells``
    size: np.ndarray
    right: np.ndarray
    errors: np.ndarray
    excluded: np.ndarray
    cells: pd.DataFrame  # one row per (model, benchmark, condition)
    rules: dict[tuple[str, ...], str]  # (benchmark,) under shared, else (model, benchmark) -> question_rule


@memo_by_frame
def _groups(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> _Groups:
    """Per (cell, group) counts, once per frame and options for both tables."""
    column = options.group_by
    if column not in frame.columns:
        raise ValueError(
            f"group_by column {column!r} is not in the frame (columns: {', '.join(map(str, frame.columns))})"
        )
    values = frame[column]
    blank = values.isna().to_numpy() | (values.astype(str) == "").to_numpy()
    if blank.any():
        row = frame.iloc[int(np.flatnonzero(blank)[0])]
        hint = (
            f"give each prediction record a video id (one of {', '.join(VIDEO_ID_FIELDS)}) or group by another "
            "column (--group-by)"
            if column == "video_id"
            else "fill it, or group by another column (--group-by)"
        )
        raise ValueError(
            f"collective accuracy groups questions by {column!r}, and question {row['question_id']!r} of model "
            f"{row['model']!r} ({row['condition']}, {row['source'] if 'source' in row.index else 'no source'}) "
            f"has none ({int(blank.sum())} rows lack one): {hint}"
        )
    cell, cells = group_index(frame, list(CELL_KEYS))
    value_code, value_levels = pd.factorize(values)
    _, first, group = np.unique(cell * len(value_levels) + value_code, return_inverse=True, return_index=True)
    group = group.reshape(-1)
    is_error = (frame["status"] == "error").to_numpy()
    counted = ~_excluded(frame, is_error, options)
    hit = frame["correct"].fillna(False).to_numpy(dtype=bool) & counted
    n = len(first)
    scope = options.question_set
    # Under per-model a model's rule names its own conditions; under shared, every condition of the benchmark.
    keys = ["benchmark"] if scope == QUESTION_SET_SHARED else ["model", "benchmark"]
    rules = {
        (key if isinstance(key, tuple) else (key,)): question_rule(
            ordered_conditions(part["condition"].unique()), options.missing, scope
        )
        for key, part in frame[[*keys, "condition"]].groupby(keys, sort=True)
    }
    return _Groups(
        owner=cell[first],
        size=np.bincount(group[counted], minlength=n),
        right=np.bincount(group[hit], minlength=n),
        errors=np.bincount(group[is_error], minlength=n),
        excluded=np.bincount(group[~counted], minlength=n),
        cells=cells,
        rules=rules,
    )


def _excluded(frame: pd.DataFrame, is_error: np.ndarray, options: ReportSettings) -> np.ndarray:
    """Per row: is its question left out (``question_rule``)? Under exclude, a question with an error for any
    model and condition of the benchmark (shared set) or for this model under any of its conditions
    (per-model); nothing under incorrect."""
    if options.missing == "incorrect":
        return np.zeros(len(frame), dtype=bool)
    keys = (
        ["benchmark", "question_id"]
        if options.question_set == QUESTION_SET_SHARED
        else ["model", "benchmark", "question_id"]
    )
    code, _ = group_index(frame, keys)
    return np.bincount(code[is_error], minlength=int(code.max()) + 1 if code.size else 0)[code] > 0


def _order(table: pd.DataFrame, *extra: str) -> pd.DataFrame:
    """Rows by model, benchmark, declared condition order, then ``extra`` columns."""
    rank = [condition_sort_key(str(c)) for c in table["condition"].tolist()]
    columns = [table["model"].tolist(), table["benchmark"].tolist(), rank, *(table[e].tolist() for e in extra)]
    keys = list(zip(*columns, strict=True))
    return table.iloc[sorted(range(len(table)), key=keys.__getitem__)].reset_index(drop=True)


def collective_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Plain and collective accuracy per (model, benchmark, condition)."""
    if frame.empty:
        return empty(COLUMNS)
    g = _groups(frame, options)
    m = len(g.cells)
    kept = g.size > 0
    all_right = kept & (g.right == g.size)
    n = np.bincount(g.owner, weights=g.size, minlength=m).astype(np.int64)
    n_groups = np.bincount(g.owner[kept], minlength=m)
    k = np.bincount(g.owner[all_right], minlength=m)
    right = np.bincount(g.owner, weights=g.right, minlength=m)
    with np.errstate(invalid="ignore", divide="ignore"):
        table = g.cells.assign(
            n=n,
            n_error=np.bincount(g.owner, weights=g.errors, minlength=m).astype(np.int64),
            n_excluded=np.bincount(g.owner, weights=g.excluded, minlength=m).astype(np.int64),
            question_rule=[
                g.rules[(b,) if options.question_set == QUESTION_SET_SHARED else (m, b)]
                for m, b in zip(g.cells["model"], g.cells["benchmark"], strict=True)
            ],
            n_groups=n_groups,
            n_groups_dropped=np.bincount(g.owner[~kept], minlength=m),
            mean_group_size=np.where(n_groups > 0, n / np.maximum(n_groups, 1), np.nan),
            accuracy=np.where(n > 0, right / np.maximum(n, 1), np.nan),
            collective_accuracy=np.where(n_groups > 0, k / np.maximum(n_groups, 1), np.nan),
            group_by=options.group_by,
            **conventions(COLUMNS, options, later=("question_rule",)),
        )
    lows, highs = np.full(m, np.nan), np.full(m, np.nan)
    for i in np.flatnonzero(n_groups):
        iv = wilson(int(k[i]), int(n_groups[i]), options.ci_level)
        lows[i], highs[i] = iv.low, iv.high
    table["collective_ci_low"], table["collective_ci_high"] = lows, highs
    return _order(table)[list(COLUMNS)]


def collective_distribution(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Groups by size and number of right answers, per (model, benchmark, condition)."""
    if frame.empty:
        return empty(DISTRIBUTION_COLUMNS)
    g = _groups(frame, options)
    kept = g.size > 0
    if not kept.any():
        return empty(DISTRIBUTION_COLUMNS)
    owner, size, right = g.owner[kept], g.size[kept], g.right[kept]
    top = int(size.max()) + 1
    # Every (cell, size) present gets the full grid n_correct = 0..size.
    cell_size, per_size = np.unique(owner * top + size, return_counts=True)
    combos, per_combo = np.unique((owner * top + size) * top + right, return_counts=True)
    lookup = dict(zip(combos.tolist(), per_combo.tolist(), strict=True))
    parts = []
    for code, total in zip(cell_size.tolist(), per_size.tolist(), strict=True):
        cell, s = divmod(code, top)
        counts = np.array([lookup.get(code * top + r, 0) for r in range(s + 1)])
        parts.append((cell, s, counts, total))
    cells = np.repeat([p[0] for p in parts], [p[1] + 1 for p in parts])
    table = g.cells.iloc[cells].reset_index(drop=True)
    table["group_size"] = np.repeat([p[1] for p in parts], [p[1] + 1 for p in parts])
    table["n_correct"] = np.concatenate([np.arange(p[1] + 1) for p in parts])
    table["n_groups"] = np.concatenate([p[2] for p in parts])
    table["share"] = table["n_groups"] / np.repeat([p[3] for p in parts], [p[1] + 1 for p in parts])
    table["group_by"] = options.group_by
    table["missing_policy"] = options.missing
    return _order(table, "group_size", "n_correct")[list(DISTRIBUTION_COLUMNS)]


ANALYSES = (
    Analysis(
        "collective",
        "Per condition: plain accuracy next to collective accuracy, the share of groups (videos) answered "
        "entirely right.",
        COLUMNS,
        collective_table,
        shares=(_groups,),
    ),
    Analysis(
        "collective_distribution",
        "Per condition and group size: how many groups have 0, 1, ... right answers.",
        DISTRIBUTION_COLUMNS,
        collective_distribution,
        shares=(_groups,),
    ),
)
