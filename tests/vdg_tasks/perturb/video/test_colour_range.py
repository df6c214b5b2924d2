"""Colour range: a full-range source stays full range (samples and tags) under every condition.

A phone clip is often full range (``yuvj420p``, or yuv420p tagged full). Converting its samples to
limited range while keeping the full-range tag turns black into RGB 16 and white into RGB 235 for
every reader; these tests read the outputs back through PyAV and decord, as the models' loaders do.
"""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest

from tests.helpers.colour_range import BT709, SOURCES, write_half_black_source
from vdg_tasks.perturb.video import render, write_black, write_crf, write_held
from vdg_tasks.vocabulary.conditions import CONDITIONS

decord = pytest.importorskip("decord")

pytestmark = pytest.mark.slow

#: Levels an output's dark or bright half may differ from the source's (H.264 at CRF 18 / QP 21 on a
#: flat half: a level or two in practice; a range squeeze moves them by 16 and 20).
TOLERANCE = 6
COLOUR_TAGS = ("color_range", "colorspace", "color_primaries", "color_trc")


@pytest.fixture(scope="module", params=sorted(SOURCES))
def source(request, tmp_path_factory) -> tuple[str, Path]:
    kind = request.param
    return kind, write_half_black_source(tmp_path_factory.mktemp("colour") / f"{kind}.mp4", kind)


def colour_tags(path: Path) -> dict[str, int]:
    with av.open(str(path)) as container:
        ctx = container.streams.video[0].codec_context
        return {name: int(getattr(ctx, name)) for name in COLOUR_TAGS}


def first_frame_rgb(path: Path) -> dict[str, np.ndarray]:
    """The first frame as RGB, ``(H, W, 3)`` uint8, read by PyAV and by decord."""
    with av.open(str(path)) as container:
        pyav = next(container.decode(video=0)).to_ndarray(format="rgb24")
    return {"pyav": pyav, "decord": decord.VideoReader(str(path))[0].asnumpy()}


def halves(rgb: np.ndarray) -> tuple[float, float]:
    """Mean RGB of the dark (left) and bright (right) half, away from the edge between them."""
    width = rgb.shape[1]
    return float(rgb[:, 2 : width // 2 - 8].mean()), float(rgb[:, width // 2 + 8 : width - 2].mean())


def render_named(name: str, src: Path, dst: Path) -> None:
    if name == "crf18":
        write_crf(src, dst, crf=18)
    elif name == "ordered":
        write_held(src, dst, k=4, order="ordered", seed=0)
    else:  # "single": the condition as declared (k = DEFAULT_KEY_FRAMES, order "single")
        render(CONDITIONS[name], src, dst, seed=0)


def test_sources_are_what_they_claim(source):
    kind, path = source
    _, color_range, _, _ = SOURCES[kind]
    assert colour_tags(path) == {
        "color_range": color_range,
        "colorspace": BT709,
        "color_primaries": BT709,
        "color_trc": BT709,
    }
    for reader, rgb in first_frame_rgb(path).items():
        dark, bright = halves(rgb)
        assert dark <= 2 and bright >= 253, (kind, reader, dark, bright)


@pytest.mark.parametrize("condition", ["crf18", "ordered", "single"])
def test_output_keeps_the_source_range(source, tmp_path, condition):
    kind, src = source
    dst = tmp_path / f"{condition}.mp4"
    render_named(condition, src, dst)
    assert colour_tags(dst) == colour_tags(src), kind
    want = first_frame_rgb(src)
    for reader, rgb in first_frame_rgb(dst).items():
        np.testing.assert_allclose(
            halves(rgb), halves(want[reader]), atol=TOLERANCE, err_msg=f"{kind} source, {condition}, read by {reader}"
        )


def test_black_is_black_in_the_source_range(source, tmp_path):
    kind, src = source
    dst = tmp_path / "black.mp4"
    write_black(src, dst)
    tags = colour_tags(dst)
    assert tags == colour_tags(src), kind
    assert tags["color_range"] == SOURCES[kind][1]
    for reader, rgb in first_frame_rgb(dst).items():
        assert rgb.max() <= 4, (kind, reader, int(rgb.max()))
