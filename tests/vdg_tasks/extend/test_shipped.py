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
from vdg_tasks.extend import Context, shipped
from vdg_tasks.perturb.video import probe, render
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


def test_blur_is_the_declared_gaussian():
    frame = np.random.default_rng(0).integers(0, 256, size=(40, 56, 3), dtype=np.uint8)
    context = Context(CONDITIONS["blur"].params)
    got = shipped.blur(frame, context)
    want = gaussian_blur(frame, shipped.BLUR_SIGMA)
    assert got.dtype == np.uint8 and got.shape == frame.shape
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1


def test_downscale_removes_detail_finer_than_its_short_side_and_keeps_the_rest():
    # A one-pixel checkerboard on a 224-px short side is detail finer than 112 px: it averages to grey.
    checker = ((np.indices((224, 300)).sum(axis=0) % 2) * 255).astype(np.uint8)
    frame = np.repeat(checker[..., None], 3, axis=2)
    out = shipped.downscale(frame, Context({"short_side": 112}))
    assert out.shape == frame.shape and out.dtype == np.uint8
    assert np.abs(out.astype(int) - 127.5).max() <= 3
    # Stripes 16 px wide are coarser than a 112-px short side resolves: they survive, away from their edges.
    stripes = (((np.arange(300) // 16) % 2) * 255).astype(np.uint8)
    frame = np.repeat(np.tile(stripes, (224, 1))[..., None], 3, axis=2)
    out = shipped.downscale(frame, Context({"short_side": 112}))
    centres = np.arange(8, 288, 16)
    assert np.abs(out[:, centres].astype(int) - frame[:, centres].astype(int)).max() <= 8


def test_downscale_leaves_a_frame_at_or_below_its_short_side_as_it_is():
    frame = np.random.default_rng(1).integers(0, 256, size=(112, 150, 3), dtype=np.uint8)
    assert shipped.downscale(frame, Context({"short_side": 112})) is frame
    assert shipped.downscale(frame, Context({"short_side": 448})) is frame


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
