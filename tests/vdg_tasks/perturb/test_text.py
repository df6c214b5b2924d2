"""The question transforms of the text conditions (vdg_tasks.perturb.text): pure doc -> doc functions."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from vdg_tasks.data.roster import BUILTIN_ROSTERS
from vdg_tasks.perturb.text import (
    TextUnavailable,
    apply,
    idk_letter,
    numbered_kwargs,
    numbered_prompt,
    option_text,
    replace_name,
    truth_text,
)
from vdg_tasks.vocabulary.conditions import ABSTAIN_OPTION, CONDITIONS

BBT = dict(BUILTIN_ROSTERS["bbt"])  # its genders are checked against the paper's in test_roster


def _doc(question_id: str = "bbt_s1e1_sheldon", character: str = "Sheldon", **fields) -> dict:
    return {
        "question_id": question_id,
        "videoID": "bbt/season_1/episode_1",
        "question": f"What is the correct sequence of changing the outfits for {character} in this episode?",
        "options": [
            "A. red shirt; blue jacket",
            "B. I don't know",
            "C. blue jacket; red shirt",
            "D. green tie; red shirt",
            "E. red shirt; green tie",
            "F. blue jacket; green tie",
        ],
        "answer": "C",
        "character": character,
        "cast": BBT,
        "show": "The Big Bang Theory",
        "title": "The Big Bang Theory, season 1, episode 1",
        "outfits": ["blue jacket", "red shirt"],
        **fields,
    }


def test_replace_name_keeps_case_style_possessives_and_whole_words():
    assert replace_name("Where is Sheldon? Sheldon's spot.", "Sheldon", "Penny") == "Where is Penny? Penny's spot."
    assert replace_name("SHELDON and sheldon", "Sheldon", "Amy") == "AMY and amy"
    assert replace_name("Rajesh is not Raj.", "Raj", "Howard") == "Rajesh is not Howard."


def test_name_swap_picks_another_cast_member_from_the_question_id_only():
    cond = CONDITIONS["nameswap"]
    first = apply(cond, _doc())
    again = apply(cond, dict(reversed(list(_doc().items()))))  # field order, dict identity: irrelevant
    assert first.details == again.details
    swap_to = first.details["swap_to"]
    assert swap_to in BBT and swap_to != "Sheldon"
    assert first.doc["question"] == _doc()["question"].replace("Sheldon", swap_to)
    assert first.doc["options"] == _doc()["options"] and first.doc["answer"] == "C"  # video and options unchanged
    assert first.details["swap_gender"] == ("same" if BBT[swap_to] == "male" else "cross")


def test_name_swap_draws_every_other_cast_member_evenly_across_questions():
    cond = CONDITIONS["nameswap"]
    picks = Counter(apply(cond, _doc(question_id=f"q{i}")).details["swap_to"] for i in range(1200))
    assert set(picks) == set(BBT) - {"Sheldon"}
    # six names, 1200 seeded draws: each near 200 (binomial sd ~13); a fixed or skewed pick would fail
    assert all(140 < n < 260 for n in picks.values()), picks


def test_name_swap_gender_is_empty_when_the_cast_has_no_genders():
    doc = _doc(cast={"Sheldon": "", "Leonard": ""})
    assert apply(CONDITIONS["nameswap"], doc).details == {"swap_to": "Leonard", "swap_gender": ""}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"character": ""}, "names no character"),
        ({"cast": {"Sheldon": "male"}}, "no other main character of 'The Big Bang Theory'"),
        ({"question": "What does he wear?"}, "does not contain the character name 'Sheldon'"),
    ],
)
def test_name_swap_refuses_questions_it_cannot_swap(fields, message):
    with pytest.raises(TextUnavailable, match=f"question bbt_s1e1_sheldon: .*{message}"):
        apply(CONDITIONS["nameswap"], {**_doc(), **fields})


def test_abstain_adds_an_option_after_the_last_and_keeps_the_benchmarks_idk_apart():
    change = apply(CONDITIONS["abstain"], _doc())
    assert change.doc["options"][-1] == f"G. {ABSTAIN_OPTION}"
    assert change.doc["options"][:-1] == _doc()["options"] and change.doc["n_options"] == 7
    assert change.details == {"abstain_letter": "G"}
    assert idk_letter(change.doc["options"]) == "B"  # the benchmark's own "I don't know" keeps its letter
    four = {**_doc(), "options": ["A. a", "B. b", "C. c", "D. d"]}
    assert apply(CONDITIONS["abstain"], four).details == {"abstain_letter": "E"}


def test_abstain_refuses_a_question_with_every_letter_taken():
    full = {**_doc(), "options": [f"{x}. o{x}" for x in "ABCDEFGH"]}
    with pytest.raises(TextUnavailable, match="already has 8 options"):
        apply(CONDITIONS["abstain"], full)


def test_open_ended_removes_the_options_and_keeps_the_truth():
    change = apply(CONDITIONS["open"], _doc())
    assert change.doc["options"] == [] and change.doc["question"] == _doc()["question"]
    assert change.details == {"truth": "blue jacket; red shirt"}
    mc = {k: v for k, v in _doc().items() if k != "outfits"}  # a benchmark without a sequence: the option text
    assert truth_text(mc) == "blue jacket; red shirt" == option_text(mc["options"][2])
    with pytest.raises(TextUnavailable, match="answer 'H' names none of its 6 options"):
        truth_text({**mc, "answer": "H"})


def test_metadata_puts_the_title_before_the_question():
    change = apply(CONDITIONS["metadata"], _doc())
    assert change.doc["question"].splitlines() == [
        "This question is about The Big Bang Theory, season 1, episode 1.",
        _doc()["question"],
    ]
    with pytest.raises(TextUnavailable, match="has no show/episode title"):
        apply(CONDITIONS["metadata"], {**_doc(), "title": ""})


def test_subtitles_are_parsed_capped_and_put_before_the_question(tmp_path):
    srt = tmp_path / "e1.srt"
    lines = [f"{i}\n00:00:0{i},000 --> 00:00:0{i},900\n<i>Line number {i} of the dialogue.</i>\n" for i in range(1, 10)]
    srt.write_text("\n".join(lines))
    change = apply(CONDITIONS["subtitles"], _doc(subtitles=str(srt)))
    body = change.doc["question"].split("\n\n")[0].splitlines()
    assert body[0] == "The episode's subtitles:" and body[1] == "Line number 1 of the dialogue."
    assert change.doc["question"].endswith(_doc()["question"])
    assert change.details["subtitle_chars"] == len("\n".join(body[1:])) <= 4000
    capped = CONDITIONS["subtitles"].bound(max_chars=70)
    short = apply(capped, _doc(subtitles=str(srt)))
    assert short.details["subtitle_chars"] <= 70 and "Line number 2" in short.doc["question"]
    assert "Line number 3" not in short.doc["question"]
    with pytest.raises(TextUnavailable, match="does not exist"):
        apply(CONDITIONS["subtitles"], _doc(subtitles=str(tmp_path / "missing.srt")))


def test_video_conditions_leave_the_question_alone():
    doc = _doc()
    assert apply(CONDITIONS["black"], doc).doc is doc


def _plain(**fields) -> dict:
    options = ["A. red", "B. blue", "C. green", "D. yellow"]
    return {"question_id": "q7", "question": "Which colour is the border?", "options": options, "answer": "B", **fields}


def _texts(options: list[str]) -> list[str]:
    return [option_text(o) for o in options]


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_options_shuffled_moves_the_answer_with_its_text_to_another_letter(n):
    for i in range(60):
        options = [f"{chr(65 + k)}. colour {k}" for k in range(n)]
        answer = chr(65 + i % n)
        change = apply(CONDITIONS["options_shuffled"], {**_plain(question_id=f"q{i}"), "options": options,
                                                          "answer": answer})  # fmt: skip
        new, order = change.doc["options"], change.details["shuffled_from"]
        assert sorted(_texts(new)) == sorted(_texts(options)) and sorted(order) == [chr(65 + k) for k in range(n)]
        new_answer = change.details["answer"]
        assert new_answer != answer  # the correct option always moves
        assert option_text(new[ord(new_answer) - 65]) == option_text(options[ord(answer) - 65])
        for position, original in enumerate(order):  # each option asked at `position` was `original`
            assert new[position] == f"{chr(65 + position)}. {option_text(options[ord(original) - 65])}"


def test_options_shuffled_draws_every_permutation_that_moves_the_answer():
    # with 3 options and the answer A, 4 of the 6 orders move it: each should come up (seeded by the question id)
    orders = Counter(
        apply(CONDITIONS["options_shuffled"], _plain(question_id=f"q{i}", options=["A. x", "B. y", "C. z"],
                                                     answer="A")).details["shuffled_from"]
        for i in range(400)
    )  # fmt: skip
    assert set(orders) == {"BAC", "BCA", "CAB", "CBA"} and min(orders.values()) > 60


def test_options_shuffled_is_the_same_in_processes_with_different_hash_seeds(tmp_path):
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json; from vdg_tasks.perturb.text import apply; from vdg_tasks.vocabulary.conditions import "
        "CONDITIONS\nopts = ['A. a', 'B. b', 'C. c', 'D. d', 'E. e']\nprint(json.dumps([apply(CONDITIONS["
        "'options_shuffled'], {'question_id': f'q{i}', 'options': opts, 'answer': 'C'}).details for i in range(50)]))"
    )
    outputs = []
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1] and len({d["shuffled_from"] for d in outputs[0]}) > 10


@pytest.mark.parametrize(("options", "answer"), [(["A. only"], "A"), (["A. x", "B. y"], "C"), ([], "A")])
def test_options_shuffled_refuses_a_question_it_cannot_shuffle(options, answer):
    with pytest.raises(TextUnavailable, match="question q7"):
        apply(CONDITIONS["options_shuffled"], _plain(options=options, answer=answer))


def test_options_shuffled_logs_where_the_benchmarks_idk_went():
    change = apply(CONDITIONS["options_shuffled"], _doc())
    moved_to = chr(65 + change.details["shuffled_from"].index("B"))  # the doc's "B. I don't know"
    assert change.details["idk_letter"] == moved_to == idk_letter(change.doc["options"])


def test_none_option_replaces_the_right_option_s_text_and_keeps_its_letter():
    change = apply(CONDITIONS["none_option"], _plain())
    assert change.doc["options"] == ["A. red", "B. None", "C. green", "D. yellow"]
    assert change.doc["answer"] == "B" and change.details == {}


@pytest.mark.parametrize(
    "already",
    ["None of the above", "none", "I don't know", "Cannot be determined.", "None of these options", "Unknown",
     "Not mentioned in the video", "Neither", "Not enough information", "0", "zero", "No one", "Nothing"],
)  # fmt: skip
def test_none_option_refuses_a_question_that_already_has_one(already):
    expected = f"question q7: already has a none / I don't know / zero option (C. {already})"
    with pytest.raises(TextUnavailable, match=re.escape(expected)):
        apply(CONDITIONS["none_option"], _plain(options=["A. red", "B. blue", f"C. {already}"]))


def test_no_question_keeps_the_options_and_video_only_keeps_neither():
    asked = apply(CONDITIONS["no_question"], _plain()).doc
    assert asked["question"] == "" and asked["options"] == _plain()["options"]
    guess = apply(CONDITIONS["video_only"], _plain()).doc
    assert guess["options"] == [] and guess["answer"] == "B"
    assert guess["question"] == (
        "There is no question. Guess which option letter (A, B, C or D) is correct. Answer with the option's "
        "letter only."
    )


@pytest.mark.parametrize("condition", ["no_question", "video_only"])
def test_a_question_without_its_text_in_a_field_cannot_be_left_out(condition):
    with pytest.raises(TextUnavailable, match="its question text is in no field vdg can leave out"):
        apply(CONDITIONS[condition], _plain(question=""))


def test_numbered_prompt_numbers_the_labels_in_their_own_style_and_the_instructions_around_them():
    question = "Which letter is on the sign: A or B?"
    prompt = (
        "Respond with only the letter (A, B, C, or D) of the correct option.\n"
        f"{question}\nA. A red car\n(B) letter B\nC) blue\nD: D-day\nThe best answer is:"
    )
    options = ["A. A red car", "B. letter B", "C. blue", "D. D-day"]
    assert numbered_prompt(prompt, question, options) == (
        "Respond with only the number (1, 2, 3, or 4) of the correct option.\n"
        f"{question}\n1. A red car\n(2) letter B\n3) blue\n4: D-day\nThe best answer is:"
    )


def test_numbered_kwargs_name_numbers_wherever_the_settings_name_letters():
    kwargs = {"default": {"pre_prompt": "", "post_prompt": "Answer with the option's letter from the given choices."},
              "gpt4v": {"post_prompt": "Answer the question with A, B, C, or D."}, "max_num_frames": 32,
              "xc": ["Letters A/B/C/D only", "options A-E"]}  # fmt: skip
    assert numbered_kwargs(kwargs) == {
        "default": {"pre_prompt": "", "post_prompt": "Answer with the option's number from the given choices."},
        "gpt4v": {"post_prompt": "Answer the question with 1, 2, 3, or 4."},
        "max_num_frames": 32,
        "xc": ["Numbers 1/2/3/4 only", "options 1-5"],
    }
    assert numbered_kwargs(None) is None


def test_numbered_leaves_the_doc_and_refuses_a_question_without_options():
    assert apply(CONDITIONS["numbered"], _plain()).doc == _plain()
    with pytest.raises(TextUnavailable, match="question q7: has no options to number"):
        apply(CONDITIONS["numbered"], _plain(options=[]))


def test_numbered_refuses_options_that_are_numbers():
    with pytest.raises(TextUnavailable, match=r"question q7: its options are numbers \(A. 3\)"):
        apply(CONDITIONS["numbered"], _plain(options=["A. 3", "B. 2", "C. 4"], answer="A"))


def test_numbered_prompt_leaves_the_question_alone_and_refuses_what_it_cannot_number():
    question = "Which is true: A man walks, or plan A or B?"
    prompt = f"Answer with the letter.\n{question}\nA. man walks\nB. plan B"
    assert numbered_prompt(prompt, question, ["A. man walks", "B. plan B"]) == (
        f"Answer with the number.\n{question}\n1. man walks\n2. plan B"
    )
    with pytest.raises(TextUnavailable, match="does not show the question as it is"):
        numbered_prompt(prompt, "Which is true?", ["A. man walks", "B. plan B"])
    with pytest.raises(TextUnavailable, match=r"option B \(a bus\) is not shown after the question"):
        numbered_prompt(prompt, question, ["A. man walks", "B. a bus"])
