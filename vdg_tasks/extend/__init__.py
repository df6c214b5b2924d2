"""Your own conditions: the public API to declare a perturbation once and get tasks, cache, logs and report rows.

A module of yours declares ``CONDITIONS``, a list made by the functions below, and is named by an entry point of
group ``vdg.conditions`` or by ``$VDG_CONDITIONS`` (``docs/conditions.md`` walks through one)::

    from vdg_tasks.extend import frame_condition

    def invert(frame, context):
        return 255 - frame

    CONDITIONS = [frame_condition("inverted", invert, description="Every pixel's colour inverted.", family="colour")]

Each condition then gets a task for every benchmark and derived task it applies to (``<benchmark>_vdg_<name>``,
tagged ``<benchmark>_vdg_<family>``; ``<benchmark>_vdg``, the audit run by default, stays vdg's core), cache keys
holding a digest of the module's source, its name and parameters in every logged sample's provenance, and rows in the
report's ``added_conditions`` table (each against ``orig``, per question).

The four kinds of transform, each called with a ``Context``:

- ``filter_condition``: ``graph(picture, context) -> str`` (or the string itself): an FFmpeg filter chain in ``-vf``
  syntax (``"gblur=sigma=4:steps=3"``; no labels), run by libavfilter on the frames ``frame_condition`` would give
  (those ``crf18`` encodes) in the pixel format they are encoded in (``picture``: ``yuv420p`` or ``yuv444p``, 8-bit,
  the source's range; its size and chroma subsampling), with no RGB round trip and no Python per frame, and
  re-encoded as ``crf18`` does. The chain must keep the size and format and give one frame per frame; a scaling
  filter should name the range (``in_range``/``out_range``: ``picture.range_name``) so full-range sources stay full
  range. On a task that gives frames, it runs on each frame as ``gbrp`` (RGB in planes). The quick kind: use it for
  anything FFmpeg's filters can do.
- ``frame_condition``: ``transform(frame, context) -> frame``, an ``(H, W, 3)`` ``uint8`` RGB array in and out, once
  per frame in order (Python per frame, through RGB: for what no FFmpeg filter does). vdg decodes the video the
  models read (the stream, frame count and colour range they see; a rotated video's pictures as stored), converts to
  RGB as their decoders do (BT.601) in the source's range and back, and re-encodes as ``crf18`` does (libx264, CRF 18,
  the source's rate, duration, frame count, colour tags, rotation and audio): ``crf18`` is the control of the
  re-encode. On a task that gives frames, each of its frames (a copy).
- ``container_condition``: ``transform(source, destination, context)``: write an mp4 at ``destination`` from the
  video file ``source`` (``context.video_stream``: the stream the models decode).
- ``text_condition``: ``transform(doc, context) -> doc``: the question in vdg's record layout (``question``,
  ``options`` as ``"A. text"``, ``answer``, ``question_id``, ``task_type``, ...) in (a copy), the changed doc out; the
  benchmark's own prompt builder renders it, and the ``answer`` it returns is the one scored (reordered options move
  it); the question id must stay.

Guard rails: a transform that raises gives that question an ``error`` row with the reason (never a dead run); a
video output is checked (decodable; the source's size, duration and frame count unless the condition declares in
``changes`` that it changes them) and refused with the reason; a name vdg or another module already declares is
refused by the ``vdg`` command and left out, with a logged warning, inside lmms-eval; so is a condition that takes a
tag of vdg's core tables (``ladder``, ``crf``, ``probe``, ``text``, ``tracking``) or another answer format.

A ``text_condition`` of family ``CIRCULAR`` declaring a positive integer ``params[ROTATION]`` (``k``) is read by
the report's ``circular`` table as the rotation of the options by ``k`` positions (vdg's own ``options_rotated<k>``).

The cache key holds a digest of the declaring module's source and of the module defining the transform: an edit there
builds new videos. A helper module they import, or a library's version, is not in it: change ``params`` (part of the
key) when those change what the transform does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vdg_tasks.vocabulary.conditions import (
    CIRCULAR,
    DECLARABLE_MEASURES,
    ROTATION,
    Change,
    Condition,
    Measure,
    Picture,
    Requirement,
    TransformContext,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "CIRCULAR",
    "DECLARABLE_MEASURES",
    "ROTATION",
    "Condition",
    "Context",
    "ContainerTransform",
    "FrameTransform",
    "Measure",
    "TextTransform",
    "FilterGraph",
    "Picture",
    "container_condition",
    "filter_condition",
    "frame_condition",
    "text_condition",
]


#: What a transform is told about the item it changes: ``params``, ``seed`` (from the condition's name and the video's
#: or question's id), ``index`` (the frame's) and ``video_stream`` (the stream the models decode); ``rng()`` gives a
#: numpy Generator seeded by them.
Context = TransformContext


FrameTransform = Callable[["np.ndarray", Context], "np.ndarray"]
ContainerTransform = Callable[[Path, Path, Context], None]
TextTransform = Callable[[dict[str, Any], Context], Mapping[str, Any]]
#: A filter condition's graph: the chain for the frames described by a ``Picture`` (a fixed string is wrapped in one).
FilterGraph = Callable[[Picture, Context], str]


def _declared(
    name: str,
    modality: str,
    transform: str,
    apply: Callable[..., Any],
    description: str,
    family: str,
    params: Mapping[str, Any] | None,
    requires: Iterable[Requirement],
    protocols: Iterable[str],
    tagged: bool,
    changes: Iterable[Change],
    beside: str | None,
    measure: Measure,
    beside_reading: str,
    text: str = "none",
) -> Condition:
    if not callable(apply):
        raise TypeError(f"condition {name!r}: its transform must be callable, got {apply!r}")
    return Condition(
        name,
        modality,  # type: ignore[arg-type]
        transform,  # type: ignore[arg-type]
        description,
        family,
        dict(params or {}),
        text=text,  # type: ignore[arg-type]
        requires=frozenset(requires),
        protocols=tuple(protocols),
        tagged=tagged,
        in_main_tag=False,
        apply=apply,
        changes=frozenset(changes),
        beside=beside,
        measure=measure,
        beside_reading=beside_reading,
    )


def frame_condition(
    name: str,
    transform: FrameTransform,
    *,
    description: str,
    family: str,
    params: Mapping[str, Any] | None = None,
    requires: Iterable[Requirement] = (),
    protocols: Iterable[str] = (),
    tagged: bool = True,
    changes: Iterable[Change] = (),
    beside: str | None = None,
    measure: Measure = "difference",
    beside_reading: str = "",
) -> Condition:
    """A condition that changes each frame: ``transform(frame, context)`` (module docstring).

    The fields are those of vdg's own conditions (``vdg_tasks.vocabulary.conditions.Condition``): ``family`` is its
    tag (``<benchmark>_vdg_<family>``), ``params`` its parameters, ``requires`` what a benchmark's docs must carry,
    ``changes`` what its output may change besides the pixels (``"size"``), ``beside`` a condition the report
    places it beside (a ladder rung such as ``"single"``, or ``"black"`` as ``mute``). How the report reads it:
    ``measure`` (``DECLARABLE_MEASURES``: ``difference`` against orig in table ``added_conditions``, or a probe's
    measure in table ``probes``) and ``beside_reading``, what its two differences mean beside the other condition
    (a template of ``own`` and ``beside``).
    """
    return _declared(
        name, "video", "frames", transform, description, family, params, requires, protocols, tagged, changes, beside,
        measure, beside_reading,
    )  # fmt: skip


class _FixedGraph:
    """A graph that is the same string for every picture."""

    def __init__(self, chain: str) -> None:
        self.chain = chain

    def __call__(self, picture: Picture, context: Context) -> str:
        return self.chain

    def __repr__(self) -> str:
        return f"graph {self.chain!r}"


def filter_condition(
    name: str,
    graph: str | FilterGraph,
    *,
    description: str,
    family: str,
    params: Mapping[str, Any] | None = None,
    requires: Iterable[Requirement] = (),
    protocols: Iterable[str] = (),
    tagged: bool = True,
    beside: str | None = None,
    measure: Measure = "difference",
    beside_reading: str = "",
) -> Condition:
    """A condition whose frames go through an FFmpeg filter chain: ``graph`` (module docstring), a string or
    ``graph(picture, context) -> str`` for a chain that depends on the frames' size, format or range; the fields as
    ``frame_condition``'s (a chain keeps the size: no ``changes``). Put what the chain does in ``params`` (a kernel's
    version, say): they are part of the cache key, the filter's FFmpeg build is not."""
    if isinstance(graph, str):
        # parse_chain (PyAV, ~0.3 s) is left to the first render: the registry reads this module on every vdg command
        if not graph.strip():
            raise ValueError(f"condition {name!r}: its filter graph is empty")
        graph = _FixedGraph(graph)
    return _declared(
        name, "video", "filter", graph, description, family, params, requires, protocols, tagged, (), beside,
        measure, beside_reading,
    )  # fmt: skip


def container_condition(
    name: str,
    transform: ContainerTransform,
    *,
    description: str,
    family: str,
    params: Mapping[str, Any] | None = None,
    requires: Iterable[Requirement] = (),
    protocols: Iterable[str] = (),
    tagged: bool = True,
    changes: Iterable[Change] = (),
    beside: str | None = None,
    measure: Measure = "difference",
    beside_reading: str = "",
) -> Condition:
    """A condition that writes a whole file: ``transform(source, destination, context)`` (module docstring); the
    fields as ``frame_condition``'s."""
    return _declared(
        name, "video", "container", transform, description, family, params, requires, protocols, tagged, changes,
        beside, measure, beside_reading,
    )  # fmt: skip


def text_condition(
    name: str,
    transform: TextTransform,
    *,
    description: str,
    family: str,
    params: Mapping[str, Any] | None = None,
    requires: Iterable[Requirement] = (),
    protocols: Iterable[str] = (),
    tagged: bool = True,
    beside: str | None = None,
    measure: Measure = "difference",
    beside_reading: str = "",
) -> Condition:
    """A condition that changes the question: ``transform(doc, context) -> doc`` (module docstring); the video is
    the source's; the fields as ``frame_condition``'s."""
    return _declared(
        name, "text", "identity", transform, description, family, params, requires, protocols, tagged, (), beside,
        measure, beside_reading, "doc",
    )  # fmt: skip
