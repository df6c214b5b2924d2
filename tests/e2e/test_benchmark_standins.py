"""videomme_vdg_*, mvbench_vdg_* and egoschema_vdg_* end to end from a local copy (``$VDG_LOCAL_DATA``).

The committed task YAMLs, unchanged, read generated stand-ins with each hub dataset's columns
(tests/helpers/standins.py) through the real lmms-eval CLI, with vdg's reference models.
"""

from __future__ import annotations

import string

import pandas as pd
import pytest

from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.runs import lmms_eval, offline_env
from tests.helpers.standins import write_standins
from vdg_tasks.data.benchmarks import BENCHMARKS, MVBENCH_SUB_TASKS, mvbench_question_id
from vdg_tasks.lmms.yamlgen import YAML_ROOT

pytestmark = pytest.mark.slow

PROBE_TASKS = (
    "videomme_vdg_orig,videomme_vdg_black,mvbench_vdg_orig,mvbench_vdg_reversed,"
    "egoschema_subset_vdg_orig,egoschema_subset_vdg_black,egoschema_vdg_orig"
)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("standins")
    data = write_standins(root / "local")
    env = {**offline_env(root), "VDG_LOCAL_DATA": str(root / "local")}
    probe = lmms_eval(env, root / "runs" / "probe", YAML_ROOT, "vdg_probe", PROBE_TASKS)
    constant = lmms_eval(
        env,
        root / "runs" / "constant",
        YAML_ROOT,
        "vdg_constant",
        "mvbench_vdg_orig,egoschema_subset_vdg_abstain",
        "--model_args",
        "letter=E",
    )
    frame = load_frame([f"probe={probe}", f"constant={constant}"])
    # the probes family of both benchmarks through its tags (every mvbench sub-task's included)
    probes = lmms_eval(env, root / "runs" / "probes", YAML_ROOT, "vdg_probe", "videomme_vdg_probe,mvbench_vdg_probe")
    return {"root": root, "data": data, "frame": frame, "probes": load_frame([f"probe={probes}"])}


def test_every_benchmark_and_sub_task_ran_with_its_questions(world):
    frame = world["frame"]
    probe = frame[frame.model == "probe"]
    counts = probe.groupby(["benchmark", "condition"]).size().to_dict()
    assert counts == {
        ("egoschema", "orig"): 3,
        ("egoschema_subset", "black"): 3,
        ("egoschema_subset", "orig"): 3,
        ("mvbench", "orig"): 20,
        ("mvbench", "reversed"): 20,
        ("videomme", "black"): 4,
        ("videomme", "orig"): 4,
    }
    videomme = probe[probe.benchmark == "videomme"]
    assert set(videomme.question_id) == {d["question_id"] for d in world["data"]["videomme"]}
    assert (videomme.status != "error").all(), videomme.error.tolist()


def test_mvbench_rows_carry_a_stable_id_and_the_sub_task_as_task_type(world):
    rows = world["frame"].query("model == 'probe' and benchmark == 'mvbench' and condition == 'orig'")
    data = world["data"]["mvbench"]
    want = {mvbench_question_id(sub, docs[0]): sub for sub, docs in data.items()}
    assert dict(zip(rows.question_id, rows.task_type, strict=True)) == want
    assert set(rows.task_type) == set(MVBENCH_SUB_TASKS)
    # the answer letter is the candidate's position; 3 to 5 options per sub-task
    for sub, docs in data.items():
        row = rows[rows.task_type == sub].iloc[0]
        assert row.answer == string.ascii_uppercase[docs[0]["candidates"].index(docs[0]["answer"])]
        assert row.n_options == len(docs[0]["candidates"])
    # every sub-task's video was found and shown, the frame folder of episodic_reasoning included
    assert (rows.status != "error").all(), rows[rows.status == "error"].error.tolist()
    reversed_rows = world["frame"].query("model == 'probe' and benchmark == 'mvbench' and condition == 'reversed'")
    assert (reversed_rows.status != "error").all(), reversed_rows.error.tolist()


def test_answers_beyond_d_are_parsed_and_scored(world):
    rows = world["frame"].query("model == 'constant'")
    mv = rows[rows.benchmark == "mvbench"]
    assert (mv.status != "error").all()
    five = mv[mv.n_options == 5]
    assert len(five) and (five.pred == "E").all() and (five.status == "ok").all()
    assert five.correct.astype(bool).tolist() == (five.answer == "E").tolist()
    assert five.correct.astype(bool).any()
    fewer = mv[mv.n_options < 5]  # E is not an option there: unparsed, scored wrong
    assert (fewer.status == "unparsed").all() and not fewer.correct.astype(bool).any()
    # EgoSchema: five options; abstain adds F after them
    ego = rows[rows.benchmark == "egoschema_subset"]
    assert (ego.n_options == 6).all() and (ego.abstain_letter == "F").all()
    assert ego.correct.astype(bool).tolist() == (ego.answer == "E").tolist() == [True, False, False]


def test_egoschema_full_set_has_no_answers_and_says_so(world):
    rows = world["frame"].query("model == 'probe' and benchmark == 'egoschema'")
    assert (rows.status == "error").all()
    assert rows.error.str.startswith("NoAnswer: question q-ego").all()
    assert rows.correct.isna().all()


def test_the_benchmarks_own_scores_are_logged_beside(world):
    import json

    (results,) = sorted((world["root"] / "runs" / "probe").rglob("*_results.json"))
    data = json.loads(results.read_text())["results"]
    assert "mvbench_accuracy,none" in data["mvbench_action_count_vdg_orig"]
    assert "score,none" in data["egoschema_subset_vdg_orig"]
    assert "videomme_perception_score,none" in data["videomme_vdg_orig"]
    frame = world["frame"]
    orig = frame.query("model == 'probe' and benchmark == 'egoschema_subset' and condition == 'orig'")
    assert data["egoschema_subset_vdg_orig"]["accuracy,none"] == pytest.approx(orig.correct.astype(bool).mean())


def test_without_a_local_copy_the_dataset_is_the_hub_s(monkeypatch, tmp_path):
    import vdg_tasks.lmms.dataset_fields as sources
    from vdg_tasks.data.upstream import task_config

    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)
    upstream = task_config("mvbench", "mvbench_action_count.yaml")
    assert sources.mvbench_action_count__dataset_path == upstream["dataset_path"] == "OpenGVLab/MVBench"
    assert sources.mvbench_action_count__dataset_name == "action_count"
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path))
    assert sources.egoschema__dataset_path == "lmms-eval/egoschema"  # no egoschema/ folder there: the hub
    (tmp_path / "egoschema").mkdir()
    with pytest.raises(sources.LocalCopyError, match=f"no question file in {tmp_path / 'egoschema'}"):
        _ = sources.egoschema__dataset_kwargs
    pd.DataFrame([{"question_idx": "q"}]).to_parquet(tmp_path / "egoschema" / "Subset.parquet")
    kwargs = sources.egoschema_subset__dataset_kwargs
    assert kwargs == {"data_files": {"test": [str(tmp_path / "egoschema" / "Subset.parquet")]}}
    assert BENCHMARKS["egoschema_subset"].local is not None


def test_materialize_plans_a_local_copy(world, monkeypatch):
    from vdg_tasks.jobs.materialize import plan

    monkeypatch.setenv("VDG_LOCAL_DATA", str(world["root"] / "local"))
    monkeypatch.setenv("HF_HOME", str(world["root"] / "hf"))
    jobs, failed = plan(["egoschema_subset_vdg_black", "egoschema_subset_vdg_reversed"])
    assert not failed
    videos = {d["video_idx"] for d in world["data"]["egoschema"]["Subset"]}
    assert {(j.condition, j.video_id) for j in jobs} == {(c, v) for c in ("black", "reversed") for v in videos}
    assert all(j.source.startswith(str(world["root"] / "local" / "egoschema" / "videos")) for j in jobs)


def test_a_fixed_question_set_restricts_the_run_and_the_report_refuses_to_mix_sets(world, monkeypatch):
    import json

    from vdg_tasks.cli import main as vdg_main

    root = world["root"]
    env = {**offline_env(root), "VDG_LOCAL_DATA": str(root / "local")}
    for key in ("VDG_LOCAL_DATA", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(key, env[key])
    out = root / "egoschema_set.json"
    args = ["subset", "egoschema_subset", "--per-task-type", "2", "--seed", "3", "--out", str(out)]
    assert vdg_main(args) == 0
    chosen = json.loads(out.read_text())
    assert chosen["counts"] == {"egoschema": 2} and len(chosen["ids"]) == 2
    runs = root / "runs" / "with_set"
    lmms_eval({**env, "VDG_QUESTION_SET": str(out)}, runs, YAML_ROOT, "vdg_probe", "egoschema_subset_vdg_orig")
    frame = load_frame([f"probe_set={runs}"])
    assert sorted(frame.question_id) == sorted(chosen["ids"])
    assert set(frame.question_set) == {chosen["digest"]}
    # the earlier run saw all three questions, with no set: the same benchmark, different question lists
    with pytest.raises(ValueError, match=chosen["digest"]):
        load_frame([f"probe_set={runs}", f"probe={root / 'runs' / 'probe'}"])


def test_the_probes_ran_on_every_question_of_videomme_and_mvbench(world):
    probes, orig = world["probes"], world["frame"].query("model == 'probe' and condition == 'orig'")
    assert set(probes.condition) == {"options_shuffled", "none_option", "no_question", "video_only", "numbered"}
    for (benchmark, condition), rows in probes.groupby(["benchmark", "condition"]):
        assert set(rows.question_id) == set(orig[orig.benchmark == benchmark].question_id), (benchmark, condition)
        asked = rows[~rows.error.fillna("").str.contains("already has a none")]  # a question with its own none
        assert (asked.status != "error").all(), (benchmark, condition, asked.error.tolist())
    shuffled = probes[probes.condition == "options_shuffled"].set_index(["benchmark", "question_id"])
    answers = orig.set_index(["benchmark", "question_id"]).answer
    for key, row in shuffled.iterrows():  # the right option moved to another letter, and is scored there
        assert row.answer != answers[key] and row.shuffled_from[ord(row.answer) - 65] == answers[key]
