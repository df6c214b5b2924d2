"""A task whose options live in its question text, end to end: lmms-eval's TempCompass multi-choice config
(unchanged but for a stand-in dataset with the hub's columns and its name) derived by ``vdg derive``, run through
the real lmms-eval CLI with vdg_probe under orig, black and abstain, and read by the report."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.runs import lmms_eval, offline_env
from tests.helpers.videos import write_indexed_source
from vdg_tasks.cli import main
from vdg_tasks.data.upstream import lmms_eval_tasks_dir
from vdg_tasks.lmms.derive_spec import DeriveSpec

pytestmark = pytest.mark.slow

TASK = "tempcompass_mc_standin"
# TempCompass' multi-choice rows: video_id, dim, question with lettered lines, answer as "B. text"
ROWS = [
    {"video_id": "tc1", "dim": "direction", "question": "Which way does it move?\nA. left\nB. right\nC. up",
     "answer": "B. right"},
    {"video_id": "tc1", "dim": "speed", "question": "How fast is it?\nA. slow\nB. fast", "answer": "A. slow"},
    {"video_id": "tc2", "dim": "order", "question": "What happens first?\nA. jump\nB. run\nC. sit\nD. wave",
     "answer": "D. wave"},
]  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("tempcompass")
    env = offline_env(root)
    videos = root / "hf" / "tempcompass" / "videos"  # where lmms-eval's TempCompass lookup reads them
    videos.mkdir(parents=True)
    for video_id in sorted({r["video_id"] for r in ROWS}):
        write_indexed_source(videos / f"{video_id}.mp4", n_frames=20)
    data = root / "data" / "test.jsonl"
    data.parent.mkdir()
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    base = root / "base"
    base.mkdir()
    (base / f"{TASK}.yaml").write_text(
        f"include: {lmms_eval_tasks_dir() / 'tempcompass' / 'tempcompass_mc.yaml'}\ntask: {TASK}\n"
        f"dataset_path: json\ndataset_name: null\ndataset_kwargs:\n  data_files:\n    test: {data}\n"
    )
    out = root / "derived"
    args = ["derive", TASK, "--include_path", str(base), "--out", str(out), "--conditions", "orig,black,abstain"]
    assert main(args) == 0
    run = lmms_eval(env, root / "runs" / "probe", out, "vdg_probe", f"{TASK}_vdg")
    return {"root": root, "out": out, "run": run, "env": env}


def test_the_options_are_read_from_the_question_text(world):
    spec = DeriveSpec.from_json((world["out"] / TASK / "vdg_derive.json").read_text())
    assert spec.fields.options == "@question|<prompt>"  # the question's lines, else the prompt's own


def test_every_question_is_scored_with_its_options_and_abstain_adds_one_in_the_same_layout(world):
    frame = load_frame([f"probe={world['run']}"])
    assert (frame.status != "error").all(), frame[frame.status == "error"].error.tolist()
    assert frame.groupby("condition").size().to_dict() == {"orig": 3, "black": 3, "abstain": 3}
    orig = frame[frame.condition == "orig"].sort_values("source")
    assert orig.n_options.tolist() == [r["question"].count("\n") for r in ROWS]
    assert orig.answer.tolist() == [r["answer"][0] for r in ROWS]
    # the probe answers these from the text: the option whose text sorts first
    first = [min(r["question"].split("\n")[1:], key=lambda o: o[3:])[0] for r in ROWS]
    assert orig.pred.tolist() == first
    assert orig.correct.tolist() == [p == r["answer"][0] for p, r in zip(first, ROWS, strict=True)]
    abstain = frame[frame.condition == "abstain"].sort_values("source")
    assert abstain.n_options.tolist() == [n + 1 for n in orig.n_options]
    (log,) = world["run"].rglob(f"*_samples_{TASK}_vdg_abstain.jsonl")
    prompts = [json.loads(line)["input"] for line in log.read_text().splitlines()]
    for prompt, row, letter in zip(prompts, ROWS, abstain.abstain_letter, strict=True):
        assert prompt.startswith(row["question"] + f"\n{letter}. "), prompt  # lettered as the question letters
        assert prompt.endswith("\nPlease directly give the best option:")


def test_the_report_reads_the_derived_runs(world, tmp_path, monkeypatch):
    for key in ("VDG_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(key, world["env"][key])
    out = tmp_path / "report"
    assert main(["report", f"probe={world['run']}", "--out", str(out), "--no-plots", "--workers", "1"]) == 0
    assert len(pd.read_csv(out / "vdg_per_question.csv")) == len(ROWS)
