"""Circular evaluation end to end: vdgsynth's orig and its rotations (the tag ``vdgsynth_vdg_circular4``: four options,
rotations 1-3) through the real lmms-eval CLI with vdg_probe reading the options by their content and by their
position (always "A"), then the circular table computed from the logs: circular accuracy equals single-pass accuracy
for the one, and is 0 for the other, whose single-pass accuracy is the share of questions keyed A."""

from __future__ import annotations

import json

import pytest

from postprocess.analyses import ReportSettings
from postprocess.analyses.circular import circular_table
from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.runs import lmms_eval, offline_env
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate
from vdg_tasks.vocabulary.conditions import CIRCULAR, circular_rotations

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("circular")
    synth = generate(root / "synth", n_videos=3, seed=0)
    write_all(root / "tasks", synth_data=str(synth))
    env = offline_env(root)
    tasks = f"vdgsynth_vdg_orig,vdgsynth_vdg_{CIRCULAR}4"
    runs = {
        "content": lmms_eval(env, root / "runs" / "content", root / "tasks", "vdg_probe", tasks),
        "position": lmms_eval(
            env, root / "runs" / "position", root / "tasks", "vdg_probe", tasks, "--model_args", "options_by=position"
        ),  # fmt: skip
    }
    docs = [json.loads(line) for line in synth.read_text().splitlines()]
    frame = load_frame([f"{name}={run}" for name, run in runs.items()])
    return {"docs": docs, "frame": frame}


def test_every_question_ran_under_orig_and_its_three_rotations(world):
    frame, docs = world["frame"], world["docs"]
    rotations = [name for name, k in circular_rotations().items() if k < 4]
    assert set(frame.condition) == {"orig", *rotations}
    assert frame.groupby(["model", "condition"]).size().eq(len(docs)).all()
    assert frame.status.eq("ok").all()
    keyed = {d["question_id"]: d["answer"] for d in docs}
    rotated = frame[frame.condition != "orig"]
    for row in rotated.itertuples():  # the answer moved by the rotation, (i + k) mod 4
        k = circular_rotations()[row.condition]
        assert row.answer == "ABCD"[("ABCD".index(keyed[row.question_id]) + k) % 4]


def test_circular_equals_single_for_content_and_is_zero_for_always_a(world):
    docs = world["docs"]
    table = circular_table(world["frame"], ReportSettings(min_stratum=5)).set_index(["model", "task_type"])
    content, position = table.loc[("content", "Overall")], table.loc[("position", "Overall")]
    assert content.n == position.n == len(docs)
    assert content.acc_circular == content.acc_single and content["drop"] == 0.0
    assert content.acc_single > 0.5  # vdg_probe reads vdgsynth from its pixels
    keyed_a = sum(d["answer"] == "A" for d in docs) / len(docs)
    assert position.acc_single == keyed_a > 0 and position.acc_circular == 0.0 and position["drop"] == keyed_a
    assert position.n_options == "4" and position.rotations == "3"
    for task_type in {d["task_type"] for d in docs}:
        assert table.loc[("content", task_type), "acc_circular"] == table.loc[("content", task_type), "acc_single"]
        assert table.loc[("position", task_type), "acc_circular"] == 0.0
