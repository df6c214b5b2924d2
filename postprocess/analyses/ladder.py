"""The diagnostic ladder: black -> single -> shuffled -> ordered -> orig, and the deltas between rungs.

Probes (``reversed``) sit beside a rung: ``direction`` = ordered - reversed, the same key frames
with the time direction flipped.

A model's rungs are compared on one question set per benchmark (``ReportSettings.question_set="shared"``): the
questions no model that ran the same rungs has an error for under any of them (``vdg.compared_questions``);
``"per-model"`` keeps each model on its own answered questions. Strata below ``ReportSettings.min_stratum`` keep
their accuracies and deltas but no CI (``too_small``); CIs as the vdg table's (``vdg.ci_or_none``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import SCALE_CORRECT, SCALE_GRADED, by_model_benchmark, scale_of, task_type_masks
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.analyses.vdg import CI_COLUMNS, ci_or_none, conventions, paired_arms, question_set_cache
from vdg_tasks.vocabulary.conditions import LADDER, LADDER_DELTAS, LADDER_FALLBACKS, LADDER_PROBES

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "rungs": "the ladder conditions present for this model, joined by '>'",
    "n": "questions answered under every rung present (and in the shared question set)",
    "n_error": "questions excluded because some rung has no answer",
    "n_not_shared": "questions this model answered under every rung but left out because another model with the "
    "same rungs has an error on them (question_set=shared); 0 under per-model or missing_policy=incorrect",
    **{f"acc_{rung}": f"accuracy under {rung} (empty when not run)" for rung in (*LADDER, *LADDER_PROBES)},
    **{
        column: entry
        for name, upper, lower in LADDER_DELTAS
        for column, entry in (
            (name, f"acc_{upper} - acc_{lower} (empty when either rung is missing)"),
            (f"{name}_ci_low", f"lower bound of the paired bootstrap CI of {name} (empty when too_small)"),
            (f"{name}_ci_high", f"upper bound of the paired bootstrap CI of {name} (empty when too_small)"),
        )
    },
    "temporal_definition": "ordered - shuffled, or orig - shuffled when there is no ordered rung (as the paper)",
    "too_small": "n is below min_stratum: descriptive values only, no CIs",
    "ci_level": "confidence level of the CIs",
    **CI_COLUMNS,
    "missing_policy": "exclude or incorrect",
    "question_rule": "which questions the rows share: the model's rungs, question_set and missing_policy",
    "scale": f"{SCALE_CORRECT!r}, or {SCALE_GRADED!r} when a question of the row is graded (accuracies are then mean "
    "scores)",
}


def _deltas(rungs: list[str]) -> list[tuple[str, str, str]]:
    """Declared deltas whose rungs are present, then the declared fallbacks of those missing a rung
    (``LADDER_FALLBACKS``: without ordered, temporal = orig - shuffled)."""
    out = [(n, u, lo) for n, u, lo in LADDER_DELTAS if u in rungs and lo in rungs]
    out += [(n, u, lo) for n, u, lo, missing in LADDER_FALLBACKS if missing not in rungs and u in rungs and lo in rungs]
    return out


def _definition(delta: str, rungs: list[str]) -> str:
    """``upper - lower`` of the delta named ``delta`` as the ladder takes it with these rungs (its fallback when a
    rung it needs is missing)."""
    fallback = [(u, lo) for n, u, lo, missing in LADDER_FALLBACKS if n == delta and missing not in rungs]
    upper, lower = fallback[0] if fallback else next((u, lo) for n, u, lo in LADDER_DELTAS if n == delta)
    return f"{upper} - {lower}"


def _ladder_needs(present: frozenset[str]) -> str | None:
    """The ladder compares rungs: a model with fewer than two is left out."""
    rungs = [r for r in LADDER if r in present]
    if len(rungs) >= 2:
        return None
    return f"fewer than two ladder rungs run ({', '.join(LADDER)}; has {', '.join(rungs) or 'none'})"


@memo_by_frame
def ladder_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Accuracy at each rung and the deltas with CIs, per (model, benchmark, task type)."""
    rows = []
    for (model, benchmark), group in by_model_benchmark(frame):
        present = set(group["condition"].unique())
        rungs = [r for r in LADDER if r in present]
        if len(rungs) < 2:
            continue
        compared = rungs + [p for p in LADDER_PROBES if p in present]
        arms = paired_arms(frame, group, str(benchmark), compared, options)
        deltas = _deltas(compared)
        error, score, shared, rule = arms.error, arms.score, arms.shared, arms.rule
        question_ids, videos = arms.question_ids, arms.videos
        for task_type, rows_of_task in task_type_masks(arms.table):
            kept = rows_of_task & ~error & shared
            n = int(kept.sum())
            row = {
                "model": model,
                "benchmark": benchmark,
                "task_type": task_type,
                "rungs": ">".join(rungs),
                "n": n,
                "n_error": int((rows_of_task & error).sum()),
                "n_not_shared": int((rows_of_task & ~error & ~shared).sum()),
                "temporal_definition": _definition("temporal", rungs),
                "too_small": n < options.min_stratum,
            }
            for rung in (*LADDER, *LADDER_PROBES):
                row[f"acc_{rung}"] = score[rung][kept].mean() if rung in compared and n else np.nan
            cis = []
            for name, upper, lower in deltas:
                diff = score[upper][kept] - score[lower][kept]
                row[name] = diff.mean() if n else np.nan
                ci = ci_or_none(diff, options, ("ladder", benchmark, task_type, name), question_ids[kept], videos[kept])
                if ci is not None:
                    row[f"{name}_ci_low"], row[f"{name}_ci_high"] = ci.low, ci.high
                cis.append(ci)
            row.update(conventions(COLUMNS, options, rule=rule, scale=scale_of(arms.graded[kept]), cis=cis))
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
        shares=(ladder_table, question_set_cache),
    ),
)
