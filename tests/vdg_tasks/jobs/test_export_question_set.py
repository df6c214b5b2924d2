"""An export made under ``VDG_QUESTION_SET`` (a vdg debias set) holds that set's questions and names the set in its
dataset card; blind rows name no video."""

from __future__ import annotations

import json

import pytest

from vdg_tasks.data import question_sets
from vdg_tasks.jobs.export import export
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate

TASKS = ["vdgsynth_vdg_orig", "vdgsynth_vdg_blind"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("export_set")
    jsonl = generate(root / "data", n_videos=3, seed=0, width=32, height=24, seconds=8)
    docs = [json.loads(line) for line in jsonl.read_text().splitlines()]
    write_all(root / "tasks", synth_data=str(jsonl))
    kept = [d["question_id"] for d in docs if d["task_type"] != "text_only"]
    chosen = question_sets.make_set(
        "vdgsynth", kept, counts=[], description="debiased: iterative bias pruning (a test's stand-in)"
    )
    set_file = question_sets.write(chosen, root / "debiased.json")
    with pytest.MonkeyPatch.context() as mp:
        for name, value in {
            "HF_HOME": root / "hf",
            "VDG_CACHE": root / "cache",
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            question_sets.ENV_VAR: set_file,
        }.items():
            mp.setenv(name, str(value))
        mp.delenv("VDG_EXPORTS", raising=False)
        result = export(TASKS, root / "out", name="debiased-x", yaml_root=root / "tasks")
    return result, kept, chosen


def test_the_export_holds_the_sets_questions_only(exported):
    result, kept, _ = exported
    for task in TASKS:
        rows = [json.loads(line) for line in (result.out / "data" / f"{task}.jsonl").read_text().splitlines()]
        assert sorted(r["question_id"] for r in rows) == sorted(kept)


def test_the_card_and_manifest_name_the_set(exported):
    result, kept, chosen = exported
    card = (result.out / "README.md").read_text()
    assert "## Question set" in card
    assert f"{len(kept)} questions of the set `debiased.json` (digest `{chosen.digest}`" in card
    assert "debiased: iterative bias pruning (a test's stand-in)." in card
    manifest = json.loads((result.out / "export.json").read_text())
    assert manifest["question_sets"]["vdgsynth"]["digest"] == chosen.digest


def test_blind_rows_name_no_video_and_no_error(exported):
    result, _, _ = exported
    rows = [json.loads(line) for line in (result.out / "data" / "vdgsynth_vdg_blind.jsonl").read_text().splitlines()]
    assert {(r["vdg_export"]["video_file"], r["vdg_export"]["error"]) for r in rows} == {("", None)}
    assert result.n_errors == 0
