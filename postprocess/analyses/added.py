"""The added conditions, each against orig, per question: those declared through ``vdg_tasks.extend`` (vdg's own
``downscale*``, ``blur`` and ``mute``, and a user's), and any condition in the logs that vdg's core does not declare.

Each is paired with ``orig`` per (model, benchmark, task type), on the questions answered under both (as the vdg
table's, ``ReportSettings.question_set``): its accuracy change ``diff`` = condition - orig with the vdg table's paired
CI, and how often the model chose the same option under both. A condition
declared to sit ``beside`` another (``mute`` beside ``black``) is also compared, with that one, on the questions
answered under all three (``n_beside``): ``diff_same_questions`` (condition - orig) beside ``diff_beside``
(the other - orig). For ``mute``, -diff is what the sound carries and -diff_beside what the pictures carry (``black``
keeps the sound).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import SCALE_CORRECT, by_model_benchmark
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.analyses.paired_contrast import Contrast, choices_by_arm, paired_cells, same_choice
from postprocess.analyses.vdg import CI_COLUMNS, conventions, question_set_cache
from vdg_tasks.vocabulary.conditions import CONDITIONS, measured

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "condition": "the added condition",
    "declared_in": "the module that declares it (vdg_tasks.extend); empty when it is not declared here",
    "n": "questions paired under orig and the condition, in the shared question set, as the vdg table pairs them",
    "acc_orig": "accuracy under orig over the n questions",
    "acc_condition": "accuracy under the condition over the n questions",
    "diff": "acc_condition - acc_orig (mean per-question difference)",
    "ci_low": "lower bound of the paired bootstrap CI of diff (empty when too_small)",
    "ci_high": "upper bound of the paired bootstrap CI of diff (empty when too_small)",
    "agreement": "share of the n questions where the model chose the same letter under both; empty when n is 0 or "
    "the answers are graded",
    "beside": "the condition it is declared to sit beside (mute: black); empty when none, or when that one was not run",
    "n_beside": "questions answered under orig, the condition and `beside` (in the shared question set)",
    "diff_same_questions": "acc_condition - acc_orig over the n_beside questions",
    "acc_beside": "accuracy under `beside` over the n_beside questions",
    "diff_beside": "acc_beside - acc_orig over the n_beside questions",
    "beside_ci_low": "lower bound of the paired bootstrap CI of diff_beside",
    "beside_ci_high": "upper bound of the paired bootstrap CI of diff_beside",
    "reading": "the sentence a reader needs",
    "n_unparsed": "of the n, replies under the condition no option could be read from (scored wrong)",
    "n_error": "questions excluded because an arm has no answer",
    "too_small": "n is below min_stratum: descriptive values only, no CI",
    "ci_level": "confidence level of the CIs",
    **CI_COLUMNS,
    "missing_policy": "exclude or incorrect",
    "question_rule": "which questions the rows share: orig and the condition, question_set and missing_policy",
    "scale": f"{SCALE_CORRECT!r} or graded (a graded question's score is in [0, 1])",
}


def added_conditions(present: set[str]) -> list[str]:
    """The conditions of ``present`` declared to be read as a ``difference`` against orig, in registry order, then
    those no module declares, by name."""
    known = [c for c in measured("difference") if c in present]
    return known + sorted(c for c in present if c not in CONDITIONS)


def _needs(present: frozenset[str]) -> str | None:
    if "orig" in present and added_conditions(set(present)):
        return None
    return "needs orig and an added condition (vdg_tasks.extend: downscale*, blur, mute or a module of yours)"


def _beside(condition: str, present: set[str]) -> str:
    declared = CONDITIONS.get(condition)
    other = declared.beside if declared is not None else None
    return other if other and other in present and other != "orig" else ""


def _reading(condition: str, diff: float, low: float, high: float, beside: str, same: float, other: float) -> str:
    if np.isnan(diff):
        return "no question to compare"
    ci = "" if np.isnan(low) else f" [{low + 0.0:+.3f}, {high + 0.0:+.3f}]"
    sentence = f"accuracy {diff + 0.0:+.3f}{ci} under {condition} against orig"
    if beside and not np.isnan(other):
        sentence += f"; on the questions answered under {beside} too, {same + 0.0:+.3f} beside {other + 0.0:+.3f}"
        declared = CONDITIONS.get(condition)
        if declared is not None and declared.beside == beside and declared.beside_reading:
            sentence += ": " + declared.beside_reading.format(own=-same + 0.0, beside=-other + 0.0)
    return sentence


def _beside_columns(
    frame: pd.DataFrame, group: pd.DataFrame, benchmark: str, condition: str, beside: str, options: ReportSettings
) -> dict[str, dict[str, object]]:
    """task type -> the beside columns, on the questions answered under orig, ``condition`` and ``beside``."""
    contrast = Contrast(beside, beside, "orig", (condition, beside))
    out: dict[str, dict[str, object]] = {}
    for cell in paired_cells(frame, group, benchmark, ["orig", condition, beside], [contrast], options, "added"):
        out[cell.task_type] = {
            "beside": beside,
            "n_beside": cell.n,
            "diff_same_questions": cell.mean_difference(condition, "orig"),
            "acc_beside": cell.accuracy(beside),
            "diff_beside": cell.diff,
            "beside_ci_low": cell.ci_low,
            "beside_ci_high": cell.ci_high,
            "_ci": cell.ci,
        }
    return out


_NO_BESIDE: dict[str, object] = {
    "beside": "",
    "n_beside": 0,
    "diff_same_questions": np.nan,
    "acc_beside": np.nan,
    "diff_beside": np.nan,
    "beside_ci_low": np.nan,
    "beside_ci_high": np.nan,
    "_ci": None,
}


@memo_by_frame
def added_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Each added condition against orig per (model, benchmark, task type); columns as in ``COLUMNS``."""
    rows = []
    for (model, benchmark), group in by_model_benchmark(frame):
        present = set(group["condition"].unique())
        if "orig" not in present:
            continue
        added = added_conditions(present)
        letters = choices_by_arm(frame, str(model), str(benchmark), ["orig", *added]) if added else pd.DataFrame()
        for condition in added:
            beside = _beside(condition, present)
            besides = _beside_columns(frame, group, str(benchmark), condition, beside, options) if beside else {}
            declared = CONDITIONS.get(condition)
            contrast = Contrast(condition, condition, "orig", (condition,))
            for cell in paired_cells(frame, group, str(benchmark), ["orig", condition], [contrast], options, "added"):
                chosen = letters.reindex(index=[str(q) for q in cell.arms.question_ids])
                first, second = (
                    chosen["pred_orig"].to_numpy(dtype=object),
                    chosen[f"pred_{condition}"].to_numpy(dtype=object),
                )
                same = same_choice(first, second)
                graded = cell.arms.graded[cell.kept]
                side = dict(besides.get(cell.task_type, _NO_BESIDE))
                side_ci = side.pop("_ci")
                rows.append(
                    {
                        "model": model,
                        "benchmark": benchmark,
                        "task_type": cell.task_type,
                        "condition": condition,
                        "declared_in": declared.declared_in if declared is not None else "",
                        "n": cell.n,
                        "acc_orig": cell.accuracy("orig"),
                        "acc_condition": cell.accuracy(condition),
                        "diff": cell.diff,
                        "ci_low": cell.ci_low,
                        "ci_high": cell.ci_high,
                        "agreement": same[cell.kept].mean() if cell.n and not graded.any() else np.nan,
                        **side,
                        "reading": _reading(
                            condition,
                            cell.diff,
                            cell.ci_low,
                            cell.ci_high,
                            str(side["beside"]),
                            float(side["diff_same_questions"]),  # type: ignore[arg-type]
                            float(side["diff_beside"]),  # type: ignore[arg-type]
                        ),
                        "n_unparsed": cell.n_unparsed(condition),
                        "n_error": cell.n_error,
                        "too_small": cell.too_small(options),
                        **conventions(COLUMNS, options, rule=cell.arms.rule, scale=cell.scale, cis=[cell.ci, side_ci]),
                    }
                )
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows, columns=list(COLUMNS))


ANALYSES = (
    Analysis(
        "added_conditions",
        "Each added condition (vdg_tasks.extend: downscale*, blur, mute, and yours) against orig per model and task "
        "type: accuracy change with paired bootstrap CIs, agreement, and mute beside black.",
        COLUMNS,
        added_table,
        needs=_needs,
        shares=(added_table, question_set_cache),
    ),
)
