"""Read a video's geometry, rate and frame count without decoding it (and check it decodes)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction

import av

__all__ = ["VideoDecodeError", "VideoInfo", "probe", "validate"]

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


def _video_stream(container: av.container.InputContainer, path: PathLike) -> av.video.stream.VideoStream:
    if not container.streams.video:
        raise _fail(path, "has no video stream")
    return container.streams.video[0]


def _count_packets(container: av.container.InputContainer, stream: av.video.stream.VideoStream) -> int:
    """Frames counted by demuxing (no decoding); flush packets and edit-list-hidden frames are not frames."""
    return sum(1 for packet in container.demux(stream) if packet.size > 0 and not packet.is_discard)


def probe(path: PathLike) -> VideoInfo:
    """Size, rate and frame count of the first video stream of ``path``; no frame is decoded.

    Raises:
        VideoDecodeError: the file is missing, is not a readable container, or has no video stream.
    """
    container = _open(path)
    try:
        stream = _video_stream(container, path)
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
        return VideoInfo(width, height, fps, n_frames, float(n_frames / fps))
    finally:
        container.close()


def validate(path: PathLike) -> VideoInfo:
    """:func:`probe` ``path`` and decode its first frame.

    Raises:
        VideoDecodeError: as :func:`probe`, or when no frame can be decoded.
    """
    info = probe(path)
    container = _open(path)
    try:
        stream = _video_stream(container, path)
        try:
            for _ in container.decode(stream):
                return info
        except (av.FFmpegError, OSError) as err:
            raise _fail(path, "decoding the first frame failed", err) from err
        raise _fail(path, "decoding produced no frame")
    finally:
        container.close()
