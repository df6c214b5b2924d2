"""The generated shortcut benchmark plants what it says: checked on the docs' text, not with the answerers."""

from __future__ import annotations

import re

import pytest

from vdg_tasks.synthetic.shortcut_bench import QUESTIONS_PER_VIDEO, TASK_TYPES, shortcut_docs, write_shortcut_docs
from vdg_tasks.vocabulary.parse import LETTERS

DOCS = shortcut_docs(per_task_type=120, seed=1)


def _split(doc):
    texts = [o.split(". ", 1)[1] for o in doc["options"]]
    return texts, LETTERS.index(doc["answer"])


def _of(task_type):
    return [d for d in DOCS if d["task_type"] == task_type]


def test_overlap_only_the_right_option_shares_a_word_with_the_question():
    for doc in _of("overlap"):
        words = set(re.findall(r"[a-z]+", doc["question"]))
        texts, right = _split(doc)
        assert [bool(set(t.split()) & words) for t in texts] == [i == right for i in range(len(texts))]


def test_longest_the_right_option_is_strictly_the_longest_in_words():
    for doc in _of("longest"):
        texts, right = _split(doc)
        lengths = [len(t.split()) for t in texts]
        assert all(lengths[right] > n for i, n in enumerate(lengths) if i != right)


def test_number_only_the_right_option_carries_the_number_the_question_names():
    for doc in _of("number"):
        named = re.search(r"minute (\d+)", doc["question"]).group(1)
        texts, right = _split(doc)
        assert all(re.match(r"\d+ ", t) for t in texts)
        assert [t.split()[0] == named for t in texts] == [i == right for i in range(len(texts))]


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_positions_and_option_counts_vary_and_videos_hold_three_questions(task_type):
    docs = _of(task_type)
    positions = {LETTERS.index(d["answer"]) for d in docs}
    counts = {len(d["options"]) for d in docs}
    assert positions == {0, 1, 2, 3, 4} and counts == {3, 4, 5}
    videos = {}
    for d in docs:
        videos.setdefault(d["videoID"], []).append(d["question_id"])
    assert {len(v) for v in videos.values()} == {QUESTIONS_PER_VIDEO}


def test_the_same_seed_writes_the_same_file_and_another_seed_another(tmp_path):
    a = write_shortcut_docs(tmp_path / "a.jsonl", per_task_type=9, seed=3).read_bytes()
    b = write_shortcut_docs(tmp_path / "b.jsonl", per_task_type=9, seed=3).read_bytes()
    c = write_shortcut_docs(tmp_path / "c.jsonl", per_task_type=9, seed=4).read_bytes()
    assert a == b != c
