"""vdg_tasks.perturb.video.mp4meta: set_display_matrix patches the video track's tkhd matrix in place.

Most files are built box by box here (ISO/IEC 14496-12 layouts), so the matrix's offset is known without the
module: 40 bytes into a version-0 ``tkhd`` payload, 52 into a version-1 one. One PyAV-written mp4 checks that
FFmpeg reads the patched matrix back as a rotation.
"""

from __future__ import annotations

import struct
from pathlib import Path

import av
import pytest

from tests.helpers.videos import write_indexed_source
from vdg_tasks.perturb.video.mp4meta import set_display_matrix

#: FFmpeg's display matrix for a 90 degree rotation, 16.16 fixed point with w in 2.30.
ROTATE_90 = (0, 1 << 16, 0, -(1 << 16), 0, 0, 0, 0, 1 << 30)
IDENTITY = (1 << 16, 0, 0, 0, 1 << 16, 0, 0, 0, 1 << 30)
#: A recognisable matrix the tests write before patching (any 9 ints).
MARKER = tuple(range(101, 110))


def box(kind: bytes, payload: bytes, *, largesize: bool = False) -> bytes:
    """An mp4 box: 32-bit size and type, or size 1 and a 64-bit size after the type."""
    if largesize:
        return struct.pack(">I4sQ", 1, kind, 16 + len(payload)) + payload
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def tkhd(version: int, matrix: tuple[int, ...] = MARKER) -> bytes:
    """A tkhd: version/flags; times, track id, reserved, duration (32 or 64-bit); 8 reserved; layer, alternate
    group, volume, 2 reserved; the matrix; width and height."""
    if version == 0:
        times = struct.pack(">IIIII", 1, 2, 1, 0, 10)  # 20 bytes
    else:
        times = struct.pack(">QQIIQ", 1, 2, 1, 0, 10)  # 32 bytes
    head = bytes([version, 0, 0, 3]) + times + bytes(8) + struct.pack(">hhhH", 0, 0, 0, 0)
    return box(b"tkhd", head + struct.pack(">9i", *matrix) + struct.pack(">II", 64 << 16, 32 << 16))


def hdlr(handler: bytes) -> bytes:
    """A hdlr: version/flags, pre_defined, handler type, 3 reserved, an empty name."""
    return box(b"hdlr", bytes(4) + bytes(4) + handler + bytes(12) + b"\0")


def trak(handler: bytes, version: int = 0, matrix: tuple[int, ...] = MARKER) -> bytes:
    return box(b"trak", tkhd(version, matrix) + box(b"mdia", box(b"mdhd", bytes(24)) + hdlr(handler)))


def mp4(*top_level: bytes) -> bytes:
    return box(b"ftyp", b"isom" + bytes(4) + b"isommp41") + b"".join(top_level)


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def matrix_at(data: bytes, offset: int) -> tuple[int, ...]:
    return struct.unpack_from(">9i", data, offset)


def tkhd_matrix_offsets(data: bytes) -> list[int]:
    """File offsets of the matrix of every tkhd in ``data`` (found by its type, then the version's layout)."""
    offsets, at = [], data.find(b"tkhd")
    while at >= 0:
        payload = at + 4
        offsets.append(payload + (40 if data[payload] == 0 else 52))
        at = data.find(b"tkhd", at + 1)
    return offsets


# --------------------------------------------------------------------------------------------
# Where the matrix is written


@pytest.mark.parametrize("version", [0, 1])
def test_the_matrix_is_written_into_the_video_tkhd_and_nothing_else_changes(tmp_path, version):
    before = mp4(box(b"moov", box(b"mvhd", bytes(100)) + trak(b"vide", version)), box(b"mdat", b"\x00" * 64))
    path = write(tmp_path / "v.mp4", before)
    set_display_matrix(path, ROTATE_90)
    after = path.read_bytes()
    (offset,) = tkhd_matrix_offsets(before)
    assert matrix_at(before, offset) == MARKER  # the test's own layout found the marker it wrote
    assert matrix_at(after, offset) == ROTATE_90
    assert len(after) == len(before)
    assert after[:offset] == before[:offset] and after[offset + 36 :] == before[offset + 36 :]


def test_only_the_first_video_track_is_patched(tmp_path):
    before = mp4(box(b"moov", box(b"mvhd", bytes(100)) + trak(b"soun") + trak(b"vide") + trak(b"vide")))
    path = write(tmp_path / "av.mp4", before)
    set_display_matrix(path, ROTATE_90)
    sound, first_video, second_video = tkhd_matrix_offsets(before)
    after = path.read_bytes()
    assert matrix_at(after, sound) == MARKER
    assert matrix_at(after, first_video) == ROTATE_90
    assert matrix_at(after, second_video) == MARKER


def test_a_track_without_mdia_is_skipped(tmp_path):
    incomplete = box(b"trak", tkhd(0))  # no mdia, so no handler: not taken for the video track
    before = mp4(box(b"moov", incomplete + trak(b"vide")))
    path = write(tmp_path / "skip.mp4", before)
    set_display_matrix(path, ROTATE_90)
    skipped, video = tkhd_matrix_offsets(before)
    assert matrix_at(path.read_bytes(), skipped) == MARKER
    assert matrix_at(path.read_bytes(), video) == ROTATE_90


def test_the_moov_is_found_after_a_mdat_with_a_64_bit_size(tmp_path):
    before = mp4(box(b"mdat", b"\x01" * 40, largesize=True), box(b"free", b""), box(b"moov", trak(b"vide")))
    path = write(tmp_path / "large_mdat.mp4", before)
    set_display_matrix(path, IDENTITY)
    (offset,) = tkhd_matrix_offsets(before)
    assert matrix_at(path.read_bytes(), offset) == IDENTITY


def test_a_moov_with_a_64_bit_size_is_read_past_its_16_byte_header(tmp_path):
    before = mp4(box(b"moov", trak(b"vide", version=1), largesize=True))
    path = write(tmp_path / "large_moov.mp4", before)
    set_display_matrix(path, ROTATE_90)
    (offset,) = tkhd_matrix_offsets(before)
    assert matrix_at(path.read_bytes(), offset) == ROTATE_90


def test_a_last_moov_of_size_0_extends_to_the_end_of_the_file(tmp_path):
    moov = box(b"moov", trak(b"vide"))
    before = mp4(box(b"mdat", b"\x02" * 16)) + struct.pack(">I", 0) + moov[4:]  # size 0: to the end of the file
    path = write(tmp_path / "moov_to_end.mp4", before)
    set_display_matrix(path, ROTATE_90)
    (offset,) = tkhd_matrix_offsets(before)
    assert matrix_at(path.read_bytes(), offset) == ROTATE_90


@pytest.mark.slow
def test_ffmpeg_reads_the_written_matrix_as_a_rotation(tmp_path):
    path = write_indexed_source(tmp_path / "pyav.mp4", 4, width=64, height=32)
    size = path.stat().st_size
    set_display_matrix(path, ROTATE_90)
    assert path.stat().st_size == size
    with av.open(str(path)) as container:
        frame = next(container.decode(video=0))
    # av_display_rotation_get: -atan2(m[1], m[0]) = -atan2(1, 0) = -90 degrees
    assert frame.rotation == -90


# --------------------------------------------------------------------------------------------
# What is refused


@pytest.mark.parametrize("matrix", [(), ROTATE_90[:8], (*ROTATE_90, 0)])
def test_a_matrix_of_other_than_9_values_is_refused_before_the_file_is_opened(tmp_path, matrix):
    with pytest.raises(ValueError, match=rf"a display matrix has 9 values, got {len(matrix)}"):
        set_display_matrix(tmp_path / "never_opened.mp4", matrix)


def test_a_file_without_moov_is_refused(tmp_path):
    path = write(tmp_path / "no_moov.mp4", mp4(box(b"mdat", b"\x00" * 32)))
    with pytest.raises(ValueError, match=r"no moov box"):
        set_display_matrix(path, ROTATE_90)


def test_a_moov_without_a_video_track_is_refused_and_left_alone(tmp_path):
    before = mp4(box(b"moov", box(b"mvhd", bytes(100)) + trak(b"soun")))
    path = write(tmp_path / "audio_only.mp4", before)
    with pytest.raises(ValueError, match=r"no video track"):
        set_display_matrix(path, ROTATE_90)
    assert path.read_bytes() == before


def test_a_top_level_box_shorter_than_its_header_is_malformed(tmp_path):
    ftyp = mp4()
    path = write(tmp_path / "short_box.mp4", ftyp + struct.pack(">I4s", 4, b"free") + box(b"moov", trak(b"vide")))
    with pytest.raises(ValueError, match=rf"malformed mp4 box b'free' at offset {len(ftyp)}"):
        set_display_matrix(path, ROTATE_90)


def test_a_track_overrunning_its_moov_is_malformed(tmp_path):
    good = trak(b"vide")
    overrun = struct.pack(">I", len(good) + 100) + good[4:]  # claims 100 bytes more than the moov holds
    path = write(tmp_path / "overrun.mp4", mp4(box(b"moov", overrun)))
    with pytest.raises(ValueError, match=r"malformed mp4 box b'trak' at offset 8"):
        set_display_matrix(path, ROTATE_90)
