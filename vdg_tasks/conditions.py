"""The one place where conditions are declared.

A condition is what a model is shown instead of (or beside) the original benchmark item.
Task YAMLs, cache keys, logged fields and report columns are all derived from the
declarations below; nothing else in the package lists condition names.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

Modality = Literal["video", "text"]
Transform = Literal["identity", "black", "hold", "crf"]

#: The frame budget the held-key-frame conditions are built for (the most common lmms-eval default).
DEFAULT_KEY_FRAMES = 32
#: Bumped whenever a video transform's output changes for the same input; part of every cache key.
TRANSFORM_VERSION = 2


@dataclass(frozen=True)
class Condition:
    """One declared condition.

    Attributes:
        name: short identifier used in task names (``<benchmark>_vdg_<name>``), logs and reports.
        modality: whether the video (``video``) or the question text (``text``) is perturbed.
        transform: which transform implements it (see ``vdg_tasks.video.transforms``).
        params: the transform's parameters; part of the cache key and of every logged sample.
        description: one sentence for READMEs and reports.
        family: tag the condition belongs to besides ``<benchmark>_vdg`` (``ladder``, ``crf``).
    """

    name: str
    modality: Modality
    transform: Transform
    description: str
    family: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)


def _ladder(name: str, transform: Transform, description: str, **params: Any) -> Condition:
    return Condition(name, "video", transform, description, "ladder", params)


def crf(level: int, preset: str = "medium") -> Condition:
    """H.264 re-encode of the source at a constant rate factor (the paper's compression protocol)."""
    return Condition(
        f"crf{level}",
        "video",
        "crf",
        f"The source re-encoded with libx264 at CRF {level} (preset {preset}); same size, rate, duration and audio.",
        "crf",
        {"crf": level, "preset": preset},
    )


CRF_LEVELS = (18, 23, 28, 33, 38)

_DECLARED: tuple[Condition, ...] = (
    _ladder("orig", "identity", "The source video, untouched."),
    _ladder(
        "black",
        "black",
        "Every pixel black, with the source's duration, size and audio, on the held conditions' timeline.",
    ),
    _ladder(
        "single",
        "hold",
        "The middle of K uniformly placed key frames (K = frame count on shorter sources) held for the whole duration.",
        k=DEFAULT_KEY_FRAMES,
        order="single",
    ),
    _ladder(
        "shuffled",
        "hold",
        "The K key frames of `ordered`, each held for duration/K, in a seeded non-identity permutation.",
        k=DEFAULT_KEY_FRAMES,
        order="shuffled",
    ),
    _ladder(
        "ordered",
        "hold",
        "K key frames at segment centres, each held for duration/K, in their original order.",
        k=DEFAULT_KEY_FRAMES,
        order="ordered",
    ),
    *(crf(level) for level in CRF_LEVELS),
)

CONDITIONS: Mapping[str, Condition] = MappingProxyType({c.name: c for c in _DECLARED})

#: The diagnostic ladder, from no visual content to the full video.
LADDER: tuple[str, ...] = ("black", "single", "shuffled", "ordered", "orig")

#: Ladder deltas: (column name, upper rung, lower rung).
LADDER_DELTAS: tuple[tuple[str, str, str], ...] = (
    ("spatial", "single", "black"),
    ("diversity", "shuffled", "single"),
    ("temporal", "ordered", "shuffled"),
    ("sampling", "orig", "ordered"),
)


def get_condition(name: str) -> Condition:
    """Return the declared condition called ``name``; an unknown name suggests the nearest ones."""
    try:
        return CONDITIONS[name]
    except KeyError:
        near = difflib.get_close_matches(name, list(CONDITIONS), n=3)
        hint = f" Did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        raise KeyError(f"Unknown condition {name!r}.{hint} Declared: {', '.join(CONDITIONS)}.") from None


def families() -> dict[str, list[str]]:
    """Family tag -> condition names, in declaration order."""
    out: dict[str, list[str]] = {}
    for c in CONDITIONS.values():
        out.setdefault(c.family, []).append(c.name)
    return out
