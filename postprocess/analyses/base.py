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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import pandas as pd

from vdg_tasks.seeding import stable_seed

MissingPolicy = Literal["exclude", "incorrect"]
AlignPolicy = Literal["strict", "intersect"]


@dataclass(frozen=True)
class Options:
    """Conventions shared by the analyses; each output row that depends on one names it.

    Attributes:
        missing: ``exclude``: a question with an ``error`` row in a compared condition is dropped
            from both arms of that comparison; ``incorrect``: an error is scored wrong.
        n_resamples: bootstrap resamples for every CI.
        ci_level: confidence level of every CI.
        cluster: resample whole videos (``video_id``) instead of questions in the bootstraps.
        alpha: significance level for "differs reliably" (McNemar, Holm-adjusted).
        equivalence_margin: TOST margin (a proportion) for "does not differ".
        stability_resamples: bootstrap resamples for the dissociation stability shares.
        tier_high, tier_low: VDG tier thresholds (high > tier_high, low < tier_low: review).
        tier_map: task type -> predicted tier (``high``/``mid``/``low``) of another benchmark.
        temporal_map: task type -> ``single-frame``/``temporal`` bucket (extends the built-in map).
        group_by: the column whose groups collective accuracy counts (a video's questions).
        seed: an extra part mixed into every seed; ``None`` derives seeds from stable ids alone
            (analysis, model, benchmark, task type...), so a table never depends on what else ran.
        task_types: restrict every table to these task types (empty: all; ``postprocess.analyses.selection``).
        min_n: leave out task types with fewer than this many questions in a benchmark (named in ``selection``).
        align: ``strict``: conditions of a (model, benchmark) must hold the same questions (else the load is
            refused); ``intersect``: they are compared on the questions present in all of them
            (``postprocess.io.load_frame(align=...)``; the drops are listed in the ``selection`` table).
        by: question fields to stratify VDG, accuracy and the ladder by (``vdg_by_<field>``...).
    """

    missing: MissingPolicy = "exclude"
    n_resamples: int = 2000
    ci_level: float = 0.95
    cluster: bool = False
    alpha: float = 0.05
    equivalence_margin: float = 0.05
    stability_resamples: int = 1000
    tier_high: float = 0.30
    tier_low: float = 0.10
    tier_map: Mapping[str, str] = field(default_factory=dict)
    temporal_map: Mapping[str, str] = field(default_factory=dict)
    group_by: str = "video_id"
    seed: int | None = None
    task_types: tuple[str, ...] = ()
    min_n: int = 0
    align: AlignPolicy = "strict"
    by: tuple[str, ...] = ()

    def seed_for(self, *parts: object) -> int:
        """The seed of one random procedure, from stable ids (and ``seed`` when given)."""
        return stable_seed(*parts) if self.seed is None else stable_seed(self.seed, *parts)

    def __post_init__(self) -> None:
        if self.missing not in ("exclude", "incorrect"):
            raise ValueError(f"missing policy must be 'exclude' or 'incorrect', got {self.missing!r}")
        if not 0 < self.ci_level < 1:
            raise ValueError(f"ci_level must be in (0, 1), got {self.ci_level}")
        if self.n_resamples < 1 or self.stability_resamples < 1:
            raise ValueError("resample counts must be positive")
        if not self.tier_low <= self.tier_high:
            raise ValueError(f"tier_low ({self.tier_low}) must not exceed tier_high ({self.tier_high})")
        if self.align not in ("strict", "intersect"):
            raise ValueError(f"align must be 'strict' or 'intersect', got {self.align!r}")
        if self.min_n < 0:
            raise ValueError(f"min_n must not be negative, got {self.min_n}")
        object.__setattr__(self, "task_types", tuple(dict.fromkeys(str(t) for t in self.task_types)))
        object.__setattr__(self, "by", tuple(dict.fromkeys(str(f) for f in self.by)))
        object.__setattr__(self, "tier_map", MappingProxyType(dict(self.tier_map)))
        object.__setattr__(self, "temporal_map", MappingProxyType(dict(self.temporal_map)))


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
    """

    name: str
    description: str
    columns: Mapping[str, str]
    compute: Callable[[pd.DataFrame, Options], pd.DataFrame]
    needs: Needs | None = None
    min_models: int = 1

    def run(self, frame: pd.DataFrame, options: Options) -> pd.DataFrame:
        return _check_columns("analysis", self.name, self.compute(frame, options), self.columns)


@dataclass(frozen=True)
class Digest:
    """One output table computed from the other tables (after all of them), e.g. the summary.

    Attributes are those of ``Analysis``; ``compute`` is (tables so far, tidy frame, options) -> table.
    """

    name: str
    description: str
    columns: Mapping[str, str]
    compute: Callable[[Mapping[str, pd.DataFrame], pd.DataFrame, Options], pd.DataFrame]

    def run(self, tables: Mapping[str, pd.DataFrame], frame: pd.DataFrame, options: Options) -> pd.DataFrame:
        return _check_columns("table", self.name, self.compute(tables, frame, options), self.columns)


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


_MEMO: dict[tuple[str, int, str], tuple[weakref.ref, pd.DataFrame]] = {}


def memo_by_frame(
    fn: Callable[[pd.DataFrame, Options], pd.DataFrame],
) -> Callable[[pd.DataFrame, Options], pd.DataFrame]:
    """Compute ``fn(frame, options)`` once per (frame object, options) while the frame lives.

    Several tables build on the same intermediate (per-question VDG, the VDG table); analyses never
    mutate their input frame, so the identity of the frame object is a sound key. Callers must not
    mutate the returned table.
    """

    @functools.wraps(fn)
    def wrapper(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
        key = (fn.__qualname__, id(frame), repr(options))
        hit = _MEMO.get(key)
        if hit is not None and hit[0]() is frame:
            return hit[1]
        table = fn(frame, options)
        _MEMO[key] = (weakref.ref(frame, lambda _ref, key=key: _MEMO.pop(key, None)), table)
        return table

    return wrapper


def empty(columns: Mapping[str, str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
