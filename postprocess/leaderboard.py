"""One row per (model, benchmark): the numbers a leaderboard shows, read from the analysis tables.

Rendering only: every value is copied from a table (``vdg``, ``ladder``, ``coverage``,
``temporal_gap``); ``LEADERBOARD_COLUMNS`` declares the columns. Rows are sorted by VDG (largest
first; models without a VDG last), then model and benchmark.

Temporal-reasoning VDG (``temporal_vdg``): the VDG of the task type named exactly
``Temporal Reasoning`` in the ``vdg`` table (Video-MME's temporal category) when the benchmark has
it; otherwise, from the ``temporal_gap`` table (duration ``all``), accuracy on the temporal bucket at
orig minus at black (each condition on its own answered questions: not a matched pair, unlike the
vdg table); else empty. ``temporal_vdg_source`` says which.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from postprocess.analyses.coverage import UNPARSED_FLAG

#: A model whose Overall VDG is below this is flagged ``low-vdg``: its score barely needs the video.
LOW_VDG_FLAG = 0.10
#: The task type whose VDG is the temporal-reasoning VDG when a benchmark has it.
TEMPORAL_TASK_TYPE = "Temporal Reasoning"
#: Tables the leaderboard reads (``vdg leaderboard`` computes only these).
SOURCE_TABLES: tuple[str, ...] = ("coverage", "vdg", "ladder", "temporal_gap")
LADDER_DELTAS: tuple[str, ...] = ("spatial", "diversity", "temporal", "sampling")

LEADERBOARD_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "n": "questions compared for the VDG (vdg table, Overall row)",
    "acc_orig": "accuracy on the original video over those n questions",
    "acc_black": "accuracy on the black video over those n questions",
    "vdg": "Overall VDG = acc_orig - acc_black",
    "vdg_ci_low": "lower bound of the paired percentile bootstrap CI of vdg",
    "vdg_ci_high": "upper bound of the paired percentile bootstrap CI of vdg",
    "dc_ratio": "#(VDG = +1) / #(VDG = -1) (inf when no question has VDG = -1)",
    **{
        delta: f"ladder delta {delta} (ladder table, Overall row; empty when its rungs were not run)"
        for delta in LADDER_DELTAS
    },
    "temporal_vdg": f"VDG of the task type {TEMPORAL_TASK_TYPE!r} when present, else acc_temporal(orig) - "
    "acc_temporal(black) of the temporal_gap table (duration 'all'; unmatched question sets), else empty",
    "temporal_vdg_source": f"'task_type: {TEMPORAL_TASK_TYPE}', 'temporal_gap: acc_temporal orig - black' or ''",
    "flags": f"comma-separated: low-vdg (vdg < {LOW_VDG_FLAG:.2f}), no-vdg (no orig+black pair), "
    f"unparsed (some condition has more than {UNPARSED_FLAG:.0%} unparsed answers), errors (some condition has "
    "questions with no answer)",
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
    "ci_level": "confidence level of the CI",
    "n_resamples": "bootstrap resamples of the CI",
}


def _overall(table: pd.DataFrame | None) -> pd.DataFrame:
    if table is None or not len(table):
        return pd.DataFrame(columns=["model", "benchmark"])
    return table[table["task_type"] == "Overall"] if "task_type" in table.columns else table


def _index(table: pd.DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["model"], r["benchmark"]): r for r in table.to_dict("records")}


def _temporal_gap_value(table: pd.DataFrame | None, model: str, benchmark: str) -> float | None:
    """acc_temporal(orig) - acc_temporal(black) of a temporal_gap table (duration 'all'), or None."""
    needed = {"model", "benchmark", "condition", "acc_temporal"}
    if table is None or not len(table) or not needed <= set(table.columns):
        return None
    rows = table[(table["model"] == model) & (table["benchmark"] == benchmark)]
    if "duration" in rows.columns:
        rows = rows[rows["duration"].astype(str) == "all"]
    acc = pd.to_numeric(rows.set_index("condition")["acc_temporal"], errors="coerce")
    acc = acc[~acc.index.duplicated()]
    if not {"orig", "black"} <= set(acc.index) or acc[["orig", "black"]].isna().any():
        return None
    return float(acc["orig"] - acc["black"])


def leaderboard_table(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The leaderboard from analysis tables; exactly ``LEADERBOARD_COLUMNS``."""
    vdg_all = tables.get("vdg")
    vdg = _index(_overall(vdg_all))
    ladder = _index(_overall(tables.get("ladder")))
    coverage = tables.get("coverage")
    keys: set[tuple[str, str]] = set(vdg)
    if coverage is not None and len(coverage):
        keys |= set(zip(coverage["model"], coverage["benchmark"], strict=True))
    keys |= set(ladder)
    rows = []
    for model, benchmark in keys:
        v = vdg.get((model, benchmark), {})
        lad = ladder.get((model, benchmark), {})
        row: dict[str, Any] = {"model": model, "benchmark": benchmark}
        row["n"] = v.get("n", np.nan)
        row["acc_orig"] = v.get("acc_orig", np.nan)
        row["acc_black"] = v.get("acc_black", np.nan)
        row["vdg"] = v.get("vdg", np.nan)
        row["vdg_ci_low"] = v.get("ci_low", np.nan)
        row["vdg_ci_high"] = v.get("ci_high", np.nan)
        row["dc_ratio"] = v.get("dc_ratio", np.nan)
        for delta in LADDER_DELTAS:
            row[delta] = lad.get(delta, np.nan)
        row["temporal_vdg"], row["temporal_vdg_source"] = np.nan, ""
        if vdg_all is not None and len(vdg_all):
            hit = vdg_all[
                (vdg_all["model"] == model)
                & (vdg_all["benchmark"] == benchmark)
                & (vdg_all["task_type"] == TEMPORAL_TASK_TYPE)
            ]
            if len(hit) and pd.notna(hit["vdg"].iloc[0]):
                row["temporal_vdg"], row["temporal_vdg_source"] = hit["vdg"].iloc[0], f"task_type: {TEMPORAL_TASK_TYPE}"
        if not row["temporal_vdg_source"]:
            value = _temporal_gap_value(tables.get("temporal_gap"), model, benchmark)
            if value is not None:
                row["temporal_vdg"], row["temporal_vdg_source"] = value, "temporal_gap: acc_temporal orig - black"
        flags = []
        if not v or pd.isna(row["vdg"]):
            flags.append("no-vdg")
        elif row["vdg"] < LOW_VDG_FLAG:
            flags.append("low-vdg")
        if coverage is not None and len(coverage):
            cov = coverage[(coverage["model"] == model) & (coverage["benchmark"] == benchmark)]
            if (pd.to_numeric(cov["unparsed_rate"], errors="coerce") > UNPARSED_FLAG).any():
                flags.append("unparsed")
            if (pd.to_numeric(cov["n_error"], errors="coerce") > 0).any():
                flags.append("errors")
        row["flags"] = ",".join(flags)
        row["missing_policy"] = v.get("missing_policy", lad.get("missing_policy", ""))
        row["ci_level"] = v.get("ci_level", np.nan)
        row["n_resamples"] = v.get("n_resamples", np.nan)
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(LEADERBOARD_COLUMNS))
    if not len(table):
        return table
    table = table.assign(_missing=table["vdg"].isna(), _neg=-pd.to_numeric(table["vdg"], errors="coerce"))
    table = table.sort_values(["_missing", "_neg", "model", "benchmark"], kind="mergesort")
    return table.drop(columns=["_missing", "_neg"]).reset_index(drop=True)


def render_leaderboard_markdown(table: pd.DataFrame) -> str:
    from postprocess.report import conventions, markdown_table

    sentence, varying = conventions(table)
    shown = [c for c in table.columns if c not in ("missing_policy", "ci_level", "n_resamples") or c in varying]
    head = (
        "VDG = acc(orig) - acc(black) on the questions both arms answered (Overall); CI: paired percentile "
        f"bootstrap. Flags: low-vdg below {LOW_VDG_FLAG:.2f}; unparsed above {UNPARSED_FLAG:.0%} in some condition; "
        "errors when some question has no answer."
    )
    return "\n".join(
        ["# vdg leaderboard", "", " ".join(s for s in (head, sentence) if s), "", markdown_table(table, shown), ""]
    )


def write_leaderboard(table: pd.DataFrame, path: Path) -> Path:
    """Write by extension: ``.md`` (markdown), ``.csv`` or ``.json`` (a list of rows; NaN null, inf "inf")."""
    from postprocess.report import json_value, table_records

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".md", ".csv", ".json"):
        raise ValueError(
            f"--out {path}: the leaderboard is written as .md, .csv or .json, not {suffix or 'no suffix'!r}"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".md":
        path.write_text(render_leaderboard_markdown(table))
    elif suffix == ".csv":
        table.to_csv(path, index=False)
    else:
        payload = {"columns": json_value(dict(LEADERBOARD_COLUMNS)), "rows": table_records(table)}
        path.write_text(json.dumps(payload, indent=1, allow_nan=False) + "\n")
    return path
