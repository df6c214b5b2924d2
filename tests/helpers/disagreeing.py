"""A source decord misreads: MPEG-2 in MPEG-TS, each frame showing its index as a barcode.

decord 0.6 presents frame ``i + GOP`` of such a file for frame ``i`` (and the last frame for the last ``GOP``
frames), while PyAV decodes frame ``i`` where it is.
"""

from __future__ import annotations

from pathlib import Path

import av

from tests.helpers.videos import barcode_rgb

N_FRAMES, FPS, GOP, WIDTH, HEIGHT = 60, 25, 12, 160, 120


def write_mpeg2_ts(path: Path, n_frames: int = N_FRAMES) -> Path:
    """``n_frames`` 160x120 MPEG-2 frames at 25 fps in MPEG-TS, B frames, a key frame every ``GOP``; frame ``i`` shows
    ``i`` (:func:`~tests.helpers.videos.read_index` reads it back)."""
    with av.open(str(path), "w", format="mpegts") as out:
        stream = out.add_stream("mpeg2video", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.options = {"g": str(GOP), "bf": "2", "flags": "+qscale", "global_quality": str(2 * 118)}  # -q:v 2
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(barcode_rgb(i, WIDTH, HEIGHT), format="rgb24")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path
