"""The report's first screen in words: per model and benchmark, one sentence per finding, each with its number.

Every sentence restates values of one row of another table (``source_table``, the row picked by
``source_row``, the headline value in ``source_column``); nothing here computes a statistic. Topics, in
report order, each only where its table has the row:

- ``video``: the Overall VDG (``vdg``): accuracy with the video and with the black screen, the gap and
  its paired CI.
- ``task_types``: the most and the least visual task type (largest and smallest VDG among those with a
  CI) and whether they differ by Welch's test, Holm-adjusted over every pair (``task_type_contrast``);
  without a significant difference the sentence says that no pair differs.
- ``temporal``: what temporal order adds (``ladder``'s Overall ``temporal`` with its CI).
- ``compression``: the strongest CRF level (``crf``): its accuracy with the Wilson CI against orig's,
  and how many answers change correctness there (``crf_flips``), which a flat accuracy can hide.
- ``letters``: the most chosen letter with the video and the chi-square test against uniform
  guessing among each question's options (``letters``, the orig row).

Percentages are of questions; "points" are percentage points (a difference of two accuracies).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from postprocess.analyses._paired import OVERALL
from postprocess.analyses.base import Digest, Options, empty, skip_reason

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "topic": "video, task_types, temporal, compression or letters",
    "sentence": "the finding in words, with its numbers",
    "value": "the headline number of the sentence (a proportion or a difference of proportions)",
    "ci_low": "lower bound of its CI, as in the source table (empty where the source has none)",
    "ci_high": "upper bound of its CI",
    "source_table": "the table the numbers come from",
    "source_row": "the row of source_table, as column=value pairs joined by ', '",
    "source_column": "the column of that row holding value",
}

TOPICS: tuple[str, ...] = ("video", "task_types", "temporal", "compression", "letters")


def points(value: float) -> str:
    """A difference of proportions in signed percentage points: 0.123 -> '+12.3'."""
    return f"{100 * value:+.1f}"


def percent(value: float) -> str:
    """A proportion as a percentage: 0.5 -> '50.0%'."""
    return f"{100 * value:.1f}%"


def _ci_points(row: Mapping, low: str = "ci_low", high: str = "ci_high", level: float = 0.95) -> str:
    if pd.isna(row.get(low)) or pd.isna(row.get(high)):
        return "no CI: fewer questions than min_stratum"
    return f"{level:.0%} CI {points(row[low])} to {points(row[high])}"


def _usable(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame | None:
    table = tables.get(name)
    if table is None or not len(table) or skip_reason(table) is not None:
        return None
    return table


def _finding(
    run: tuple[str, str],
    topic: str,
    sentence: str,
    row: Mapping,
    table: str,
    where: Mapping,
    column: str,
    ci: tuple[str, str] | None = ("ci_low", "ci_high"),
) -> dict[str, object]:
    return {
        "model": run[0],
        "benchmark": run[1],
        "topic": topic,
        "sentence": sentence,
        "value": float(row[column]),
        "ci_low": float(row[ci[0]]) if ci and pd.notna(row.get(ci[0])) else np.nan,
        "ci_high": float(row[ci[1]]) if ci and pd.notna(row.get(ci[1])) else np.nan,
        "source_table": table,
        "source_row": ", ".join(f"{k}={v}" for k, v in where.items()),
        "source_column": column,
    }


def _row(table: pd.DataFrame | None, run: tuple[str, str], **where: object) -> Mapping | None:
    if table is None:
        return None
    mask = (table["model"] == run[0]) & (table["benchmark"] == run[1])
    for column, value in where.items():
        mask &= table[column] == value
    rows = table[mask]
    return rows.iloc[0].to_dict() if len(rows) else None


def _video(tables, run, level) -> list[dict]:
    row = _row(_usable(tables, "vdg"), run, task_type=OVERALL)
    if row is None or pd.isna(row["vdg"]):
        return []
    sentence = (
        f"{percent(row['acc_orig'])} right with the video and {percent(row['acc_black'])} with a black screen: "
        f"{points(row['vdg'])} points of accuracy need the video ({_ci_points(row, level=level)}; "
        f"n = {int(row['n'])} questions)."
    )
    return [_finding(run, "video", sentence, row, "vdg", {"task_type": OVERALL}, "vdg")]


def _task_types(tables, run, level) -> list[dict]:
    contrast = _usable(tables, "task_type_contrast")
    if contrast is None:
        return []
    pairs = contrast[(contrast["model"] == run[0]) & (contrast["benchmark"] == run[1])]
    if not len(pairs):
        return []
    widest = pairs.loc[pairs["diff"].idxmax()].to_dict()
    reliable = pairs[pairs["significant"].astype(bool)]
    if widest["significant"]:
        row, sentence = widest, f"Most and least visual task types: {_pair_text(widest, level)}."
    elif len(
        reliable
    ):  # a narrower pair with more questions (or less spread) can survive Holm where the widest does not
        row = reliable.loc[reliable["diff"].idxmax()].to_dict()
        sentence = (
            f"The widest pair of task types does not differ reliably in VDG, but {len(reliable)} of "
            f"{int(row['n_family'])} pairs do; the widest of those: {_pair_text(row, level)}."
        )
    else:
        row = widest
        sentence = (
            f"No two task types differ reliably in VDG: even the widest pair, {_pair_text(widest, level)}, "
            "is not significant."
        )
    where = {"task_type_a": row["task_type_a"], "task_type_b": row["task_type_b"]}
    return [_finding(run, "task_types", sentence, row, "task_type_contrast", where, "diff")]


def _pair_text(row: dict, level: float) -> str:
    p = f"Holm-adjusted p = {row['p_holm']:.2g} over {int(row['n_family'])} pairs"
    return (
        f"{row['task_type_a']} (VDG {points(row['vdg_a'])}) and {row['task_type_b']} "
        f"(VDG {points(row['vdg_b'])}) differ by {points(row['diff'])} points "
        f"({_ci_points(row, level=level)}; {p})"
    )


def _temporal(tables, run, level) -> list[dict]:
    row = _row(_usable(tables, "ladder"), run, task_type=OVERALL)
    if row is None or pd.isna(row.get("temporal")):
        return []
    sentence = (
        f"Temporal order adds {points(row['temporal'])} points ({row['temporal_definition']}; "
        f"{_ci_points(row, 'temporal_ci_low', 'temporal_ci_high', level)}; n = {int(row['n'])} questions)."
    )
    return [
        _finding(
            run,
            "temporal",
            sentence,
            row,
            "ladder",
            {"task_type": OVERALL},
            "temporal",
            ("temporal_ci_low", "temporal_ci_high"),
        )
    ]


def _compression(tables, run, level) -> list[dict]:
    crf, flips = _usable(tables, "crf"), _usable(tables, "crf_flips")
    if crf is None or flips is None:
        return []
    mine = crf[(crf["model"] == run[0]) & (crf["benchmark"] == run[1]) & (crf["task_type"] == OVERALL)]
    levels = mine[mine["crf"] > 0]
    if not len(levels):
        return []
    strongest = levels.loc[levels["crf"].idxmax()].to_dict()
    orig = _row(crf, run, task_type=OVERALL, condition="orig")
    flip = _row(flips, run, task_type=OVERALL, condition=strongest["condition"])
    if orig is None or flip is None or not flip["n"]:
        return []
    changed = int(flip["c_to_i"]) + int(flip["i_to_c"])
    ci = (
        "no interval: fewer questions than min_stratum"
        if pd.isna(strongest["ci_low"])
        else f"{level:.0%} CI {percent(strongest['ci_low'])} to {percent(strongest['ci_high'])}"
    )
    sentence = (
        f"At CRF {int(strongest['crf'])} accuracy is {percent(strongest['acc'])} ({ci}) against "
        f"{percent(orig['acc'])} with the original video ({points(strongest['delta'])} points), while "
        f"{changed} of {int(flip['n'])} questions ({percent(changed / flip['n'])}) change correctness "
        f"({int(flip['c_to_i'])} right to wrong, {int(flip['i_to_c'])} wrong to right)."
    )
    where = {"task_type": OVERALL, "condition": strongest["condition"]}
    return [_finding(run, "compression", sentence, strongest, "crf", where, "acc")]


def _letters(tables, run, level) -> list[dict]:
    row = _row(_usable(tables, "letters"), run, condition="orig")
    if row is None or not row.get("n_letter") or not isinstance(row.get("top_pred"), str) or not row["top_pred"]:
        return []
    p = row["p_pred"]
    test = f"chi-square against uniform guessing p = {p:.2g}" if not math.isnan(p) else "no chi-square test"
    sentence = (
        f"With the video the most chosen letter is {row['top_pred']}, in {percent(row['top_pred_share'])} of "
        f"{int(row['n_letter'])} answers ({int(row['n_options'])} options; {test})."
    )
    return [_finding(run, "letters", sentence, row, "letters", {"condition": "orig"}, "top_pred_share", None)]


_WRITERS = (_video, _task_types, _temporal, _compression, _letters)


def findings_table(
    tables: Mapping[str, pd.DataFrame], frame: pd.DataFrame, options: Options = Options()
) -> pd.DataFrame:
    """One row per finding, per (model, benchmark) in name order and topic order; columns as in ``COLUMNS``."""
    if frame.empty:
        return empty(COLUMNS)
    runs = sorted(
        {(str(m), str(b)) for m, b in frame[["model", "benchmark"]].drop_duplicates().itertuples(index=False)}
    )
    rows = [row for run in runs for write in _WRITERS for row in write(tables, run, options.ci_level)]
    return pd.DataFrame(rows, columns=list(COLUMNS)) if rows else empty(COLUMNS)


DIGESTS = (
    Digest(
        "findings",
        "The report's first screen in words: per model, how much of the accuracy needs the video, the most and "
        "least visual task types, what temporal order adds, what compression changes, letter bias; every number "
        "taken from the table and row the sentence names.",
        COLUMNS,
        findings_table,
    ),
)
