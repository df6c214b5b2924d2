"""What every analysis is: a name, declared columns, and a pure function frame -> frame.

Two kinds of output table:

- ``Analysis``: computed from the tidy frame alone (``compute(frame, options)``).
- ``Digest``: computed from the other tables after they are all computed
  (``compute(tables, frame, options)``): the first-screen summary, the list of what was skipped.

An analysis that cannot run on the data raises ``ValueError`` with a sentence saying why; the
runner (``postprocess.analyses.run_all``) then writes its table empty, marked with that reason
(``skip_reason``), and goes on. An analysis that runs but has to leave a model out (it lacks a
condition, ``needs``) says so in the ``skipped`` table.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd

from postprocess.reading.frame import graded_rows
from postprocess.settings import AlignPolicy as AlignPolicy  # re-exported: the analyses import them from here
from postprocess.settings import MissingPolicy as MissingPolicy
from postprocess.settings import ReportSettings as ReportSettings

#: What a model must have run for an analysis to include it: its conditions -> None (it can be
#: included) or the reason it cannot ("black not run").
Needs = Callable[[frozenset[str]], "str | None"]


def conditions_needed(*names: str) -> Needs:
    """``needs`` of an analysis that uses these conditions: "black not run", "orig and black not run"."""

    def needs(present: frozenset[str]) -> str | None:
        absent = [n for n in names if n not in present]
        if not absent:
            return None
        return f"{' and '.join(absent)} not run"

    needs.__doc__ = f"needs {', '.join(names)}"
    needs.conditions = names  # type: ignore[attr-defined]  # read by the skipped table (offered)
    return needs


def _check_columns(kind: str, name: str, table: pd.DataFrame, columns: Mapping[str, str]) -> pd.DataFrame:
    if list(table.columns) != list(columns):
        raise RuntimeError(f"{kind} {name!r} returned columns {list(table.columns)}, declared {list(columns)}")
    return table


@dataclass(frozen=True)
class Analysis:
    """One output table computed from the tidy frame.

    Attributes:
        name: file stem of its CSV (``<name>.csv``) and its key in ``report.json``.
        description: one sentence for docs/report-schema.md.
        columns: column name -> one-line description; the table has exactly these, in this order.
        compute: (tidy frame, options) -> table. Returns an empty table with the same columns
            when the frame lacks what it needs (e.g. no black condition); raises ``ValueError``
            (a sentence naming the model, condition or question) when the data cannot support it.
        needs: a model's conditions -> why this analysis leaves it out (None: it is included); the
            ``skipped`` table names each model left out, so a table is never silently shorter.
        min_models: models (meeting ``needs``) a benchmark needs for any row (2 for pairwise tables).
        shares: the ``memo_by_frame`` intermediates ``compute`` reads (per-question VDG, the CRF blocks...):
            ``run_all`` computes analyses sharing one in the same worker process, which then computes it once.
    """

    name: str
    description: str
    columns: Mapping[str, str]
    compute: Callable[[pd.DataFrame, ReportSettings], pd.DataFrame]
    needs: Needs | None = None
    min_models: int = 1
    shares: tuple[Callable[..., Any], ...] = ()

    def run(self, frame: pd.DataFrame, options: ReportSettings) -> pd.DataFrame:
        return _check_columns("analysis", self.name, self.compute(frame, options), self.columns)


@dataclass(frozen=True)
class Digest:
    """One output table computed from the other tables (after all of them), e.g. the summary.

    Attributes are those of ``Analysis``; ``compute`` is (tables so far, tidy frame, options) -> table, and
    takes the analyses those tables came from as a fourth argument where ``reads_analyses`` (``skipped``).
    """

    name: str
    description: str
    columns: Mapping[str, str]
    compute: Callable[..., pd.DataFrame]
    reads_analyses: bool = False

    def run(
        self,
        tables: Mapping[str, pd.DataFrame],
        frame: pd.DataFrame,
        options: ReportSettings,
        analyses: Sequence[Analysis] = (),
    ) -> pd.DataFrame:
        extra = (analyses,) if self.reads_analyses else ()
        return _check_columns("table", self.name, self.compute(tables, frame, options, *extra), self.columns)


#: ``DataFrame.attrs`` key marking a table whose analysis was skipped; the value is the reason.
SKIPPED_ATTR = "vdg_skipped"


def skipped(columns: Mapping[str, str], reason: str) -> pd.DataFrame:
    """The empty table of an analysis that could not run, marked with why."""
    table = empty(columns)
    table.attrs[SKIPPED_ATTR] = reason
    return table


def skip_reason(table: pd.DataFrame | None) -> str | None:
    """Why the analysis behind ``table`` was skipped, or None when it ran."""
    if table is None:
        return None
    reason = table.attrs.get(SKIPPED_ATTR)
    return str(reason) if reason else None


_MEMO: dict[tuple[str, int, str], tuple[weakref.ref, object]] = {}
_Result = TypeVar("_Result")


def memo_by_frame(
    fn: Callable[[pd.DataFrame, ReportSettings], _Result],
) -> Callable[[pd.DataFrame, ReportSettings], _Result]:
    """Compute ``fn(frame, options)`` once per (frame object, options) while the frame lives.

    Several tables build on the same intermediate (per-question VDG, the VDG table, the CRF blocks);
    analyses never mutate their input frame, so the identity of the frame object is a sound key.
    Callers must not mutate the returned value.
    """

    @functools.wraps(fn)
    def wrapper(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> _Result:
        key = (fn.__qualname__, id(frame), repr(options))
        hit = _MEMO.get(key)
        if hit is not None and hit[0]() is frame:
            return cast(_Result, hit[1])
        result = fn(frame, options)
        _MEMO[key] = (weakref.ref(frame, lambda _ref, key=key: _MEMO.pop(key, None)), result)
        return result

    return wrapper


def empty(columns: Mapping[str, str]) -> pd.DataFrame:
    return pd.DataFrame(np.empty((0, len(columns)), dtype=object), columns=list(columns))


def letter_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without its graded rows: what the analyses of letters and options (letter bias, chance) read."""
    graded = graded_rows(frame)
    return frame[~graded] if graded.any() else frame
