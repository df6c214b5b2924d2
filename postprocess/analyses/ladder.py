"""The diagnostic ladder: black -> single -> shuffled -> ordered -> orig, and the deltas between rungs.

Probes (``reversed``) sit beside a rung: ``direction`` = ordered - reversed, the same key frames
with the time direction flipped."""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import by_model_benchmark, paired, task_type_masks
from postprocess.analyses.base import Analysis, Options, empty
from postprocess.stats import bootstrap_mean
from vdg_tasks.conditions import LADDER, LADDER_DELTAS, LADDER_PROBES

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "rungs": "the ladder conditions present for this model, joined by '>'",
    "n": "questions answered under every rung present",
    "n_error": "questions excluded because some rung has no answer",
    **{f"acc_{rung}": f"accuracy under {rung} (empty when not run)" for rung in (*LADDER, *LADDER_PROBES)},
    **{
        column: entry
        for name, upper, lower in LADDER_DELTAS
        for column, entry in (
            (name, f"acc_{upper} - acc_{lower} (empty when either rung is missing)"),
            (f"{name}_ci_low", f"lower bound of the paired bootstrap CI of {name}"),
            (f"{name}_ci_high", f"upper bound of the paired bootstrap CI of {name}"),
        )
    },
    "temporal_definition": "ordered - shuffled, or orig - shuffled when there is no ordered rung (as the paper)",
    "ci_level": "confidence level of the CIs",
    "n_resamples": "bootstrap resamples",
    "missing_policy": "exclude or incorrect",
}


def _deltas(rungs: list[str]) -> list[tuple[str, str, str]]:
    """Declared deltas whose rungs are present; without `ordered`, temporal = orig - shuffled."""
    out = [(n, u, lo) for n, u, lo in LADDER_DELTAS if u in rungs and lo in rungs]
    if "ordered" not in rungs and {"orig", "shuffled"} <= set(rungs):
        out.append(("temporal", "orig", "shuffled"))
    return out


def _ladder_needs(present: frozenset[str]) -> str | None:
    """The ladder compares rungs: a model with fewer than two is left out."""
    rungs = [r for r in LADDER if r in present]
    if len(rungs) >= 2:
        return None
    return f"fewer than two ladder rungs run ({', '.join(LADDER)}; has {', '.join(rungs) or 'none'})"


def ladder_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Accuracy at each rung and the deltas with CIs, per (model, benchmark, task type)."""
    rows = []
    for (model, benchmark), group in by_model_benchmark(frame):
        present = set(group["condition"].unique())
        rungs = [r for r in LADDER if r in present]
        if len(rungs) < 2:
            continue
        compared = rungs + [p for p in LADDER_PROBES if p in present]
        table = paired(group, compared, options.missing)
        deltas = _deltas(compared)
        error = table["error"].to_numpy(dtype=bool)
        correct = {rung: table[f"correct_{rung}"].to_numpy(dtype=bool) for rung in compared}
        videos = table["video_id"].to_numpy()
        for task_type, rows_of_task in task_type_masks(table):
            kept = rows_of_task & ~error
            n = int(kept.sum())
            row = {
                "model": model,
                "benchmark": benchmark,
                "task_type": task_type,
                "rungs": ">".join(rungs),
                "n": n,
                "n_error": int((rows_of_task & error).sum()),
                "temporal_definition": "ordered - shuffled" if "ordered" in rungs else "orig - shuffled",
                "ci_level": options.ci_level,
                "n_resamples": options.n_resamples,
                "missing_policy": options.missing,
            }
            for rung in (*LADDER, *LADDER_PROBES):
                row[f"acc_{rung}"] = correct[rung][kept].mean() if rung in compared and n else np.nan
            for name, upper, lower in deltas:
                diff = correct[upper][kept].astype(int) - correct[lower][kept].astype(int)
                row[name] = diff.mean() if n else np.nan
                if n:
                    ci = bootstrap_mean(
                        diff,
                        n_resamples=options.n_resamples,
                        seed=options.seed_for("ladder", name, model, benchmark, task_type),
                        level=options.ci_level,
                        clusters=videos[kept] if options.cluster else None,
                    )
                    row[f"{name}_ci_low"], row[f"{name}_ci_high"] = ci.low, ci.high
            rows.append(row)
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows).reindex(columns=list(COLUMNS))


ANALYSES = (
    Analysis(
        "ladder",
        "Accuracy at each ladder rung and the spatial, diversity, temporal, sampling and direction deltas with CIs.",
        COLUMNS,
        ladder_table,
        needs=_ladder_needs,
    ),
)
