"""Running the real lmms-eval CLI offline, and a vdgsynth benchmark with extra source videos."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate

BIN = Path(sys.executable).parent


def lmms_eval(env: dict[str, str], out: Path, tasks_dir: Path, model: str, tasks: str, *extra: str) -> Path:
    cmd = [
        str(BIN / "lmms-eval"),
        "--model",
        model,
        *extra,
        "--include_path",
        str(tasks_dir),
        "--tasks",
        tasks,
        "--log_samples",
        "--output_path",
        str(out),
        "--verbosity",
        "WARNING",
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    # cli_evaluate exits 0 even when a task fails: the files are the evidence.
    logs = sorted(out.rglob("*_samples_*.jsonl"))
    assert logs, f"lmms-eval wrote no samples:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return out


def offline_env(root: Path) -> dict[str, str]:
    """The environment of an lmms-eval run here: a cache and HF home under ``root``, nothing downloaded."""
    return {
        **os.environ,
        "VDG_CACHE": str(root / "cache"),
        "HF_HOME": str(root / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "FORCE_QWENVL_VIDEO_READER": "decord",
        "TOKENIZERS_PARALLELISM": "false",
    }


def synth_with_sources(root: Path, sources: dict[str, Path], kind: str, n_videos: int) -> list[dict]:
    """vdgsynth questions (returned) plus one question per source, ``<kind>-<name>`` of task type ``kind``,
    and the task YAMLs over all of them under ``root/tasks``."""
    jsonl = generate(root / "data", n_videos=n_videos, seed=0)
    good = [json.loads(line) for line in jsonl.read_text().splitlines()]
    with jsonl.open("a") as f:
        for name, path in sources.items():
            ident = f"{kind}-{name}"
            question = {"question_id": ident, "videoID": ident, "video_id": ident, "video": str(path)}
            question |= {"task_type": kind, "duration": "short", "question": "What colour is the border?"}
            question |= {"options": ["A. red", "B. green", "C. blue", "D. white"], "answer": "A"}
            f.write(json.dumps(question) + "\n")
    write_all(root / "tasks", synth_data=str(jsonl))
    return good
