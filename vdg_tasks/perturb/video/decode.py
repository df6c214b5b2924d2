"""Reading a source: its frame timeline by demuxing (with truncation checks), chosen frames by seeking.

Nothing here raises :class:`~vdg_tasks.perturb.video.probe.VideoDecodeError`: callers wrap what goes wrong
with the file's name.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import av
import numpy as np
from av.sidedata.sidedata import Type as SideDataType

__all__ = ["Timeline", "checked_timeline", "decode_targets", "display_matrix", "first_frame", "scan_timeline"]

#: A demuxed timeline may fall short of the declared duration by this many frame periods (rounding, edit lists).
DURATION_SLACK_FRAMES = 2
_IDENTITY_MATRIX = (1 << 16, 0, 0, 0, 1 << 16, 0, 0, 0, 1 << 30)
#: libavformat's ``AVFMT_TS_DISCONT``: the format allows timestamp jumps (mpegts, mpeg (PS), hls, ogg, live_flv, ...).
_AVFMT_TS_DISCONT = 0x0200


@dataclass(frozen=True)
class Timeline:
    """A video stream's frames as the demuxer lists them (nothing decoded)."""

    pts: np.ndarray
    """Presentation timestamp of every frame, in display order (stream time base)."""
    key_pts: np.ndarray
    """Presentation timestamps of the key frames, ascending."""


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
    n_all = 0
    start: int | None = None
    end: int | None = None
    for packet in container.demux(stream):
        if packet.size == 0:  # PyAV's flush packet; or a dropped frame (AVI), listed but carrying no picture
            n_all += packet.dts is not None
            continue
        if packet.is_corrupt or (packet.pos is not None and packet.pos >= 0 and packet.pos + packet.size > file_size):
            raise ValueError(f"the video packet at byte {packet.pos} is cut short: the file is truncated")
        t = packet.pts if packet.pts is not None else packet.dts
        if t is None:
            raise ValueError("a video packet has no timestamp")
        n_all += 1
        start = t if start is None else min(start, t)
        end = max(end if end is not None else t, t + max(int(packet.duration or 0), 0))
        if packet.is_discard:  # a frame an edit list hides
            continue
        pts.append(t)
        if packet.is_keyframe:
            keys.append(t)
    if not pts:
        raise ValueError("no video packets")
    listed = int(stream.frames or 0)
    if listed > n_all:
        raise ValueError(f"the container lists {listed} video frames but only {n_all} are in the file: truncated")
    declared = _declared_seconds(stream)
    rate = stream.average_rate or stream.guessed_rate
    if declared is not None and rate and stream.time_base:
        covered = float((end - start) * stream.time_base)
        slack = DURATION_SLACK_FRAMES / float(rate) + float(stream.time_base)
        if covered < declared - slack:
            raise ValueError(
                f"the video packets cover {covered:.3f} s of the declared {declared:.3f} s: the file is truncated"
            )
    return Timeline(np.sort(np.asarray(pts, dtype=np.int64)), np.sort(np.asarray(keys, dtype=np.int64)))


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
    jump (MPEG-TS/PS, including a 33-bit wrap), by byte 0, as ffplay does.

    Raises:
        ValueError: a target cannot be decoded.
    """
    stream.thread_type = "FRAME"
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
