"""The two no-vision arms side by side: VDG against ``black``, VDG against ``blind``, and ``black - blind``.

``black`` keeps the visual tokens (black frames of the source's duration and size: the VDG's control);
``blind`` gives the model no visual input at all, the text-only baseline other papers report. Per
(model, benchmark, task type) each contrast whose two arms were run is one row: ``vdg_black`` = orig - black
(the vdg table's VDG), ``vdg_blind`` = orig - blind, and ``black_blind`` = black - blind, what a screen of
black frames itself changes. A model's contrasts are computed on one set of questions, those answered under
every arm it ran, shared across the benchmark's models as the vdg table's are
(``ReportSettings.question_set``); CIs are the vdg table's paired bootstrap CIs (``vdg.ci_or_none``).
"""

from __future__ import annotations

import pandas as pd

from postprocess.analyses._paired import SCALE_CORRECT, SCALE_GRADED, by_model_benchmark
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.analyses.paired_contrast import Contrast, paired_cells
from postprocess.analyses.vdg import CI_COLUMNS, conventions, question_set_cache
from vdg_tasks.vocabulary.conditions import core_measured

#: The arm with no visual input at all (declared with measure ``no_vision``).
BLIND = core_measured("no_vision")
#: The arms, in the order a model's questions are paired.
ARMS: tuple[str, ...] = ("orig", "black", BLIND)

#: (contrast, upper arm, lower arm): each row's difference is acc_upper - acc_lower.
CONTRASTS: tuple[tuple[str, str, str], ...] = (
    ("vdg_black", "orig", "black"),
    (f"vdg_{BLIND}", "orig", BLIND),
    (f"black_{BLIND}", "black", BLIND),
)

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "contrast": "vdg_black (orig - black), vdg_blind (orig - blind) or black_blind (black - blind)",
    "upper": "the condition whose accuracy is subtracted from",
    "lower": "the condition whose accuracy is subtracted",
    "arms": "the arms this model ran (of orig, black, blind), joined by ','; its questions are answered under all",
    "n": "questions answered under every arm in arms (and in the shared question set)",
    "acc_upper": "accuracy under upper over the n questions",
    "acc_lower": "accuracy under lower over the n questions",
    "diff": "acc_upper - acc_lower (mean per-question difference)",
    "ci_low": "lower bound of the paired bootstrap CI of diff (empty when too_small)",
    "ci_high": "upper bound of the paired bootstrap CI of diff (empty when too_small)",
    "n_error": "questions excluded because an arm has no answer",
    "n_not_shared": "questions this model answered under every arm but left out because another model with the same "
    "arms has an error on them (question_set=shared); 0 under per-model or missing_policy=incorrect",
    "too_small": "n is below min_stratum: descriptive values only, no CI",
    "ci_level": "confidence level of the CI",
    **CI_COLUMNS,
    "missing_policy": "exclude or incorrect",
    "question_rule": "which questions the rows share: the model's arms, question_set and missing_policy",
    "scale": f"{SCALE_CORRECT!r}, or {SCALE_GRADED!r} when a question of the row is graded (accuracies are then mean "
    "scores)",
}


def _contrasts(arms: list[str]) -> list[tuple[str, str, str]]:
    return [(name, upper, lower) for name, upper, lower in CONTRASTS if upper in arms and lower in arms]


def _needs(present: frozenset[str]) -> str | None:
    """The table compares blind with orig or black: a model with neither pair is left out."""
    if BLIND in present and ({"orig", "black"} & present):
        return None
    return "needs blind and orig or black (has " + (", ".join(a for a in ARMS if a in present) or "none") + ")"


@memo_by_frame
def no_vision_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Each no-vision contrast per (model, benchmark, task type); columns as in ``COLUMNS``."""
    rows = []
    for (model, benchmark), group in by_model_benchmark(frame):
        present = set(group["condition"].unique())
        arms = [arm for arm in ARMS if arm in present]
        contrasts = [Contrast(name, upper, lower, (name,)) for name, upper, lower in _contrasts(arms)]
        if BLIND not in arms or not contrasts:
            continue
        for cell in paired_cells(frame, group, str(benchmark), arms, contrasts, options, "no_vision"):
            upper, lower = cell.contrast.upper, cell.contrast.lower
            rows.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "task_type": cell.task_type,
                    "contrast": cell.contrast.name,
                    "upper": upper,
                    "lower": lower,
                    "arms": ",".join(arms),
                    "n": cell.n,
                    "acc_upper": cell.accuracy(upper),
                    "acc_lower": cell.accuracy(lower),
                    "diff": cell.diff,
                    "ci_low": cell.ci_low,
                    "ci_high": cell.ci_high,
                    "n_error": cell.n_error,
                    "n_not_shared": cell.n_not_shared,
                    "too_small": cell.too_small(options),
                    **conventions(COLUMNS, options, rule=cell.arms.rule, scale=cell.scale, cis=[cell.ci]),
                }
            )
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows, columns=list(COLUMNS))


ANALYSES = (
    Analysis(
        "no_vision",
        "VDG against black and against blind (no visual input), and black - blind, per model and task type with "
        "paired bootstrap CIs.",
        COLUMNS,
        no_vision_table,
        needs=_needs,
        shares=(no_vision_table, question_set_cache),
    ),
)
