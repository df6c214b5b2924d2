"""Tasks without options, end to end: an open-ended task scored by vdg's offline judge (lmms-eval's ActivityNet-QA
config, unchanged but for a stand-in dataset with the hub's columns) and a numeric one scored by its own
per-question metric (a VSI-Bench-style counting task whose scorer is VSI-Bench's own mean relative accuracy), each
derived by ``vdg derive``, run through the real lmms-eval CLI with vdg_probe under orig and black, and reported with
VDG on the graded score."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.helpers.runs import lmms_eval, offline_env
from tests.helpers.standins import local_task_yaml
from vdg_tasks.cli import main
from vdg_tasks.data.upstream import lmms_eval_tasks_dir
from vdg_tasks.lmms.derive_spec import DeriveSpec
from vdg_tasks.synthetic.synth import encode_video, render_frames, video_spec

pytestmark = pytest.mark.slow

OPEN_TASK = "activitynetqa_standin"
COUNT_TASK = "vsi_count_standin"
VIDEOS = ("g000", "g001", "g002")
WIDTH, HEIGHT, FPS = 160, 120, 8

# VSI-Bench's numeric scoring, per question, as its process_results does it (its functions, imported).
COUNT_UTILS = """\
from pathlib import Path

from lmms_eval.tasks.vsibench.utils import fuzzy_matching, mean_relative_accuracy, to_float

VIDEOS = Path(__file__).parent / "videos"


def doc_to_visual(doc):
    return [str(VIDEOS / f"{doc['scene_name']}.mp4")]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kwargs = lmms_eval_specific_kwargs or {}
    return kwargs.get("pre_prompt", "") + doc["question"] + "\\n" + kwargs.get("post_prompt", "")


def process_results(doc, results):
    pred = to_float(fuzzy_matching(results[0].strip()))
    if pred is None:
        return {"mra": 0.0}
    return {"mra": float(mean_relative_accuracy(pred, to_float(doc["ground_truth"]), 0.5, 0.95, 0.05))}
"""


def relative_accuracy(pred: float, truth: float) -> float:
    """Mean relative accuracy as VSI-Bench defines it: the share of thresholds 0.50, 0.55, ..., 0.95 at which
    |pred - truth| / truth is within 1 - threshold."""
    thresholds = [0.5 + 0.05 * i for i in range(10)]
    return sum(abs(pred - truth) / truth < 1 - t for t in thresholds) / len(thresholds)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("graded")
    env = offline_env(root)
    base = root / "base"
    (base / "videos").mkdir(parents=True)
    anet_videos = root / "hf" / "activitynetqa" / "all_test"  # where lmms-eval's ActivityNet-QA lookup reads them
    anet_videos.mkdir(parents=True)
    specs = {vid: video_spec(vid, n_frames=48) for vid in VIDEOS}
    for vid, spec in specs.items():
        encode_video(base / "videos" / f"{vid}.mp4", render_frames(spec, 0, WIDTH, HEIGHT), WIDTH, HEIGHT, FPS)
        (anet_videos / f"v_{vid}.mp4").symlink_to(base / "videos" / f"{vid}.mp4")
    # ActivityNet-QA's columns; the last reference answer names a scene colour, not the border's
    open_rows = [
        {"question_id": f"{vid}_b", "video_name": vid, "question": "what colour is the border", "type": "4",
         "answer": spec.border if vid != VIDEOS[-1] else spec.scenes[0]}
        for vid, spec in specs.items()
    ]  # fmt: skip
    # VSI-Bench's columns; the counts 1.5 times what the video shows score a partial relative accuracy
    count_rows = [
        {"id": i, "dataset": "standin", "scene_name": vid, "question_type": "object_counting",
         "question": "How many colours does the centre square show?",
         "ground_truth": str(len(spec.scenes) * (1.5 if i == 0 else 1)), "options": None}
        for i, (vid, spec) in enumerate(specs.items())
    ]  # fmt: skip
    data = root / "data"
    data.mkdir()
    for name, rows in (("open", open_rows), ("count", count_rows)):
        (data / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (base / f"{OPEN_TASK}.yaml").write_text(
        f"include: {lmms_eval_tasks_dir() / 'activitynetqa' / 'activitynetqa_generation.yaml'}\ntask: {OPEN_TASK}\n"
        f"dataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {data / 'open.jsonl'}\n"
    )
    kwargs = {"pre_prompt": "", "post_prompt": "Please answer the question using a single word or phrase."}
    count_yaml = local_task_yaml(COUNT_TASK, data / "count.jsonl", "count_utils", "ground_truth", kwargs, "mra")
    (base / f"{COUNT_TASK}.yaml").write_text(count_yaml)
    (base / "count_utils.py").write_text(COUNT_UTILS)
    out = root / "derived"
    for task, given in ((OPEN_TASK, []), (COUNT_TASK, ["--question-id", "id", "--video-id", "scene_name"])):
        args = ["derive", task, "--include_path", str(base), "--out", str(out), "--conditions", "orig,black"]
        assert main([*args, *given]) == 0  # VSI-Bench's functions read neither its id nor its scene field
    run = lmms_eval(env, root / "runs" / "probe", out, "vdg_probe", f"{OPEN_TASK}_vdg,{COUNT_TASK}_vdg")
    return {"out": out, "run": run, "env": env, "specs": specs, "open": open_rows, "count": count_rows}


@pytest.fixture(scope="module")
def report(world, tmp_path_factory):
    out = tmp_path_factory.mktemp("graded_report")
    with pytest.MonkeyPatch.context() as patch:
        for key in ("VDG_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
            patch.setenv(key, world["env"][key])
        args = ["report", f"probe={world['run']}", "--out", str(out), "--no-plots", "--workers", "1"]
        assert main([*args, "--judge", "offline"]) == 0
    return out


def test_each_task_is_graded_as_derive_declared(world):
    scorings = {task: DeriveSpec.from_json((world["out"] / task / "vdg_derive.json").read_text()).scoring
                for task in (OPEN_TASK, COUNT_TASK)}  # fmt: skip
    assert scorings == {OPEN_TASK: "judge", COUNT_TASK: "metric:mra"}


def test_vdg_is_on_the_judged_score_of_the_open_ended_task(world, report):
    rows = pd.read_csv(report / "vdg_per_question.csv").query("benchmark == @OPEN_TASK").set_index("question_id")
    # the probe names the border colour it sees, and says it does not know on a black screen
    expected = {r["question_id"]: float(r["answer"] == world["specs"][r["video_name"]].border) for r in world["open"]}
    assert sorted(rows.index) == sorted(expected) and set(expected.values()) == {0.0, 1.0}
    for question_id, score in expected.items():
        assert (rows.at[question_id, "score_orig"], rows.at[question_id, "score_black"]) == (score, 0.0)
        assert rows.at[question_id, "vdg"] == score and rows.at[question_id, "scale"] == "graded score in [0, 1]"


def test_vdg_is_on_vsi_bench_s_relative_accuracy_of_the_numeric_task(world, report):
    rows = pd.read_csv(report / "vdg_per_question.csv").query("benchmark == @COUNT_TASK")
    rows = rows.assign(question_id=rows["question_id"].astype(str)).set_index("question_id")
    expected = {
        str(r["id"]): relative_accuracy(len(world["specs"][r["scene_name"]].scenes), float(r["ground_truth"]))
        for r in world["count"]
    }
    assert 0 < min(expected.values()) < 1 == max(expected.values())
    for question_id, score in expected.items():
        assert rows.at[question_id, "score_orig"] == pytest.approx(score)
        assert rows.at[question_id, "score_black"] == 0.0  # "I don't know." is no number: VSI-Bench's worst case
    table = pd.read_csv(report / "vdg.csv").query("benchmark == @COUNT_TASK and task_type == 'Overall'").iloc[0]
    assert table["vdg"] == pytest.approx(np.mean(list(expected.values())))
    assert table["scale"] == "graded score in [0, 1]"
    assert "on a graded score in [0, 1]" in (report / "report.md").read_text()


def test_without_a_judge_the_report_names_the_benchmark_waiting_for_one(world, tmp_path, monkeypatch, capsys):
    for key in ("VDG_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(key, world["env"][key])
    args = ["report", f"probe={world['run']}", "--out", str(tmp_path / "r"), "--no-plots", "--workers", "1"]
    assert main(args) == 0
    assert f"vdg: {OPEN_TASK}: answers scored by vdg's judge are not judged" in capsys.readouterr().err
    graded = pd.read_csv(tmp_path / "r" / "vdg.csv")
    assert set(graded["benchmark"]) == {COUNT_TASK}
