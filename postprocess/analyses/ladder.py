"""The diagnostic ladder: black -> single -> shuffled -> ordered -> orig, and the deltas between rungs."""

from __future__ import annotations

import pandas as pd

from postprocess.analyses._paired import MissingPolicy, by_task_type, paired
from vdg_tasks.conditions import LADDER, LADDER_DELTAS

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "rungs": "the ladder conditions present for this model, joined by '>'",
    "n": "questions answered under every rung present",
    "n_error": "questions excluded because some rung has no answer",
    **{f"acc_{rung}": f"accuracy under {rung} (NaN when not run)" for rung in LADDER},
    **{name: f"acc_{upper} - acc_{lower} (NaN when either rung is missing)" for name, upper, lower in LADDER_DELTAS},
    "missing_policy": "exclude or incorrect",
}


def ladder_table(frame: pd.DataFrame, missing: MissingPolicy = "exclude") -> pd.DataFrame:
    """Accuracy at each rung and the deltas, per (model, benchmark, task type); columns as in ``COLUMNS``."""
    rows = []
    for (model, benchmark), group in frame.groupby(["model", "benchmark"], sort=True):
        rungs = [r for r in LADDER if r in set(group["condition"])]
        if len(rungs) < 2:
            continue
        table = paired(group, rungs, missing)
        for task_type, part in by_task_type(table):
            kept = part[~part["error"]]
            acc = {r: (kept[f"correct_{r}"].mean() if len(kept) else float("nan")) for r in rungs}
            row = {
                "model": model,
                "benchmark": benchmark,
                "task_type": task_type,
                "rungs": ">".join(rungs),
                "n": len(kept),
                "n_error": int(part["error"].sum()),
                "missing_policy": missing,
            }
            for rung in LADDER:
                row[f"acc_{rung}"] = acc.get(rung, float("nan"))
            for name, upper, lower in LADDER_DELTAS:
                row[name] = acc[upper] - acc[lower] if upper in acc and lower in acc else float("nan")
            rows.append(row)
    return pd.DataFrame(rows, columns=list(COLUMNS))
