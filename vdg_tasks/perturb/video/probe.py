"""Read a video's geometry, rate and frame count without decoding it; check a source thoroughly, and a declared
condition's output against its source (``check_output``).

lmms-eval's video models read videos through decord, so where decord is installed it is the reference:
a file it cannot open or decode is rejected, and the frame count is the one it presents.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import Any

import av

from vdg_tasks.vocabulary.conditions import DEFAULT_KEY_FRAMES, Condition

from .decode import checked_timeline, decode_targets
from .layout import key_frame_indices

__all__ = ["VideoDecodeError", "VideoInfo", "check_output", "output_problems", "probe", "validate", "video_stream"]

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
    """Number of video frames: decord's ``len(VideoReader)`` where decord is installed (checked against PyAV's
    count of the frames that play), else the container's count when it has one, else counted by demuxing."""
    duration: float
    """Seconds, ``n_frames / fps``."""
    stream_index: int = 0
    """Index (among all the file's streams) of the video stream read: ``video_stream``'s choice."""


def _fail(path: PathLike, what: str, err: BaseException | None = None) -> VideoDecodeError:
    detail = f": {err}" if err is not None else ""
    return VideoDecodeError(f"{os.fspath(path)}: {what}{detail}")


def _open(path: PathLike, options: dict[str, str] | None = None) -> av.container.InputContainer:
    if not os.path.isfile(path):
        raise _fail(path, "no such video file")
    try:
        return av.open(os.fspath(path), "r", options=options or {})
    except (av.FFmpegError, OSError, ValueError) as err:
        raise _fail(path, "cannot open as a media container", err) from err


#: Demuxers that read a single picture or an image sequence: a still image, not a video, whatever its name.
_IMAGE_DEMUXERS = re.compile(r"image2|.*_pipe|gif|apng|webp|ico")
#: decord's frame count may exceed PyAV's by this much and still show the same frames: an edit list that hides one
#: frame after a key frame (decord counts it and shows the last frame once more; every other frame is PyAV's).
COUNT_SLACK_FRAMES = 1
_DECORD_WHO = "decord (the reader lmms-eval's video models use)"
#: Frames validate asks decord for at once (a batch is one array: 8 HD frames are 50 MB).
_DECORD_BATCH = 8


def _decord() -> ModuleType | None:
    """decord where installed, else None (imported on first use: it is optional and kept out of the CLI's imports)."""
    try:
        return importlib.import_module("decord")
    except ImportError:
        return None


def _decord_message(err: BaseException) -> str:
    """decord's error, first line, without the ``[hh:mm:ss]`` its logger puts in front."""
    lines = str(err).strip().splitlines() or [type(err).__name__]
    return re.sub(r"^\[\d\d:\d\d:\d\d\] ", "", lines[0])


def _decord_count(path: PathLike) -> int | None:
    """``len(decord.VideoReader(path))``; None where decord is not installed or cannot open the file
    (then :func:`validate` says so, after PyAV's checks have named any damage)."""
    decord = _decord()
    if decord is None:
        return None
    try:
        return len(decord.VideoReader(os.fspath(path)))
    except Exception:  # decord raises DECORDError (an Exception) or RuntimeError
        return None


def _check_image(path: PathLike, demuxer: str) -> None:
    """A picture (PNG, JPEG, GIF, ... whatever its name) is a video only if decord reads it as one.

    Without decord it is never one. (decord 0.6 opens none of PNG, JPEG or GIF, animated or not.)
    """
    what = f"is a still image or image sequence ({demuxer}), not a video"
    decord = _decord()
    if decord is None:
        raise _fail(path, what)
    try:
        decord.VideoReader(os.fspath(path))
    except Exception as err:  # decord raises DECORDError (an Exception) or RuntimeError
        raise _fail(path, f"{what}: {_DECORD_WHO} cannot read it: {_decord_message(err)}") from err


def _decord_reader(decord: ModuleType, path: PathLike) -> Any:
    try:
        return decord.VideoReader(os.fspath(path))
    except Exception as err:  # decord raises DECORDError (an Exception) or RuntimeError
        raise VideoDecodeError(f"{os.fspath(path)}: {_DECORD_WHO} cannot read it: {_decord_message(err)}") from err


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

    Where decord is installed the frame count is decord's (``len(decord.VideoReader(path))``): it counts
    the frames an edit list hides (mp4/mov, a stream-copy trim), PyAV's demuxer does not, and the two
    must agree within ``COUNT_SLACK_FRAMES``.

    Raises:
        VideoDecodeError: the file is missing, is not a readable container, is a still image, has no
            video stream, or decord's and PyAV's frame counts differ by more than ``COUNT_SLACK_FRAMES``
            (the message names both). A file decord cannot open is :func:`validate`'s to reject.
    """
    if not os.path.isfile(path):
        raise _fail(path, "no such video file")
    st = os.stat(path)
    return _probe_version(os.fspath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@functools.lru_cache(maxsize=65536)
def _probe_version(path: str, size: int, mtime_ns: int, ctime_ns: int, inode: int) -> VideoInfo:
    # One probe per file version and process: the hooks probe a source for every condition of a question, and a
    # probe opens decord as well as PyAV. (A failure is not memoized: it raises.)
    try:
        return _probe(path)
    except VideoDecodeError:
        raise
    except Exception as err:  # whatever a damaged file makes FFmpeg or PyAV raise
        raise _fail(path, "probing failed", err) from err


def _probe(path: PathLike) -> VideoInfo:
    container = _open(path)
    try:
        if _IMAGE_DEMUXERS.fullmatch(container.format.name):
            _check_image(path, container.format.name)
        stream = video_stream(container, path)
        width, height = stream.codec_context.width, stream.codec_context.height
        if width <= 0 or height <= 0:
            raise _fail(path, f"video stream has no picture size ({width}x{height})")
        n_frames = int(stream.frames or 0)
        counted = _decord_count(path)
        if counted is not None:
            n_frames = counted
            try:
                playing = _count_packets(container, stream)
            except (av.FFmpegError, OSError) as err:
                raise _fail(path, "demuxing to count frames failed", err) from err
            if abs(n_frames - playing) > COUNT_SLACK_FRAMES:
                raise _fail(
                    path,
                    f"{_DECORD_WHO} counts {n_frames} video frames but PyAV plays {playing} "
                    "(an edit list hides frames, as a stream-copy trim leaves them): the models would not "
                    "see the frames vdg shows; re-encode the source",
                )
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
    ``effective_k(n_frames, k)`` key frames) and the last frame. Where decord is installed, decord
    (what lmms-eval's video models read with) must then open the file and decode those same frames:
    a PNG or GIF named ``.mp4`` or a tiny picture (1x1, 8x8: decord's frame copy fails) is rejected
    here, not in the middle of an evaluation. So a source that passes can be held and read, and one
    whose data is truncated fails here even when its index survived. An mp4/mov whose edit list
    starts on a key frame is not mistaken for a truncated one (``checked_timeline``). The cost is
    a few demuxes of the file plus a GOP's decode per key frame, twice, never a full decode.

    Raises:
        ValueError: ``k < 1``.
        VideoDecodeError: any failure (the message names the file; decord's failures say decord).
    """
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got k={k}.")
    info = probe(path)
    targets = sorted({*key_frame_indices(info.n_frames, k).tolist(), info.n_frames - 1})
    try:
        container = _open(path)
        try:
            stream = video_stream(container, path)
            timeline = checked_timeline(path, container, stream)
            for _ in decode_targets(container, stream, timeline, targets):
                pass
        finally:
            container.close()
    except VideoDecodeError:
        raise
    except Exception as err:  # whatever a damaged file makes FFmpeg, PyAV or the checks raise
        raise _fail(path, "is damaged", err) from err
    decord = _decord()
    if decord is not None:
        reader = _decord_reader(decord, path)
        try:
            for at in range(0, len(targets), _DECORD_BATCH):  # as lmms-eval reads: get_batch, a few frames at a time
                reader.get_batch(targets[at : at + _DECORD_BATCH])
        except Exception as err:  # DECORDError, RuntimeError: e.g. a 1x1 or 8x8 picture, an undecodable frame
            raise VideoDecodeError(
                f"{os.fspath(path)}: {_DECORD_WHO} cannot read it: decoding {len(targets)} frames "
                f"({targets[0]} to {targets[-1]}) failed: {_decord_message(err)}"
            ) from err
        finally:
            del reader
    return info


def output_problems(source: VideoInfo, output: VideoInfo, changes: frozenset[str]) -> list[str]:
    """How ``output`` differs from ``source`` in what a condition that declares ``changes`` must keep."""
    problems = []
    if "size" not in changes and (output.width, output.height) != (source.width, source.height):
        problems.append(f"size {output.width}x{output.height}, the source's is {source.width}x{source.height}")
    if "frames" not in changes and output.n_frames != source.n_frames:
        problems.append(f"{output.n_frames} frames, the source has {source.n_frames}")
    if "duration" not in changes and abs(output.duration - source.duration) > 1 / float(source.fps) + 1e-6:
        problems.append(f"duration {output.duration:.3f} s, the source's is {source.duration:.3f} s")
    return problems


def check_output(condition: Condition, src: PathLike, dst: PathLike) -> None:
    """Refuse ``dst`` unless it is a sound video (``validate``) with ``src``'s size, frame count and duration, but
    what the condition declares it changes (``Condition.changes``).

    Raises:
        VideoDecodeError: naming the source and the condition, with the reason.
    """
    try:
        output = validate(dst)
    except VideoDecodeError as exc:
        raise VideoDecodeError(f"{os.fspath(src)}: {condition.name}'s output is refused: {exc}") from exc
    problems = output_problems(probe(src), output, condition.changes)
    if problems:
        declared = ", ".join(sorted(condition.changes)) or "nothing"
        raise VideoDecodeError(
            f"{os.fspath(src)}: {condition.name}'s output is refused: {'; '.join(problems)} (it declares it changes "
            f"{declared})"
        )
