"""`vdg derive`: condition variants of any lmms-eval video multiple-choice task.

1. A base task of our own (tests/helpers/derive_base.py: its own folder, dataset, prompt layout and
   scorer) derived through the CLI and run end to end through the real lmms-eval CLI with vdg_probe
   and vdg_constant.
2. The multiple-choice video tasks lmms-eval 0.7.3 ships: derived and loaded with lmms-eval's own
   loader (no dataset is downloaded), or refused with the reason.
3. The conditions a derive asks for, from names and families (field detection, options and answers:
   test_derive_source.py and test_derive_spec.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from loguru import logger

from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.derive_base import BASE_TASK, QUESTIONS, write_base_task
from tests.helpers.runs import lmms_eval, offline_env
from vdg_tasks.cli import main as vdg_main
from vdg_tasks.data.upstream import load_config
from vdg_tasks.lmms.derive import (
    DeriveError,
    DeriveSpec,
    Fields,
    derive,
    hooks_for,
    plan,
    resolve_conditions,
)
from vdg_tasks.lmms.derive_spec import derived_benchmark, load_function
from vdg_tasks.lmms.hooks import make_process_results
from vdg_tasks.vocabulary.conditions import CONDITIONS as DECLARED
from vdg_tasks.vocabulary.record import METRIC_KEY

# --- 1. a base task of our own, end to end --------------------------------------------------------------

LETTER = {"q0": "B", "q1": "A", "q2": "B", "q3": "C", "q4": "B", "q5": ""}
CONDITIONS = ("orig", "black", "abstain")


@pytest.fixture(scope="module")
def derived_demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("derive_e2e")
    base = write_base_task(root / "base")
    out = root / "derived"
    args = ["derive", BASE_TASK, "--include_path", str(base), "--out", str(out), "--conditions", ",".join(CONDITIONS)]
    assert vdg_main([*args, "--video-id", "clip", "--task-type", "category"]) == 0
    return {"root": root, "out": out, "folder": out / BASE_TASK, "env": offline_env(root)}


@pytest.fixture(scope="module")
def demo_runs(derived_demo):
    env, out, runs = derived_demo["env"], derived_demo["out"], derived_demo["root"] / "runs"
    tag = f"{BASE_TASK}_vdg"
    return {
        "probe": lmms_eval(env, runs / "probe", out, "vdg_probe", tag),
        "constant": lmms_eval(env, runs / "constant", out, "vdg_constant", tag, "--model_args", "letter=B"),
    }


@pytest.mark.slow
def test_derived_folder_holds_what_lmms_eval_needs(derived_demo):
    folder = derived_demo["folder"]
    names = {p.name for p in folder.iterdir()}
    leaves = {f"{BASE_TASK}_vdg_{c}.yaml" for c in CONDITIONS}
    assert leaves | {"_default_template_yaml", "vdg_derive.json", "vdg_derived.py", "README.md"} <= names
    spec = DeriveSpec.from_json((folder / "vdg_derive.json").read_text())
    assert spec.fields == Fields("qid", "candidates", "answer", "clip", "category", "question")
    assert spec.conditions == CONDITIONS and spec.process_results is not None
    template = (folder / "_default_template_yaml").read_text()
    # the base's dataset, its local file made absolute, given lmms-eval by the hooks module when it loads the task
    questions = str((derived_demo["root"] / "base" / "questions.jsonl").resolve())
    assert spec.dataset["dataset_path"] == "json" and spec.dataset["dataset_kwargs"]["data_files"]["test"] == questions
    assert "dataset_path: !function vdg_derived.dataset_path" in template
    assert "process_docs: !function vdg_derived.process_docs" in template and "demo_acc" in template


@pytest.mark.slow
def test_every_question_logged_per_condition_with_its_own_id(demo_runs):
    frame = load_frame([f"{label}={path}" for label, path in demo_runs.items()])
    assert set(frame.benchmark) == {BASE_TASK}
    assert (frame.groupby(["model", "condition"]).size() == len(QUESTIONS)).all()
    assert set(frame.condition) == set(CONDITIONS)
    assert set(frame.question_id) == set(LETTER)
    assert (frame.answer.fillna("") == frame.question_id.map(LETTER)).all()
    assert (frame.video_id == frame.question_id.map({q[0]: q[1] for q in QUESTIONS})).all()
    assert (frame.task_type == frame.question_id.map({q[0]: q[4] for q in QUESTIONS})).all()


@pytest.mark.slow
def test_answers_normalised_and_scored(demo_runs):
    frame = load_frame([f"{label}={path}" for label, path in demo_runs.items()])
    no_truth = frame.question_id == "q5"
    assert (frame[no_truth].status == "error").all()
    assert frame[no_truth].error.str.contains("no ground-truth answer").all()
    scored = frame[~no_truth]
    assert (scored.status == "ok").all(), scored[scored.status != "ok"][["condition", "error"]]
    constant = scored[scored.model == "constant"]
    assert (constant.pred == "B").all()
    assert (constant.correct.astype(bool) == (constant.answer == "B")).all()
    black = scored[scored.condition == "black"]
    assert len(black) == 2 * (len(QUESTIONS) - 1) and black.error.isna().all()


@pytest.mark.slow
def test_abstain_adds_an_option_and_the_base_metric_is_kept(demo_runs):
    samples = sorted(demo_runs["constant"].rglob(f"*_samples_{BASE_TASK}_vdg_abstain.jsonl"))
    rows = [json.loads(line) for line in samples[0].read_text().splitlines()]
    prompts = {r["vdg"]["question_id"]: r["input"] for r in rows}
    assert "(D) I cannot determine this from the video." in prompts["q0"]  # the base's own "(A) text" layout
    assert {r["vdg"]["abstain_letter"] for r in rows if r["vdg"]["question_id"] == "q1"} == {"E"}
    results = json.loads(next(demo_runs["constant"].rglob("*_results.json")).read_text())["results"]
    orig = results[f"{BASE_TASK}_vdg_orig"]
    assert orig[f"{METRIC_KEY},none"] == pytest.approx(3 / 5)
    assert orig["demo_acc,none"] == pytest.approx(3 / 5)  # the base's scorer, on the answered questions


# --- 2. lmms-eval's own multiple-choice video tasks ---------------------------------------------------------

#: base name -> the derived tasks (a group: one per member).
DERIVABLE = {
    "longvideobench_val_v": ["longvideobench_val_v"],
    "tvbench": [
        f"tvbench_{s}"
        for s in (
            "action_antonym",
            "action_count",
            "action_localization",
            "action_sequence",
            "egocentric_sequence",
            "moving_direction",
            "object_count",
            "object_shuffle",
            "scene_transition",
            "unexpected_action",
        )
    ],
    "lvbench": ["lvbench"],
    "nextqa_mc_test": ["nextqa_mc_test"],
    "perceptiontest_val_mc": ["perceptiontest_val_mc"],
    "videomme_v2": ["videomme_v2"],
    # options as lettered lines in the question text; Video-Holmes' fields spelled Question, Options, Answer
    "tempcompass_multi_choice": ["tempcompass_multi_choice"],
    "mlvu_dev": ["mlvu_dev"],
    "video_holmes": ["video_holmes"],
    # no options: graded, by the base's own per-question metric where it runs offline, else by vdg's judge
    "activitynetqa": ["activitynetqa"],
    "countix": ["countix"],
    "ssv2": ["ssv2"],
    "nextqa": ["nextqa_mc_test", "nextqa_oe_val", "nextqa_oe_test"],
    # decoded frames, not a video file: the conditions apply to the frames
    "longvideobench_val_i": ["longvideobench_val_i"],
    # a mean over questions the base computes only in its aggregation (mIoU, accuracy), taken per question
    "temporal_grounding_charades": ["temporal_grounding_charades"],
    "timelens": ["timelens_activitynet", "timelens_charades", "timelens_qvhighlights"],
    "extremewhenbench": ["extremewhenbench"],
    "intphys2": ["intphys2"],
    # options in lettered fields (choice_a ... choice_d); options only in the prompt its doc_to_text writes
    "egoplan": ["egoplan"],
    "vitatecs_direction": ["vitatecs_direction"],
    # Python class tasks: their class kept, so their own download builds the dataset
    "vstat": ["vstat"],
    "physical_conflict": ["physical_conflict"],
    # an aggregation that needs a fixed number of questions: judged
    "camerabench_vqa": ["camerabench_vqa"],
    # its doc_to_messages (the original video) is not kept; graded by its per-question mAP
    "JumpScore": ["JumpScore"],
}
#: Graded tasks (no options) and their scoring: countix's first mean metric is `mae_norm`, an error, so `obo`.
GRADED = {
    "activitynetqa": "judge",
    "countix": "metric:obo",
    "ssv2": "metric:acc",
    "nextqa_oe_val": "judge",
    "temporal_grounding_charades": "mean:charades_sta_mIOU/100",
    "timelens_charades": "mean:timelens_mIOU/100",
    "extremewhenbench": "mean:ewb_mIoU",
    "intphys2": "mean:intphys2_accuracy",
    # a corpus metric (BLEU) beside per-question ones (GPT, BLEURT): judged, not refused
    "funqa_test": "judge",
    "JumpScore": "mean:jumpscore_map",
    "vcrbench": "mean:vcrbench_accuracy/100",
    # options shown only when a doc has them, no letter asked: the free-form split of a shared builder
    "mix_evals_video2text_freeform": "judge",
    "camerabench_vqa": "judge",
}
#: Derivable tasks and their options spec: a field, or lettered lines in text fields (``@question``).
OPTIONS_SPEC = {
    "tempcompass_multi_choice": "@question|<prompt>",
    "mlvu_dev": "@question|<prompt>",
    "video_holmes": "Options",
    "lvbench": "options",
    "egoplan": "choice_{a}",
    "vitatecs_direction": "@question|caption|counterfactual|<prompt>",
}
#: base name -> (the reason in few words, a phrase of the message).
REFUSED = {
    "youcook2_val": ("open-ended, corpus-level metric", "defined only over the whole corpus"),
    "rvos_mevis_valid_u": ("grounding or error-rate metric", "a judge comparing words would score intervals"),
    "av_asr": ("grounding or error-rate metric", "its wer"),
    "vantage_vqa": ("no answer field", "(a constant, as a task scored only by submission has, is none)"),
    "perceptiontest_val_mcppl": ("output_type multiple_choice", "vdg derives generate_until tasks"),
    "longvidebench": ("no lmms-eval task", "did you mean longvideobench_val_v"),
    "ai2d": ("not a video task", "returns images"),
    "mme": ("not a video task", "reads no video"),
}


@pytest.fixture(scope="module")
def builtin(tmp_path_factory):
    from vdg_tasks.lmms.derive import task_manager

    out = tmp_path_factory.mktemp("derive_builtin")
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="INFO")
    try:
        manager = task_manager(None)
        written, refused = {}, {}
        for name in dict.fromkeys([*DERIVABLE, *REFUSED, *GRADED]):
            try:
                written[name] = derive(name, out, manager=manager)
            except DeriveError as exc:
                refused[name] = exc
    finally:
        logger.remove(sink)
    return {"out": out, "written": written, "refused": refused, "messages": messages}


@pytest.fixture(scope="module")
def derived_index(builtin):
    from lmms_eval.tasks import TaskManager

    return TaskManager(include_path=str(builtin["out"]), include_defaults=False).task_index


@pytest.fixture
def offline(monkeypatch, tmp_path):
    # Importing lmms-eval's task modules reads HF_HOME; nothing may be downloaded.
    for name, value in {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}.items():
        monkeypatch.setenv(name, value)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DERIVABLE))
def test_builtin_task_derives_and_loads_in_lmms_eval(name, builtin, derived_index, offline):
    from lmms_eval.utils import load_yaml_config

    assert name not in builtin["refused"], builtin["refused"].get(name)
    for task in DERIVABLE[name]:
        folder = builtin["out"] / task
        spec = DeriveSpec.from_json((folder / "vdg_derive.json").read_text())
        assert (spec.fields.options or spec.scoring != "letter") and (spec.fields.answer or spec.doc_to_target)
        hooks = hooks_for(folder / "vdg_derive.json")
        for condition in spec.conditions:
            leaf = f"{task}_vdg_{condition}"
            assert derived_index[leaf]["type"] in ("task", "python_task")
            config = load_yaml_config(str(folder / f"{leaf}.yaml"), mode="full")
            for key in ("doc_to_visual", "doc_to_text", "process_results", "process_docs"):
                assert callable(config[key]), (leaf, key)
            assert all(callable(m["aggregation"]) or isinstance(m["aggregation"], str) for m in config["metric_list"])
            assert config["metric_list"][0]["metric"] == METRIC_KEY
            assert callable(hooks[f"{condition}__process_results"])
        # a class task is indexed as a python_task, whose tags lmms-eval does not register: its tags are groups
        is_class = "class" in load_config(Path(spec.yaml_path))
        assert derived_index[f"{task}_vdg"]["type"] == ("group" if is_class else "tag")
    if name == "tvbench":
        assert derived_index["tvbench_vdg_black"]["type"] == "tag"


@pytest.mark.slow
@pytest.mark.parametrize("task", list(OPTIONS_SPEC))
def test_options_are_read_from_their_field_or_from_lettered_lines_of_the_question(task, builtin):
    spec = DeriveSpec.from_json((builtin["out"] / task / "vdg_derive.json").read_text())
    assert spec.fields.options == OPTIONS_SPEC[task]
    in_text = [m for m in builtin["messages"] if m.startswith(f"vdg derive: {task}: no options field")]
    assert bool(in_text) == OPTIONS_SPEC[task].startswith("@")


def _iou(a, b):
    overlap = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    return overlap / (max(a[1], b[1]) - min(a[0], b[0]))


#: task -> (a doc with the hub's columns, a reply, the score expected of it, computed here).
SCORED_BY_THE_BASE = {
    "temporal_grounding_charades": (
        {"video": "AB12.mp4", "caption": "person opens a door", "timestamp": [2.0, 6.0]},
        "The event happens in 4.0 - 10.0 seconds.",
        _iou((2.0, 6.0), (4.0, 10.0)),
    ),
    "extremewhenbench": (
        {"qid": "q1", "video_id": "v", "source_corpus": "c", "question": "When?", "correct_interval": [1, 5]},
        "From 2 to 4 seconds.",
        _iou((1.0, 5.0), (2.0, 4.0)),
    ),
    "intphys2": ({"file_name": "a.mp4", "type": "impossible", "condition": "c"}, "Impossible.", 1.0),
    # TimeLens keeps its span as JSON text and its aggregation in percent
    "timelens_charades": (
        {"video_path": "v.mp4", "query": "a door opens", "span": "[[2.0, 6.0]]"},
        "The event happens in 2.0 - 4.0 seconds.",
        _iou((2.0, 6.0), (2.0, 4.0)),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("task", list(SCORED_BY_THE_BASE))
def test_a_mean_over_questions_scores_each_question_by_the_base_s_own_functions(task, builtin, offline):
    spec = DeriveSpec.from_json((builtin["out"] / task / "vdg_derive.json").read_text())
    doc, reply, expected = SCORED_BY_THE_BASE[task]
    # blind needs no video file: the reply is scored as on any condition
    record = make_process_results(derived_benchmark(spec), DECLARED["blind"])(doc, [reply])["vdg"]
    assert (record["status"], record["scoring"]) == ("ok", spec.scoring)
    assert record["score"] == pytest.approx(expected)
    target = load_function(str(spec.doc_to_target))(doc) if spec.doc_to_target else doc[spec.fields.answer]
    assert record["answer"] == (json.dumps(target) if isinstance(target, list) else str(target).strip())


@pytest.mark.slow
@pytest.mark.parametrize("task", list(GRADED))
def test_a_task_without_options_is_graded_and_gets_the_conditions_that_need_none(task, builtin):
    spec = DeriveSpec.from_json((builtin["out"] / task / "vdg_derive.json").read_text())
    assert spec.fields.options is None and spec.scoring == GRADED[task]
    assert {"orig", "black", "blind"} <= set(spec.conditions) and not {"open", "abstain"} & set(spec.conditions)
    readme = (builtin["out"] / task / "README.md").read_text()
    assert f"Scoring: `{spec.scoring}`" in readme and ("--judge offline|api" in readme) == (spec.scoring == "judge")


@pytest.mark.slow
def test_a_task_that_gives_frames_gets_the_conditions_frames_can_take(builtin):
    spec = DeriveSpec.from_json((builtin["out"] / "longvideobench_val_i" / "vdg_derive.json").read_text())
    assert spec.frames and spec.scoring == "letter"
    assert {"orig", "black", "blind", "single", "shuffled", "abstain"} <= set(spec.conditions)
    assert not {c for c in spec.conditions if c.startswith("crf")}
    assert [c for c in spec.conditions if c.startswith("jpeg")] == ["jpeg90", "jpeg70", "jpeg50", "jpeg30", "jpeg10"]
    warned = [m for m in builtin["messages"] if m.startswith("vdg derive: longvideobench_val_i: its doc_to_visual")]
    assert warned and "a JPEG ladder in place of the CRF ladder" in warned[0]
    video = DeriveSpec.from_json((builtin["out"] / "lvbench" / "vdg_derive.json").read_text())
    assert not [c for c in video.conditions if c.startswith("jpeg")]  # a video task keeps the CRF ladder


@pytest.mark.slow
def test_reading_the_task_index_is_shown_and_a_missing_task_type_field_warned(builtin):
    messages = builtin["messages"]
    assert messages[0].startswith("vdg derive: reading lmms-eval's task index")
    assert re.fullmatch(r"vdg derive: \d+ tasks indexed in [\d.]+ s", messages[1])
    specs = {}
    for task in dict.fromkeys([*(t for tasks in DERIVABLE.values() for t in tasks), *GRADED]):
        specs[task] = DeriveSpec.from_json((builtin["out"] / task / "vdg_derive.json").read_text())
    untyped = {task for task, spec in specs.items() if spec.fields.task_type is None}
    warned = {m.split(": ")[1] for m in messages if "no task-type field found" in m}
    assert untyped and warned == untyped and "lvbench" in untyped and "longvideobench_val_v" not in warned


@pytest.mark.slow
@pytest.mark.parametrize("name", list(REFUSED))
def test_builtin_task_refused_with_the_reason(name, builtin):
    short, phrase = REFUSED[name]
    exc = builtin["refused"].get(name)
    assert exc is not None, f"{name} was derived"
    assert str(exc).startswith(f"cannot derive {name}: ") and phrase in str(exc)
    assert short in exc.short or short in str(exc)


@pytest.mark.slow
def test_refusal_is_one_line_and_exit_2(tmp_path, capsys):
    assert vdg_main(["derive", "perceptiontest_val_mcppl", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("vdg derive: cannot derive perceptiontest_val_mcppl: output_type is multiple_choice")
    assert "\n" not in err and not (tmp_path / "perceptiontest_val_mcppl").exists()


@pytest.mark.slow
def test_videomme_fields_detected_as_vdg_declares_them(builtin):
    from vdg_tasks.lmms.derive import task_manager

    (spec,) = plan("videomme", manager=task_manager(None))
    assert spec.fields == Fields("question_id", "options", "answer", "videoID", "task_type", "question")


# --- 3. conditions -----------------------------------------------------------------------------------------


def test_conditions_from_names_and_families():
    # the compression family: a video task keeps its CRF levels, a task that gives frames its JPEG ones (analyse)
    jpeg = ("jpeg90", "jpeg70", "jpeg50", "jpeg30", "jpeg10")
    assert resolve_conditions(["crf", "orig"]) == ("orig", "crf18", "crf23", "crf28", "crf33", "crf38", *jpeg)
    assert resolve_conditions(["text"]) == ("open", "abstain")
    assert "nameswap" not in resolve_conditions(None) and "abstain" in resolve_conditions(None)
    with pytest.raises(DeriveError, match="needs characters"):
        resolve_conditions(["nameswap"])
    with pytest.raises(DeriveError, match="Did you mean 'black'"):
        resolve_conditions(["blak"])


def test_a_member_group_is_expanded_into_its_own_tasks(tmp_path):
    from types import SimpleNamespace

    from vdg_tasks.lmms.derive import group_members as members_of

    (tmp_path / "outer.yaml").write_text("group: outer\ntask:\n  - inner\n  - plain\n  - outer\n")
    (tmp_path / "inner.yaml").write_text("group: inner\ntask:\n  - a\n  - b\n")
    index = {
        "outer": {"type": "group", "yaml_path": str(tmp_path / "outer.yaml")},
        "inner": {"type": "group", "yaml_path": str(tmp_path / "inner.yaml")},
        "a_tag": {"type": "tag", "task": ["inner", "c"]},
        **{name: {"type": "task", "yaml_path": str(tmp_path / f"{name}.yaml")} for name in ("a", "b", "c", "plain")},
    }
    manager = SimpleNamespace(task_index=index)
    assert members_of(manager, "outer") == ["a", "b", "plain", "outer"]  # a group naming itself is not recursed
    assert members_of(manager, "a_tag") == ["a", "b", "c"]
    assert members_of(manager, "plain") is None


def test_a_frame_task_takes_the_jpeg_ladder_in_place_of_crf_and_only_what_frames_can_show():
    from vdg_tasks.lmms.derive import compression_for_frames

    jpeg = ("jpeg90", "jpeg70", "jpeg50", "jpeg30", "jpeg10")
    assert compression_for_frames(("orig", "black", "crf28", "abstain")) == ("orig", "black", *jpeg, "abstain")
    assert compression_for_frames(("orig", "crf18", "jpeg50")) == ("orig", "jpeg50")  # a JPEG level asked for: it
    assert compression_for_frames(("orig", "oracle", "blind")) == ("orig", "blind")  # a window needs the video


@pytest.mark.slow
def test_a_base_s_doc_to_messages_is_not_kept_so_chat_models_get_vdg_s_visual_and_prompt(builtin):
    assert "doc_to_messages" in load_config(Path(DeriveSpec.from_json(
        (builtin["out"] / "JumpScore" / "vdg_derive.json").read_text()).yaml_path))  # fmt: skip
    for folder in builtin["out"].iterdir():
        if (folder / "_default_template_yaml").is_file():
            assert "doc_to_messages" not in (folder / "_default_template_yaml").read_text(), folder.name
