"""Full-range and limited-range sources: left half black, right half white."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

WIDTH, HEIGHT, FPS, N_FRAMES = 64, 48, 10, 20
#: BT.709 matrix, primaries and transfer (AVCOL_SPC/PRI/TRC_BT709), so that the tags are not all defaults.
BT709 = 1
#: Source kinds: (pixel format, AVCOL_RANGE_* tag, luma of black, luma of white).
SOURCES = {
    "limited": ("yuv420p", 1, 16, 235),
    "full": ("yuv420p", 2, 0, 255),
    "yuvj420p": ("yuvj420p", 2, 0, 255),
}


def write_half_black_source(path: Path, kind: str) -> Path:
    """``N_FRAMES`` frames, left half black and right half white at the range's luma extremes."""
    pix_fmt, color_range, black, white = SOURCES[kind]
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, pix_fmt
        stream.options = {"crf": "10", "preset": "veryfast"}
        ctx = stream.codec_context
        ctx.color_range = color_range
        ctx.colorspace = ctx.color_primaries = ctx.color_trc = BT709
        luma = np.full((HEIGHT, WIDTH), black, np.uint8)
        luma[:, WIDTH // 2 :] = white
        chroma = np.full((HEIGHT // 2, WIDTH // 2), 128, np.uint8)
        for i in range(N_FRAMES):
            frame = av.VideoFrame(WIDTH, HEIGHT, pix_fmt)
            for plane, values in zip(frame.planes, (luma, chroma, chroma), strict=True):
                padded = np.zeros((plane.height, plane.line_size), np.uint8)
                padded[:, : plane.width] = values
                plane.update(padded)
            frame.color_range = color_range
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path
