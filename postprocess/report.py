"""Tables -> files. Rendering only: every number comes from an analysis."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from postprocess.analyses.coverage import UNPARSED_FLAG


def _fmt(table: pd.DataFrame, columns: list[str]) -> str:
    shown = table[[c for c in columns if c in table.columns]].copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            pattern = "{:+.3f}" if col in _SIGNED else "{:.3f}"
            shown[col] = shown[col].map(lambda v, p=pattern: "" if pd.isna(v) else p.format(v))
    return shown.to_markdown(index=False)


_SIGNED = {"vdg", "ci_low", "ci_high", "spatial", "diversity", "temporal", "sampling"}


def render_markdown(tables: Mapping[str, pd.DataFrame]) -> str:
    parts = ["# vdg report", ""]
    if len(tables.get("vdg", ())):
        vdg = tables["vdg"]
        level = vdg["ci_level"].iloc[0] if len(vdg) else 0.95
        parts += [
            "## Visual Dependency Gap by task type",
            "",
            f"VDG = correct(orig) - correct(black), per question; CI: paired percentile bootstrap "
            f"({int(vdg['n_resamples'].iloc[0]) if len(vdg) else 0} resamples, {level:.0%}); "
            f"questions with an error in either arm: {vdg['missing_policy'].iloc[0] if len(vdg) else ''}d. "
            "d / c: questions right only with / only without the video.",
            "",
            _fmt(
                vdg,
                [
                    "model",
                    "benchmark",
                    "task_type",
                    "n",
                    "acc_orig",
                    "acc_black",
                    "vdg",
                    "ci_low",
                    "ci_high",
                    "d",
                    "c",
                    "n_error",
                    "n_unparsed",
                ],
            ),
            "",
        ]
    if len(tables.get("ladder", ())):
        parts += [
            "## Ladder",
            "",
            "Accuracy at each rung on the questions answered under all of them; spatial = single - black, "
            "diversity = shuffled - single, temporal = ordered - shuffled, sampling = orig - ordered.",
            "",
            _fmt(
                tables["ladder"],
                [
                    "model",
                    "benchmark",
                    "task_type",
                    "n",
                    "acc_black",
                    "acc_single",
                    "acc_shuffled",
                    "acc_ordered",
                    "acc_orig",
                    "spatial",
                    "diversity",
                    "temporal",
                    "sampling",
                ],
            ),
            "",
        ]
    cov = tables["coverage"]
    parts += [
        "## Coverage",
        "",
        f"Unparsed answers are scored wrong; above {UNPARSED_FLAG:.0%} a run measures format compliance, not "
        "comprehension. Errors (missing or undecodable videos) are never scored.",
        "",
        _fmt(cov, list(cov.columns)),
        "",
    ]
    flagged = cov[cov["flag"] != ""]
    if len(flagged):
        parts += [
            "**Flags:** "
            + "; ".join(
                f"{r.model} / {r.condition}: {r.flag} ({r.n_unparsed} unparsed, {r.n_error} errors)"
                for r in flagged.itertuples()
            ),
            "",
        ]
    return "\n".join(parts)


def write_report(tables: Mapping[str, pd.DataFrame], out: Path) -> str:
    out.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        table.to_csv(out / f"{name}.csv", index=False)
    markdown = render_markdown(tables)
    (out / "report.md").write_text(markdown)
    return markdown
