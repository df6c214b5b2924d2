"""vdg_tasks.perturb.video.probe: probe's size, rate, count and stream; video_stream's choice; validate's checks.

Sources are tiny barcoded H.264 files written here (64x32 unless said: decord reads widths that are a
multiple of 32 and rejects 16x16), so every expected field is what the test wrote. decord-specific
expectations skip where decord is not installed; the without-decord paths are reached by hiding it.
"""

from __future__ import annotations

import importlib
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from tests.helpers.videos import ROTATE_90, _set_tkhd_matrix, barcode_rgb, shifted_copy, write_indexed_source
from vdg_tasks.perturb.video import reference
from vdg_tasks.perturb.video.probe import VideoDecodeError, VideoInfo, probe, validate, video_stream

#: The module itself (``vdg_tasks.perturb.video.probe`` is also the name of the function the package exports).
probe_module = importlib.import_module("vdg_tasks.perturb.video.probe")

WIDTH, HEIGHT = 64, 32
FIXED_GOP = {"crf": "18", "preset": "veryfast", "x264-params": "keyint=4:min-keyint=4:scenecut=0"}


def source(path: Path, n_frames: int = 10, fps: Fraction | int = 10, **kwargs) -> Path:
    kwargs = {"width": WIDTH, "height": HEIGHT, "options": FIXED_GOP, **kwargs}
    return write_indexed_source(path, n_frames, fps=fps, **kwargs)


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Path:
    """10 frames, 64x32, 10 fps; key frames 0, 4, 8."""
    return source(tmp_path_factory.mktemp("probe") / "plain.mp4")


@pytest.fixture
def without_decord(monkeypatch):
    monkeypatch.setattr(reference, "decord_module", lambda: None)


def write_video_streams(path: Path, counts: list[int], impaired: int | None = None) -> Path:
    """One 64x32 video stream per entry of ``counts`` (its frame count); stream ``impaired`` hearing impaired."""
    with av.open(str(path), "w") as out:
        streams = []
        for _ in counts:
            stream = out.add_stream("libx264", rate=10)
            stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
            stream.options = FIXED_GOP
            streams.append(stream)
        if impaired is not None:
            streams[impaired].disposition = av.stream.Disposition.hearing_impaired.value
        for i in range(max(counts)):
            for stream, n in zip(streams, counts, strict=True):
                if i < n:
                    frame = av.VideoFrame.from_ndarray(barcode_rgb(i, WIDTH, HEIGHT), format="rgb24")
                    frame.pts = i
                    out.mux(stream.encode(frame))
        for stream in streams:
            out.mux(stream.encode(None))
    return path


def write_audio_then_video(path: Path, n_frames: int = 10) -> Path:
    """An mp4 whose stream 0 is AAC audio and stream 1 the 64x32 video (10 fps)."""
    with av.open(str(path), "w") as out:
        sound = out.add_stream("aac", rate=16000, layout="mono")
        video = out.add_stream("libx264", rate=10)
        video.width, video.height, video.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(barcode_rgb(i, WIDTH, HEIGHT), format="rgb24")
            frame.pts = i
            out.mux(video.encode(frame))
        out.mux(video.encode(None))
        for start in range(0, 1600 * n_frames, 1024):
            samples = np.zeros((1, 1024), np.float32)
            chunk = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
            chunk.sample_rate, chunk.pts = 16000, start
            out.mux(sound.encode(chunk))
        out.mux(sound.encode(None))
    return path


# --------------------------------------------------------------------------------------------
# probe: what it reports


@pytest.mark.slow
def test_probe_reports_the_size_rate_count_and_duration_written(plain):
    # 10 frames at 10 fps last 1 s; the only stream is stream 0
    assert probe(plain) == VideoInfo(width=64, height=32, fps=Fraction(10), n_frames=10, duration=1.0, stream_index=0)


@pytest.mark.slow
def test_an_ntsc_rate_is_reported_exactly(tmp_path):
    info = probe(source(tmp_path / "ntsc.mp4", 7, fps=Fraction(24000, 1001)))
    assert info.fps == Fraction(24000, 1001)
    assert info.n_frames == 7
    assert info.duration == pytest.approx(7 * 1001 / 24000)  # 0.29196 s


@pytest.mark.slow
def test_an_odd_size_is_reported_as_coded(tmp_path):
    info = probe(source(tmp_path / "odd.mp4", 5, width=33, height=17, pix_fmt="yuv444p"))
    assert (info.width, info.height) == (33, 17)


@pytest.mark.slow
def test_a_rotated_video_reports_its_coded_size_not_the_displayed_one(tmp_path):
    path = source(tmp_path / "rotated.mp4", 6)
    _set_tkhd_matrix(path, ROTATE_90)  # displayed 32 wide and 64 high
    with av.open(str(path)) as container:
        assert next(container.decode(video=0)).rotation == -90  # the control: the rotation is there
    info = probe(path)
    assert (info.width, info.height, info.n_frames) == (64, 32, 6)


@pytest.mark.slow
def test_the_stream_index_counts_the_audio_stream_before_the_video(tmp_path):
    info = probe(write_audio_then_video(tmp_path / "audio_first.mp4"))
    assert info.stream_index == 1
    assert (info.width, info.height, info.n_frames, info.fps) == (64, 32, 10, Fraction(10))


@pytest.mark.slow
def test_one_frame_hidden_by_an_edit_list_takes_decords_count(plain, tmp_path):
    pytest.importorskip("decord")
    path = shifted_copy(plain, tmp_path / "hide1.mp4", start=1)  # PyAV plays 9 frames, decord counts the hidden one
    info = probe(path)
    assert (info.n_frames, info.duration) == (10, 1.0)


@pytest.mark.slow
def test_without_decord_the_count_is_the_containers(plain, tmp_path, without_decord):
    path = shifted_copy(plain, tmp_path / "hide2.mp4", start=2)  # the container lists 10, PyAV plays 8
    assert probe(path).n_frames == 10


@pytest.mark.slow
def test_a_file_is_probed_once_per_version(tmp_path):
    path = source(tmp_path / "rewritten.mp4", 10)
    first = probe(path)
    assert probe(path) is first  # the memoized result
    source(path, 6)  # the same name, another file
    assert probe(path).n_frames == 6


@pytest.mark.slow
def test_an_unexpected_failure_is_named_probing_failed_and_not_memoized(tmp_path, monkeypatch):
    path = source(tmp_path / "flaky.mp4", 4)

    def broken(path):
        raise RuntimeError("the demuxer fell over")

    monkeypatch.setattr(probe_module, "_probe", broken)
    with pytest.raises(VideoDecodeError, match=r"flaky\.mp4: probing failed: the demuxer fell over"):
        probe(path)
    monkeypatch.undo()
    assert probe(path).n_frames == 4


# --------------------------------------------------------------------------------------------
# probe: what it refuses


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(VideoDecodeError, match=r"nope\.mp4: no such video file"):
        probe(tmp_path / "nope.mp4")


def test_a_folder_is_not_a_video_file(tmp_path):
    with pytest.raises(VideoDecodeError, match=r"no such video file"):
        probe(tmp_path)


def test_bytes_that_are_no_container_are_refused(tmp_path):
    path = tmp_path / "noise.mp4"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8).tobytes())
    with pytest.raises(VideoDecodeError, match=r"noise\.mp4: cannot open as a media container"):
        probe(path)


def test_an_audio_only_file_has_no_video_stream(tmp_path):
    path = tmp_path / "sound.m4a"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("aac", rate=16000, layout="mono")
        chunk = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
        chunk.sample_rate, chunk.pts = 16000, 0
        out.mux(stream.encode(chunk))
        out.mux(stream.encode(None))
    with pytest.raises(VideoDecodeError, match=r"sound\.m4a: has no video stream"):
        probe(path)


def write_png(path: Path) -> Path:
    with av.open(str(path), "w", format="image2") as out:
        stream = out.add_stream("png", rate=1)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "rgb24"
        out.mux(stream.encode(av.VideoFrame.from_ndarray(np.zeros((HEIGHT, WIDTH, 3), np.uint8), format="rgb24")))
        out.mux(stream.encode(None))
    return path


def test_a_png_named_mp4_is_a_still_image_that_decord_cannot_read(tmp_path):
    pytest.importorskip("decord")
    path = write_png(tmp_path / "picture.mp4")
    with pytest.raises(VideoDecodeError, match=r"picture\.mp4: is a still image .*\(png_pipe\), not a video: decord"):
        probe(path)


def test_without_decord_a_still_image_is_never_a_video(tmp_path, without_decord):
    path = write_png(tmp_path / "picture.mp4")
    with pytest.raises(VideoDecodeError, match=r"is a still image or image sequence \(png_pipe\), not a video$"):
        probe(path)


@pytest.mark.slow
def test_an_edit_list_hiding_two_frames_names_both_counts(plain, tmp_path):
    pytest.importorskip("decord")
    path = shifted_copy(plain, tmp_path / "hide2.mp4", start=2)  # decord counts 10, PyAV plays 8: 2 > 1 of slack
    with pytest.raises(VideoDecodeError, match=r"hide2\.mp4: .*counts 10 video frames but PyAV plays 8"):
        probe(path)


# --------------------------------------------------------------------------------------------
# video_stream


@pytest.mark.slow
@pytest.mark.parametrize(
    ("counts", "impaired", "chosen"),
    [
        ([1, 10], None, 1),  # a one-frame stream (a cover) loses, although its bit rate is the larger
        ([10, 1], None, 0),
        ([10, 10], None, 0),  # equal ranks: the first, as FFmpeg keeps it
        ([10, 10], 0, 1),  # a stream for the hearing impaired ranks below any other
    ],
    ids=["a cover first loses", "a cover second loses", "first of equals", "impaired loses"],
)
def test_video_stream_is_the_one_ffmpeg_4_ranks_best(tmp_path, counts, impaired, chosen):
    path = write_video_streams(tmp_path / "streams.mp4", counts, impaired)
    with av.open(str(path)) as container:
        if 1 in counts:  # the control: the cover loses on frames, not on bit rate
            cover, video = (container.streams.video[counts.index(n)] for n in (1, 10))
            assert cover.bit_rate > video.bit_rate
        assert video_stream(container, path).index == chosen
    assert probe(path).stream_index == chosen
    assert probe(path).n_frames == counts[chosen]


def test_video_stream_of_a_file_without_video_names_the_file(tmp_path):
    audio_only = type("Streams", (), {"video": ()})()
    container = type("Container", (), {"streams": audio_only})()
    with pytest.raises(VideoDecodeError, match=r"x\.mp4: has no video stream"):
        video_stream(container, tmp_path / "x.mp4")


# --------------------------------------------------------------------------------------------
# validate


@pytest.mark.slow
def test_validate_returns_the_probed_info(plain):
    assert validate(plain, k=4) == VideoInfo(64, 32, Fraction(10), 10, 1.0, 0)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("k", "targets"),
    [
        (4, [0, 3, 6, 8, 9]),  # key frames of 10 for k = 4 (centres of 0-2-5-8-10), and the last
        (1, [4, 9]),  # one segment 0..10: centre (0 + 10 - 1) // 2 = 4
        (20, list(range(10))),  # k above the frame count: every frame
    ],
)
def test_validate_decodes_the_key_frames_and_the_last(plain, monkeypatch, k, targets):
    asked = []
    real = probe_module.decode_targets

    def recording(container, stream, timeline, indices):
        asked.append(list(indices))
        return real(container, stream, timeline, indices)

    monkeypatch.setattr(probe_module, "decode_targets", recording)
    validate(plain, k=k)
    assert asked == [targets]


@pytest.mark.parametrize("k", [0, -3])
def test_validate_refuses_k_below_one_before_opening_the_file(tmp_path, k):
    with pytest.raises(ValueError, match=rf"k must be at least 1, got k={k}\."):
        validate(tmp_path / "never_opened.mp4", k=k)


def test_validate_names_a_missing_file(tmp_path):
    with pytest.raises(VideoDecodeError, match=r"gone\.mp4: no such video file"):
        validate(tmp_path / "gone.mp4")


@pytest.mark.slow
def test_a_file_whose_data_was_cut_is_damaged(tmp_path):
    whole = source(tmp_path / "whole.mp4", 12, container_options={"movflags": "faststart"})  # the index survives
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(whole.read_bytes()[: int(whole.stat().st_size * 0.6)])
    with pytest.raises(VideoDecodeError, match=r"cut\.mp4: is damaged: .*cut short: the file is truncated"):
        validate(cut, k=4)


@pytest.mark.slow
def test_a_failing_decode_is_named_damaged(plain, monkeypatch):
    def broken(container, stream, timeline, indices):
        raise ValueError("frame 3 (pts 3072) could not be decoded")

    monkeypatch.setattr(probe_module, "decode_targets", broken)
    with pytest.raises(VideoDecodeError, match=r"plain\.mp4: is damaged: frame 3 \(pts 3072\) could not be decoded"):
        validate(plain, k=4)


@pytest.mark.slow
def test_a_picture_too_small_for_decord_is_refused_with_the_frames_asked(tmp_path):
    pytest.importorskip("decord")
    path = source(tmp_path / "tiny.mp4", 10, width=16, height=16)
    assert probe(path).n_frames == 10  # PyAV and decord both open it
    # targets for k = 4: key frames 0, 3, 6, 8 and the last, 9
    with pytest.raises(VideoDecodeError, match=r"tiny\.mp4: decord .*cannot read it: decoding 5 frames \(0 to 9\)"):
        validate(path, k=4)


@pytest.mark.slow
def test_without_decord_a_small_picture_passes(tmp_path, without_decord):
    path = source(tmp_path / "tiny.mp4", 10, width=16, height=16)
    assert validate(path, k=4) == VideoInfo(16, 16, Fraction(10), 10, 1.0, 0)
