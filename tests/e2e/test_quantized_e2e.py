"""vdg_qwen2_vl with quantization=nf4 on the CPU: real bitsandbytes layers, then the real lmms-eval CLI.

The model is the tiny, randomly initialised Qwen2-VL of ``tests/helpers/tiny_qwen2vl.py`` (answers are
noise; the point is that a 4-bit model goes through lmms-eval's own Qwen2_VL prompting, video
reading and generation, and the run says how it was loaded). bitsandbytes >= 0.50 runs 4-bit on the CPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.runs import lmms_eval, offline_env
from tests.helpers.tiny_qwen2vl import TINY_QWEN_MODEL_ARGS, build_tiny_qwen2vl
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate

pytestmark = pytest.mark.slow
bnb = pytest.importorskip("bitsandbytes")

TASK = "vdgsynth_vdg_orig"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    return build_tiny_qwen2vl(tmp_path_factory.mktemp("tiny-qwen2vl"))


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("vdgsynth")
    jsonl = generate(root / "data", n_videos=2, seed=0)  # 8 questions
    write_all(root / "tasks", synth_data=str(jsonl))
    return {"root": root, "tasks": root / "tasks", "docs": [json.loads(x) for x in jsonl.read_text().splitlines()]}


def test_nf4_load_puts_linear4bit_layers_in_the_language_model(tiny_dir, synth, monkeypatch):
    import torch
    from lmms_eval.api.instance import Instance
    from lmms_eval.models import get_model
    from loguru import logger

    monkeypatch.setenv("FORCE_QWENVL_VIDEO_READER", "decord")
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="INFO")
    try:
        model = get_model("vdg_qwen2_vl").create_from_arg_string(
            f"pretrained={tiny_dir},quantization=nf4,{TINY_QWEN_MODEL_ARGS}", {"batch_size": 1}
        )
    finally:
        logger.remove(sink)

    language_model = model.model.model.language_model
    linears = {name: type(m) for name, m in language_model.named_modules() if isinstance(m, torch.nn.Linear)}
    assert len(linears) == 2 * 7, linears  # q, k, v, o, gate, up, down in each of the two layers
    assert all(cls is bnb.nn.Linear4bit for cls in linears.values()), linears
    first = language_model.layers[0].self_attn.q_proj
    assert first.weight.quant_state.quant_type == "nf4" and first.weight.quant_state.nested  # double quant
    assert model.model.config.quantization_config.load_in_4bit
    assert (model.vdg_precision, model.vdg_quantization, model.vdg_compute_dtype) == ("nf4", "nf4", "fp32")
    assert any("vdg_qwen2_vl: loaded Qwen2_VL at precision nf4" in line for line in lines), lines

    # One question with its video through the inherited generate_until: the frames reach the 4-bit model.
    doc = synth["docs"][0]
    model.task_dict = {"t": {"test": {0: doc}}}
    seen: dict = {}
    real_generate = model._model.generate

    def spy_generate(**kwargs):
        seen.update(kwargs)
        return real_generate(**kwargs)

    monkeypatch.setattr(model._model, "generate", spy_generate)
    request = Instance(
        request_type="generate_until",
        arguments=(doc["question"], {"max_new_tokens": 3, "until": ["\n\n"]}, lambda d: [d["video"]], 0, "t", "test"),
        idx=0,
        metadata={"task": "t", "doc_id": 0, "repeats": 1},
    )
    (answer,) = model.generate_until([request])
    assert isinstance(answer, str)
    assert "pixel_values_videos" in seen, sorted(seen)


def test_nf4_through_the_lmms_eval_cli(tiny_dir, synth, tmp_path):
    env = offline_env(tmp_path) | {"TRANSFORMERS_OFFLINE": "1"}
    out = lmms_eval(
        env,
        tmp_path / "out",
        synth["tasks"],
        "vdg_qwen2_vl",
        TASK,
        "--model_args",
        f"pretrained={tiny_dir},quantization=nf4,{TINY_QWEN_MODEL_ARGS}",
        "--limit",
        "4",
    )
    samples = sorted(out.rglob(f"*_samples_{TASK}.jsonl"))
    results = sorted(out.rglob("*_results.json"))
    assert len(samples) == 1 and len(results) == 1, sorted(out.rglob("*"))

    records = [json.loads(line) for line in samples[0].read_text().splitlines() if line.strip()]
    assert len(records) == 4
    statuses = [r["vdg"]["status"] for r in records]
    assert set(statuses) <= {"ok", "unparsed"}, [r["vdg"] for r in records]
    assert len({r["vdg"]["question_id"] for r in records}) == 4

    config = json.loads(results[0].read_text())["config"]
    assert config["model"] == "vdg_qwen2_vl"
    assert "quantization=nf4" in config["model_args"], config["model_args"]
