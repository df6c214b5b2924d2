"""The question_set and sampling columns, and the refusal to join runs made on different question sets."""

from __future__ import annotations

import json

import pytest

from postprocess.reading.files import LogError
from postprocess.reading.frame import EXTRA_COLUMNS
from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.fakelogs import sample, write_run

IDS = [f"v{i}-1" for i in range(4)]


def _run(folder, model, condition="orig", question_set=None, sampling=None, ids=IDS):
    records = [sample(q, condition, "A") for q in ids]
    for record in records:
        if question_set is not None:
            record["vdg"]["question_set"] = question_set
        if sampling is not None:
            record["vdg"]["sampling"] = sampling
    return write_run(folder, model, {f"vdgsynth_vdg_{condition}": records})


def test_columns_are_declared():
    assert EXTRA_COLUMNS[-2:] == ("question_set", "sampling")


def test_columns_are_read_from_the_records(tmp_path):
    run = _run(tmp_path / "a", "m", question_set="0123456789ab", sampling="frames:16")
    frame = load_frame([run])
    assert set(frame.question_set) == {"0123456789ab"} and set(frame.sampling) == {"frames:16"}


def test_absent_fields_read_as_empty(tmp_path):
    frame = load_frame([_run(tmp_path / "a", "m")])
    assert set(frame.question_set) == {""} and set(frame.sampling) == {""}


def test_prediction_files_without_the_fields_read_as_empty(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(
        "".join(
            json.dumps({"condition": c, "question_id": q, "task_type": "t", "ground_truth": "A", "prediction": "A"})
            + "\n"
            for c in ("orig", "black")
            for q in IDS
        )
    )
    frame = load_frame(predictions=[("m", path)], benchmark="b")
    assert set(frame.question_set) == {""} and set(frame.sampling) == {""}


def test_runs_on_the_same_set_join(tmp_path):
    a = _run(tmp_path / "a", "m1", "orig", question_set="aaaaaaaaaaaa", sampling="frames:8")
    b = _run(tmp_path / "b", "m1", "black", question_set="aaaaaaaaaaaa", sampling="frames:8")
    c = _run(tmp_path / "c", "m2", "orig", question_set="aaaaaaaaaaaa")
    frame = load_frame([a, b, c])
    assert len(frame) == 12 and set(frame.question_set) == {"aaaaaaaaaaaa"}


def test_runs_on_different_sets_are_refused_naming_both_files(tmp_path):
    a = _run(tmp_path / "a", "m1", question_set="aaaaaaaaaaaa")
    b = _run(tmp_path / "b", "m2", question_set="bbbbbbbbbbbb")
    with pytest.raises(LogError, match="vdgsynth: runs were made on different question sets") as exc:
        load_frame([a, b])
    message = str(exc.value)
    assert "question set aaaaaaaaaaaa" in message and "question set bbbbbbbbbbbb" in message
    assert str(a / "20261130_120000_samples_vdgsynth_vdg_orig.jsonl") in message
    assert str(b / "20261130_120000_samples_vdgsynth_vdg_orig.jsonl") in message
    assert "VDG_QUESTION_SET" in message


def test_a_run_on_a_set_and_one_on_every_question_are_refused(tmp_path):
    on_set = _run(tmp_path / "a", "m", "orig", question_set="aaaaaaaaaaaa")
    every = _run(tmp_path / "b", "m", "black")
    with pytest.raises(LogError, match=r"no question set \(every question\)") as exc:
        load_frame([on_set, every])
    assert str(tmp_path / "a") in str(exc.value) and str(tmp_path / "b") in str(exc.value)


def test_the_check_runs_before_duplicates_are_dropped(tmp_path):
    # The same model and condition twice, same questions: de-duplication would keep one run's rows only.
    first = _run(tmp_path / "a", "m", question_set="aaaaaaaaaaaa")
    second = _run(tmp_path / "b", "m", question_set="bbbbbbbbbbbb")
    with pytest.raises(LogError, match="different question sets"):
        load_frame([first, second], on_duplicate="last")


def test_different_benchmarks_may_use_different_sets(tmp_path):
    a = _run(tmp_path / "a", "m", question_set="aaaaaaaaaaaa")
    records = [sample(q, "orig", "A", benchmark="other") for q in IDS]
    for record in records:
        record["vdg"]["question_set"] = "bbbbbbbbbbbb"
    b = write_run(tmp_path / "b", "m", {"other_vdg_orig": records})
    frame = load_frame([a, b])
    assert dict(frame.groupby("benchmark").question_set.first()) == {
        "other": "bbbbbbbbbbbb",
        "vdgsynth": "aaaaaaaaaaaa",
    }
