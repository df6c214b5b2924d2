"""The analyses' options (``Options``): what ``vdg report``'s flags set. Free of pandas, so a command can
build its parser without importing the analyses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

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


__all__ = ["AlignPolicy", "MissingPolicy", "Options"]
