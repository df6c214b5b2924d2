"""validate and probe agree with decord, the reader lmms-eval's video models use.

Files decord cannot read (a picture named ``.mp4``, a tiny picture size) are rejected; the frame count is
decord's, and an mp4/mov whose edit list hides frames (as ``ffmpeg -ss 3 -c copy`` leaves) is either
counted as decord counts it or, where decord and PyAV differ by more than a frame, rejected naming both.
"""

from __future__ import annotations

import importlib
import re
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from tests.helpers.videos import X264_FIXED_GOP, barcode_rgb, read_index, shifted_copy, write_indexed_source
from vdg_tasks.perturb.video import VideoDecodeError, key_frame_indices, probe, reference, render, validate
from vdg_tasks.perturb.video.decode import scan_timeline
from vdg_tasks.vocabulary.conditions import CONDITIONS, DEFAULT_KEY_FRAMES

decord = pytest.importorskip("decord")

# The package's ``probe`` attribute is the function, so the module is looked up by name.
probe_module = importlib.import_module("vdg_tasks.perturb.video.probe")

READS_AS_DECORD = re.escape("decord (the reader lmms-eval's video models use) cannot read it")


def decord_reads(path: Path, k: int = DEFAULT_KEY_FRAMES) -> bool:
    """Whether decord opens ``path`` and decodes the frames validate targets, as lmms-eval reads them."""
    try:
        reader = decord.VideoReader(str(path))
        n = len(reader)
        reader.get_batch(sorted({*key_frame_indices(n, k).tolist(), n - 1})).asnumpy()
    except Exception:  # DECORDError, RuntimeError
        return False
    return True


def vdg_accepts(path: Path, decoded: bool = False) -> bool:
    """Whether vdg takes ``path`` as a source: for orig and black (``decoded=False``), or for the conditions built
    from its decoded pictures."""
    try:
        validate(path, decoded=decoded)
    except VideoDecodeError:
        return False
    return True


def playing_frames(path: Path, **options: str) -> int:
    """Video packets PyAV's demuxer gives that play (not hidden by an edit list)."""
    with av.open(str(path), options=options) as container:
        stream = container.streams.video[0]
        return sum(1 for p in container.demux(stream) if p.size and not p.is_discard)


def listed_frames(path: Path) -> int:
    with av.open(str(path)) as container:
        return int(container.streams.video[0].frames)


def write_picture(path: Path, codec: str, fmt: str, pix_fmt: str, n: int = 1) -> Path:
    """``n`` 64x48 barcode pictures written by FFmpeg's image muxers (image2pipe, gif) to a file named ``path``."""
    with av.open(str(path), "w", format=fmt) as out:
        stream = out.add_stream(codec, rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, pix_fmt
        for i in range(n):
            frame = av.VideoFrame.from_ndarray(barcode_rgb(i, 64, 48), format="rgb24")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


@pytest.fixture(scope="module")
def source45(tmp_path_factory) -> Path:
    """45 frames at 10 fps, key frames at 0, 12, 24, 36."""
    return write_indexed_source(tmp_path_factory.mktemp("readable") / "src45.mp4", 45, options=X264_FIXED_GOP)


# --------------------------------------------------------------------------------------------
# Files decord cannot read


@pytest.mark.parametrize(
    ("name", "codec", "fmt", "pix_fmt", "n"),
    [
        ("png", "png", "image2pipe", "rgb24", 1),
        ("jpeg", "mjpeg", "image2pipe", "yuvj420p", 1),
        ("gif", "gif", "gif", "rgb8", 1),
        ("animated_gif", "gif", "gif", "rgb8", 10),
    ],
)
def test_a_picture_named_mp4_gets_decords_verdict(tmp_path, name, codec, fmt, pix_fmt, n):
    path = write_picture(tmp_path / f"{name}.mp4", codec, fmt, pix_fmt, n)
    with av.open(str(path)) as container:  # PyAV opens it, with a video stream
        assert container.streams.video
    assert vdg_accepts(path) == decord_reads(path)
    assert not decord_reads(path)  # decord 0.6: "Failed to measure duration/frame-count due to broken metadata"
    with pytest.raises(VideoDecodeError, match=rf"{re.escape(str(path))}: is a still image.*{READS_AS_DECORD}"):
        validate(path)


def test_a_picture_is_rejected_without_decord_too(tmp_path, monkeypatch):
    path = write_picture(tmp_path / "png.mp4", "png", "image2pipe", "rgb24")
    monkeypatch.setattr(reference, "decord_module", lambda: None)
    with pytest.raises(VideoDecodeError, match=r"png\.mp4: is a still image or image sequence \(png_pipe\)"):
        validate(path)


@pytest.mark.parametrize(("width", "height"), [(1, 1), (2, 2), (8, 8), (10, 10), (32, 32)])
def test_a_picture_size_decord_cannot_copy_gets_decords_verdict(tmp_path, width, height):
    """decord 0.6 fails to copy some small frames out ("Check failed: from_size == to_size"): 1x1, 2x2, 8x8."""
    path = write_indexed_source(tmp_path / f"{width}x{height}.mp4", 12, width=width, height=height, pix_fmt="yuv444p")
    assert probe(path).width == width  # PyAV reads it
    readable = decord_reads(path)
    assert readable == ((width, height) not in {(1, 1), (2, 2), (8, 8)})
    assert vdg_accepts(path) == readable
    if not readable:
        with pytest.raises(VideoDecodeError, match=rf"{re.escape(str(path))}: {READS_AS_DECORD}.*from_size"):
            validate(path)


def test_every_hostile_source_gets_decords_verdict(hostile):
    """The damaged, messy and odd fixtures: for orig and black vdg accepts exactly what decord reads; the conditions
    built from the decoded pictures also refuse what decord misreads on random access (HEVC, joined transport
    streams)."""
    verdicts = {name: (vdg_accepts(path), decord_reads(path)) for name, path in hostile.items()}
    assert {name: vdg for name, (vdg, _) in verdicts.items()} == {name: dec for name, (_, dec) in verdicts.items()}
    rejected = {"empty", "random_bytes", "truncated_index", "truncated_no_index"}
    assert {name for name, (vdg, _) in verdicts.items() if not vdg} == rejected
    misread = {name for name, path in hostile.items() if name not in rejected and not vdg_accepts(path, decoded=True)}
    assert misread == {"hevc", "spliced_ts"} & set(hostile)


def test_a_damaged_file_is_still_named_truncated_before_decord_is_asked(hostile):
    with pytest.raises(VideoDecodeError, match="truncated"):
        validate(hostile["truncated_index"])


# --------------------------------------------------------------------------------------------
# Edit lists: the count is decord's


def test_an_edit_list_hiding_five_frames_is_an_error_naming_both_counts(source45, tmp_path):
    for suffix in ("mp4", "mov"):
        path = shifted_copy(source45, tmp_path / f"hide5.{suffix}", start=5)
        # decord counts the 5 hidden frames (and shows the last frame 5 more times); PyAV plays 40.
        assert len(decord.VideoReader(str(path))) == listed_frames(path) == 45
        assert playing_frames(path) == 40
        assert read_index(decord.VideoReader(str(path))[0].asnumpy()) == 5
        for check in (probe, validate):
            with pytest.raises(VideoDecodeError, match=rf"hide5\.{suffix}: .*counts 45 video frames but PyAV plays 40"):
                check(path)


def test_a_stream_copy_trim_off_by_two_is_an_error_naming_both_counts(source45, tmp_path):
    """``ffmpeg -ss 2.6 -c copy``: from key frame 24, with frames 24 and 25 hidden."""
    path = shifted_copy(source45, tmp_path / "trim.mp4", start=26, keep_from=24)
    n_decord = len(decord.VideoReader(str(path)))
    assert (n_decord, playing_frames(path)) == (21, 19)
    with pytest.raises(VideoDecodeError, match=r"trim\.mp4: .*counts 21 video frames but PyAV plays 19"):
        validate(path)


def test_an_edit_list_starting_on_a_key_frame_is_not_taken_for_truncation(source45, tmp_path):
    """The mov demuxer drops the 24 samples before key frame 24 from its index: 45 listed, 21 demuxed."""
    path = shifted_copy(source45, tmp_path / "from_key.mp4", start=24)
    reader = decord.VideoReader(str(path))
    assert len(reader) == playing_frames(path) == 21
    assert listed_frames(path) == 45 == playing_frames(path, ignore_editlist="1")
    with av.open(str(path)) as container:  # what made validate call it truncated
        with pytest.raises(ValueError, match="lists 45 video frames but only 21"):
            scan_timeline(container, container.streams.video[0], path.stat().st_size)
    info = validate(path)
    assert (info.n_frames, info.duration) == (21, pytest.approx(2.1))
    assert [read_index(reader[i].asnumpy()) for i in (0, 20)] == [24, 44]
    # and every condition renders it: the held and crf outputs last as long as the 21 frames decord shows
    for name in ("black", "ordered", "crf28"):
        out = tmp_path / f"from_key_{name}.mp4"
        render(CONDITIONS[name], path, out, seed=0)
        assert probe(out).duration == pytest.approx(info.duration, abs=0.11), name


def test_an_edit_list_that_truly_lost_data_is_still_truncated(source45, tmp_path):
    """Index first (faststart), so it survives the cut: seen with the edit list ignored, samples are missing."""
    whole = shifted_copy(source45, tmp_path / "from_key.mp4", start=24, faststart=True)
    assert vdg_accepts(whole)  # the control
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(whole.read_bytes()[: int(whole.stat().st_size * 0.7)])
    with pytest.raises(VideoDecodeError, match=r"cut\.mp4: .*truncated"):
        validate(cut)


def test_one_hidden_frame_takes_decords_count_and_refuses_the_conditions_built_from_pictures(source45, tmp_path):
    """An edit list hiding one frame: decord counts 45 frames and PyAV plays 44; decord's random access to the last
    frames lands where PyAV's does not. orig and black (no picture of the source) take decord's count and duration;
    the conditions built from PyAV's pictures are refused (decord's random access past the edit list lands one
    frame off on about half of the key frames)."""
    path = shifted_copy(source45, tmp_path / "hide1.mp4", start=1)
    n_decord = len(decord.VideoReader(str(path)))
    assert (n_decord, playing_frames(path)) == (45, 44)
    info = validate(path, decoded=False)
    assert (info.n_frames, info.fps, info.duration) == (n_decord, Fraction(10), pytest.approx(4.5))
    out = tmp_path / "hide1_black.mp4"
    render(CONDITIONS["black"], path, out, seed=0)
    assert probe(out).duration == pytest.approx(4.5)  # black lasts as long as decord shows the source
    with pytest.raises(VideoDecodeError, match=r"hide1\.mp4: the source's decoders disagree"):
        validate(path)


def test_probe_counts_as_decord_does(source45, hostile):
    for path in (source45, hostile["vp9"], hostile["vfr"], hostile["frames_1"]):
        assert probe(path).n_frames == len(decord.VideoReader(str(path)))


def test_without_decord_pyav_counts_as_before(source45, tmp_path, monkeypatch):
    path = shifted_copy(source45, tmp_path / "hide5.mp4", start=5)
    tiny = write_indexed_source(tmp_path / "1x1.mp4", 12, width=1, height=1, pix_fmt="yuv444p")
    monkeypatch.setattr(reference, "decord_module", lambda: None)
    assert validate(path).n_frames == 45  # the container's count: nothing to compare with
    assert validate(tiny).n_frames == 12
    assert np.isfinite(validate(source45).duration)
