"""The blind condition through the hooks: no visual input at all, the question as orig asks it, a scored row
even where the video is missing; its prompt equals lmms-eval's own no_visual variant of Video-MME."""

from __future__ import annotations

import importlib

import pytest

import vdg_tasks.lmms.hooks as hooks
from tests.helpers.docs import SQUARE_DOC
from tests.helpers.videos import write_source
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.data.upstream import task_config
from vdg_tasks.jobs.materialize import plan
from vdg_tasks.lmms.yamlgen import YAML_ROOT
from vdg_tasks.perturb.video_request import video_request
from vdg_tasks.vocabulary.conditions import CONDITIONS

BLIND = CONDITIONS["blind"]
DOC = SQUARE_DOC


@pytest.fixture()
def missing_video(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    hooks._resolve.cache_clear()
    return {**DOC, "video": str(tmp_path / "no-such-video.mp4")}


def test_blind_is_declared_as_showing_no_video_and_every_benchmark_offers_it():
    assert not BLIND.shows_video and BLIND.modality == "video"
    assert all(c.shows_video for name, c in CONDITIONS.items() if name != "blind")
    assert all("blind" in {c.name for c in bench.conditions()} for bench in BENCHMARKS.values())


def test_a_blind_question_is_shown_nothing_even_when_its_video_is_missing(missing_video):
    assert video_request(BENCHMARKS["vdgsynth"], BLIND, missing_video) is None
    assert hooks.vdgsynth__blind__doc_to_visual(missing_video) == []
    # the same question under orig: a placeholder clip and an error row
    assert len(hooks.vdgsynth__orig__doc_to_visual(missing_video)) == 1
    assert hooks.vdgsynth__orig__process_results(missing_video, ["C"])["vdg"]["status"] == "error"


def test_a_blind_answer_is_scored_and_logs_no_video(missing_video):
    out = hooks.vdgsynth__blind__process_results(missing_video, ["The answer is C."])
    record = out["vdg"]
    assert (record["condition"], record["status"], record["pred"], record["correct"]) == ("blind", "ok", "C", True)
    assert record["visual_key"] == "" and record["error"] is None
    assert record["provenance"] is None and record["effective_params"] is None
    assert out[hooks.METRIC_KEY] == 1.0


def test_a_blind_question_asks_exactly_what_orig_asks():
    # blind has no doc_to_text of its own: its YAML keeps the benchmark template's prompt builder
    assert not hasattr(hooks, "videomme__blind__doc_to_text")
    blind = (YAML_ROOT / "videomme" / "videomme_vdg_blind.yaml").read_text()
    assert "doc_to_text" not in blind and "doc_to_visual: !function vdg_tasks.hooks.videomme__blind__" in blind


def test_the_videomme_blind_prompt_equals_lmms_evals_no_visual_prompt():
    from lmms_eval.utils import load_yaml_config

    ours = load_yaml_config(str(YAML_ROOT / "videomme" / "videomme_vdg_blind.yaml"))
    theirs = task_config("videomme/no_visual", "videomme_no_visual.yaml")
    # no_visual's YAML names utils.videomme_doc_to_text, which its own utils.py lacks (the variant cannot load
    # as shipped); the function of that name is the parent folder's, and the prompt it means is that one's
    name = str(theirs["doc_to_text"]).rpartition(".")[2]
    module = importlib.import_module("lmms_eval.tasks.videomme.utils")
    their_prompt = getattr(module, name)
    kwargs = theirs["lmms_eval_specific_kwargs"]["default"]
    assert ours["doc_to_text"](DOC, ours["lmms_eval_specific_kwargs"]["default"]) == their_prompt(DOC, kwargs)
    assert ours["lmms_eval_specific_kwargs"]["default"] == kwargs


def test_materialize_plans_nothing_for_blind(tmp_path, monkeypatch):
    from vdg_tasks.lmms.yamlgen import write_all
    from vdg_tasks.synthetic.synth import generate

    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    jsonl = generate(tmp_path / "data", n_videos=1, seed=0, width=32, height=24, seconds=8)
    write_all(tmp_path / "tasks", synth_data=str(jsonl))
    jobs, failed = plan(["vdgsynth_vdg_blind"], tmp_path / "tasks")
    assert jobs == [] and failed == []
    jobs, _ = plan(["vdgsynth_vdg_blind", "vdgsynth_vdg_black"], tmp_path / "tasks")
    assert {job.condition for job in jobs} == {"black"}


def test_write_source_helper_still_makes_a_video_blind_ignores(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    hooks._resolve.cache_clear()
    doc = {**DOC, "video": str(write_source(tmp_path / "v1.mp4"))}
    assert hooks.vdgsynth__blind__doc_to_visual(doc) == []
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.mp4"))


# lmms-eval's no_visual variants of tasks vdg derives: (base task, no_visual folder, YAML, a doc of that benchmark).
# Each variant's YAML names its parent's prompt builder (its own utils.py lacks it) with its own settings.
DERIVED_NO_VISUAL = [
    (
        "lvbench",
        "lvbench/no_visual",
        "lvbench_no_visual.yaml",
        {"question": "What is on the table?", "options": ["a cup", "a pen", "a key", "a box"], "answer": "B"},
    ),
    (
        "longvideobench_val_v",
        "longvideobench/no_visual",
        "longvideobench_no_visual.yaml",
        {
            "question": "What does the man hold?",
            **{f"option{i}": text for i, text in enumerate(["a cup", "a pen", "a key", "N/A", "N/A"])},
            "correct_choice": 1,
        },
    ),
]


@pytest.mark.parametrize(("base", "folder", "config", "doc"), DERIVED_NO_VISUAL, ids=[d[0] for d in DERIVED_NO_VISUAL])
@pytest.mark.slow
def test_a_derived_blind_prompt_equals_lmms_evals_no_visual_prompt(base, folder, config, doc, tmp_path):
    from lmms_eval.utils import load_yaml_config

    from vdg_tasks.lmms.derive import derive

    written = derive(base, tmp_path, conditions=["blind"])
    (blind,) = [p for p in written if p.name == f"{base}_vdg_blind.yaml"]
    ours = load_yaml_config(str(blind))
    theirs = task_config(folder, config)
    name = str(theirs["doc_to_text"]).rpartition(".")[2]
    parent = importlib.import_module(f"lmms_eval.tasks.{folder.split('/')[0]}.utils")
    kwargs = theirs["lmms_eval_specific_kwargs"]["default"]
    assert ours["doc_to_text"](dict(doc), dict(ours["lmms_eval_specific_kwargs"]["default"])) == getattr(parent, name)(
        dict(doc), dict(kwargs)
    )


def test_blind_is_in_no_tag_so_a_benchmarks_tag_never_sends_it_to_a_class_that_needs_a_visual():
    from vdg_tasks.lmms.derive_files import tags as derived_tags
    from vdg_tasks.lmms.derive_spec import DeriveSpec, Fields
    from vdg_tasks.lmms.yamlgen import tags

    assert tags("videomme", BLIND) == []
    assert tags("mvbench_action_count", BLIND) == ["mvbench_vdg_blind"]  # the group's name for this condition
    assert "videomme_vdg" in tags("videomme", CONDITIONS["black"])
    spec = DeriveSpec(
        task="lvb", yaml_path="lvb.yaml", fields=Fields("qid", "options", "answer", "vid", None, "question"),
        doc_to_visual="x.y", doc_to_text="x.z", process_results=None, process_docs=None, visual_kwargs=None,
        conditions=("orig", "blind"),
    )  # fmt: skip
    assert derived_tags(spec, "blind") == [] and derived_tags(spec, "orig") == ["lvb_vdg", "lvb_vdg_ladder"]
