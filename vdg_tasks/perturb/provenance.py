"""Where a perturbed video's pixels came from: the builders' versions and the per-sample record.

Every cached video's sidecar records ``built_by`` (the versions of vdg, PyAV, libavcodec and
libx264 that wrote it); every logged sample and every exported row carries ``provenance``: the
source's digest, the index of its video stream that was shown (``source_stream``: decord's choice when a file
has several), the condition and its parameters as applied, the transform version, ``built_by``
(None for ``orig``: the source itself is shown), for a condition declared through ``vdg_tasks.extend`` the module
and its source digest (``declared``) and, when evaluated from an export, the export's name and revision.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from vdg_tasks.vocabulary.conditions import Condition
from vdg_tasks.vocabulary.untrusted import redact, redact_value

__all__ = ["builder_versions", "declared_origin", "provenance", "x264_version"]

_X264_BANNER = re.compile(rb"x264 - core (\d+)(?: r(\d+))?")


@functools.lru_cache(maxsize=1)
def x264_version() -> str:
    """The libx264 build PyAV links, read from the banner x264 writes into its first packet
    (``"core 165 r3222"``); ``"unavailable"`` when libx264 cannot encode here."""
    # PyAV (~0.26 s) only to read the x264 banner, not on import of vdg_tasks.lmms.hooks
    import av

    try:
        codec = av.CodecContext.create("libx264", "w")
        codec.width, codec.height, codec.pix_fmt = 16, 16, "yuv420p"
        codec.time_base = Fraction(1, 25)
        frame = av.VideoFrame.from_ndarray(np.zeros((24, 16), dtype=np.uint8), format="yuv420p")
        data = b"".join(bytes(p) for p in [*codec.encode(frame), *codec.encode(None)])
    except Exception:  # no libx264 in this FFmpeg build: every vdg transform would fail anyway
        return "unavailable"
    match = _X264_BANNER.search(data)
    if not match:
        return "unknown"
    core, rev = match.group(1).decode(), match.group(2)
    return f"core {core}" + (f" r{rev.decode()}" if rev else "")


@functools.lru_cache(maxsize=1)
def builder_versions() -> dict[str, str]:
    """The versions of what builds vdg's videos: vdg, PyAV, libavcodec, libx264."""
    # PyAV (~0.26 s) only when versions are recorded, not on import of vdg_tasks.lmms.hooks
    import av

    try:
        vdg = importlib.metadata.version("vdg")
    except importlib.metadata.PackageNotFoundError:  # a source checkout that was never installed
        vdg = "unknown"
    avcodec = ".".join(str(p) for p in av.library_versions.get("libavcodec", ()))
    return {"vdg": vdg, "pyav": av.__version__, "libavcodec": avcodec, "libx264": x264_version()}


def declared_origin(condition: Condition) -> dict[str, str] | None:
    """Where a condition declared through ``vdg_tasks.extend`` comes from: its module and that source's digest (None
    for vdg's core conditions)."""
    if not condition.declared_in:
        return None
    return {"module": condition.declared_in, "source_digest": condition.source_digest}


def provenance(
    source_digest: str,
    condition: str,
    params: Mapping[str, Any],
    transform_version: int,
    built_by: Mapping[str, str] | None,
    export: Mapping[str, str] | None = None,
    source_stream: int | None = None,
    declared: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One sample's provenance record (the module docstring); JSON-serialisable. What came from outside (the
    condition's params, a declared module, an export's card) is redacted (``vdg_tasks.vocabulary.untrusted``)."""
    record: dict[str, Any] = {
        "source_digest": source_digest,
        "source_stream": source_stream,
        "condition": redact(condition),
        "params": redact_value(dict(params)),
        "transform_version": transform_version,
        "built_by": dict(built_by) if built_by is not None else None,
    }
    if declared is not None:
        record["declared"] = redact_value(dict(declared))
    if export is not None:
        record["export"] = redact_value(dict(export))
    return record
