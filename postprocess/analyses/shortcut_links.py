"""Do the models exploit the shortcuts the text-only answerers find?

Given each question's s(q) (``vdg report --shortcuts shortcuts.csv``: the ``combined`` answerer of
``vdg shortcuts``), ``shortcut_links`` correlates it with each model's correctness under each no-vision arm
(``black``, ``blind``) and ``orig``: a model guessing from the text is right where the text gives the answer
away. ``vdg_by_shortcut`` splits the VDG by s(q) tercile: a benchmark whose VDG lives only in the low-s(q) third
measures watching the video there and guessing elsewhere.

Terciles are the benchmark's questions that have an s(q), sorted by (s(q), question id) and cut into three
parts of sizes as equal as can be (the first parts one larger), so ties never make unequal thirds. Both tables
are empty without scores; a question without a score is left out of them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import by_model_benchmark, paired
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.analyses.vdg import CI_COLUMNS, ci_or_none, conventions
from postprocess.reading.frame import shortcut_table, text_scores
from postprocess.shortcuts import TYPE_COLUMNS, type_summary
from postprocess.stats import MIN_CORRELATION_POINTS, pearson, spearman
from vdg_tasks.vocabulary.conditions import NO_VISION

#: The arms whose correctness is related to s(q).
ARMS: tuple[str, ...] = (*NO_VISION, "orig")
TERCILES: tuple[str, ...] = ("low", "mid", "high")

LINK_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "black, blind or orig",
    "n": "questions answered under this condition that have an s(q)",
    "accuracy": "accuracy over the n questions",
    "r": "Pearson (point-biserial) correlation of s(q) with correct; empty below "
    f"{MIN_CORRELATION_POINTS} questions or without variation",
    "p": "two-sided p-value of r",
    "rho": "Spearman correlation of s(q) with correct",
    "acc_low": "accuracy on the questions of the lowest s(q) tercile",
    "acc_mid": "accuracy on the middle tercile",
    "acc_high": "accuracy on the highest s(q) tercile (the text gives the answer away most)",
}

TERCILE_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "tercile": "low, mid or high s(q) (the benchmark's questions with a score, in three equal parts)",
    "s_min": "lowest s(q) in the tercile",
    "s_max": "highest s(q) in the tercile",
    "n": "questions of the tercile answered under orig and black",
    "acc_orig": "accuracy on orig",
    "acc_black": "accuracy on black",
    "vdg": "acc_orig - acc_black",
    "ci_low": "lower bound of the paired bootstrap CI of vdg (empty when too_small)",
    "ci_high": "upper bound of that CI",
    "too_small": "n is below min_stratum: no CI",
    "ci_level": "confidence level of the CI",
    **CI_COLUMNS,
}


def terciles(scores: pd.DataFrame) -> pd.DataFrame:
    """benchmark, question_id, text_score and tercile (module docstring) of every scored question."""
    parts = []
    for _, group in scores.groupby("benchmark", sort=True):
        ordered = group.sort_values(["text_score", "question_id"], kind="stable").reset_index(drop=True)
        sizes = [len(ordered) // 3 + (1 if i < len(ordered) % 3 else 0) for i in range(3)]
        ordered["tercile"] = np.repeat(TERCILES, sizes)
        parts.append(ordered)
    if not parts:
        return pd.DataFrame(columns=["benchmark", "question_id", "text_score", "tercile"])
    return pd.concat(parts, ignore_index=True)


def _scored(frame: pd.DataFrame) -> pd.DataFrame:
    return terciles(text_scores(frame)).set_index(["benchmark", "question_id"])


def shortcut_links(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """s(q) against correctness per (model, benchmark, arm); columns ``LINK_COLUMNS``."""
    scored = _scored(frame)
    if scored.empty:
        return empty(LINK_COLUMNS)
    rows = []
    answered = frame[frame["condition"].isin(ARMS) & frame["status"].isin(["ok", "unparsed"])]
    for (model, benchmark, condition), group in answered.groupby(["model", "benchmark", "condition"], sort=True):
        keys = pd.MultiIndex.from_arrays([group["benchmark"].astype(str), group["question_id"].astype(str)])
        present = keys.isin(scored.index)
        if not present.any():
            continue
        kept = group[present]
        info = scored.loc[keys[present]]
        correct = kept["correct"].astype(bool).to_numpy()
        s = info["text_score"].to_numpy(dtype=float)
        r, p = pearson(s, correct.astype(float))
        rho, _ = spearman(s, correct.astype(float))
        tercile = info["tercile"].to_numpy()
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "condition": condition,
                "n": len(kept),
                "accuracy": correct.mean(),
                "r": r,
                "p": p,
                "rho": rho,
                **{f"acc_{t}": correct[tercile == t].mean() if (tercile == t).any() else np.nan for t in TERCILES},
            }
        )
    return pd.DataFrame(rows, columns=list(LINK_COLUMNS)) if rows else empty(LINK_COLUMNS)


@memo_by_frame
def vdg_by_shortcut(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """VDG per (model, benchmark, s(q) tercile); columns ``TERCILE_COLUMNS``."""
    scored = _scored(frame)
    if scored.empty:
        return empty(TERCILE_COLUMNS)
    rows = []
    for (model, benchmark), group in by_model_benchmark(frame):
        if not {"orig", "black"} <= set(group["condition"].unique()):
            continue
        table = paired(group, ["orig", "black"], options.missing)
        keys = pd.MultiIndex.from_arrays([np.full(len(table), str(benchmark)), table["question_id"].astype(str)])
        present = keys.isin(scored.index) & ~table["error"].to_numpy(dtype=bool)
        if not present.any():  # no score for this benchmark's questions
            continue
        tercile = np.full(len(table), "", dtype=object)
        s = np.full(len(table), np.nan)
        tercile[present] = scored.loc[keys[present], "tercile"].to_numpy()
        s[present] = scored.loc[keys[present], "text_score"].to_numpy()
        orig = table["correct_orig"].to_numpy(dtype=bool)
        black = table["correct_black"].to_numpy(dtype=bool)
        for name in TERCILES:
            kept = tercile == name
            n = int(kept.sum())
            gap = orig[kept].astype(int) - black[kept].astype(int)
            ci = ci_or_none(
                gap,
                options,
                ("vdg_by_shortcut", benchmark, name),
                table["question_id"].to_numpy()[kept],
                table["video_id"].to_numpy()[kept],
            )
            rows.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "tercile": name,
                    "s_min": s[kept].min() if n else np.nan,
                    "s_max": s[kept].max() if n else np.nan,
                    "n": n,
                    "acc_orig": orig[kept].mean() if n else np.nan,
                    "acc_black": black[kept].mean() if n else np.nan,
                    "vdg": gap.mean() if n else np.nan,
                    "ci_low": ci.low if ci else np.nan,
                    "ci_high": ci.high if ci else np.nan,
                    "too_small": n < options.min_stratum,
                    **conventions(TERCILE_COLUMNS, options, cis=[ci]),
                }
            )
    return pd.DataFrame(rows, columns=list(TERCILE_COLUMNS)) if rows else empty(TERCILE_COLUMNS)


def shortcut_types(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """The text-only answerers' accuracy per (benchmark, task type, answerer) from the scores the frame carries
    (``postprocess.shortcuts.type_summary``); empty without scores."""
    table = shortcut_table(frame)
    if table.empty:
        return empty(TYPE_COLUMNS)
    return type_summary(table, level=options.ci_level, alpha=options.alpha)


ANALYSES = (
    Analysis(
        "shortcut_types",
        "Text-only answerers (vdg shortcuts): accuracy per task type with its Wilson interval, chance level and a "
        "one-sided binomial test against chance.",
        TYPE_COLUMNS,
        shortcut_types,
    ),
    Analysis(
        "shortcut_links",
        "Each question's text-only score s(q) (vdg shortcuts) against each model's correctness under black, blind "
        "and orig: correlations and accuracy per s(q) tercile.",
        LINK_COLUMNS,
        shortcut_links,
    ),
    Analysis(
        "vdg_by_shortcut",
        "VDG per s(q) tercile (the text-only answerers' score), with paired bootstrap CIs.",
        TERCILE_COLUMNS,
        vdg_by_shortcut,
        shares=(vdg_by_shortcut,),
    ),
)
