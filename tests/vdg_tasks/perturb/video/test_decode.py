"""vdg_tasks.perturb.video.decode: scan_timeline's truncation checks, checked_timeline's edit-list retry,
decode_targets, first_frame and display_matrix.

scan_timeline's branches run on stand-in packets (every field set by hand); the rest on tiny barcoded H.264
files (64x32, 10 fps, B frames, a key frame exactly every 4 frames) written here, whose frame ``i`` shows ``i``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import av
import numpy as np
import pytest

from tests.helpers.videos import ROTATE_90, _set_tkhd_matrix, read_index, shifted_copy, write_indexed_source
from vdg_tasks.perturb.video.decode import (
    Timeline,
    checked_timeline,
    decode_targets,
    display_matrix,
    first_frame,
    scan_timeline,
)

N_FRAMES, FPS, GOP = 12, 10, 4
FIXED_GOP = {"crf": "18", "preset": "veryfast", "x264-params": f"keyint={GOP}:min-keyint={GOP}:scenecut=0"}


# --------------------------------------------------------------------------------------------
# Stand-ins for scan_timeline: only the fields it reads


@dataclass
class FakePacket:
    pts: int | None
    dts: int | None = None
    size: int = 100
    duration: int = 1
    pos: int | None = None
    is_corrupt: bool = False
    is_discard: bool = False
    is_keyframe: bool = False


@dataclass
class FakeStream:
    frames: int = 0
    duration: int | None = None
    time_base: Fraction = Fraction(1, 10)
    metadata: dict[str, str] = field(default_factory=dict)
    average_rate: Fraction | None = Fraction(10)
    guessed_rate: Fraction | None = None


class FakeContainer:
    def __init__(self, packets: list[FakePacket]):
        self.packets = packets

    def demux(self, stream):
        return iter(self.packets)


def ten_frames(**changes) -> list[FakePacket]:
    """Frames 0..9 at pts i (time base 1/10, so 1 s), key frames 0 and 5, in decode order (B frames first)."""
    order = [0, 2, 1, 3, 4, 5, 7, 6, 8, 9]
    return [FakePacket(pts=i, dts=n, is_keyframe=i in (0, 5), **changes) for n, i in enumerate(order)]


def scan(packets: list[FakePacket], file_size: int = 10**6, **stream) -> Timeline:
    return scan_timeline(FakeContainer(packets), FakeStream(**stream), file_size)


# --------------------------------------------------------------------------------------------
# scan_timeline


def test_the_timeline_lists_every_frame_in_display_order_and_the_key_frames():
    timeline = scan(ten_frames(), frames=10, duration=10)
    assert timeline.pts.tolist() == list(range(10))
    assert timeline.key_pts.tolist() == [0, 5]
    assert timeline.pts.dtype == timeline.key_pts.dtype == np.int64


def test_a_packet_without_pts_is_placed_by_its_dts():
    packets = [FakePacket(pts=None, dts=i, is_keyframe=i == 0) for i in range(4)]
    assert scan(packets).pts.tolist() == [0, 1, 2, 3]


def test_frames_an_edit_list_hides_are_counted_but_not_listed():
    packets = ten_frames()
    for hidden in packets[:2]:  # frames 0 and 2
        hidden.is_discard = True
    timeline = scan(packets, frames=10, duration=10)  # 10 listed, 10 in the file: not truncated
    assert timeline.pts.tolist() == [1, 3, 4, 5, 6, 7, 8, 9]
    assert timeline.key_pts.tolist() == [5]


def test_an_empty_packet_with_a_dts_is_a_dropped_frame_and_counts():
    packets = [*ten_frames()[:9], FakePacket(pts=None, dts=9, size=0)]  # AVI's dropped frame 9
    assert scan(packets, frames=10, duration=10).pts.tolist() == list(range(9))


def test_the_flush_packet_does_not_count_as_a_frame():
    packets = [*ten_frames()[:9], FakePacket(pts=None, dts=None, size=0)]
    with pytest.raises(ValueError, match=r"the container lists 10 video frames but only 9 are in the file: truncated"):
        scan(packets, frames=10)


def test_fewer_packets_than_the_container_lists_is_truncation():
    with pytest.raises(ValueError, match=r"lists 12 video frames but only 10 are in the file"):
        scan(ten_frames(), frames=12)


def test_a_corrupt_packet_is_truncation():
    packets = ten_frames()
    packets[3].is_corrupt, packets[3].pos = True, 500
    with pytest.raises(ValueError, match=r"the video packet at byte 500 is cut short: the file is truncated"):
        scan(packets)


def test_a_packet_ending_past_the_end_of_the_file_is_truncation():
    packets = ten_frames(size=100)
    packets[-1].pos = 901  # 901 + 100 > 1000
    with pytest.raises(ValueError, match=r"the video packet at byte 901 is cut short"):
        scan(packets, file_size=1000)


def test_a_packet_ending_exactly_at_the_end_of_the_file_is_whole():
    packets = ten_frames(size=100)
    packets[-1].pos = 900  # 900 + 100 == 1000
    assert len(scan(packets, file_size=1000).pts) == 10


def test_a_packet_with_no_or_a_negative_position_is_not_checked_against_the_size():
    packets = ten_frames(size=100)
    packets[0].pos, packets[1].pos = None, -1
    assert len(scan(packets, file_size=10).pts) == 10


def test_a_packet_without_any_timestamp_is_refused():
    packets = ten_frames()
    packets[4].pts = packets[4].dts = None
    with pytest.raises(ValueError, match=r"a video packet has no timestamp"):
        scan(packets)


@pytest.mark.parametrize(
    "packets",
    [[], [FakePacket(pts=None, dts=None, size=0)], [FakePacket(pts=0, is_discard=True)]],
    ids=["nothing", "only the flush packet", "only hidden frames"],
)
def test_a_stream_without_a_frame_to_show_has_no_video_packets(packets):
    with pytest.raises(ValueError, match=r"no video packets"):
        scan(packets)


def test_packets_within_two_frames_and_a_tick_of_the_declared_duration_are_whole():
    # 10 frames of 1 tick (0.1 s) cover 1.0 s; the slack is 2 frames (0.2 s) plus a tick (0.1 s): 1.2 s passes
    assert len(scan(ten_frames(), duration=12).pts) == 10


def test_packets_covering_less_than_the_declared_duration_are_truncation():
    # 1.0 s covered < 1.5 s declared - 0.3 s slack
    with pytest.raises(
        ValueError, match=r"the video packets cover 1\.000 s of the declared 1\.500 s: the file is trunc"
    ):
        scan(ten_frames(), duration=15)


def test_the_coverage_runs_to_the_end_of_the_longest_frame():
    packets = ten_frames()
    packets[-1].duration = 6  # frame 9 lasts 0.6 s: covered 0..15 ticks, 1.5 s
    assert len(scan(packets, duration=15).pts) == 10


def test_a_matroska_duration_tag_is_the_declared_duration():
    # "00:00:01.500000000" is 1.5 s: more than the 1.0 s covered plus 0.3 s slack
    with pytest.raises(ValueError, match=r"cover 1\.000 s of the declared 1\.500 s"):
        scan(ten_frames(), metadata={"DURATION": "00:00:01.500000000"})
    assert len(scan(ten_frames(), metadata={"DURATION": " 00:00:01.100000000 "}).pts) == 10


def test_hours_and_minutes_of_a_duration_tag_count():
    # 1 h 2 min 3.5 s = 3723.5 s
    with pytest.raises(ValueError, match=r"of the declared 3723\.500 s"):
        scan(ten_frames(), metadata={"DURATION": "1:02:03.5"})


def test_an_unreadable_duration_tag_or_no_rate_skips_the_coverage_check():
    assert len(scan(ten_frames(), metadata={"DURATION": "a long time"}).pts) == 10
    assert len(scan(ten_frames(), duration=100, average_rate=None, guessed_rate=None).pts) == 10


def test_the_guessed_rate_sets_the_slack_when_there_is_no_average_rate():
    # 1.0 s covered of 1.4 s declared: short by more than the 0.3 s slack at 10 fps, within the 0.5 s at 5 fps
    with pytest.raises(ValueError, match=r"cover 1\.000 s of the declared 1\.400 s"):
        scan(ten_frames(), duration=14, average_rate=None, guessed_rate=Fraction(10))
    assert len(scan(ten_frames(), duration=14, average_rate=None, guessed_rate=Fraction(5)).pts) == 10


# --------------------------------------------------------------------------------------------
# Real files


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """12 frames, 64x32, 10 fps; key frames 0, 4, 8."""
    folder = tmp_path_factory.mktemp("decode")
    return write_indexed_source(folder / "src.mp4", N_FRAMES, fps=FPS, width=64, height=32, options=FIXED_GOP)


def seconds(ticks: np.ndarray, stream) -> list[Fraction]:
    return [t * stream.time_base for t in ticks.tolist()]


def shown(frame: av.VideoFrame) -> int:
    return read_index(frame.to_ndarray(format="rgb24"))


@pytest.mark.slow
def test_the_timeline_of_a_real_file_has_every_frame_at_i_over_fps(source):
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        timeline = scan_timeline(container, stream, os.path.getsize(source))
        assert seconds(timeline.pts, stream) == [Fraction(i, FPS) for i in range(N_FRAMES)]
        assert seconds(timeline.key_pts, stream) == [Fraction(i, FPS) for i in range(0, N_FRAMES, GOP)]


@pytest.mark.slow
def test_a_file_smaller_than_its_packets_say_is_truncated(source):
    with av.open(str(source)) as container:
        with pytest.raises(ValueError, match=r"is cut short: the file is truncated"):
            scan_timeline(container, container.streams.video[0], file_size=200)


@pytest.mark.slow
def test_checked_timeline_of_a_plain_file_is_its_demuxed_timeline(source):
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        timeline = checked_timeline(source, container, stream)
        assert seconds(timeline.pts, stream) == [Fraction(i, FPS) for i in range(N_FRAMES)]
        assert seconds(timeline.key_pts, stream) == [Fraction(0), Fraction(4, 10), Fraction(8, 10)]


@pytest.mark.slow
def test_an_edit_list_starting_on_a_key_frame_is_the_frames_that_play(source, tmp_path):
    path = shifted_copy(source, tmp_path / "from_key4.mp4", start=4)  # frames 4..11 play, 0..3 hidden
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        with pytest.raises(ValueError, match=r"lists 12 video frames but only 8"):  # the demuxer drops 0..3
            scan_timeline(container, stream, path.stat().st_size)
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        timeline = checked_timeline(path, container, stream)
        # source frames 4..11 at 0, 0.1, ... 0.7 s; source key frames 4 and 8 at 0 and 0.4 s
        assert seconds(timeline.pts, stream) == [Fraction(i, FPS) for i in range(8)]
        assert seconds(timeline.key_pts, stream) == [Fraction(0), Fraction(4, 10)]
        decoded = [shown(frame) for _, frame in decode_targets(container, stream, timeline, range(8))]
    assert decoded == list(range(4, 12))


@pytest.mark.slow
def test_an_edit_list_file_whose_data_was_cut_is_still_truncated(source, tmp_path):
    whole = shifted_copy(source, tmp_path / "whole.mp4", start=4, faststart=True)  # index first: survives the cut
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(whole.read_bytes()[: int(whole.stat().st_size * 0.6)])
    with av.open(str(cut)) as container:
        with pytest.raises(ValueError, match=r"truncated"):
            checked_timeline(cut, container, container.streams.video[0])


@pytest.mark.slow
def test_a_truncated_file_that_is_not_mp4_is_not_retried(source, tmp_path):
    path = tmp_path / "src.mkv"
    with av.open(str(source)) as inp, av.open(str(path), "w") as out:
        copy = out.add_stream_from_template(inp.streams.video[0])
        for p in inp.demux(inp.streams.video[0]):
            if p.size:
                p.stream = copy
                out.mux(p)
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        # the real file passes; the same container said to be 100 bytes long is cut short, and no mov retry
        assert len(checked_timeline(path, container, stream).pts) == N_FRAMES
    small = tmp_path / "small.mkv"
    small.write_bytes(b"\0" * 100)
    with av.open(str(path)) as container:
        with pytest.raises(ValueError, match=r"is cut short"):
            checked_timeline(small, container, container.streams.video[0])


@pytest.mark.slow
@pytest.mark.parametrize(
    "indices",
    [[0], [3], [0, 3, 5, 9], [1, 2, 3], [4, 8, 11], list(range(N_FRAMES))],
    ids=["first", "a B frame", "across GOPs", "within a GOP", "key frames and last", "all"],
)
def test_decode_targets_yields_each_index_with_the_frame_that_shows_it(source, indices):
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        timeline = scan_timeline(container, stream, os.path.getsize(source))
        got = [(index, shown(frame)) for index, frame in decode_targets(container, stream, timeline, indices)]
    assert got == [(i, i) for i in indices]


@pytest.mark.slow
def test_an_index_past_the_end_yields_the_last_frame(source):
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        timeline = scan_timeline(container, stream, os.path.getsize(source))
        got = [(index, shown(frame)) for index, frame in decode_targets(container, stream, timeline, [10, 15])]
    assert got == [(10, 10), (15, N_FRAMES - 1)]


@pytest.mark.slow
def test_a_target_no_frame_has_cannot_be_decoded(source):
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        late = 10**6  # far past the last frame's pts
        timeline = Timeline(pts=np.array([late], dtype=np.int64), key_pts=np.array([0], dtype=np.int64))
        with pytest.raises(ValueError, match=rf"frame 0 \(pts {late}\) could not be decoded"):
            list(decode_targets(container, stream, timeline, [0]))


@pytest.mark.slow
def test_first_frame_is_frame_0_even_after_reading_further(source):
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        for _ in zip(range(9), container.decode(stream), strict=False):  # the demuxer is now at frame 9
            pass
        assert shown(first_frame(container, stream)) == 0


def test_first_frame_of_a_stream_that_decodes_nothing_is_refused():
    nothing = SimpleNamespace(
        format=SimpleNamespace(flags=0, name="mov,mp4,m4a,3gp,3g2,mj2"),
        seek=lambda *args, **kwargs: None,
        decode=lambda stream: iter(()),
    )
    with pytest.raises(ValueError, match=r"no frame could be decoded"):
        first_frame(nothing, stream=None)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("matrix", "expected"),
    [
        (None, None),  # as PyAV writes it: the identity
        ((1 << 16, 0, 0, 0, 1 << 16, 0, 0, 0, 1 << 30), None),  # the identity, written out
        (ROTATE_90, ROTATE_90),
        ((-(1 << 16), 0, 0, 0, -(1 << 16), 0, 0, 0, 1 << 30), (-(1 << 16), 0, 0, 0, -(1 << 16), 0, 0, 0, 1 << 30)),
    ],
    ids=["unset", "identity", "rotate 90", "rotate 180"],
)
def test_display_matrix_is_the_tkhd_matrix_unless_it_is_the_identity(tmp_path, matrix, expected):
    path = write_indexed_source(tmp_path / "m.mp4", 2, width=64, height=32)
    if matrix is not None:
        _set_tkhd_matrix(path, matrix)
    with av.open(str(path)) as container:
        assert display_matrix(next(container.decode(video=0))) == expected


def test_a_frame_made_in_memory_has_no_display_matrix():
    frame = av.VideoFrame.from_ndarray(np.zeros((4, 4, 3), np.uint8), format="rgb24")
    assert display_matrix(frame) is None
