"""Writes lmms-eval-shaped output folders (results json + samples jsonl) for report tests."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path


def sample(
    question_id,
    condition,
    pred,
    answer="A",
    task_type="T1",
    status=None,
    benchmark="vdgsynth",
    video_id=None,
    error=None,
):
    status = status or ("error" if error else ("ok" if pred else "unparsed"))
    return {
        "doc_id": 0,
        "doc_hash": "constant",
        "vdg": {
            "benchmark": benchmark,
            "condition": condition,
            "question_id": question_id,
            "video_id": video_id or question_id.split("-")[0],
            "task_type": task_type,
            "duration": "short",
            "answer": answer,
            "pred": pred,
            "status": status,
            "error": error,
            "correct": None if status == "error" else pred == answer,
        },
    }


def write_run(
    folder: Path,
    model: str,
    samples_by_task: dict[str, Iterable[dict]],
    model_args: str = "",
    stamp: str = "20261130_120000",
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config = {"model": model, "model_args": model_args, "gen_kwargs": ""}
    (folder / f"{stamp}_results.json").write_text(json.dumps({"config": config, "results": {}}))
    for task, samples in samples_by_task.items():
        with (folder / f"{stamp}_samples_{task}.jsonl").open("w") as f:
            for s in samples:
                f.write(json.dumps(s) + "\n")
    return folder


def two_conditions(tmp_path: Path, model: str = "m", model_args: str = "", black_ids=("q1-1", "q2-1")) -> Path:
    """A run of ``model`` on vdgsynth orig (q1-1 answered A, q2-1 unparsed) and black (``black_ids`` answered B)."""
    return write_run(
        tmp_path / model / model_args.replace("=", "_"),
        model,
        {
            "vdgsynth_vdg_orig": [sample("q1-1", "orig", "A"), sample("q2-1", "orig", None)],
            "vdgsynth_vdg_black": [sample(q, "black", "B") for q in black_ids],
        },
        model_args=model_args,
    )
