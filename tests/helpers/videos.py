"""Generated test videos: barcoded (frame-indexed) sources, hostile sources, edit-list copies."""

from __future__ import annotations

import struct
from fractions import Fraction
from pathlib import Path

import av
import numpy as np


def write_source(path: Path, n_frames: int = 72, size=(96, 64), fps: int = 8, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        for i in range(n_frames):
            frame = np.full((size[1], size[0], 3), (i * 3) % 255, dtype=np.uint8)
            frame[:, : size[0] // 2] = rng.integers(0, 255, 3, dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


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
    path: Path,
    n_frames: int,
    fps: Fraction | int = 10,
    width: int = 160,
    height: int = 120,
    gop: int = 12,
    *,
    codec: str = "libx264",
    pix_fmt: str = "yuv420p",
    pts_ms: list[int] | None = None,
    audio: str | None = None,
    options: dict[str, str] | None = None,
    container_options: dict[str, str] | None = None,
) -> Path:
    """A video whose frame ``i`` shows ``i`` (libx264 by default: B frames, a key frame every ``gop`` frames).

    ``pts_ms``: per-frame timestamps in milliseconds (a variable frame rate) instead of ``i / fps``.
    ``audio``: an audio codec (``aac``, ``pcm_mulaw``, ...) for a mono 16 kHz tone lasting the video.
    """
    default_options = {
        "libx264": {"crf": "18", "preset": "veryfast", "x264-params": f"keyint={gop}:min-keyint={gop}"},
        "libx265": {
            "crf": "20",
            "preset": "ultrafast",
            "x265-params": f"keyint={gop}:min-keyint={gop}:log-level=error",
        },
        "libvpx-vp9": {"crf": "30", "b": "0", "deadline": "realtime", "cpu-used": "8", "g": str(gop)},
    }
    with av.open(str(path), "w", options=container_options or {}) as out:
        stream = out.add_stream(codec, rate=Fraction(fps))
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        stream.options = options if options is not None else default_options.get(codec, {})
        if pts_ms is not None:
            stream.codec_context.time_base = Fraction(1, 1000)
        sound = None
        if audio is not None:
            sound = out.add_stream(audio, rate=16000, layout="mono")
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(barcode_rgb(i, width, height), format="rgb24")
            if pts_ms is not None:
                frame.pts, frame.time_base = pts_ms[i], Fraction(1, 1000)
            else:
                frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
        if sound is not None:
            _write_tone(out, sound, seconds=float(n_frames / Fraction(fps)))
    return path


def _write_tone(out: av.container.OutputContainer, stream: av.audio.stream.AudioStream, seconds: float) -> None:
    rate, chunk = 16000, 1024
    total = int(seconds * rate)
    for start in range(0, total, chunk):
        t = np.arange(start, min(start + chunk, total)) / rate
        samples = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)[None]
        frame = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
        frame.sample_rate, frame.pts = rate, start
        out.mux(stream.encode(frame))
    out.mux(stream.encode(None))


#: FFmpeg's display matrix for a 90 degree rotation (``av_display_rotation_set(m, 90)``), as phones store it.
ROTATE_90 = (0, 1 << 16, 0, -(1 << 16), 0, 0, 0, 0, 1 << 30)


def _set_tkhd_matrix(path: Path, matrix: tuple[int, ...]) -> None:
    """Patch the only track's ``tkhd`` matrix of an mp4 whose ``moov`` comes last (what PyAV writes)."""
    data = bytearray(path.read_bytes())
    tkhd = data.find(b"tkhd", data.rfind(b"moov"))
    assert tkhd > 0 and data[tkhd + 4] == 0, "expected one version-0 tkhd"
    matrix_at = tkhd + 4 + 4 + 20 + 8 + 8  # version/flags, times/id/duration, reserved, layer..volume
    data[matrix_at : matrix_at + 36] = struct.pack(">9i", *matrix)
    path.write_bytes(bytes(data))


def _truncate(path: Path, keep: float) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def make_hostile_sources(folder: Path) -> dict[str, Path]:
    """Small sources that have broken naive video code, by name; every decodable one shows its frame index.

    ``empty`` (0 bytes), ``random_bytes``, ``truncated_index`` (moov first, mdat cut to 60 %),
    ``truncated_no_index`` (moov last, cut: no index), ``frames_1``/``_10``/``_33``/``_40``/``_63``
    (that many frames at 10 fps), ``odd_size`` (161x121, 4:4:4 H.264), ``rotated`` (a 90 degree
    display matrix), ``vfr`` (frame durations 50/150/100 ms), ``audio`` (+ AAC), ``bit10``
    (yuv420p10le H.264), ``yuv444`` (4:4:4 H.264), ``vp9`` (webm) and ``hevc`` (only when PyAV has
    libx265), and :func:`make_valid_oddities`. Everything else is 160x120 H.264 mp4 with B frames.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    made: dict[str, Path] = {}
    made["empty"] = folder / "empty.mp4"
    made["empty"].write_bytes(b"")
    made["random_bytes"] = folder / "random_bytes.mp4"
    made["random_bytes"].write_bytes(np.random.default_rng(0).integers(0, 256, 20_000, dtype=np.uint8).tobytes())
    made["truncated_index"] = _truncate(
        write_indexed_source(folder / "truncated_index.mp4", 60, container_options={"movflags": "faststart"}), 0.6
    )
    made["truncated_no_index"] = _truncate(write_indexed_source(folder / "truncated_no_index.mp4", 60), 0.6)
    for n in (1, 10, 33, 40, 63):
        made[f"frames_{n}"] = write_indexed_source(folder / f"frames_{n}.mp4", n)
    made["odd_size"] = write_indexed_source(folder / "odd_size.mp4", 40, width=161, height=121, pix_fmt="yuv444p")
    made["rotated"] = write_indexed_source(folder / "rotated.mp4", 40)
    _set_tkhd_matrix(made["rotated"], ROTATE_90)
    durations = [50, 150, 100] * 15
    made["vfr"] = write_indexed_source(folder / "vfr.mp4", 45, pts_ms=[sum(durations[:i]) for i in range(45)])
    made["audio"] = write_indexed_source(folder / "audio.mp4", 40, audio="aac")
    made["bit10"] = write_indexed_source(folder / "bit10.mp4", 40, pix_fmt="yuv420p10le")
    made["yuv444"] = write_indexed_source(folder / "yuv444.mp4", 40, pix_fmt="yuv444p")
    made["vp9"] = write_indexed_source(folder / "vp9.webm", 40, codec="libvpx-vp9")
    if "libx265" in av.codecs_available:
        made["hevc"] = write_indexed_source(folder / "hevc.mp4", 40, codec="libx265")
    made.update(make_valid_oddities(folder / "oddities"))
    return made


def write_barcoded(
    path: Path,
    n_frames: int,
    *,
    first: int = 0,
    pts: list[int] | None = None,
    time_base: Fraction = Fraction(1, 10),
    size: tuple[int, int] = (160, 120),
    sar: Fraction | None = None,
    colour: dict[str, int] | None = None,
    format: str | None = None,
) -> Path:
    """H.264 (10 fps nominal, a key frame every 12) whose frame ``i`` shows ``first + i``.

    ``pts``: frame ``i``'s timestamp in ``time_base`` (default ``i`` at 1/10 s); ``sar``: a sample aspect ratio;
    ``colour``: codec colour fields (``color_range``, ``color_primaries``, ``color_trc``, ``colorspace``).
    """
    width, height = size
    with av.open(str(path), "w", format=format) as out:
        stream = out.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": "18", "preset": "veryfast", "x264-params": "keyint=12:min-keyint=12"}
        stream.codec_context.time_base = time_base
        if sar is not None:
            stream.codec_context.sample_aspect_ratio = sar
        for name, value in (colour or {}).items():
            setattr(stream.codec_context, name, value)
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(barcode_rgb(first + i, width, height), format="rgb24")
            frame.pts, frame.time_base = (pts[i] if pts is not None else i), time_base
            if colour and "color_range" in colour:
                frame.color_range = colour["color_range"]
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


def write_picture_track_first(path: Path, n_frames: int = 30) -> Path:
    """A Matroska file whose stream 0 is a one-frame 320x240 picture (showing 2000) and stream 1 the video
    (``n_frames`` at 160x120 showing their index). Matroska lists no frame count."""
    with av.open(str(path), "w") as out:
        picture = out.add_stream("libx264", rate=10)
        video = out.add_stream("libx264", rate=10)
        for stream, (width, height) in ((picture, (320, 240)), (video, (160, 120))):
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            stream.options = {"crf": "18", "preset": "veryfast", "x264-params": "keyint=12:min-keyint=12"}
        cover = av.VideoFrame.from_ndarray(barcode_rgb(2000, 320, 240), format="rgb24")
        cover.pts = 0
        out.mux(picture.encode(cover))
        out.mux(picture.encode(None))
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(barcode_rgb(i, 160, 120), format="rgb24")
            frame.pts = i
            out.mux(video.encode(frame))
        out.mux(video.encode(None))
    return path


def write_spliced_ts(path: Path, n_each: int = 30) -> Path:
    """Two MPEG transport streams concatenated byte for byte (``cat a.ts b.ts``): the first starts at 10 s, the
    second at 0 (the timestamps restart); frame ``i`` shows ``i`` across both (``2 * n_each`` frames)."""
    parts = [
        write_barcoded(
            path.with_suffix(f".part{n}.ts"), n_each, first=n * n_each, pts=[start + i for i in range(n_each)]
        )
        for n, start in enumerate((100, 0))
    ]
    path.write_bytes(b"".join(part.read_bytes() for part in parts))
    for part in parts:
        part.unlink()
    return path


#: Colour tags of the ``bt709_full`` hostile source (AVCOL_*): full range, BT.709 primaries, transfer and matrix.
BT709_FULL = {"color_range": 2, "color_primaries": 1, "color_trc": 1, "colorspace": 1}


def make_valid_oddities(folder: Path) -> dict[str, Path]:
    """Valid sources that decord and torchcodec read fully, with what naive code gets wrong, by name.

    ``start_10s_mkv`` (timestamps start at 10 s; Matroska's DURATION tag says 12 s), ``picture_track_mkv`` (a
    one-frame picture track before the video), ``spliced_ts`` (two transport streams concatenated: timestamps
    restart), ``jump_mkv`` (40 frames at 10 fps with a 5 s timestamp jump after frame 20: 9 s presented),
    ``anamorphic`` (sample aspect ratio 4:3) and ``bt709_full`` (full-range BT.709 colour tags).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return {
        "start_10s_mkv": write_barcoded(folder / "start_10s.mkv", 20, pts=[100 + i for i in range(20)]),
        "picture_track_mkv": write_picture_track_first(folder / "picture_track.mkv"),
        "spliced_ts": write_spliced_ts(folder / "spliced.ts"),
        "jump_mkv": write_barcoded(folder / "jump.mkv", 40, pts=[i if i < 20 else i + 50 for i in range(40)]),
        "anamorphic": write_barcoded(folder / "anamorphic.mp4", 40, sar=Fraction(4, 3)),
        "bt709_full": write_barcoded(folder / "bt709_full.mp4", 40, colour=BT709_FULL),
    }


def decode_all(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


#: Key frames exactly every 12 frames (no scene-cut key frames: the barcode changes every frame).
GOP = 12
X264_FIXED_GOP = {"crf": "18", "preset": "veryfast", "x264-params": f"keyint={GOP}:min-keyint={GOP}:scenecut=0"}


def shifted_copy(src: Path, dst: Path, start: int, keep_from: int = 0, faststart: bool = False) -> Path:
    """A stream copy of ``src`` whose frame ``start`` plays first: the mp4/mov muxer writes an edit list.

    Packets are shifted by ``start`` frames (those before it get negative timestamps, which the muxer
    hides with an edit list); packets decoded before frame ``keep_from`` are dropped (``keep_from``
    a key frame: what ``ffmpeg -ss <start> -c copy`` keeps). ``faststart``: the index before the data.
    """
    options = {"movflags": "faststart"} if faststart else {}
    with av.open(str(src)) as inp, av.open(str(dst), "w", options=options) as out:
        stream = inp.streams.video[0]
        copy = out.add_stream_from_template(stream)
        step = int(1 / (stream.average_rate * stream.time_base))
        first_dts = None
        for packet in inp.demux(stream):
            if not packet.size:
                continue
            if first_dts is None and packet.pts == keep_from * step:
                assert packet.is_keyframe, f"frame {keep_from} is not a key frame"
                first_dts = packet.dts
            if first_dts is None:
                continue
            packet.pts -= start * step
            packet.dts -= start * step
            packet.stream = copy
            out.mux(packet)
    return dst
