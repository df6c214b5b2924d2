"""Reading a source: its frame timeline by demuxing (with truncation checks), chosen frames by seeking.

Nothing here raises :class:`~vdg_tasks.perturb.video.probe.VideoDecodeError`: callers wrap what goes wrong
with the file's name.
"""

from __future__ import annotations

import contextlib
import os
import re
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

import av
import numpy as np
from av.sidedata.sidedata import Type as SideDataType

__all__ = [
    "Timeline",
    "checked_timeline",
    "decode_targets",
    "display_matrix",
    "first_frame",
    "presentation",
    "presented_seconds",
    "scan_timeline",
]

#: A demuxed timeline may fall short of the declared duration by this many frame periods (rounding, edit lists).
DURATION_SLACK_FRAMES = 2
_IDENTITY_MATRIX = (1 << 16, 0, 0, 0, 1 << 16, 0, 0, 0, 1 << 30)
#: libavformat's ``AVFMT_TS_DISCONT``: the format allows timestamp jumps (mpegts, mpeg (PS), hls, ogg, live_flv, ...).
_AVFMT_TS_DISCONT = 0x0200


@dataclass(frozen=True)
class Timeline:
    """A video stream's frames as the demuxer lists them (nothing decoded)."""

    pts: np.ndarray
    """Presentation timestamp of every frame, in display order (stream time base). Where the timestamps restart
    (spliced MPEG-TS: see ``restarts``) each run is in display order and the runs follow in file order."""
    key_pts: np.ndarray
    """Presentation timestamps of the key frames, ascending."""
    seconds: float | None = None
    """How long the frames are presented (:func:`presented_seconds`); ``None`` where not measured."""
    restarts: int = 0
    """How often the decode timestamps go back (byte-concatenated transport streams): frames are then told apart by
    their place in the stream, not by timestamp, and :func:`decode_targets` decodes in order from the start."""


@dataclass(frozen=True)
class _Entry:
    """One frame's timestamps (stream time base)."""

    dts: int
    pts: int
    duration: int


def presented_seconds(
    entries: Sequence[_Entry], time_base: Fraction, rate: Fraction | None, splices: bool = False
) -> tuple[float, int]:
    """(seconds the frames are presented, number of timestamp restarts), measured, never declared.

    A run of frames lasts from its first timestamp (not 0: a stream may start at 10 s) to the end of its last frame
    (a jump inside the run counts, as decord's and torchcodec's timestamps show it). With ``splices`` (a format whose
    timestamps may jump: MPEG-TS/PS), where the decode timestamps go back (a transport stream concatenated to
    another) a new run starts; the runs' lengths add up.
    """
    if not entries:
        return 0.0, 0
    period = int(round(1 / (float(rate) * float(time_base)))) if rate and time_base else 0
    total = 0
    restarts = 0
    start, end = entries[0].pts, entries[0].pts
    last_dts = entries[0].dts
    for e in entries:
        frame_end = e.pts + (e.duration if e.duration > 0 else period)
        if splices and e.dts < last_dts:  # a new run: the next transport stream of a concatenation
            total += end - start
            restarts += 1
            start, end = e.pts, frame_end
        last_dts = e.dts
        start, end = min(start, e.pts), max(end, frame_end)
    total += end - start
    return float(total * time_base), restarts


def _declared_ts_disc(container: object) -> bool:
    """Whether ``container``'s format allows timestamp jumps (MPEG-TS/PS): its durations are estimates, not declared."""
    fmt = getattr(container, "format", None)
    return bool(fmt is not None and int(getattr(fmt, "flags", 0)) & _AVFMT_TS_DISCONT)


def _declared_seconds(stream: av.video.stream.VideoStream) -> float | None:
    """The video stream's own declared duration: mp4's track duration, or Matroska's per-stream DURATION tag."""
    if stream.duration and stream.time_base:
        return float(stream.duration * stream.time_base)
    tag = (stream.metadata or {}).get("DURATION", "")
    m = re.fullmatch(r"(\d+):(\d\d):(\d\d(?:\.\d+)?)", tag.strip())
    if m:
        return int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3])
    return None


def scan_timeline(
    container: av.container.InputContainer, stream: av.video.stream.VideoStream, file_size: int
) -> Timeline:
    """Demux every packet of ``stream`` (no decoding) and check the data is all there.

    Raises:
        ValueError: no video packet; a packet is cut short or lies beyond ``file_size`` bytes; fewer
            packets than the container's frame count; or the packets cover less than the stream's
            declared duration (all signs of a truncated file).
    """
    pts: list[int] = []
    keys: list[int] = []
    entries: list[_Entry] = []
    n_all = 0
    splices = _declared_ts_disc(container)
    corrupt_at: int | None = None  # a corrupt packet in a transport stream: a splice if more follow, else the cut end
    for packet in container.demux(stream):
        if packet.size == 0:  # PyAV's flush packet; or a dropped frame (AVI), listed but carrying no picture
            n_all += packet.dts is not None
            continue
        if packet.pos is not None and packet.pos >= 0 and packet.pos + packet.size > file_size:
            raise ValueError(f"the video packet at byte {packet.pos} is cut short: the file is truncated")
        if corrupt_at is not None:
            corrupt_at = None  # data follows the corrupt packet: a continuity break at a splice, not a cut
        if packet.is_corrupt:
            if not splices:
                raise ValueError(f"the video packet at byte {packet.pos} is cut short: the file is truncated")
            corrupt_at = packet.pos if packet.pos is not None else -1
        t = packet.pts if packet.pts is not None else packet.dts
        if t is None:
            raise ValueError("a video packet has no timestamp")
        n_all += 1
        if packet.is_discard:  # a frame an edit list hides
            continue
        entries.append(_Entry(packet.dts if packet.dts is not None else t, t, max(int(packet.duration or 0), 0)))
        pts.append(t)
        if packet.is_keyframe:
            keys.append(t)
    if corrupt_at is not None:
        raise ValueError(f"the video packet at byte {corrupt_at} is cut short: the file is truncated")
    if not pts:
        raise ValueError("no video packets")
    listed = int(stream.frames or 0)
    if listed > n_all:
        raise ValueError(f"the container lists {listed} video frames but only {n_all} are in the file: truncated")
    rate = stream.average_rate or stream.guessed_rate
    seconds, restarts = presented_seconds(entries, Fraction(stream.time_base or 0), rate, splices)
    declared = None if splices else _declared_seconds(stream)
    if declared is not None and rate and stream.time_base:
        # A declared duration is a length (mp4's track duration) or an end time (Matroska's DURATION tag, counted
        # from 0 even where the stream starts at 10 s): the packets must reach one of them.
        reached = float(max(e.pts + e.duration for e in entries) * stream.time_base)
        slack = DURATION_SLACK_FRAMES / float(rate) + float(stream.time_base)
        if max(seconds, reached) < declared - slack:
            raise ValueError(
                f"the video packets cover {seconds:.3f} s of the declared {declared:.3f} s: the file is truncated"
            )
    return _timeline(entries, keys, seconds, restarts)


def _timeline(entries: Sequence[_Entry], keys: list[int], seconds: float | None, restarts: int) -> Timeline:
    """The frames in display order: sorted by timestamp, or, where the timestamps restart, sorted within each run."""
    if not restarts:
        pts = np.sort(np.asarray([e.pts for e in entries], dtype=np.int64))
    else:
        runs: list[list[int]] = [[]]
        last_dts = None
        for e in entries:
            if last_dts is not None and e.dts < last_dts:
                runs.append([])
            last_dts = e.dts
            runs[-1].append(e.pts)
        pts = np.concatenate([np.sort(np.asarray(run, dtype=np.int64)) for run in runs])
    return Timeline(pts, np.sort(np.asarray(keys, dtype=np.int64)), seconds, restarts)


def presentation(container: av.container.InputContainer, stream: av.video.stream.VideoStream) -> tuple[int, float]:
    """(frames that play, seconds they are presented: :func:`presented_seconds`) by demuxing, without the checks of
    :func:`scan_timeline` (a file whose index survived its data is counted as the index says)."""
    entries: list[_Entry] = []
    for packet in container.demux(stream):
        if packet.size == 0 or packet.is_discard:
            continue
        t = packet.pts if packet.pts is not None else packet.dts
        if t is None:
            continue
        entries.append(_Entry(packet.dts if packet.dts is not None else t, t, max(int(packet.duration or 0), 0)))
    rate = stream.average_rate or stream.guessed_rate
    return len(entries), presented_seconds(
        entries, Fraction(stream.time_base or 0), rate, _declared_ts_disc(container)
    )[0]


def decode_targets(
    container: av.container.InputContainer,
    stream: av.video.stream.VideoStream,
    timeline: Timeline,
    indices: Sequence[int],
) -> Iterator[tuple[int, av.VideoFrame]]:
    """Yield ``(index, frame)`` for the given ascending frame indices, decoding only what they need.

    Each target is reached by seeking to the key frame before it and decoding forward (frames before
    the target that no other frame references are skipped, not decoded); a target in the GOP being
    decoded is reached by decoding on. At most one decoded frame is alive at a time.

    A seek that lands after the target (an imprecise index; MPEG-TS, whose demuxer seeks by decode
    timestamps so that a key frame's own pts lands on the next one) is retried from the key frame
    before, then from the start of the stream: by timestamp, then, for formats whose timestamps may
    jump (MPEG-TS/PS, including a 33-bit wrap), by byte 0, as ffplay does. Where the timestamps restart
    (``timeline.restarts``: transport streams concatenated byte for byte) the stream is decoded in order from the
    start and frame ``n`` is the ``n``-th frame decoded.

    Raises:
        ValueError: a target cannot be decoded.
    """
    stream.thread_type = "FRAME"
    if timeline.restarts:  # timestamps repeat: a frame is known by its place in the stream
        yield from _decode_in_order(container, stream, indices)
        return
    ctx = stream.codec_context
    frame_pts, key_pts = timeline.pts, timeline.key_pts
    frames: Iterator[av.VideoFrame] | None = None
    last_pts: int | None = None  # pts of the last frame the current decode produced
    target_pts = 0
    byte_rewind = _seeks_by_byte(container)

    def decode_from(skip_nonref: bool) -> Iterator[av.VideoFrame]:
        for packet in container.demux(stream):
            if skip_nonref and packet.size and packet.pts is not None and packet.pts < target_pts:
                ctx.skip_frame = "NONREF"
            else:
                ctx.skip_frame = "DEFAULT"
            yield from packet.decode()

    for index in indices:
        target_pts = int(frame_pts[min(int(index), len(frame_pts) - 1)])
        k = int(np.searchsorted(key_pts, target_pts, side="right")) - 1
        seek_candidates: list[int | None] = [int(key_pts[j]) for j in range(k, -1, -1)] if k >= 0 else []
        seek_candidates.append(int(frame_pts[0]))
        if byte_rewind:
            seek_candidates.append(None)
        gop_start = seek_candidates[0]
        found: av.VideoFrame | None = None
        if frames is not None and last_pts is not None and gop_start is not None and gop_start <= last_pts < target_pts:
            found = _first_at_or_after(frames, target_pts)
        for attempt, seek_pts in enumerate(seek_candidates if found is None else []):
            if seek_pts is None:
                if not _seek_start_by_byte(container):
                    continue
            else:
                container.seek(seek_pts, backward=True, any_frame=False, stream=stream)
            frames = decode_from(skip_nonref=attempt == 0)  # retries decode everything
            first = next(frames, None)
            if first is None or first.pts is None or first.pts > target_pts:
                continue  # landed after the target: seek further back
            found = first if first.pts == target_pts else _first_at_or_after(frames, target_pts)
            if found is not None:
                break
        if found is None:
            raise ValueError(f"frame {index} (pts {target_pts}) could not be decoded")
        last_pts = found.pts
        yield int(index), found
        found = None


def _decode_in_order(
    container: av.container.InputContainer, stream: av.video.stream.VideoStream, indices: Sequence[int]
) -> Iterator[tuple[int, av.VideoFrame]]:
    """``(index, frame)`` for ascending ``indices``, counting the frames decoded from the start of the stream (the
    ``n``-th frame decoded is frame ``n``, as decord and torchcodec present a spliced transport stream)."""
    wanted = [int(i) for i in indices]
    if not (_seeks_by_byte(container) and _seek_start_by_byte(container)):
        container.seek(0, backward=True, any_frame=False, stream=stream)
    at = n = 0
    for frame in container.decode(stream):
        while at < len(wanted) and wanted[at] <= n:
            yield wanted[at], frame
            at += 1
        if at == len(wanted):
            return
        n += 1
    if at < len(wanted):
        raise ValueError(f"frame {wanted[at]} could not be decoded (the stream decodes to {n} frames)")


def _first_at_or_after(frames: Iterator[av.VideoFrame], target_pts: int) -> av.VideoFrame | None:
    for frame in frames:
        if frame.pts is not None and frame.pts >= target_pts:
            return frame
    return None


def _seeks_by_byte(container: av.container.InputContainer) -> bool:
    """Whether the start of ``container`` is reached by seeking to byte 0 (ffplay's ``seek_by_bytes`` rule).

    True for formats whose timestamps may jump (``AVFMT_TS_DISCONT``: MPEG-TS and MPEG-PS, whose
    33-bit timestamps wrap), Ogg excepted; there a timestamp seek to the first frame can land later.
    """
    return bool(container.format.flags & _AVFMT_TS_DISCONT) and container.format.name != "ogg"


def _seek_start_by_byte(container: av.container.InputContainer) -> bool:
    """Seek to byte 0; False (nothing done) where the format cannot."""
    try:
        container.seek(0, unsupported_byte_offset=True)
    except (av.FFmpegError, OSError):
        return False
    return True


def first_frame(container: av.container.InputContainer, stream: av.video.stream.VideoStream) -> av.VideoFrame:
    """The first frame ``stream`` decodes to (from the start of the file).

    Raises:
        ValueError: no frame could be decoded.
    """
    if not (_seeks_by_byte(container) and _seek_start_by_byte(container)):
        container.seek(0, backward=True, any_frame=False, stream=stream)
    for frame in container.decode(stream):
        return frame
    raise ValueError("no frame could be decoded")


def display_matrix(frame: av.VideoFrame) -> tuple[int, ...] | None:
    """The 3x3 display matrix (9 ints, FFmpeg's and mp4's ``tkhd`` layout) a decoded frame carries.

    ``None`` when there is none or it is the identity. Phones store a rotation there instead of
    rotating the pictures; FFmpeg attaches the container's matrix to every decoded frame.
    """
    for side in frame.side_data:
        if side.type == SideDataType.DISPLAYMATRIX:
            values = struct.unpack("=9i", bytes(side)[:36])
            return None if values == _IDENTITY_MATRIX else values
    return None


def checked_timeline(
    path: str | os.PathLike[str], container: av.container.InputContainer, stream: av.video.stream.VideoStream
) -> Timeline:
    """``scan_timeline``'s checked timeline, also for an mp4/mov whose edit list starts on a key frame.

    There FFmpeg's mov demuxer drops the samples before that key frame from its index, so fewer
    packets come than the container's frame count and ``scan_timeline`` says truncated. Such a file is
    checked again with its edit list ignored (every sample, all of which must be in the file); the
    timeline is then the frames that play.
    """
    try:
        return scan_timeline(container, stream, os.path.getsize(path))
    except ValueError:
        if not container.format.name.startswith("mov"):
            raise
        with av.open(os.fspath(path), "r", options={"ignore_editlist": "1"}) as whole:
            scan_timeline(whole, whole.streams[stream.index], os.path.getsize(path))  # raises if truly truncated
    container.seek(0, backward=True, any_frame=False, stream=stream)
    pts: list[int] = []
    keys: list[int] = []
    for packet in container.demux(stream):
        if packet.size == 0 or packet.is_discard:
            continue
        t = packet.pts if packet.pts is not None else packet.dts
        if t is None:
            raise ValueError("a video packet has no timestamp")
        pts.append(t)
        if packet.is_keyframe:
            keys.append(t)
    if not pts:
        raise ValueError("no video packets")
    return Timeline(np.sort(np.asarray(pts, dtype=np.int64)), np.sort(np.asarray(keys, dtype=np.int64)))


#: FFmpeg's colour range values (AVCOL_RANGE_*): limited (16-235 luma) and full (0-255).
RANGE_UNSPECIFIED, RANGE_LIMITED, RANGE_FULL = 0, 1, 2


def is_full_range(color_range: int | None, pix_fmt: str | None) -> bool:
    """Whether samples tagged ``color_range`` in ``pix_fmt`` are full range (``yuvj*`` formats always are)."""
    return (pix_fmt or "").startswith("yuvj") or colour_tag(color_range) == RANGE_FULL


def colour_tag(value: int | None) -> int | None:
    """A colour field as an int, or ``None`` when PyAV gives none or an unmapped value."""
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


#: FFmpeg's "unspecified" value of each colour field (AVCOL_SPC/PRI/TRC_UNSPECIFIED, AVCOL_RANGE_UNSPECIFIED).
_UNSPECIFIED_COLOR = {"colorspace": 2, "color_range": 0, "color_primaries": 2, "color_trc": 2}


@dataclass(frozen=True)
class Colour:
    """A stream's colour description: FFmpeg's AVCOL_* values, ``None`` where unspecified."""

    colorspace: int | None = None
    """Matrix coefficients (AVCOL_SPC_*)."""
    color_range: int | None = None
    """Sample range: 1 limited, 2 full (a ``yuvj*`` source counts as full even when untagged)."""
    color_primaries: int | None = None
    """Colour primaries (AVCOL_PRI_*)."""
    color_trc: int | None = None
    """Transfer characteristic (AVCOL_TRC_*)."""

    @classmethod
    def of(cls, ctx: av.codec.context.CodecContext) -> Colour:
        """The colour description of a decoder's codec context."""
        tags: dict[str, int | None] = {}
        for name, unspecified in _UNSPECIFIED_COLOR.items():
            value = colour_tag(getattr(ctx, name, None))
            tags[name] = None if value == unspecified else value
        if is_full_range(tags["color_range"], getattr(ctx, "pix_fmt", None)):
            tags["color_range"] = RANGE_FULL
        return cls(**tags)

    @property
    def full_range(self) -> bool:
        return self.color_range == RANGE_FULL

    @property
    def frame_range(self) -> int:
        """The ``color_range`` to give a frame in this range (AVCOL_RANGE_*)."""
        return self.color_range or RANGE_UNSPECIFIED

    @property
    def black_luma(self) -> int:
        """The luma of black: 0 in full range, 16 in limited (or unspecified, read as limited)."""
        return 0 if self.full_range else 16

    def apply(self, ctx: av.codec.context.CodecContext) -> None:
        """Tag an encoder with this description (before it opens: libx264 reads the range there)."""
        for name in _UNSPECIFIED_COLOR:
            value = getattr(self, name)
            if value is not None:
                with contextlib.suppress(AttributeError, TypeError, ValueError):  # a value PyAV cannot map
                    setattr(ctx, name, value)


def sample_aspect_ratio(stream: av.video.stream.VideoStream) -> Fraction | None:
    """The stream's sample (pixel) aspect ratio: the container's, else the codec's; ``None`` for square or unset."""
    for value in (getattr(stream, "sample_aspect_ratio", None), stream.codec_context.sample_aspect_ratio):
        if value and value.numerator > 0 and value.denominator > 0 and value != 1:
            return Fraction(value)
        if value == 1:
            return None
    return None
