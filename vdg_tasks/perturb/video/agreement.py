"""Whether decord (the reader lmms-eval's video models use) and PyAV (which every vdg condition is built from) decode
the same pictures for a source's frames.

They do not always: for an MPEG-2 or H.264 stream in MPEG-TS, or some HEVC mp4s, decord 0.6 returns frame ``i + 12``
(or ``i + 3``) for frame ``i`` and repeats the last frame at the end, while PyAV decodes every frame where it is.
A condition built from PyAV's frames and compared with ``orig`` (which the models read through decord) would then
measure decord's misreading, not the perturbation. The rule: a condition is built from, and checked against, what the
models' decoder presents; where the two decoders disagree on the frames a condition uses, the source is refused (every
condition of the question becomes an error row) with the frames, the difference and a re-encode command.
"""

from __future__ import annotations

import itertools
import os
import shlex
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import av
import numpy as np

from . import reference
from .decode import checked_timeline, decode_targets
from .reference import DECORD_BATCH, DECORD_WHO, PathLike, VideoDecodeError, decord_message, decord_reader, video_stream

__all__ = ["AGREEMENT_TOLERANCE", "check_decord_reads", "check_decoders_agree", "frame_difference", "reencode_command"]

#: Largest mean absolute difference (RGB levels of 255, over every pixel and channel) at which decord's and PyAV's
#: pictures of one frame count as the same picture. Where the decoders agree they are bit for bit equal (0.0: both
#: run FFmpeg's decoder and swscale to ``rgb24``, for 8- and 10-bit, 4:2:0 and 4:4:4, limited and full range); a
#: one-level rounding difference on every pixel still passes. A one-frame shift fails unless the scene is nearly
#: still (the test's flat grey steps of 3 levels over half the picture give 1.5).
AGREEMENT_TOLERANCE = 1.0
#: At most this many disagreeing frames are named in the message (then how many more).
_NAMED_FRAMES = 8


def frame_difference(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference of two ``(H, W, 3)`` ``uint8`` RGB pictures, in levels of 255.

    Raises:
        ValueError: the pictures' shapes differ.
    """
    if a.shape != b.shape:
        raise ValueError(f"pictures of shapes {a.shape} and {b.shape} cannot be compared")
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


def reencode_command(path: PathLike, stream_index: int) -> str:
    """An ffmpeg command that re-encodes ``path``'s video stream ``stream_index`` (and its audio) to an H.264 mp4 with
    regenerated timestamps, which decord and PyAV decode alike."""
    src = Path(os.fspath(path))
    dst = src.with_name(f"{src.stem}.h264.mp4")
    return (
        f"ffmpeg -fflags +genpts -i {shlex.quote(str(src))} -map 0:{int(stream_index)} -map 0:a:0? "
        f"-c:v libx264 -crf 18 -preset medium -pix_fmt yuv420p -c:a aac {shlex.quote(str(dst))}"
    )


def _as_decord_shows(frame: av.VideoFrame) -> np.ndarray:
    """PyAV's frame as decord presents it: ``rgb24``, turned by the display matrix's multiple of 90 degrees (decord
    applies FFmpeg's ``rotate`` tag; PyAV's ``rotation`` is counterclockwise, as ``np.rot90``'s)."""
    rgb = frame.to_ndarray(format="rgb24")
    turns = round(float(getattr(frame, "rotation", 0) or 0) / 90)
    return np.ascontiguousarray(np.rot90(rgb, turns % 4)) if turns % 4 else rgb


def _listing(differ: list[tuple[int, float]]) -> str:
    named = ", ".join(f"{index} ({mad:.1f})" for index, mad in differ[:_NAMED_FRAMES])
    more = f" and {len(differ) - _NAMED_FRAMES} more" if len(differ) > _NAMED_FRAMES else ""
    return named + more


def _decord_batches(reader: Any, name: str, targets: list[int]) -> Iterator[tuple[list[int], np.ndarray]]:
    """decord's pictures of ``targets``, ``DECORD_BATCH`` at a time (``get_batch``, as lmms-eval reads).

    Raises:
        VideoDecodeError: naming the file and the frames asked, when decord fails on a batch.
    """
    for at in range(0, len(targets), DECORD_BATCH):
        batch = targets[at : at + DECORD_BATCH]
        try:
            yield batch, reader.get_batch(batch).asnumpy()
        except Exception as err:  # DECORDError, RuntimeError: e.g. a 1x1 or 8x8 picture, an undecodable frame
            raise VideoDecodeError(
                f"{name}: {DECORD_WHO} cannot read it: decoding {len(targets)} frames "
                f"({targets[0]} to {targets[-1]}) failed: {decord_message(err)}"
            ) from err


def check_decord_reads(path: PathLike, indices: Iterable[int]) -> None:
    """Refuse ``path`` unless decord opens it and decodes the frames ``indices`` (nothing compared: for the
    conditions that show no picture PyAV decoded, ``orig`` and ``black``). Nothing is checked without decord.

    Raises:
        VideoDecodeError: naming the file, when decord cannot open it or decode a frame (a PNG named ``.mp4``; a
            1x1 or 8x8 picture, whose frame copy fails in decord).
    """
    targets = sorted({int(i) for i in indices})
    decord = reference.decord_module()
    if not targets or decord is None:
        return
    reader = decord_reader(decord, path)
    try:
        for _ in _decord_batches(reader, os.fspath(path), targets):
            pass
    finally:
        del reader


def check_decoders_agree(path: PathLike, indices: Iterable[int], stream_index: int | None = None) -> None:
    """Refuse ``path`` unless decord and PyAV decode the same picture for each of the frames ``indices``.

    ``indices`` are the frames the conditions use: the held conditions' key frames (``key_frame_indices(n, k)``) and
    the last frame, as :func:`~vdg_tasks.perturb.video.validate` targets them. Only those frames are decoded: decord
    by ``get_batch``, :data:`~vdg_tasks.perturb.video.reference.DECORD_BATCH` frames at a time (as lmms-eval reads), and
    PyAV by seeking (``decode_targets``), both turned to ``rgb24`` (PyAV's also turned by the display matrix, as
    decord turns it); a frame disagrees when :func:`frame_difference` exceeds :data:`AGREEMENT_TOLERANCE`.
    ``stream_index`` is the video stream read (``VideoInfo.stream_index``); ``None`` picks it as ``video_stream``
    does. Nothing is checked where decord is not installed.

    Raises:
        VideoDecodeError: naming the file: decord cannot read it or decode a frame (the message
            :func:`~vdg_tasks.perturb.video.validate` gives); PyAV cannot decode a frame; or the decoders present
            pictures of different sizes or different pictures, naming the frames, the differences and an ffmpeg
            command that re-encodes the source.
    """
    targets = sorted({int(i) for i in indices})
    decord = reference.decord_module()
    if not targets or decord is None:
        return
    if targets[0] < 0:
        raise ValueError(f"frame indices must be at least 0, got {targets[0]}")
    name = os.fspath(path)
    reader = decord_reader(decord, path)
    differ: list[tuple[int, float]] = []
    try:
        with av.open(name, "r") as container:
            stream = video_stream(container, path) if stream_index is None else container.streams[stream_index]
            if not isinstance(stream, av.video.stream.VideoStream):
                raise VideoDecodeError(f"{name}: stream {stream_index} is not a video stream")
            chosen = stream.index
            timeline = checked_timeline(path, container, stream)
            decoded = decode_targets(container, stream, timeline, targets)
            for batch, presented in _decord_batches(reader, name, targets):
                for shown, (index, frame) in zip(presented, itertools.islice(decoded, len(batch)), strict=True):
                    ours = _as_decord_shows(frame)
                    if ours.shape != shown.shape:
                        raise VideoDecodeError(
                            f"{name}: {DECORD_WHO} presents frame {index} as a {shown.shape[1]}x{shown.shape[0]} "
                            f"picture but PyAV, which vdg builds the conditions from, decodes it as "
                            f"{ours.shape[1]}x{ours.shape[0]}: the conditions would not show what the models see "
                            f"under orig; re-encode the source: {reencode_command(path, chosen)}"
                        )
                    mad = frame_difference(ours, shown)
                    if mad > AGREEMENT_TOLERANCE:
                        differ.append((index, mad))
    except VideoDecodeError:
        raise
    except Exception as err:  # whatever a damaged file makes FFmpeg, PyAV or the checks raise
        raise VideoDecodeError(f"{name}: is damaged: {err}") from err
    finally:
        del reader
    if differ:
        raise VideoDecodeError(
            f"{name}: the source's decoders disagree: {DECORD_WHO} and PyAV, which vdg builds the conditions from, "
            f"decode different pictures for {len(differ)} of the {len(targets)} frames the conditions use; frame "
            f"(mean absolute RGB difference, levels of 255; tolerance {AGREEMENT_TOLERANCE}): {_listing(differ)}. "
            "Every comparison with orig would measure decord's misreading, not the perturbation. Re-encode the "
            f"source, which both then read alike: {reencode_command(path, chosen)}"
        )
