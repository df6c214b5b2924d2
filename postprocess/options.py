"""The analyses' options (``Options``): what ``vdg report``'s flags set. Free of pandas, so a command can
build its parser without importing the analyses."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from vdg_tasks.vocabulary.seeding import stable_seed

MissingPolicy = Literal["exclude", "incorrect"]
AlignPolicy = Literal["strict", "intersect"]
QuestionSetPolicy = Literal["shared", "per-model"]
CIMethod = Literal["exact", "resample"]


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
        min_n: the former spelling of ``min_stratum`` (``--min-n``): when above 0 it sets ``min_stratum``. Small
            task types are no longer left out of the tables (``selection`` lists them).
        align: ``strict``: conditions of a (model, benchmark) must hold the same questions (else the load is
            refused); ``intersect``: they are compared on the questions present in all of them
            (``postprocess.io.load_frame(align=...)``; the drops are listed in the ``selection`` table).
        by: question fields to stratify VDG, accuracy and the ladder by (``vdg_by_<field>``...).
        min_stratum: fewest questions a stratum (a task type, a category) needs for any inferential output (CI,
            test, tier); smaller strata stay in the descriptive tables, marked ``too small`` with their n.
        question_set: ``shared``: the rows a table compares (models, conditions) are computed on one question set
            per benchmark, the questions no compared model has an error for (missing=exclude); ``per-model``: each
            model on its own answered questions (the published paper's convention, for reproduction).
        ci_method: ``exact``: a percentile bootstrap CI whose bootstrap distribution follows in closed form from
            the data (per-question values on a lattice, resampled by question) is computed exactly, with no
            resampling; ``resample``: every CI by Monte Carlo resampling (the published paper's convention).
        mc_se_target: largest Monte Carlo standard error of a resampled CI endpoint: resampling CIs draw more
            resamples than ``n_resamples`` until each endpoint's estimated MC error is below it (0: never more).
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
    min_stratum: int = 30
    question_set: QuestionSetPolicy = "shared"
    ci_method: CIMethod = "exact"
    mc_se_target: float = 0.002

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
        if self.question_set not in ("shared", "per-model"):
            raise ValueError(f"question_set must be 'shared' or 'per-model', got {self.question_set!r}")
        if self.ci_method not in ("exact", "resample"):
            raise ValueError(f"ci_method must be 'exact' or 'resample', got {self.ci_method!r}")
        if not self.mc_se_target >= 0:
            raise ValueError(f"mc_se_target must not be negative, got {self.mc_se_target}")
        if self.min_n < 0:
            raise ValueError(f"min_n must not be negative, got {self.min_n}")
        if self.min_n > 0:
            object.__setattr__(self, "min_stratum", self.min_n)
        if self.min_stratum < 1:
            raise ValueError(f"min_stratum must be at least 1, got {self.min_stratum}")
        object.__setattr__(self, "task_types", tuple(dict.fromkeys(str(t) for t in self.task_types)))
        object.__setattr__(self, "by", tuple(dict.fromkeys(str(f) for f in self.by)))
        object.__setattr__(self, "tier_map", MappingProxyType(dict(self.tier_map)))
        object.__setattr__(self, "temporal_map", MappingProxyType(dict(self.temporal_map)))


_DIGITS = re.compile(r"(\d+(?:\.\d+)?)")


def natural_key(label: str) -> tuple[tuple[int, float, str], ...]:
    """Sort key of a model label in natural order: its numbers compared as numbers, so ``m@8f`` sorts before
    ``m@16f`` and ``m@0.5fps`` before ``m@2fps`` (text parts compare case-insensitively, then as written)."""
    parts = _DIGITS.split(str(label))
    key = tuple((1, float(part), part) if i % 2 else (0, 0.0, part.casefold()) for i, part in enumerate(parts))
    # labels equal but for case: a stable order still; ranked below every part, so "qwen" sorts before "qwen2"
    return (*key, (-1, 0.0, str(label)))


def natural_sorted(labels: Iterable[str]) -> list[str]:
    """``labels`` in ``natural_key`` order."""
    return sorted(labels, key=natural_key)


__all__ = ["AlignPolicy", "CIMethod", "MissingPolicy", "Options", "QuestionSetPolicy", "natural_key", "natural_sorted"]
