"""The lmms-eval hooks of the text conditions: the prompt each builds, and the record each logs."""

from __future__ import annotations

import pytest

import vdg_tasks.lmms.hooks as hooks
import vdg_tasks.perturb.video_request as shown
from vdg_tasks.data.benchmarks import infinibench_prompt
from vdg_tasks.perturb.cache import PLACEHOLDER
from vdg_tasks.vocabulary.conditions import ABSTAIN_OPTION

KWARGS = {"pre_prompt": "", "post_prompt": "Answer with the option's letter from the given choices directly."}


@pytest.fixture
def doc(tmp_path) -> dict:
    srt = tmp_path / "e1.srt"
    srt.write_text("1\n00:00:01,000 --> 00:00:02,000\nAlice: Morning, everyone.\n")
    return {
        "question_id": "ss_s1e1_alice",
        "videoID": "synthetic_sitcom/season_1/episode_1",
        "video": str(PLACEHOLDER),
        "task_type": "global_appearance",
        "duration": "long",
        "duration_s": 1.0,
        "question": "What is the correct sequence of changing the outfits for Alice in this episode?",
        "options": ["A. red jacket; blue shirt", "B. blue shirt; red jacket", "C. I don't know"],
        "answer": "B",
        "n_options": 3,
        "character": "Alice",
        "cast": {"Alice": "female", "Dev": "male"},
        "show": "Synthetic Sitcom",
        "title": "Synthetic Sitcom, season 1, episode 1",
        "subtitles": str(srt),
        "outfits": ["blue shirt", "red jacket"],
        "outfit_windows": [[[0.1, 0.2], [0.5, 0.9]], [[0.3, 0.4]]],
        "idk_letter": "C",
    }


def test_nameswap_prompt_names_the_other_character_and_keeps_the_options(doc):
    prompt = hooks.infinibench_ga__nameswap__doc_to_text(doc, KWARGS)
    assert "outfits for Dev in" in prompt and "Alice" not in prompt
    assert prompt.splitlines()[1:4] == doc["options"]
    record = hooks.infinibench_ga__nameswap__process_results(doc, ["The answer is A."])["vdg"]
    assert (record["character"], record["swap_to"], record["swap_gender"]) == ("Alice", "Dev", "cross")
    assert record["pred"] == "A" and record["correct"] is False and record["idk_letter"] == "C"


def test_abstain_prompt_and_record_say_which_letter_abstains(doc):
    prompt = hooks.infinibench_ga__abstain__doc_to_text(doc, KWARGS)
    assert f"D. {ABSTAIN_OPTION}" in prompt.splitlines()
    out = hooks.infinibench_ga__abstain__process_results(doc, ["D"])
    record = out["vdg"]
    assert (record["abstain_letter"], record["idk_letter"], record["n_options"]) == ("D", "C", 4)
    assert record["pred"] == "D" and record["status"] == "ok" and out["accuracy"] == 0.0


def test_open_prompt_has_no_options_and_the_record_keeps_the_reply_for_the_judge(doc):
    prompt = hooks.infinibench_ga__open__doc_to_text(doc, KWARGS)
    assert "red jacket" not in prompt and "letter" not in prompt
    assert prompt.startswith(doc["question"]) and "in the order they appear" in prompt
    out = hooks.infinibench_ga__open__process_results(doc, ["Blue shirt, then a red jacket."])
    record = out["vdg"]
    assert record["status"] == "open" and record["pred"] is None and record["correct"] is None
    assert record["response"] == "Blue shirt, then a red jacket." and record["truth"] == "blue shirt; red jacket"
    assert record["question"] == doc["question"] and out["accuracy"] is None


def test_metadata_and_subtitles_prompts(doc):
    assert "about Synthetic Sitcom, season 1, episode 1." in hooks.infinibench_ga__metadata__doc_to_text(doc, KWARGS)
    prompt = hooks.infinibench_ga__subtitles__doc_to_text(doc, KWARGS)
    assert prompt.index("Alice: Morning, everyone.") < prompt.index(doc["question"])
    assert hooks.infinibench_ga__subtitles__process_results(doc, ["B"])["vdg"]["subtitle_chars"] == 25


def test_a_question_the_condition_cannot_change_is_asked_unchanged_and_logged_as_an_error(doc):
    bad = {**doc, "character": ""}
    assert hooks.infinibench_ga__nameswap__doc_to_text(bad, KWARGS) == infinibench_prompt(bad, KWARGS)
    out = hooks.infinibench_ga__nameswap__process_results(bad, ["A"])
    assert out["vdg"]["status"] == "error" and "TextUnavailable" in out["vdg"]["error"] and out["accuracy"] is None
    assert hooks.infinibench_ga__nameswap__doc_to_text(None, KWARGS) == ""  # never raises


def test_oracle_times_are_the_midpoints_of_each_outfits_longest_window_in_time_order(doc):
    assert shown.oracle_times(doc) == (0.35, 0.7)
    with pytest.raises(ValueError, match="outfit 2 has no annotated window"):
        shown.oracle_times({**doc, "outfit_windows": [[[0.1, 0.2]], []]})
    record = hooks.infinibench_ga__oracle__process_results({**doc, "outfit_windows": []}, ["B"])["vdg"]
    assert record["status"] == "error" and "has no outfit windows" in record["error"]


def test_videomme_text_conditions_skip_the_native_score(doc):
    vm = {**doc, "options": ["A. a", "B. b", "C. c", "D. d"], "answer": "B"}
    out = hooks.videomme__abstain__process_results(vm, ["E"])
    assert out["vdg"]["abstain_letter"] == "E" and out["vdg"]["status"] == "error"  # no Video-MME video here
    assert "videomme_perception_score" not in out


def test_options_shuffled_asks_the_moved_options_and_scores_the_moved_answer(doc):
    prompt = hooks.infinibench_ga__options_shuffled__doc_to_text(doc, KWARGS)
    asked = prompt.splitlines()[1:4]
    record = hooks.infinibench_ga__options_shuffled__process_results(doc, ["The answer is A."])["vdg"]
    order = record["shuffled_from"]
    assert sorted(order) == ["A", "B", "C"] and order.index("B") != 1  # the answer, B, moved
    assert asked == [f"{chr(65 + i)}. {doc['options'][ord(o) - 65][3:]}" for i, o in enumerate(order)]
    assert record["answer"] == chr(65 + order.index("B")) and record["idk_letter"] == chr(65 + order.index("C"))
    assert record["correct"] is (record["answer"] == "A")
    moved = hooks.infinibench_ga__options_shuffled__process_results(doc, [f"The answer is {record['answer']}."])
    assert moved["vdg"]["correct"] is True and moved["accuracy"] == 1.0


def test_none_option_no_question_and_video_only_prompts_and_records(doc):
    refused = hooks.infinibench_ga__none_option__process_results(doc, ["B"])["vdg"]  # it has "C. I don't know"
    assert (
        refused["status"] == "error"
        and "already has a none / I don't know / zero option (C. I don't know)" in (refused["error"])
    )
    doc = {**doc, "options": [*doc["options"][:2], "C. green coat; red jacket"], "idk_letter": ""}
    none_prompt = hooks.infinibench_ga__none_option__doc_to_text(doc, KWARGS)
    assert "B. None" in none_prompt.splitlines() and "A. red jacket; blue shirt" in none_prompt.splitlines()
    assert hooks.infinibench_ga__none_option__process_results(doc, ["B"])["vdg"]["correct"] is True
    no_question = hooks.infinibench_ga__no_question__doc_to_text(doc, KWARGS)
    assert "outfits" not in no_question and doc["options"][0] in no_question.splitlines()
    guess = hooks.infinibench_ga__video_only__doc_to_text(doc, KWARGS)
    assert "Guess which option letter (A, B or C)" in guess and "Alice" not in guess and "red jacket" not in guess
    record = hooks.infinibench_ga__video_only__process_results(doc, ["B"])["vdg"]
    assert (record["pred"], record["correct"], record["n_options"]) == ("B", True, 3)


def test_numbered_asks_numbered_options_and_logs_the_number_read_as_its_letter(doc):
    prompt = hooks.infinibench_ga__numbered__doc_to_text(doc, KWARGS)
    lines = prompt.splitlines()
    assert lines[1:4] == ["1. red jacket; blue shirt", "2. blue shirt; red jacket", "3. I don't know"]
    assert lines[-1] == "Answer with the option's number from the given choices directly."
    record = hooks.infinibench_ga__numbered__process_results(doc, ["The answer is 2."])["vdg"]
    assert (record["pred"], record["correct"], record["parse_rule"]) == ("B", True, "number_answer_is")
    assert hooks.infinibench_ga__numbered__process_results(doc, ["B"])["vdg"]["status"] == "unparsed"
