"""MPEG-TS sources with a non-zero start or a 33-bit timestamp wrap, each frame painted with its index."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np

N_FRAMES, FPS, GOP, WIDTH, HEIGHT = 60, 25, 12, 64, 48
TICKS = 90_000  # MPEG-TS timestamps are 90 kHz
PERIOD = TICKS // FPS  # 3600 ticks per frame
WRAP = 1 << 33  # the 33-bit PTS field wraps here
#: Frame i is painted with luma LUMA0 + LUMA_STEP * i (16..193: inside video range for 60 frames).
LUMA0, LUMA_STEP = 16, 3
STARTS = {
    "start_10s": 10 * TICKS,  # a non-zero start, as a broadcast capture has
    "wrap": (WRAP // PERIOD) * PERIOD - TICKS,  # ~1 s before the wrap (a whole frame): the last 1.4 s are past 2**33
}


def write_ts(path: Path, start: int, codec: str) -> Path:
    """``N_FRAMES`` grey frames at ``FPS``, B frames, a key frame every ``GOP``; frame i at pts ``start + i * PERIOD``.

    The encoder counts in frames (MPEG-2 accepts only its standard rates as a time base); the muxer
    writes 90 kHz timestamps modulo 2**33.
    """
    with av.open(str(path), "w", format="mpegts") as out:
        stream = out.add_stream(codec, rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        if codec == "libx264":
            stream.options = {"crf": "10", "preset": "veryfast", "x264-params": f"keyint={GOP}:min-keyint={GOP}"}
        else:
            stream.options = {"g": str(GOP), "bf": "2", "flags": "+qscale", "global_quality": str(2 * 118)}  # -q:v 2
        for i in range(N_FRAMES):
            luma = np.full((HEIGHT, WIDTH), LUMA0 + LUMA_STEP * i, dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(luma, format="gray").reformat(format="yuv420p")
            frame.pts, frame.time_base = start // PERIOD + i, Fraction(1, FPS)
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path
