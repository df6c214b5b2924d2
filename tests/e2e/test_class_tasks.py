"""A Python class task, end to end: a stand-in shaped like lmms-eval's ``vstat`` and ``physical_conflict`` (its
YAML names a ``ConfigurableTask`` subclass whose own ``download`` builds the dataset from a local file;
``dataset_path`` names nothing loadable) with EgoPlan's lettered option fields (``choice_a`` ... ``choice_d``),
derived by ``vdg derive``, run through the real lmms-eval CLI with vdg_probe under orig, black and the text and
probe families (groups), and reported."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.runs import lmms_eval, offline_env
from vdg_tasks.cli import main
from vdg_tasks.lmms.derive_spec import DeriveSpec
from vdg_tasks.synthetic.synth import encode_video, render_frames, video_spec

pytestmark = pytest.mark.slow

TASK = "classbench"
VIDEOS = ("k000", "k001", "k002")
UTILS = """\
import json
from pathlib import Path

from datasets import Dataset, DatasetDict
from lmms_eval.api.task import ConfigurableTask

HERE = Path(__file__).parent


class StandinTask(ConfigurableTask):
    def __init__(self, *args, config=None, **kwargs):
        if config is not None:
            config = dict(config)
            config.pop("class", None)
        super().__init__(*args, config=config, **kwargs)

    def download(self, dataset_kwargs=None):
        rows = [json.loads(line) for line in (HERE / "questions.jsonl").read_text().splitlines()]
        self.dataset = DatasetDict({self.config.test_split: Dataset.from_list(rows)})
        self.dataset_no_image = self.dataset.copy()


def doc_to_visual(doc):
    return [str(HERE / "videos" / f"{doc['sample_id']}.mp4")]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    question = doc["task_goal"]
    for letter in ["A", "B", "C", "D"]:
        question += "\\n" + f"{letter}. " + doc[f"choice_{letter.lower()}"]
    return question + "\\nAnswer with the option's letter from the given choices directly."
"""
YAML = """\
dataset_path: standin_class_dataset_that_only_download_builds
class: !function class_utils.StandinTask
task: classbench
test_split: validation
output_type: generate_until
doc_to_visual: !function class_utils.doc_to_visual
doc_to_text: !function class_utils.doc_to_text
doc_to_target: answer
generation_kwargs:
  max_new_tokens: 16
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("class_task")
    env = offline_env(root)
    base = root / "base"
    (base / "videos").mkdir(parents=True)
    specs = {vid: video_spec(vid, n_frames=40) for vid in VIDEOS}
    rows = []
    for vid, spec in specs.items():
        encode_video(base / "videos" / f"{vid}.mp4", render_frames(spec, 0, 160, 120), 160, 120, 8)
        choices = sorted({*spec.scenes, spec.border, "white", "black"} - {spec.scenes[0]})[:3] + [spec.scenes[0]]
        choices = sorted(choices)
        rows.append({"sample_id": vid, "task_goal": "Which colour does the centre square show first?",
                     **{f"choice_{c}": text for c, text in zip("abcd", choices, strict=True)},
                     "answer": "ABCD"[choices.index(spec.scenes[0])]})  # fmt: skip
    (base / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (base / f"{TASK}.yaml").write_text(YAML)
    (base / "class_utils.py").write_text(UTILS)
    out = root / "derived"
    assert main(["derive", TASK, "--include_path", str(base), "--out", str(out)]) == 0
    # the text family through its group: a class task's tags are groups (lmms-eval registers no tag of a class task)
    tasks = f"{TASK}_vdg_orig,{TASK}_vdg_black,{TASK}_vdg_text,{TASK}_vdg_probe"
    run = lmms_eval(env, root / "runs" / "probe", out, "vdg_probe", tasks)
    return {"out": out, "run": run, "env": env, "rows": rows, "specs": specs}


def test_the_class_task_derives_with_its_lettered_option_fields(world):
    spec = DeriveSpec.from_json((world["out"] / TASK / "vdg_derive.json").read_text())
    assert (spec.fields.options, spec.fields.question_id, spec.scoring) == ("choice_{a}", "sample_id", "letter")
    assert "class: !function" in (world["out"] / TASK / "_default_template_yaml").read_text()
    group = (world["out"] / TASK / f"{TASK}_vdg_text.yaml").read_text()
    assert f"group: {TASK}_vdg_text" in group and f"- {TASK}_vdg_abstain" in group


def test_the_class_s_own_download_gave_every_question_and_each_is_scored(world):
    frame = load_frame([f"probe={world['run']}"])
    probes = {"options_shuffled", "none_option", "no_question", "video_only", "numbered"}
    assert set(frame.condition) == {"orig", "black", "abstain", "open", *probes}
    # EgoPlan's question is built from its task goal, in no field: it cannot be left out
    unasked = frame[frame.condition.isin(["no_question", "video_only"])]
    assert unasked.error.str.contains("its question text is in no field vdg can leave out").all()
    asked = frame[~frame.condition.isin(["open", "no_question", "video_only"])]  # open answers wait for the judge
    assert (asked.status == "ok").all(), asked[asked.status != "ok"].error.tolist()
    by = frame.set_index(["condition", "question_id"])
    for row in world["rows"]:
        assert by.at[("orig", row["sample_id"]), "pred"] == row["answer"]  # the first colour the probe sees
        assert by.at[("orig", row["sample_id"]), "correct"]
        assert by.at[("black", row["sample_id"]), "pred"] == "A"  # no signal: the text prior, the first option
    # EgoPlan's builder shows four fixed letters: an abstain option is asked in vdg's generic layout, as E
    assert set(by.loc["abstain", "abstain_letter"]) == {"E"}
    for row in world["rows"]:  # the shuffled options written back into choice_a ... choice_d: still read by colour
        shuffled = by.loc[("options_shuffled", row["sample_id"])]
        assert shuffled.correct and shuffled.shuffled_from[ord(shuffled.pred) - 65] == row["answer"]


def test_the_report_reads_the_class_task(world, tmp_path, monkeypatch):
    for key in ("VDG_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(key, world["env"][key])
    out = tmp_path / "report"
    assert main(["report", f"probe={world['run']}", "--out", str(out), "--no-plots", "--workers", "1"]) == 0
    per_question = pd.read_csv(out / "vdg_per_question.csv")
    assert sorted(per_question["question_id"]) == sorted(VIDEOS)
    expected = [1.0 - float(row["answer"] == "A") for row in sorted(world["rows"], key=lambda r: r["sample_id"])]
    assert per_question.sort_values("question_id")["vdg"].tolist() == expected
