"""Docs as text questions: options without their letters, the answer as an index, errors naming the doc."""

from __future__ import annotations

import pytest

from vdg_tasks.data.text_questions import text_question, text_questions

DOC = {
    "question_id": "q7",
    "videoID": "v3",
    "task_type": "count",
    "question": "How many?",
    "options": ["A. two", "B. three", "C. four"],
    "answer": "B",
}


def test_a_doc_becomes_a_text_question():
    assert text_question("bench", DOC, "doc") == {
        "benchmark": "bench",
        "question_id": "q7",
        "video_id": "v3",
        "task_type": "count",
        "question": "How many?",
        "options": ("two", "three", "four"),
        "answer": 1,
    }


@pytest.mark.parametrize("answer", ["b", "1", 1])
def test_the_answer_may_be_a_letter_in_either_case_or_an_index(answer):
    assert text_question("bench", {**DOC, "answer": answer}, "doc")["answer"] == 1


def test_an_option_that_only_looks_lettered_keeps_its_text():
    doc = {**DOC, "options": ["4.5 seconds", "a.m. train", "(C) noon"], "answer": 0}
    assert text_question("bench", doc, "doc")["options"] == ("4.5 seconds", "a.m. train", "noon")


def test_plain_options_and_a_video_id_field_are_read():
    doc = {k: v for k, v in DOC.items() if k != "videoID"} | {"video_id": "v9", "options": ["two", "three"]}
    question = text_question("bench", {**doc, "answer": "A"}, "doc")
    assert question["options"] == ("two", "three") and question["video_id"] == "v9"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"question": ""}, r"bench doc #1 \(question 'q7'\) has no question"),
        ({"videoID": None}, "has no videoID"),
        ({"options": ["A. only"]}, "1 option"),
        ({"answer": "D"}, "answer 'D' is neither a letter nor a 0-based index of its 3 options"),
        ({"answer": "5"}, "answer '5'"),
    ],
)
def test_a_doc_that_cannot_be_a_question_is_named(change, message):
    with pytest.raises(ValueError, match=message):
        text_questions("bench", [{**DOC, "question_id": "q0"}, {**DOC, **change}])


def test_a_question_without_an_answer_is_left_out_and_listed():
    questions, unanswered = text_questions("bench", [{**DOC, "answer": ""}, {**DOC, "question_id": "q8"}])
    assert [q["question_id"] for q in questions] == ["q8"] and unanswered == ["q7"]
