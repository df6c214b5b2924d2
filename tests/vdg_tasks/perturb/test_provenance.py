"""vdg_tasks.perturb.provenance: the per-sample provenance record and the versions of what builds the videos.

``provenance`` (the record's exact fields, copies of its mappings, the optional export), ``x264_version`` (the
banner parsed from a stand-in encoder's packets, no libx264, no banner, and this machine's real libx264) and
``builder_versions`` (each version against where it comes from, an uninstalled checkout, the per-process cache).
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from types import MappingProxyType, SimpleNamespace

import av
import pytest

import vdg_tasks.perturb.provenance as provenance_module
from vdg_tasks.perturb.provenance import builder_versions, provenance, x264_version

#: The real functions (a test may replace the module's name with a stand-in).
CACHED = (x264_version, builder_versions)


@pytest.fixture(autouse=True)
def _fresh_caches():
    for fn in CACHED:
        fn.cache_clear()
    yield
    for fn in CACHED:
        fn.cache_clear()


# -- provenance ---------------------------------------------------------------------------------------------


def test_the_record_has_exactly_the_documented_fields():
    built_by = {"vdg": "1.0", "pyav": "15", "libavcodec": "61.3.100", "libx264": "core 164"}
    record = provenance("sha256:ab", "shuffled", {"k": 32, "order": "shuffled"}, 4, built_by, source_stream=1)
    assert record == {
        "source_digest": "sha256:ab",
        "source_stream": 1,
        "condition": "shuffled",
        "params": {"k": 32, "order": "shuffled"},
        "transform_version": 4,
        "built_by": built_by,
    }


def test_the_source_itself_has_no_builder_and_an_unknown_stream_by_default():
    record = provenance("d", "orig", {}, 4, None)
    assert record["built_by"] is None and record["source_stream"] is None and "export" not in record


def test_an_exported_sample_names_its_export():
    record = provenance("d", "black", {}, 4, None, export={"name": "synth-x", "revision": "r1"})
    assert record["export"] == {"name": "synth-x", "revision": "r1"}


def test_the_record_copies_its_mappings_into_plain_json_serialisable_dicts():
    params = MappingProxyType({"crf": 28, "preset": "medium"})  # a Condition's params are a mappingproxy
    built_by = {"vdg": "1.0"}
    export = {"name": "e", "revision": "r"}
    record = provenance("d", "crf28", params, 4, built_by, export=export)
    built_by["vdg"], export["name"] = "changed", "changed"  # later changes of the caller's mappings ...
    assert record["built_by"] == {"vdg": "1.0"} and record["export"] == {"name": "e", "revision": "r"}  # ... stay out
    assert all(type(record[key]) is dict for key in ("params", "built_by", "export"))
    assert json.loads(json.dumps(record)) == record


# -- x264_version -------------------------------------------------------------------------------------------


def fake_codec_module(payload: bytes | None):
    """A stand-in for PyAV whose libx264 encoder emits ``payload`` as its one packet (None: no libx264)."""

    class Codec:
        def encode(self, frame):
            return [payload] if frame is not None else []

    def create(name, mode):
        if payload is None:
            raise av.error.FFmpegError(0, "Unknown encoder 'libx264'")
        assert (name, mode) == ("libx264", "w")
        return Codec()

    return SimpleNamespace(create=create)


@pytest.mark.parametrize(
    ("payload", "version"),
    [
        (b"\x00\x00\x01\x06x264 - core 164 r3095 baee400 - H.264/MPEG-4 AVC codec", "core 164 r3095"),
        (b"x264 - core 157 - H.264/MPEG-4 AVC codec - Copyleft", "core 157"),  # a build without a revision
        (b"\x00\x00\x01\x65 no banner in this stream", "unknown"),
    ],
)
def test_the_x264_version_is_read_from_the_banner_in_the_first_packet(monkeypatch, payload, version):
    monkeypatch.setattr(av, "CodecContext", fake_codec_module(payload))
    assert x264_version() == version


def test_without_libx264_the_x264_version_is_unavailable(monkeypatch):
    monkeypatch.setattr(av, "CodecContext", fake_codec_module(None))
    assert x264_version() == "unavailable"


@pytest.mark.slow
def test_this_machines_libx264_reports_its_core_and_revision():
    assert re.fullmatch(r"core \d+( r\d+)?", x264_version())


# -- builder_versions ---------------------------------------------------------------------------------------


def test_builder_versions_name_vdg_pyav_libavcodec_and_libx264(monkeypatch):
    monkeypatch.setattr(provenance_module, "x264_version", lambda: "core 1 r2")
    versions = builder_versions()
    assert versions == {
        "vdg": importlib.metadata.version("vdg"),
        "pyav": av.__version__,
        "libavcodec": ".".join(str(part) for part in av.library_versions["libavcodec"]),  # (61, 3, 100) -> 61.3.100
        "libx264": "core 1 r2",
    }
    assert re.fullmatch(r"\d+\.\d+\.\d+", versions["libavcodec"])


def test_an_uninstalled_checkout_is_an_unknown_vdg_version(monkeypatch):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    monkeypatch.setattr(provenance_module, "x264_version", lambda: "core 1")
    assert builder_versions()["vdg"] == "unknown"


def test_builder_versions_are_looked_up_once_per_process(monkeypatch):
    calls = []
    monkeypatch.setattr(provenance_module, "x264_version", lambda: calls.append(1) or "core 1")
    first = builder_versions()
    assert builder_versions() is first and calls == [1]
