"""Prediction files name their ids in many ways: which fields are read, in which order, and what is reported."""

from __future__ import annotations

import logging
import re

import pytest

from postprocess.reading.files import LogError
from postprocess.reading.frame import VIDEO_ID_FIELDS, input_files
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.reading.prediction_files import QUESTION_ID_FIELDS, read_predictions
from tests.helpers.prediction_files import five_option_records, write_records

BASE = {"condition": "orig", "task_type": "T", "ground_truth": "A", "prediction": "A"}


@pytest.mark.parametrize("field", ["video_uid", "video", "video_path", "vid", "videoID", "video_name", "video_idx"])
def test_video_id_aliases(tmp_path, field):
    path = write_records(tmp_path / "p.json", [dict(BASE, question_id="q1", **{field: "clip-7"})])
    frame = load_frame(predictions=[("m", path)], benchmark="b")
    assert frame["video_id"].tolist() == ["clip-7"]
    assert input_files(frame)[0]["video_id_field"] == field


@pytest.mark.parametrize("field", ["qid", "q_uid", "uid", "id", "question_idx", "question_uid", "questionID"])
def test_question_id_aliases(tmp_path, field):
    path = write_records(tmp_path / "p.csv", [dict(BASE, video_id="v1", **{field: "42"})])
    frame = read_predictions(path, "m", "b")
    assert frame["question_id"].tolist() == ["42"]
    assert frame.attrs["vdg_source"]["question_id_field"] == field


def test_precedence_is_the_documented_order_per_record(tmp_path):
    records = [
        dict(BASE, question_id="q1", uid="u1", video_id="v-canonical", video_uid="v-alias"),
        dict(BASE, question_id="q2", uid="u2", video_uid="v-alias-2"),  # no video_id: the next field in order
    ]
    frame = load_frame(predictions=[("m", write_records(tmp_path / "p.jsonl", records))], benchmark="b")
    assert frame.set_index("question_id")["video_id"].to_dict() == {"q1": "v-canonical", "q2": "v-alias-2"}
    info = input_files(frame)[0]
    assert info["question_id_field"] == "question_id" and info["video_id_field"] == "video_id, then video_uid"
    assert VIDEO_ID_FIELDS.index("video_id") < VIDEO_ID_FIELDS.index("video_uid")
    assert QUESTION_ID_FIELDS[0] == "question_id" and QUESTION_ID_FIELDS.index("qid") < QUESTION_ID_FIELDS.index("id")


def test_the_fields_used_are_logged(tmp_path, caplog):
    path = write_records(tmp_path / "ego.json", five_option_records("m", n_questions=5))
    with caplog.at_level(logging.INFO, logger="postprocess"):
        load_frame(predictions=[("m", path)], benchmark="egoschema")
    assert f"{path}: question id from q_uid, video id from video_uid" in caplog.text


def test_no_question_id_field_lists_the_accepted_names(tmp_path):
    path = write_records(tmp_path / "p.json", [dict(BASE, video_uid="v")])
    with pytest.raises(LogError, match=r"p\.json: missing field\(s\) question_id .*may be any of question_id, .*qid"):
        read_predictions(path, "m", "b")


def test_a_question_id_naming_two_videos_is_refused(tmp_path):
    # NExT-QA's qid counts the questions of a video: qid 0 of two videos is not one question.
    records = [dict(BASE, qid="0", video="v1"), dict(BASE, qid="0", video="v2", prediction="B")]
    path = write_records(tmp_path / "nextqa.csv", records)
    with pytest.raises(LogError, match=r"question id '0' \(orig\) names two videos: 'v1' at .*nextqa\.csv:2 and 'v2'"):
        read_predictions(path, "m", "b")


def test_a_question_id_with_two_answer_keys_is_refused(tmp_path):
    a = write_records(tmp_path / "a.json", [dict(BASE, question_id="q1")])
    b = write_records(tmp_path / "b.json", [dict(BASE, question_id="q1", condition="black", ground_truth="C")])
    with pytest.raises(LogError, match=r"question 'q1' of b has two different answer keys: 'A' at .*a\.json"):
        load_frame(predictions=[("m", a), ("m", b)], benchmark="b")


@pytest.mark.parametrize(("name", "text"), [("p.csv", ""), ("p.json", "  \n"), ("p.jsonl", "")])
def test_an_empty_prediction_file_names_the_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(LogError, match=re.escape(f"{path}: empty predictions file")):
        read_predictions(path, "m", "b")
