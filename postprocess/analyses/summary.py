"""The first screen: per model, the overall VDG with its CI, its tier, and every flag.

A run whose black arm is unparsed throughout has VDG = 0 - 0 = +0.000; this table puts that number
next to the flag that says it measures nothing. Flags (``flags``, comma-separated, in this order;
``details`` says each in words):

- ``backbone``: the run is another model's language backbone in the ``leakage`` table: a text model that ran only
  the blind tasks, so neither ``no-vdg`` nor ``missing-conditions`` is said of it
- ``no-vdg``: no VDG (orig or black not run, or the vdg table was skipped)
- ``all-unparsed``: some condition's answers are all unparsed (no readable letter among the options)
- ``unparsed``: some other condition has more than ``coverage.UNPARSED_FLAG`` unparsed answers
- ``errors``: some question has no answer (missing or undecodable video)
- ``missing-conditions``: orig or black not run (what other models ran is theirs: a model's row never
  depends on which other models are in the report)
- ``left-out``: some table leaves the model out (the ``skipped`` table says which and why)

``headline_flags`` keeps those that concern the VDG itself: a flag of orig or black (``all-unparsed``,
``unparsed``, ``errors`` there), ``no-vdg`` and ``missing-conditions``. The first screen counts only these: a probe
condition whose answers are all unparsed is flagged in its own row (``coverage``) and here, not on the VDG.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from postprocess.analyses._paired import OVERALL, condition_sort_key, ordered_conditions
from postprocess.analyses.base import Digest, ReportSettings, empty, skip_reason
from postprocess.analyses.coverage import UNPARSED_FLAG, coverage_table
from postprocess.analyses.leakage import backbone_labels
from postprocess.analyses.skipped import conditions_run
from postprocess.analyses.vdg import ARMS as VDG_ARMS
from postprocess.analyses.vdg import CI_COLUMNS, conventions

FLAGS: tuple[str, ...] = ("backbone", "no-vdg", "all-unparsed", "unparsed", "errors", "missing-conditions", "left-out")

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "conditions": "conditions the model ran, in declared order, joined by ','",
    "n": "questions compared for the VDG (vdg table, Overall row); empty without a VDG",
    "acc_orig": "accuracy on orig over those n questions",
    "acc_black": "accuracy on black over those n questions",
    "vdg": "Overall VDG = acc_orig - acc_black (vdg table); empty without one",
    "ci_low": "lower bound of its paired CI (the vdg table's; ci_method says how it was computed)",
    "ci_high": "upper bound of that CI",
    "tier": "tier of the Overall VDG (tiers table): high, mid or low, decided by its CI (a CI across a threshold "
    "names both tiers), 'too small' below min_stratum questions; empty without a VDG",
    "flags": f"comma-separated, in this order: {', '.join(FLAGS)} (see details; empty when none)",
    "headline_flags": "the flags that concern the VDG (of orig or black, no-vdg, missing-conditions): what the first "
    "screen counts",
    "details": "each flag in words, joined by '; ' (which conditions, how many answers, which tables)",
    "ci_level": "confidence level of the CI",
    "ci_method": "the vdg table's ci_method of that row: " + CI_COLUMNS["ci_method"].split(": ", 1)[-1],
    "n_resamples": "the vdg table's n_resamples of that row: bootstrap resamples the CI drew (0 when none was "
    "resampled, or without a CI)",
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
}


def _by_run(table: pd.DataFrame | None, **match: str) -> dict[tuple[str, str], pd.DataFrame]:
    """The rows of ``table`` matching ``match``, per (model, benchmark), in table order (none for a table without
    rows or a model column)."""
    if table is None or not len(table) or "model" not in table.columns:
        return {}
    for column, value in match.items():
        table = table[table[column] == value]
    return {(str(m), str(b)): rows for (m, b), rows in table.groupby(["model", "benchmark"], sort=False)}


def _first_row(rows: pd.DataFrame | None) -> dict[str, Any]:
    return rows.iloc[0].to_dict() if rows is not None and len(rows) else {}


def _count(value: Any) -> int:
    """A count of the vdg row (``n_resamples``), 0 where there is none."""
    return int(value) if value is not None and pd.notna(value) else 0


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _coverage_flags(cov: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The coverage flags of one run from its coverage rows (a dozen: read as records, not through pandas)."""
    flags: list[str] = []
    details: list[str] = []
    rates = pd.to_numeric(cov["unparsed_rate"], errors="coerce").tolist()
    rows = [
        {**row, "answered": row["n_ok"] + row["n_unparsed"], "rate": rate}
        for row, rate in zip(cov.to_dict("records"), rates, strict=True)
    ]
    rows.sort(key=lambda row: condition_sort_key(str(row["condition"])))
    all_unparsed = [r for r in rows if r["answered"] > 0 and r["n_ok"] == 0]
    if all_unparsed:
        flags.append("all-unparsed")
        details += [
            f"{r['condition']}: all {int(r['n_unparsed'])} answers unparsed (no letter among the options), so its "
            "accuracy measures format compliance, not the video"
            for r in all_unparsed
        ]
    high = [r for r in rows if r["rate"] > UNPARSED_FLAG and r["n_ok"] > 0]
    if high:
        flags.append("unparsed")
        details.append(
            f"unparsed above {UNPARSED_FLAG:.0%} in "
            + ", ".join(
                f"{r['condition']} ({_pct(r['unparsed_rate'])}, {int(r['n_unparsed'])} of {int(r['answered'])})"
                for r in high
            )
        )
    failed = [r for r in rows if r["n_error"] > 0]
    if failed:
        flags.append("errors")
        details.append(
            "questions with no answer: "
            + ", ".join(
                f"{r['condition']} {int(r['n_error'])}" + (" (all)" if r["answered"] == 0 else "") for r in failed
            )
        )
    return flags, details


def summary_table(
    tables: Mapping[str, pd.DataFrame], frame: pd.DataFrame, options: ReportSettings = ReportSettings()
) -> pd.DataFrame:
    """One row per (model, benchmark): Overall VDG with CI, tier, flags and their details."""
    if frame.empty:
        return empty(COLUMNS)
    cov = tables.get("coverage")
    if cov is None or skip_reason(cov) is not None:
        cov = coverage_table(frame, options)
    vdg, tiers, skipped = tables.get("vdg"), tables.get("tiers"), tables.get("skipped")
    vdg_skipped = skip_reason(vdg)
    leakage = tables.get("leakage")
    backbones = backbone_labels(leakage) if leakage is not None and skip_reason(leakage) is None else set()
    runs = conditions_run(frame)
    # Each table split by run once: filtering it per model costs more than the rest of the table.
    vdg_rows, tier_rows = _by_run(vdg, task_type=OVERALL), _by_run(tiers, task_type=OVERALL)
    cov_rows, skipped_rows = _by_run(cov), _by_run(skipped)
    rows = []
    each_run = [(benchmark, model, conds) for benchmark, models in runs.items() for model, conds in models.items()]
    for benchmark, model, conds in each_run:
        ran = ordered_conditions(conds)
        v = _first_row(vdg_rows.get((model, benchmark)))
        t = _first_row(tier_rows.get((model, benchmark)))
        flags: list[str] = []
        details: list[str] = []
        vdg_value = v.get("vdg", np.nan)
        is_backbone = model in backbones and (not v or pd.isna(vdg_value))
        if is_backbone:
            flags.append("backbone")
            of = sorted(set(leakage.loc[leakage["backbone"].astype(str) == model, "model"].astype(str)))
            details.append(f"the language backbone of {', '.join(of)} (leakage table): it ran the blind tasks only")
        elif not v or pd.isna(vdg_value):
            flags.append("no-vdg")
            absent = [c for c in ("orig", "black") if c not in ran]
            if vdg_skipped:
                why = f"the vdg table was skipped ({vdg_skipped.rstrip('.')})"
            elif absent:
                why = f"{' and '.join(absent)} not run"
            else:
                why = "no question answered in both orig and black"
            details.append(f"no VDG: {why}")
        own_coverage = cov_rows.get((model, benchmark), cov.iloc[:0])
        cov_flags, cov_details = _coverage_flags(own_coverage)
        flags += cov_flags
        details += cov_details
        core_flags, _ = _coverage_flags(own_coverage[own_coverage["condition"].isin(VDG_ARMS)])
        core = [c for c in ("orig", "black") if c not in ran]
        if core and not is_backbone:
            flags.append("missing-conditions")
            if "no-vdg" not in flags:  # (with no-vdg, its detail already says so)
                details.append(f"{' and '.join(core)} not run")
        mine = skipped_rows.get((model, benchmark))
        if mine is not None:
            flags.append("left-out")
            by_reason: dict[str, list[str]] = {}
            for r in mine.itertuples():
                by_reason.setdefault(str(r.reason).split(": ", 1)[-1], []).append(str(r.analysis))
            details += [f"left out of {', '.join(names)} ({why})" for why, names in by_reason.items()]
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "conditions": ",".join(ran),
                "n": v.get("n", np.nan),
                "acc_orig": v.get("acc_orig", np.nan),
                "acc_black": v.get("acc_black", np.nan),
                "vdg": vdg_value,
                "ci_low": v.get("ci_low", np.nan),
                "ci_high": v.get("ci_high", np.nan),
                "tier": t["tier"] if isinstance(t.get("tier"), str) else "",
                "flags": ",".join(f for f in FLAGS if f in flags),
                "headline_flags": ",".join(
                    f for f in FLAGS if f in (*core_flags, *(x for x in flags if x in ("no-vdg", "missing-conditions")))
                ),
                "details": "; ".join(details),
                **conventions(
                    COLUMNS,
                    options,
                    ci_level=v.get("ci_level", options.ci_level),
                    ci_method=v.get("ci_method", "") if isinstance(v.get("ci_method"), str) else "",
                    n_resamples=_count(v.get("n_resamples")),
                ),
            }
        )
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table["n"] = pd.to_numeric(table["n"], errors="coerce").astype("Int64")
    return table


DIGESTS = (
    Digest(
        "summary",
        "The first screen, per model and benchmark: the Overall VDG with its CI, its tier, and every flag "
        "(no VDG, unparsed answers, errors, missing conditions, tables that leave the model out).",
        COLUMNS,
        summary_table,
    ),
)
