"""What the synthetic benchmarks draw (vdg_tasks.vocabulary.drawing): a palette of colours far apart, the border
ring and centre box geometry, nearest-colour naming, the cast and outfits, and the figure boxes of each slot.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from vdg_tasks.vocabulary.drawing import (
    BACKGROUND,
    CAST,
    N_SLOTS,
    OUTFITS,
    PALETTE,
    border_px,
    centre_box,
    figure_boxes,
    nearest_colour,
)

#: Frame sizes from the smallest figure_boxes accepts (12x8) to odd and portrait ones.
SIZES = [(12, 8), (13, 9), (16, 16), (17, 13), (64, 48), (97, 31), (160, 120), (120, 160), (641, 359)]


def test_palette_colours_are_valid_rgb_triples():
    for name, rgb in PALETTE.items():
        assert len(rgb) == 3 and all(isinstance(c, int) and 0 <= c <= 255 for c in rgb), name


def test_palette_colours_are_pairwise_at_least_80_apart():
    for (a, ra), (b, rb) in itertools.combinations(PALETTE.items(), 2):
        assert math.dist(ra, rb) >= 80, (a, b)


def test_palette_colours_stand_out_from_the_background():
    # "none dark": each is at least 80 from the background grey and brighter than it in some channel.
    for name, rgb in PALETTE.items():
        assert math.dist(rgb, BACKGROUND) >= 80, name
        assert max(rgb) > max(BACKGROUND), name


def test_palette_cast_and_outfits_cannot_be_changed():
    with pytest.raises(TypeError):
        PALETTE["red"] = (0, 0, 0)  # type: ignore[index]
    with pytest.raises(TypeError):
        CAST["Zed"] = "male"  # type: ignore[index]
    with pytest.raises(TypeError):
        OUTFITS["gray"] = "gray coat"  # type: ignore[index]


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        (160, 120, 20),  # docstring: 120 / 6
        (120, 160, 20),  # the short side, whichever it is
        (600, 36, 6),  # 36 / 6
        (64, 48, 8),  # 48 / 6
        (70, 50, 8),  # 50 / 6 = 8.33 -> 8
        (70, 52, 9),  # 52 / 6 = 8.67 -> 9
        (12, 8, 2),  # 8 / 6 = 1.33 -> 1, raised to the floor of 2
        (1, 1, 2),  # the floor of 2
    ],
)
def test_border_is_a_sixth_of_the_short_side_and_at_least_two(width, height, expected):
    assert border_px(width, height) == expected


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        (160, 120, (40, 30, 120, 90)),  # a quarter in from each side
        (16, 16, (4, 4, 12, 12)),
        (17, 13, (4, 3, 13, 10)),  # 17 // 4 = 4, 17 - 4 = 13; 13 // 4 = 3, 13 - 3 = 10
    ],
)
def test_centre_box_is_a_quarter_in_from_each_side(width, height, expected):
    assert centre_box(width, height) == expected


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_centre_box_is_centred_inside_the_frame_and_half_of_it_rounded_up(width, height):
    x0, y0, x1, y1 = centre_box(width, height)
    assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height
    assert (x0, y0) == (width - x1, height - y1)  # equal margins on both sides
    # n - 2 * (n // 4) is n / 2 plus half the remainder of n mod 4: exactly half for n divisible by 4.
    assert (x1 - x0) - width / 2 == (width % 4) / 2 and (y1 - y0) - height / 2 == (height % 4) / 2


@pytest.mark.parametrize("name", sorted(PALETTE))
def test_each_palette_colour_is_its_own_nearest(name):
    assert nearest_colour(PALETTE[name]) == name


@pytest.mark.parametrize("name", sorted(PALETTE))
@pytest.mark.parametrize("shift", [(39, 0, 0), (0, -39, 0), (-22, 22, 22)])  # |shift| < 40, half the 80 spacing
def test_a_colour_within_half_the_spacing_is_named_after_its_palette_colour(name, shift):
    rgb = np.add(PALETTE[name], shift).clip(0, 255)
    assert nearest_colour(rgb) == name


def test_nearest_colour_takes_floats_lists_and_arrays():
    # Background grey (70, 70, 70): gray (128, 128, 128) is 58*sqrt(3) = 100.5 away, purple (120, 40, 160)
    # sqrt(50^2 + 30^2 + 90^2) = 107.2, every other colour farther.
    assert nearest_colour(BACKGROUND) == "gray"
    assert nearest_colour([70.4, 69.6, 70.0]) == "gray"
    assert nearest_colour(np.array([0.0, 0.0, 255.0])) == "blue"  # blue (30, 60, 220) is 75 away
    assert nearest_colour((255, 255, 255)) == "white"


def test_cast_alternates_female_and_male_and_fills_the_slots():
    assert N_SLOTS == len(CAST) == 6
    assert list(CAST.values()) == ["female", "male"] * 3
    assert len(set(CAST)) == len(CAST)


def test_outfits_are_palette_colours_named_colour_first_never_gray_or_white():
    assert set(OUTFITS) <= set(PALETTE) - {"gray", "white"}
    for colour, outfit in OUTFITS.items():
        assert outfit.split()[0] == colour and len(outfit.split()) == 2, outfit
    assert len(set(OUTFITS.values())) == len(OUTFITS)


def test_figure_boxes_at_160x120_match_the_documented_fractions():
    # Slot 0 spans x 0..26 (160 // 6 = 26): body x from 0 + 26 // 4 = 6 to 26 - 6 = 20, y from 0.40 * 120 = 48 to
    # round(0.92 * 120) = round(110.4) = 110; head x from 3 * 26 // 8 = 9 to 26 - 9 = 17, y round(19.2) = 19 to
    # round(43.2) = 43.
    assert figure_boxes(160, 120, 0) == ((6, 48, 20, 110), (9, 19, 17, 43))
    # Slot 5 spans x 800 // 6 = 133 .. 160 (27 px): body 133 + 6 = 139 .. 154, head 133 + 81 // 8 = 143 .. 150.
    assert figure_boxes(160, 120, 5) == ((139, 48, 154, 110), (143, 19, 150, 43))


def test_figure_boxes_at_the_smallest_frame():
    # 12x8: each slot is 2 px wide, 2 // 4 = 0 and 3 * 2 // 8 = 0 so both boxes fill the slot's width;
    # body y round(3.2) = 3 .. round(7.36) = 7, head y round(1.28) = 1 .. round(2.88) = 3.
    assert figure_boxes(12, 8, 3) == ((6, 3, 8, 7), (6, 1, 8, 3))


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_figure_boxes_are_non_empty_inside_their_slot_with_the_head_above_the_body(width, height):
    for slot in range(N_SLOTS):
        body, head = figure_boxes(width, height, slot)
        sx0, sx1 = slot * width // N_SLOTS, (slot + 1) * width // N_SLOTS
        for x0, y0, x1, y1 in (body, head):
            assert sx0 <= x0 < x1 <= sx1 and 0 <= y0 < y1 <= height, (slot, body, head)
        assert head[3] <= body[1]  # the head ends where (or before) the body starts
        assert body[0] <= head[0] and head[2] <= body[2]  # the head is no wider than the body, and over it
        # Centred in the slot: equal margins left and right.
        assert body[0] - sx0 == sx1 - body[2] and head[0] - sx0 == sx1 - head[2]


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_figures_of_different_slots_do_not_overlap_and_go_left_to_right(width, height):
    bodies = [figure_boxes(width, height, slot)[0] for slot in range(N_SLOTS)]
    for left, right in itertools.pairwise(bodies):
        assert left[2] <= right[0]


@pytest.mark.parametrize("slot", [-1, N_SLOTS, 10])
def test_a_slot_outside_the_cast_is_refused(slot):
    with pytest.raises(ValueError, match=rf"^slot must be in 0\.\.5, got {slot}$"):
        figure_boxes(160, 120, slot)


@pytest.mark.parametrize(("width", "height"), [(11, 120), (160, 7), (0, 0)])
def test_a_frame_too_small_for_six_figures_is_refused(width, height):
    with pytest.raises(ValueError, match=rf"^frame {width}x{height} too small for 6 figures$"):
        figure_boxes(width, height, 0)
