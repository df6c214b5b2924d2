"""vdg_tasks.perturb.video: segment layout, held/black/CRF outputs as the models' own samplers see them."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from tests.helpers.samplers import SAMPLERS, collapse
from tests.helpers.videos import decode_all, read_index
from vdg_tasks.perturb.video import (
    VideoDecodeError,
    effective_k,
    hold_order,
    key_frame_indices,
    output_rate_factor,
    output_segment_bounds,
    probe,
    render,
    segment_bounds,
    validate,
    write_black,
    write_crf,
    write_held,
)
from vdg_tasks.vocabulary.conditions import CONDITIONS, crf

SEED = 12345
ORDERS = ("ordered", "shuffled", "single", "reversed")


# --------------------------------------------------------------------------------------------
# Rendered outputs, made once per session

#: Sources the held layout is checked on: K = 8 on 80 frames, and K = 32 on 70 frames (>= 2K) and on
#: short sources (1 and 10 frames: fewer than K; 33, 40 and 63: between K and 2K) and an odd size.
SOURCES = ["k8", "k32", "frames_1", "frames_10", "frames_33", "frames_40", "frames_63", "odd_size"]


@pytest.fixture(scope="session")
def outputs(tmp_path_factory, source_k8, source_k32, hostile):
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
                    write_black(src, dst, k=k)
                else:
                    write_held(src, dst, k=k, order=condition, seed=SEED)
            else:
                src, k = (source_k32 if source == "k32" else hostile[source]), 32
                render(CONDITIONS[condition], src, dst, seed=SEED)
            made[key] = (src, k, dst)
        return made[key]

    return get


def expected_indices(src: Path, k: int, order: str) -> list[int]:
    """The source frame each output segment shows."""
    keys = key_frame_indices(probe(src).n_frames, k)
    return keys[hold_order(len(keys), order, SEED)].tolist()


# --------------------------------------------------------------------------------------------
# 1. The sampler-invariant test


@pytest.mark.slow
@pytest.mark.parametrize("sampler", list(SAMPLERS))
@pytest.mark.parametrize("condition", [*ORDERS, "black"])
@pytest.mark.parametrize("source", SOURCES)
def test_samplers_see_the_held_key_frames(outputs, source, condition, sampler):
    src, k, dst = outputs(source, condition)
    frames = SAMPLERS[sampler](dst, k)
    assert len(frames) == k
    if condition == "black":
        assert all(np.all(np.asarray(f) == 0) for f in frames)
        return
    seen = [read_index(f) for f in frames]
    want = expected_indices(src, k, condition)
    keys = key_frame_indices(probe(src).n_frames, k).tolist()
    assert len(keys) == effective_k(probe(src).n_frames, k)
    if len(keys) == k:
        assert seen == want  # one draw per held segment
    else:  # fewer key frames than draws: every key frame at least once, in the held order
        assert collapse(seen) == collapse(want)
    if condition == "ordered":
        assert collapse(seen) == keys
    elif condition == "shuffled":
        assert sorted(set(seen)) == keys
        assert collapse(seen) != keys or len(keys) == 1
    elif condition == "reversed":  # the K key frames of ordered, the last first
        assert collapse(seen) == keys[::-1]
    else:
        assert set(seen) == {keys[len(keys) // 2]}


@pytest.mark.slow
@pytest.mark.parametrize("condition", [*ORDERS, "black"])
@pytest.mark.parametrize("source", SOURCES)
def test_output_keeps_size_and_duration_on_the_raised_rate(outputs, source, condition):
    import decord

    src, k, dst = outputs(source, condition)
    a, b = probe(src), probe(dst)
    r = output_rate_factor(a.n_frames, k)
    assert r * a.n_frames >= 2 * k and (r == 1 or (r - 1) * a.n_frames < 2 * k)
    assert (b.width, b.height, b.fps, b.n_frames) == (a.width, a.height, r * a.fps, r * a.n_frames)
    assert b.duration == pytest.approx(a.duration, abs=1e-9)
    reader = decord.VideoReader(str(dst))
    assert len(reader) == r * a.n_frames
    np.testing.assert_allclose(reader.get_avg_fps(), float(r * a.fps), rtol=1e-3)
    with av.open(str(dst)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert stream.codec_context.pix_fmt == ("yuv444p" if a.width % 2 or a.height % 2 else "yuv420p")
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
@pytest.mark.parametrize("source", SOURCES)
def test_each_segment_is_one_exact_picture(outputs, source, condition):
    src, k, dst = outputs(source, condition)
    n_frames = probe(src).n_frames
    bounds = output_segment_bounds(n_frames, k)
    want = expected_indices(src, k, condition)
    frames = decode_all(dst)
    assert len(frames) == output_rate_factor(n_frames, k) * n_frames == bounds[-1]
    for i in range(len(want)):
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
# 3b. Output size


def _textured_source(path: Path, n_frames: int, width: int = 128, height: int = 96, fps: int = 30) -> Path:
    """A scrolling noise texture with grain at CRF 23 (x264 defaults: GOP 250, B frames): costly to code."""
    rng = np.random.default_rng(0)
    coarse = rng.integers(0, 256, size=(height // 2, width // 2)).astype(np.uint8)
    texture = np.kron(coarse, np.ones((4, 4), np.uint8))
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": "23", "preset": "veryfast"}
        chroma = np.full((height // 2, width), 128, np.uint8)
        for i in range(n_frames):
            y, x = i % height, (3 * i) % width
            luma = texture[y : y + height, x : x + width] // 2 + rng.integers(0, 8, (height, width), dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(np.concatenate([luma, chroma]), format="yuv420p")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


def _idr_sizes(path: Path) -> list[int]:
    with av.open(str(path)) as container:
        return [p.size for p in container.demux(video=0) if p.size and p.is_keyframe]


@pytest.mark.slow
def test_held_outputs_are_a_fraction_of_the_source_and_single_is_the_smallest(tmp_path):
    # 2400 frames (80 s at 30 fps), K = 32: single repeats its one picture's IDR ceil(2400 / 128) = 19 times,
    # ordered codes 32 pictures. With CRF the picture coded right after the flat skip template got a
    # near-lossless QP: single's IDR was ~3x the size of ordered's for the same picture, and single 1.3x ordered.
    src = _textured_source(tmp_path / "textured.mp4", n_frames=2400)
    sizes = {}
    for order in ORDERS:
        dst = tmp_path / f"{order}.mp4"
        write_held(src, dst, k=32, order=order, seed=SEED)
        sizes[order] = dst.stat().st_size
    write_black(src, tmp_path / "black.mp4")
    source = src.stat().st_size
    assert sizes["single"] <= sizes["ordered"] and sizes["single"] <= sizes["shuffled"]
    assert sizes["single"] < 0.3 * source, (sizes, source)
    assert max(sizes.values()) < 0.4 * source, (sizes, source)
    assert (tmp_path / "black.mp4").stat().st_size < 0.1 * source
    # A picture's IDR does not depend on what was coded before it: single's is ordered's for the same key frame.
    single, ordered = _idr_sizes(tmp_path / "single.mp4"), _idr_sizes(tmp_path / "ordered.mp4")
    assert len(single) == 19 and len(set(single)) == 1 and len(ordered) == 32
    assert abs(single[0] - ordered[16]) <= 8, (single[0], ordered[16])


def test_capped_codec_threads_give_the_same_pictures(tmp_path, source_k8):
    from vdg_tasks.perturb.video import transforms

    with pytest.raises(ValueError, match="threads must be 0"):
        transforms.set_codec_threads(-1)
    write_held(source_k8, tmp_path / "auto.mp4", k=8, order="ordered", seed=SEED)
    try:
        transforms.set_codec_threads(1)  # what a run_jobs worker gets with as many workers as cores
        write_held(source_k8, tmp_path / "one.mp4", k=8, order="ordered", seed=SEED)
        write_crf(source_k8, tmp_path / "crf.mp4", crf=28)
    finally:
        transforms.set_codec_threads(0)
    assert [read_index(f) for f in decode_all(tmp_path / "one.mp4")] == [
        read_index(f) for f in decode_all(tmp_path / "auto.mp4")
    ]
    assert [read_index(f) for f in decode_all(tmp_path / "crf.mp4")] == list(range(probe(source_k8).n_frames))


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
    with pytest.raises(ValueError, match="k must be at least 1"):
        key_frame_indices(10, 0)
    with pytest.raises(ValueError, match="k must be at least 1"):
        write_held(source_k8, tmp_path / "x.mp4", k=0, order="ordered", seed=0)
    dst = tmp_path / "k81.mp4"
    write_held(source_k8, dst, k=81, order="ordered", seed=0)  # 80 frames: every frame is a key frame
    frames = decode_all(dst)
    assert len(frames) == output_rate_factor(80, 81) * 80 == 240
    assert collapse([read_index(f) for f in frames]) == list(range(80))


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
    np.testing.assert_array_equal(hold_order(5, "reversed", 1), [4, 3, 2, 1, 0])
    np.testing.assert_array_equal(hold_order(1, "reversed", 1), [0])
    np.testing.assert_array_equal(hold_order(1, "single", 1), [0])
    for seed in range(5):  # one key frame: nothing to permute, the one frame is shown
        np.testing.assert_array_equal(hold_order(1, "shuffled", seed), [0])
    np.testing.assert_array_equal(hold_order(2, "shuffled", 0), [1, 0])
    with pytest.raises(ValueError, match="k must be at least 1"):
        hold_order(0, "ordered", 0)


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


# --------------------------------------------------------------------------------------------
# Short sources: effective k, the raised output rate, and the guarantee at every length


def test_effective_k_is_min_of_k_and_frames():
    for k in (1, 2, 8, 32):
        for n_frames in range(1, 3 * k + 2):
            assert effective_k(n_frames, k) == min(k, n_frames)
            assert len(key_frame_indices(n_frames, k)) == min(k, n_frames)
    np.testing.assert_array_equal(key_frame_indices(10, 32), np.arange(10))
    for bad in ((0, 32), (10, 0), (-1, 4)):
        with pytest.raises(ValueError):
            effective_k(*bad)


def test_output_rate_factor_is_the_smallest_giving_2k_frames():
    for k in (1, 2, 8, 32):
        for n_frames in range(1, 4 * k + 2):
            r = output_rate_factor(n_frames, k)
            assert r * n_frames >= 2 * k
            assert r == 1 or (r - 1) * n_frames < 2 * k
    assert output_rate_factor(1, 32) == 64 and output_rate_factor(40, 32) == 2 and output_rate_factor(64, 32) == 1


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 7, 8, 10, 16, 20, 24, 32, 48, 64])
def test_every_uniform_sampler_sees_every_key_frame_of_a_short_source(k):
    """Sources of 1 .. 2k frames: a sampler drawing k frames from the held output sees each of the
    effective_k key frames, in segment order (exactly one draw each when effective_k == k)."""
    for n_frames in range(1, 2 * k + 1):
        k_eff = effective_k(n_frames, k)
        bounds = output_segment_bounds(n_frames, k)
        n_out = output_rate_factor(n_frames, k) * n_frames
        assert len(bounds) == k_eff + 1 and bounds[0] == 0 and bounds[-1] == n_out
        assert np.diff(bounds).min() >= 1
        for name, draws in _draws(n_out, k).items():
            segment_of = (np.searchsorted(bounds, draws, side="right") - 1).tolist()
            if k_eff == k:
                assert segment_of == list(range(k)), (name, n_frames, k)
            else:
                assert collapse(segment_of) == list(range(k_eff)), (name, n_frames, k)
