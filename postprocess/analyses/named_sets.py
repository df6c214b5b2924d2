"""Named question sets side by side: accuracy, no-vision accuracy and VDG on each (``vdg report --question-set
NAME=FILE``, repeatable).

For ``vdg debias``: the full set (``all``), the debiased set and the random-pruning controls in one table, so a
reader sees whether debiasing raised the visual dependency or only shrank the set. Per (model, benchmark) the
questions compared are those answered under every arm the model ran (orig, black, and blind when run), shared
across the benchmark's models as the vdg table's are; each set keeps those of its ids. ``above_controls`` counts,
per family of control sets (``uniform_00`` ... ``uniform_09``), those whose VDG is lower for the same model: 10 of
10 uniform controls for a debiased set whose pruning did more than shrink the set.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from postprocess.analyses._paired import SCALE_CORRECT, SCALE_GRADED, by_model_benchmark, scale_of
from postprocess.analyses.base import Analysis, ReportSettings, empty
from postprocess.analyses.no_vision import BLIND
from postprocess.analyses.vdg import CI_COLUMNS, ci_or_none, conventions, paired_arms
from postprocess.reading.frame import named_sets

#: The name of the row of every compared question.
ALL = "all"
ARMS: tuple[str, ...] = ("orig", "black", BLIND)

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "question_set": f"the set's name (--question-set NAME=FILE), or {ALL} (every compared question)",
    "description": "how the set was made (its file's description), or its file",
    "n": "questions of the set answered under every arm the model ran",
    "acc_orig": "accuracy on orig",
    "acc_black": "accuracy on black",
    "acc_blind": "accuracy on blind (empty when not run)",
    "vdg": "acc_orig - acc_black",
    "ci_low": "lower bound of the paired bootstrap CI of vdg (empty when too_small)",
    "ci_high": "upper bound of that CI",
    "vdg_blind": "acc_orig - acc_blind (empty when blind was not run)",
    "vdg_blind_ci_low": "lower bound of the paired bootstrap CI of vdg_blind",
    "vdg_blind_ci_high": "upper bound of that CI",
    "above_controls": "per family of control sets (names ending _NN: vdg debias' uniform_NN, matched_NN) other than "
    "the row's own, how many have a lower vdg for this model: 'uniform: 10 of 10; matched: 3 of 10'",
    "too_small": "n is below min_stratum: no CIs",
    "ci_level": "confidence level of the CIs",
    **CI_COLUMNS,
    "scale": f"{SCALE_CORRECT!r}, or {SCALE_GRADED!r} when a question of the row is graded (accuracies are then mean "
    "scores)",
}


def question_set_comparison(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Each named set's accuracies and VDGs per (model, benchmark); columns ``COLUMNS``."""
    sets = named_sets(frame)
    if not sets:
        return empty(COLUMNS)
    rows = []
    for (model, benchmark), group in by_model_benchmark(frame):
        present = set(group["condition"].unique())
        if not {"orig", "black"} <= present:
            continue
        arms = [a for a in ARMS if a in present]
        paired_ = paired_arms(frame, group, str(benchmark), arms, options)
        question_ids = paired_.question_ids.astype(str)
        compared = ~paired_.error & paired_.shared
        score = paired_.score
        mine = [s for s in sets if s["benchmark"] == benchmark]
        if not mine:
            continue
        for name, description, ids in [(ALL, "", None), *[(s["name"], s["description"], s["ids"]) for s in mine]]:
            kept = compared & (np.isin(question_ids, ids) if ids is not None else True)
            n = int(kept.sum())
            row = {"model": model, "benchmark": benchmark, "question_set": name, "description": description, "n": n}
            cis = []
            for column, lower in (("vdg", "black"), (f"vdg_{BLIND}", BLIND)):
                prefix = "" if column == "vdg" else f"vdg_{BLIND}_"
                if lower not in arms:
                    row[column] = np.nan
                    continue
                gap = score["orig"][kept] - score[lower][kept]
                row[column] = gap.mean() if n else np.nan
                ci = ci_or_none(
                    gap,
                    options,
                    ("question_set_comparison", benchmark, name, column),
                    question_ids[kept],
                    paired_.videos[kept],
                )
                row[f"{prefix}ci_low"], row[f"{prefix}ci_high"] = (ci.low, ci.high) if ci else (np.nan, np.nan)
                cis.append(ci)
            for arm in ARMS:
                row[f"acc_{arm}"] = score[arm][kept].mean() if arm in arms and n else np.nan
            row["too_small"] = n < options.min_stratum
            row.update(conventions(COLUMNS, options, scale=scale_of(paired_.graded[kept]), cis=cis))
            rows.append(row)
    if not rows:
        return empty(COLUMNS)
    table = pd.DataFrame(rows).reindex(columns=list(COLUMNS))
    table["above_controls"] = ""
    for _, group in table[table["question_set"] != ALL].groupby(["model", "benchmark"]):
        families = group["question_set"].map(family)
        controls = {f: group["vdg"][families == f] for f in families.unique() if (families == f).sum() >= 2}
        for index, vdg in group["vdg"].items():
            own = families[index]
            table.loc[index, "above_controls"] = "; ".join(
                f"{f}: {int((members < vdg).sum())} of {len(members)}" for f, members in controls.items() if f != own
            )
    return table


def family(name: str) -> str:
    """A set's family: its name without a trailing ``_<digits>`` (``uniform_03`` -> ``uniform``)."""
    return re.sub(r"_\d+$", "", str(name))


ANALYSES = (
    Analysis(
        "question_set_comparison",
        "Accuracy, black and blind accuracy and VDG on each named question set (--question-set NAME=FILE) beside "
        "every compared question, with paired bootstrap CIs.",
        COLUMNS,
        question_set_comparison,
    ),
)
