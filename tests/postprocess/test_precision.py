"""Runs of one model at two precisions: both reported, the quantized one marked, never pooled."""

from __future__ import annotations

import pandas as pd
import pytest

from postprocess.reading.files import LogError
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.reading.run_labels import precision
from tests.helpers.fakelogs import sample, write_run
from vdg_tasks.cli import main as vdg_main

QIDS = [f"v{i}-{j}" for i in range(6) for j in (1, 2)]


def _run(folder, model_args: str, right_in_orig: int):
    orig = [sample(q, "orig", "A" if i < right_in_orig else "B") for i, q in enumerate(QIDS)]
    black = [sample(q, "black", "A" if i < 3 else "B") for i, q in enumerate(QIDS)]
    tasks = {"vdgsynth_vdg_orig": orig, "vdgsynth_vdg_black": black}
    return write_run(folder, "vdg_qwen2_vl", tasks, model_args=model_args)


@pytest.fixture
def runs(tmp_path):
    bf16 = _run(tmp_path / "bf16", "pretrained=/models/Qwen2-VL-7B,dtype=bf16,max_num_frames=32", 10)
    nf4 = _run(tmp_path / "nf4", "pretrained=/models/Qwen2-VL-7B,quantization=nf4,max_num_frames=32", 4)
    return bf16, nf4


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"quantization": "nf4"}, "nf4"),
        ({"quantization": "INT8", "dtype": "bf16"}, "int8"),
        ({"load_in_4bit": "True"}, "nf4"),
        ({"load_in_8bit": "true"}, "int8"),
        ({"torch_dtype": "bfloat16"}, "bf16"),
        ({"dtype": "float16"}, "fp16"),
        ({"quantization": "none", "dtype": "fp32"}, "fp32"),
        ({}, ""),
    ],
)
def test_precision_is_read_from_the_model_args(args, expected):
    assert precision(args) == expected


def test_two_precisions_are_two_marked_rows_never_pooled(runs, tmp_path):
    bf16, nf4 = runs
    frame = load_frame([bf16, nf4])
    labels = dict(zip(frame.precision, frame.model, strict=False))
    assert labels == {"bf16": "vdg_qwen2_vl:Qwen2-VL-7B", "nf4": "vdg_qwen2_vl:Qwen2-VL-7B†nf4"}
    assert set(frame.frames) == {32}
    out = tmp_path / "report"
    assert vdg_main(["report", str(bf16), str(nf4), "--out", str(out), "--no-plots", "--resamples", "100"]) == 0
    accuracy = pd.read_csv(out / "accuracy.csv")
    orig = accuracy[(accuracy.condition == "orig") & (accuracy.task_type == "Overall")].set_index("model").acc
    assert orig.to_dict() == pytest.approx(
        {"vdg_qwen2_vl:Qwen2-VL-7B": 10 / 12, "vdg_qwen2_vl:Qwen2-VL-7B†nf4": 4 / 12}
    )
    summary = pd.read_csv(out / "summary.csv")
    assert sorted(summary.model) == ["vdg_qwen2_vl:Qwen2-VL-7B", "vdg_qwen2_vl:Qwen2-VL-7B†nf4"]
    md = (out / "report.md").read_text()
    assert "† quantized: vdg_qwen2_vl:Qwen2-VL-7B†nf4 ran with 4- or 8-bit weights" in md
    assert "† quantized" in (out / "report.html").read_text()


def test_a_label_given_by_hand_is_marked_too_and_one_label_never_holds_two_settings(runs, tmp_path):
    bf16, nf4 = runs
    assert set(load_frame([f"qwen={bf16}", f"qwen={nf4}"]).model) == {"qwen", "qwen†nf4"}
    fewer_frames = _run(tmp_path / "f16", "pretrained=/models/Qwen2-VL-7B,dtype=bf16,max_num_frames=16", 10)
    with pytest.raises(LogError, match="'qwen' was run with different settings"):
        load_frame([f"qwen={bf16}", f"qwen={fewer_frames}"])
