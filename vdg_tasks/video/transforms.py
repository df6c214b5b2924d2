"""Video transforms behind the vdg conditions: black, held key frames, CRF re-encode.

Every output is an H.264 (libx264, yuv420p) mp4 with the source's width, height, constant frame
rate and frame count, so that a model's frame sampler sees the same timeline it would see on the
source.

Held pictures are never encoded frame by frame. One encoder per output first encodes a *skip
template*: an IDR of a flat mid-grey picture followed by ``G - 1`` P frames of the same picture.
Flat grey is predicted exactly by intra DC prediction, so those P frames carry no residual and no
motion: every macroblock is P_Skip, and a P_Skip frame decodes to a copy of its reference whatever
the reference shows. The same encoder then encodes each held picture (black, or a decoded key frame)
once, as a forced IDR. A held run of ``L`` frames is written as ``IDR, P_1, ..., P_{m-1}`` repeated
(``m <= G = min(SKIP_TEMPLATE_FRAMES, longest run)``), with the packets' timestamps shifted; since
the stream has no B frames, decode order is presentation order and a repetition can be cut short.
Every frame of a run therefore decodes to the same pixels as its IDR, bit for bit.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Literal

import av
import numpy as np
from av.video.frame import PictureType

from .probe import PathLike, VideoDecodeError, VideoInfo, probe

if TYPE_CHECKING:
    from vdg_tasks.conditions import Condition

__all__ = [
    "HoldOrder",
    "hold_order",
    "key_frame_indices",
    "render",
    "segment_bounds",
    "write_black",
    "write_crf",
    "write_held",
]

HoldOrder = Literal["ordered", "shuffled", "single"]

#: Longest run of P_Skip frames after one IDR in a held picture (the IDR interval of held outputs).
SKIP_TEMPLATE_FRAMES = 128
#: libx264 settings for held pictures: high quality IDRs, no B frames, IDRs only where we force them.
HOLD_PRESET = "superfast"
HOLD_CRF = 14
_HOLD_X264_PARAMS = "keyint=infinite:min-keyint=infinite:scenecut=0:bframes=0:rc-lookahead=0:mbtree=0"


# ---------------------------------------------------------------------------------------------
# Segment layout


def _sampler_positions(n_frames: int, k: int) -> np.ndarray:
    """Positions of a uniform sampler's K draws, ``np.linspace(0, n_frames - 1, k)``."""
    return np.linspace(0.0, n_frames - 1.0, k)


def segment_bounds(n_frames: int, k: int) -> np.ndarray:
    """``k + 1`` frame indices; segment ``i`` is frames ``[b[i], b[i+1])``.

    Boundaries start from the equal-duration split ``round(i * n_frames / k)`` and are moved (by at
    most a frame or two) so that a uniform sampler drawing ``k`` frames at
    ``np.linspace(0, n_frames - 1, k)`` lands exactly one draw in each segment, whether it truncates
    the positions (lmms-eval, decord: ``astype(int)``) or rounds them (qwen_vl_utils), including
    float32 round-off. This is guaranteed when ``n_frames >= 2 * k``; with ``k <= n_frames < 2k``
    segments are still non-empty but a sampler may straddle one.

    Raises:
        ValueError: ``k < 1`` or ``n_frames < k``.
    """
    n_frames, k = int(n_frames), int(k)
    if k < 1:
        raise ValueError(f"k must be at least 1, got k={k}.")
    if n_frames < k:
        raise ValueError(
            f"Cannot split {n_frames} frames into k={k} segments: a video needs at least k frames "
            f"(at least 2k={2 * k} for every uniform sampler to hit each segment once). Use a smaller k."
        )
    bounds = np.empty(k + 1, dtype=np.int64)
    bounds[0], bounds[k] = 0, n_frames
    x = _sampler_positions(n_frames, k)
    eps = 1e-6 * n_frames + 1e-9  # float32 linspace (torch) is off by a few ulp of n_frames
    for i in range(1, k):
        ideal = int(np.floor(i * n_frames / k + 0.5))
        lo = int(np.floor(x[i - 1] + 0.5 + eps)) + 1  # after every rounding of draw i-1
        hi = int(np.floor(x[i] - eps))  # at or before every truncation of draw i
        b = max(min(ideal, hi), lo)
        bounds[i] = min(max(b, bounds[i - 1] + 1), n_frames - (k - i))
    return bounds


def key_frame_indices(n_frames: int, k: int) -> np.ndarray:
    """The source frame shown for each of the ``k`` segments: the centre of its segment."""
    b = segment_bounds(n_frames, k)
    return (b[:-1] + b[1:] - 1) // 2


def hold_order(k: int, order: HoldOrder, seed: int) -> np.ndarray:
    """For each of the ``k`` output segments, which key frame (``0..k-1``) it shows.

    ``ordered``: ``arange(k)``; ``single``: every segment shows key frame ``k // 2``; ``shuffled``:
    ``np.random.default_rng(seed).permutation(k)``, drawn again from the same generator until it is
    not the identity (so the result depends only on ``k`` and ``seed``).

    Raises:
        ValueError: unknown ``order``, ``k < 1``, or ``shuffled`` with ``k < 2``.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got k={k}.")
    if order == "ordered":
        return np.arange(k)
    if order == "single":
        return np.full(k, k // 2)
    if order == "shuffled":
        if k < 2:
            raise ValueError(
                f"A shuffled order needs k >= 2 key frames (a permutation of 1 is the identity), got k={k}."
            )
        rng = np.random.default_rng(seed)
        identity = np.arange(k)
        while True:
            perm = rng.permutation(k)
            if not np.array_equal(perm, identity):
                return perm
    raise ValueError(f"Unknown hold order {order!r}; expected 'ordered', 'shuffled' or 'single'.")


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
# Encoding held pictures


def _even_dims(info: VideoInfo, src: PathLike) -> None:
    if info.width % 2 or info.height % 2:
        raise VideoDecodeError(
            f"{os.fspath(src)}: {info.width}x{info.height} has an odd side; yuv420p H.264 needs even sides."
        )


#: FFmpeg's "unspecified" value of each colour field (AVCOL_SPC/PRI/TRC_UNSPECIFIED, AVCOL_RANGE_UNSPECIFIED).
_UNSPECIFIED_COLOR = {"colorspace": 2, "color_range": 0, "color_primaries": 2, "color_trc": 2}


def _copy_color(dst_ctx: av.codec.context.CodecContext, src_ctx: av.codec.context.CodecContext | None) -> None:
    """Carry the source's colour description (matrix, range, primaries, transfer) to the output."""
    if src_ctx is None:
        return
    for name, unspecified in _UNSPECIFIED_COLOR.items():
        try:
            value = getattr(src_ctx, name)
            if value is not None and int(value) != unspecified:
                setattr(dst_ctx, name, value)
        except (AttributeError, TypeError, ValueError):  # older PyAV or an unmapped value: keep default
            pass


def _add_h264_stream(
    out: av.container.OutputContainer,
    info: VideoInfo,
    options: dict[str, str],
    src_ctx: av.codec.context.CodecContext | None,
) -> av.video.stream.VideoStream:
    stream = out.add_stream("libx264", rate=info.fps)
    stream.width, stream.height, stream.pix_fmt = info.width, info.height, "yuv420p"
    stream.codec_context.time_base = 1 / info.fps
    stream.thread_type = "FRAME"  # SLICE (PyAV's default) switches x264 to slower sliced threads
    stream.options = options
    _copy_color(stream.codec_context, src_ctx)
    return stream


def _flat_frame(width: int, height: int, luma: int) -> av.VideoFrame:
    """A yuv420p picture with constant luma and neutral chroma (128)."""
    planes = np.full((height * 3 // 2, width), 128, dtype=np.uint8)
    planes[:height] = luma
    return av.VideoFrame.from_ndarray(planes, format="yuv420p")


class _HeldEncoder:
    """One libx264 encoder producing a skip template and one IDR per held picture."""

    def __init__(
        self,
        out: av.container.OutputContainer,
        info: VideoInfo,
        template_frames: int,
        src_ctx: av.codec.context.CodecContext | None = None,
    ):
        self.info = info
        self.stream = _add_h264_stream(
            out,
            info,
            {"preset": HOLD_PRESET, "crf": str(HOLD_CRF), "forced-idr": "1", "x264-params": _HOLD_X264_PARAMS},
            src_ctx,
        )
        self._pts = 0
        self._packets: dict[int, bytes] = {}
        self._template_frames = template_frames
        grey = _flat_frame(info.width, info.height, 128)
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
        info = self.info
        if frame.format.name != "yuv420p" or frame.width != info.width or frame.height != info.height:
            frame = frame.reformat(width=info.width, height=info.height, format="yuv420p")
        return self._encode(frame, PictureType.I)

    def finish(self) -> tuple[dict[int, bytes], list[bytes]]:
        """Flush; returns (IDR bytes by handle, the ``G - 1`` P_Skip packets of the template)."""
        self._collect(self.stream.encode(None))
        skips = [self._packets.pop(pts) for pts in range(1, self._template_frames)]
        self._packets.pop(0)
        limit = 64 + (self.info.width // 16 + 1) * (self.info.height // 16 + 1) // 8
        if any(len(p) > limit for p in skips):  # a coded macroblock would add a residual to every held picture
            raise RuntimeError("libx264 coded the skip template with residuals; held frames would not be exact.")
        return self._packets, skips


def _mux_runs(
    out: av.container.OutputContainer,
    stream: av.video.stream.VideoStream,
    runs: Sequence[tuple[bytes, int]],
    skips: Sequence[bytes],
) -> None:
    """Write each (IDR, length) run as repetitions of IDR + P_Skip packets, one frame per tick."""
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
                out.mux(packet)
                index += 1


def _template_frames(longest_run: int) -> int:
    return max(2, min(SKIP_TEMPLATE_FRAMES, longest_run))


# ---------------------------------------------------------------------------------------------
# Reading key frames


def _frame_timeline(container: av.container.InputContainer, stream) -> tuple[np.ndarray, np.ndarray]:
    """Presentation timestamps of every frame in display order, and those of the key frames, by demuxing."""
    pts: list[int] = []
    keys: list[int] = []
    for packet in container.demux(stream):
        if packet.size == 0 or packet.is_discard:  # flush packets; frames an edit list hides
            continue
        t = packet.pts if packet.pts is not None else packet.dts
        if t is None:
            raise ValueError("a video packet has no timestamp")
        pts.append(t)
        if packet.is_keyframe:
            keys.append(t)
    return np.sort(np.asarray(pts, dtype=np.int64)), np.sort(np.asarray(keys, dtype=np.int64))


def _decode_targets(path: PathLike, indices: Sequence[int]) -> Iterator[tuple[int, av.VideoFrame]]:
    """Yield ``(index, frame)`` for the given ascending frame indices, decoding only what they need.

    Each target is reached by seeking to the key frame before it and decoding forward (frames before
    the target that no other frame references are skipped, not decoded); a target in the GOP being
    decoded is reached by decoding on. At most one decoded frame is alive at a time.
    """
    container = av.open(os.fspath(path), "r")
    try:
        stream = container.streams.video[0]
        stream.thread_type = "FRAME"
        timeline, key_pts = _frame_timeline(container, stream)
        if len(timeline) == 0:
            raise ValueError("no video packets")
        ctx = stream.codec_context
        frames: Iterator[av.VideoFrame] | None = None
        last_pts: int | None = None  # pts of the last frame the current decode produced
        target_pts = 0

        def decode_from(seek_pts: int, skip_nonref: bool) -> Iterator[av.VideoFrame]:
            container.seek(int(seek_pts), backward=True, any_frame=False, stream=stream)
            for packet in container.demux(stream):
                if skip_nonref and packet.size and packet.pts is not None and packet.pts < target_pts:
                    ctx.skip_frame = "NONREF"
                else:
                    ctx.skip_frame = "DEFAULT"
                yield from packet.decode()

        for index in indices:
            target_pts = int(timeline[min(int(index), len(timeline) - 1)])
            k = int(np.searchsorted(key_pts, target_pts, side="right")) - 1
            seek_candidates = [int(key_pts[j]) for j in range(k, -1, -1)] if k >= 0 else []
            seek_candidates.append(int(timeline[0]))
            gop_start = seek_candidates[0]
            found: av.VideoFrame | None = None
            if frames is not None and last_pts is not None and gop_start <= last_pts < target_pts:
                found = _first_at_or_after(frames, target_pts)
            for attempt, seek_pts in enumerate(seek_candidates if found is None else []):
                frames = decode_from(seek_pts, skip_nonref=attempt == 0)  # retries decode everything
                first = next(frames, None)
                if first is None or first.pts is None or first.pts > target_pts:
                    continue  # landed after the target (imprecise index): seek further back
                found = first if first.pts == target_pts else _first_at_or_after(frames, target_pts)
                if found is not None:
                    break
            if found is None:
                raise ValueError(f"frame {index} (pts {target_pts}) could not be decoded")
            last_pts = found.pts
            yield int(index), found
            found = None
    finally:
        container.close()


def _first_at_or_after(frames: Iterator[av.VideoFrame], target_pts: int) -> av.VideoFrame | None:
    for frame in frames:
        if frame.pts is not None and frame.pts >= target_pts:
            return frame
    return None


# ---------------------------------------------------------------------------------------------
# Public writers


def _removing_partial(dst: PathLike):
    class _Guard:
        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc, tb):
            if exc_type is not None:
                try:
                    os.remove(dst)
                except OSError:
                    pass
            return False

    return _Guard()


def _wrap(src: PathLike, what: str, err: BaseException) -> VideoDecodeError:
    return VideoDecodeError(f"{os.fspath(src)}: {what} failed: {err}")


def write_black(src: PathLike, dst: PathLike) -> None:
    """Write an all-black video with ``src``'s size, rate and frame count (``src`` is only probed)."""
    info = probe(src)
    _even_dims(info, src)
    with _removing_partial(dst):
        try:
            out = av.open(os.fspath(dst), "w", format="mp4")
            try:
                enc = _HeldEncoder(out, info, _template_frames(info.n_frames))
                black = enc.add_picture(_flat_frame(info.width, info.height, 16))
                idrs, skips = enc.finish()
                _check_black(idrs[black], enc.stream, src)
                _mux_runs(out, enc.stream, [(idrs[black], info.n_frames)], skips)
            finally:
                out.close()
        except (av.FFmpegError, OSError) as err:
            raise _wrap(src, "writing the black video", err) from err


def _check_black(idr: bytes, stream: av.video.stream.VideoStream, src: PathLike) -> None:
    """The black IDR must decode to luma <= 16 and neutral chroma (RGB exactly 0)."""
    dec = av.CodecContext.create("h264", "r")
    dec.extradata = stream.codec_context.extradata
    frames = dec.decode(av.Packet(idr)) + dec.decode(None)
    planes = frames[0].to_ndarray(format="yuv420p")
    h = frames[0].height
    if planes[:h].max() > 16 or np.any(planes[h:] != 128):
        raise RuntimeError(f"{os.fspath(src)}: libx264 did not reproduce black exactly; output would not be black.")


def write_held(src: PathLike, dst: PathLike, k: int, order: HoldOrder, seed: int) -> None:
    """Write ``k`` equal segments, segment ``i`` holding key frame ``hold_order(k, order, seed)[i]``.

    Only the key frames are decoded (by seeking); each is encoded once as an IDR.

    Raises:
        ValueError: bad ``k``/``order``, or fewer than ``k`` frames in ``src``.
        VideoDecodeError: ``src`` cannot be probed, decoded, or the output written.
    """
    info = probe(src)
    _even_dims(info, src)
    bounds = segment_bounds(info.n_frames, k)
    keys = (bounds[:-1] + bounds[1:] - 1) // 2
    shown = hold_order(k, order, seed)
    runs = _runs(info.n_frames, bounds, shown)
    needed = sorted({pic for pic, _ in runs})
    with _removing_partial(dst):
        try:
            src_container = av.open(os.fspath(src), "r")
            src_ctx = src_container.streams.video[0].codec_context
            out = av.open(os.fspath(dst), "w", format="mp4")
            try:
                enc = _HeldEncoder(out, info, _template_frames(max(length for _, length in runs)), src_ctx)
                handle: dict[int, int] = {}
                by_index = {int(keys[pic]): pic for pic in needed}
                for index, frame in _decode_targets(src, sorted(by_index)):
                    handle[by_index[index]] = enc.add_picture(frame)
                idrs, skips = enc.finish()
                _mux_runs(out, enc.stream, [(idrs[handle[pic]], length) for pic, length in runs], skips)
            finally:
                out.close()
                src_container.close()
        except (av.FFmpegError, OSError, ValueError) as err:
            raise _wrap(src, f"holding {k} key frames ({order})", err) from err


def write_crf(src: PathLike, dst: PathLike, crf: int, preset: str = "medium") -> None:
    """Re-encode ``src`` with libx264 at constant rate factor ``crf`` (other settings: x264 defaults).

    One streaming decode and one encode, both frame-threaded; frames are renumbered at the source's
    average rate, so the output has a constant rate and the source's frame count.
    """
    info = probe(src)
    _even_dims(info, src)
    with _removing_partial(dst):
        try:
            container = av.open(os.fspath(src), "r")
            out = av.open(os.fspath(dst), "w", format="mp4")
            try:
                in_stream = container.streams.video[0]
                in_stream.thread_type = "FRAME"
                stream = _add_h264_stream(out, info, {"crf": str(int(crf)), "preset": preset}, in_stream.codec_context)
                time_base = stream.codec_context.time_base
                index = 0
                for frame in container.decode(in_stream):
                    if frame.format.name != "yuv420p" or frame.width != info.width or frame.height != info.height:
                        frame = frame.reformat(width=info.width, height=info.height, format="yuv420p")
                    frame.pict_type = PictureType.NONE  # else the source's I frames become forced key frames
                    frame.pts, frame.time_base = index, time_base
                    index += 1
                    for packet in stream.encode(frame):
                        out.mux(packet)
                for packet in stream.encode(None):
                    out.mux(packet)
            finally:
                out.close()
                container.close()
        except (av.FFmpegError, OSError) as err:
            raise _wrap(src, f"re-encoding at CRF {crf}", err) from err


def render(condition: Condition, src: PathLike, dst: PathLike, seed: int) -> None:
    """Write ``condition``'s version of ``src`` to ``dst`` (a new ``.mp4`` path).

    Raises:
        ValueError: the condition is ``identity`` (the source itself is used) or not a video transform.
        VideoDecodeError: ``src`` cannot be read or the output cannot be written.
    """
    params = condition.params
    if condition.transform == "black":
        write_black(src, dst)
    elif condition.transform == "hold":
        write_held(src, dst, k=int(params["k"]), order=params["order"], seed=seed)
    elif condition.transform == "crf":
        write_crf(src, dst, crf=int(params["crf"]), preset=str(params.get("preset", "medium")))
    elif condition.transform == "identity":
        raise ValueError(
            f"Condition {condition.name!r} is the identity: use the source video itself, nothing is rendered."
        )
    else:
        raise ValueError(f"Condition {condition.name!r} has no video transform ({condition.transform!r}).")
