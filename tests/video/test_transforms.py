"""vdg_tasks.video: segment layout, held/black/CRF outputs as the models' own samplers see them."""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from vdg_tasks.conditions import CONDITIONS, crf
from vdg_tasks.video import (
    VideoDecodeError,
    hold_order,
    key_frame_indices,
    probe,
    render,
    segment_bounds,
    validate,
    write_black,
    write_crf,
    write_held,
)

from .conftest import read_index

SEED = 12345
ORDERS = ("ordered", "shuffled", "single")


# --------------------------------------------------------------------------------------------
# Samplers exactly as the models call them


def sample_lmms(path: Path, k: int) -> list[np.ndarray]:
    from lmms_eval.models.model_utils.load_video import read_video

    return list(read_video(str(path), num_frm=k))


def sample_decord(path: Path, k: int) -> list[np.ndarray]:
    import decord

    reader = decord.VideoReader(str(path))
    indices = np.linspace(0, len(reader) - 1, k).astype(int)
    return list(reader.get_batch(indices.tolist()).asnumpy())


def sample_qwen(path: Path, k: int) -> list[np.ndarray]:
    from qwen_vl_utils import vision_process

    # The torchvision reader is broken with torchvision 0.29; FORCE_QWENVL_VIDEO_READER is read at import.
    os.environ["FORCE_QWENVL_VIDEO_READER"] = "decord"
    vision_process.FORCE_QWENVL_VIDEO_READER = "decord"
    vision_process.get_video_reader_backend.cache_clear()
    video = vision_process.fetch_video({"video": str(path), "nframes": k})  # (k, 3, H, W) float tensor
    return [frame.numpy() for frame in video]


SAMPLERS = {"lmms_read_video": sample_lmms, "decord_linspace": sample_decord, "qwen_fetch_video": sample_qwen}


def decode_all(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


# --------------------------------------------------------------------------------------------
# Rendered outputs, made once per session


@pytest.fixture(scope="session")
def outputs(tmp_path_factory, source_k8, source_k32):
    """(source name, condition) -> (source, k, output path); K = 8 via write_*, K = 32 via render()."""
    out_dir = tmp_path_factory.mktemp("out")
    made: dict[tuple[str, str], tuple[Path, int, Path]] = {}

    def get(source: str, condition: str) -> tuple[Path, int, Path]:
        key = (source, condition)
        if key not in made:
            dst = out_dir / f"{source}_{condition}.mp4"
            if source == "k8":
                src, k = source_k8, 8
                if condition == "black":
                    write_black(src, dst)
                else:
                    write_held(src, dst, k=k, order=condition, seed=SEED)
            else:
                src, k = source_k32, 32
                render(CONDITIONS[condition], src, dst, seed=SEED)
            made[key] = (src, k, dst)
        return made[key]

    return get


def expected_indices(src: Path, k: int, order: str) -> list[int]:
    keys = key_frame_indices(probe(src).n_frames, k)
    return keys[hold_order(k, order, SEED)].tolist()


# --------------------------------------------------------------------------------------------
# 1. The sampler-invariant test


@pytest.mark.slow
@pytest.mark.parametrize("sampler", list(SAMPLERS))
@pytest.mark.parametrize("condition", [*ORDERS, "black"])
@pytest.mark.parametrize("source", ["k8", "k32"])
def test_samplers_see_the_held_key_frames(outputs, source, condition, sampler):
    src, k, dst = outputs(source, condition)
    frames = SAMPLERS[sampler](dst, k)
    assert len(frames) == k
    if condition == "black":
        assert all(np.all(np.asarray(f) == 0) for f in frames)
        return
    seen = [read_index(f) for f in frames]
    want = expected_indices(src, k, condition)
    assert seen == want
    keys = key_frame_indices(probe(src).n_frames, k).tolist()
    if condition == "ordered":
        assert seen == keys
    elif condition == "shuffled":
        assert sorted(seen) == keys and seen != keys
    else:
        assert seen == [keys[k // 2]] * k


@pytest.mark.slow
@pytest.mark.parametrize("condition", [*ORDERS, "black"])
@pytest.mark.parametrize("source", ["k8", "k32"])
def test_output_keeps_size_rate_and_length(outputs, source, condition):
    import decord

    src, _, dst = outputs(source, condition)
    a, b = probe(src), probe(dst)
    assert (b.width, b.height, b.fps, b.n_frames) == (a.width, a.height, a.fps, a.n_frames)
    assert abs(b.duration - a.duration) <= 1 / float(a.fps)
    reader = decord.VideoReader(str(dst))
    assert len(reader) == a.n_frames
    np.testing.assert_allclose(reader.get_avg_fps(), float(a.fps), rtol=1e-3)
    with av.open(str(dst)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert stream.codec_context.pix_fmt == "yuv420p"
        assert not container.streams.audio


@pytest.mark.slow
def test_colour_description_is_kept(tmp_path):
    src = tmp_path / "bt709.mp4"
    with av.open(str(src), "w") as out:
        stream = out.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        ctx = stream.codec_context
        ctx.colorspace, ctx.color_primaries, ctx.color_trc = 1, 1, 1  # BT.709
        for i in range(20):
            frame = av.VideoFrame.from_ndarray(np.full((72, 64), 16 + 10 * i, np.uint8), format="yuv420p")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    for condition in ("ordered", "crf38"):
        dst = tmp_path / f"{condition}.mp4"
        if condition == "ordered":
            write_held(src, dst, k=4, order="ordered", seed=0)
        else:
            render(CONDITIONS[condition], src, dst, seed=0)
        with av.open(str(dst)) as container:
            ctx = container.streams.video[0].codec_context
            assert (int(ctx.colorspace), int(ctx.color_primaries), int(ctx.color_trc)) == (1, 1, 1)


# --------------------------------------------------------------------------------------------
# 2. Within-segment exactness (every decoded frame, not only the sampled ones)


@pytest.mark.slow
@pytest.mark.parametrize("condition", ORDERS)
@pytest.mark.parametrize("source", ["k8", "k32"])
def test_each_segment_is_one_exact_picture(outputs, source, condition):
    src, k, dst = outputs(source, condition)
    n_frames = probe(src).n_frames
    bounds = segment_bounds(n_frames, k)
    want = expected_indices(src, k, condition)
    frames = decode_all(dst)
    assert len(frames) == n_frames
    for i in range(k):
        segment = frames[bounds[i] : bounds[i + 1]]
        for frame in segment[1:]:
            np.testing.assert_array_equal(frame, segment[0])  # exact: atol 0
        assert read_index(segment[0]) == want[i]


@pytest.mark.slow
def test_black_every_frame_is_zero(outputs):
    _, _, dst = outputs("k8", "black")
    frames = decode_all(dst)
    assert len(frames) == 80
    assert max(int(f.max()) for f in frames) == 0


# --------------------------------------------------------------------------------------------
# 3. CRF


@pytest.mark.slow
def test_crf_keeps_timeline_and_higher_crf_is_smaller(tmp_path, source_k8):
    low, high = tmp_path / "crf18.mp4", tmp_path / "crf38.mp4"
    render(crf(18), source_k8, low, seed=0)
    write_crf(source_k8, high, crf=38)
    a = probe(source_k8)
    for path in (low, high):
        b = probe(path)
        assert (b.width, b.height, b.fps, b.n_frames) == (a.width, a.height, a.fps, a.n_frames)
    assert high.stat().st_size < low.stat().st_size
    assert [read_index(f) for f in decode_all(low)] == list(range(a.n_frames))


# --------------------------------------------------------------------------------------------
# 4. Errors


def test_missing_file_names_the_path(tmp_path):
    missing = tmp_path / "nope.mp4"
    for call in (probe, validate):
        with pytest.raises(VideoDecodeError, match="nope.mp4"):
            call(missing)
    with pytest.raises(VideoDecodeError, match="nope.mp4"):
        render(CONDITIONS["black"], missing, tmp_path / "out.mp4", seed=0)


def test_corrupt_file_names_the_path(tmp_path):
    corrupt = tmp_path / "corrupt.mp4"
    corrupt.write_bytes(np.random.default_rng(0).integers(0, 256, 20_000, dtype=np.uint8).tobytes())
    for call in (probe, validate):
        with pytest.raises(VideoDecodeError, match="corrupt.mp4"):
            call(corrupt)
    for name in ("ordered", "crf23"):
        dst = tmp_path / f"{name}.mp4"
        with pytest.raises(VideoDecodeError, match="corrupt.mp4"):
            render(CONDITIONS[name], corrupt, dst, seed=0)
        assert not dst.exists()


def test_audio_only_file_has_no_video_stream(tmp_path):
    path = tmp_path / "audio.m4a"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("aac", rate=16000)
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
        frame.sample_rate, frame.pts = 16000, 0
        out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    with pytest.raises(VideoDecodeError, match="audio.m4a: has no video stream"):
        probe(path)


def test_validate_reads_a_good_file(source_k8):
    assert validate(source_k8) == probe(source_k8)
    assert probe(source_k8).fps == Fraction(10)


def test_fewer_frames_than_k(tmp_path, source_k8):
    with pytest.raises(ValueError, match="at least k frames"):
        segment_bounds(5, 8)
    with pytest.raises(ValueError, match="at least k frames"):
        write_held(source_k8, tmp_path / "x.mp4", k=81, order="ordered", seed=0)
    with pytest.raises(ValueError, match="k must be at least 1"):
        key_frame_indices(10, 0)


def test_identity_is_not_rendered(tmp_path, source_k8):
    with pytest.raises(ValueError, match="identity"):
        render(CONDITIONS["orig"], source_k8, tmp_path / "x.mp4", seed=0)


def test_unknown_order(tmp_path, source_k8):
    with pytest.raises(ValueError, match="Unknown hold order"):
        write_held(source_k8, tmp_path / "x.mp4", k=4, order="backwards", seed=0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# 5. hold_order


def test_hold_order_values():
    np.testing.assert_array_equal(hold_order(5, "ordered", 1), np.arange(5))
    np.testing.assert_array_equal(hold_order(8, "single", 1), np.full(8, 4))
    np.testing.assert_array_equal(hold_order(1, "single", 1), [0])
    with pytest.raises(ValueError, match="k >= 2"):
        hold_order(1, "shuffled", 0)


@pytest.mark.parametrize("k", [2, 3, 8, 32])
def test_shuffled_is_deterministic_and_never_identity(k):
    for seed in range(200):
        perm = hold_order(k, "shuffled", seed)
        np.testing.assert_array_equal(perm, hold_order(k, "shuffled", seed))
        assert sorted(perm.tolist()) == list(range(k))
        assert not np.array_equal(perm, np.arange(k))


def test_shuffled_seeds_differ():
    perms = {tuple(hold_order(32, "shuffled", seed).tolist()) for seed in range(50)}
    assert len(perms) == 50


# --------------------------------------------------------------------------------------------
# Segment layout: one draw of every uniform sampler per segment


def _draws(n_frames: int, k: int) -> dict[str, np.ndarray]:
    import torch

    x64 = np.linspace(0, n_frames - 1, k)
    x32 = torch.linspace(0, n_frames - 1, k)
    return {
        "astype(int) (lmms-eval, decord)": x64.astype(int),
        "np.linspace(dtype=int) (lmms-eval read_video)": np.linspace(0, n_frames - 1, k, dtype=int),
        "np.round (half to even)": np.round(x64).astype(int),
        "floor(x + 0.5) (half up)": np.floor(x64 + 0.5).astype(int),
        "torch float32 .round() (qwen_vl_utils)": x32.round().long().numpy(),
    }


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 7, 8, 10, 16, 20, 24, 32, 48, 64])
def test_every_uniform_sampler_hits_each_segment_once(k):
    sizes = list(range(max(2 * k, 2), 2 * k + 600)) + [1799, 3600, 7201, 18000, 54000, 108_001, 216_000]
    for n_frames in sizes:
        bounds = segment_bounds(n_frames, k)
        assert bounds[0] == 0 and bounds[-1] == n_frames
        lengths = np.diff(bounds)
        assert lengths.min() >= 1
        assert np.all(np.abs(lengths - n_frames / k) <= 2), (n_frames, k, lengths)
        keys = key_frame_indices(n_frames, k)
        assert np.all((bounds[:-1] <= keys) & (keys < bounds[1:]))
        for name, draws in _draws(n_frames, k).items():
            segment_of = np.searchsorted(bounds, draws, side="right") - 1
            assert segment_of.tolist() == list(range(k)), (name, n_frames, k)


def test_short_videos_still_get_nonempty_segments():
    for k in (2, 8, 32):
        for n_frames in range(k, 2 * k):
            assert np.diff(segment_bounds(n_frames, k)).min() >= 1
