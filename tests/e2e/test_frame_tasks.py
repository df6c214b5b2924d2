"""A task whose doc_to_visual returns decoded frames, end to end: a stand-in shaped like lmms-eval's
``longvideobench_val_i`` (it decodes 16 frames with decord and hands the model PIL images), derived by ``vdg derive``,
run through the real lmms-eval CLI with vdg_probe under orig, black, single, shuffled and jpeg10, and reported."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.runs import lmms_eval, offline_env
from tests.helpers.standins import local_task_yaml
from vdg_tasks.cli import main
from vdg_tasks.lmms.derive_spec import DeriveSpec
from vdg_tasks.synthetic.synth import encode_video, render_frames, video_spec

pytestmark = pytest.mark.slow

TASK = "framebench_i"
VIDEOS = ("f000", "f001", "f002", "f003")
N_FRAMES, SHOWN = 80, 16
# As longvideobench_val_i: decord decodes evenly spaced frames, the model gets PIL images.
UTILS = """\
from pathlib import Path

import numpy as np
from decord import VideoReader, cpu
from PIL import Image

VIDEOS = Path(__file__).parent / "videos"


def doc_to_visual(doc, lmms_eval_specific_kwargs):
    reader = VideoReader(str(VIDEOS / doc["video_path"]), ctx=cpu(0))
    n = lmms_eval_specific_kwargs["max_num_frames"]
    frames = reader.get_batch(np.linspace(0, len(reader) - 1, n).astype(int).tolist()).asnumpy()
    return [Image.fromarray(frame) for frame in frames]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    options = "\\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(doc["candidates"]))
    return f"{doc['question']}\\n{options}\\n{lmms_eval_specific_kwargs['post_prompt']}"
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("frames")
    env = offline_env(root)
    base = root / "base"
    (base / "videos").mkdir(parents=True)
    specs = {vid: video_spec(vid, n_frames=N_FRAMES) for vid in VIDEOS}
    rows = []
    for i, (vid, spec) in enumerate(specs.items()):
        encode_video(base / "videos" / f"{vid}.mp4", render_frames(spec, 0, 160, 120), 160, 120, 8)
        candidates = sorted({*spec.scenes, spec.border})[:4]
        if spec.scenes[0] not in candidates:
            candidates[-1] = spec.scenes[0]
        rows.append({"id": f"fq{i}", "video_path": f"{vid}.mp4", "question_category": "first",
                     "question": "Which colour does the centre square show first?", "candidates": candidates,
                     "correct_choice": candidates.index(spec.scenes[0])})  # fmt: skip
    data = root / "questions.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kwargs = {
        "max_num_frames": SHOWN,
        "post_prompt": "Answer with the option's letter from the given choices directly.",
    }
    (base / f"{TASK}.yaml").write_text(local_task_yaml(TASK, data, "frame_utils", "correct_choice", kwargs))
    (base / "frame_utils.py").write_text(UTILS)
    out = root / "derived"
    args = ["derive", TASK, "--include_path", str(base), "--out", str(out), "--question-id", "id"]
    assert main([*args, "--video-id", "video_path", "--task-type", "question_category"]) == 0
    tasks = ",".join(f"{TASK}_vdg_{c}" for c in ("orig", "black", "single", "shuffled", "jpeg10"))
    run = lmms_eval(env, root / "runs" / "probe", out, "vdg_probe", tasks)
    return {"out": out, "run": run, "env": env, "rows": rows, "specs": specs}


def test_a_frame_task_derives_with_the_conditions_frames_can_take(world):
    spec = DeriveSpec.from_json((world["out"] / TASK / "vdg_derive.json").read_text())
    assert spec.frames and {"orig", "black", "blind", "single", "shuffled", "ordered", "reversed"} <= set(
        spec.conditions
    )
    assert not [c for c in spec.conditions if c.startswith("crf")] and "jpeg10" in spec.conditions


def test_the_model_is_shown_the_task_s_frames_changed_by_each_condition(world):
    frame = load_frame([f"probe={world['run']}"])
    assert (frame.status == "ok").all(), frame[frame.status != "ok"].error.tolist()
    by = frame.set_index(["condition", "question_id"])
    # the 16 frames the stand-in decodes: which source frame each is, and so which scene its centre shows
    decoded = np.linspace(0, N_FRAMES - 1, SHOWN).astype(int)
    for row in world["rows"]:
        spec = world["specs"][row["video_path"][:-4]]
        letter = {c: chr(65 + i) for i, c in enumerate(row["candidates"])}
        assert by.at[("orig", row["id"]), "pred"] == letter[spec.scenes[0]]  # the first frame's centre
        # black: no visual signal, the text prior (the option whose text sorts first)
        assert by.at[("black", row["id"]), "pred"] == letter[min(row["candidates"])]
        # single: every shown frame is the middle one of the 16 (each of the 16 is a key frame)
        middle = spec.scenes[spec.scene_of(int(decoded[SHOWN // 2]))]
        assert by.at[("single", row["id"]), "pred"] == letter.get(middle, letter[min(row["candidates"])])
    assert by.loc["shuffled", "status"].eq("ok").all()
    # flat colour blocks survive even the heaviest JPEG: the same answers as orig
    assert by.loc["jpeg10", "pred"].sort_index().tolist() == by.loc["orig", "pred"].sort_index().tolist()


def test_the_report_reads_the_frame_task(world, tmp_path, monkeypatch):
    for key in ("VDG_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(key, world["env"][key])
    out = tmp_path / "report"
    assert main(["report", f"probe={world['run']}", "--out", str(out), "--no-plots", "--workers", "1"]) == 0
    per_question = pd.read_csv(out / "vdg_per_question.csv")
    assert len(per_question) == len(world["rows"]) and per_question["correct_orig"].all()
    assert "single" in pd.read_csv(out / "ladder.csv")["rungs"].iloc[0]
