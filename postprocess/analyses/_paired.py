"""Question-by-question alignment of conditions, under an explicit missing-answer policy."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pandas as pd

from postprocess.analyses.base import MissingPolicy

OVERALL = "Overall"


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
