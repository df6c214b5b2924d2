"""VLMEvalKit's prediction and score files: the same report as lmms-eval logs of the same answers, the naming
rule, and every refusal naming its file and row."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.reading.files import LogError
from postprocess.reading.frame import SAMPLE_COLUMNS, input_files
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.reading.vlmevalkit import file_name, is_vlmevalkit_file, read_letter, read_vlmevalkit
from tests.helpers.vlmevalkit_files import answers, vlmevalkit_table, write_both, write_vlmevalkit
from vdg_tasks.cli import main

FAST = ReportSettings(n_resamples=50, stability_resamples=10, align="intersect")
KEY = ["model", "benchmark", "condition", "question_id"]
#: The columns of the sources table that name the input file, how it was read and the model behind it (lmms-eval's
#: config names it, VLMEvalKit's files do not): they differ by design.
SOURCE_NAMING = ["file", "kind", "question_id_field", "video_id_field", "n_options_source", "model_source"]


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(KEY).reset_index(drop=True)


@pytest.fixture(scope="module")
def from_logs(tmp_path_factory):
    """The frame and tables of the lmms-eval logs (the same for every VLMEvalKit format)."""
    _, run = write_both(tmp_path_factory.mktemp("logs"), "tsv", scored=False)
    frame = load_frame(runs=[run], align="intersect")
    return frame, run_all(frame, FAST)


@pytest.mark.parametrize("scored", [False, True], ids=["predictions", "scores"])
@pytest.mark.parametrize("fmt", ["xlsx", "tsv"])
def test_every_csv_equals_the_lmms_eval_logs_of_the_same_answers(tmp_path, from_logs, fmt, scored):
    predictions, _ = write_both(tmp_path, fmt, scored)
    frame = load_frame(predictions=predictions, align="intersect")
    logs_frame, logs_tables = from_logs
    mine, theirs = _sorted(frame), _sorted(logs_frame)
    # every column but the row's file:line, and the statuses the error rules act on are all there
    pd.testing.assert_frame_equal(mine.drop(columns="source"), theirs.drop(columns="source"), check_dtype=False)
    assert set(mine["status"]) == {"ok", "unparsed", "error"}
    assert set(mine["benchmark"]) == {"videomme", "mvbench"}
    tables = run_all(frame, FAST)
    assert tables.keys() == logs_tables.keys()
    assert not tables["vdg"].empty
    for name, table in tables.items():
        other = logs_tables[name]
        if name == "sources":
            # one row per file, in the order given: sorted, less the columns naming the file
            table, other = (
                t.drop(columns=SOURCE_NAMING).sort_values(["benchmark", "conditions"]) for t in (table, other)
            )
        assert table.to_csv(index=False) == other.to_csv(index=False), name


def test_a_missing_row_is_refused_under_strict_alignment_as_for_logs(tmp_path):
    predictions, run = write_both(tmp_path, "xlsx", scored=True)
    with pytest.raises(LogError) as from_files:
        load_frame(predictions=predictions)
    with pytest.raises(LogError) as from_logs:
        load_frame(runs=[run])
    assert "condition 'black' lacks 1 of 40 questions" in str(from_files.value)
    assert str(from_files.value) == str(from_logs.value)


def test_score_minus_one_is_unparsed_and_a_blank_prediction_an_error(tmp_path):
    predictions, _ = write_both(tmp_path, "tsv", scored=True, missing=None)
    path = dict((p, m) for m, p in predictions)
    black = next(p for p in path if "black" in p and "Video-MME" in p)
    table = read_vlmevalkit(black, "m:black").set_index("question_id")
    assert table.loc["4", ["status", "pred"]].tolist() == ["unparsed", None] and not table.loc["4", "correct"]
    assert table.loc["3", "status"] == "error" and table.loc["3", "error"] == "no prediction"
    assert pd.isna(table.loc["3", "correct"])
    assert table.loc["0", ["video_id", "duration", "domain", "sub_category"]].tolist() == [
        "vid000", "short", "Knowledge", "Astronomy"
    ]  # fmt: skip
    assert input_files(load_frame(predictions=[("m:black", black)]))[0]["kind"] == "VLMEvalKit scores"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Qwen2-VL-7B-Instruct_Video-MME.xlsx", ("Qwen2-VL-7B-Instruct", "Video-MME", "videomme", "", False)),
        ("llava_video_7b_Video-MME_8frame.xlsx", ("llava_video_7b", "Video-MME_8frame", "videomme", "frames:8", False)),
        ("m_MVBench_MP4_1fps_score.tsv", ("m", "MVBench_MP4_1fps", "mvbench", "fps:1", True)),
        ("m_Video-MME_0.5fps.json", ("m", "Video-MME_0.5fps", "videomme", "fps:0.5", False)),
        ("m_Video-MME_8frame_subs.xlsx", ("m", "Video-MME_8frame_subs", "videomme", "8frame_subs", False)),
    ],
)
def test_the_naming_rule(name, expected):
    read = file_name(Path(name))
    assert (read.model, read.dataset, read.benchmark, read.setting, read.scored) == expected


def test_a_dataset_vdg_does_not_know_gives_no_name():
    assert file_name(Path("m_Video-MME-v2_64frame.xlsx")) is None
    assert file_name(Path("MMBench_DEV_EN.xlsx")) is None


def test_file_alone_takes_model_and_setting_from_its_name_and_condition_from_its_folder(tmp_path):
    for condition in ("orig", "black"):
        rows = [a for a in answers("videomme", 12, lambda q: 4, None) if a.condition == condition]
        write_vlmevalkit(
            tmp_path / "results" / condition / "Qwen2-VL" / "Qwen2-VL_Video-MME_8frame.xlsx",
            vlmevalkit_table("videomme", rows, scored=False),
        )
    files = sorted(str(p) for p in (tmp_path / "results").rglob("*.xlsx"))
    frame = load_frame(predictions=[("", f) for f in files])
    assert set(frame["model"]) == {"Qwen2-VL@8f"}
    assert set(frame["condition"]) == {"orig", "black"}
    assert set(frame["sampling"]) == {"frames:8"} and set(frame["frames"]) == {8}
    out = tmp_path / "report"
    args = ["report", *[f"--predictions={f}" for f in files], "--out", str(out), "--no-plots", "--resamples", "50"]
    assert main(args) == 0
    vdg = pd.read_csv(out / "vdg.csv")
    assert set(vdg["model"]) == {"Qwen2-VL@8f"}


def test_image_style_mcq_reads_letters_columns_and_category(tmp_path):
    table = pd.DataFrame(
        {
            "index": [10, 11, 12],
            "question": ["q1", "q2", "q3"],
            "A": ["red", "up", "one"],
            "B": ["blue", "down", "two"],
            "C": ["green", None, "three"],
            "answer": ["B", "A", "C"],
            "category": ["colour", "direction", "count"],
            "l2-category": ["perception", "perception", "reasoning"],
            "prediction": ["B", "The answer is (B).", "three"],
        }
    )
    path = write_vlmevalkit(tmp_path / "m_MMBench_DEV_EN.tsv", table)
    with pytest.raises(LogError, match="no benchmark: .*give --benchmark"):
        read_vlmevalkit(path, "m:orig")
    rows = read_vlmevalkit(path, "m:orig", benchmark="mmbench").set_index("question_id")
    assert rows["task_type"].tolist() == ["colour", "direction", "count"]
    assert rows["n_options"].tolist() == [3, 2, 3]
    assert rows["pred"].tolist() == ["B", "B", "C"] and rows["correct"].tolist() == [True, False, True]
    assert rows["l2-category"].tolist() == ["perception", "perception", "reasoning"]


def test_vlmevalkit_json_is_told_from_another_harness_json(tmp_path):
    rows = vlmevalkit_table("mvbench", [a for a in answers("mvbench", 6, lambda q: 3, None) if a.condition == "orig"],
                            scored=False)  # fmt: skip
    path = tmp_path / "m_MVBench.json"
    path.write_text(json.dumps(rows.to_dict("records")))
    assert is_vlmevalkit_file(path)
    assert set(load_frame(predictions=[("m:orig", str(path))])["benchmark"]) == {"mvbench"}
    other = tmp_path / "preds.json"
    other.write_text(json.dumps([{"condition": "orig", "index": 1, "prediction": "A"}]))
    assert not is_vlmevalkit_file(other)


@pytest.mark.parametrize(
    ("text", "profile", "n", "letter"),
    [
        ("The best answer is C.", "videomme", 4, "C"),
        ("Answer: (D) the dog", "videomme", 4, "D"),
        ("I am not sure.", "videomme", 4, None),
        ("(B) thing", "mvbench", 3, "B"),
        ("b.", "mvbench", 3, "B"),
        ("The answer is C", "mvbench", 3, "C"),  # its first word is no letter: vdg's parser reads the rest
        ("", "mvbench", 3, None),  # VLMEvalKit's substring test would score an empty first word right
        ("thing 2", "mvbench", 3, "C"),  # the option's text
    ],
)
def test_letters_are_read_as_vlmevalkit_reads_them(text, profile, n, letter):
    options = [f"thing {k}" for k in range(n)]
    assert read_letter(text, options, profile) == letter


def _videomme(tmp_path):
    rows = [a for a in answers("videomme", 6, lambda q: 4, None) if a.condition == "orig"]
    return vlmevalkit_table("videomme", rows, scored=True)


def _write(tmp_path, table, name="m_Video-MME_score.tsv"):
    return write_vlmevalkit(tmp_path / name, table)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda t: t.at.__setitem__((2, "score"), 2), r"m_Video-MME_score\.tsv row 4: score '2' is not 1"),
        (lambda t: t.__setitem__("index", [0, 1, 2, 1, 4, 5]), r"rows 3 and 5: question id '1' appears twice"),
        (lambda t: t.__setitem__("task_type", ["a", "b", None, "c", "d", "e"]), r"row 4: no task_type"),
        (lambda t: t.__setitem__("answer", ["A", "B", "Z", "D", "A", "B"]), r"row 4: answer 'Z' is neither"),
        (lambda t: t.__setitem__("candidates", ["__import__('os')"] * 6), r"row 2: candidates .* not a list"),
        (lambda t: t.pop("prediction"), r"missing column\(s\) prediction"),
    ],
)
def test_bad_rows_are_named(tmp_path, edit, match):
    table = _videomme(tmp_path)
    edit(table)
    with pytest.raises(LogError, match=match):
        read_vlmevalkit(_write(tmp_path, table), "m:orig")


def test_a_score_contradicting_the_prediction_is_refused(tmp_path):
    table = _videomme(tmp_path)
    table.loc[0, ["prediction", "answer", "score"]] = ["A", "A", 0]
    with pytest.raises(LogError, match=r"row 2: score 0 but prediction 'A' reads as the answer A"):
        read_vlmevalkit(_write(tmp_path, table), "m:orig")


def test_a_score_file_without_a_score_for_an_answer_is_refused(tmp_path):
    table = _videomme(tmp_path)
    table["score"] = table["score"].astype(object)
    table.loc[1, "score"] = None
    with pytest.raises(LogError, match=r"row 3: the score file has no score"):
        read_vlmevalkit(_write(tmp_path, table), "m:orig")


def test_conditions_labels_and_benchmarks_are_checked(tmp_path):
    path = _write(tmp_path, _videomme(tmp_path))
    with pytest.raises(LogError, match=r"'blak' is not a declared condition\. Did you mean 'black'"):
        read_vlmevalkit(path, "m:blak")
    with pytest.raises(LogError, match=r"no condition: give --predictions m:CONDITION="):
        read_vlmevalkit(path, "")
    assert set(read_vlmevalkit(path, ":original")["condition"]) == {"orig"}  # an alias; the label from the name
    unnamed = _write(tmp_path, _videomme(tmp_path), name="answers.xlsx")
    with pytest.raises(LogError, match=r"no model label: give --predictions LABEL:CONDITION="):
        read_vlmevalkit(unnamed, ":orig")


def test_frame_columns_are_the_frames(tmp_path):
    table = read_vlmevalkit(_write(tmp_path, _videomme(tmp_path)), "m:orig")
    assert list(table.columns) == list(SAMPLE_COLUMNS)


def test_an_unreadable_xlsx_is_named(tmp_path):
    path = tmp_path / "m_Video-MME.xlsx"
    path.write_text("not a workbook")
    with pytest.raises(LogError, match=r"m_Video-MME\.xlsx: not a readable xlsx file"):
        read_vlmevalkit(path, "m:orig")
