"""Which questions the report compares: task-type selection, alignment of conditions, stratification.

Three options of ``ReportSettings`` choose the questions every table is computed on (``select``, applied by
``run_all`` before any table):

- ``task_types``: only these task types (an unknown name is an error listing the known ones);
- ``min_stratum`` (``--min-n`` before): task types with fewer than ``min_stratum`` questions in a benchmark
  are no longer left out: every table keeps their descriptive values and gives them no CI or test (its
  ``too_small`` column); the ``selection`` table lists them with their n (``kind`` = ``too_small``);
- ``align``: ``strict`` (default) refuses conditions of one (model, benchmark) holding different
  questions; ``intersect`` compares them on the questions present in all of them. The alignment is
  done while loading (``postprocess.reading.lmms_eval_logs.load_frame(align=...)``), which records the drops.

The ``selection`` table names everything left out this way, one row per (kind, model, benchmark,
condition, task type), so no table is silently shorter.

``by``: stratify VDG, accuracy and the ladder by any question field (the paper's duration and domain
stratification). ``by_field_analyses`` builds, per field, the analyses ``vdg_by_<field>``,
``accuracy_by_<field>`` and ``ladder_by_<field>``: the same analyses run on the frame with the task type
replaced by the field's value (its column is named after the field; "Overall" rows as usual; an empty value
is ``(none)``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd

from postprocess.analyses import accuracy, ladder, vdg
from postprocess.analyses.base import Analysis, Digest, ReportSettings, empty
from postprocess.reading.frame import ALIGNMENT_ATTR

#: Key of ``select``'s notes in ``frame.attrs`` (a JSON list of ``COLUMNS`` rows).
SELECTION_ATTR = "vdg_selection"
#: The analyses ``--by`` stratifies; their tables are ``<name>_by_<field>``.
STRATIFIED: tuple[Analysis, ...] = (
    *(a for a in vdg.ANALYSES if a.name == "vdg"),
    *accuracy.ANALYSES,
    *ladder.ANALYSES,
)
#: The value standing for an empty field in a ``--by`` table.
NONE_VALUE = "(none)"
#: Columns that are no question field (keys, outcomes, provenance): not stratifiable with ``--by``.
_NOT_FIELDS = frozenset(
    {
        "model",
        "model_settings",
        "benchmark",
        "condition",
        "question_id",
        "task_type",
        "answer",
        "pred",
        "status",
        "error",
        "correct",
        "score",
        "scoring",
        "source",
        "question",
        "response",
        "truth",
        "judge_score",
        "judge",
    }
)

COLUMNS: dict[str, str] = {
    "kind": "align (--align intersect dropped questions of this condition), task_types (a task type not among "
    "--task-types) or too_small (a task type with fewer than min_stratum questions in the benchmark: kept in "
    "every table, without CIs or tests)",
    "model": "the model (align rows); empty otherwise",
    "benchmark": "benchmark name",
    "condition": "the condition (align rows); empty otherwise",
    "task_type": "the task type left out (task_types) or too small (too_small); empty for align rows",
    "n_questions": "questions the condition had (align), or the task type has in the benchmark",
    "n_dropped": "questions left out of every table (0 for too_small rows: they stay, without inference)",
    "reason": "why, as a sentence",
}
#: Table descriptions of the ``--by`` tables, for the schema (``<field>`` stands for the field).
PATTERNS: dict[str, str] = {
    f"{a.name}_by_<field>": f"`{a.name}` with the task type replaced by the question's `<field>` "
    "(`vdg report --by FIELD`); its `task_type` column is named `<field>`."
    for a in STRATIFIED
}


def stratifiable(frame: pd.DataFrame) -> list[str]:
    """The columns of ``frame`` that ``--by`` accepts."""
    return [str(c) for c in frame.columns if c not in _NOT_FIELDS]


def _check_fields(frame: pd.DataFrame, fields: tuple[str, ...]) -> None:
    available = stratifiable(frame)
    for field in fields:
        if field not in available:
            extra = " (--by task_type is what every table already does)" if field == "task_type" else ""
            raise ValueError(f"--by {field}: no such question field{extra}; available: {', '.join(available)}")


def _notes(frame: pd.DataFrame) -> list[dict[str, object]]:
    text = frame.attrs.get(SELECTION_ATTR)
    return list(json.loads(text)) if isinstance(text, str) else []


def select(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """``frame`` restricted to ``options.task_types``, with the task types below ``options.min_stratum``
    questions noted (not dropped); both in ``attrs`` (the ``selection`` table). The frame itself when there is
    nothing to note. Raises ValueError for an unknown task type or ``--by`` field."""
    _check_fields(frame, options.by)
    if frame.empty or (not options.task_types and options.min_stratum <= 1):
        return frame
    notes = _notes(frame)
    keep = pd.Series(True, index=frame.index)
    types = frame["task_type"].astype(str)
    counts = frame.assign(_type=types).groupby(["benchmark", "_type"], sort=True)["question_id"].nunique()
    if options.task_types:
        known = sorted(set(types))
        unknown = [t for t in options.task_types if t not in known]
        if unknown:
            raise ValueError(f"--task-types: unknown task type(s) {', '.join(unknown)}; known: {', '.join(known)}")
        wanted = set(options.task_types)
        keep &= types.isin(wanted)
        notes += [
            _note("task_types", benchmark, task_type, n, n, f"{task_type} is not among --task-types")
            for (benchmark, task_type), n in counts.items()
            if task_type not in wanted
        ]
    wanted_types = set(options.task_types) or None
    small = [
        (benchmark, task_type, n)
        for (benchmark, task_type), n in counts.items()
        if n < options.min_stratum and (wanted_types is None or task_type in wanted_types)
    ]
    notes += [
        _note(
            "too_small",
            benchmark,
            task_type,
            n,
            0,
            f"{task_type} of {benchmark} has {n} question(s), fewer than min_stratum {options.min_stratum}: its rows "
            "keep n and the point estimates but no CI or test (too_small)",
        )
        for benchmark, task_type, n in small
    ]
    if not notes:
        return frame
    out = frame[keep.to_numpy()] if options.task_types else frame.copy(deep=False)
    out.attrs = {**frame.attrs, SELECTION_ATTR: json.dumps(notes)}
    return out


def _note(
    kind: str, benchmark: object, task_type: object, n: object, dropped: object, reason: str
) -> dict[str, object]:
    return {
        "kind": kind,
        "model": "",
        "benchmark": str(benchmark),
        "condition": "",
        "task_type": str(task_type),
        "n_questions": int(n),  # type: ignore[call-overload]
        "n_dropped": int(dropped),  # type: ignore[call-overload]
        "reason": reason + ".",
    }


def selection_table(
    tables: Mapping[str, pd.DataFrame], frame: pd.DataFrame, options: ReportSettings = ReportSettings()
) -> pd.DataFrame:
    """What the selection options left out (``COLUMNS``): intersect drops, then task types."""
    rows: list[dict[str, object]] = []
    text = frame.attrs.get(ALIGNMENT_ATTR)
    for row in json.loads(text) if isinstance(text, str) else []:
        if row["n_dropped"]:
            rows.append(
                {
                    "kind": "align",
                    **{k: row[k] for k in ("model", "benchmark", "condition")},
                    "task_type": "",
                    "n_questions": row["n_questions"],
                    "n_dropped": row["n_dropped"],
                    "reason": f"{row['n_dropped']} of {row['n_questions']} questions of {row['condition']} are not "
                    "in every other condition of the model (--align intersect).",
                }
            )
    rows += _notes(frame)
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _stratified(base: Analysis, field: str) -> Analysis:
    columns = {
        (field if c == "task_type" else c): (f"the question's {field}, or Overall" if c == "task_type" else text)
        for c, text in base.columns.items()
    }

    def compute(frame: pd.DataFrame, options: ReportSettings) -> pd.DataFrame:
        values = frame[field].astype(object).where(frame[field].notna(), "").astype(str).str.strip()
        table = base.run(frame.assign(task_type=values.where(values != "", NONE_VALUE)), options)
        return table.rename(columns={"task_type": field})

    return Analysis(
        f"{base.name}_by_{field}",
        f"{base.description} By {field} instead of task type.",
        columns,
        compute,
        needs=base.needs,
        min_models=base.min_models,
    )


def by_field_analyses(options: ReportSettings = ReportSettings()) -> tuple[Analysis, ...]:
    """``vdg_by_<field>``, ``accuracy_by_<field>``, ``ladder_by_<field>`` per field of ``options.by``."""
    for field in options.by:
        clash = [a.name for a in STRATIFIED if field != "task_type" and field in a.columns]
        if clash:
            raise ValueError(f"--by {field}: {field} is a column of the {clash[0]} table itself; it cannot stratify it")
    return tuple(_stratified(base, field) for field in options.by for base in STRATIFIED)


DIGESTS = (
    Digest(
        "selection",
        "What --task-types and --align intersect left out of every table (task types, and per condition the "
        "questions not present in all of a model's conditions), and the task types below min_stratum questions, "
        "kept without CIs or tests.",
        COLUMNS,
        selection_table,
    ),
)
