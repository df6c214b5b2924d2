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

from postprocess.analyses._paired import SCALE_CORRECT, by_model_benchmark, scale_of, task_type_masks
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.analyses.vdg import CI_COLUMNS, ci_columns, ci_or_none, paired_arms, question_set_cache
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


def _letters(frame: pd.DataFrame, model: str, benchmark: str, arms: list[str]) -> pd.DataFrame:
    """question_id -> the letter chosen under each arm (a column per arm), for one model and benchmark: taken from
    ``frame`` once for all its added conditions."""
    rows = frame.loc[
        (frame["model"] == model) & (frame["benchmark"] == benchmark) & frame["condition"].isin(arms),
        ["question_id", "condition", "pred"],
    ]
    preds = rows.assign(question_id=rows["question_id"].astype(str)).pivot_table(
        index="question_id", columns="condition", values="pred", aggfunc="first"
    )
    return preds.reindex(columns=arms)


def _same_letter(letters: pd.DataFrame, condition: str, ids: np.ndarray) -> np.ndarray:
    """Whether the model chose the same letter under orig and ``condition``, per question of ``ids``."""
    chosen = letters.reindex(index=[str(q) for q in ids])
    first, second = chosen["orig"].to_numpy(dtype=object), chosen[condition].to_numpy(dtype=object)
    return np.array([isinstance(a, str) and a == b for a, b in zip(first, second, strict=True)], dtype=bool)


def _beside_columns(
    frame: pd.DataFrame, group: pd.DataFrame, benchmark: str, condition: str, beside: str, options: ReportSettings
) -> dict[str, dict[str, object]]:
    """task type -> the beside columns, on the questions answered under orig, ``condition`` and ``beside``."""
    arms = paired_arms(frame, group, benchmark, ["orig", condition, beside], options)
    out: dict[str, dict[str, object]] = {}
    for task_type, rows_of_task in task_type_masks(arms.table):
        kept = rows_of_task & ~arms.error & arms.shared
        n = int(kept.sum())
        orig = arms.score["orig"][kept]
        other = arms.score[beside][kept] - orig
        ci = ci_or_none(other, options, ("added", benchmark, task_type, condition, beside), arms.question_ids[kept],
                        arms.videos[kept])  # fmt: skip
        out[task_type] = {
            "beside": beside,
            "n_beside": n,
            "diff_same_questions": (arms.score[condition][kept] - orig).mean() if n else np.nan,
            "acc_beside": arms.score[beside][kept].mean() if n else np.nan,
            "diff_beside": other.mean() if n else np.nan,
            "beside_ci_low": ci.low if ci else np.nan,
            "beside_ci_high": ci.high if ci else np.nan,
            "_ci": ci,
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
        letters = _letters(frame, str(model), str(benchmark), ["orig", *added]) if added else pd.DataFrame()
        for condition in added:
            pair = paired_arms(frame, group, str(benchmark), ["orig", condition], options)
            same = _same_letter(letters, condition, pair.question_ids)
            unparsed = pair.table[f"unparsed_{condition}"].to_numpy(dtype=bool)
            beside = _beside(condition, present)
            besides = _beside_columns(frame, group, str(benchmark), condition, beside, options) if beside else {}
            declared = CONDITIONS.get(condition)
            for task_type, rows_of_task in task_type_masks(pair.table):
                kept = rows_of_task & ~pair.error & pair.shared
                n = int(kept.sum())
                diff = pair.score[condition][kept] - pair.score["orig"][kept]
                ci = ci_or_none(diff, options, ("added", benchmark, task_type, condition), pair.question_ids[kept],
                                pair.videos[kept])  # fmt: skip
                mean_diff = diff.mean() if n else np.nan
                low, high = (ci.low, ci.high) if ci else (np.nan, np.nan)
                graded = pair.graded[kept]
                side = dict(besides.get(task_type, _NO_BESIDE))
                side_ci = side.pop("_ci")
                rows.append(
                    {
                        "model": model,
                        "benchmark": benchmark,
                        "task_type": task_type,
                        "condition": condition,
                        "declared_in": declared.declared_in if declared is not None else "",
                        "n": n,
                        "acc_orig": pair.score["orig"][kept].mean() if n else np.nan,
                        "acc_condition": pair.score[condition][kept].mean() if n else np.nan,
                        "diff": mean_diff,
                        "ci_low": low,
                        "ci_high": high,
                        "agreement": same[kept].mean() if n and not graded.any() else np.nan,
                        **side,
                        "reading": _reading(
                            condition,
                            mean_diff,
                            low,
                            high,
                            str(side["beside"]),
                            float(side["diff_same_questions"]),  # type: ignore[arg-type]
                            float(side["diff_beside"]),  # type: ignore[arg-type]
                        ),
                        "n_unparsed": int(unparsed[kept].sum()),
                        "n_error": int((rows_of_task & pair.error).sum()),
                        "too_small": n < options.min_stratum,
                        "ci_level": options.ci_level,
                        **ci_columns([ci, side_ci]),
                        "missing_policy": options.missing,
                        "question_rule": pair.rule,
                        "scale": scale_of(graded),
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
