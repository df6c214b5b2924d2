"""What every analysis is: a name, declared columns, and a pure function frame -> frame."""

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
        object.__setattr__(self, "tier_map", MappingProxyType(dict(self.tier_map)))
        object.__setattr__(self, "temporal_map", MappingProxyType(dict(self.temporal_map)))


@dataclass(frozen=True)
class Analysis:
    """One output table.

    Attributes:
        name: file stem of its CSV (``<name>.csv``) and its key in ``report.json``.
        description: one sentence for docs/report-schema.md.
        columns: column name -> one-line description; the table has exactly these, in this order.
        compute: (tidy frame, options) -> table. Returns an empty table with the same columns
            when the frame lacks what it needs (e.g. no black condition).
    """

    name: str
    description: str
    columns: Mapping[str, str]
    compute: Callable[[pd.DataFrame, Options], pd.DataFrame]

    def run(self, frame: pd.DataFrame, options: Options) -> pd.DataFrame:
        table = self.compute(frame, options)
        if list(table.columns) != list(self.columns):
            raise RuntimeError(
                f"analysis {self.name!r} returned columns {list(table.columns)}, declared {list(self.columns)}"
            )
        return table


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
