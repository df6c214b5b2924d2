"""Read a video's geometry, rate and frame count without decoding it; check a source thoroughly."""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction

import av

from vdg_tasks.conditions import DEFAULT_KEY_FRAMES

from .decode import decode_targets, scan_timeline
from .layout import key_frame_indices

__all__ = ["VideoDecodeError", "VideoInfo", "probe", "validate", "video_stream"]

PathLike = str | os.PathLike[str]


class VideoDecodeError(Exception):
    """A video could not be opened, demuxed, decoded or re-encoded; the message names the file."""


@dataclass(frozen=True)
class VideoInfo:
    """What every vdg transform keeps equal between a source and its perturbed copy."""

    width: int
    """Coded picture width in pixels."""
    height: int
    """Coded picture height in pixels."""
    fps: Fraction
    """The video stream's average frame rate."""
    n_frames: int
    """Number of video frames (the container's count when it has one, else counted by demuxing)."""
    duration: float
    """Seconds, ``n_frames / fps``."""
    stream_index: int = 0
    """Index (among all the file's streams) of the video stream read: ``video_stream``'s choice."""


def _fail(path: PathLike, what: str, err: BaseException | None = None) -> VideoDecodeError:
    detail = f": {err}" if err is not None else ""
    return VideoDecodeError(f"{os.fspath(path)}: {what}{detail}")


def _open(path: PathLike) -> av.container.InputContainer:
    if not os.path.isfile(path):
        raise _fail(path, "no such video file")
    try:
        return av.open(os.fspath(path), "r")
    except (av.FFmpegError, OSError, ValueError) as err:
        raise _fail(path, "cannot open as a media container", err) from err


def _decord_rank(stream: av.video.stream.VideoStream) -> tuple[bool, int, int, int]:
    """How decord's FFmpeg (4.x ``av_find_best_stream``) ranks a video stream: not marked for the hearing or
    visually impaired, then frames seen (capped at 5: a cover picture loses to a video), then bit rate, then
    frames; the first of equals wins. (FFmpeg 5+ ranks a ``default`` stream first, which decord does not.)"""
    impaired = stream.disposition & (av.stream.Disposition.hearing_impaired | av.stream.Disposition.visual_impaired)
    frames = int(stream.frames or 0)
    return (not impaired, min(5, frames), int(stream.bit_rate or 0), frames)


def video_stream(container: av.container.InputContainer, path: PathLike) -> av.video.stream.VideoStream:
    """The video stream the models' decoder reads: decord's choice (``_decord_rank``; lmms-eval's video models read
    through decord), not simply the first, so ``orig`` and every condition show the same stream."""
    streams = list(container.streams.video)
    if not streams:
        raise _fail(path, "has no video stream")
    return max(streams, key=_decord_rank)  # max keeps the first of equal ranks, as FFmpeg does


def _count_packets(container: av.container.InputContainer, stream: av.video.stream.VideoStream) -> int:
    """Frames counted by demuxing (no decoding); flush packets and edit-list-hidden frames are not frames."""
    return sum(1 for packet in container.demux(stream) if packet.size > 0 and not packet.is_discard)


def probe(path: PathLike) -> VideoInfo:
    """Size, rate and frame count of the video stream of ``path`` (``video_stream``); no frame is decoded.

    Raises:
        VideoDecodeError: the file is missing, is not a readable container, or has no video stream.
    """
    try:
        return _probe(path)
    except VideoDecodeError:
        raise
    except Exception as err:  # whatever a damaged file makes FFmpeg or PyAV raise
        raise _fail(path, "probing failed", err) from err


def _probe(path: PathLike) -> VideoInfo:
    container = _open(path)
    try:
        stream = video_stream(container, path)
        width, height = stream.codec_context.width, stream.codec_context.height
        if width <= 0 or height <= 0:
            raise _fail(path, f"video stream has no picture size ({width}x{height})")
        n_frames = int(stream.frames or 0)
        if n_frames <= 0:
            try:
                n_frames = _count_packets(container, stream)
            except (av.FFmpegError, OSError) as err:
                raise _fail(path, "demuxing to count frames failed", err) from err
        if n_frames <= 0:
            raise _fail(path, "video stream has no frames")
        fps = stream.average_rate or stream.guessed_rate or stream.base_rate
        if not fps or fps <= 0:
            raise _fail(path, "video stream has no frame rate")
        fps = Fraction(fps)
        return VideoInfo(width, height, fps, n_frames, float(n_frames / fps), stream.index)
    finally:
        container.close()


def validate(path: PathLike, k: int = DEFAULT_KEY_FRAMES) -> VideoInfo:
    """The one thorough check of a source, run before any condition uses it; returns :func:`probe`'s info.

    Demuxes every video packet (no decoding) and checks that none is cut short or lies beyond the end
    of the file, that there are as many as the container lists and that they cover the stream's
    declared duration; then decodes, by seeking, the frames the held conditions need (the
    ``effective_k(n_frames, k)`` key frames) and the last frame. So a source that passes can be
    held, and one whose data is truncated fails here even when its index survived. The cost is one
    demux of the file plus a GOP's decode per key frame, never a full decode.

    Raises:
        ValueError: ``k < 1``.
        VideoDecodeError: any failure (the message names the file).
    """
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got k={k}.")
    info = probe(path)
    try:
        container = _open(path)
        try:
            stream = video_stream(container, path)
            timeline = scan_timeline(container, stream, os.path.getsize(path))
            targets = sorted({*key_frame_indices(info.n_frames, k).tolist(), info.n_frames - 1})
            for _ in decode_targets(container, stream, timeline, targets):
                pass
        finally:
            container.close()
    except VideoDecodeError:
        raise
    except Exception as err:  # whatever a damaged file makes FFmpeg, PyAV or the checks raise
        raise _fail(path, "is damaged", err) from err
    return info
