"""MPEG-TS sources: a non-zero start and a 33-bit timestamp wrap are valid, and every wanted frame decodes.

The mpegts demuxer seeks by decode timestamps, so seeking to a key frame's pts lands on the next key
frame; :func:`~vdg_tasks.perturb.video.decode.decode_targets` must then fall back to the start of the stream.
"""

from __future__ import annotations

import os
from pathlib import Path

import av
import numpy as np
import pytest

from tests.helpers.mpegts import FPS, HEIGHT, LUMA0, LUMA_STEP, N_FRAMES, PERIOD, STARTS, WIDTH, WRAP, write_ts
from tests.helpers.videos import write_indexed_source
from vdg_tasks.perturb.video import VideoDecodeError, probe, validate
from vdg_tasks.perturb.video.decode import decode_targets, first_frame, scan_timeline

CODECS = ("libx264", "mpeg2video")


def painted_index(frame: av.VideoFrame) -> int:
    """The frame index a decoded frame shows (grey -> yuv420p -> grey moves the luma by at most 1 < LUMA_STEP / 2)."""
    luma = float(np.median(frame.to_ndarray(format="gray")))
    return round((luma - LUMA0) / LUMA_STEP)


def raw_video_pts(path: Path) -> list[int]:
    """The 33-bit PTS of every video PES header, read from the transport packets themselves (not FFmpeg)."""
    data = path.read_bytes()
    found = []
    for at in range(0, len(data) - 187, 188):
        packet = data[at : at + 188]
        assert packet[0] == 0x47, f"lost TS sync at byte {at}"
        if not packet[1] & 0x40:  # payload_unit_start_indicator: a PES header starts here
            continue
        body = 4 + (1 + packet[4] if packet[3] & 0x20 else 0)  # skip the adaptation field
        pes = packet[body:]
        if pes[:3] != b"\x00\x00\x01" or not 0xE0 <= pes[3] <= 0xEF or not pes[7] & 0x80:
            continue
        p = pes[9:14]
        found.append(((p[0] >> 1) & 0x07) << 30 | p[1] << 22 | (p[2] >> 1) << 15 | p[3] << 7 | p[4] >> 1)
    return found


@pytest.fixture(scope="module")
def ts_sources(tmp_path_factory) -> dict[tuple[str, str], Path]:
    folder = tmp_path_factory.mktemp("mpegts")
    return {
        (name, codec): write_ts(folder / f"{name}_{codec}.ts", start, codec)
        for name, start in STARTS.items()
        for codec in CODECS
    }


@pytest.fixture(params=[(name, codec) for name in STARTS for codec in CODECS], ids=lambda p: f"{p[0]}-{p[1]}")
def ts_source(request, ts_sources) -> Path:
    return ts_sources[request.param]


def test_generated_files_have_the_intended_timestamps(ts_sources):
    """The fixtures are what the tests claim: PTS from 10 s, and PTS that really wrap past 2**33."""
    for codec in CODECS:
        start = raw_video_pts(ts_sources["start_10s", codec])
        assert min(start) == STARTS["start_10s"] and max(start) == STARTS["start_10s"] + (N_FRAMES - 1) * PERIOD
        wrapped = raw_video_pts(ts_sources["wrap", codec])
        assert min(v for v in wrapped if v >= WRAP // 2) == STARTS["wrap"]
        after_wrap = sorted(v for v in wrapped if v < WRAP // 2)  # written as (start + i * PERIOD) mod 2**33
        assert after_wrap and after_wrap[-1] == (STARTS["wrap"] + (N_FRAMES - 1) * PERIOD) % WRAP


def test_ts_passes_validate_for_orig_and_black_and_is_refused_where_decord_misreads_it(ts_source):
    """Every frame of the transport stream decodes, so the conditions that show it as it is (orig) or none of its
    pictures (black) take it; decord 0.6 presents frame i + 12 for frame i on random access to these streams, so the
    conditions built from PyAV's decoded pictures refuse it (``agreement.check_decoders_agree``)."""
    info = validate(ts_source, decoded=False)
    assert info == probe(ts_source)
    assert (info.width, info.height, info.n_frames, info.fps) == (WIDTH, HEIGHT, N_FRAMES, FPS)
    with pytest.raises(VideoDecodeError, match=r"the source's decoders disagree"):
        validate(ts_source)


@pytest.mark.parametrize(
    "indices",
    [[0], [0, 1, 11], [12], [11, 12, 13], [5, 30, 59], [59], list(range(N_FRAMES))],
    ids=["first", "first_gop", "second_key", "across_key", "spread", "last", "all"],
)
def test_decode_targets_returns_the_painted_frames(ts_source, indices):
    with av.open(str(ts_source)) as container:
        stream = container.streams.video[0]
        timeline = scan_timeline(container, stream, os.path.getsize(ts_source))
        assert len(timeline.pts) == N_FRAMES
        assert np.all(np.diff(timeline.pts) == PERIOD)  # FFmpeg unwraps the 33-bit wrap: one monotonic timeline
        got = [(index, painted_index(frame)) for index, frame in decode_targets(container, stream, timeline, indices)]
    assert got == [(i, i) for i in indices]  # each wanted frame, in order, exactly once, showing its own index


def test_first_frame_of_a_wrapped_ts_is_frame_0(ts_sources):
    """A timestamp seek to 0 lands after the wrap, mid-file; the start is byte 0."""
    for codec in CODECS:
        with av.open(str(ts_sources["wrap", codec])) as container:
            assert painted_index(first_frame(container, container.streams.video[0])) == 0


class _RecordingContainer:
    """Delegates to a container, recording each ``seek``."""

    def __init__(self, container: av.container.InputContainer) -> None:
        self._container = container
        self.seeks: list[tuple[int, dict]] = []

    def seek(self, offset: int, **kwargs) -> None:
        self.seeks.append((offset, kwargs))
        self._container.seek(offset, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._container, name)


def test_mp4_keeps_the_fast_path(tmp_path):
    """Where seeking works, each target needs one seek, to its own key frame, and no rewind."""
    path = write_indexed_source(tmp_path / "gop12.mp4", 60, gop=12)
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        timeline = scan_timeline(container, stream, os.path.getsize(path))
        recorder = _RecordingContainer(container)
        indices = [3, 30, 59]
        assert [i for i, _ in decode_targets(recorder, stream, timeline, indices)] == indices  # type: ignore[arg-type]
    gops = np.searchsorted(timeline.key_pts, timeline.pts[indices], side="right") - 1
    assert [offset for offset, _ in recorder.seeks] == timeline.key_pts[gops].tolist()
    assert not any(kwargs.get("unsupported_byte_offset") for _, kwargs in recorder.seeks)
