"""One row per (model, benchmark): the numbers a leaderboard shows, read from the analysis tables.

Rendering only: every value is copied from a table (``vdg``, ``ladder``, ``coverage``,
``temporal_gap``); ``LEADERBOARD_COLUMNS`` declares the columns. Rows are sorted by VDG (largest
first; models without a VDG last), then model and benchmark.

Temporal-reasoning VDG (``temporal_vdg``): the VDG of the task type named exactly
``Temporal Reasoning`` in the ``vdg`` table (Video-MME's temporal category) when the benchmark has
it; otherwise, from the ``temporal_gap`` table (duration ``all``), accuracy on the temporal bucket at
orig minus at black (each condition on its own answered questions: not a matched pair, unlike the
vdg table); else empty. ``temporal_vdg_source`` says which.

Multi-modal leakage (``leakage``): the ``leakage`` table's Overall row of the model (the LVLM with no visual input
minus its language backbone on the same prompts); a model that serves as another's backbone there is flagged
``backbone`` instead of ``no-vdg`` (it ran only the blind tasks: it is not an LVLM lacking orig and black).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from postprocess.analyses.coverage import UNPARSED_FLAG
from postprocess.analyses.leakage import backbone_labels
from postprocess.rendering.formatting import (
    conventions,
    drop_blank_columns,
    format_table,
    is_text,
    markdown_table,
    merge_intervals,
)
from postprocess.rendering.pages import json_value, table_records
from postprocess.settings import natural_key

#: A model whose Overall VDG is below this is flagged ``low-vdg``: its score barely needs the video.
LOW_VDG_FLAG = 0.10
#: The task type whose VDG is the temporal-reasoning VDG when a benchmark has it.
TEMPORAL_TASK_TYPE = "Temporal Reasoning"
#: Tables the leaderboard reads (``vdg leaderboard`` computes only these).
SOURCE_TABLES: tuple[str, ...] = ("coverage", "vdg", "ladder", "temporal_gap", "leakage")
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
    "leakage": "multi-modal leakage: accuracy with no visual input minus the model's language backbone's on the same "
    "prompts (leakage table, Overall row: its backbone, CI and MMStar's max(0, .) are there); empty without a "
    "backbone run",
    "flags": f"comma-separated: low-vdg (vdg < {LOW_VDG_FLAG:.2f}), no-vdg (no orig+black pair), backbone (the run "
    "is another model's language backbone in the leakage table: no-vdg is not said), "
    f"unparsed (some condition has more than {UNPARSED_FLAG:.0%} unparsed answers), errors (some condition has "
    "questions with no answer)",
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
    "ci_level": "confidence level of the CI",
    "n_resamples": "bootstrap resamples of the CI",
}


#: Columns holding counts: written as integers (empty when unknown).
COUNT_COLUMNS: tuple[str, ...] = ("n", "n_resamples")


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
    leakage = _index(_overall(tables.get("leakage")))
    backbones = backbone_labels(tables.get("leakage"))
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
        row["leakage"] = leakage.get((model, benchmark), {}).get("leakage", np.nan)
        flags = []
        if model in backbones and (not v or pd.isna(row["vdg"])):
            flags.append("backbone")
        elif not v or pd.isna(row["vdg"]):
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
    for column in COUNT_COLUMNS:  # counts stay integers (300, not 300.0) in the CSV, markdown and JSON
        table[column] = pd.to_numeric(table[column], errors="coerce").round().astype("Int64")
    if not len(table):
        return table
    table = table.assign(_missing=table["vdg"].isna(), _neg=-pd.to_numeric(table["vdg"], errors="coerce"))
    table = table.sort_values(["benchmark"], kind="mergesort", key=lambda c: c.map(natural_key))
    table = table.sort_values("model", kind="mergesort", key=lambda c: c.map(natural_key))
    table = table.sort_values(["_missing", "_neg"], kind="mergesort")  # ties in natural label order (m@8f, m@16f)
    return table.drop(columns=["_missing", "_neg"]).reset_index(drop=True)


def render_leaderboard_markdown(table: pd.DataFrame) -> str:
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


def _output(path: Path) -> tuple[Path, str]:
    """(path, its suffix) of a leaderboard file, its folder made; refused unless .md, .csv or .json."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".md", ".csv", ".json"):
        raise ValueError(
            f"--out {path}: the leaderboard is written as .md, .csv or .json, not {suffix or 'no suffix'!r}"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    return path, suffix


def write_leaderboard(table: pd.DataFrame, path: Path) -> Path:
    """Write by extension: ``.md`` (markdown), ``.csv`` or ``.json`` (a list of rows; NaN null, inf "inf")."""
    path, suffix = _output(path)
    if suffix == ".md":
        path.write_text(render_leaderboard_markdown(table))
    elif suffix == ".csv":
        table.to_csv(path, index=False)
    else:
        payload = {"columns": json_value(dict(LEADERBOARD_COLUMNS)), "rows": table_records(table)}
        path.write_text(json.dumps(payload, indent=1, allow_nan=False) + "\n")
    return path


# ----------------------------------------------------------------------------------------- merge
#
# ``vdg leaderboard ... --merge THEIRS --on COLUMN [--map names.csv]``: vdg's columns added to a table
# a maintainer already has (one row per model, their own model names).

#: Header of a ``--map`` file: their model name, then vdg's model label.
NAME_MAP_HEADER: tuple[str, str] = ("their_name", "vdg_model")
#: Header of a dataset map (``vdg leaderboard --openvlm``): their dataset name, then vdg's benchmark.
DATASET_MAP_HEADER: tuple[str, str] = ("their_dataset", "vdg_benchmark")
#: Prefix of a vdg column whose name their table already uses (repeated until the name is free).
MERGE_PREFIX = "vdg_"


class MergeError(ValueError):
    """A merge refused; ``source`` says whose data is at fault: ``theirs``, ``names`` or ``ours``."""

    def __init__(self, message: str, source: str) -> None:
        super().__init__(message)
        self.source = source


def merge_columns(ours: pd.DataFrame) -> list[str]:
    """vdg columns a merge adds: every leaderboard column (``LEADERBOARD_COLUMNS``, in that order).

    All of them, ``model`` (vdg's label, which differs from theirs under ``--map``) and the
    conventions (``missing_policy``, ``ci_level``, ``n_resamples``: what the CI means) included.
    """
    return list(ours.columns)


def _name(value: Any) -> str | None:
    """A model name as matched: the text, stripped; None when empty or missing."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    text = str(value).strip()
    return text or None


def _duplicates(values: list[str | None]) -> list[str]:
    seen: set[str] = set()
    dup: list[str] = []
    for v in values:
        if v is not None and v in seen and v not in dup:
            dup.append(v)
        if v is not None:
            seen.add(v)
    return dup


def merge_leaderboard(
    theirs: pd.DataFrame, ours: pd.DataFrame, on: str, names: Mapping[str, str] | None = None
) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Their table with vdg's leaderboard columns added: (merged, unmatched_theirs, unmatched_ours).

    Every row and column of ``theirs`` is kept, in its order (index too); vdg's columns
    (``merge_columns``) follow, each renamed ``vdg_<name>`` while the name is taken. A row matches
    the vdg model whose label equals its ``on`` cell (stripped, case-sensitive) or, when ``names``
    maps that cell, the mapped label. A row without vdg data gets empty vdg cells.

    unmatched_theirs: their names (``row N: empty`` for a blank cell) of rows with no vdg data, in
    their order; unmatched_ours: vdg labels no row matched, in leaderboard order. ``merged.attrs
    ["vdg_columns"]`` maps each vdg column to its name in ``merged``.

    Raises ``MergeError`` when ``on`` is not a column of theirs, a name is in theirs twice, two of
    their rows reach one vdg label, or vdg has several rows of one model (several benchmarks).
    """
    if on not in theirs.columns:
        shown = ", ".join(repr(str(c)) for c in theirs.columns) or "none"
        raise MergeError(f"no column {on!r} to match on (columns: {shown})", "theirs")
    labels = [_name(v) for v in theirs[on].tolist()]
    dup = _duplicates(labels)
    if dup:
        raise MergeError(f"column {on!r} names {', '.join(map(repr, dup))} in more than one row", "theirs")
    ours_labels = [str(m) for m in ours["model"].tolist()]
    dup = _duplicates(ours_labels)
    if dup:
        raise MergeError(
            f"vdg has several rows (benchmarks) for model {', '.join(map(repr, dup))}: merge one benchmark at a time",
            "ours",
        )
    names = {str(k): str(v) for k, v in (names or {}).items()}
    targets = [names.get(label, label) if label is not None else None for label in labels]
    for target in _duplicates(targets):
        rows = [repr(label) for label, t in zip(labels, targets, strict=True) if t == target]
        raise MergeError(f"rows {' and '.join(rows)} of column {on!r} both name vdg model {target!r}", "names")

    columns = merge_columns(ours)
    taken = {str(c) for c in theirs.columns}
    rename: dict[str, str] = {}
    for column in columns:
        new = column
        while new in taken:
            new = MERGE_PREFIX + new
        rename[column] = new
        taken.add(new)
    block = ours[columns].set_axis(pd.Index(ours_labels, dtype=object)).reindex(pd.Index(targets, dtype=object))
    block = block.set_axis(theirs.index).rename(columns=rename)
    merged = pd.concat([theirs, block], axis=1)
    merged.attrs["vdg_columns"] = rename

    known = set(ours_labels)
    unmatched_theirs = [
        label if label is not None else f"row {i + 1}: empty"
        for i, (label, target) in enumerate(zip(labels, targets, strict=True))
        if target not in known
    ]
    reached = set(targets)
    unmatched_ours = [m for m in ours_labels if m not in reached]
    return merged, unmatched_theirs, unmatched_ours


def read_their_table(path: Path) -> pd.DataFrame:
    """A maintainer's table, every cell as written.

    ``.csv``: a header row, cells read as text (nothing converted: an empty cell stays empty).
    ``.json``: a list of records (``[{column: value}]``, pandas ``orient="records"``), pandas
    ``orient="split"`` (``{"columns": [...], "data": [[...]]}``, ``index`` ignored) or vdg's own
    leaderboard JSON (``{"rows": [{column: value}]}``); columns in first-seen order, values as in
    the JSON (a key a record lacks is null).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise ValueError(f"{path}: a table to merge is .csv or .json, not {suffix or 'no suffix'!r}")
    try:
        if suffix == ".csv":
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError) as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("columns"), list) and isinstance(data.get("data"), list):
        columns = [str(c) for c in data["columns"]]
        rows = data["data"]
        bad = [i for i, r in enumerate(rows) if not isinstance(r, list) or len(r) != len(columns)]
        if bad:
            raise ValueError(f"{path}: data row {bad[0] + 1} is not a list of {len(columns)} values")
        return pd.DataFrame({c: pd.Series([r[j] for r in rows], dtype=object) for j, c in enumerate(columns)})
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        data = data["rows"]
    if not isinstance(data, list):
        raise ValueError(
            f"{path}: expected a list of records, {{'columns': [...], 'data': [[...]]}} or {{'rows': [...]}}"
        )
    bad = [i for i, r in enumerate(data) if not isinstance(r, dict)]
    if bad:
        raise ValueError(f"{path}: record {bad[0] + 1} is not an object")
    columns = list(dict.fromkeys(k for record in data for k in record))
    return pd.DataFrame({c: pd.Series([r.get(c) for r in data], dtype=object) for c in columns}, columns=columns)


def read_name_map(path: Path, header: tuple[str, str] = NAME_MAP_HEADER) -> dict[str, str]:
    """A ``--map`` CSV: header ``their_name,vdg_model`` (other columns ignored), one model a row; ``header``
    names other columns (``DATASET_MAP_HEADER``: their dataset names -> vdg's benchmarks)."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            found = [str(h).strip() for h in reader.fieldnames or []]
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    theirs_key, ours_key = header
    if not {theirs_key, ours_key} <= set(found):
        raise ValueError(f"{path}: the header must name {theirs_key},{ours_key}; found {','.join(found) or 'none'}")
    out: dict[str, str] = {}
    vdg_seen: dict[str, str] = {}
    for line, row in enumerate(rows, start=2):
        row = {str(k).strip(): v for k, v in row.items() if k is not None}
        name, label = _name(row.get(theirs_key)), _name(row.get(ours_key))
        if name is None and label is None:
            continue
        if name is None or label is None:
            raise ValueError(f"{path}: line {line} lacks its {theirs_key if name is None else ours_key}")
        if name in out:
            raise ValueError(f"{path}: duplicate {theirs_key} {name!r} (line {line})")
        if label in vdg_seen:
            raise ValueError(f"{path}: duplicate {ours_key} {label!r} (line {line}; also for {vdg_seen[label]!r})")
        out[name] = label
        vdg_seen[label] = name
    return out


def _their_cell(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value)


def render_merged_markdown(
    merged: pd.DataFrame, unmatched_theirs: Sequence[str] = (), unmatched_ours: Sequence[str] = ()
) -> str:
    """Their columns as written, then vdg's formatted as in the leaderboard (VDG with its CI in one cell)."""
    rename: dict[str, str] = merged.attrs.get("vdg_columns", {})
    ours = merged[list(rename.values())].set_axis(list(rename), axis=1)
    sentence, varying = conventions(ours)
    hidden = {"missing_policy", "ci_level", "n_resamples"} - set(varying)
    shown_ours = drop_blank_columns(
        merge_intervals(format_table(ours, [c for c in ours.columns if c not in hidden]), ours)
    )
    back = {c: rename[c.partition(" [")[0]] + c[len(c.partition(" [")[0]) :] for c in shown_ours.columns}
    align_ours = ["left" if is_text(ours, c.partition(" [")[0]) else "right" for c in shown_ours.columns]
    shown_ours = shown_ours.rename(columns=back).set_axis(range(len(merged)))
    their_columns = [c for c in merged.columns if c not in set(rename.values())]
    shown = pd.DataFrame(
        {str(c): [_their_cell(v) for v in merged[c].tolist()] for c in their_columns}, index=range(len(merged))
    )
    shown = pd.concat([shown, shown_ours], axis=1)
    align = ["left"] * len(their_columns) + align_ours
    head = (
        "vdg columns (after the table's own): VDG = acc(orig) - acc(black) on the questions both arms answered "
        f"(Overall); CI: paired percentile bootstrap. Flags: low-vdg below {LOW_VDG_FLAG:.2f}; unparsed above "
        f"{UNPARSED_FLAG:.0%} in some condition; errors when some question has no answer."
    )
    lines = ["# vdg leaderboard (merged)", "", " ".join(s for s in (head, sentence) if s), ""]
    lines.append(shown.to_markdown(index=False, disable_numparse=True, colalign=align) if len(shown.columns) else "")
    if unmatched_theirs:
        lines += ["", "No vdg data for: " + ", ".join(unmatched_theirs) + "."]
    if unmatched_ours:
        lines += ["", "vdg models not in the table: " + ", ".join(unmatched_ours) + "."]
    return "\n".join([*lines, ""])


def write_merged_leaderboard(
    merged: pd.DataFrame,
    path: Path,
    unmatched_theirs: Sequence[str] = (),
    unmatched_ours: Sequence[str] = (),
    on: str | None = None,
) -> Path:
    """Write a merged table by extension: ``.md``, ``.csv`` (their cells as read, vdg's as in the
    leaderboard CSV) or ``.json`` (``{"on", "columns": {vdg column: description}, "unmatched":
    {"theirs": [...], "vdg": [...]}, "rows": [{column: value}]}``; NaN null, inf "inf")."""
    path, suffix = _output(path)
    if suffix == ".md":
        path.write_text(render_merged_markdown(merged, list(unmatched_theirs), list(unmatched_ours)))
    elif suffix == ".csv":
        merged.to_csv(path, index=False)
    else:
        rename = merged.attrs.get("vdg_columns", {})
        payload = {
            "on": on,
            "columns": json_value({new: LEADERBOARD_COLUMNS.get(old, "") for old, new in rename.items()}),
            "unmatched": {"theirs": list(unmatched_theirs), "vdg": list(unmatched_ours)},
            "rows": table_records(merged),
        }
        path.write_text(json.dumps(payload, indent=1, allow_nan=False) + "\n")
    return path
