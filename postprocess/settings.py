"""The report's settings (``ReportSettings``): the conventions ``vdg report``'s flags set, shared by every analysis.
(The question's answer options are elsewhere: ``postprocess.reading.answer_options``,
``postprocess.reading.options_file``.)"""

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
CIMethod = Literal["score", "exact", "resample"]
ClusterPolicy = Literal["auto", "video", "question"]


@dataclass(frozen=True)
class ReportSettings:
    """Conventions shared by the analyses; each output row that depends on one names it.

    Attributes:
        missing: ``exclude``: a question with an ``error`` row in a compared condition is dropped
            from both arms of that comparison; ``incorrect``: an error is scored wrong.
        n_resamples: bootstrap resamples for every CI.
        ci_level: confidence level of every CI.
        cluster: the CIs' independent unit. ``auto`` (the default): the video (``video_id``) where some video has
            more than one of the compared questions (Video-MME asks three per video, and questions of one video are
            not independent), else the question; ``video``: always the video; ``question``: never clustered.
            ``True`` / ``False`` are read as ``video`` / ``question``. A clustered score interval scales its variance
            by the videos' design effect (``stats.paired_difference_ci``); a clustered bootstrap resamples videos.
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
            (``postprocess.reading.lmms_eval_logs.load_frame(align=...)``; the drops are listed in the ``selection``
            table).
        by: question fields to stratify VDG, accuracy and the ladder by (``vdg_by_<field>``...).
        min_stratum: fewest questions a stratum (a task type, a category) needs for any inferential output (CI,
            test, tier); smaller strata stay in the descriptive tables, marked ``too small`` with their n.
        question_set: ``per-model`` (the default): each model's tables on the questions that model answered under
            the compared conditions, so adding, removing or renaming another model moves none of its numbers (a
            leaderboard adds models every week); a pair's tables (McNemar, kappa, dissociation) on the questions
            both answered. ``shared``: a benchmark's rows on one question set, the questions no compared model has
            an error for (missing=exclude), for a fixed comparison set.
        ci_method: ``score`` (the default): a paired difference of 0/1 outcomes (a VDG, a ladder step, a model
            pair's difference) gets Tango's score interval (``postprocess.stats.paired_difference_ci``), which keeps
            its coverage with few discordant questions and has width with none; any other mean gets the ``exact``
            bootstrap. ``exact``: every CI a percentile bootstrap, computed exactly where its bootstrap distribution
            follows in closed form (per-question values on a lattice, resampled by question), else resampled;
            ``resample``: every CI by Monte Carlo resampling (the published paper's convention).
        mc_se_target: largest Monte Carlo standard error of a resampled CI endpoint: resampling CIs draw more
            resamples than ``n_resamples`` until each endpoint's estimated MC error is below it (0: never more).
        backbones: LVLM label -> the label of its language backbone's run (``vdg report --backbone LVLM=BACKBONE``):
            the pairs of the leakage table (``postprocess.analyses.leakage``), besides those its naming rule makes.
    """

    missing: MissingPolicy = "exclude"
    n_resamples: int = 2000
    ci_level: float = 0.95
    cluster: ClusterPolicy = "auto"
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
    question_set: QuestionSetPolicy = "per-model"
    ci_method: CIMethod = "score"
    mc_se_target: float = 0.002
    backbones: Mapping[str, str] = field(default_factory=dict)

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
        if self.ci_method not in ("score", "exact", "resample"):
            raise ValueError(f"ci_method must be 'score', 'exact' or 'resample', got {self.ci_method!r}")
        if isinstance(self.cluster, bool):
            object.__setattr__(self, "cluster", "video" if self.cluster else "question")
        if self.cluster not in ("auto", "video", "question"):
            raise ValueError(f"cluster must be 'auto', 'video' or 'question', got {self.cluster!r}")
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
        backbones = {str(k): str(v) for k, v in dict(self.backbones).items()}
        for model, backbone in backbones.items():
            if not model or not backbone or model == backbone:
                raise ValueError(f"backbones: {model!r} -> {backbone!r} must pair two different, non-empty labels")
        object.__setattr__(self, "backbones", MappingProxyType(backbones))


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


__all__ = [
    "AlignPolicy",
    "CIMethod",
    "MissingPolicy",
    "ReportSettings",
    "QuestionSetPolicy",
    "natural_key",
    "natural_sorted",
]
