"""Generated stand-ins for Video-MME, MVBench and EgoSchema: their hub column layout, generated videos.

``write_standins(root)`` lays them out as a local copy under ``$VDG_LOCAL_DATA`` (see
``vdg_tasks.lmms.dataset_fields``): question files with the hub dataset's columns, videos in the folders lmms-eval's
own lookups use. Every question's answer is known, so a test can check scoring; MVBench gets one
question per sub-task (3 to 5 candidates), episodic_reasoning as a folder of frames (as MVBench ships it).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from tests.helpers.videos import write_indexed_source
from vdg_tasks.data.benchmarks import MVBENCH_SUB_TASKS

LETTERS = "ABCDE"


def _video(path: Path, n_frames: int = 40) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_indexed_source(path, n_frames)
    return path


def videomme(root: Path) -> list[dict]:
    """Two videos, two questions each, in Video-MME's parquet layout (``videomme/test-*.parquet``)."""
    folder = root / "videomme"
    rows = []
    for v, video_id in enumerate(("vmA1", "vmB2")):
        _video(folder / "videos" / f"{video_id}.mp4")
        for q in range(2):
            rows.append(
                {
                    "video_id": f"{v + 1:03d}",
                    "duration": "short",
                    "domain": "Knowledge",
                    "sub_category": "Humanity & History",
                    "url": f"https://www.youtube.com/watch?v={video_id}",
                    "videoID": video_id,
                    "question_id": f"{v + 1:03d}-{q + 1}",
                    "task_type": ("Counting Problem", "Temporal Reasoning")[q],
                    "question": f"Question {q + 1} about video {video_id}?",
                    "options": [f"{L}. option {L.lower()}" for L in "ABCD"],
                    "answer": "ABCD"[(v + q) % 4],
                }
            )
    (folder / "videomme").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(folder / "videomme" / "test-00000-of-00001.parquet")
    return rows


def mvbench(root: Path) -> dict[str, list[dict]]:
    """One question per sub-task in MVBench's ``json/<sub_task>.json`` layout; 3, 4 or 5 candidates."""
    from lmms_eval.tasks.mvbench.utils import DATA_LIST

    folder = root / "mvbench"
    out: dict[str, list[dict]] = {}
    for i, sub in enumerate(MVBENCH_SUB_TASKS):
        n = 3 + i % 3
        candidates = [f"{sub} candidate {j}" for j in range(n)]
        if sub == "episodic_reasoning":  # TVQA frames at 3 fps, a folder per clip
            name = "s01e01_seg02_clip_00"
            frames = folder / "videos" / DATA_LIST[sub] / name
            frames.mkdir(parents=True, exist_ok=True)
            for k in range(12):
                Image.fromarray(np.full((90, 160, 3), 20 * k, dtype=np.uint8)).save(frames / f"{k + 1:05d}.jpg")
        else:
            name = f"{sub}_clip.mp4"
            _video(folder / "videos" / DATA_LIST[sub] / name, 20 + i)
        docs = [
            {
                "video": name,
                "question": f"What happens in this {sub} clip?",
                "candidates": candidates,
                "answer": candidates[(n - 1) if i % 2 else 0],
            }
        ]
        (folder / "json").mkdir(parents=True, exist_ok=True)
        (folder / "json" / f"{sub}.json").write_text(json.dumps(docs))
        out[sub] = docs
    return out


def egoschema(root: Path) -> dict[str, list[dict]]:
    """Three questions in EgoSchema's layout: ``Subset/`` with answers (0-4), ``GENERATION/`` without."""
    folder = root / "egoschema"
    subset = []
    for i in range(3):
        idx = f"ego{i:02d}-0000-aaaa"
        _video(folder / "videos" / f"{idx}.mp4", 30)
        subset.append(
            {
                "question_idx": f"q-{idx}",
                "question": f"What is c doing in clip {i}?",
                "video_idx": idx,
                "option": [f"{L}. c does thing {L.lower()}" for L in LETTERS],
                "answer": str((4, 0, 2)[i]),
            }
        )
    full = [{**d, "answer": ""} for d in subset]
    for name, rows in (("Subset", subset), ("GENERATION", full)):
        (folder / name).mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_parquet(folder / name / "test-00000-of-00001.parquet")
    return {"Subset": subset, "GENERATION": full}


def write_standins(root: Path) -> dict[str, object]:
    root.mkdir(parents=True, exist_ok=True)
    return {"videomme": videomme(root), "mvbench": mvbench(root), "egoschema": egoschema(root)}


def local_task_yaml(
    task: str, data: Path, utils: str, target: str, kwargs: dict[str, object], metric: str | None = None
) -> str:
    """The config of a stand-in task over a local jsonl ``data``: its ``doc_to_visual``, ``doc_to_text`` (and, with
    ``metric``, ``process_results`` averaged per question) in ``<utils>.py`` beside it, ``doc_to_target`` the field
    ``target``, ``kwargs`` its default ``lmms_eval_specific_kwargs``."""
    lines = [
        f"task: {task}", "dataset_path: json", "dataset_kwargs:", "  data_files:", f"    test: {data}",
        "test_split: test", "output_type: generate_until", f"doc_to_visual: !function {utils}.doc_to_visual",
        f"doc_to_text: !function {utils}.doc_to_text", f"doc_to_target: {target}",
    ]  # fmt: skip
    if metric is not None:
        lines += [f"process_results: !function {utils}.process_results", "metric_list:", f"  - metric: {metric}"]
        lines += ["    aggregation: mean", "    higher_is_better: true"]
    lines += ["generation_kwargs:", "  max_new_tokens: 16", "lmms_eval_specific_kwargs:", "  default:"]
    return "\n".join([*lines, *(f"    {key}: {json.dumps(value)}" for key, value in kwargs.items())]) + "\n"
