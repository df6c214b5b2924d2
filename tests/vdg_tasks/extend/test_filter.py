"""vdg_tasks.extend.filter_condition: an FFmpeg filter chain run on the frames as encoded (no RGB round trip), its
guard rails, and mute's output checked by its packets (vdg_tasks.perturb.video.probe.copies_video)."""

from __future__ import annotations

import sys
from pathlib import Path

import av
import numpy as np
import pytest

from tests.helpers.videos import write_indexed_source
from vdg_tasks.extend import Picture, filter_condition
from vdg_tasks.perturb.frames import apply_to_frames
from vdg_tasks.perturb.video import VideoDecodeError, probe, render
from vdg_tasks.perturb.video.probe import check_output, copies_video
from vdg_tasks.vocabulary.conditions import CONDITIONS

SEED = 5


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return write_indexed_source(tmp_path_factory.mktemp("filter") / "src.mp4", 20, fps=10)


def decoded(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24").astype(int) for f in container.decode(video=0)]


def test_a_filter_condition_has_vdg_s_fields_and_wraps_a_fixed_chain():
    condition = filter_condition("flipped", "hflip", description="Flipped.", family="mirror", params={"a": 1})
    assert (condition.modality, condition.transform, dict(condition.params)) == ("video", "filter", {"a": 1})
    assert condition.apply is not None and condition.apply(Picture(8, 8, "yuv420p", (1, 1), False), None) == "hflip"
    with pytest.raises(ValueError, match="empty"):
        filter_condition("nothing", " ", description="x", family="y")


def test_a_filter_condition_changes_every_frame_as_encoded_and_keeps_the_rest(source, tmp_path):
    """hflip on the YUV frames: the output is crf18's of the source, flipped (within the encode's noise)."""
    seen: list[Picture] = []

    def flip(picture, context):
        seen.append(picture)
        return "hflip"

    dst, control = tmp_path / "flipped.mp4", tmp_path / "crf18.mp4"
    render(filter_condition("flipped", flip, description="x", family="y"), source, dst, seed=SEED)
    render(CONDITIONS["crf18"], source, control, seed=SEED)
    a, b = probe(source), probe(dst)
    assert (b.width, b.height, b.n_frames, b.fps) == (a.width, a.height, a.n_frames, a.fps)
    assert seen == [Picture(a.width, a.height, "yuv420p", (1, 1), False)]
    got, want = decoded(dst), decoded(control)
    assert len(got) == len(want) == a.n_frames
    assert max(float(np.abs(g - w[:, ::-1]).mean()) for g, w in zip(got, want, strict=True)) < 2


def test_a_chain_that_changes_the_size_or_is_refused_by_ffmpeg_is_refused_with_the_reason(source, tmp_path):
    dst = tmp_path / "small.mp4"
    with pytest.raises(VideoDecodeError, match="must keep the size and format"):
        render(filter_condition("small", "scale=w=32:h=24", description="x", family="y"), source, dst, seed=SEED)
    assert not dst.exists()
    with pytest.raises(VideoDecodeError, match="refused by FFmpeg"):
        render(filter_condition("bad", "gblur=nosuchoption=1", description="x", family="y"), source, dst, seed=SEED)
    assert not dst.exists()


def test_on_a_task_that_gives_frames_the_chain_runs_on_each_rgb_frame():
    frames = [np.random.default_rng(i).integers(0, 256, size=(24, 40, 3), dtype=np.uint8) for i in range(3)]
    condition = filter_condition("flipped", "hflip", description="x", family="y")
    out = apply_to_frames(condition, frames, SEED)
    assert all(np.array_equal(o, f[:, ::-1]) for o, f in zip(out, frames, strict=True))  # gbrp: lossless


def test_mute_s_output_is_checked_by_its_packets_without_decoding_it(tmp_path, monkeypatch):
    source = write_indexed_source(tmp_path / "src.mp4", 20, fps=10)
    muted, reencoded = tmp_path / "mute.mp4", tmp_path / "crf28.mp4"
    render(CONDITIONS["mute"], source, muted, seed=SEED)
    render(CONDITIONS["crf28"], source, reencoded, seed=SEED)
    assert copies_video(source, muted)
    assert not copies_video(source, reencoded)

    def no_decode(*args, **kwargs):
        raise AssertionError("validate decoded an output whose packets are the source's")

    # the module itself: the package vdg_tasks.perturb.video re-exports its function probe under the same name
    monkeypatch.setattr(sys.modules["vdg_tasks.perturb.video.probe"], "validate", no_decode)
    check_output(CONDITIONS["mute"], source, muted)
    with pytest.raises(AssertionError, match="validate decoded"):
        check_output(CONDITIONS["crf28"], source, reencoded)  # a re-encode is still decoded


def test_an_output_missing_packets_is_not_taken_as_a_copy(tmp_path):
    source = write_indexed_source(tmp_path / "src.mp4", 20, fps=10)
    short = tmp_path / "short.mp4"
    with av.open(str(source)) as reader, av.open(str(short), "w", format="mp4") as writer:
        stream = reader.streams.video[0]
        copied = writer.add_stream_from_template(stream, opaque=True)
        for i, packet in enumerate(reader.demux(stream)):
            if packet.size and i < 10:
                packet.stream = copied
                writer.mux(packet)
    assert not copies_video(source, short)
    with pytest.raises(VideoDecodeError, match="frames"):
        check_output(CONDITIONS["mute"], source, short)
