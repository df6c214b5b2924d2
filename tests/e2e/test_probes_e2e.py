"""The probes end to end: vdgsynth's orig and probe tasks (``vdgsynth_vdg_probe``: options shuffled, the right option
replaced by None, no question, video only, numbered options) through the real lmms-eval CLI with vdg_probe reading
the options by their content and by their position, then ``vdg report``: the content-following share is exactly 1
for the one and exactly 0 for the other."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.runs import lmms_eval, offline_env
from vdg_tasks.cli import main as vdg_main
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate
from vdg_tasks.vocabulary.conditions import PROBE, families

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("probes")
    synth = generate(root / "synth", n_videos=3, seed=0)
    write_all(root / "tasks", synth_data=str(synth))
    env = offline_env(root)
    tasks = "vdgsynth_vdg_orig,vdgsynth_vdg_probe"
    runs = {
        "content": lmms_eval(env, root / "runs" / "content", root / "tasks", "vdg_probe", tasks),
        "position": lmms_eval(
            env, root / "runs" / "position", root / "tasks", "vdg_probe", tasks, "--model_args", "options_by=position"
        ),  # fmt: skip
    }
    docs = [json.loads(line) for line in synth.read_text().splitlines()]
    return {"root": root, "env": env, "runs": runs, "docs": docs}


@pytest.fixture(scope="module")
def report(world, tmp_path_factory):
    out = tmp_path_factory.mktemp("probes_report")
    with pytest.MonkeyPatch.context() as patch:
        for key in ("VDG_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
            patch.setenv(key, world["env"][key])
        args = [f"{name}={run}" for name, run in world["runs"].items()]
        assert vdg_main(["report", *args, "--out", str(out), "--no-plots", "--workers", "1"]) == 0
    return out


def test_every_probe_ran_on_every_question(world):
    frame = load_frame([f"content={world['runs']['content']}"])
    assert set(frame.condition) == {"orig", *families()[PROBE]}
    n = len(world["docs"])
    assert frame.groupby("condition").size().eq(n).all()
    shuffled = frame[frame.condition == "options_shuffled"].set_index("question_id")
    original = {d["question_id"]: d for d in world["docs"]}
    for question_id, row in shuffled.iterrows():  # the right option moved, with its text
        answer = original[question_id]["answer"]
        assert row.answer != answer and row.shuffled_from[ord(row.answer) - 65] == answer


def test_the_content_following_share_is_one_for_content_and_zero_for_position(report):
    table = pd.read_csv(report / "probes.csv")
    shuffled = table[(table.probe == "options_shuffled") & (table.task_type == "Overall")].set_index("model")
    assert shuffled.at["content", "value"] == 1.0 and shuffled.at["position", "value"] == 0.0
    assert shuffled.at["content", "n_measure"] > 0 and shuffled.at["position", "n_measure"] > 0
    assert shuffled.at["content", "agreement"] == 1.0  # the same option text chosen on every question
    assert "## Probes" in (report / "report.md").read_text()
    # numbered options read by the number the probe answers: the same option as orig on every question
    numbered = table[(table.probe == "numbered") & (table.task_type == "Overall")].set_index("model")
    assert numbered.at["content", "agreement"] == 1.0 and numbered.at["content", "value"] == 0.0
