"""vdg_tasks.perturb.video.layout: key frame choice, segment bounds, output rate factor and hold orders.

Expected bounds are derived by hand from the documented rule (equal split ``round(i * n / k)``, moved so that
every draw of ``np.linspace(0, n - 1, k)``, truncated or rounded, falls in its own segment); the sampler
properties are checked against samplers written here (numpy, and torch's float32 linspace where installed).
"""

from __future__ import annotations

import numpy as np
import pytest

from vdg_tasks.perturb.video.layout import (
    effective_k,
    hold_order,
    key_frame_indices,
    output_rate_factor,
    output_segment_bounds,
    segment_bounds,
)

#: (n_frames, k) grid with n_frames >= 2k, where one draw per segment is guaranteed; plus a few long videos.
GUARANTEED = [(n, k) for k in range(1, 33) for n in [*range(2 * k, 2 * k + 41), 997, 4096, 12345]]


def _segment_of(bounds: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Index of the segment ``[b[i], b[i+1])`` each frame position falls in."""
    return np.searchsorted(bounds, positions, side="right") - 1


def _numpy_draws(n_frames: int, k: int) -> dict[str, np.ndarray]:
    """Frame positions of a uniform sampler drawing k frames: truncated (lmms-eval, decord) or rounded (qwen)."""
    draws = {}
    for dtype in (np.float64, np.float32):
        x = np.linspace(0, n_frames - 1, k, dtype=dtype)
        name = np.dtype(dtype).name
        draws[f"{name} truncated"] = x.astype(np.int64)
        draws[f"{name} rounded half to even"] = np.rint(x).astype(np.int64)
        draws[f"{name} rounded half up"] = np.floor(x + dtype(0.5)).astype(np.int64)
    return draws


# --------------------------------------------------------------------------------------------
# effective_k


@pytest.mark.parametrize(("n_frames", "k", "expected"), [(80, 8, 8), (8, 8, 8), (3, 8, 3), (1, 32, 1), (100, 1, 1)])
def test_effective_k_is_the_smaller_of_k_and_the_frame_count(n_frames, k, expected):
    assert effective_k(n_frames, k) == expected


def test_effective_k_accepts_numpy_integers():
    assert effective_k(np.int64(5), np.int32(8)) == 5


@pytest.mark.parametrize("function", [effective_k, output_rate_factor, key_frame_indices, output_segment_bounds])
def test_a_k_below_one_is_refused(function):
    with pytest.raises(ValueError, match=r"k must be at least 1, got k=0\."):
        function(10, 0)


@pytest.mark.parametrize("function", [effective_k, output_rate_factor, key_frame_indices, output_segment_bounds])
def test_a_video_without_frames_is_refused(function):
    with pytest.raises(ValueError, match=r"A video needs at least 1 frame, got n_frames=0\."):
        function(0, 4)


# --------------------------------------------------------------------------------------------
# output_rate_factor


@pytest.mark.parametrize(
    ("n_frames", "k", "expected"),
    [
        (16, 8, 1),  # 16 frames are already 2k
        (100, 8, 1),
        (10, 8, 2),  # ceil(16 / 10)
        (15, 8, 2),  # ceil(16 / 15)
        (3, 8, 6),  # ceil(16 / 3) = 6: 18 frames
        (1, 32, 64),  # one frame held for 2k output frames
    ],
)
def test_the_rate_factor_is_the_smallest_that_gives_2k_frames(n_frames, k, expected):
    assert output_rate_factor(n_frames, k) == expected


def test_the_rate_factor_matches_a_search_for_the_smallest_sufficient_factor():
    for k in range(1, 20):
        for n_frames in range(1, 50):
            r = 1
            while r * n_frames < 2 * k:
                r += 1
            assert output_rate_factor(n_frames, k) == r, (n_frames, k)


# --------------------------------------------------------------------------------------------
# segment_bounds


def test_an_equal_split_that_every_sampler_respects_is_kept():
    # linspace(0, 79, 8) = 0, 11.29, 22.57, 33.86, 45.14, 56.43, 67.71, 79: every draw lies inside the equal
    # split's segment i (round(i * 80 / 8) = 10 i), so no bound moves.
    assert segment_bounds(80, 8).tolist() == [0, 10, 20, 30, 40, 50, 60, 70, 80]


def test_a_bound_on_a_draw_moves_so_the_draw_stays_in_its_own_segment():
    # linspace(0, 9, 4) = 0, 3, 6, 9; the equal split 0, 3 (2.5 rounded up), 5, 8 (7.5 rounded up), 10 puts draw 1
    # (3.0, maybe 2.9999 in float32) on a bound: bound 1 moves down to 2 (at or before every truncation of 3.0).
    # Bound 2 stays at 5 and bound 3 at 8 (each between rounding of the draw before and truncation of its own).
    assert segment_bounds(10, 4).tolist() == [0, 2, 5, 8, 10]


def test_bounds_for_20_frames_and_k_8():
    # linspace(0, 19, 8) = 0, 2.71, 5.43, 8.14, 10.86, 13.57, 16.29, 19; the equal split round(2.5 i) is
    # 3, 5, 8, 10, 13, 15, 18. Bound 1 may not exceed floor(2.71) = 2; bound 6 may not be below
    # round(13.57) + 1 = 15 and not above floor(16.29) = 16, so the ideal 15 stays; the others stay too.
    assert segment_bounds(20, 8).tolist() == [0, 2, 5, 8, 10, 13, 15, 18, 20]


def test_as_many_frames_as_segments_gives_one_frame_each():
    # the clamps b[i] >= b[i-1] + 1 and b[i] <= n - (k - i) leave only b[i] = i
    for k in (1, 2, 3, 7, 32):
        assert segment_bounds(k, k).tolist() == list(range(k + 1))


def test_fewer_than_2k_frames_still_gives_non_empty_ordered_segments():
    # linspace(0, 4, 4) = 0, 1.33, 2.67, 4: bound 1 = 1; bound 2 may not exceed floor(2.67) = 2; bound 3 must
    # follow round(2.67) = 3, so 4.
    assert segment_bounds(5, 4).tolist() == [0, 1, 2, 4, 5]
    for k in range(1, 20):
        for n_frames in range(k, 2 * k):
            b = segment_bounds(n_frames, k)
            assert b[0] == 0 and b[-1] == n_frames and len(b) == k + 1
            assert np.all(np.diff(b) >= 1), (n_frames, k, b)


def test_bounds_start_at_0_end_at_n_and_increase():
    for n_frames, k in GUARANTEED:
        b = segment_bounds(n_frames, k)
        assert b.dtype == np.int64 and len(b) == k + 1
        assert b[0] == 0 and b[-1] == n_frames
        assert np.all(np.diff(b) >= 1), (n_frames, k)


def test_with_2k_frames_every_numpy_sampler_lands_one_draw_in_each_segment():
    for n_frames, k in GUARANTEED:
        bounds = segment_bounds(n_frames, k)
        for name, positions in _numpy_draws(n_frames, k).items():
            assert _segment_of(bounds, positions).tolist() == list(range(k)), (n_frames, k, name)


def test_with_2k_frames_torch_float32_samplers_land_one_draw_in_each_segment():
    torch = pytest.importorskip("torch")
    for n_frames, k in GUARANTEED:
        bounds = segment_bounds(n_frames, k)
        x = torch.linspace(0, n_frames - 1, k, dtype=torch.float32)
        for name, positions in (("truncated", x.long()), ("rounded", x.round().long())):
            assert _segment_of(bounds, positions.numpy()).tolist() == list(range(k)), (n_frames, k, name)


def test_bounds_stay_within_two_frames_of_the_equal_split():
    for n_frames, k in GUARANTEED:
        ideal = np.floor(np.arange(k + 1) * n_frames / k + 0.5)
        assert np.max(np.abs(segment_bounds(n_frames, k) - ideal)) <= 2, (n_frames, k)


def test_segment_bounds_refuses_k_below_one():
    with pytest.raises(ValueError, match=r"k must be at least 1, got k=0\."):
        segment_bounds(10, 0)


def test_segment_bounds_refuses_fewer_frames_than_segments():
    with pytest.raises(ValueError, match=r"Cannot split 3 frames into k=4 segments.*effective_k"):
        segment_bounds(3, 4)


# --------------------------------------------------------------------------------------------
# key_frame_indices


def test_key_frames_are_the_centres_of_the_segments():
    # bounds 0, 10, ..., 80: centres (b[i] + b[i+1] - 1) // 2 = 4, 14, ..., 74
    assert key_frame_indices(80, 8).tolist() == [4, 14, 24, 34, 44, 54, 64, 74]
    # bounds 0, 2, 5, 8, 10: centres 0, 3, 6, 8
    assert key_frame_indices(10, 4).tolist() == [0, 3, 6, 8]


@pytest.mark.parametrize(("n_frames", "k"), [(1, 1), (1, 8), (5, 8), (8, 8)])
def test_a_source_with_at_most_k_frames_shows_every_frame(n_frames, k):
    assert key_frame_indices(n_frames, k).tolist() == list(range(n_frames))


def test_every_key_frame_lies_in_its_own_segment():
    for n_frames, k in GUARANTEED:
        b = segment_bounds(n_frames, k)
        keys = key_frame_indices(n_frames, k)
        assert np.all((b[:-1] <= keys) & (keys < b[1:])), (n_frames, k)


# --------------------------------------------------------------------------------------------
# output_segment_bounds


def test_output_bounds_split_the_raised_frame_count_when_the_source_has_k_frames_or_more():
    # 10 frames, k = 8: r = ceil(16 / 10) = 2, so 20 output frames split as segment_bounds(20, 8) (derived above)
    assert output_segment_bounds(10, 8).tolist() == [0, 2, 5, 8, 10, 13, 15, 18, 20]
    # 80 frames, k = 8: r = 1, the source's own bounds
    assert output_segment_bounds(80, 8).tolist() == [0, 10, 20, 30, 40, 50, 60, 70, 80]


def test_output_bounds_hold_each_frame_of_a_short_source_for_r_frames():
    # 3 frames, k = 8: r = ceil(16 / 3) = 6, each source frame held for 6 of the 18 output frames
    assert output_segment_bounds(3, 8).tolist() == [0, 6, 12, 18]
    # 1 frame, k = 4: r = 8
    assert output_segment_bounds(1, 4).tolist() == [0, 8]


def test_a_sampler_drawing_k_from_a_short_sources_output_sees_every_segment_in_order():
    for k in range(2, 33):
        for n_frames in range(1, k):
            bounds = output_segment_bounds(n_frames, k)
            n_out = n_frames * output_rate_factor(n_frames, k)
            assert bounds[-1] == n_out
            for name, positions in _numpy_draws(n_out, k).items():
                seen = _segment_of(bounds, positions)
                assert np.all(np.diff(seen) >= 0), (n_frames, k, name)
                assert set(seen.tolist()) == set(range(n_frames)), (n_frames, k, name)


def test_a_sampler_drawing_k_from_any_output_lands_one_draw_per_segment_when_the_source_has_k_frames():
    for k in range(1, 17):
        for n_frames in range(k, 3 * k):
            bounds = output_segment_bounds(n_frames, k)
            n_out = n_frames * output_rate_factor(n_frames, k)
            for name, positions in _numpy_draws(n_out, k).items():
                assert _segment_of(bounds, positions).tolist() == list(range(k)), (n_frames, k, name)


# --------------------------------------------------------------------------------------------
# hold_order


def test_ordered_shows_the_key_frames_in_order():
    assert hold_order(5, "ordered", seed=0).tolist() == [0, 1, 2, 3, 4]


def test_reversed_shows_the_last_key_frame_first():
    order = hold_order(5, "reversed", seed=0)
    assert order.tolist() == [4, 3, 2, 1, 0]
    order[0] = 99  # a writable array of its own
    assert hold_order(5, "reversed", seed=0).tolist() == [4, 3, 2, 1, 0]


@pytest.mark.parametrize(("k", "middle"), [(1, 0), (4, 2), (5, 2), (8, 4)])
def test_single_shows_key_frame_k_over_2_in_every_segment(k, middle):
    assert hold_order(k, "single", seed=0).tolist() == [middle] * k


def test_shuffled_is_a_permutation_that_is_never_the_identity():
    for k in range(2, 12):
        for seed in range(20):
            order = hold_order(k, "shuffled", seed=seed)
            assert sorted(order.tolist()) == list(range(k))
            assert order.tolist() != list(range(k)), (k, seed)


def test_shuffling_two_key_frames_swaps_them():
    # the only permutation of two that is not the identity
    for seed in range(10):
        assert hold_order(2, "shuffled", seed=seed).tolist() == [1, 0]


def test_shuffled_is_the_first_non_identity_permutation_of_the_seeded_generator():
    for k in (3, 4, 8):
        for seed in range(30):
            rng = np.random.default_rng(seed)
            expected = rng.permutation(k)
            while np.array_equal(expected, np.arange(k)):
                expected = rng.permutation(k)
            assert hold_order(k, "shuffled", seed=seed).tolist() == expected.tolist(), (k, seed)


def test_shuffled_depends_only_on_k_and_seed():
    first = hold_order(8, "shuffled", seed=123).tolist()
    np.random.seed(0)  # the global generator plays no part
    assert hold_order(8, "shuffled", seed=123).tolist() == first


def test_shuffling_one_key_frame_shows_it():
    assert hold_order(1, "shuffled", seed=7).tolist() == [0]


def test_an_unknown_hold_order_is_named_with_the_choices():
    with pytest.raises(ValueError, match=r"Unknown hold order 'sideways'; expected one of ordered, shuffled, single"):
        hold_order(4, "sideways", seed=0)  # type: ignore[arg-type]


def test_hold_order_refuses_k_below_one():
    with pytest.raises(ValueError, match=r"k must be at least 1, got k=0\."):
        hold_order(0, "ordered", seed=0)
