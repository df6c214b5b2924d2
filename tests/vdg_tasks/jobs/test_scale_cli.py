"""`vdg materialize --shard I/N --manifest FILE` and `vdg export`, through the command line."""

from __future__ import annotations

import json

import pytest

import vdg_tasks.lmms.yamlgen
from vdg_tasks.cli import main as vdg_main
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate

TASKS = "vdgsynth_vdg_black,vdgsynth_vdg_single,vdgsynth_vdg_crf38,vdgsynth_vdg_orig"


@pytest.fixture
def synth_tasks(tmp_path, monkeypatch):
    jsonl = generate(tmp_path / "data", n_videos=3, seed=0)
    write_all(tmp_path / "tasks", synth_data=str(jsonl))
    monkeypatch.setattr(vdg_tasks.lmms.yamlgen, "YAML_ROOT", tmp_path / "tasks")
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path


def _materialize(tmp_path, name: str, *extra: str) -> dict:
    manifest = tmp_path / f"{name}.json"
    assert (
        vdg_main(["materialize", "--tasks", TASKS, "--workers", "1", "--quiet", "--manifest", str(manifest), *extra])
        == 0
    )
    return json.loads(manifest.read_text())


def _jobs(manifest: dict) -> list[tuple[str, str]]:
    return [(job["condition"], job["video_id"]) for job in manifest["jobs"]]


@pytest.mark.slow
def test_two_shards_build_exactly_the_unsharded_jobs_once(synth_tasks, capsys):
    first = _materialize(synth_tasks, "shard0", "--shard", "0/2")
    second = _materialize(synth_tasks, "shard1", "--shard", "1/2")
    assert first["shard"] == {"index": 0, "count": 2} and second["shard"] == {"index": 1, "count": 2}
    assert not set(_jobs(first)) & set(_jobs(second))
    whole = _materialize(synth_tasks, "whole")
    assert sorted(_jobs(first) + _jobs(second)) == sorted(_jobs(whole))
    assert len(_jobs(whole)) == 4 * 3  # four conditions, three videos
    built = first["counts"]["built"] + second["counts"]["built"]
    assert built == 9 and whole["counts"]["built"] == 0  # the unsharded run after them: all cached
    assert all(job["hit"] for job in whole["jobs"] if job["condition"] != "orig")
    assert "(shard 1/2)" in capsys.readouterr().out


@pytest.mark.parametrize("shard", ["2/2", "1", "a/b", "-1/3"])
@pytest.mark.slow
def test_a_bad_shard_is_one_clear_line(synth_tasks, capsys, shard):
    assert vdg_main(["materialize", "--tasks", TASKS, "--quiet", f"--shard={shard}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("vdg materialize: ") and "shard" in err and "\n" not in err


@pytest.mark.slow
def test_export_then_export_tasks_through_the_command_line(synth_tasks, capsys, monkeypatch):
    monkeypatch.setenv("VDG_EXPORTS", str(synth_tasks / "exports"))
    out = synth_tasks / "synth-export"
    assert vdg_main(["export", "--tasks", "vdgsynth_vdg_black,vdgsynth_vdg_orig", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr()
    assert printed.out.strip() == str(out)
    assert (
        "export synth-export revision " in printed.err and "30 rows, 0 with errors" in printed.err
    )  # 15 questions (3 videos x 5) x 2 tasks
    manifest = json.loads((out / "export.json").read_text())
    assert sorted(manifest["tasks"]) == ["vdgsynth_vdg_black", "vdgsynth_vdg_orig"]
    assert (synth_tasks / "exports" / "synth-export").resolve() == out.resolve()
    moved = synth_tasks / "moved-export"
    out.rename(moved)
    assert vdg_main(["export-tasks", str(moved), "--out", str(synth_tasks / "tasks-from-export")]) == 0
    template = (synth_tasks / "tasks-from-export" / "vdgsynth" / "_default_template_yaml").read_text()
    assert f"dataset_path: {moved.resolve()}" in template or f"dataset_path: {moved}" in template
    assert (synth_tasks / "exports" / "synth-export").resolve() == moved.resolve()
    assert vdg_main(["export", "--tasks", "nosuch_vdg_black", "--out", str(synth_tasks / "x"), "--quiet"]) == 2
