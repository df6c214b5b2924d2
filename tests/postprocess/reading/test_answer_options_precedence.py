"""One precedence for option counts (postprocess.reading.answer_options): options file, record, benchmark, inferred
per task type.

The data are generated here: a benchmark no one declares, whose task type "three" has 3 options (no key and no
reply ever shows D) and "four" 4, as prediction files without n_options / options fields.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from postprocess.analyses.chance import chance_table
from postprocess.analyses.letters import letters_table
from postprocess.analyses.option_counts import option_counts_table
from postprocess.reading.files import LogError
from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.fakelogs import sample, write_run
from tests.helpers.prediction_files import write_records
from vdg_tasks.cli import main
from vdg_tasks.vocabulary.seeding import rng_for

BENCH = "toybench"
#: task type -> its true option count; every question of a type has as many options.
TYPES = {"three": 3, "four": 4}
N_PER_TYPE = 40
FAST = ["--resamples", "50", "--stability-resamples", "20", "--no-plots"]


def records(model: str = "m") -> list[dict]:
    """Keys cycle over the type's letters; replies are right with probability 0.6 (orig) / 0.35 (black), else
    another of the type's letters: nothing beyond the true count ever appears."""
    out = []
    for condition, p in (("orig", 0.6), ("black", 0.35)):
        rng = rng_for("option-rules", model, condition)
        for task_type, k in TYPES.items():
            letters = "ABCDEFGH"[:k]
            for i in range(N_PER_TYPE):
                answer = letters[i % k]
                wrong = [x for x in letters if x != answer]
                pred = answer if rng.random() < p else wrong[int(rng.integers(len(wrong)))]
                qid = f"{task_type}-{i:02d}"
                out.append({"question_id": qid, "video_id": qid, "task_type": task_type, "condition": condition,
                            "ground_truth": answer, "prediction": pred})  # fmt: skip
    return out


def write_options(path: Path, rows: list[dict], columns: list[str] | None = None) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, columns or list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture()
def predictions(tmp_path) -> Path:
    return write_records(tmp_path / "m.jsonl", records())


def test_a_three_option_task_type_gets_chance_one_third_and_a_four_option_one_a_quarter(predictions):
    frame = load_frame(predictions=[("m", predictions)], benchmark=BENCH)
    per_type = frame.groupby("task_type")["n_options"].unique().map(list).to_dict()
    assert per_type == {t: [k] for t, k in TYPES.items()}
    assert (frame["n_options_rule"] == "inferred per task type").all()

    table = chance_table(frame).set_index(["condition", "task_type"])
    for task_type, k in TYPES.items():
        row = table.loc[("black", task_type)]
        assert math.isclose(row["chance"], 1 / k) and row["n_options"] == str(k)
        assert row["n_options_rule"] == "inferred per task type"
        # The exact test against that chance: scipy's binomial test.
        want = stats.binomtest(int(row["n_correct"]), int(row["n"]), 1 / k, alternative="greater").pvalue
        assert math.isclose(row["p_chance"], want, rel_tol=1e-9)
    overall = table.loc[("black", "Overall")]
    assert math.isclose(overall["chance"], np.mean([1 / k for k in TYPES.values()]))

    # letters: chance and the chi-square null are uniform over each question's own options, so D is expected
    # only on the 4-option questions (1/4 of them) and A-C on every question (1/3 or 1/4).
    letters = letters_table(frame).set_index("condition")
    black = [r for r in records() if r["condition"] == "black"]
    expected = np.array([sum(1 / TYPES[r["task_type"]] for r in black if TYPES[r["task_type"]] > i) for i in range(4)])
    observed = np.array([sum(r["prediction"] == x for r in black) for x in "ABCD"])
    ref = stats.chisquare(observed, expected)
    assert letters.loc["black", "chi2_pred"] == pytest.approx(ref.statistic)
    assert letters.loc["black", "p_pred"] == pytest.approx(ref.pvalue)
    assert math.isclose(letters.loc["black", "chance"], sum(1 / TYPES[r["task_type"]] for r in black) / len(black))
    assert letters.loc["black", "n_options_rule"] == "inferred per task type"


def test_the_report_first_screen_names_every_inferred_count(tmp_path, predictions, capsys):
    out = tmp_path / "report"
    assert main(["report", "--predictions", f"m={predictions}", "--benchmark", BENCH, "--out", str(out), *FAST]) == 0
    capsys.readouterr()
    markdown = (out / "report.md").read_text()
    first_screen = markdown.split("\n## ", 4)[:4]  # the title, At a glance, the findings and the summary section
    lines = [f"{BENCH} / {t}: {k} options, inferred per task type ({N_PER_TYPE} questions)" for t, k in TYPES.items()]
    for line in lines:
        assert any(f"- {line}" in part for part in first_screen), line
        assert line in (out / "report.html").read_text()
    table = pd.read_csv(out / "option_counts.csv")
    assert table[["task_type", "n_options", "n_questions"]].values.tolist() == [
        [t, TYPES[t], N_PER_TYPE] for t in sorted(TYPES)
    ]


@pytest.mark.parametrize("keying", ["question_id", "task_type"])
def test_an_options_file_overrides_the_inferred_count(tmp_path, predictions, keying, capsys):
    # Say the "three" questions have 5 options: by task type, or question by question.
    if keying == "task_type":
        rows = [{"benchmark": BENCH, "task_type": "three", "n_options": 5}]
    else:
        rows = [{"benchmark": BENCH, "question_id": f"three-{i:02d}", "n_options": 5} for i in range(N_PER_TYPE)]
    path = write_options(tmp_path / "options.csv", rows)
    frame = load_frame(predictions=[("m", predictions)], benchmark=BENCH, options_file=path)
    three = frame[frame["task_type"] == "three"]
    assert (three["n_options"] == 5).all() and (three["n_options_rule"] == "options file").all()
    four = frame[frame["task_type"] == "four"]
    assert (four["n_options"] == 4).all() and (four["n_options_rule"] == "inferred per task type").all()
    table = chance_table(frame).set_index(["condition", "task_type"])
    assert math.isclose(table.loc[("black", "three"), "chance"], 1 / 5)
    assert table.loc[("black", "three"), "n_options_rule"] == "options file"
    assert table.loc[("black", "Overall"), "n_options_rule"] == "options file; inferred per task type"

    out = tmp_path / "report"
    args = ["report", "--predictions", f"m={predictions}", "--benchmark", BENCH, "--out", str(out), *FAST]
    assert main([*args, "--options-file", str(path)]) == 0
    capsys.readouterr()
    markdown = (out / "report.md").read_text()
    assert f"- {BENCH} / four: 4 options, inferred per task type" in markdown
    assert f"{BENCH} / three:" not in markdown
    assert json.loads((out / "report.json").read_text())["inputs"]["options_file"] == str(path)


def test_a_question_row_of_the_options_file_wins_over_its_task_type_row(tmp_path, predictions):
    rows = [
        {"benchmark": BENCH, "task_type": "three", "question_id": "", "n_options": 6},
        {"benchmark": "Toy-Bench", "task_type": "", "question_id": "three-00", "n_options": 3},
    ]
    path = write_options(tmp_path / "options.csv", rows)
    frame = load_frame(predictions=[("m", predictions)], benchmark=BENCH, options_file=path)
    counts = frame[frame["task_type"] == "three"].groupby("question_id")["n_options"].first()
    assert counts["three-00"] == 3 and (counts.drop("three-00") == 6).all()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("task_type,n_options\nthree,3\n", r"options\.csv:1: no 'benchmark' column"),
        ("benchmark,task_type\ntoybench,three\n", r"options\.csv:1: no 'n_options' column"),
        ("benchmark,n_options\ntoybench,3\n", r"options\.csv:1: neither a 'question_id' nor a 'task_type' column"),
        ("benchmark,task_type,n_options\ntoybench,three,3\notherbench,four,4\n", r"options\.csv:3: benchmark "),
        ("benchmark,task_type,n_options\ntoybench,three,1\n", r"options\.csv:2: n_options '1' is not a number"),
        ("benchmark,task_type,n_options\ntoybench,four,4\ntoybench,three,9\n", r"options\.csv:3: n_options '9'"),
        ("benchmark,task_type,n_options\ntoybench,three,three\n", r"options\.csv:2: n_options 'three'"),
        (
            "benchmark,question_id,n_options\ntoybench,three-01,3\ntoybench,four-00,4\ntoybench,three-01,3\n",
            r"options\.csv:4: question 'three-01' of toybench is given twice \(lines 2 and 4\)",
        ),
        (
            "benchmark,task_type,n_options\ntoybench,three,3\nToyBench,three,3\n",
            r"options\.csv:3: task type 'three' of ToyBench is given twice \(lines 2 and 3\)",
        ),
        ("benchmark,task_type,question_id,n_options\ntoybench,,,3\n", r"options\.csv:2: give a question_id or a"),
        ("benchmark,task_type,n_options\n,three,3\n", r"options\.csv:2: the benchmark is empty"),
    ],
)
def test_a_malformed_options_file_names_its_file_and_line(tmp_path, predictions, text, message):
    path = tmp_path / "options.csv"
    path.write_text(text)
    with pytest.raises(LogError, match=message):
        load_frame(predictions=[("m", predictions)], benchmark=BENCH, options_file=path)


def test_a_bad_options_file_fails_the_report_command_with_its_line(tmp_path, predictions, capsys):
    path = tmp_path / "options.csv"
    path.write_text("benchmark,task_type,n_options\ntoybench,three,9\n")
    args = ["report", "--predictions", f"m={predictions}", "--benchmark", BENCH, "--out", str(tmp_path / "r")]
    assert main([*args, "--options-file", str(path)]) != 0
    assert f"{path}:2: n_options '9'" in capsys.readouterr().err


def test_an_options_file_count_below_the_answer_key_is_refused(tmp_path, predictions):
    path = write_options(tmp_path / "options.csv", [{"benchmark": BENCH, "task_type": "four", "n_options": 3}])
    with pytest.raises(LogError, match=r"answer key 'D' is not one of the question's 3 option letters.*options file"):
        load_frame(predictions=[("m", predictions)], benchmark=BENCH, options_file=path)


def test_a_five_option_question_no_one_answered_e_reads_five_only_when_its_task_type_shows_e(tmp_path):
    # Task type "shown": q1's key is E, q2 (also 5 options) never sees E. Task type "hidden": 5-option questions
    # whose key is never E and no reply is E: nothing in the type shows E, so it reads 4 (the rule: per task type).
    rows = []
    for condition in ("orig", "black"):
        rows += [
            {"question_id": "s1", "task_type": "shown", "condition": condition, "ground_truth": "E", "prediction": "A"},
            {"question_id": "s2", "task_type": "shown", "condition": condition, "ground_truth": "B", "prediction": "C"},
            {
                "question_id": "h1",
                "task_type": "hidden",
                "condition": condition,
                "ground_truth": "D",
                "prediction": "A",
            },
            {
                "question_id": "h2",
                "task_type": "hidden",
                "condition": condition,
                "ground_truth": "B",
                "prediction": "C",
            },
        ]
    frame = load_frame(predictions=[("m", write_records(tmp_path / "p.json", rows))], benchmark=BENCH)
    counts = frame.groupby("question_id")["n_options"].first().to_dict()
    largest = {t: max("ABCDEFGH".index(x) + 1 for r in rows if r["task_type"] == t
                      for x in (r["ground_truth"], r["prediction"])) for t in ("shown", "hidden")}  # fmt: skip
    assert counts == {"s1": largest["shown"], "s2": largest["shown"], "h1": largest["hidden"], "h2": largest["hidden"]}
    assert counts == {"s1": 5, "s2": 5, "h1": 4, "h2": 4}


def test_a_records_own_count_comes_before_the_benchmarks_and_the_inferred_one(tmp_path):
    base = {"task_type": "T", "condition": "orig", "ground_truth": "A", "prediction": "A"}
    rows = [
        dict(base, question_id="c", candidates=["red", "blue", "green"]),
        dict(base, question_id="o", options=["A. red", "B. blue"]),
        dict(base, question_id="n", n_options=6),
        dict(base, question_id="none"),
    ]
    frame = load_frame(predictions=[("m", write_records(tmp_path / "p.json", rows))], benchmark="egoschema")
    by_q = frame.set_index("question_id")
    assert by_q.loc[["c", "o", "n", "none"], "n_options"].tolist() == [3, 2, 6, 5]
    assert by_q.loc[["c", "o", "n", "none"], "n_options_rule"].tolist() == ["record"] * 3 + ["benchmark declares"]
    table = option_counts_table(frame)
    assert table[["n_options", "n_options_rule", "n_questions"]].values.tolist() == [
        [2, "record", 1],
        [3, "record", 1],
        [5, "benchmark declares", 1],
        [6, "record", 1],
    ]


def test_samples_logs_take_an_integer_count_as_the_records_and_infer_a_null_one(tmp_path):
    def logged(question_id, condition, pred, answer, n_options):
        s = sample(question_id, condition, pred, answer=answer, benchmark=BENCH, task_type="T")
        s["vdg"]["n_options"] = n_options
        return s

    counted = write_run(tmp_path / "a", "counted", {f"{BENCH}_vdg_{c}": [logged("q1", c, "A", "B", 5)]
                                                   for c in ("orig", "black")})  # fmt: skip
    frame = load_frame(runs=[counted])
    assert (frame["n_options"] == 5).all() and (frame["n_options_rule"] == "record").all()
    unknown = write_run(
        tmp_path / "b",
        "unknown",
        {
            f"{BENCH}_vdg_{c}": [logged("q1", c, "A", "B", None), logged("q2", c, "C", "A", None)]
            for c in ("orig", "black")
        },
    )
    frame = load_frame(runs=[unknown])
    assert (frame["n_options"] == 3).all() and (frame["n_options_rule"] == "inferred per task type").all()


def test_report_help_documents_the_options_file(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--options-file CSV" in text and "question_id or task_type" in text
