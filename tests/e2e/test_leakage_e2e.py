"""The backbone arm through the real lmms-eval CLI: a tiny causal LM (random weights, a local tokenizer) answers
``vdgsynth_vdg_blind`` as ``vdg_text_lm``; ``vdg_probe`` is the LVLM (orig and blind). ``vdg report --backbone``
gives the leakage table, whose values equal the counts made here from the samples logs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers.runs import lmms_eval, offline_env
from tests.helpers.tiny_causal_lm import TINY_LM_MODEL_ARGS, build_tiny_causal_lm
from vdg_tasks.cli import main as vdg_main
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate

pytestmark = pytest.mark.slow

N_VIDEOS = 4
BACKBONE = "vdg_text_lm:Qwen2-7B-Instruct"


def _correct(run: Path, task: str) -> dict[str, bool]:
    """question_id -> correct, read from the vdg record of each sample of ``task`` in ``run``."""
    (log,) = sorted(run.rglob(f"*_samples_{task}.jsonl"))
    records = [json.loads(line)["vdg"] for line in log.read_text().splitlines() if line.strip()]
    assert records and all(r["status"] in ("ok", "unparsed") for r in records), records[:3]
    return {r["question_id"]: bool(r["correct"]) for r in records}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("leakage")
    jsonl = generate(root / "data", n_videos=N_VIDEOS, seed=0)
    write_all(root / "tasks", synth_data=str(jsonl))
    env = offline_env(root) | {"TRANSFORMERS_OFFLINE": "1"}
    tiny = build_tiny_causal_lm(root / "models")
    runs = root / "runs"
    lmms_eval(env, runs / "probe", root / "tasks", "vdg_probe", "vdgsynth_vdg_orig,vdgsynth_vdg_blind")
    lmms_eval(
        env,
        runs / "text",
        root / "tasks",
        "vdg_text_lm",
        "vdgsynth_vdg_blind",
        "--model_args",
        f"pretrained={tiny},{TINY_LM_MODEL_ARGS}",
    )
    return {"root": root, "probe": runs / "probe", "text": runs / "text"}


def test_the_leakage_table_equals_the_counts_of_the_logs(world):
    out = world["root"] / "report"
    args = [f"probe={world['probe']}", str(world["text"]), "--backbone", f"probe={BACKBONE}"]
    assert vdg_main(["report", *args, "--out", str(out), "--min-stratum", "5", "--no-plots"]) == 0
    table = pd.read_csv(out / "leakage.csv")
    orig = _correct(world["probe"], "vdgsynth_vdg_orig")
    blind = _correct(world["probe"], "vdgsynth_vdg_blind")
    backbone = _correct(world["text"], "vdgsynth_vdg_blind")
    questions = sorted(blind)
    assert sorted(backbone) == questions == sorted(orig)
    n = len(questions)
    blind_only = sum(blind[q] and not backbone[q] for q in questions)
    backbone_only = sum(backbone[q] and not blind[q] for q in questions)
    row = table.set_index("task_type").loc["Overall"]
    assert (row.model, row.backbone, row.pairing, row.arms) == ("probe", BACKBONE, "--backbone", "orig,blind,backbone")
    assert (row.n, row.n_blind_only, row.n_backbone_only) == (n, blind_only, backbone_only)
    np.testing.assert_allclose(row.acc_orig, sum(orig.values()) / n, atol=1e-12)
    np.testing.assert_allclose(row.acc_blind, sum(blind.values()) / n, atol=1e-12)
    np.testing.assert_allclose(row.acc_backbone, sum(backbone.values()) / n, atol=1e-12)
    np.testing.assert_allclose(row.leakage, (blind_only - backbone_only) / n, atol=1e-12)
    np.testing.assert_allclose(row.leakage_mmstar, max(0, blind_only - backbone_only) / n, atol=1e-12)
    np.testing.assert_allclose(row.text_prior, sum(backbone.values()) / n - 0.25, atol=1e-12)  # 4 options each
    assert row.ci_low <= row.leakage <= row.ci_high
    findings = pd.read_csv(out / "findings.csv")
    assert (findings.topic == "leakage").sum() == 1
    # the tiny model answers every question with a letter (its output layer names only A-D)
    text_coverage = pd.read_csv(out / "coverage.csv").set_index("model").loc[BACKBONE]
    assert text_coverage.n_unparsed == 0 and text_coverage.n == n
