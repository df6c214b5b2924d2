"""Two video streams in one file, each frame barcoded with the stream it belongs to."""

from __future__ import annotations

from pathlib import Path

import av

from tests.helpers.videos import barcode_rgb

#: Stream 1 shows OFFSET + i in frame i, stream 0 shows i: a decoded frame says which stream it came from.
OFFSET = 2000
N_FRAMES = 30


def write_two_streams(path: Path) -> Path:
    """A small 160x120 stream 0 beside a 320x240 stream 1, both 10 fps, 30 frames."""
    with av.open(str(path), "w") as out:
        small = out.add_stream("libx264", rate=10)
        large = out.add_stream("libx264", rate=10)
        for stream, (width, height) in ((small, (160, 120)), (large, (320, 240))):
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            stream.options = {"crf": "18", "preset": "veryfast", "x264-params": "keyint=10:min-keyint=10"}
        for i in range(N_FRAMES):
            for stream, shown in ((small, i), (large, OFFSET + i)):
                frame = av.VideoFrame.from_ndarray(barcode_rgb(shown, stream.width, stream.height), format="rgb24")
                frame.pts = i
                out.mux(stream.encode(frame))
        out.mux(small.encode(None))
        out.mux(large.encode(None))
    return path
