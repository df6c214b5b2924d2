"""vdg_tasks.extend.shipped: downscale, blur and mute against independent calculations, and what every sampler reads
from their outputs (that the module imports only the public API: tests/test_import_graph.py)."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest

from tests.helpers.colour_range import write_half_black_source
from tests.helpers.mpegts import STARTS, write_ts
from tests.helpers.samplers import SAMPLERS
from tests.helpers.videos import make_hostile_sources, read_index, shifted_copy, write_indexed_source
from vdg_tasks.extend import Context, Picture, shipped
from vdg_tasks.perturb.video import probe, render
from vdg_tasks.perturb.video.filtergraph import filter_rgb
from vdg_tasks.vocabulary.conditions import CONDITIONS, CORE

SEED = 3
SHIPPED = (
    "downscale112",
    "downscale224",
    "downscale448",
    "blur",
    "mute",
    *(f"options_rotated{k}" for k in range(1, 8)),
)


def test_the_shipped_conditions_are_registered_after_the_core_and_declared_in_their_module():
    names = list(CONDITIONS)
    assert names[-len(SHIPPED) :] == list(SHIPPED)
    assert all(c not in CORE for c in SHIPPED)
    for name in SHIPPED:
        condition = CONDITIONS[name]
        assert condition.declared_in == "vdg_tasks.extend.shipped"
        assert not condition.in_main_tag and condition.tagged
        assert len(condition.source_digest) == 64
    assert CONDITIONS["mute"].requires == {"audio"} and CONDITIONS["mute"].beside == "black"
    assert [CONDITIONS[f"downscale{s}"].params["short_side"] for s in (112, 224, 448)] == [112, 224, 448]


# --------------------------------------------------------------------------------------------
# The frame functions against calculations written here


def gaussian_blur(frame: np.ndarray, sigma: float) -> np.ndarray:
    """A separable Gaussian (truncated at 4 sigma, normalised), edges repeated, each channel apart."""
    radius = int(4 * sigma + 0.5)
    x = np.arange(-radius, radius + 1)
    kernel = np.exp(-(x**2) / (2 * sigma**2))
    kernel /= kernel.sum()
    out = frame.astype(np.float64)
    for axis in (0, 1):
        padded = np.pad(out, [(radius, radius) if a == axis else (0, 0) for a in range(3)], mode="edge")
        out = sum(kernel[i] * np.take(padded, range(i, i + out.shape[axis]), axis=axis) for i in range(len(kernel)))
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def through(condition: str, frame: np.ndarray) -> np.ndarray:
    """``frame`` through the condition's filter chain as a task that gives frames runs it (``gbrp``)."""
    return filter_rgb(CONDITIONS[condition], frame, SEED, 0)


def test_blur_is_the_declared_gaussian_away_from_the_edges():
    """gblur (3 steps of its recursive approximation) against the exact Gaussian: within 5 levels (0.8 on average)
    on noise, the worst case, 2 sigma inside the edges; at the edges gblur's boundary differs (docs/conditions.md)."""
    frame = np.random.default_rng(0).integers(0, 256, size=(64, 96, 3), dtype=np.uint8)
    got = through("blur", frame)
    want = gaussian_blur(frame, shipped.BLUR_SIGMA)
    assert got.dtype == np.uint8 and got.shape == frame.shape
    margin = int(2 * shipped.BLUR_SIGMA)
    inner = np.abs(got.astype(int) - want.astype(int))[margin:-margin, margin:-margin]
    assert inner.max() <= 5 and inner.mean() <= 1.5
    # a flat picture stays flat to the edges (the kernel is normalised there too)
    flat = np.full((48, 64, 3), 90, dtype=np.uint8)
    assert np.abs(through("blur", flat).astype(int) - 90).max() <= 1


def test_the_blur_chain_blurs_a_subsampled_chroma_plane_by_the_same_distance():
    context = Context(CONDITIONS["blur"].params)
    chain = shipped.blur(Picture(640, 360, "yuv420p", (1, 1), False), context)
    assert chain == "gblur=sigma=4:sigmaV=4:steps=3:planes=1,gblur=sigma=2:sigmaV=2:steps=3:planes=6"


def test_downscale_removes_detail_finer_than_its_short_side_and_keeps_the_rest():
    # A one-pixel checkerboard on a 224-px short side is detail finer than 112 px: it averages to grey.
    checker = ((np.indices((224, 300)).sum(axis=0) % 2) * 255).astype(np.uint8)
    frame = np.repeat(checker[..., None], 3, axis=2)
    out = through("downscale112", frame)
    assert out.shape == frame.shape and out.dtype == np.uint8
    assert np.abs(out.astype(int) - 127.5).max() <= 3
    # Stripes 16 px wide are coarser than a 112-px short side resolves: they survive, away from their edges.
    stripes = (((np.arange(300) // 16) % 2) * 255).astype(np.uint8)
    frame = np.repeat(np.tile(stripes, (224, 1))[..., None], 3, axis=2)
    out = through("downscale112", frame)
    centres = np.arange(8, 288, 16)
    assert np.abs(out[:, centres].astype(int) - frame[:, centres].astype(int)).max() <= 8


def test_the_downscale_chain_names_the_range_so_full_range_samples_are_not_converted():
    context = Context(CONDITIONS["downscale224"].params)
    chain = shipped.downscale(Picture(640, 360, "yuv420p", (1, 1), True), context)
    assert chain == (
        "scale=w=398:h=224:flags=area:in_range=pc:out_range=pc,"
        "scale=w=640:h=360:flags=bicubic:param0=0.3333:param1=0.3333:in_range=pc:out_range=pc"
    )


def test_downscale_leaves_a_frame_at_or_below_its_short_side_as_it_is():
    frame = np.random.default_rng(1).integers(0, 256, size=(112, 150, 3), dtype=np.uint8)
    assert shipped.downscale(Picture(150, 112, "gbrp", (0, 0), True), Context({"short_side": 112})) == "null"
    assert np.array_equal(through("downscale112", frame), frame)
    assert np.array_equal(through("downscale448", frame), frame)


# --------------------------------------------------------------------------------------------
# Rendered: what every sampler reads, on the sources the built-ins are tested on


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("shipped_sources")
    made = make_hostile_sources(folder)
    base = write_indexed_source(folder / "base.mp4", 24, gop=4)
    made["edit_list"] = shifted_copy(base, folder / "edit_list.mp4", start=4)
    return made


@pytest.fixture(scope="module")
def rendered(sources, tmp_path_factory):
    folder = tmp_path_factory.mktemp("shipped_out")
    made: dict[tuple[str, str], Path] = {}

    def get(name: str, condition: str) -> Path:
        if (name, condition) not in made:
            made[name, condition] = folder / f"{name}_{condition}.mp4"
            render(CONDITIONS[condition], sources[name], made[name, condition], seed=SEED)
        return made[name, condition]

    return get


@pytest.mark.slow
@pytest.mark.parametrize("sampler", list(SAMPLERS))
@pytest.mark.parametrize("condition", ["downscale112", "blur", "mute"])
@pytest.mark.parametrize("name", ["frames_10", "frames_33", "frames_63", "vfr", "odd_size", "audio", "edit_list"])
def test_every_sampler_reads_the_frames_it_reads_from_the_source(sources, rendered, name, condition, sampler):
    source, output = sources[name], rendered(name, condition)
    k = 8
    # lmms-eval's read_video counts the frames a source's edit list hides (it returns 7 frames of 8 there): on such
    # a source the output is read as crf28's, the built-in that keeps every frame.
    reference = rendered(name, "crf28") if (name, sampler) == ("edit_list", "lmms_read_video") else source
    assert [read_index(f) for f in SAMPLERS[sampler](output, k)] == [
        read_index(f) for f in SAMPLERS[sampler](reference, k)
    ]
    a, b = probe(source), probe(output)
    assert (b.width, b.height, b.n_frames) == (a.width, a.height, a.n_frames)
    assert b.duration == pytest.approx(a.duration, abs=1e-9)


def decoded(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["limited", "full", "yuvj420p"])
def test_a_frame_condition_keeps_the_colour_range_and_an_unchanged_frame_is_crf18s(tmp_path, kind):
    """Full-range black stays 0 and white 255; an identity frame function decodes as crf18 (the same encode)."""
    source = write_half_black_source(tmp_path / f"{kind}.mp4", kind)
    reference, output = tmp_path / "crf18.mp4", tmp_path / "downscale112.mp4"  # 64x48: nothing to remove
    render(CONDITIONS["crf18"], source, reference, seed=SEED)
    render(CONDITIONS["downscale112"], source, output, seed=SEED)
    got, want = decoded(output), decoded(reference)
    assert len(got) == len(want) == 20
    assert max(int(np.abs(g.astype(int) - w.astype(int)).max()) for g, w in zip(got, want, strict=True)) <= 1
    assert int(got[0].min()) == 0 and int(got[0].max()) == 255
    with av.open(str(source)) as a, av.open(str(output)) as b:
        assert b.streams.video[0].codec_context.color_range == a.streams.video[0].codec_context.color_range


@pytest.mark.slow
@pytest.mark.parametrize("start", sorted(STARTS))
def test_mute_shows_an_mpegts_source_from_its_first_frame(tmp_path, start):
    """A TS stream starting at 10 s, or just before its 33-bit clock wraps: every frame, at time 0 onward."""
    source = write_ts(tmp_path / f"{start}.ts", STARTS[start], "libx264")
    output = tmp_path / "mute.mp4"
    render(CONDITIONS["mute"], source, output, seed=SEED)
    got, want = decoded(output), decoded(source)
    assert len(got) == len(want) == 60
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    with av.open(str(output)) as container:
        stream = container.streams.video[0]
        assert float((stream.start_time or 0) * stream.time_base) == pytest.approx(0, abs=0.05)
