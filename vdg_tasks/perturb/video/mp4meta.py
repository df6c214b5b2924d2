"""Set the display matrix of an mp4's video track in place (FFmpeg's muxer takes it only from stream side data,
which PyAV cannot set)."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator, Sequence

__all__ = ["set_display_matrix"]

_HEADER = struct.Struct(">I4s")


def _boxes(data: bytes, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """``(type, payload start, box end)`` of each box in ``data[start:end]``."""
    pos = start
    while pos + 8 <= end:
        size, kind = _HEADER.unpack_from(data, pos)
        header = 8
        if size == 1:
            (size,) = struct.unpack_from(">Q", data, pos + 8)
            header = 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            raise ValueError(f"malformed mp4 box {kind!r} at offset {pos}")
        yield kind, pos + header, pos + size
        pos += size


def _top_level_box(f, kind: bytes) -> tuple[int, bytes]:
    """File offset and bytes of the first top-level box of ``kind`` (seeks over the others: mdat is never read)."""
    size_of_file = os.fstat(f.fileno()).st_size
    pos = 0
    while pos + 8 <= size_of_file:
        f.seek(pos)
        head = f.read(16)
        size, found = _HEADER.unpack_from(head, 0)
        if size == 1:
            (size,) = struct.unpack_from(">Q", head, 8)
        elif size == 0:
            size = size_of_file - pos
        if size < 8:
            raise ValueError(f"malformed mp4 box {found!r} at offset {pos}")
        if found == kind:
            f.seek(pos)
            return pos, f.read(size)
        pos += size
    raise ValueError(f"no {kind.decode()} box")


def _video_tkhd_matrix_offset(moov: bytes) -> int:
    """Offset, within ``moov``, of the 36-byte matrix in the ``tkhd`` of the first video track."""
    header = 16 if _HEADER.unpack_from(moov, 0)[0] == 1 else 8
    for kind, start, end in _boxes(moov, header, len(moov)):
        if kind != b"trak":
            continue
        children = {k: (s, e) for k, s, e in _boxes(moov, start, end)}
        if b"tkhd" not in children or b"mdia" not in children:
            continue
        mdia = {k: s for k, s, _ in _boxes(moov, *children[b"mdia"])}
        if b"hdlr" not in mdia or moov[mdia[b"hdlr"] + 8 : mdia[b"hdlr"] + 12] != b"vide":
            continue
        tkhd = children[b"tkhd"][0]
        version = moov[tkhd]
        # version/flags, creation and modification times, track id, reserved, duration, 8 reserved,
        # layer, alternate group, volume, 2 reserved; then the matrix.
        return tkhd + 4 + (8 + 8 + 4 + 4 + 8 if version == 1 else 4 + 4 + 4 + 4 + 4) + 8 + 8
    raise ValueError("no video track")


def set_display_matrix(path: str | os.PathLike[str], matrix: Sequence[int]) -> None:
    """Write ``matrix`` (9 ints, FFmpeg's display-matrix layout) into the ``tkhd`` of the mp4's video track.

    The file is patched in place (36 bytes); nothing else moves.

    Raises:
        ValueError: ``matrix`` is not 9 values, or the file has no ``moov`` with a video track.
    """
    if len(matrix) != 9:
        raise ValueError(f"a display matrix has 9 values, got {len(matrix)}")
    with open(path, "r+b") as f:
        moov_pos, moov = _top_level_box(f, b"moov")
        f.seek(moov_pos + _video_tkhd_matrix_offset(moov))
        f.write(struct.pack(">9i", *matrix))
