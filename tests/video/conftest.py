"""Small generated sources whose frames carry their own index as a barcode."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

#: Barcode layout: BITS_X x BITS_Y blocks over the whole picture, most significant bit first.
BITS_X, BITS_Y = 4, 3


def barcode_rgb(index: int, width: int, height: int) -> np.ndarray:
    """An RGB picture showing ``index`` as big black/white blocks (robust to H.264 and resizing)."""
    bits = [(index >> (BITS_X * BITS_Y - 1 - b)) & 1 for b in range(BITS_X * BITS_Y)]
    grid = np.array(bits, dtype=np.uint8).reshape(BITS_Y, BITS_X) * 255
    ys = np.arange(height) * BITS_Y // height
    xs = np.arange(width) * BITS_X // width
    picture = grid[ys][:, xs]
    return np.repeat(picture[:, :, None], 3, axis=2)


def read_index(rgb: np.ndarray) -> int:
    """The index drawn by :func:`barcode_rgb`, read back from a decoded ``(H, W, 3)`` or ``(3, H, W)`` frame."""
    rgb = np.asarray(rgb, dtype=np.float64)
    if rgb.shape[0] == 3 and rgb.shape[-1] != 3:
        rgb = rgb.transpose(1, 2, 0)
    height, width = rgb.shape[:2]
    grey = rgb.mean(axis=2)
    value = 0
    for by in range(BITS_Y):
        for bx in range(BITS_X):
            y0, y1 = (4 * by + 1) * height // (4 * BITS_Y), (4 * by + 3) * height // (4 * BITS_Y)
            x0, x1 = (4 * bx + 1) * width // (4 * BITS_X), (4 * bx + 3) * width // (4 * BITS_X)
            value = (value << 1) | int(grey[y0:y1, x0:x1].mean() > 127.5)
    return value


def write_indexed_source(
    path: Path, n_frames: int, fps: Fraction | int = 10, width: int = 160, height: int = 120, gop: int = 12
) -> Path:
    """An H.264 mp4 whose frame ``i`` shows ``i`` (B frames, a key frame every ``gop`` frames)."""
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=Fraction(fps))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": "18", "preset": "veryfast", "x264-params": f"keyint={gop}:min-keyint={gop}"}
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(barcode_rgb(i, width, height), format="rgb24")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


@pytest.fixture(scope="session")
def source_k8(tmp_path_factory) -> Path:
    """160x120, 10 fps, 80 frames (8 s): for K = 8."""
    return write_indexed_source(tmp_path_factory.mktemp("src") / "k8.mp4", 80, fps=10)


@pytest.fixture(scope="session")
def source_k32(tmp_path_factory) -> Path:
    """160x120, 24000/1001 fps, 70 frames (>= 2K for K = 32)."""
    return write_indexed_source(tmp_path_factory.mktemp("src") / "k32.mp4", 70, fps=Fraction(24000, 1001), gop=20)
