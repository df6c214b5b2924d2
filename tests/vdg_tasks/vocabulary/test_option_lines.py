"""Options written as lettered lines inside a question's text: found in each layout lmms-eval tasks use, and
written back in that layout (the unchanged options reproduce the text exactly)."""

from __future__ import annotations

import pytest

from vdg_tasks.vocabulary.option_lines import find_options

# (layout, text, options, the question without them)
LAYOUTS = [
    (
        "MLVU: (A) lines after the question",
        "What is the main background of the video?\n(A) forest\n(B) city\n(C) beach\n(D) desert",
        ("forest", "city", "beach", "desert"),
        "What is the main background of the video?",
    ),
    (
        "TempCompass multi-choice: A. lines",
        "What is the direction of the car in the video?\nA. left\nB. right\nC. towards the camera",
        ("left", "right", "towards the camera"),
        "What is the direction of the car in the video?",
    ),
    (
        "an Options: block and an instruction after it",
        "Which step comes first?\nOptions:\nA) cut the bread\nB) toast it\nAnswer with the letter.",
        ("cut the bread", "toast it"),
        "Which step comes first?",
    ),
    (
        "indented A: lines",
        "Pick one.\n  A: 3.5 m\n  B: 7 m\n  C: A.M. meeting",
        ("3.5 m", "7 m", "A.M. meeting"),
        "Pick one.",
    ),
]


@pytest.mark.parametrize(("layout", "text", "options", "question"), LAYOUTS, ids=[row[0] for row in LAYOUTS])
def test_each_layout_is_found_and_the_unchanged_options_give_the_text_back(layout, text, options, question):
    found = find_options(text)
    assert found is not None, layout
    assert found.options == options and found.question == question
    assert found.render(found.options) == text
    assert found.render([f"{L}. {o}" for L, o in zip("ABCDEFGH", options, strict=False)]) == text  # lettered views too


def test_an_added_option_and_a_changed_question_are_written_in_the_same_layout():
    text = "Which step comes first?\nOptions:\nA) cut the bread\nB) toast it\nAnswer with the letter."
    found = find_options(text)
    changed = found.render(["cut the bread", "toast it", "I cannot determine"], question="Which step comes last?")
    assert changed == (
        "Which step comes last?\nOptions:\nA) cut the bread\nB) toast it\nC) I cannot determine\n"
        "Answer with the letter."
    )


@pytest.mark.parametrize(
    "text",
    [
        "A man walks a dog. What is the dog's colour?",  # a sentence, not a label
        "Options:\nA. only one",  # one line is not a run of options
        "Q?\nB. first\nC. second",  # not from A
        "Q?\nA. one\nC. three",  # a letter skipped: not options
        "Q?\nA. one\n(B) two",  # two styles
        "",
    ],
)
def test_text_without_a_run_of_lettered_lines_has_no_options(text):
    assert find_options(text) is None


def test_the_first_run_is_taken_and_a_later_line_is_left_after_it():
    text = "Q?\nA. one\nB. two\nnote\nA. again\nB. again"
    found = find_options(text)
    assert found.options == ("one", "two") and found.after == "\nnote\nA. again\nB. again"


def test_a_question_mentioning_options_or_choices_keeps_its_words():
    found = find_options("Pick one of the choices\nA. x\nB. y")
    assert found.question == "Pick one of the choices"
    found = find_options("Choose from the following options:\nA. x\nB. y")
    assert found.question == "Choose from the following options:"
    found = find_options("What is it?\n  Choices:\nA. x\nB. y")
    assert found.question == "What is it?"
