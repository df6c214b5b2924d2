"""The whole pipeline through the real lmms-eval CLI on the synthetic benchmark.

vdgsynth -> vdg tasks (lazy materialization in doc_to_visual) -> lmms-eval with vdg_probe,
its order-blind variant and vdg_chance -> samples logs -> `vdg report`. Two videos are broken on
purpose (one corrupt, one missing): their questions must be `error` rows, and only theirs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.runs import lmms_eval, offline_env
from vdg_tasks.cli import main as vdg_main
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import TASK_TYPES, generate
from vdg_tasks.vocabulary.conditions import PROBE, families

pytestmark = pytest.mark.slow

N_VIDEOS = 8
CORRUPT, MISSING = "s001", "s002"
#: Questions per video: the four visual task types and the soundtrack's pitch.
PER_VIDEO = len(TASK_TYPES) + 1


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    jsonl = generate(root / "data", n_videos=N_VIDEOS, seed=0)
    docs = [json.loads(line) for line in jsonl.read_text().splitlines()]
    videos = {d["video_id"]: Path(d["video"]) for d in docs}
    videos[CORRUPT].write_bytes(np.random.default_rng(0).bytes(videos[CORRUPT].stat().st_size))
    videos[MISSING].unlink()
    write_all(root / "tasks", synth_data=str(jsonl))
    env = offline_env(root)
    return {"root": root, "docs": docs, "tasks": root / "tasks", "env": env}


@pytest.fixture(scope="module")
def runs(world):
    out = world["root"] / "runs"
    args = (world["env"], world["tasks"])
    return {
        "probe": lmms_eval(args[0], out / "probe", args[1], "vdg_probe", "vdgsynth_vdg,vdgsynth_vdg_blind"),
        "blind": lmms_eval(
            args[0],
            out / "blind",
            args[1],
            "vdg_probe",
            "vdgsynth_vdg,vdgsynth_vdg_blind",
            "--model_args",
            "order_blind=True",
        ),  # fmt: skip
        "chance": lmms_eval(
            args[0], out / "chance", args[1], "vdg_chance", "vdgsynth_vdg_ladder", "--model_args", "seed=7"
        ),
    }


@pytest.fixture(scope="module")
def report(world, runs):
    out = world["root"] / "report"
    assert vdg_main(["report", *(f"{k}={v}" for k, v in runs.items()), "--out", str(out), "--resamples", "500"]) == 0
    return {name: pd.read_csv(out / f"{name}.csv") for name in ("vdg", "ladder", "coverage", "findings")} | {
        "md": (out / "report.md").read_text(),
        "frame": load_frame([f"{k}={v}" for k, v in runs.items()]),
    }


def test_every_sample_logged_with_ids_and_status(world, report):
    frame = report["frame"]
    n_questions = len(world["docs"])
    per_cell = frame.groupby(["model", "condition"]).size()
    assert (per_cell == n_questions).all()
    assert set(frame[frame.model == "probe"].condition) == {
        "orig",
        "black",
        "blind",
        "single",
        "shuffled",
        "ordered",
        "reversed",
        "crf18",
        "crf23",
        "crf28",
        "crf33",
        "crf38",
        "open",
        "abstain",
        *families()[PROBE],
    }
    assert frame.question_id.str.match(rf"s\d{{3}}-[1-{PER_VIDEO}]$").all()


def test_broken_videos_are_error_rows_for_their_questions_only(report):
    frame = report["frame"]
    blind = frame.condition == "blind"  # no video shown: a broken one changes nothing
    broken = frame.video_id.isin([CORRUPT, MISSING]) & ~blind
    assert (frame[broken].status == "error").all()
    assert (frame[blind].status == "ok").all()
    probes = frame.condition.isin(families()[PROBE])  # the probe cannot answer without the question: unparsed
    assert (
        frame[~broken & ~probes].status == frame[~broken & ~probes].condition.map({"open": "open"}).fillna("ok")
    ).all()
    assert frame[~broken & probes].status.isin(["ok", "unparsed"]).all()
    assert frame[broken & (frame.video_id == MISSING)].error.str.contains("does not exist").all()
    vdg = report["vdg"].set_index(["model", "task_type"])
    assert vdg.loc[("probe", "Overall"), "n_error"] == 2 * PER_VIDEO
    assert vdg.loc[("probe", "Overall"), "n"] == PER_VIDEO * (N_VIDEOS - 2)
    assert "errors" in report["md"]


def test_probe_ladder_is_the_one_the_construction_implies(report):
    ladder = report["ladder"].set_index(["model", "task_type"])
    probe = ladder.loc["probe"]
    # Only order questions gain from temporal order.
    assert probe.loc["temporal_order", "temporal"] > 0
    for task_type in ("single_frame", "multi_frame", "text_only"):
        assert probe.loc[task_type, "temporal"] == 0, task_type
    # Any one frame answers single_frame; several distinct frames are needed for multi_frame.
    assert probe.loc["single_frame", "spatial"] > 0
    assert probe.loc["single_frame", ["acc_single", "acc_shuffled", "acc_ordered", "acc_orig"]].eq(1).all()
    assert probe.loc["multi_frame", "diversity"] > 0
    assert probe.loc["multi_frame", "acc_shuffled"] == 1
    # Text-only questions do not need the video at all.
    assert probe.loc["text_only", ["acc_black", "acc_orig"]].eq(1).all()
    # The order-blind probe gains nothing from order anywhere.
    assert (ladder.loc["blind", "temporal"] == 0).all()


def test_chance_model_has_zero_vdg_question_by_question(report):
    frame = report["frame"]
    chance = frame[(frame.model == "chance") & (frame.status != "error")]
    wide = chance.pivot(index="question_id", columns="condition", values="pred")
    assert (wide.nunique(axis=1) == 1).all()
    overall = report["vdg"].set_index(["model", "task_type"]).loc[("chance", "Overall")]
    assert overall.vdg == 0 and overall.d == 0 and overall.c == 0


def test_probe_vdg_rows_and_markdown(report):
    vdg = report["vdg"].set_index(["model", "task_type"])
    assert vdg.loc[("probe", "text_only"), "vdg"] == 0
    assert vdg.loc[("probe", "single_frame"), "vdg"] > 0
    assert "Visual Dependency Gap by task type" in report["md"]


def test_the_report_opens_with_the_findings_of_every_model_in_words(report):
    md, findings = report["md"], report["findings"]
    assert md.startswith("# vdg report\n\n## At a glance\n")  # the headline and task-type grid, then the words
    start = md.index("\n## Findings\n")
    end = md.index("\n## ", start + 1)
    assert set(findings["model"]) == set(report["vdg"]["model"])
    for row in findings.itertuples():
        assert start < md.index(row.sentence) < end, row.sentence  # every sentence, in the Findings
    # the probe's video sentence carries the vdg table's Overall VDG and CI (one decimal, in points)
    video = findings[(findings.model == "probe") & (findings.topic == "video")].iloc[0]
    overall = report["vdg"].set_index(["model", "task_type"]).loc[("probe", "Overall")]
    assert f"{100 * overall.vdg:+.1f} points" in video.sentence
    if pd.isna(overall.ci_low):  # too few questions for a CI: the sentence says so instead of a number
        assert f"no CI: fewer questions than min_stratum; n = {overall.n} questions" in video.sentence
    else:
        assert f"{100 * overall.ci_low:+.1f} to {100 * overall.ci_high:+.1f}" in video.sentence


def test_tiny_qwen2_vl_through_the_real_harness(world, tmp_path):
    """lmms-eval's own qwen2_vl (random weights, built locally) on orig and black, joined per question."""
    from tests.helpers.tiny_qwen2vl import TINY_QWEN_MODEL_ARGS, build_tiny_qwen2vl

    model_dir = build_tiny_qwen2vl(tmp_path / "tiny-qwen2vl")
    out = lmms_eval(
        world["env"],
        tmp_path / "qwen",
        world["tasks"],
        "qwen2_vl",
        "vdgsynth_vdg_orig,vdgsynth_vdg_black",
        "--model_args",
        f"pretrained={model_dir},{TINY_QWEN_MODEL_ARGS}",
        "--limit",
        str(3 * PER_VIDEO),
    )
    frame = load_frame([out])
    assert set(frame.model) == {"qwen2_vl:tiny-qwen2vl"}
    assert set(frame.condition) == {"orig", "black"}
    per_question = frame.pivot(index="question_id", columns="condition", values="status")
    assert len(per_question) == 3 * PER_VIDEO and per_question.notna().all().all()  # both conditions for every question
    broken = frame.video_id.isin([CORRUPT, MISSING])
    assert (frame[broken].status == "error").all() and (frame[~broken].status != "error").all()
    assert frame[~broken].correct.notna().all()
    report_dir = tmp_path / "report"
    assert vdg_main(["report", str(out), "--out", str(report_dir), "--resamples", "200"]) == 0
    vdg = pd.read_csv(report_dir / "vdg.csv").set_index("task_type")
    assert vdg.loc["Overall", "n"] == PER_VIDEO and vdg.loc["Overall", "n_error"] == 2 * PER_VIDEO
