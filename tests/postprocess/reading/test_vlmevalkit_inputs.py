"""VLMEvalKit files as inputs: one scoring rule per (label, benchmark), one file per condition, the condition read
only from the folders VLMEvalKit's layout gives, option columns A, B, ... without a gap or beyond H, and the
harness each input file names."""

from __future__ import annotations

import json
import logging
import os
import shutil
import string
from pathlib import Path

import pandas as pd
import pytest

from postprocess.reading.files import LogError
from postprocess.reading.frame import input_files
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.reading.vlmevalkit import read_vlmevalkit
from tests.helpers.vlmevalkit_files import answers, vlmevalkit_table, write_both, write_vlmevalkit
from vdg_tasks.cli import main

REPLY = "it is the second one"


def _videomme(condition: str = "orig", scored: bool = False, n: int = 6) -> pd.DataFrame:
    rows = [a for a in answers("videomme", n, lambda q: 4, None) if a.condition == condition]
    return vlmevalkit_table("videomme", rows, scored)


def _one_reply(scored: bool) -> pd.DataFrame:
    """Every question answered with one reply that names no letter; VLMEvalKit's judge scored it right where the
    key is B (the second option)."""
    table = _videomme("orig", scored=True)
    table["prediction"] = REPLY
    table["score"] = [1 if key == "B" else 0 for key in table["answer"]]
    return table if scored else table.drop(columns=["score"])


# ---------------------------------------------------------------------- finding 2: one scoring rule per arm


def test_a_score_file_and_a_prediction_file_for_two_conditions_of_one_label_are_refused(tmp_path):
    scored = write_vlmevalkit(tmp_path / "orig" / "m_Video-MME_score.tsv", _one_reply(scored=True))
    plain = write_vlmevalkit(tmp_path / "black" / "m_Video-MME.tsv", _one_reply(scored=False))
    with pytest.raises(LogError) as refused:
        load_frame(predictions=[("m:orig", scored), ("m:black", plain)], align="intersect")
    message = str(refused.value)
    assert str(scored) in message and str(plain) in message
    assert "m / videomme" in message and "_score file" in message
    # the same reply in both arms, both scored by VLMEvalKit's judge: one rule, no gap
    # (its rows in another order: the same bytes for two conditions are refused, test_one_file_for_two_conditions)
    black = _one_reply(scored=True).iloc[::-1]
    both = write_vlmevalkit(tmp_path / "black" / "m_Video-MME_score.tsv", black)
    frame = load_frame(predictions=[("m:orig", scored), ("m:black", both)], align="intersect")
    expected = [key == "B" for key in _one_reply(scored=True)["answer"]]  # score 1 where the key is B
    for condition in ("orig", "black"):
        rows = frame[frame["condition"] == condition].sort_values("question_id", key=lambda s: s.astype(int))
        assert rows["correct"].tolist() == expected
    kinds = {Path(s["file"]).name: s["kind"] for s in input_files(frame)}
    assert set(kinds.values()) == {"VLMEvalKit scores"}


def test_a_score_file_beside_an_lmms_eval_log_of_the_same_label_is_refused(tmp_path):
    predictions, run = write_both(tmp_path, "tsv", scored=True, missing=None, n_questions=10)
    orig = next(path for spec, path in predictions if spec == "m:orig" and "Video-MME" in path)
    mixed = r"and the samples log .*: m / videomme has condition orig from a VLMEvalKit _score file"
    with pytest.raises(LogError, match=mixed) as refused:
        load_frame(runs=[run], predictions=[("m:orig", orig)])
    assert str(run) in str(refused.value)
    # score files of another benchmark mix with nothing: Video-MME's arms are both read from the replies
    plain, _ = write_both(tmp_path / "plain", "tsv", scored=False, missing=None, n_questions=10)
    mvbench = [(s, p) for s, p in predictions if "MVBench" in p]
    videomme = [(s, p) for s, p in plain if "Video-MME" in p]
    frame = load_frame(predictions=mvbench + videomme)
    assert set(frame["benchmark"]) == {"videomme", "mvbench"}


# ---------------------------------------------------------------------- findings 3 and 4: option columns


def _mcq(columns: str, rows: int = 3, blank: dict[tuple[int, str], None] | None = None, **fields) -> pd.DataFrame:
    records = []
    for q in range(rows):
        record = {"index": q, "question": f"q{q}", "category": "cat", "answer": "A", "prediction": "A"}
        record.update({x: f"option {x} of {q}" for x in columns})
        record.update(fields)
        records.append(record)
    table = pd.DataFrame.from_records(records)
    for (row, column), value in (blank or {}).items():
        table[column] = table[column].astype(object)
        table.loc[row, column] = value
    return table


def test_nine_option_columns_are_refused_naming_row_and_columns(tmp_path):
    path = write_vlmevalkit(tmp_path / "m_MyBench.tsv", _mcq(string.ascii_uppercase[:9], prediction="I"))
    with pytest.raises(LogError, match=r"m_MyBench\.tsv row 2: 9 options \(columns A-I\); vdg reads 2 to 8 \(A-H\)"):
        read_vlmevalkit(path, "m:orig", benchmark="mybench")
    eight = write_vlmevalkit(tmp_path / "m_Eight.tsv", _mcq(string.ascii_uppercase[:8], prediction="H", answer="H"))
    rows = read_vlmevalkit(eight, "m:orig", benchmark="mybench")
    assert rows["n_options"].tolist() == [8, 8, 8] and rows["correct"].tolist() == [True] * 3


def test_a_row_using_a_ninth_column_is_refused_though_others_have_fewer(tmp_path):
    table = _mcq("ABCDEFGHI", blank={(0, "I"): None, (2, "I"): None})
    path = write_vlmevalkit(tmp_path / "m_MyBench.tsv", table)
    with pytest.raises(LogError, match=r"m_MyBench\.tsv row 3: 9 options \(columns A-I\)"):
        read_vlmevalkit(path, "m:orig", benchmark="mybench")


def test_a_missing_option_column_is_refused_naming_it(tmp_path):
    path = write_vlmevalkit(tmp_path / "m_MyBench.tsv", _mcq("ABD", answer="C", prediction="C"))
    with pytest.raises(LogError, match=r"m_MyBench\.tsv: option columns A, B, D: no column C"):
        read_vlmevalkit(path, "m:orig", benchmark="mybench")


def test_a_blank_column_before_a_filled_one_is_refused_and_trailing_blanks_are_fewer_options(tmp_path):
    gap = _mcq("ABCD", blank={(1, "C"): None})
    with pytest.raises(LogError, match=r"m_MyBench\.tsv row 3: column C is blank but column D holds an option"):
        read_vlmevalkit(write_vlmevalkit(tmp_path / "m_MyBench.tsv", gap), "m:orig", benchmark="mybench")
    # VLMEvalKit's image MCQ: options A..K with blanks for a question that has fewer
    fewer = _mcq("ABCD", blank={(1, "C"): None, (1, "D"): None, (2, "D"): None}, answer="B", prediction="B")
    rows = read_vlmevalkit(write_vlmevalkit(tmp_path / "m_Fewer.tsv", fewer), "m:orig", benchmark="mybench")
    assert rows["n_options"].tolist() == [4, 2, 3]
    assert rows["correct"].tolist() == [True, True, True]


# ---------------------------------------------------------------------- finding 5: one file per condition


def test_one_file_for_two_conditions_is_refused(tmp_path):
    path = write_vlmevalkit(tmp_path / "m_Video-MME.tsv", _videomme())
    with pytest.raises(LogError) as refused:
        load_frame(predictions=[("m:orig", path), ("m:black", path)], align="intersect")
    message = str(refused.value)
    assert f"--predictions m:orig={path} and --predictions m:black={path}" in message
    assert "for conditions orig and black of m" in message
    out = tmp_path / "report"
    args = ["report", f"--predictions=m:orig={path}", f"--predictions=m:black={path}", "--out", str(out)]
    assert main([*args, "--no-plots", "--resamples", "20"]) == 2


def test_a_linked_condition_folder_and_a_copy_are_refused(tmp_path):
    orig = write_vlmevalkit(tmp_path / "vlm" / "orig" / "m" / "m_Video-MME.tsv", _videomme())
    (tmp_path / "vlm" / "black").symlink_to("orig")
    linked = tmp_path / "vlm" / "black" / "m" / "m_Video-MME.tsv"
    with pytest.raises(LogError, match=r"one file \(.*orig/m/m_Video-MME\.tsv\) twice for condition orig of m"):
        load_frame(predictions=[("", orig), ("", linked)], align="intersect")
    copy = tmp_path / "copy" / "black" / "m_Video-MME.tsv"
    copy.parent.mkdir(parents=True)
    shutil.copyfile(orig, copy)
    with pytest.raises(LogError, match=r"files of the same content for conditions orig and black of m"):
        load_frame(predictions=[("", orig), ("", copy)], align="intersect")


def test_a_prediction_json_given_twice_with_one_label_is_refused_but_may_hold_several_conditions(tmp_path):
    records = [
        {"condition": condition, "question_id": str(q), "task_type": "t", "ground_truth": "A", "prediction": "A",
         "n_options": 4, "video_id": f"v{q}", "benchmark": "b"}
        for condition in ("orig", "black") for q in range(4)
    ]  # fmt: skip
    path = tmp_path / "preds.json"
    path.write_text(json.dumps(records))
    assert set(load_frame(predictions=[("m", path)])["condition"]) == {"orig", "black"}
    with pytest.raises(LogError, match=r"--predictions m=.*preds\.json and --predictions m=.*: one file given twice"):
        load_frame(predictions=[("m", path), ("m", tmp_path / "." / "preds.json")])
    assert set(load_frame(predictions=[("m", path), ("n", path)])["model"]) == {"m", "n"}


# ---------------------------------------------------------------------- finding 6: the condition's folder


@pytest.mark.parametrize(
    "parts",
    [("order", "vlm", "m"), ("open", "runs", "2025", "m"), ("metadata", "x", "y"), ("single", "a", "b")],
)
def test_a_condition_named_only_far_up_is_not_read(tmp_path, parts):
    path = write_vlmevalkit(tmp_path.joinpath(*parts, "m_Video-MME.tsv"), _videomme())
    with pytest.raises(LogError, match=r"no condition: give --predictions m:CONDITION="):
        read_vlmevalkit(path)


def test_dot_dot_is_resolved_before_the_folder_is_read(tmp_path):
    write_vlmevalkit(tmp_path / "dd" / "orig" / "m_Video-MME.tsv", _videomme())
    (tmp_path / "dd" / "orig" / "black").mkdir()
    table = read_vlmevalkit(tmp_path / "dd" / "orig" / "black" / ".." / "m_Video-MME.tsv")
    assert set(table["condition"]) == {"orig"}


def test_the_model_folder_and_vlmevalkits_run_folder_are_looked_through(tmp_path, caplog):
    from postprocess.reading.vlmevalkit import condition_from_folders  # its (condition, folder) is new

    run = tmp_path / "results" / "black" / "m" / "T20250101_G1a2b3c4d"
    made = write_vlmevalkit(run / "m_Video-MME.tsv", _videomme("black"))
    link = tmp_path / "results" / "black" / "m" / "m_Video-MME.tsv"
    os.symlink(made, link)  # VLMEvalKit links each result into the model's folder
    assert condition_from_folders(made) == ("black", tmp_path / "results" / "black")
    assert condition_from_folders(link) == ("black", tmp_path / "results" / "black")
    with caplog.at_level(logging.INFO, logger="postprocess.reading.vlmevalkit"):
        assert set(read_vlmevalkit(link)["condition"]) == {"black"}
    assert f"condition black, named by its folder {tmp_path / 'results' / 'black'}" in caplog.text


# ---------------------------------------------------------------------- finding 13: which harness


def test_each_input_file_names_its_harness(tmp_path):
    from postprocess.reading.files import harness_of  # new: the harness behind a sources entry's kind

    predictions, run = write_both(tmp_path, "tsv", scored=False, missing=None, n_questions=10)
    vlm = {Path(s["file"]).name: s["kind"] for s in input_files(load_frame(predictions=predictions))}
    assert {harness_of(kind) for kind in vlm.values()} == {"VLMEvalKit"}
    logs = {s["kind"] for s in input_files(load_frame(runs=[run]))}
    assert {harness_of(kind) for kind in logs} == {"lmms-eval"}
    assert harness_of("predictions") == ""


def test_a_json_file_alone_and_a_path_holding_an_equals_sign_are_read_by_the_naming_rule(tmp_path, capsys):
    folder = tmp_path / "runs" / "lr=1e-5"
    orig = folder / "orig" / "m_Video-MME.json"
    black = folder / "black" / "m_Video-MME.json"
    for path, condition in ((orig, "orig"), (black, "black")):
        path.parent.mkdir(parents=True)
        path.write_text(_videomme(condition).to_json(orient="records"), encoding="utf-8")
    out = tmp_path / "report"
    args = ["report", f"--predictions={orig}", f"--predictions={black}", "--out", str(out), "--no-plots"]
    assert main([*args, "--resamples", "20"]) == 0
    capsys.readouterr()
    vdg = pd.read_csv(out / "vdg.csv")
    assert set(vdg.model) == {"m"} and set(vdg.benchmark) == {"videomme"}


def test_a_plain_prediction_json_alone_is_asked_for_its_model(tmp_path, capsys):
    path = tmp_path / "preds.json"
    path.write_text(json.dumps([{"question_id": "q1", "condition": "orig", "prediction": "A"}]), encoding="utf-8")
    args = ["report", f"--predictions={path}", "--benchmark", "videomme", "--out", str(tmp_path / "r")]
    assert main(args) == 2
    assert f"not a VLMEvalKit prediction file, so its name says no model: give --predictions MODEL={path}" in (
        capsys.readouterr().err
    )
