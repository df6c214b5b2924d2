"""Read a video's geometry, rate and frame count without decoding it; check a source thoroughly, and a declared
condition's output against its source (``check_output``).

lmms-eval's video models read videos through decord, so where decord is installed it is the reference:
a file it cannot open or decode is rejected, and the frame count is the one it presents.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

import av

from vdg_tasks.vocabulary.conditions import DEFAULT_KEY_FRAMES, Condition

from . import reference
from .agreement import check_decoders_agree, check_decord_reads
from .decode import (
    Colour,
    checked_timeline,
    decode_targets,
    display_matrix,
    first_frame,
    presentation,
    sample_aspect_ratio,
)
from .layout import key_frame_indices
from .reference import (
    DECORD_WHO,
    PathLike,
    VideoDecodeError,
    decord_message,
    failure,
    video_stream,
)

__all__ = [
    "DisplayProperties",
    "VideoDecodeError",
    "VideoInfo",
    "check_output",
    "display_properties",
    "output_mismatches",
    "output_problems",
    "probe",
    "validate",
    "video_stream",
]


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
    """Seconds, ``n_frames / fps``: how long the frames are presented, measured from the stream's first timestamp
    (where the timestamps jump, ``fps`` is ``n_frames`` over that time, not the container's nominal rate)."""
    stream_index: int = 0
    """Index (among all the file's streams) of the video stream read: ``video_stream``'s choice."""


def _open(path: PathLike, options: dict[str, str] | None = None) -> av.container.InputContainer:
    if not os.path.isfile(path):
        raise failure(path, "no such video file")
    try:
        return av.open(os.fspath(path), "r", options=options or {})
    except (av.FFmpegError, OSError, ValueError) as err:
        raise failure(path, "cannot open as a media container", err) from err


#: Demuxers that read a single picture or an image sequence: a still image, not a video, whatever its name.
_IMAGE_DEMUXERS = re.compile(r"image2|.*_pipe|gif|apng|webp|ico")
#: decord's frame count may exceed PyAV's by this much and still show the same frames: an edit list that hides one
#: frame after a key frame (decord counts it and shows the last frame once more; every other frame is PyAV's).
COUNT_SLACK_FRAMES = 1


def _decord_count(path: PathLike) -> int | None:
    """``len(decord.VideoReader(path))``; None where decord is not installed or cannot open the file
    (then :func:`validate` says so, after PyAV's checks have named any damage)."""
    decord = reference.decord_module()
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
    decord = reference.decord_module()
    if decord is None:
        raise failure(path, what)
    try:
        decord.VideoReader(os.fspath(path))
    except Exception as err:  # decord raises DECORDError (an Exception) or RuntimeError
        raise failure(path, f"{what}: {DECORD_WHO} cannot read it: {decord_message(err)}") from err


#: A presented duration further than this many frame periods from ``n_frames / rate`` sets the rate (a timestamp jump).
RATE_SLACK_FRAMES = 1.5


def _presented_rate(fps: Fraction, n_frames: int, seconds: float) -> Fraction:
    """The stream's rate, or ``n_frames / seconds`` where the frames are presented for longer or shorter than
    ``n_frames / fps`` (a Matroska stream whose timestamps jump 5 s reports its nominal rate, but decord and
    torchcodec present its frames over the whole 9 s): every output then lasts as long as the source plays."""
    if seconds > 0 and abs(float(n_frames / fps) - seconds) > RATE_SLACK_FRAMES / float(fps):
        return (Fraction(n_frames) / Fraction(seconds)).limit_denominator(1001)
    return fps


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
        raise failure(path, "no such video file")
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
        raise failure(path, "probing failed", err) from err


def _probe(path: PathLike) -> VideoInfo:
    container = _open(path)
    try:
        if _IMAGE_DEMUXERS.fullmatch(container.format.name):
            _check_image(path, container.format.name)
        stream = video_stream(container, path)
        width, height = stream.codec_context.width, stream.codec_context.height
        if width <= 0 or height <= 0:
            raise failure(path, f"video stream has no picture size ({width}x{height})")
        try:
            playing, seconds = presentation(container, stream)
        except (av.FFmpegError, OSError) as err:
            raise failure(path, "demuxing to count frames failed", err) from err
        n_frames = int(stream.frames or 0) or playing
        counted = _decord_count(path)
        if counted is not None:
            n_frames = counted
            if abs(n_frames - playing) > COUNT_SLACK_FRAMES:
                raise failure(
                    path,
                    f"{DECORD_WHO} counts {n_frames} video frames but PyAV plays {playing} "
                    "(an edit list hides frames, as a stream-copy trim leaves them): the models would not "
                    "see the frames vdg shows; re-encode the source",
                )
        if n_frames <= 0:
            raise failure(path, "video stream has no frames")
        fps = stream.average_rate or stream.guessed_rate or stream.base_rate
        if not fps or fps <= 0:
            raise failure(path, "video stream has no frame rate")
        fps = _presented_rate(Fraction(fps), n_frames, seconds)
        return VideoInfo(width, height, fps, n_frames, float(n_frames / fps), stream.index)
    finally:
        container.close()


def validate(path: PathLike, k: int = DEFAULT_KEY_FRAMES, decoded: bool = True) -> VideoInfo:
    """The one thorough check of a source, run before any condition uses it; returns :func:`probe`'s info.

    Demuxes every video packet (no decoding) and checks that none is cut short or lies beyond the end
    of the file, that there are as many as the container lists and that they cover the stream's
    declared duration; then decodes, by seeking, the frames the held conditions need (the
    ``effective_k(n_frames, k)`` key frames) and the last frame. Where decord is installed, decord
    (what lmms-eval's video models read with) must then open the file and decode those same frames:
    a PNG or GIF named ``.mp4`` or a tiny picture (1x1, 8x8: decord's frame copy fails) is rejected
    here, not in the middle of an evaluation. So a source that passes can be held and read, and one
    whose data is truncated fails here even when its index survived. An mp4/mov whose edit list
    starts on a key frame is not mistaken for a truncated one (``checked_timeline``). With ``decoded`` (the
    condition is built from the source's decoded pictures: ``Condition.decodes_source``), decord's pictures of those
    frames must also be PyAV's (``agreement.check_decoders_agree``): a source the two decoders read differently
    (MPEG-2 or H.264 in MPEG-TS, some HEVC) is refused with a re-encode command rather than compared with frames the
    models never see under ``orig``; ``orig`` and ``black`` use none of PyAV's pictures and only need decord to
    read the frames (``check_decord_reads``). The cost is a few demuxes of the
    file plus a GOP's decode per key frame, three times (PyAV's checks, then PyAV beside decord), never a full
    decode.

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
        raise failure(path, "is damaged", err) from err
    if decoded:
        check_decoders_agree(path, targets, info.stream_index)
    else:
        check_decord_reads(path, targets)
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


@dataclass(frozen=True)
class DisplayProperties:
    """How a video is shown, beyond its pixels and frame count: what every output keeps from its source."""

    duration: float
    """Seconds the frames are presented (``probe``'s duration: from the first timestamp, timestamp jumps included)."""
    fps: Fraction
    """``probe``'s rate (the tolerance on ``duration`` is one frame period of the source)."""
    sample_aspect_ratio: Fraction | None
    """Sample (pixel) aspect ratio; ``None`` for square or unset (an anamorphic 4:3 source is shown 4/3 wider)."""
    color_range: int
    """AVCOL_RANGE_*: 2 full (a ``yuvj*`` stream counts as full), else 1 limited (an untagged stream is decoded as
    limited, and libx264 writes no range tag for limited)."""
    color_primaries: int | None
    """AVCOL_PRI_*; ``None`` unspecified."""
    color_trc: int | None
    """Transfer characteristic, AVCOL_TRC_*; ``None`` unspecified."""
    colorspace: int | None
    """Matrix coefficients, AVCOL_SPC_*; ``None`` unspecified."""
    display_matrix: tuple[int, ...] | None
    """The display matrix (a rotation) the first decoded frame carries; ``None`` for none or the identity."""


def display_properties(path: PathLike) -> DisplayProperties:
    """The :class:`DisplayProperties` of ``path``'s video stream (``video_stream``; its first frame is decoded).

    Raises:
        VideoDecodeError: the file cannot be probed or its first frame decoded.
    """
    info = probe(path)
    container = _open(path)
    try:
        stream = next(s for s in container.streams.video if s.index == info.stream_index)
        colour = Colour.of(stream.codec_context)
        sar = sample_aspect_ratio(stream)
        matrix = display_matrix(first_frame(container, stream))
    except VideoDecodeError:
        raise
    except Exception as err:  # whatever a damaged file makes FFmpeg or PyAV raise
        raise failure(path, "reading its display properties failed", err) from err
    finally:
        container.close()
    return DisplayProperties(
        info.duration,
        info.fps,
        sar,
        2 if colour.full_range else 1,
        colour.color_primaries,
        colour.color_trc,
        colour.colorspace,
        matrix,
    )


def output_mismatches(
    source: DisplayProperties, output: DisplayProperties, changes: frozenset[str] = frozenset()
) -> list[str]:
    """How ``output`` is shown differently from ``source`` (empty: the same way), one sentence per property.

    Duration (within one source frame period), sample aspect ratio, colour range, primaries, transfer, matrix and
    display matrix; a condition that declares it changes ``duration`` or ``size`` is not held to that one.
    """
    problems = []
    if "duration" not in changes and abs(output.duration - source.duration) > 1 / float(source.fps) + 1e-6:
        problems.append(f"lasts {output.duration:.3f} s, the source {source.duration:.3f} s")
    if "size" not in changes and output.sample_aspect_ratio != source.sample_aspect_ratio:
        problems.append(
            f"sample aspect ratio {output.sample_aspect_ratio or 1}, the source's is {source.sample_aspect_ratio or 1}"
        )
    for name in ("color_range", "color_primaries", "color_trc", "colorspace", "display_matrix"):
        if getattr(output, name) != getattr(source, name):
            problems.append(f"{name} {getattr(output, name)}, the source's is {getattr(source, name)}")
    return problems


def _video_packets(container: av.container.InputContainer, stream: av.video.stream.VideoStream) -> Iterator[av.Packet]:
    for packet in container.demux(stream):
        if packet.size:  # not the demuxer's end-of-stream marker
            yield packet


def copies_video(src: PathLike, dst: PathLike) -> bool:
    """Whether ``dst``'s video stream (``video_stream``) is ``src``'s packet for packet: as many packets, each the
    same bytes in the same order, and as many as ``dst``'s container lists. Two demuxes, nothing decoded: such a
    stream decodes to the frames of ``src``, which ``validate`` has checked (``mute``'s output)."""
    with _open(src) as source, _open(dst) as output:
        theirs, ours = video_stream(source, src), video_stream(output, dst)
        if theirs.codec_context.name != ours.codec_context.name:
            return False
        count = 0
        for a, b in itertools.zip_longest(_video_packets(source, theirs), _video_packets(output, ours)):
            if a is None or b is None or bytes(a) != bytes(b):
                return False
            count += 1
        return count > 0 and int(ours.frames or count) == count
    return False  # not reached: mypy's view of av's context managers (they may swallow an exception)


def check_output(condition: Condition, src: PathLike, dst: PathLike) -> None:
    """Refuse ``dst`` unless it is a sound video (``validate``) with ``src``'s size, frame count and duration, and is
    shown as ``src`` is (``output_mismatches``: sample aspect ratio, colour tags, rotation), but what the condition
    declares it changes (``Condition.changes``).

    An output whose video stream is the source's packet for packet (``copies_video``; ``mute``) is not decoded again:
    its packets are those ``validate`` decoded in the source, so it is checked by its metadata (``probe``: size, rate,
    frame count, duration; decord's count where decord is installed), its packets and its first frame's display
    properties.

    Raises:
        VideoDecodeError: naming the source and the condition, with the reason.
    """
    try:
        try:
            copied = copies_video(src, dst)
        except Exception:  # whatever an unreadable output makes FFmpeg raise: validate names it
            copied = False
        # the models read it as they read orig; nothing is built from it
        output = probe(dst) if copied else validate(dst, decoded=False)
    except VideoDecodeError as exc:
        raise VideoDecodeError(f"{os.fspath(src)}: {condition.name}'s output is refused: {exc}") from exc
    problems = output_problems(probe(src), output, condition.changes)
    problems += [
        p
        for p in output_mismatches(display_properties(src), display_properties(dst), condition.changes)
        if not p.startswith("lasts")  # output_problems has said so
    ]
    if problems:
        declared = ", ".join(sorted(condition.changes)) or "nothing"
        raise VideoDecodeError(
            f"{os.fspath(src)}: {condition.name}'s output is refused: {'; '.join(problems)} (it declares it changes "
            f"{declared})"
        )
