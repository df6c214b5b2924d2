"""Ids from a local copy's question file build paths (``<folder>/videos/<videoID>.mp4``): an absolute id, a ``..``
or a symlink out of the copy is refused (``UntrustedPath``), so the question is an error row and ``vdg export``
never copies a file from outside the copy into its ``videos/``. The hostile ids are made here."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.standins import videomme
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.data.local_copies import LocalLayout, check_id_path, local_video
from vdg_tasks.vocabulary.untrusted import UntrustedPath

LAYOUT = LocalLayout("bench", ("q",), lambda d: f"{d['videoID']}.mp4", (".MP4",))


@pytest.fixture
def copy(tmp_path):
    folder = tmp_path / "local" / "bench"
    (folder / "videos").mkdir(parents=True)
    (folder / "videos" / "good.mp4").write_bytes(b"good")
    private = tmp_path / "private.mp4"
    private.write_bytes(b"private")
    os.symlink(private, folder / "videos" / "link.mp4")
    os.symlink(private, folder / "videos" / "linkcase.MP4")
    return {"folder": folder, "private": private}


def test_an_id_inside_the_copy_is_found(copy):
    assert local_video(copy["folder"], LAYOUT, {"videoID": "good"}) == copy["folder"] / "videos" / "good.mp4"


@pytest.mark.parametrize(
    ("video_id", "reason"),
    [
        ("PRIVATE", "it is absolute"),
        ("../../private", "climbs out"),
        ("sub/../../../private", "climbs out"),
        ("link", "symlink out"),
        ("linkcase", "symlink out"),  # found through a suffix tried after the first
        ("~/private", "it is absolute"),
    ],
)
def test_an_id_that_leads_out_of_the_copy_is_refused(copy, video_id, reason):
    vid = str(copy["private"].with_suffix("")) if video_id == "PRIVATE" else video_id
    with pytest.raises(UntrustedPath, match=reason):
        local_video(copy["folder"], LAYOUT, {"videoID": vid})


@pytest.mark.parametrize("relative", ["/etc/passwd.mp4", "../x.mp4", "folder//etc/passwd", "a/../../b", ""])
def test_a_hub_lookup_refuses_ids_that_os_path_join_would_follow_out(relative):
    with pytest.raises(UntrustedPath):
        check_id_path(relative)
    assert check_id_path("folder/sub/x.mp4") == "folder/sub/x.mp4"


@pytest.mark.parametrize("relative", ["~x.mp4", "~/x.mp4", "sub/~user/x.mp4", "~"])
def test_a_leading_tilde_is_just_a_character_of_an_id(relative, monkeypatch):
    """Judged by pure path logic (never ``expanduser``, never the real filesystem): ``root / "~x.mp4"`` stays in
    the root."""
    monkeypatch.setattr(Path, "expanduser", lambda self: pytest.fail(f"expanduser({self})"))
    monkeypatch.setattr(Path, "resolve", lambda self, strict=False: pytest.fail(f"resolve({self})"))
    assert check_id_path(relative) == relative


@pytest.mark.parametrize("relative", [".mp4", "sub/", "sub/.mp4", "a\\x\x00.mp4"])
def test_a_hub_lookup_refuses_an_empty_id(relative):
    with pytest.raises(UntrustedPath):
        check_id_path(relative)


@pytest.mark.parametrize(
    ("layout", "doc"),
    [
        (LAYOUT, {"videoID": ""}),  # ".mp4"
        (LocalLayout("bench", ("q",), lambda d: f"{d['sub']}/{d['videoID']}"), {"sub": "s", "videoID": ""}),
    ],
)
def test_a_local_copy_refuses_an_empty_id(copy, layout, doc):
    (copy["folder"] / "videos" / "s").mkdir()
    (copy["folder"] / "videos" / ".mp4").write_bytes(b"not a question's video")
    with pytest.raises(UntrustedPath, match="empty"):
        local_video(copy["folder"], layout, doc)


def test_a_hub_benchmark_refuses_an_absolute_id_before_lmms_eval_looks(monkeypatch):
    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)
    for bad in ("/etc/passwd", "../../../etc/passwd"):
        with pytest.raises(UntrustedPath):
            BENCHMARKS["videomme"].video({"videoID": bad})
        with pytest.raises(UntrustedPath):
            BENCHMARKS["egoschema_subset"].video({"video_idx": bad})


@pytest.mark.slow
def test_exporting_a_hostile_local_copy_copies_nothing_from_outside(tmp_path, monkeypatch):
    """`vdg export` of a local copy whose ids lead out: those questions are error rows, no byte of the outside
    file is in the export, and nothing is written outside the export, the cache and HF_HOME."""
    from vdg_tasks.jobs.export import export

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv("VDG_EXPORTS", raising=False)
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path / "local"))
    rows = videomme(tmp_path / "local")
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.mp4"
    secret.write_bytes((tmp_path / "local" / "videomme" / "videos" / "vmA1.mp4").read_bytes() + b"SECRET-TAIL")
    os.symlink(secret, tmp_path / "local" / "videomme" / "videos" / "linked.mp4")
    hostile = {"abs": str(secret.with_suffix("")), "dots": "../../outside/secret", "link": "linked"}
    for i, (label, vid) in enumerate(hostile.items()):
        rows.append({**rows[0], "videoID": vid, "question_id": f"hostile-{label}", "video_id": f"{900 + i}"})
    pd.DataFrame(rows).to_parquet(tmp_path / "local" / "videomme" / "videomme" / "test-00000-of-00001.parquet")
    before = {p for p in tmp_path.rglob("*")}

    result = export(["videomme_vdg_orig", "videomme_vdg_black"], tmp_path / "out", name="vm")
    for task in ("videomme_vdg_orig", "videomme_vdg_black"):
        data = [json.loads(line) for line in (result.out / "data" / f"{task}.jsonl").read_text().splitlines()]
        for row in data:
            info = row["vdg_export"]
            if row["question_id"].startswith("hostile-"):
                assert info["video_file"] == "" and "refused" in info["error"], info
            else:
                assert info["error"] is None and info["video_file"]
    assert not any(b"SECRET-TAIL" in p.read_bytes() for p in result.out.rglob("*.mp4"))
    allowed = (tmp_path / "out", tmp_path / "cache", tmp_path / "hf")
    new = {p for p in tmp_path.rglob("*")} - before
    assert all(any(p == a or a in p.parents for a in allowed) for p in new), sorted(map(str, new))
    assert Path(secret).read_bytes().endswith(b"SECRET-TAIL")
