"""The per-sample record is declared once (vdg_tasks.vocabulary.record): the hooks log its fields, the reader reads
them.
"""

from __future__ import annotations

import json

import pytest

from postprocess.reading.lmms_eval_logs import LOG_FIELDS, load_frame
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.lmms import hooks
from vdg_tasks.vocabulary.conditions import CONDITIONS
from vdg_tasks.vocabulary.record import FIELDS, RECORD_KEY, STATUSES

BENCH = BENCHMARKS["vdgsynth"]
DOC = {
    "question_id": "v1-1",
    "videoID": "v1",
    "video": "/nowhere/v1.mp4",
    "task_type": "colour",
    "duration": "short",
    "question": "What colour?",
    "options": ["A. red", "B. green", "C. blue", "D. white"],
    "answer": "B",
}


def test_every_field_the_reader_keeps_is_declared():
    assert set(LOG_FIELDS) <= set(FIELDS), set(LOG_FIELDS) - set(FIELDS)


@pytest.mark.parametrize(
    ("condition", "reply", "status", "correct"),
    [
        ("black", "B", "ok", True),  # the letter of the answer
        ("black", "The answer is C.", "ok", False),
        ("black", "I cannot tell", "unparsed", False),
        ("black", "[LMMS_EVAL_REQUEST_FAILED after 3 retries] Error code: 500", "error", None),
        ("abstain", "B", "ok", True),
    ],
)
def test_a_logged_record_has_declared_fields_in_order_and_the_reader_reads_it_back(
    tmp_path, condition, reply, status, correct
):
    visual = hooks.Visual("/nowhere/v1.mp4", "k", None, {}, None)
    record = hooks.build_record(BENCH, CONDITIONS[condition], DOC, reply, visual)
    assert list(record) == [f for f in FIELDS if f in record]  # declared fields, in declared order
    assert record["status"] == status and record["status"] in STATUSES and record["correct"] == correct
    if condition == "abstain":  # the text condition's detail is a declared field too
        assert record["abstain_letter"] == "E" and record["n_options"] == 5
    log = tmp_path / "m" / f"20260101_000000_samples_vdgsynth_vdg_{condition}.jsonl"
    log.parent.mkdir()
    log.write_text(json.dumps({"doc_id": 0, RECORD_KEY: record}) + "\n")
    (log.parent / "20260101_000000_results.json").write_text(json.dumps({"config": {"model": "m", "model_args": ""}}))
    row = load_frame([f"m={tmp_path / 'm'}"]).iloc[0]
    assert (row.question_id, row.condition, row.status, row.answer) == ("v1-1", condition, status, "B")
    assert row.correct == correct or (correct is None and row.status == "error")


def test_a_record_that_could_not_be_built_is_an_error_row_of_declared_fields():
    out = hooks.vdgsynth__black__process_results({"question_id": "q9"}, ["B"])
    record = out[RECORD_KEY]
    assert list(record) == [f for f in FIELDS if f in record]
    assert record["status"] == "error" and "building the record failed" in record["error"]
    assert record["question_id"] == "q9" and out["accuracy"] is None
