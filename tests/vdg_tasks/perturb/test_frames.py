"""The video conditions on a list of frames: counts, sizes and modes kept; which frame each position shows,
against segments and centres computed here."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from vdg_tasks.perturb.frames import FramesUnavailable, apply_to_frames, effective_frame_params, frame_count
from vdg_tasks.vocabulary.conditions import CONDITIONS


def numbered(n: int) -> list[Image.Image]:
    """Frames whose every pixel holds the frame's own index."""
    return [Image.fromarray(np.full((6, 8, 3), i, dtype=np.uint8)) for i in range(n)]


def shown(frames: list) -> list[int]:
    return [int(np.asarray(f)[0, 0, 0]) for f in frames]


@pytest.mark.parametrize("n", [1, 5, 16, 64, 100])
def test_orig_keeps_the_frames_and_black_keeps_their_count_size_and_mode(n):
    frames = numbered(n)
    assert apply_to_frames(CONDITIONS["orig"], frames, seed=0) == frames
    black = apply_to_frames(CONDITIONS["black"], frames, seed=0)
    assert len(black) == n and all(b.size == (8, 6) and b.mode == "RGB" for b in black)
    assert all(not np.asarray(b).any() for b in black)
    grey = [np.full((4, 4), 9, dtype=np.uint16)] * 3
    assert [a.dtype for a in apply_to_frames(CONDITIONS["black"], grey, seed=0)] == [np.uint16] * 3


@pytest.mark.parametrize("n", [64, 96, 100, 200])
def test_ordered_cuts_the_list_into_k_near_equal_runs_each_showing_its_own_centre(n):
    k = int(CONDITIONS["ordered"].params_dict()["k"])
    out = shown(apply_to_frames(CONDITIONS["ordered"], numbered(n), seed=3))
    starts = [i for i in range(n) if i == 0 or out[i] != out[i - 1]]
    ends = [*starts[1:], n]
    assert len(out) == n and len(starts) == k
    assert all(abs((e - s) - n / k) <= 2 for s, e in zip(starts, ends, strict=True))
    assert [out[s] for s in starts] == [(s + e - 1) // 2 for s, e in zip(starts, ends, strict=True)]
    # a uniform sampler drawing k of the n frames (lmms-eval's, truncating) sees every key frame once, in order
    assert [out[i] for i in np.linspace(0, n - 1, k).astype(int)] == [out[s] for s in starts]


def test_shuffled_reversed_and_single_rearrange_the_ordered_key_frames():
    n = 64
    ordered = shown(apply_to_frames(CONDITIONS["ordered"], numbered(n), seed=1))
    keys = list(dict.fromkeys(ordered))
    runs = lambda seq: [seq[i] for i in range(len(seq)) if i == 0 or seq[i] != seq[i - 1]]  # noqa: E731
    shuffled = shown(apply_to_frames(CONDITIONS["shuffled"], numbered(n), seed=1))
    assert len(shuffled) == n and sorted(runs(shuffled)) == keys and runs(shuffled) != keys
    assert shuffled == shown(apply_to_frames(CONDITIONS["shuffled"], numbered(n), seed=1))  # seeded
    assert shuffled != shown(apply_to_frames(CONDITIONS["shuffled"], numbered(n), seed=2))
    assert runs(shown(apply_to_frames(CONDITIONS["reversed"], numbered(n), seed=1))) == keys[::-1]
    single = shown(apply_to_frames(CONDITIONS["single"], numbered(n), seed=1))
    assert set(single) == {keys[len(keys) // 2]} and len(single) == n


def test_a_list_shorter_than_k_holds_every_frame_and_says_so():
    frames = numbered(5)
    assert shown(apply_to_frames(CONDITIONS["ordered"], frames, seed=0)) == [0, 1, 2, 3, 4]
    assert effective_frame_params(CONDITIONS["ordered"], 5)["k"] == 5
    assert effective_frame_params(CONDITIONS["black"], 5) == CONDITIONS["black"].params_dict()


def test_blind_shows_nothing_and_what_frames_cannot_take_is_refused_with_the_reason():
    assert apply_to_frames(CONDITIONS["blind"], numbered(4), seed=0) == []
    with pytest.raises(FramesUnavailable, match="crf18 .crf. needs a video stream"):
        apply_to_frames(CONDITIONS["crf18"], numbered(4), seed=0)
    with pytest.raises(FramesUnavailable, match="gave no frames"):
        apply_to_frames(CONDITIONS["orig"], [], seed=0)
    with pytest.raises(FramesUnavailable, match="type str is not a frame"):
        apply_to_frames(CONDITIONS["black"], [*numbered(2), "/videos/a.mp4"], seed=0)


def test_one_array_of_stacked_frames_is_taken_as_its_frames_and_given_back_stacked():
    stacked = np.stack([np.full((6, 8, 3), i, dtype=np.uint8) for i in range(64)])
    (held,) = apply_to_frames(CONDITIONS["single"], [stacked], seed=0)
    assert held.shape == stacked.shape and len({int(f[0, 0, 0]) for f in held}) == 1
    (black,) = apply_to_frames(CONDITIONS["black"], [stacked], seed=0)
    assert black.shape == stacked.shape and not black.any()
    assert frame_count([stacked]) == 64 and frame_count(numbered(5)) == 5


def test_jpeg_re_encodes_each_frame_at_its_quality_keeping_size_and_mode():
    rng = np.random.default_rng(0)
    noise = [Image.fromarray(rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)) for _ in range(3)]
    light = apply_to_frames(CONDITIONS["jpeg90"], noise, seed=0)
    heavy = apply_to_frames(CONDITIONS["jpeg10"], noise, seed=0)
    assert [(f.size, f.mode) for f in heavy] == [(n.size, n.mode) for n in noise]

    def error(frames):
        return np.mean(
            [np.abs(np.asarray(f, float) - np.asarray(n, float)).mean() for f, n in zip(frames, noise, strict=True)]
        )

    assert 0 < error(light) < error(heavy)  # lossy, and lossier at the lower quality
    grey = np.full((16, 16), 200, dtype=np.uint8)
    (out,) = apply_to_frames(CONDITIONS["jpeg50"], [grey], seed=0)
    assert out.dtype == np.uint8 and out.shape == (16, 16) and abs(int(out.mean()) - 200) <= 2
    with pytest.raises(FramesUnavailable, match="JPEG takes 8-bit frames; this frame is uint16"):
        apply_to_frames(CONDITIONS["jpeg50"], [grey.astype(np.uint16)], seed=0)
