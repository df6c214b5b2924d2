"""The reference decoder (``vdg_tasks.perturb.video.reference``): a file with several video streams is read where the
models' decoder reads it (FFmpeg's best stream), and decord's failures are told as decord's."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from tests.helpers.two_streams import N_FRAMES, OFFSET, write_two_streams
from tests.helpers.videos import read_index
from vdg_tasks.perturb.video import probe, validate, write_black, write_crf, write_held
from vdg_tasks.perturb.video.reference import DECORD_WHO, VideoDecodeError, decord_message, decord_reader, failure

decord = pytest.importorskip("decord")


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return write_two_streams(tmp_path_factory.mktemp("streams") / "two.mp4")


def _decord_frames(path: Path) -> tuple[tuple[int, int], list[int]]:
    reader = decord.VideoReader(str(path))
    frames = reader.get_batch(list(range(len(reader)))).asnumpy()
    return frames.shape[1:3], [read_index(f) for f in frames]


def test_vdg_reads_the_stream_decord_reads(source):
    (height, width), shown = _decord_frames(source)
    with av.open(str(source)) as container:
        assert [s.codec_context.width for s in container.streams.video] == [160, 320]
    chosen = 1 if shown[0] >= OFFSET else 0  # decord's own choice, read off its pixels
    info = validate(source)
    assert info.stream_index == chosen and (info.width, info.height) == (width, height)
    assert probe(source).n_frames == len(shown) == N_FRAMES


def test_every_output_comes_from_the_stream_the_model_sees_under_orig(source, tmp_path):
    (height, width), orig = _decord_frames(source)
    crf = tmp_path / "crf.mp4"
    write_crf(source, crf, 28)
    assert _decord_frames(crf) == ((height, width), orig)
    held = tmp_path / "held.mp4"
    write_held(source, held, k=4, order="ordered", seed=0)
    size, shown = _decord_frames(held)
    assert size == (height, width) and set(shown) <= set(orig) and len(set(shown)) == 4
    black = tmp_path / "black.mp4"
    write_black(source, black)
    size, _ = _decord_frames(black)
    pixels = decord.VideoReader(str(black))[0].asnumpy()
    assert size == (height, width) and int(np.max(pixels)) <= 20
    assert Fraction(probe(black).duration).limit_denominator(100) == Fraction(N_FRAMES, 10)


def test_decords_message_is_its_first_line_without_the_clock():
    err = RuntimeError("[03:25:52] /src/video/video_reader.cc:83: ERROR opening: x.mp4, Invalid data\nstack trace")
    assert decord_message(err) == "/src/video/video_reader.cc:83: ERROR opening: x.mp4, Invalid data"
    assert decord_message(RuntimeError("")) == "RuntimeError"


def test_a_failure_names_the_file_what_and_why(tmp_path):
    assert str(failure(tmp_path / "v.mp4", "has no video stream")) == f"{tmp_path / 'v.mp4'}: has no video stream"
    assert str(failure("v.mp4", "is damaged", ValueError("bad"))) == "v.mp4: is damaged: bad"


def test_a_file_decord_cannot_open_is_refused_as_decords(tmp_path):
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video")
    with pytest.raises(VideoDecodeError, match=rf"^{re.escape(str(junk))}: {re.escape(DECORD_WHO)} cannot read it: "):
        decord_reader(decord, junk)
