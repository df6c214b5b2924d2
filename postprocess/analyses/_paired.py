"""Question-by-question alignment of conditions, under an explicit missing-answer policy."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from postprocess.analyses.base import MissingPolicy
from vdg_tasks.conditions import CONDITIONS

OVERALL = "Overall"
_DECLARED_CONDITIONS = list(CONDITIONS)


def paired(frame: pd.DataFrame, conditions: Sequence[str], missing: MissingPolicy = "exclude") -> pd.DataFrame:
    """One row per question of one (model, benchmark) holding every condition in ``conditions``.

    Columns: question_id, video_id, task_type, then ``correct_<cond>`` (bool) and
    ``unparsed_<cond>`` (bool) per condition, and ``error`` (bool: some condition had an error).
    With ``missing="exclude"`` rows with an error are kept but flagged (callers drop them from both
    arms); with ``"incorrect"`` an error counts as a wrong answer and ``error`` is False.
    """
    if missing not in ("exclude", "incorrect"):
        raise ValueError(f"missing policy must be 'exclude' or 'incorrect', got {missing!r}")
    present = set(frame["condition"].unique())
    absent = [c for c in conditions if c not in present]
    if absent:
        raise ValueError(
            f"condition(s) {', '.join(absent)} missing for model {frame['model'].iloc[0]!r} "
            f"(it has {', '.join(sorted(present))})"
        )
    sub = frame[frame["condition"].isin(conditions)]
    wide = sub.pivot(index="question_id", columns="condition", values=["correct", "status"])
    meta = sub.drop_duplicates("question_id").set_index("question_id")[["video_id", "task_type"]]
    out = meta.loc[wide.index].copy()
    any_error = pd.Series(False, index=wide.index)
    for cond in conditions:
        status = wide[("status", cond)]
        is_error = status == "error"
        out[f"correct_{cond}"] = wide[("correct", cond)].fillna(False).astype(bool)
        out[f"unparsed_{cond}"] = status == "unparsed"
        any_error |= is_error
    out["error"] = any_error if missing == "exclude" else False
    return out.reset_index()


def by_task_type(table: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """Each task type's rows, then all rows as ``Overall``."""
    for task_type, group in table.groupby("task_type", sort=True):
        yield str(task_type), group
    yield OVERALL, table


_DECLARED_CONDITIONS = list(CONDITIONS)


def condition_sort_key(condition: str) -> tuple[int, str]:
    """Declared conditions in declaration order (orig, black, single, ..., crf38), then others by name."""
    return (
        (_DECLARED_CONDITIONS.index(condition), "")
        if condition in _DECLARED_CONDITIONS
        else (len(_DECLARED_CONDITIONS), condition)
    )


def ordered_conditions(conditions: Iterable[str]) -> list[str]:
    """The distinct conditions, sorted by ``condition_sort_key``."""
    return sorted({str(c) for c in conditions}, key=condition_sort_key)


def group_index(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Each row's group number, and one row of key values per group (sorted by the keys).

    A vectorized stand-in for ``frame.groupby(keys).ngroup()``, which is slow on string columns.
    Key columns must have no missing values.
    """
    codes, levels = [], []
    for key in keys:
        code, level = pd.factorize(frame[key], sort=True)
        if (code < 0).any():
            row = frame.iloc[int(np.flatnonzero(code < 0)[0])]
            raise ValueError(
                f"column {key!r} is empty for question {row.get('question_id')!r}; fill it or drop the row"
            )
        codes.append(code)
        levels.append(np.asarray(level, dtype=object))
    shape = tuple(len(level) for level in levels)
    flat = np.ravel_multi_index(tuple(codes), shape) if len(frame) else np.zeros(0, dtype=np.int64)
    uniq, inverse = np.unique(flat, return_inverse=True)
    parts = np.unravel_index(uniq, shape)
    table = pd.DataFrame({key: level[part] for key, level, part in zip(keys, levels, parts, strict=True)})
    return inverse.reshape(-1), table
