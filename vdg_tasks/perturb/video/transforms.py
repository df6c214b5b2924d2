"""Video transforms behind the vdg conditions: black, held key frames, CRF re-encode.

Every output is an H.264 (libx264) mp4 with the source's width, height and duration, a constant
frame rate, the source's colour description and display matrix (a phone video's rotation is kept
as a rotation: the pictures stay as coded, so every decoder shows and samples the output exactly as
it shows and samples the source), and the source's first audio stream copied packet for packet
(re-encoded to AAC only when mp4 cannot store its codec), so audio-visual models hear the same
sound under every condition. Pixels are yuv420p, or yuv444p (High 4:4:4) when a side is odd,
which 4:2:0 cannot represent.

Colour: every output has the source's matrix, primaries, transfer and range, tagged in the stream and
kept in the samples. A full-range source (``yuvj420p``, or yuv420p tagged full range, as phones
write) gives a yuv420p output tagged full range whose samples are the source's full-range values
(black luma 0, white 255), never squeezed to 16-235 under a full-range tag; ``black`` is luma 0 in
a full-range output and 16 in a limited one, so it decodes to RGB 0 either way.

Frame count and rate: ``crfN`` keeps the source's rate and frame count (frames renumbered at the
average rate). Held outputs (``single``, ``ordered``, ``shuffled``) and ``black`` have ``r`` times
the source's frames at ``r`` times its rate, ``r = output_rate_factor(n_frames, k)``: 1 for a
source of at least ``2k`` frames, more for shorter ones, so that the output has at least ``2k``
frames and every uniform sampler drawing ``k`` frames sees each held key frame (see
:mod:`vdg_tasks.perturb.video.layout`). Black uses the default ``k`` so that it has the same timeline as
the held conditions.

Held pictures are never encoded frame by frame. One encoder per output first encodes a *skip
template*: an IDR of a flat mid-grey picture followed by ``G - 1`` P frames of the same picture.
Flat grey is predicted exactly by intra DC prediction, so those P frames carry no residual and no
motion: every macroblock is P_Skip, and a P_Skip frame decodes to a copy of its reference whatever
the reference shows. The same encoder then encodes each held picture (black, or a decoded key frame)
once, as a forced IDR, at a constant quantizer (:data:`HOLD_QP`; black at :data:`BLACK_QP`), so a
picture's IDR does not depend on what was encoded before it. A held run of ``L`` frames is written
as ``IDR, P_1, ..., P_{m-1}`` repeated (``m <= G = min(SKIP_TEMPLATE_FRAMES, longest run)``), with
the packets' timestamps shifted; since the stream has no B frames, decode order is presentation
order and a repetition can be cut short. Every frame of a run therefore decodes to the same pixels
as its IDR, bit for bit. An output's size is about (number of IDRs) x (IDR size): ``single`` has
``ceil(n / G)`` IDRs of one picture, ``ordered`` and ``shuffled`` at least one per key frame, and a
P_Skip frame costs a few dozen bytes.

Every failure caused by the source (unreadable, truncated, undecodable, unencodable) comes out of
the writers and :func:`render` as :class:`VideoDecodeError` naming the source file.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import av
import numpy as np
from av.video.frame import PictureType

from vdg_tasks.vocabulary.conditions import DEFAULT_KEY_FRAMES, Picture, TransformContext

from .audio import AudioCarrier, interleave
from .decode import (
    RANGE_FULL,
    RANGE_LIMITED,
    RANGE_UNSPECIFIED,
    Colour,
    checked_timeline,
    colour_tag,
    decode_targets,
    display_matrix,
    first_frame,
    is_full_range,
    sample_aspect_ratio,
)
from .filtergraph import FrameFilter, frame_filter, graph_for, picture_of
from .layout import (
    HOLD_ORDERS,
    HoldOrder,
    effective_k,
    hold_order,
    key_frame_indices,
    output_rate_factor,
    output_segment_bounds,
    segment_bounds,
)
from .mp4meta import set_display_matrix
from .probe import PathLike, VideoDecodeError, VideoInfo, check_output, probe, video_stream

if TYPE_CHECKING:
    from vdg_tasks.vocabulary.conditions import Condition

__all__ = [
    "HoldOrder",
    "effective_k",
    "hold_order",
    "key_frame_indices",
    "output_pix_fmt",
    "output_rate_factor",
    "output_segment_bounds",
    "render",
    "segment_bounds",
    "set_codec_threads",
    "write_black",
    "write_crf",
    "write_filtered",
    "write_frames",
    "write_held",
]

#: Longest run of P_Skip frames after one IDR in a held picture (the IDR interval of held outputs).
SKIP_TEMPLATE_FRAMES = 128
#: libx264 settings for held pictures: no B frames, IDRs only where we force them, and a constant
#: quantizer (``qp``, with ``ipratio=1`` so that I frames get exactly that QP). Not CRF: x264 gives an
#: I frame that follows P frames the average QP of those P frames (less the I/P offset), and the flat
#: skip template's P frames get a near-zero QP, so the first picture after the template came out near
#: lossless, 2-3 times the size of the same picture coded after another IDR; ``single``, which repeats
#: that one picture's IDR every ``G`` frames, was larger than ``ordered``. With a constant QP a picture
#: is coded the same way whatever precedes it.
HOLD_PRESET = "veryfast"
#: QP of every held picture: about the quality CRF 14 gave a typical held IDR (PSNR ~45 dB against
#: the decoded source frame on a textured 720p source).
HOLD_QP = 21
#: QP of the black picture: low enough that flat black is reproduced exactly at every size (its IDR
#: is a few hundred bytes whatever the QP).
BLACK_QP = 4
_HOLD_X264_PARAMS = "keyint=infinite:min-keyint=infinite:scenecut=0:bframes=0:rc-lookahead=0:mbtree=0:ipratio=1"


#: Threads each encoder and frame-threaded decoder of this process may use (0: FFmpeg's choice, all cores).
_codec_threads = 0


def set_codec_threads(threads: int) -> None:
    """Cap the threads of every encoder and decoder this process opens from now on (0: automatic).

    ``vdg_tasks.jobs.materialize.run_jobs`` gives each of its ``W`` worker processes ``cores // W``, so
    that ``W`` videos encoded at once do not each start a thread per core (and x264's per-thread
    frame buffers) on top of each other.
    """
    global _codec_threads
    if int(threads) < 0:
        raise ValueError(f"threads must be 0 (automatic) or more, got {threads}")
    _codec_threads = int(threads)


def _limit_threads(stream: av.stream.Stream) -> None:
    if _codec_threads:
        stream.thread_count = _codec_threads


def output_pix_fmt(width: int, height: int) -> str:
    """``yuv420p``, or ``yuv444p`` when a side is odd (4:2:0 needs even sides; High 4:4:4 takes any size)."""
    return "yuv444p" if width % 2 or height % 2 else "yuv420p"


#: The colour description of an untagged stream.
_NO_COLOUR = Colour()


@dataclass(frozen=True)
class _VideoSpec:
    """The video stream an output gets."""

    width: int
    height: int
    fps: Fraction
    pix_fmt: str
    colour: Colour = _NO_COLOUR
    sar: Fraction | None = None
    """Sample aspect ratio (``None``: square): an anamorphic source's output is shown at the source's shape."""

    @classmethod
    def of(
        cls, info: VideoInfo, rate_factor: int = 1, colour: Colour = _NO_COLOUR, sar: Fraction | None = None
    ) -> _VideoSpec:
        return cls(
            info.width, info.height, info.fps * rate_factor, output_pix_fmt(info.width, info.height), colour, sar
        )


# ---------------------------------------------------------------------------------------------
# Encoding held pictures


def _add_h264_stream(
    out: av.container.OutputContainer, spec: _VideoSpec, options: dict[str, str]
) -> av.video.stream.VideoStream:
    stream = out.add_stream("libx264", rate=spec.fps)
    stream.width, stream.height, stream.pix_fmt = spec.width, spec.height, spec.pix_fmt
    stream.codec_context.time_base = 1 / spec.fps
    stream.thread_type = "FRAME"  # SLICE (PyAV's default) switches x264 to slower sliced threads
    _limit_threads(stream)
    stream.options = options
    spec.colour.apply(stream.codec_context)
    if spec.sar is not None:  # libx264 writes it in the VUI, the mp4 muxer in a pasp box
        stream.codec_context.sample_aspect_ratio = spec.sar
    return stream


def _flat_frame(spec: _VideoSpec, luma: int) -> av.VideoFrame:
    """A picture with constant luma and neutral chroma (128), in the output's range."""
    frame = av.VideoFrame(spec.width, spec.height, spec.pix_fmt)
    for plane, value in zip(frame.planes, (luma, 128, 128), strict=True):
        plane.update(np.full(plane.buffer_size, value, dtype=np.uint8))
    frame.color_range = spec.colour.frame_range
    return frame


def _plane_arrays(frame: av.VideoFrame) -> list[np.ndarray]:
    """Each plane of an 8-bit planar frame as a ``(height, width)`` array (line padding cut off)."""
    return [
        np.frombuffer(plane, dtype=np.uint8).reshape(plane.height, plane.line_size)[:, : plane.width]
        for plane in frame.planes
    ]


class _HeldEncoder:
    """One libx264 encoder producing a skip template and one IDR per held picture, all at QP ``qp``."""

    def __init__(
        self,
        out: av.container.OutputContainer,
        spec: _VideoSpec,
        template_frames: int,
        qp: int = HOLD_QP,
    ):
        self.spec = spec
        self.stream = _add_h264_stream(
            out,
            spec,
            {"preset": HOLD_PRESET, "qp": str(int(qp)), "forced-idr": "1", "x264-params": _HOLD_X264_PARAMS},
        )
        self._pts = 0
        self._packets: dict[int, bytes] = {}
        self._template_frames = template_frames
        grey = _flat_frame(spec, 128)
        self._encode(grey, PictureType.I)
        for _ in range(template_frames - 1):
            self._encode(grey, PictureType.NONE)

    def _encode(self, frame: av.VideoFrame, pict_type: PictureType) -> int:
        frame.pict_type = pict_type
        frame.pts = pts = self._pts
        frame.time_base = self.stream.codec_context.time_base
        self._pts += 1
        self._collect(self.stream.encode(frame))
        return pts

    def _collect(self, packets: Sequence[av.Packet]) -> None:
        for packet in packets:
            self._packets[int(packet.pts)] = bytes(packet)

    def add_picture(self, frame: av.VideoFrame) -> int:
        """Encode ``frame`` as a forced IDR; returns its key in the IDR dict that :meth:`finish` returns."""
        return self._encode(_conform(frame, self.spec), PictureType.I)

    def finish(self) -> tuple[dict[int, bytes], list[bytes]]:
        """Flush; returns (IDR bytes by handle, the ``G - 1`` P_Skip packets of the template)."""
        self._collect(self.stream.encode(None))
        skips = [self._packets.pop(pts) for pts in range(1, self._template_frames)]
        self._packets.pop(0)
        limit = 64 + (self.spec.width // 16 + 1) * (self.spec.height // 16 + 1) // 8
        if any(len(p) > limit for p in skips):  # a coded macroblock would add a residual to every held picture
            raise RuntimeError("libx264 coded the skip template with residuals; held frames would not be exact.")
        return self._packets, skips


def _conform(frame: av.VideoFrame, spec: _VideoSpec) -> av.VideoFrame:
    """``frame`` in the output's pixel format and range (the size is the source's; 10-bit or 4:4:4 become
    8-bit 4:2:0, full-range samples stay full range).

    swscale treats a ``yuvj*`` input as full range and a ``yuv*`` output as limited, so converting the
    ``yuvj420p`` frames FFmpeg decodes a full-range H.264 stream to would squeeze black 0 to 16 and
    white 255 to 235 (PyAV only passes a range to swscale when source and destination ranges
    differ). A ``yuvj*`` frame is therefore first relabelled as the ``yuv*`` format with the same
    layout (a plane copy, no arithmetic); between ``yuv*`` formats swscale keeps the range.
    """
    dst_full = spec.colour.full_range
    tagged = colour_tag(frame.color_range)
    if tagged in (None, RANGE_UNSPECIFIED) and not frame.format.name.startswith("yuvj"):
        full = dst_full  # an untagged frame is in its stream's range
    else:
        full = is_full_range(tagged, frame.format.name)
    if frame.format.name.startswith("yuvj"):
        frame = _relabel(frame, "yuv" + frame.format.name[4:])
    if (
        frame.format.name != spec.pix_fmt
        or frame.width != spec.width
        or frame.height != spec.height
        or full != dst_full
    ):
        frame = frame.reformat(
            width=spec.width,
            height=spec.height,
            format=spec.pix_fmt,
            src_color_range=RANGE_FULL if full else RANGE_LIMITED,
            dst_color_range=RANGE_FULL if dst_full else RANGE_LIMITED,
        )
    frame.color_range = spec.colour.frame_range
    return frame


def _relabel(frame: av.VideoFrame, pix_fmt: str) -> av.VideoFrame:
    """A copy of 8-bit planar ``frame``'s samples as pixel format ``pix_fmt`` (same plane layout)."""
    relabelled = av.VideoFrame(frame.width, frame.height, pix_fmt)
    for src, dst in zip(_plane_arrays(frame), relabelled.planes, strict=True):
        padded = np.zeros((dst.height, dst.line_size), dtype=np.uint8)
        padded[:, : dst.width] = src
        dst.update(padded)
    relabelled.pts, relabelled.time_base = frame.pts, frame.time_base
    relabelled.colorspace = frame.colorspace
    return relabelled


def _held_packets(
    stream: av.video.stream.VideoStream, runs: Sequence[tuple[bytes, int]], skips: Sequence[bytes]
) -> Iterator[av.Packet]:
    """Each (IDR, length) run as repetitions of IDR + P_Skip packets, one frame per tick."""
    time_base = stream.codec_context.time_base
    gop = len(skips) + 1
    index = 0
    for idr, length in runs:
        reps = math.ceil(length / gop)
        # Near-equal repetitions: no lone IDR directly followed by another IDR.
        sizes = [length // reps + (r < length % reps) for r in range(reps)]
        for size in sizes:
            for j in range(size):
                packet = av.Packet(idr if j == 0 else skips[j - 1])
                packet.stream = stream
                packet.time_base = time_base
                packet.pts = packet.dts = index
                packet.duration = 1
                packet.is_keyframe = j == 0
                yield packet
                index += 1


def _template_frames(longest_run: int) -> int:
    return max(2, min(SKIP_TEMPLATE_FRAMES, longest_run))


def _runs(n_frames: int, bounds: np.ndarray, shown: np.ndarray) -> list[tuple[int, int]]:
    """(picture, length) runs, merging neighbouring segments that show the same picture."""
    runs: list[tuple[int, int]] = []
    for i, pic in enumerate(shown.tolist()):
        length = int(bounds[i + 1] - bounds[i])
        if runs and runs[-1][0] == pic:
            runs[-1] = (pic, runs[-1][1] + length)
        else:
            runs.append((pic, length))
    assert sum(length for _, length in runs) == n_frames
    return runs


# ---------------------------------------------------------------------------------------------
# Source side: audio, display matrix, error boundary


def _start_seconds(stream: av.stream.Stream) -> Fraction:
    return Fraction(stream.start_time or 0) * stream.time_base if stream.time_base else Fraction(0)


def _audio_packets(
    reader: av.container.InputContainer, out: av.container.OutputContainer, video_start: Fraction
) -> Iterator[av.Packet] | None:
    """Add ``reader``'s first audio stream to ``out``; its output packets, lazily (``None``: no audio).

    ``reader`` is a second reader of the source, so the audio can be interleaved with the video.
    """
    if not reader.streams.audio:
        return None
    carrier = AudioCarrier(out, reader.streams.audio[0], video_start)
    return carrier.packets(reader.demux(carrier.source))


def _mux_all(out: av.container.OutputContainer, video: Iterator[av.Packet], audio: Iterator[av.Packet] | None) -> None:
    for packet in video if audio is None else interleave(video, audio):
        out.mux(packet)


def _finish_file(dst: PathLike, matrix: tuple[int, ...] | None) -> None:
    if matrix is not None:
        set_display_matrix(dst, matrix)


@contextlib.contextmanager
def _writing(src: PathLike, dst: PathLike, what: str) -> Iterator[None]:
    """Remove a partial ``dst`` on any failure; report every failure but an interrupt as VideoDecodeError."""
    try:
        yield
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.remove(dst)
        if isinstance(err, VideoDecodeError) or not isinstance(err, Exception):
            raise
        raise VideoDecodeError(f"{os.fspath(src)}: {what} failed: {type(err).__name__}: {err}") from err


# ---------------------------------------------------------------------------------------------
# Public writers


def write_black(src: PathLike, dst: PathLike, k: int = DEFAULT_KEY_FRAMES) -> None:
    """Write an all-black video with ``src``'s size and duration, on the held conditions' timeline for ``k``.

    The output has ``r * n_frames`` frames at ``r`` times the source's rate,
    ``r = output_rate_factor(n_frames, k)`` (1 for a source of at least ``2k`` frames). The source's
    packets are demuxed to check it is not truncated and only its first frame is decoded (for its
    display matrix); its audio is carried over.

    Raises:
        ValueError: ``k < 1``.
        VideoDecodeError: ``src`` cannot be read or the output cannot be written.
    """
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got k={k}.")
    with _writing(src, dst, "writing the black video"):
        info = probe(src)
        r = output_rate_factor(info.n_frames, k)
        with av.open(os.fspath(src), "r") as container:
            stream = video_stream(container, src)
            checked_timeline(src, container, stream)  # a truncated source fails here as in the others
            matrix = display_matrix(first_frame(container, stream))
            video_start = _start_seconds(stream)
            spec = _VideoSpec.of(info, r, Colour.of(stream.codec_context), sample_aspect_ratio(stream))
        with av.open(os.fspath(src), "r") as reader, av.open(os.fspath(dst), "w", format="mp4") as out:
            enc = _HeldEncoder(out, spec, _template_frames(r * info.n_frames), qp=BLACK_QP)
            black = enc.add_picture(_flat_frame(spec, spec.colour.black_luma))
            idrs, skips = enc.finish()
            _check_black(idrs[black], enc.stream, spec.colour.black_luma, src)
            audio = _audio_packets(reader, out, video_start)
            _mux_all(out, _held_packets(enc.stream, [(idrs[black], r * info.n_frames)], skips), audio)
        _finish_file(dst, matrix)


def _check_black(idr: bytes, stream: av.video.stream.VideoStream, black_luma: int, src: PathLike) -> None:
    """The black IDR must decode to luma <= ``black_luma`` (16 limited, 0 full) and neutral chroma (RGB exactly 0)."""
    dec = av.CodecContext.create("h264", "r")
    dec.extradata = stream.codec_context.extradata
    frames = dec.decode(av.Packet(idr)) + dec.decode(None)
    luma, *chroma = _plane_arrays(frames[0])
    if luma.max() > black_luma or any(np.any(c != 128) for c in chroma):
        raise RuntimeError(f"{os.fspath(src)}: libx264 did not reproduce black exactly; output would not be black.")


def _check_hold_args(k: int, order: str) -> None:
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got k={k}.")
    if order not in HOLD_ORDERS:
        raise ValueError(f"Unknown hold order {order!r}; expected 'ordered', 'shuffled' or 'single'.")


def write_held(src: PathLike, dst: PathLike, k: int, order: HoldOrder, seed: int) -> None:
    """Hold ``k_eff = effective_k(n_frames, k)`` key frames of ``src``, one per equal segment, in ``order``.

    Segment ``i`` shows key frame ``hold_order(k_eff, order, seed)[i]`` (the key frames are
    ``key_frame_indices(n_frames, k)``); segments are ``output_segment_bounds(n_frames, k)`` of an
    output with ``r * n_frames`` frames at ``r`` times the source's rate,
    ``r = output_rate_factor(n_frames, k)``. A source shorter than ``k`` frames shows every frame;
    a one-frame source shows its one frame under every order (``shuffled`` cannot permute one
    picture). Only the key frames are decoded (by seeking); each is encoded once as an IDR. The
    source's frame timeline is checked for truncation first (see :func:`~vdg_tasks.perturb.video.validate`).

    Raises:
        ValueError: ``k < 1`` or an unknown ``order``.
        VideoDecodeError: ``src`` cannot be read, is truncated, or the output cannot be written.
    """
    _check_hold_args(k, order)

    def choose(info: VideoInfo) -> tuple[np.ndarray, np.ndarray, int]:
        keys = key_frame_indices(info.n_frames, k)
        return keys, hold_order(len(keys), order, seed), k

    _write_key_frames(src, dst, f"holding {k} key frames ({order})", choose)


def frames_at(n_frames: int, duration: float, times: Sequence[float]) -> np.ndarray:
    """The distinct source frames shown at ``times`` (seconds), in time order: frame ``floor(t / duration *
    n_frames)``, clipped to the video (a time past the end shows the last frame)."""
    if not times:
        raise ValueError("no times given: the oracle condition needs at least one window")
    if duration <= 0:
        raise ValueError(f"the source's duration is {duration} s; frames cannot be placed in time")
    at = np.floor(np.asarray(sorted(float(t) for t in times)) / duration * n_frames).astype(np.int64)
    return np.unique(np.clip(at, 0, n_frames - 1))


def write_held_at(src: PathLike, dst: PathLike, times: Sequence[float]) -> None:
    """Hold the source frames at ``times`` (seconds; ``frames_at``), in time order, each for an equal
    segment of the source's duration (the layout of ``write_held`` with ``k`` = the number of frames).

    Raises:
        ValueError: no times.
        VideoDecodeError: ``src`` cannot be read, is truncated, or the output cannot be written.
    """

    def choose(info: VideoInfo) -> tuple[np.ndarray, np.ndarray, int]:
        keys = frames_at(info.n_frames, info.duration, times)
        return keys, np.arange(len(keys)), len(keys)

    _write_key_frames(src, dst, f"holding the frames at {len(times)} given times", choose)


def _write_key_frames(
    src: PathLike, dst: PathLike, what: str, choose: Callable[[VideoInfo], tuple[np.ndarray, np.ndarray, int]]
) -> None:
    """Hold the key frames ``choose(info)`` picks: (source frame per picture, picture per segment, k)."""
    with _writing(src, dst, what):
        info = probe(src)
        keys, shown, k = choose(info)
        r = output_rate_factor(info.n_frames, k)
        runs = _runs(r * info.n_frames, output_segment_bounds(info.n_frames, k), shown)
        by_index = {int(keys[pic]): pic for pic, _ in runs}
        with (
            av.open(os.fspath(src), "r") as container,
            av.open(os.fspath(src), "r") as reader,
            av.open(os.fspath(dst), "w", format="mp4") as out,
        ):
            stream = video_stream(container, src)
            _limit_threads(stream)
            timeline = checked_timeline(src, container, stream)
            spec = _VideoSpec.of(info, r, Colour.of(stream.codec_context), sample_aspect_ratio(stream))
            enc = _HeldEncoder(out, spec, _template_frames(max(length for _, length in runs)))
            handle: dict[int, int] = {}
            matrix: tuple[int, ...] | None = None
            for index, frame in decode_targets(container, stream, timeline, sorted(by_index)):
                if not handle:
                    matrix = display_matrix(frame)
                handle[by_index[index]] = enc.add_picture(frame)
            idrs, skips = enc.finish()
            audio = _audio_packets(reader, out, _start_seconds(stream))
            video = _held_packets(enc.stream, [(idrs[handle[pic]], length) for pic, length in runs], skips)
            _mux_all(out, video, audio)
        _finish_file(dst, matrix)


def write_crf(src: PathLike, dst: PathLike, crf: int, preset: str = "medium") -> None:
    """Re-encode ``src`` with libx264 at constant rate factor ``crf`` (other settings: x264 defaults).

    One streaming decode and one encode, both frame-threaded; frames are renumbered at the source's
    average rate, so the output has a constant rate and the source's frame count as ``probe`` gives it
    (decord's, where an edit list hides a frame: the last frame is shown again, as decord shows it, so
    the output lasts as long as the held conditions). Audio is carried over in the same pass.

    Raises:
        VideoDecodeError: ``src`` cannot be read or decoded, or the output cannot be written.
    """
    with _writing(src, dst, f"re-encoding at CRF {crf}"):
        _reencode(src, dst, {"crf": str(int(crf)), "preset": preset})


#: The encode of every frame a ``frames`` condition changes: ``crf18``'s, so that ``crf18`` is its control.
FRAMES_ENCODE = {"crf": "18", "preset": "medium"}

#: A change to one frame: (RGB ``uint8`` (H, W, 3) array, the frame's index) -> the changed array.
FrameChange = Callable[[np.ndarray, int], np.ndarray]


def _rgb_round_trip(
    change: FrameChange, spec: _VideoSpec, source: _VideoSpec
) -> Callable[[av.VideoFrame, int], av.VideoFrame]:
    """``change`` on frames in the source's format (``source``: its size), written in the output's (``spec``).

    To RGB and back with swscale's default matrix (BT.601, as PyAV's ``to_ndarray`` and decord show a frame to the
    models whatever its tag) and the source's range: swscale reads and writes a ``yuv*`` format as limited range and
    a ``yuvj*`` one as full (PyAV passes it no range when both sides' are equal), so a full-range frame is relabelled
    ``yuvj*`` on the way to RGB and written as ``yuvj*`` then relabelled ``yuv*`` on the way back: the samples keep
    the full range, black 0 and white 255. The output keeps the source's colour tags.
    """
    full = spec.colour.full_range
    read_as = "yuvj" + source.pix_fmt[3:] if full else source.pix_fmt
    write_as = "yuvj" + spec.pix_fmt[3:] if full else spec.pix_fmt

    def changed(frame: av.VideoFrame, index: int) -> av.VideoFrame:
        rgb = (_relabel(frame, read_as) if full else frame).to_ndarray(format="rgb24")
        out = np.asarray(change(rgb, index))
        if out.dtype != np.uint8 or out.ndim != 3 or out.shape[2] != 3:
            raise ValueError(f"frame {index}: the transform returned {out.dtype} {out.shape}, not (H, W, 3) uint8")
        if out.shape[:2] != (spec.height, spec.width):
            raise ValueError(
                f"frame {index}: the transform returned {out.shape[1]}x{out.shape[0]}, not {spec.width}x{spec.height}"
                " (a condition that changes the size declares changes={'size'}, and keeps one size)"
            )
        picture = av.VideoFrame.from_ndarray(np.ascontiguousarray(out), format="rgb24")
        picture.pts, picture.time_base = frame.pts, frame.time_base
        yuv = picture.reformat(format=write_as)
        yuv = _relabel(yuv, spec.pix_fmt) if full else yuv
        yuv.color_range = spec.colour.frame_range
        return yuv

    return changed


def _changed_size(src: PathLike, change: FrameChange, colour: Colour, info: VideoInfo) -> tuple[int, int]:
    """(width, height) of ``change``'s output for the first frame (a condition that declares it changes the size)."""
    with av.open(os.fspath(src), "r") as container:
        frame = first_frame(container, video_stream(container, src))
        spec = _VideoSpec.of(info, colour=colour)
        rgb = _conform(frame, spec).to_ndarray(format="rgb24")
    out = np.asarray(change(rgb, 0))
    return int(out.shape[1]), int(out.shape[0])


def write_frames(src: PathLike, dst: PathLike, change: FrameChange, changes_size: bool = False) -> None:
    """Every frame of ``src`` through ``change`` (RGB in and out, with the frame's index), re-encoded as ``crf18``.

    The frames are those ``write_crf`` encodes (the stream the models read, its frame count, 8-bit, the source's range,
    as stored: a rotated source's pictures unrotated), converted to RGB and back (``_rgb_round_trip``): an unchanged
    frame comes back as ``crf18`` gives it but for that round trip (4:2:0 chroma resampled and rounded: about one
    level of luma on noise, nothing on flat colour). With ``changes_size`` the output has the size of ``change``'s
    first frame; otherwise, and for every later frame, the size must stay.

    Raises:
        VideoDecodeError: ``src`` cannot be read, ``change`` raised or returned no frame of that size and type, or the
            output cannot be written.
    """
    with _writing(src, dst, "changing the frames"):
        _reencode(src, dst, FRAMES_ENCODE, change=change, changes_size=changes_size)


def write_filtered(src: PathLike, dst: PathLike, condition: Condition, seed: int) -> None:
    """Every frame ``write_crf`` encodes (8-bit, the source's range, as stored) through ``condition``'s FFmpeg filter
    chain (``filtergraph``) in its own pixel format, re-encoded as ``crf18``: no RGB round trip, no Python per frame.

    Raises:
        VideoDecodeError: ``src`` cannot be read, the chain is refused or changes a frame's size, format or count, or
            the output cannot be written.
    """
    with _writing(src, dst, f"{condition.name}'s filter graph"):
        _reencode(src, dst, FRAMES_ENCODE, graph=lambda picture: graph_for(condition, picture, seed))


def _reencode(
    src: PathLike,
    dst: PathLike,
    options: dict[str, str],
    change: FrameChange | None = None,
    changes_size: bool = False,
    graph: Callable[[Picture], str] | None = None,
) -> None:
    info = probe(src)
    with av.open(os.fspath(src), "r") as container, av.open(os.fspath(dst), "w", format="mp4") as out:
        in_stream = video_stream(container, src)
        in_stream.thread_type = "FRAME"
        _limit_threads(in_stream)
        colour = Colour.of(in_stream.codec_context)
        spec = _VideoSpec.of(info, colour=colour, sar=sample_aspect_ratio(in_stream))
        changed = None
        conform_to = spec
        if change is not None:
            if changes_size:
                width, height = _changed_size(src, change, colour, info)
                spec = _VideoSpec(width, height, spec.fps, output_pix_fmt(width, height), colour, spec.sar)
            changed = _rgb_round_trip(change, spec, conform_to)
        stream = _add_h264_stream(out, spec, options)
        time_base = stream.codec_context.time_base
        run: FrameFilter | None = None
        if graph is not None:
            picture = picture_of(spec.width, spec.height, spec.pix_fmt, spec.colour.full_range)
            run = frame_filter(graph(picture), picture, time_base)
        encoded = 0

        def encode(frame: av.VideoFrame | None) -> None:
            nonlocal encoded
            for picture_out in run(frame) if run is not None else [frame] if frame is not None else []:
                picture_out.pict_type = PictureType.NONE  # else the source's I frames become forced key frames
                encoded += 1
                out.mux(stream.encode(picture_out))

        carrier = None
        if container.streams.audio:
            carrier = AudioCarrier(out, container.streams.audio[0], _start_seconds(in_stream))
        index = 0
        matrix: tuple[int, ...] | None = None
        demuxed = container.demux(in_stream, carrier.source) if carrier else container.demux(in_stream)
        for packet in demuxed:
            if carrier is not None and packet.stream is carrier.source:
                for audio_packet in carrier.convert(packet):
                    out.mux(audio_packet)
                continue
            for frame in packet.decode():
                if index == info.n_frames:
                    continue
                if index == 0:
                    matrix = display_matrix(frame)
                last = _conform(frame, conform_to)
                if changed is not None:
                    last = changed(last, index)
                last.pts, last.time_base = index, time_base
                index += 1
                encode(last)
        while 0 < index < info.n_frames:  # decord counts a frame an edit list hides: it shows the last again
            last.pts = index
            index += 1
            encode(last)
        encode(None)
        if encoded != index:
            raise ValueError(f"the filter graph gave {encoded} frames for {index}")
        out.mux(stream.encode(None))
        if carrier is not None:
            out.mux(carrier.flush())
        if index == 0:
            raise ValueError("no frame could be decoded")
    _finish_file(dst, matrix)


def _write_declared(condition: Condition, src: PathLike, dst: PathLike, seed: int) -> None:
    """A condition declared through ``vdg_tasks.extend``: its function run, its output checked (``dst`` removed when
    either fails)."""
    apply = condition.apply
    assert apply is not None  # Condition checks a frames or container transform has one
    with _writing(src, dst, f"{condition.name}'s transform"):
        if condition.transform == "filter":
            write_filtered(src, dst, condition, seed)
        elif condition.transform == "frames":

            def change(rgb: np.ndarray, index: int) -> np.ndarray:
                return apply(rgb, TransformContext(condition.params, seed, index))

            write_frames(src, dst, change, changes_size="size" in condition.changes)
        else:
            context = TransformContext(condition.params, seed, video_stream=probe(src).stream_index)
            apply(Path(os.fspath(src)), Path(os.fspath(dst)), context)
            if not os.path.isfile(dst):
                raise ValueError(f"the transform wrote no file at {os.fspath(dst)}")
        check_output(condition, src, dst)


def render(condition: Condition, src: PathLike, dst: PathLike, seed: int) -> None:
    """Write ``condition``'s version of ``src`` to ``dst`` (a new ``.mp4`` path).

    Raises:
        ValueError: the condition is ``identity`` (the source itself is used), is not a video
            transform, or has bad parameters.
        VideoDecodeError: anything that goes wrong reading ``src`` or writing ``dst``.
    """
    params = condition.params
    if condition.transform == "identity":
        raise ValueError(
            f"Condition {condition.name!r} is the identity: use the source video itself, nothing is rendered."
        )
    if condition.transform not in ("black", "hold", "crf", "hold_at", "frames", "container", "filter"):
        raise ValueError(f"Condition {condition.name!r} has no video transform ({condition.transform!r}).")
    if condition.transform == "hold":
        _check_hold_args(int(params["k"]), params["order"])
    try:
        if condition.transform in ("frames", "container", "filter"):
            _write_declared(condition, src, dst, seed)
        elif condition.transform == "black":
            write_black(src, dst)
        elif condition.transform == "hold":
            write_held(src, dst, k=int(params["k"]), order=params["order"], seed=seed)
        elif condition.transform == "hold_at":
            write_held_at(src, dst, times=[float(t) for t in params["times"]])
        else:
            write_crf(src, dst, crf=int(params["crf"]), preset=str(params.get("preset", "medium")))
    except VideoDecodeError:
        raise
    except Exception as err:  # the writers wrap what they see; this is the last line for anything else
        with contextlib.suppress(OSError):
            os.remove(dst)
        raise VideoDecodeError(f"{os.fspath(src)}: rendering {condition.name} failed: {err}") from err
