"""FFmpeg filter graphs run on decoded frames: the ``filter`` transform of conditions declared through
``vdg_tasks.extend.filter_condition``.

A condition's graph is a linear chain in FFmpeg's ``-vf`` syntax (``name=opt=value:opt=value,name2=...``; no labels,
no ``;``), written for the picture it is given (:class:`~vdg_tasks.vocabulary.conditions.Picture`: size, pixel
format, chroma subsampling and range). It runs through libavfilter (PyAV's ``av.filter.Graph``) on the frames in the
pixel format they are encoded in (``yuv420p`` or ``yuv444p`` in the source's range; on a task that gives frames,
``gbrp``: RGB in planes), with no RGB round trip and no Python per pixel. It must give one frame of the same size and
format for every frame it is given (checked).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from fractions import Fraction

import av
import numpy as np

from vdg_tasks.vocabulary.conditions import Condition, Picture, TransformContext

__all__ = ["FrameFilter", "filter_rgb", "filtered", "frame_filter", "graph_for", "parse_chain", "picture_of"]

#: The chroma subsampling (log2 of the horizontal and vertical factors) of the formats a graph is given.
_CHROMA_SHIFT = {"yuv420p": (1, 1), "yuv422p": (1, 0), "yuv444p": (0, 0), "gbrp": (0, 0)}


def picture_of(width: int, height: int, pix_fmt: str, full_range: bool) -> Picture:
    """The :class:`Picture` a graph is written for."""
    if pix_fmt not in _CHROMA_SHIFT:
        raise ValueError(f"a filter graph is run on {', '.join(_CHROMA_SHIFT)} frames, not {pix_fmt}")
    return Picture(width, height, pix_fmt, _CHROMA_SHIFT[pix_fmt], full_range)


def parse_chain(chain: str) -> list[tuple[str, str]]:
    """``"a=x=1:y=2,b"`` -> ``[("a", "x=1:y=2"), ("b", "")]``: a linear chain of filters, split at the commas and the
    first ``=`` of each (a comma or ``=`` escaped with a backslash or inside single quotes stays in its options).

    Raises:
        ValueError: an empty chain or filter, a label (``[x]``) or a ``;`` (graphs that are not one chain).
    """
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in chain:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == "'":
            current.append(char)
            quoted = not quoted
        elif char == "," and not quoted:
            parts.append("".join(current).strip())
            current = []
        elif char in "[];" and not quoted:
            raise ValueError(f"filter graph {chain!r}: only a linear chain is taken (no labels, no ';')")
        else:
            current.append(char)
    parts.append("".join(current).strip())
    if not all(parts):
        raise ValueError(f"filter graph {chain!r} has an empty filter")
    filters = []
    for part in parts:
        name, _, options = part.partition("=")
        if name.strip() not in av.filter.filters_available:
            raise ValueError(f"filter graph {chain!r}: FFmpeg has no filter {name.strip()!r}")
        filters.append((name.strip(), options))
    return filters


#: A chain's frames: each frame in, every frame the graph has ready out (``None`` in: flush).
FrameFilter = Callable[["av.VideoFrame | None"], list["av.VideoFrame"]]


def frame_filter(chain: str, picture: Picture, time_base: Fraction) -> FrameFilter:
    """A configured graph running ``chain`` on frames of ``picture``'s size and format.

    Each output is checked to keep the picture's size and format, and is given its input's timestamp and range (a
    graph may set neither). Raises ``ValueError`` for a chain FFmpeg does not accept (its message).
    """
    graph = av.filter.Graph()
    node = graph.add_buffer(
        width=picture.width, height=picture.height, format=av.VideoFormat(picture.pix_fmt), time_base=time_base
    )
    try:
        for name, options in parse_chain(chain):
            added = graph.add(name, options) if options else graph.add(name)
            node.link_to(added)
            node = added
        sink = graph.add("buffersink")
        node.link_to(sink)
        graph.configure()
    except av.FFmpegError as err:
        raise ValueError(f"filter graph {chain!r} is refused by FFmpeg: {err}") from err
    pending: list[tuple[int, int]] = []  # (pts, colour range) of each frame given, in order

    def run(frame: av.VideoFrame | None) -> list[av.VideoFrame]:
        if frame is not None:
            pending.append((int(frame.pts or 0), frame.color_range))
        graph.vpush(frame)
        out = []
        while True:
            try:
                got = graph.vpull()
            except (av.BlockingIOError, av.EOFError):
                break
            if (got.width, got.height, got.format.name) != (picture.width, picture.height, picture.pix_fmt):
                raise ValueError(
                    f"filter graph {chain!r} gave a {got.width}x{got.height} {got.format.name} frame for a "
                    f"{picture.width}x{picture.height} {picture.pix_fmt} one: it must keep the size and format"
                )
            if not pending:
                raise ValueError(f"filter graph {chain!r} gave more frames than it was given")
            got.pts, got.color_range = pending.pop(0)
            got.time_base = time_base
            out.append(got)
        return out

    return run


def _graph_of(condition: Condition, picture: Picture, context: TransformContext) -> str:
    apply = condition.apply
    assert apply is not None  # Condition checks a filter transform has one
    chain = apply(picture, context)
    if not isinstance(chain, str) or not chain.strip():
        raise ValueError(f"condition {condition.name}: its graph function returned {chain!r}, not a filter chain")
    return chain


def graph_for(condition: Condition, picture: Picture, seed: int) -> str:
    """``condition``'s filter chain for ``picture`` (a video's: ``index`` 0)."""
    return _graph_of(condition, picture, TransformContext(condition.params, seed))


def filter_rgb(condition: Condition, rgb: np.ndarray, seed: int, index: int) -> np.ndarray:
    """One ``(H, W, 3)`` ``uint8`` RGB frame (a task that gives frames) through ``condition``'s graph, run on ``gbrp``
    (RGB in planes, full range, no chroma subsampling; the conversion is lossless)."""
    height, width = rgb.shape[:2]
    picture = picture_of(width, height, "gbrp", True)
    chain = _graph_of(condition, picture, TransformContext(condition.params, seed, index))
    run = frame_filter(chain, picture, Fraction(1, 1))
    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24").reformat(format="gbrp")
    frame.pts = 0
    out = [*run(frame), *run(None)]
    if len(out) != 1:
        raise ValueError(f"condition {condition.name}: its filter graph gave {len(out)} frames for one")
    return np.asarray(out[0].to_ndarray(format="rgb24"))


def filtered(run: FrameFilter, frames: Iterator[av.VideoFrame]) -> Iterator[av.VideoFrame]:
    """``frames`` through ``run``, flushed at the end; the count is checked by the caller."""
    for frame in frames:
        yield from run(frame)
    yield from run(None)
