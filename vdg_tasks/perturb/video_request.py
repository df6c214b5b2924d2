"""What a question is shown under a condition: one function decides (``video_request``).

The hooks (``resolve_visual``), ``vdg materialize``'s plan and ``vdg export`` all ask ``video_request``
for a question's source video, video id and per-question parameters (the oracle frames' times; K of
the held conditions under a sweep's ``$VDG_SAMPLING``), and ``shown_from`` for the parameters as
applied to the source and the stream shown.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from vdg_tasks.data.benchmarks import Benchmark, VideoUnavailable
from vdg_tasks.vocabulary.conditions import Condition, Transform

#: The environment variable a sweep sets per run (``frames:16``, ``fps:0.5``).
SAMPLING_ENV = "VDG_SAMPLING"
#: Transforms whose K follows the sampling setting.
_HELD: tuple[Transform, ...] = ("hold",)


def oracle_times(doc: Mapping[str, Any]) -> tuple[float, ...]:
    """One time per outfit: the midpoint of its longest ground-truth window, in time order (seconds).

    Raises:
        ValueError: the doc has no usable windows (the question's error names it).
    """
    windows = doc.get("outfit_windows") or []
    times = []
    for outfit, intervals in enumerate(windows):
        spans = [(float(a), float(b)) for a, b in intervals or [] if float(b) >= float(a)]
        if not spans:
            raise ValueError(f"question {doc.get('question_id')}: outfit {outfit + 1} has no annotated window")
        start, end = max(spans, key=lambda s: (s[1] - s[0], -s[0]))
        times.append(round((start + end) / 2, 3))
    if not times:
        raise ValueError(f"question {doc.get('question_id')}: has no outfit windows (field 'outfit_windows')")
    return tuple(sorted(times))


def sampling_setting() -> tuple[str, float] | None:
    """``$VDG_SAMPLING`` as (``frames`` | ``fps``, value); None when unset.

    Raises:
        ValueError: a malformed value (the message names the variable).
    """
    text = os.environ.get(SAMPLING_ENV, "").strip()
    if not text:
        return None
    axis, _, value = text.partition(":")
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    bad = not (number > 0 and math.isfinite(number)) or (axis == "frames" and not number.is_integer())
    if axis not in ("frames", "fps") or bad:
        raise ValueError(f"{SAMPLING_ENV}={text!r}: expected frames:N (N a positive integer) or fps:F (F > 0)")
    return axis, number


def sampling_label() -> str:
    """The logged ``sampling`` field: ``$VDG_SAMPLING`` as set, "" when unset or malformed."""
    try:
        setting = sampling_setting()
    except ValueError:
        return ""
    return "" if setting is None else f"{setting[0]}:{setting[1]:g}"


def bound_params(
    condition: Condition, doc: Mapping[str, Any], source: str | None = None
) -> tuple[tuple[str, Any], ...]:
    """Per-question parameters of ``condition`` (hashable): the oracle frames' times, and K of the held
    conditions under a sweep's sampling setting (``source``: the question's video, for its duration).

    Raises:
        ValueError: no usable oracle windows, or a malformed ``$VDG_SAMPLING``.
    """
    if condition.transform == "hold_at":
        return (("times", oracle_times(doc)),)
    setting = sampling_setting() if condition.transform in _HELD else None
    if setting is None:
        return ()
    axis, value = setting
    if axis == "frames":
        return (("k", int(value)),)
    if source is None:
        raise ValueError(f"{SAMPLING_ENV}=fps:{value:g}: K follows each video's duration, and no video was given")
    # vdg_tasks.perturb.video (PyAV, ~0.4 s) only to probe a source, not on import of vdg_tasks.lmms.hooks
    from vdg_tasks.perturb.video import probe

    return (("k", max(1, round(value * probe(source).duration))),)


def source_path(benchmark: Benchmark, view: Mapping[str, Any]) -> Path:
    """The question's original video; a frame folder (MVBench's TVQA frames) is encoded to a video first.

    Raises:
        VideoUnavailable: no such file or folder; ValueError: an unreadable frame folder.
    """
    path = benchmark.video(view)
    if path.is_dir():
        if benchmark.frame_folder_fps is None:
            raise VideoUnavailable(f"{path} is a folder, not a video")
        # vdg_tasks.perturb.cache (filelock, ~0.06 s) only for a frame folder, not on import of vdg_tasks.lmms.hooks
        from vdg_tasks.perturb.cache import frame_folder_video

        return frame_folder_video(path, benchmark.frame_folder_fps)
    return path


def shown_from(condition: Condition, source: str) -> tuple[dict[str, Any], int]:
    """(effective parameters, video stream index) of what ``condition`` shows from ``source``: a hold's ``k``
    capped at the source's frame count, and the stream the models' decoders read."""
    # vdg_tasks.perturb.video (PyAV, ~0.4 s) only to probe a source, not on import of vdg_tasks.lmms.hooks
    from vdg_tasks.perturb.video import effective_k, probe

    info = probe(source)
    params = condition.params_dict()
    if condition.transform == "hold":
        params["k"] = effective_k(info.n_frames, int(params["k"]))
    return params, info.stream_index


@dataclass(frozen=True, eq=False)
class VideoRequest:
    """The video a question asks for under a condition, before anything is built.

    Attributes:
        condition: the condition as declared; ``applied`` is it with ``bound`` applied.
        source: the question's original video (a frame folder already encoded to one).
        video_id: the benchmark's id of that video.
        bound: the per-question parameters (``bound_params``), hashable.
    """

    condition: Condition
    source: str
    video_id: str
    bound: tuple[tuple[str, Any], ...] = ()

    @property
    def applied(self) -> Condition:
        return self.condition.bound(**dict(self.bound)) if self.bound else self.condition

    @property
    def key(self) -> tuple[Any, ...]:
        """Equal for two questions shown the same video."""
        return (self.condition.name, self.source, self.video_id, self.bound)

    # Compared and hashed by ``key`` (a Condition's parameters are a mapping, which does not hash).
    def __eq__(self, other: object) -> bool:
        return isinstance(other, VideoRequest) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


class RequestError(Exception):
    """A question's video request cannot be made: its source (``stage`` "source") or its per-question
    parameters ("params", for the video at ``source``) cannot be worked out. ``cause`` is the original
    exception."""

    def __init__(self, stage: Literal["source", "params"], cause: BaseException, source: str = ""):
        super().__init__(str(cause))
        self.stage = stage
        self.cause = cause
        self.source = source

    def describe(self) -> str:
        """The reason as an error row gives it (``VideoUnavailable: ...``, ``ValueError: ...``)."""
        return f"{type(self.cause).__name__}: {self.cause}"


def video_request(benchmark: Benchmark, condition: Condition, doc: Mapping[str, Any]) -> VideoRequest | None:
    """The video ``doc`` (a raw doc of ``benchmark``) asks for under ``condition``; None when the condition shows
    no video at all (``blind``: the question's video is never looked at), or the task gives frames rather than a
    video file (``Benchmark.frames``: nothing is built for it).

    Raises:
        RequestError: the source is unavailable or unreadable, or the per-question parameters cannot be
            worked out (no oracle windows, a malformed ``$VDG_SAMPLING``).
    """
    if not condition.shows_video or benchmark.frames is not None:
        return None
    try:
        view = benchmark.view(doc)
        source = str(source_path(benchmark, view))
        video_id = str(view["videoID"])
    except Exception as exc:
        raise RequestError("source", exc) from exc
    try:
        bound = bound_params(condition, view, source)
    except Exception as exc:
        raise RequestError("params", exc, source) from exc
    return VideoRequest(condition, source, video_id, bound)
