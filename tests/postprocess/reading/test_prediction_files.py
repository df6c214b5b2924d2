"""Prediction files from other harnesses: JSON, JSONL, CSV; statuses; validation messages."""

from __future__ import annotations

import json

import pytest

from postprocess.reading.files import LogError
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.reading.prediction_files import read_predictions

RECORDS = [
    {
        "condition": "original",
        "question_id": "1-1",
        "task_type": "OCR",
        "ground_truth": "A",
        "prediction": "A",
        "correct": True,
        "videoID": "v1",
    },
    {
        "condition": "original",
        "question_id": "1-2",
        "task_type": "OCR",
        "ground_truth": "B",
        "prediction": None,
        "correct": False,
        "error": "CUDA out of memory",
        "videoID": "v1",
    },
    {
        "condition": "singleframe",
        "question_id": "1-1",
        "task_type": "OCR",
        "ground_truth": "A",
        "prediction": "The answer is (C).",
        "videoID": "v1",
    },
    {
        "condition": "singleframe",
        "question_id": "1-2",
        "task_type": "OCR",
        "ground_truth": "B",
        "prediction": "no idea",
        "videoID": "v1",
    },
]


def _write(tmp_path, fmt, records=RECORDS):
    path = tmp_path / f"preds.{fmt}"
    if fmt == "json":
        path.write_text(json.dumps(records))
    elif fmt == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    else:
        import csv

        keys = sorted({k for r in records for k in r})
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, keys)
            writer.writeheader()
            writer.writerows(records)
    return path


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_statuses_and_normalised_conditions(tmp_path, fmt):
    table = read_predictions(_write(tmp_path, fmt), model="m", benchmark="b").set_index(["condition", "question_id"])
    assert set(table.index.get_level_values(0)) == {"orig", "single"}
    assert table.loc[("orig", "1-1"), ["status", "pred"]].tolist() == ["ok", "A"]
    assert table.loc[("orig", "1-2"), "status"] == "error" and "CUDA" in table.loc[("orig", "1-2"), "error"]
    assert table.loc[("single", "1-1"), ["status", "pred"]].tolist() == ["ok", "C"]
    assert not table.loc[("single", "1-1"), "correct"]
    assert table.loc[("single", "1-2"), ["status", "pred"]].tolist() == ["unparsed", None]
    assert table.loc[("orig", "1-1"), "video_id"] == "v1"


def test_null_prediction_without_error_text_is_an_error(tmp_path):
    records = [dict(RECORDS[0], prediction=None, correct=None)]
    row = read_predictions(_write(tmp_path, "json", records), "m", "b").iloc[0]
    assert row.status == "error" and row.error == "null prediction"


def test_inconsistent_correct_flag_names_the_record(tmp_path):
    records = [dict(RECORDS[0], correct=False)]
    with pytest.raises(LogError, match=r"preds\.json\[#0\]: 'correct' is False but prediction 'A'"):
        read_predictions(_write(tmp_path, "json", records), "m", "b")


def test_missing_field_and_missing_model_are_named(tmp_path):
    records = [{k: v for k, v in RECORDS[0].items() if k != "ground_truth"}]
    with pytest.raises(LogError, match="missing field.*ground_truth"):
        read_predictions(_write(tmp_path, "json", records), "m", "b")
    with pytest.raises(LogError, match=r"preds\.csv:2: no model"):
        read_predictions(_write(tmp_path, "csv"), None, "b")


def test_bad_jsonl_line_is_named(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(RECORDS[0]) + "\n{oops\n")
    with pytest.raises(LogError, match=r"p\.jsonl:2: not valid JSON"):
        read_predictions(path, "m", "b")


def test_duplicates_error_or_last(tmp_path):
    a = _write(tmp_path, "json", [RECORDS[0]])
    (tmp_path / "b").mkdir()
    b = _write(tmp_path / "b", "json", [dict(RECORDS[0], prediction="D", correct=False)])
    with pytest.raises(LogError, match="two different answers: 'A' at .*preds.json.*'D' at"):
        load_frame(predictions=[("m", a), ("m", b)], benchmark="b")
    frame = load_frame(predictions=[("m", a), ("m", b)], benchmark="b", on_duplicate="last")
    assert frame.pred.tolist() == ["D"]


def test_record_fields_override_command_line(tmp_path):
    records = [dict(r, model="from-file", benchmark="vme") for r in RECORDS]
    frame = read_predictions(_write(tmp_path, "jsonl", records), "cli", None)
    assert set(frame.model) == {"from-file"} and set(frame.benchmark) == {"vme"}
