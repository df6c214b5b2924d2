"""How many options a question has (postprocess.reading.answer_options), read from prediction files and samples logs."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.accuracy import accuracy_table
from postprocess.analyses.coverage import coverage_table
from postprocess.analyses.letters import letters_table
from postprocess.reading.answer_options import KNOWN_OPTION_COUNTS, benchmark_key, declared_option_count
from postprocess.reading.files import LogError
from postprocess.reading.frame import input_files
from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.prediction_files import five_option_records, letter_counts, write_records

FAST = ReportSettings(n_resamples=100, stability_resamples=20)


@pytest.mark.parametrize("benchmark", ["egoschema", "ego5"])
def test_five_option_predictions_count_e_as_an_answer(tmp_path, benchmark):
    records = five_option_records("m")
    path = write_records(tmp_path / "m.jsonl", records)
    frame = load_frame(predictions=[("m", path)], benchmark=benchmark)
    # egoschema declares 5 options; for an unknown benchmark each question has the largest letter seen in its
    # task type (the key and the replies, no floor).
    by_type: dict[str, int] = {}
    for r in records:
        seen = max("ABCDE".index(r["ground_truth"]), "ABCDE".index(r["prediction"])) + 1
        by_type[r["task_type"]] = max(by_type.get(r["task_type"], 0), seen)
    largest = {r["q_uid"]: by_type[r["task_type"]] for r in records}
    want_options = {q: 5 for q in largest} if benchmark == "egoschema" else largest
    want_rule = "benchmark declares" if benchmark == "egoschema" else "inferred per task type"
    assert (frame["n_options_rule"] == want_rule).all()
    assert frame.groupby("question_id")["n_options"].first().to_dict() == want_options
    # Every prediction is a bare letter A-E: all are answers, none unparsed.
    assert (frame["status"] == "ok").all()
    for condition in ("orig", "black"):
        rows = [r for r in records if r["condition"] == condition]
        sub = frame[frame["condition"] == condition]
        assert sub["correct"].sum() == sum(r["prediction"] == r["ground_truth"] for r in rows)
    cov = coverage_table(frame)
    assert (cov["n_unparsed"] == 0).all() and (cov["flag"] == "").all()
    letters = letters_table(frame).set_index("condition")
    chance = sum(1 / n for n in want_options.values()) / len(want_options)
    for condition in ("orig", "black"):
        want = letter_counts(records, condition)
        assert [letters.loc[condition, f"pred_{x}"] for x in "ABCDE"] == [want[x] for x in "ABCDE"]
        assert want["E"] > 0 and letters.loc[condition, "n_options"] == 5 and letters.loc[condition, "df"] == 4
        assert math.isclose(letters.loc[condition, "chance"], chance)
    overall = accuracy_table(frame).query("task_type == 'Overall'")
    assert all(math.isclose(c, chance) for c in overall["chance"])
    origin = "benchmark 'egoschema' declares 5" if benchmark == "egoschema" else "not given: inferred per task type"
    assert input_files(frame)[0]["n_options_source"].startswith(origin)


def test_n_options_and_options_fields_mix_three_four_and_five(tmp_path):
    # Task "three" has 3 options (given as n_options), "four" 4 (an options list), "five" 5 (n_options).
    records = []
    for i in range(6):
        records.append({"question_id": f"t3-{i}", "task_type": "three", "n_options": 3, "ground_truth": "ABC"[i % 3]})
        records.append(
            {
                "question_id": f"t4-{i}",
                "task_type": "four",
                "options": ["A. red", "B. blue", "C. green", "D. black"],
                "ground_truth": "ABCD"[i % 4],
            }
        )
        records.append({"question_id": f"t5-{i}", "task_type": "five", "n_options": 5, "ground_truth": "ABCDE"[i % 5]})
    rows = []
    for condition in ("orig", "black"):
        for k, r in enumerate(records):
            # D: beyond a 3-option question (unparsed); "green" names option C of the 4-option list.
            pred = {"three": "D" if k % 4 == 0 else "A", "four": "green", "five": "E"}[r["task_type"]]
            rows.append(dict(r, condition=condition, prediction=pred))
    frame = load_frame(predictions=[("m", write_records(tmp_path / "p.csv", rows))], benchmark="mixed-bench")
    by_q = frame[frame["condition"] == "orig"].set_index("question_id")
    assert by_q.loc["t3-0", "status"] == "unparsed" and by_q.loc["t3-0", "pred"] is None
    assert by_q.loc["t3-1", ["status", "pred"]].tolist() == ["ok", "A"]
    assert by_q.loc["t4-0", ["status", "pred"]].tolist() == ["ok", "C"]  # option text read with the options
    assert by_q.loc["t5-0", ["status", "pred"]].tolist() == ["ok", "E"]
    assert by_q.groupby("task_type")["n_options"].unique().map(list).to_dict() == {
        "three": [3],
        "four": [4],
        "five": [5],
    }
    table = accuracy_table(frame).set_index(["condition", "task_type"])
    chance = {"three": 1 / 3, "four": 1 / 4, "five": 1 / 5}
    for task_type, value in chance.items():
        assert math.isclose(table.loc[("orig", task_type), "chance"], value)
    assert math.isclose(table.loc[("orig", "Overall"), "chance"], (6 / 3 + 6 / 4 + 6 / 5) / 18)
    assert input_files(frame)[0]["n_options_source"] == "n_options field (24 records); options field (12 records)"


def test_inferred_count_is_per_task_type_across_models_and_conditions(tmp_path):
    base = {"task_type": "T", "condition": "orig"}
    a = [
        dict(base, question_id="q1", ground_truth="A", prediction="B"),
        dict(base, question_id="q2", ground_truth="B", prediction="A"),
        dict(base, question_id="q3", task_type="U", ground_truth="A", prediction="C"),
    ]
    # Only model b, under black, answers E to q1: every question of task type T has 5 options, q2 (which no one
    # answered E) included; task type U shows nothing beyond C, so its q3 has 3 (no floor of 4).
    b = [dict(r, prediction="E" if r["question_id"] == "q1" else "C") for r in a]
    b += [dict(r, condition="black", prediction="E" if r["question_id"] == "q1" else "C") for r in a]
    a += [dict(r, condition="black") for r in a]
    frame = load_frame(
        predictions=[("a", write_records(tmp_path / "a.json", a)), ("b", write_records(tmp_path / "b.json", b))],
        benchmark="unknown",
    )
    largest = {}
    for r in a + b:
        seen = max("ABCDEFGH".index(r["ground_truth"]), "ABCDEFGH".index(r["prediction"])) + 1
        largest[r["task_type"]] = max(largest.get(r["task_type"], 0), seen)
    counts = frame.groupby("question_id")["n_options"].unique().map(list).to_dict()
    assert (
        counts
        == {"q1": [largest["T"]], "q2": [largest["T"]], "q3": [largest["U"]]}
        == {
            "q1": [5],
            "q2": [5],
            "q3": [3],
        }
    )
    assert (frame["n_options_rule"] == "inferred per task type").all()
    assert (frame.loc[(frame["model"] == "b") & (frame["question_id"] == "q1"), "status"] == "ok").all()


def test_an_answer_key_beyond_the_declared_count_is_refused(tmp_path):
    records = [{"question_id": "1-1", "task_type": "T", "condition": "orig", "ground_truth": "E", "prediction": "E"}]
    path = write_records(tmp_path / "p.json", records)
    with pytest.raises(LogError, match=r"p\.json\[#0\]: the answer key 'E' is not one of the question's 4 option"):
        load_frame(predictions=[("m", path)], benchmark="videomme")


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ({"n_options": 9}, r"n_options 9 is not a number of options from 2 to 8"),
        ({"n_options": 3, "options": ["a", "b"]}, r"n_options is 3 but 'options' lists 2 options"),
        ({"options": "red, blue"}, r"'options' must be a non-empty list of the option texts"),
    ],
)
def test_bad_option_fields_name_the_record(tmp_path, field, message):
    record = {"question_id": "1-1", "task_type": "T", "condition": "orig", "ground_truth": "A", "prediction": "A"}
    path = write_records(tmp_path / "p.jsonl", [dict(record, **field)])
    with pytest.raises(LogError, match=r"p\.jsonl:1: " + message):
        load_frame(predictions=[("m", path)], benchmark="b")


def test_known_benchmarks_and_their_names():
    assert benchmark_key("Video-MME") == "videomme" and declared_option_count("Video_MME") == 4
    assert declared_option_count("EgoSchema") == 5 and declared_option_count("mvbench") is None
    assert all(2 <= n <= 6 for n in KNOWN_OPTION_COUNTS.values())


def test_a_five_option_benchmark_in_a_full_run_is_not_flagged(tmp_path):
    records = five_option_records("m")
    frame = load_frame(predictions=[("m", write_records(tmp_path / "m.json", records))], benchmark="egoschema")
    tables = run_all(frame, FAST)
    summary = tables["summary"].iloc[0]
    assert "unparsed" not in summary["flags"] and summary["n"] == 60
    orig = pd.Series([r["prediction"] == r["ground_truth"] for r in records if r["condition"] == "orig"])
    black = pd.Series([r["prediction"] == r["ground_truth"] for r in records if r["condition"] == "black"])
    assert math.isclose(summary["vdg"], orig.mean() - black.mean())
