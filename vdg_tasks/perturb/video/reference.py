"""The reference decoder: decord, which lmms-eval's video models read with, and the video stream it reads.

``orig`` is what these present for a source; every condition is built from, and checked against, the same frames
of the same stream (``probe.validate``, ``agreement``).
"""

from __future__ import annotations

import importlib
import os
import re
from types import ModuleType
from typing import Any

import av

__all__ = [
    "DECORD_BATCH",
    "DECORD_WHO",
    "PathLike",
    "VideoDecodeError",
    "decord_message",
    "decord_module",
    "decord_reader",
    "failure",
    "video_stream",
]

PathLike = str | os.PathLike[str]


class VideoDecodeError(Exception):
    """A video could not be opened, demuxed, decoded or re-encoded; the message names the file."""


def failure(path: PathLike, what: str, err: BaseException | None = None) -> VideoDecodeError:
    detail = f": {err}" if err is not None else ""
    return VideoDecodeError(f"{os.fspath(path)}: {what}{detail}")


DECORD_WHO = "decord (the reader lmms-eval's video models use)"
#: Frames validate asks decord for at once (a batch is one array: 8 HD frames are 50 MB).
DECORD_BATCH = 8


def decord_module() -> ModuleType | None:
    """decord where installed, else None (imported on first use: it is optional and kept out of the CLI's imports)."""
    try:
        return importlib.import_module("decord")
    except ImportError:
        return None


def decord_message(err: BaseException) -> str:
    """decord's error, first line, without the ``[hh:mm:ss]`` its logger puts in front."""
    lines = str(err).strip().splitlines() or [type(err).__name__]
    return re.sub(r"^\[\d\d:\d\d:\d\d\] ", "", lines[0])


def decord_reader(decord: ModuleType, path: PathLike) -> Any:
    try:
        return decord.VideoReader(os.fspath(path))
    except Exception as err:  # decord raises DECORDError (an Exception) or RuntimeError
        raise VideoDecodeError(f"{os.fspath(path)}: {DECORD_WHO} cannot read it: {decord_message(err)}") from err


#: FFmpeg 4's ``av_find_best_stream`` ranks video streams by the frames ``avformat_find_stream_info`` saw, capped here.
_MULTIFRAME = 5


def _decord_rank(stream: av.video.stream.VideoStream, seen: int | None = None) -> tuple[bool, int, int, int]:
    """How decord's FFmpeg (4.x ``av_find_best_stream``) ranks a video stream: not marked for the hearing or
    visually impaired, then frames seen (capped at 5: a cover picture loses to a video), then bit rate, then
    frames; the first of equals wins. (FFmpeg 5+ ranks a ``default`` stream first, which decord does not.)

    ``seen``: the stream's frames counted by demuxing (up to 5), for containers that list no frame count
    (Matroska, WebM, MPEG-TS), where FFmpeg counts the frames it reads while probing."""
    impaired = stream.disposition & (av.stream.Disposition.hearing_impaired | av.stream.Disposition.visual_impaired)
    frames = int(stream.frames or 0) or int(seen or 0)
    return (not impaired, min(_MULTIFRAME, frames), int(stream.bit_rate or 0), frames)


def _frames_seen(path: PathLike, indices: list[int]) -> dict[int, int]:
    """Frames (packets) of each video stream ``indices`` names, counted by demuxing a second reader until each has
    ``_MULTIFRAME`` or the file ends."""
    seen = dict.fromkeys(indices, 0)
    with av.open(os.fspath(path), "r") as reader:
        streams = [reader.streams[i] for i in indices]
        for packet in reader.demux(streams):
            if packet.size and packet.stream.index in seen:
                seen[packet.stream.index] += 1
                if min(seen.values()) >= _MULTIFRAME:
                    break
    return seen


def video_stream(container: av.container.InputContainer, path: PathLike) -> av.video.stream.VideoStream:
    """The video stream the models' decoder reads: decord's choice (``_decord_rank``; lmms-eval's video models read
    through decord), not simply the first, so ``orig`` and every condition show the same stream. Where the container
    lists no frame count (Matroska: a one-frame picture track before the video), the frames are counted."""
    streams = list(container.streams.video)
    if not streams:
        raise failure(path, "has no video stream")
    if len(streams) > 1 and any(not s.frames for s in streams):
        seen = _frames_seen(path, [s.index for s in streams])
        return max(streams, key=lambda s: _decord_rank(s, seen[s.index]))
    return max(streams, key=_decord_rank)  # max keeps the first of equal ranks, as FFmpeg does
