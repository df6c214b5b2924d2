"""Smoke tests: lmms-eval's own ``qwen2_vl`` class runs on a tiny local Qwen2-VL, on the CPU.

1. ``test_qwen2_vl_generate_until_on_video``: instantiate the class ``--model qwen2_vl``
   resolves to and call ``generate_until`` on one fake request whose visual is a real mp4.
2. ``test_lmms_eval_cli_end_to_end``: run the real ``lmms-eval`` console script on a
   two-document local task (json dataset, ``!function utils.*`` beside the YAML), then check
   the results json and the samples jsonl it writes (``cli_evaluate`` exits 0 even when the
   evaluation raised, so the files are the evidence).

Command line and environment that worked (lmms-eval 0.7.3, transformers 5.x, CPU only)::

    HF_HOME=<tmp>/hf HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    FORCE_QWENVL_VIDEO_READER=decord TOKENIZERS_PARALLELISM=false \
    .venv/bin/lmms-eval --model qwen2_vl \
        --model_args pretrained=<tiny dir>,device=cpu,device_map=cpu,max_num_frames=8,max_pixels=12544 \
        --tasks vdg_tiny_smoke --include_path <tmp>/tasks --output_path <tmp>/out \
        --log_samples --batch_size 1 --verbosity DEBUG
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.tiny_qwen2vl import TINY_QWEN_MODEL_ARGS, build_tiny_qwen2vl

REPO = Path(__file__).resolve().parents[2]
TASK_NAME = "vdg_tiny_smoke"


def _write_video(path: Path, width: int = 112, height: int = 112, fps: int = 8, seconds: int = 2) -> Path:
    import av
    import numpy as np

    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i in range(fps * seconds):
            img = np.zeros((height, width, 3), dtype=np.uint8)
            img[..., 0] = (i * 16) % 256
            img[: (i + 1) * height // (fps * seconds), :, 1] = 200
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HF_HOME=str(tmp_path / "hf"),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        # torchvision 0.29 has no io.read_video; qwen_vl_utils would pick decord anyway
        # (torchcodec is not installed), this makes the choice explicit.
        FORCE_QWENVL_VIDEO_READER="decord",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory) -> Path:
    return build_tiny_qwen2vl(tmp_path_factory.mktemp("tiny_qwen2vl"))


@pytest.fixture(scope="module")
def tiny_video(tmp_path_factory) -> Path:
    return _write_video(tmp_path_factory.mktemp("video") / "clip.mp4")


@pytest.mark.slow
def test_qwen2_vl_generate_until_on_video(tiny_model_dir: Path, tiny_video: Path, monkeypatch):
    # qwen_vl_utils reads this at import; with torchcodec absent it picks decord anyway.
    monkeypatch.setenv("FORCE_QWENVL_VIDEO_READER", "decord")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    from lmms_eval.api.instance import Instance
    from lmms_eval.models import get_model

    cls = get_model("qwen2_vl")
    assert cls.__module__ == "lmms_eval.models.simple.qwen2_vl" and cls.__name__ == "Qwen2_VL"

    # Same parsing as the CLI (simple_parse_args_string turns "8" into 8).
    model = cls.create_from_arg_string(f"pretrained={tiny_model_dir},{TINY_QWEN_MODEL_ARGS}", {"batch_size": 1})

    task, split, doc_id = "tiny", "test", 0
    doc = {"video": str(tiny_video), "question": "What happens in the video?"}
    model.task_dict = {task: {split: {doc_id: doc}}}

    def doc_to_visual(d):
        return [d["video"]]

    req = Instance(
        request_type="generate_until",
        arguments=(
            doc["question"],
            {"max_new_tokens": 5, "until": ["\n\n"]},
            doc_to_visual,
            doc_id,
            task,
            split,
        ),
        idx=0,
        metadata={"task": task, "doc_id": doc_id, "repeats": 1},
    )
    # Qwen2_VL logs and falls back to text only when a video cannot be decoded: check that
    # the frames really reached the model.
    seen = {}
    real_generate = model._model.generate

    def spy_generate(**kwargs):
        seen.update(kwargs)
        return real_generate(**kwargs)

    monkeypatch.setattr(model._model, "generate", spy_generate)

    out = model.generate_until([req])
    assert isinstance(out, list) and len(out) == 1
    assert isinstance(out[0], str)

    assert "pixel_values_videos" in seen, sorted(seen)
    t, h, w = seen["video_grid_thw"].tolist()[0]
    # 16 frames, read at qwen_vl_utils' default 2 fps -> 4 frames -> 2 temporal patches; 112x112
    # (max_pixels=12544) -> 8x8 patches of 14: grid (2, 8, 8), 2*8*8/4 = 32 <|video_pad|> tokens.
    assert (t, h, w) == (2, 8, 8)
    n_video_tokens = int((seen["input_ids"] == model._model.config.video_token_id).sum())
    assert n_video_tokens == t * h * w // 4


_TASK_YAML = """\
task: {task}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: answer
generation_kwargs:
  max_new_tokens: 4
  until:
    - "\\n\\n"
process_results: !function utils.process_results
metric_list:
  - metric: exact
    aggregation: mean
    higher_is_better: true
metadata:
  version: 0.0
"""

_UTILS_PY = """\
def doc_to_visual(doc):
    return [doc["video"]]


def doc_to_text(doc):
    return doc["question"] + "\\nAnswer with the option's letter."


def process_results(doc, results):
    pred = results[0].strip()
    return {
        "exact": float(pred == doc["answer"]),
        "vdg_row": {"question_id": doc["question_id"], "pred": pred, "answer": doc["answer"]},
    }
"""


@pytest.mark.slow
def test_lmms_eval_cli_end_to_end(tiny_model_dir: Path, tiny_video: Path, tmp_path: Path):
    task_dir = tmp_path / "tasks"
    task_dir.mkdir()
    data = tmp_path / "data.jsonl"
    rows = [
        {"question_id": "q0", "video": str(tiny_video), "question": "Moves? A. bar B. dot", "answer": "A"},
        {"question_id": "q1", "video": str(tiny_video), "question": "Colour? A. red B. green", "answer": "B"},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (task_dir / f"{TASK_NAME}.yaml").write_text(_TASK_YAML.format(task=TASK_NAME, data=data))
    (task_dir / "utils.py").write_text(_UTILS_PY)
    out_dir = tmp_path / "out"

    exe = Path(sys.executable).with_name("lmms-eval")
    cmd = [
        str(exe) if exe.exists() else sys.executable,
        *([] if exe.exists() else ["-m", "lmms_eval"]),
        "--model", "qwen2_vl",
        "--model_args", f"pretrained={tiny_model_dir},{TINY_QWEN_MODEL_ARGS}",
        "--tasks", TASK_NAME,
        "--include_path", str(task_dir),
        "--output_path", str(out_dir),
        "--log_samples",
        "--batch_size", "1",
        "--verbosity", "DEBUG",
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    log = textwrap.shorten(proc.stdout[-3000:], 3000) + "\n---stderr---\n" + proc.stderr[-6000:]
    assert proc.returncode == 0, log
    # lmms-eval's loguru sink is stdout; Qwen2_VL logs decode failures and goes on text-only.
    assert "Failed to process video" not in proc.stdout + proc.stderr, log
    assert "Traceback" not in proc.stdout + proc.stderr, log

    results = sorted(out_dir.rglob("*_results.json"))
    samples = sorted(out_dir.rglob(f"*_samples_{TASK_NAME}.jsonl"))
    assert len(results) == 1 and len(samples) == 1, f"{sorted(out_dir.rglob('*'))}\n{log}"

    res = json.loads(results[0].read_text())
    assert "exact,none" in res["results"][TASK_NAME], res["results"]

    records = [json.loads(line) for line in samples[0].read_text().splitlines() if line.strip()]
    assert len(records) == 2
    assert sorted(r["vdg_row"]["question_id"] for r in records) == ["q0", "q1"]
    for r in records:
        # 0.7.3 logs filtered_resps as the bare string (not a list) for generate_until.
        resp = r["filtered_resps"]
        assert isinstance(resp if isinstance(resp, str) else resp[0], str)
        assert {"doc_id", "target", "input", "exact"} <= set(r)
