"""vdg_tasks.data.benchmarks: the benchmark specs, their views of a doc, and the names of derived tasks.

The spec table (names, groups and sub-tasks, frame folders, native scorers, upstream configs and local layouts,
cross-checked against lmms-eval's own configs), the conditions each benchmark offers (by what its docs carry),
the Video-MME fields every view produces (MVBench's and EgoSchema's own columns translated), the option
lettering, the prompts, ``members``, ``task_name``/``parse_task_name`` and ``Benchmark.video`` against a local copy
in tmp. Nothing here imports lmms-eval's task modules (torch): the lookups that do are the hooks' tests'.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from vdg_tasks.data.benchmarks import (
    BENCHMARKS,
    MVBENCH_FRAME_FOLDER_FPS,
    VideoUnavailable,
    _sys_exit_lookup,
    infinibench_prompt,
    lettered,
    members,
    mvbench_question_id,
    open_prompt,
    parse_task_name,
    task_name,
    unlettered,
)
from vdg_tasks.data.upstream import task_config
from vdg_tasks.vocabulary.catalogue import MVBENCH_SUB_TASKS

MVBENCH = [f"mvbench_{sub}" for sub in MVBENCH_SUB_TASKS]
#: The Video-MME fields every view gives (the module docstring).
VIEW_FIELDS = {"question_id", "videoID", "task_type", "duration", "options", "answer"}
#: The declared conditions that need nothing but options (oracle, nameswap, metadata and subtitles need more).
OPTIONS_ONLY_CONDITIONS = [
    *("orig", "black", "blind", "single", "shuffled", "ordered", "reversed"),
    *("crf18", "crf23", "crf28", "crf33", "crf38"),
    *("open", "abstain"),
    *("options_shuffled", "none_option", "no_question", "video_only", "numbered"),
    *("downscale112", "downscale224", "downscale448", "blur"),
]
#: Circular evaluation's rotations, declared after mute.
ROTATIONS = [f"options_rotated{k}" for k in range(1, 8)]
#: The benchmarks whose videos have sound: they offer mute too.
WITH_SOUND = ("videomme", "vdgsynth", "infinibench_ga")


@pytest.fixture(autouse=True)
def _no_local_copies(monkeypatch):
    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)


# -- the spec table -------------------------------------------------------------------------------------------


def test_every_benchmark_is_keyed_by_its_own_name():
    assert set(BENCHMARKS) == {"videomme", "vdgsynth", "infinibench_ga", "egoschema", "egoschema_subset", *MVBENCH}
    assert len(BENCHMARKS) == 25  # 5 + MVBench's 20 sub-tasks
    assert all(spec.name == key for key, spec in BENCHMARKS.items())


def test_mvbench_sub_tasks_share_the_group_the_others_are_their_own():
    for key, spec in BENCHMARKS.items():
        if key in MVBENCH:
            assert (spec.group, spec.report_name, spec.sub_task) == ("mvbench", "mvbench", key.removeprefix("mvbench_"))
        else:
            assert (spec.group, spec.report_name, spec.sub_task) == ("", key, "")


def test_only_mvbench_episodic_reasoning_ships_frame_folders_at_3_fps():
    folders = {key: spec.frame_folder_fps for key, spec in BENCHMARKS.items() if spec.frame_folder_fps is not None}
    assert folders == {"mvbench_episodic_reasoning": 3.0} and MVBENCH_FRAME_FOLDER_FPS == 3.0


def test_the_local_benchmarks_have_no_upstream_no_local_copy_and_no_native_scorer():
    for key in ("vdgsynth", "infinibench_ga"):
        spec = BENCHMARKS[key]
        assert (spec.upstream, spec.local, spec.native_results) == (None, None, None), key


def test_the_hub_benchmarks_copy_the_lmms_eval_task_of_their_name():
    expected = {
        "videomme": ("videomme", "videomme.yaml"),
        "egoschema": ("egoschema", "egoschema.yaml"),
        "egoschema_subset": ("egoschema", "egoschema_subset.yaml"),
        **{key: ("mvbench", f"{key}.yaml") for key in MVBENCH},
    }
    assert {k: (s.upstream.folder, s.upstream.config) for k, s in BENCHMARKS.items() if s.upstream} == expected


def test_the_metrics_kept_beside_accuracy_are_lmms_eval_s_own_with_their_aggregation():
    for key, spec in BENCHMARKS.items():
        if spec.upstream is None:
            continue
        config = task_config(spec.upstream.folder, spec.upstream.config)
        shipped = {(m["metric"], m["aggregation"]) for m in config.get("metric_list", [])}
        assert set(spec.upstream.metrics) <= shipped, key
    assert BENCHMARKS["egoschema"].upstream.metrics == ()  # the full set is scored by EgoSchema's server
    assert BENCHMARKS["egoschema"].native_results is None and BENCHMARKS["egoschema_subset"].native_results


def test_a_local_copys_question_files_are_named_as_the_hub_configs():
    for key, spec in BENCHMARKS.items():
        if spec.upstream is None:
            continue
        name = task_config(spec.upstream.folder, spec.upstream.config).get("dataset_name")
        if key in MVBENCH:  # json/<sub_task>.json as on the hub, or <sub_task>.json
            assert (spec.local.folder, spec.local.questions) == ("mvbench", (f"json/{name}", name)), key
        elif key.startswith("egoschema"):  # Subset/ or GENERATION/
            assert (spec.local.folder, spec.local.questions) == ("egoschema", (name,)), key
    assert BENCHMARKS["videomme"].local.questions == ("videomme", "test")


def test_every_spec_has_a_one_sentence_description():
    for key, spec in BENCHMARKS.items():
        assert spec.description.strip() == spec.description and spec.description.endswith("."), key
    assert all(f"`{key}`" in BENCHMARKS[key].description for key in MVBENCH)


# -- conditions offered ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(set(BENCHMARKS) - {"infinibench_ga"}))
def test_a_multiple_choice_benchmark_offers_the_conditions_that_need_only_options(key):
    with_sound = ["mute"] if key in WITH_SOUND else []
    assert [c.name for c in BENCHMARKS[key].conditions()] == OPTIONS_ONLY_CONDITIONS + with_sound + ROTATIONS


def test_infinibench_offers_every_declared_condition_in_declaration_order():
    assert [c.name for c in BENCHMARKS["infinibench_ga"].conditions()] == [
        *OPTIONS_ONLY_CONDITIONS[:12],
        *("oracle", "nameswap", "open", "abstain"),
        *OPTIONS_ONLY_CONDITIONS[14:19],
        *("metadata", "subtitles"),
        *OPTIONS_ONLY_CONDITIONS[19:],
        "mute",
        *ROTATIONS,
    ]


# -- views: the Video-MME fields ------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["videomme", "vdgsynth", "infinibench_ga"])
def test_a_benchmark_with_video_mme_s_fields_is_viewed_as_a_copy(key):
    doc = {"question_id": "001-1", "videoID": "v", "task_type": "Counting Problem", "duration": "short",
           "options": ["A. one", "B. two"], "answer": "B"}  # fmt: skip
    view = BENCHMARKS[key].view(doc)
    assert view == doc and view is not doc


def test_an_mvbench_doc_is_viewed_with_lettered_candidates_and_the_answers_letter():
    spec = BENCHMARKS["mvbench_action_count"]
    doc = {"video": "clip.mp4", "question": "How many?", "candidates": ["2", " 3", "4"], "answer": "4"}
    view = spec.view(doc)
    assert VIEW_FIELDS <= set(view)
    assert {k: view[k] for k in VIEW_FIELDS} == {
        "question_id": mvbench_question_id("action_count", doc),
        "videoID": "clip.mp4",
        "task_type": "action_count",  # the sub-task is the question's task type
        "duration": "",
        "options": ["A. 2", "B. 3", "C. 4"],
        "answer": "C",  # "4" is the third candidate
    }
    assert view["answer_text"] == "4" and view["question"] == "How many?" and view["candidates"] == doc["candidates"]


@pytest.mark.parametrize(
    "doc",
    [
        {"video": "v.mp4", "candidates": ["a", "b"], "answer": "c"},  # the answer is no candidate
        {"video": "v.mp4", "candidates": None, "answer": "a"},
        {},
    ],
)
def test_an_mvbench_answer_that_is_no_candidate_has_no_letter(doc):
    view = BENCHMARKS["mvbench_moving_count"].view(doc)
    assert view["answer"] == "" and view["task_type"] == "moving_count"


@pytest.mark.parametrize(
    ("answer", "letter"),
    [("2", "C"), (2, "C"), (" 4 ", "E"), ("0", "A"), ("5", ""), ("-1", ""), ("", ""), (None, ""), ("C", "")],
)
def test_an_egoschema_answer_index_becomes_its_letter(answer, letter):
    # five options A-E: index 0-4; anything else (out of range, not a number, the full set's blank) has none
    doc = {"question_idx": "q-7", "video_idx": "vid7", "option": [f"c does {i}" for i in range(5)], "answer": answer}
    for key in ("egoschema", "egoschema_subset"):
        view = BENCHMARKS[key].view(doc)
        assert view["answer"] == letter
        assert (view["question_id"], view["videoID"], view["task_type"], view["duration"]) == (
            "q-7",
            "vid7",
            "egoschema",
            "",
        )
        assert view["options"] == ["A. c does 0", "B. c does 1", "C. c does 2", "D. c does 3", "E. c does 4"]


def test_an_egoschema_doc_without_ids_or_options_gets_empty_fields():
    view = BENCHMARKS["egoschema_subset"].view({})
    assert {k: view[k] for k in VIEW_FIELDS} == {
        "question_id": "",
        "videoID": "",
        "task_type": "egoschema",
        "duration": "",
        "options": [],
        "answer": "",
    }


def test_an_mvbench_question_id_is_the_sub_task_the_video_and_a_digest_of_question_and_candidates():
    doc = {"video": "clip.mp4", "question": "Which way?", "candidates": ["left", "right"]}
    # vdg's stable seed: sha256 of the parts joined by \x1f, first 8 bytes big-endian, shifted right once
    seed = int.from_bytes(hashlib.sha256(b"Which way?\x1fleft\x1fright").digest()[:8], "big") >> 1
    assert mvbench_question_id("moving_direction", doc) == f"moving_direction/clip.mp4#{seed & 0xFFFFFFFF:08x}"


def test_mvbench_question_ids_tell_apart_questions_about_one_video_in_any_row_order():
    one = {"video": "v.mp4", "question": "Q?", "candidates": ["a", "b"], "answer": "a"}
    other = {**one, "candidates": ["b", "a"]}
    assert mvbench_question_id("s", one) == mvbench_question_id("s", {**one, "answer": "b"})  # the answer is not hashed
    assert mvbench_question_id("s", one) != mvbench_question_id("s", other)
    assert re.fullmatch(r"s/#[0-9a-f]{8}", mvbench_question_id("s", {}))


# -- option lettering and prompts -----------------------------------------------------------------------------


def test_options_are_lettered_in_order_and_already_lettered_ones_are_kept():
    assert lettered(["red", " B. green ", "C) blue", 4]) == ["A. red", "B. green", "C) blue", "D. 4"]
    assert lettered(["B. green"]) == ["A. B. green"]  # a letter out of place is text
    assert lettered([]) == []


def test_unlettered_strips_a_letter_and_inverts_lettered():
    assert unlettered(["A. red", "B) green", " C.  blue ", "plain"]) == ["red", "green", "blue", "plain"]
    options = ["4.5 seconds", "C. kept as text", "x"]  # lettered: "A. 4.5 seconds", "B. C. kept as text", "C. x"
    assert unlettered(lettered(options)) == options


def test_the_infinibench_prompt_is_question_options_and_post_prompt_one_per_line():
    doc = {"question": "Which outfits?", "options": ["A. red", "B. blue"]}
    kwargs = {"pre_prompt": "Q: ", "post_prompt": "Answer with the letter."}
    assert infinibench_prompt(doc, kwargs) == "Q: Which outfits?\nA. red\nB. blue\nAnswer with the letter."
    assert infinibench_prompt(doc) == "Which outfits?\nA. red\nB. blue"  # no trailing newline without a post prompt
    assert infinibench_prompt({"question": "Q?", "options": None}) == "Q?"


def test_the_open_prompt_is_the_question_and_the_benchmarks_instruction_without_options():
    spec = BENCHMARKS["infinibench_ga"]
    doc = {"question": "What does she wear?", "options": ["A. red"]}
    assert open_prompt(spec, doc, {"pre_prompt": "Q: "}) == f"Q: What does she wear?\n{spec.open_instruction}"
    assert open_prompt(BENCHMARKS["videomme"], doc, {"pre_prompt": None}) == (
        "What does she wear?\nAnswer the question in your own words, in one short sentence."
    )
    assert spec.prompt is infinibench_prompt and spec.open_instruction.startswith("Describe each of the character's")


# -- names ----------------------------------------------------------------------------------------------------


def test_members_are_a_spec_itself_or_every_sub_task_of_a_group():
    assert [b.name for b in members("mvbench")] == MVBENCH
    assert members("videomme") == [BENCHMARKS["videomme"]]
    assert members("mvbench_action_count") == [BENCHMARKS["mvbench_action_count"]]
    assert members("nope") == []


def test_a_task_name_is_benchmark_vdg_condition_and_parses_back():
    assert task_name("videomme", "black") == "videomme_vdg_black"
    assert parse_task_name("videomme_vdg_black") == ("videomme", "black")
    assert parse_task_name("mvbench_action_count_vdg_crf28") == ("mvbench_action_count", "crf28")
    assert parse_task_name(task_name("egoschema_subset", "open")) == ("egoschema_subset", "open")


@pytest.mark.parametrize(
    "task", ["videomme", "videomme_black", "nope_vdg_black", "mvbench_vdg_black", "a_vdg_videomme_vdg_"]
)
def test_a_name_that_is_no_benchmarks_vdg_task_is_rejected(task):
    with pytest.raises(ValueError, match=f"'{task}' is not a vdg task \\(expected <benchmark>_vdg_<condition>\\)"):
        parse_task_name(task)


# -- where a question's video is ------------------------------------------------------------------------------


def test_a_local_benchmarks_video_is_the_docs_own_path(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    assert BENCHMARKS["vdgsynth"].video({"video": str(video)}) == video
    with pytest.raises(VideoUnavailable, match=r"video path:.*gone\.mp4 does not exist"):
        BENCHMARKS["infinibench_ga"].video({"video": str(tmp_path / "gone.mp4")})


@pytest.fixture
def videomme_copy(tmp_path, monkeypatch) -> Path:
    """``$VDG_LOCAL_DATA/videomme/videos/`` in tmp (Video-MME's local layout)."""
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path))
    videos = tmp_path / "videomme" / "videos"
    videos.mkdir(parents=True)
    return videos


def test_a_local_copys_video_is_found_under_its_id_or_an_alternative_suffix(videomme_copy):
    (videomme_copy / "a.mp4").write_bytes(b"x")
    (videomme_copy / "b.mkv").write_bytes(b"x")
    spec = BENCHMARKS["videomme"]
    assert spec.video({"videoID": "a"}) == videomme_copy / "a.mp4"
    assert spec.video({"videoID": "b"}) == videomme_copy / "b.mkv"  # Video-MME ships some as .MP4 or .mkv


def test_a_video_missing_from_a_local_copy_names_the_path_and_the_copy(videomme_copy):
    expected = f"video path:{videomme_copy / 'c.mp4'} does not exist (local copy in {videomme_copy.parent})"
    with pytest.raises(VideoUnavailable, match=f"^{re.escape(expected)}$"):
        BENCHMARKS["videomme"].video({"videoID": "c"})


def test_an_lmms_eval_lookup_that_exits_is_that_questions_unavailable_video(tmp_path):
    def exits(doc):
        raise SystemExit(f"video path:{doc['videoID']} does not exist, please check")

    with pytest.raises(VideoUnavailable, match="^video path:v9 does not exist, please check$"):
        _sys_exit_lookup(exits, {"videoID": "v9"})
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    assert _sys_exit_lookup(lambda doc: [str(video)], {}) == video
    with pytest.raises(VideoUnavailable, match="does not exist"):
        _sys_exit_lookup(lambda doc: [str(tmp_path / "gone.mp4")], {})
