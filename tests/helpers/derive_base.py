"""A base lmms-eval video multiple-choice task unlike Video-MME, for `vdg derive` to derive."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.videos import write_indexed_source

BASE_TASK = "vdgdemo_mc"
BASE_YAML = f"""\
task: {BASE_TASK}
dataset_path: json
dataset_kwargs:
  data_files:
    test: questions.jsonl
test_split: test
output_type: generate_until
doc_to_visual: !function utils.demo_doc_to_visual
doc_to_text: !function utils.demo_doc_to_text
doc_to_target: !function utils.demo_doc_to_target
process_results: !function utils.demo_process_results
metric_list:
  - metric: demo_acc
    aggregation: mean
    higher_is_better: true
generation_kwargs:
  max_new_tokens: 16
  do_sample: false
lmms_eval_specific_kwargs:
  default:
    pre_prompt: ""
    post_prompt: "Reply with the letter of the best option."
"""
BASE_UTILS = """\
import re
from pathlib import Path

VIDEOS = Path(__file__).parent / "videos"


def demo_doc_to_visual(doc):
    return [str(VIDEOS / f"{doc['clip']}.mp4")]


def demo_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kwargs = lmms_eval_specific_kwargs or {}
    lines = [doc["question"], *(f"({chr(65 + i)}) {c}" for i, c in enumerate(doc["candidates"]))]
    return kwargs.get("pre_prompt", "") + "\\n".join(lines) + "\\n" + kwargs.get("post_prompt", "")


def demo_doc_to_target(doc):
    return doc["answer"]


def demo_process_results(doc, results):
    letters = re.findall(r"\\b([A-H])\\b", results[0])
    pred = "ABCDEFGH".index(letters[-1]) if letters else -1
    return {"demo_acc": float(pred == doc["candidates"].index(doc["answer"])), "demo_log": {doc["qid"]: results[0]}}
"""
#: (qid, clip, candidates, answer as the option's text, category); the answer's letter in the comment.
QUESTIONS = [
    ("q0", "c0", ["red", "blue", "green"], "blue", "colour"),  # B
    ("q1", "c0", ["one", "two", "three", "four"], "one", "count"),  # A
    ("q2", "c1", ["cat", "dog"], "dog", "object"),  # B
    ("q3", "c1", ["up", "down", "left"], "left", "motion"),  # C
    ("q4", "c2", ["early", "late"], "late", "time"),  # B
    ("q5", "c2", ["yes", "no"], "maybe", "time"),  # none: no ground truth -> error rows
]


def write_base_task(folder: Path) -> Path:
    """A task folder unlike Video-MME: id ``qid``, options ``candidates``, the answer as its text."""
    (folder / "videos").mkdir(parents=True)
    (folder / f"{BASE_TASK}.yaml").write_text(BASE_YAML)
    (folder / "utils.py").write_text(BASE_UTILS)
    for clip in sorted({q[1] for q in QUESTIONS}):
        write_indexed_source(folder / "videos" / f"{clip}.mp4", n_frames=20, fps=10)
    rows = [
        {"qid": q, "clip": c, "question": f"Question {q}?", "candidates": o, "answer": a, "category": t}
        for q, c, o, a, t in QUESTIONS
    ]
    (folder / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder
