"""The character-tracking protocol end to end, through the real lmms-eval CLI, on synthetic episodes.

`vdg synth-episodes` -> infinibench_ga_vdg_tracking (C1-C6, C8, C9) -> lmms-eval with vdg_probe in
its three name modes -> a frame sweep with `vdg sweep` (C7) -> `vdg report --judge offline`. The
probe's construction fixes what the report must show: a name-blind probe never changes its letter
when the name changes, a gender-aware one only across genders, a name-aware one whenever the new
character's outfit order is among the options. The vdgsynth text tasks run too, and lmms-eval's own
qwen2_vl (a tiny random-weight model) runs one name-swap and one open-ended task.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postprocess.judge import OFFLINE_LABEL, judge_frame, make_judge
from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.runs import lmms_eval, offline_env
from vdg_tasks.cli import main as vdg_main
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate
from vdg_tasks.vocabulary.conditions import protocol_conditions
from vdg_tasks.vocabulary.drawing import CAST

pytestmark = pytest.mark.slow

N_EPISODES = 3
FRAMES = 16
SWEEP = (8, 32)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("tracking")
    questions = root / "questions.jsonl"
    assert vdg_main(["synth-episodes", "--out", str(root / "episodes"), "--questions", str(questions),
                     "--episodes", str(N_EPISODES)]) == 0  # fmt: skip
    synth = generate(root / "synth", n_videos=2, seed=0)
    write_all(root / "tasks", synth_data=str(synth), infinibench_data=str(questions))
    docs = [json.loads(line) for line in questions.read_text().splitlines()]
    return {"root": root, "tasks": root / "tasks", "env": offline_env(root), "docs": docs}


@pytest.fixture(scope="module")
def runs(world):
    out, env, tasks = world["root"] / "runs", world["env"], world["tasks"]
    probe = f"max_num_frames={FRAMES}"
    swap = "infinibench_ga_vdg_orig,infinibench_ga_vdg_nameswap"
    synth = "vdgsynth_vdg_orig,vdgsynth_vdg_open,vdgsynth_vdg_abstain"

    def run(name: str, task_list: str, model_args: str = "") -> Path:
        extra = ("--model_args", model_args) if model_args else ()
        return lmms_eval(env, out / name, tasks, "vdg_probe", task_list, *extra)

    return {
        "aware": run("aware", "infinibench_ga_vdg_tracking", probe),
        "blind": run("blind", swap, f"{probe},name_mode=blind"),
        "gender": run("gender", swap, f"{probe},name_mode=gender"),
        "synth": run("synth", synth),
    }


@pytest.fixture(scope="module")
def sweep(world, monkeypatch_module):
    out = world["root"] / "sweep"
    for key, value in world["env"].items():
        monkeypatch_module.setenv(key, value)
    frames = ",".join(str(n) for n in SWEEP)
    code = vdg_main(["sweep", "--model", "vdg_probe", "--tasks", "infinibench_ga_vdg_orig,infinibench_ga_vdg_nameswap",
                     "--frames", frames, "--output_path", str(out), "--label", "probe",
                     "--include_path", str(world["tasks"]), "--", "--verbosity", "WARNING"])  # fmt: skip
    assert code == 0
    return {f"probe@{n}f": out / f"frames{n}" for n in SWEEP}


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture(scope="module")
def report(world, runs, sweep):
    out = world["root"] / "report"
    inputs = [f"{k}={v}" for k, v in {**runs, **sweep}.items()]
    assert vdg_main(["report", *inputs, "--out", str(out), "--resamples", "200", "--judge", "offline"]) == 0
    names = ("name_swap", "name_swap_pairs", "tracking_tests", "metadata_chance", "open_ended", "abstention",
             "frame_budget", "accuracy", "letters", "collective", "skipped")  # fmt: skip
    tables = {name: pd.read_csv(out / f"{name}.csv") for name in names}
    return tables | {"md": (out / "report.md").read_text(), "frame": load_frame(inputs), "out": out}


def test_every_protocol_condition_is_logged_for_every_question(world, report):
    frame = report["frame"]
    aware = frame[(frame.model == "aware") & (frame.benchmark == "infinibench_ga")]
    assert set(aware.condition) == set(protocol_conditions("tracking"))
    assert (aware.groupby("condition").question_id.nunique() == len(world["docs"])).all()
    assert (aware.status != "error").all(), aware[aware.status == "error"][["condition", "error"]]
    assert (aware[aware.condition == "open"].status == "open").all()


def test_name_swap_sensitivity_follows_the_probes_name_mode(world, report):
    table = report["name_swap"].set_index(["model", "split"])
    assert table.loc[("blind", "all"), "sensitivity"] == 0  # ignores the name: never changes its letter
    assert table.loc[("gender", "same"), "sensitivity"] == 0  # the same gender: the same figure tracked
    assert table.loc[("gender", "cross"), "sensitivity"] > 0.5
    assert table.loc[("aware", "same"), "sensitivity"] > 0.5 and table.loc[("aware", "cross"), "sensitivity"] > 0.5
    # the split counts the construction implies: the swapped-to character of each question, by gender
    frame = report["frame"]
    swaps = frame[(frame.model == "aware") & (frame.condition == "nameswap")]
    same = int(sum(CAST[r.character] == CAST[r.swap_to] for r in swaps.itertuples()))
    assert table.loc[("aware", "same"), "n"] == same and table.loc[("aware", "cross"), "n"] == len(swaps) - same
    pairs = report["name_swap_pairs"]
    assert set(pairs[pairs.model == "blind"].sensitivity) == {0}


def test_open_answers_are_judged_by_the_labelled_offline_scorer(report):
    table = report["open_ended"].set_index("model")
    row = table.loc["aware"]
    assert row.judge == OFFLINE_LABEL and row.n_open == row.n_mc > 0
    assert 0 < row.fully_correct <= row.n_open and row.gap == pytest.approx(row.open_score - row.mc_acc)
    assert OFFLINE_LABEL in report["md"]
    frame = judge_frame(report["frame"], make_judge("offline"))
    judged = frame[(frame.status == "open")]
    assert judged.judge_score.isin([0, 0.5, 1]).all() and (judged.judge == OFFLINE_LABEL).all()
    assert frame[frame.status != "open"].judge_score.isna().all()


def test_oracle_frames_recover_what_uniform_sampling_misses(report):
    tests = report["tracking_tests"].set_index(["model", "comparison"])
    oracle = tests.loc[("aware", "oracle")]
    assert oracle.acc_a == 1 and oracle.acc_a >= oracle.acc_b  # one frame per window: every outfit seen
    assert oracle.mean_spacing_s == pytest.approx(24 / FRAMES)  # 24 s episodes, 16 uniform frames
    full = tests.loc[("aware", "full_vs_text")]
    assert full.acc_a > full.acc_b and full.b10 > 0 and full.p_mcnemar < 0.05


def test_metadata_abstention_and_letters(report):
    meta = report["metadata_chance"].set_index("model").loc["aware"]
    assert meta.chance == pytest.approx(1 / 6)
    abstention = report["abstention"].set_index(["model", "benchmark"])
    row = abstention.loc[("aware", "infinibench_ga")]
    assert row.abstained_benchmark == 0  # the probe never picks the benchmark's own "I don't know"
    assert row.n_committed == row.n - row.abstained_added
    letters = report["letters"]
    assert {"aware"} <= set(letters.model)


def test_the_frame_sweep_reports_accuracy_and_sensitivity_per_budget(report):
    budget = report["frame_budget"]
    rows = budget[budget.model.str.startswith("probe@")].sort_values("frames")
    assert rows.frames.tolist() == list(SWEEP)
    assert rows.acc_orig.is_monotonic_increasing


def test_vdgsynth_text_tasks_run(report):
    frame = report["frame"]
    synth = frame[(frame.model == "synth") & (frame.benchmark == "vdgsynth")]
    assert set(synth.condition) == {"orig", "open", "abstain"}
    assert (synth[synth.condition == "abstain"].abstain_letter == "E").all()
    opened = judge_frame(synth, make_judge("offline"))
    opened = opened[opened.condition == "open"]
    assert (opened.status == "open").all() and opened.judge_score.notna().all()
    # the probe answers text-only and border questions in words; they score 1 when orig is right
    orig = synth[synth.condition == "orig"].set_index("question_id").correct
    words = opened.set_index("question_id").judge_score
    assert (words[orig[orig].index] > 0).mean() > 0.5


def test_tiny_qwen2_vl_runs_a_name_swap_and_an_open_task(world, tmp_path):
    """lmms-eval's own qwen2_vl (random weights, built locally) on nameswap and open, judged offline."""
    from tests.helpers.tiny_qwen2vl import TINY_QWEN_MODEL_ARGS, build_tiny_qwen2vl

    model_dir = build_tiny_qwen2vl(tmp_path / "tiny-qwen2vl")
    out = lmms_eval(
        world["env"],
        tmp_path / "qwen",
        world["tasks"],
        "qwen2_vl",
        "infinibench_ga_vdg_orig,infinibench_ga_vdg_nameswap,infinibench_ga_vdg_open",
        "--model_args",
        f"pretrained={model_dir},{TINY_QWEN_MODEL_ARGS}",
        "--limit",
        "3",
    )
    frame = load_frame([out])
    assert set(frame.condition) == {"orig", "nameswap", "open"} and (frame.status != "error").all()
    swapped = frame[frame.condition == "nameswap"]
    assert (swapped.swap_to != "").all() and (swapped.swap_to != swapped.character).all()
    opened = frame[frame.condition == "open"]
    assert (opened.status == "open").all() and opened.response.map(len).gt(0).all()
    report_dir = tmp_path / "report"
    assert vdg_main(["report", str(out), "--out", str(report_dir), "--resamples", "100", "--judge", "offline"]) == 0
    table = pd.read_csv(report_dir / "open_ended.csv")
    assert table.n_open.tolist() == [3] and np.isin(table.fully_correct, [0, 1, 2, 3]).all()
