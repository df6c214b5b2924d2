"""vdg_tasks.perturb.video.filtergraph: a filter chain parsed, configured and run on frames in their own format."""

from __future__ import annotations

from fractions import Fraction

import av
import numpy as np
import pytest

from vdg_tasks.perturb.video.filtergraph import frame_filter, parse_chain, picture_of


def test_a_chain_is_split_into_its_filters_and_only_a_linear_chain_is_taken():
    assert parse_chain("gblur=sigma=4:planes=1, hflip") == [("gblur", "sigma=4:planes=1"), ("hflip", "")]
    assert parse_chain(r"geq=lum='p(X,Y)',hflip") == [("geq", "lum='p(X,Y)'"), ("hflip", "")]
    with pytest.raises(ValueError, match="linear chain"):
        parse_chain("[in]hflip[out]")
    with pytest.raises(ValueError, match="no filter 'nosuchfilter'"):
        parse_chain("hflip,nosuchfilter")
    with pytest.raises(ValueError, match="empty filter"):
        parse_chain("hflip,,vflip")


def test_a_picture_is_only_one_of_the_formats_frames_are_encoded_in():
    assert picture_of(64, 48, "yuv420p", True).chroma_shift == (1, 1)
    assert picture_of(63, 48, "yuv444p", False).range_name == "tv"
    with pytest.raises(ValueError, match="not rgb24"):
        picture_of(64, 48, "rgb24", True)


def _full_range_frame(pts: int) -> av.VideoFrame:
    frame = av.VideoFrame(64, 48, "yuv420p")
    luma = np.zeros((frame.planes[0].height, frame.planes[0].line_size), dtype=np.uint8)
    luma[:, 32:] = 255  # half black 0, half white 255: full range
    frame.planes[0].update(luma)
    for plane in frame.planes[1:]:
        plane.update(np.full(plane.buffer_size, 128, dtype=np.uint8))
    frame.pts = pts
    frame.color_range = 2
    return frame


def test_a_scaling_chain_that_names_the_range_keeps_full_range_samples_and_every_frame_s_timestamp():
    picture = picture_of(64, 48, "yuv420p", True)
    run = frame_filter("scale=w=64:h=48:flags=bicubic:in_range=pc:out_range=pc", picture, Fraction(1, 10))
    out = [g for i in range(5) for g in run(_full_range_frame(i * 3))] + run(None)
    assert [f.pts for f in out] == [0, 3, 6, 9, 12]
    luma = out[0].to_ndarray()[:48]  # yuv420p's ndarray: the luma rows first
    assert int(luma[:, :8].max()) == 0 and int(luma[:, -8:].min()) == 255
    assert all(f.color_range == 2 for f in out)


def test_a_chain_that_changes_the_size_or_is_refused_by_ffmpeg_says_so():
    picture = picture_of(64, 48, "yuv420p", False)
    run = frame_filter("scale=w=32:h=24", picture, Fraction(1, 10))
    with pytest.raises(ValueError, match="must keep the size and format"):
        run(_full_range_frame(0))
    with pytest.raises(ValueError, match="refused by FFmpeg"):
        frame_filter("gblur=nosuchoption=1", picture, Fraction(1, 10))
