"""What the report could not compute, and why: one row per skipped table or left-out model.

Two cases, from one rule each:

- A whole table was *skipped*: its analysis raised ``ValueError`` (the data cannot support it; see
  ``postprocess.analyses``). ``model`` and ``benchmark`` are empty.
- A table was computed but *left a model out*: the model lacks a condition the analysis needs
  (``Analysis.needs``: "black not run"), or a pairwise table has fewer than two models to compare
  (``Analysis.min_models``). When every model of a benchmark is left out (nobody ran CRF), one row
  with an empty ``model`` says so for the benchmark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from postprocess.analyses.base import Analysis, Digest, ReportSettings, empty, memo_by_frame, skip_reason
from postprocess.analyses.registry import CORE
from vdg_tasks.vocabulary.catalogue import offered_conditions

COLUMNS: dict[str, str] = {
    "analysis": "the table concerned",
    "model": "the model left out; empty when the whole table, or every model of the benchmark, is concerned",
    "benchmark": "the benchmark concerned; empty when the whole table was skipped",
    "reason": "why, as a sentence: '<table> was skipped: ...' or 'no <table> for <model>: <condition> not run'",
    "offered": "whether the benchmark offers every condition the table needs (vdg_tasks.benchmarks: what its docs "
    "provide); true for a skipped table and for a benchmark vdg does not declare. The report lists only these",
}


@memo_by_frame
def conditions_run(
    frame: pd.DataFrame, options: ReportSettings = ReportSettings()
) -> dict[str, dict[str, frozenset[str]]]:
    """benchmark -> model -> the conditions it ran, benchmarks and models sorted; once per frame for this table
    and the summary (``options`` unused: ``memo_by_frame``'s signature). Callers must not mutate it."""
    out: dict[str, dict[str, frozenset[str]]] = {}
    pairs = frame[["benchmark", "model", "condition"]].drop_duplicates()
    for (benchmark, model), conditions in pairs.groupby(["benchmark", "model"], sort=True)["condition"]:
        out.setdefault(str(benchmark), {})[str(model)] = frozenset(map(str, conditions))
    return out


def offers(benchmark: str, conditions: tuple[str, ...]) -> bool:
    """Whether ``benchmark`` offers every one of ``conditions``: a benchmark vdg declares offers the conditions
    its docs provide for (``Benchmark.conditions``); any other (a derived task, a prediction file) is assumed to."""
    offered = offered_conditions(benchmark)
    return offered is None or set(conditions) <= offered


def _left_out(analysis: Analysis, runs: dict[str, dict[str, frozenset[str]]]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    name = analysis.name
    needed = tuple(getattr(analysis.needs, "conditions", ()))
    for benchmark, present in runs.items():
        models = sorted(present)
        reasons = {m: analysis.needs(present[m]) for m in models} if analysis.needs else {}
        failing = {m: r for m, r in reasons.items() if r}
        qualified = [m for m in models if m not in failing]
        if failing and not qualified:
            reasons = sorted(set(failing.values()))
            why = reasons[0] if len(reasons) == 1 else "; ".join(f"{m}: {r}" for m, r in failing.items())
            rows.append(
                {"model": "", "benchmark": benchmark, "reason": f"no {name} for any model of {benchmark}: {why}"}
            )
            continue
        rows += [{"model": m, "benchmark": benchmark, "reason": f"no {name} for {m}: {r}"} for m, r in failing.items()]
        if qualified and len(qualified) < analysis.min_models:
            rows.append(
                {
                    "model": "",
                    "benchmark": benchmark,
                    "reason": f"no {name} for {benchmark}: it compares {analysis.min_models} or more models and only "
                    f"{', '.join(qualified)} can take part",
                }
            )
    return [{"analysis": name, **row, "offered": offers(str(row["benchmark"]), needed)} for row in rows]


def skipped_table(
    tables: Mapping[str, pd.DataFrame],
    frame: pd.DataFrame,
    options: ReportSettings = ReportSettings(),
    analyses: Sequence[Analysis] | None = None,
) -> pd.DataFrame:
    """Every skipped table and left-out model of the tables computed so far, by ``analyses`` (default: vdg's own;
    ``run_all`` passes every analysis of the report, a named module's too); columns as in ``COLUMNS``."""
    rows: list[dict[str, str]] = []
    runs = conditions_run(frame) if len(frame) else {}
    for analysis in CORE if analyses is None else analyses:
        if analysis.name not in tables:
            continue
        reason = skip_reason(tables[analysis.name])
        if reason:
            rows.append(
                {
                    "analysis": analysis.name,
                    "model": "",
                    "benchmark": "",
                    "reason": f"{analysis.name} was skipped: {reason}",
                    "offered": True,
                }
            )
        elif analysis.needs is not None or analysis.min_models > 1:
            rows += _left_out(analysis, runs)
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows, columns=list(COLUMNS))


DIGESTS = (
    Digest(
        "skipped",
        "What was not computed: tables skipped because the data cannot support them, and models a table leaves "
        "out because they lack a condition it needs.",
        COLUMNS,
        skipped_table,
        reads_analyses=True,
    ),
)
