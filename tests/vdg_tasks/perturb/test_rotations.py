"""Circular evaluation's rotations (``options_rotated<k>``, vdg_tasks.extend.shipped) through the path the hooks take
(``vdg_tasks.perturb.text.apply``): option i of N at (i + k) mod N, labels A.. in order, the answer with its option,
the same in every process and under every hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.extend import Context, shipped
from vdg_tasks.lmms.hooks import Visual, build_record, make_doc_to_text
from vdg_tasks.perturb.text import apply
from vdg_tasks.vocabulary.conditions import CIRCULAR, CONDITIONS, ROTATION, circular_rotations, families

ROOT = Path(__file__).resolve().parents[3]
LETTERS = "ABCDEFGH"
ROTATED = {k: CONDITIONS[name] for name, k in circular_rotations().items()}


def _doc(n: int, answer: int, qid: str = "v1-1") -> dict:
    return {
        "question_id": qid,
        "videoID": "v1",
        "task_type": "T",
        "question": "Which colour is shown?",
        "options": [f"{LETTERS[i]}. colour {i}" for i in range(n)],
        "answer": LETTERS[answer],
    }


def test_seven_rotations_are_declared_through_the_public_api_in_family_circular():
    assert sorted(ROTATED) == list(range(1, 8))
    for k, condition in ROTATED.items():
        assert condition.name == f"options_rotated{k}" and condition.family == CIRCULAR
        assert condition.params_dict() == {ROTATION: k} and condition.requires == {"options"}
        assert condition.declared_in == "vdg_tasks.extend.shipped" and condition.text == "doc"
        # <benchmark>_vdg_circular<N> runs the rotations N options need: 1 .. N-1
        assert condition.protocols == tuple(f"circular{n}" for n in range(k + 1, 9))
    assert families()[CIRCULAR] == [f"options_rotated{k}" for k in range(1, 8)]


def test_rotation_one_of_four_options_moves_each_option_one_place_down_and_the_answer_with_it():
    change = apply(ROTATED[1], _doc(4, answer=1))
    assert change.doc["options"] == ["A. colour 3", "B. colour 0", "C. colour 1", "D. colour 2"]
    assert change.doc["answer"] == "C" and dict(change.details) == {"answer": "C", "shuffled_from": "DABC"}
    assert change.doc["question"] == "Which colour is shown?" and change.doc["question_id"] == "v1-1"


@pytest.mark.parametrize("n", range(2, 9))
def test_every_option_i_goes_to_position_i_plus_k_mod_n_and_the_answer_visits_every_letter_once(n):
    for answer in range(n):
        doc = _doc(n, answer)
        keyed = [LETTERS[answer]]
        for k in range(1, 8):
            rotated = apply(ROTATED[k], doc).doc
            for i in range(n):
                assert rotated["options"][(i + k) % n] == f"{LETTERS[(i + k) % n]}. colour {i}"
            assert rotated["answer"] == LETTERS[(answer + k) % n]
            logged = apply(ROTATED[k], doc).details.get("shuffled_from", "")  # "" for k mod n = 0: not reordered
            assert logged == "".join(LETTERS[(j - k) % n] for j in range(n)) if k % n else logged == ""
            if k < n:
                keyed.append(rotated["answer"])
            else:  # a rotation at or beyond N asks rotation k mod N again (k = N: the question as it is)
                again = apply(ROTATED[k % n], doc).doc if k % n else doc
                assert rotated["options"] == again["options"] and rotated["answer"] == again["answer"]
        assert sorted(keyed) == list(LETTERS[:n])  # orig and its N-1 own rotations: each letter keyed once


def test_the_doc_is_not_changed_and_labels_of_any_style_are_relabelled():
    doc = {**_doc(3, answer=0), "options": ["(A) red", "B) blue", "C.green"]}
    before = json.dumps(doc)
    change = apply(ROTATED[2], doc)
    assert json.dumps(doc) == before
    assert change.doc["options"] == ["A. blue", "B. green", "C. red"] and change.doc["answer"] == "C"


def test_the_benchmarks_own_i_dont_know_option_moves_and_its_letter_is_logged():
    doc = {**_doc(3, answer=0), "options": ["A. red", "B. blue", "C. I don't know"]}
    change = apply(ROTATED[1], doc)
    assert change.doc["options"] == ["A. I don't know", "B. red", "C. blue"]
    assert dict(change.details) == {"answer": "B", "shuffled_from": "CAB", "idk_letter": "A"}


@pytest.mark.parametrize(
    ("options", "answer", "message"),
    [(["A. only"], "A", "has 1 option"), (["A. x", "B. y"], "C", "answer 'C' is none of its 2 options")],
)
def test_a_question_no_rotation_can_ask_is_refused_with_the_reason(options, answer, message):
    with pytest.raises(ValueError, match=message):
        shipped.rotate_options({**_doc(2, 0), "options": options, "answer": answer}, Context({ROTATION: 1}))


def test_the_prompt_lists_the_rotated_options_and_the_rotated_answer_is_scored():
    bench, condition = BENCHMARKS["vdgsynth"], ROTATED[3]
    doc = _doc(4, answer=2)
    prompt = make_doc_to_text(bench, condition)(doc, {"pre_prompt": "", "post_prompt": "Answer with the letter."})
    listed = [line for line in prompt.splitlines() if line[:2] in ("A.", "B.", "C.", "D.")]
    assert listed == ["A. colour 1", "B. colour 2", "C. colour 3", "D. colour 0"]
    visual = Visual(Path("video.mp4"), "key", None)
    right = build_record(bench, condition, doc, "The answer is B.", visual)
    assert (right["answer"], right["pred"], right["correct"], right["condition"]) == ("B", "B", True, condition.name)
    assert right["condition_params"] == {ROTATION: 3} and right["n_options"] == 4
    assert right["shuffled_from"] == "BCDA"  # the report reads the key in the question's own order through it
    wrong = build_record(bench, condition, doc, "The answer is C.", visual)  # C: the answer's orig letter
    assert wrong["correct"] is False


#: Rotated docs of every rotation and the rotation tasks' YAML files, as one JSON text.
_DUMP = """
import json
from vdg_tasks.lmms.yamlgen import render_all
from vdg_tasks.perturb.text import apply
from vdg_tasks.vocabulary.conditions import CONDITIONS, circular_rotations
docs = [{"question_id": f"q{i}", "videoID": "v", "question": "?", "answer": "ABCDEFGH"[i % (2 + i % 7)],
         "options": [f"{'ABCDEFGH'[j]}. option {j} of {i}" for j in range(2 + i % 7)]} for i in range(40)]
names = list(circular_rotations())
rotated = {name: [dict(apply(CONDITIONS[name], doc).doc) for doc in docs] for name in names}
files = {str(path): text for path, text in render_all().items() if any(name in str(path) for name in names)}
print(json.dumps({"rotated": rotated, "files": files}, sort_keys=True))
"""


def test_rotation_tasks_are_identical_across_processes_and_hash_seeds():
    outputs = []
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _DUMP], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    dumped = json.loads(outputs[0])
    assert len(dumped["files"]) == 7 * len(BENCHMARKS) and len(dumped["rotated"]) == 7
