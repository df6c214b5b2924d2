"""postprocess.reading.options_file: reading an ``--options-file`` (each refusal naming the file and line), the
counts it
gives each row of a frame, the check that it names only benchmarks the inputs hold, and ``resolve_options``
(every row's count and rule, an answer key beyond the count refused, a reply beyond it made ``unparsed``)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from postprocess.reading.files import LogError
from postprocess.reading.options_file import OptionsFile, read_options_file, resolve_options
from tests.helpers.frames import tidy_frame, tidy_row


def _write(tmp_path: Path, text: str, name: str = "options.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _at(path: Path, line: int) -> str:
    return f"^{re.escape(str(path))}:{line}: "


# ----------------------------------------------------------------------------------- read_options_file


def test_rows_are_keyed_by_question_or_task_type_under_the_benchmark_key(tmp_path):
    path = _write(
        tmp_path,
        "benchmark,question_id,task_type,n_options\n"
        "Video-MME,q1,,5\n"
        "Video-MME,,Counting,3\n"
        "EgoSchema,q1,,2\n"
        "video mme,q2,, 8 \n",
    )
    options = read_options_file(path)
    # benchmark_key: lowercase without punctuation ("Video-MME" and "video mme" are "videomme")
    assert options.by_question == {("videomme", "q1"): 5, ("egoschema", "q1"): 2, ("videomme", "q2"): 8}
    assert options.by_task_type == {("videomme", "Counting"): 3}
    assert options.lines == {"videomme": 2, "egoschema": 4}  # header is line 1; each benchmark's first row
    assert options.path == path


def test_a_byte_order_mark_a_padded_header_and_a_whole_float_count_are_read(tmp_path):
    path = _write(tmp_path, "\ufeff benchmark , task_type , n_options \nnextqa,TC,4.0\n")
    assert read_options_file(path).by_task_type == {("nextqa", "TC"): 4}


def test_a_missing_options_file_is_refused(tmp_path):
    with pytest.raises(LogError, match=rf"^{re.escape(str(tmp_path / 'no.csv'))}: no such options file$"):
        read_options_file(tmp_path / "no.csv")


@pytest.mark.parametrize(
    ("header", "missing", "has"),
    [
        ("bench,question_id,n_options", "benchmark", "bench, question_id, n_options"),
        ("benchmark,question_id", "n_options", "benchmark, question_id"),
        ("", "benchmark", "no header"),
    ],
)
def test_a_missing_column_is_refused_at_line_one_listing_the_header(tmp_path, header, missing, has):
    path = _write(tmp_path, f"{header}\n" if header else "")
    with pytest.raises(LogError, match=_at(path, 1) + rf"no '{missing}' column \(.*; it has {has}\)$"):
        read_options_file(path)


def test_a_file_with_neither_question_id_nor_task_type_is_refused(tmp_path):
    path = _write(tmp_path, "benchmark,n_options\nb,4\n")
    with pytest.raises(LogError, match=_at(path, 1) + "neither a 'question_id' nor a 'task_type' column"):
        read_options_file(path)


@pytest.mark.parametrize("benchmark", ["", "  ", "--"])
def test_an_empty_benchmark_is_refused_naming_its_line(tmp_path, benchmark):
    path = _write(tmp_path, f"benchmark,question_id,n_options\nb,q1,4\n{benchmark},q2,4\n")
    with pytest.raises(LogError, match=_at(path, 3) + "the benchmark is empty$"):
        read_options_file(path)


@pytest.mark.parametrize(("question", "task", "n"), [("q1", "T", 2), ("", "", 0), ("  ", "", 0)])
def test_a_row_must_name_exactly_one_of_question_and_task_type(tmp_path, question, task, n):
    path = _write(tmp_path, f"benchmark,question_id,task_type,n_options\nb,{question},{task},4\n")
    with pytest.raises(LogError, match=_at(path, 2) + rf"give a question_id or a task_type \(one of them\), not {n}$"):
        read_options_file(path)


@pytest.mark.parametrize("text", ["9", "1", "0", "-3", "4.5", "x", "", "1e1"])
def test_a_count_that_is_no_integer_from_2_to_8_is_refused(tmp_path, text):
    path = _write(tmp_path, f"benchmark,question_id,n_options\nb,q1,{text}\n")
    with pytest.raises(LogError, match=_at(path, 2) + rf"n_options '{re.escape(text)}' is not a number of options "):
        read_options_file(path)


@pytest.mark.parametrize("text", ["2", "8", "02"])
def test_the_bounds_of_the_count_are_allowed(tmp_path, text):
    path = _write(tmp_path, f"benchmark,question_id,n_options\nb,q1,{text}\n")
    assert read_options_file(path).by_question == {("b", "q1"): int(text)}


def test_a_question_given_twice_is_refused_naming_both_lines(tmp_path):
    path = _write(tmp_path, "benchmark,question_id,n_options\nVideo-MME,q1,4\nb,q1,4\nvideomme,q1,5\n")
    with pytest.raises(LogError, match=_at(path, 4) + r"question 'q1' of videomme is given twice \(lines 2 and 4\)$"):
        read_options_file(path)


def test_a_task_type_given_twice_is_refused_naming_both_lines(tmp_path):
    path = _write(tmp_path, "benchmark,task_type,n_options\nb,T,4\nb,T,4\n")
    with pytest.raises(LogError, match=_at(path, 3) + r"task type 'T' of b is given twice \(lines 2 and 3\)$"):
        read_options_file(path)


def test_one_name_as_a_question_and_as_a_task_type_is_not_a_duplicate(tmp_path):
    path = _write(tmp_path, "benchmark,question_id,task_type,n_options\nb,X,,3\nb,,X,5\n")
    options = read_options_file(path)
    assert (options.by_question, options.by_task_type) == ({("b", "X"): 3}, {("b", "X"): 5})


# ----------------------------------------------------------------------------------- OptionsFile.counts


def test_each_row_gets_its_questions_count_else_its_task_types_else_none():
    options = OptionsFile(
        Path("o.csv"),
        by_question={("videomme", "q1"): 5, ("egoschema", "q1"): 2},
        by_task_type={("videomme", "Counting"): 3},
        lines={"videomme": 2, "egoschema": 4},
    )
    frame = pd.DataFrame(
        {
            "benchmark": ["Video-MME", "videomme", "EgoSchema", "EgoSchema", "other"],
            "question_id": ["q1", "q2", "q1", "q9", "q1"],
            "task_type": ["Counting", "Counting", "Counting", "x", "Counting"],
        },
        index=[7, 8, 9, 10, 11],
    )
    counts = options.counts(frame)
    # q1 of videomme: its own row (5) over its task type's (3); q2: its task type; egoschema q1: 2; the rest none
    assert counts.dtype == "Float64" and counts.tolist() == [5, 3, 2, pd.NA, pd.NA]
    assert list(counts.index) == [7, 8, 9, 10, 11]


def test_an_options_file_of_task_types_only_counts_by_task_type():
    options = OptionsFile(Path("o.csv"), {}, {("b", "T"): 6}, {"b": 2})
    frame = pd.DataFrame({"benchmark": ["b", "b"], "question_id": ["T", "q"], "task_type": ["U", "T"]})
    assert options.counts(frame).tolist() == [pd.NA, 6]  # a question id equal to a task type is no match


# ----------------------------------------------------------------------------------- check_benchmarks


def test_a_benchmark_no_input_holds_is_refused_naming_its_first_line_and_the_present_ones():
    options = OptionsFile(
        Path("o.csv"), {("videomme", "q1"): 5}, {("egoschema", "T"): 3}, {"videomme": 2, "egoschema": 4}
    )
    with pytest.raises(
        LogError,
        match=r"^o\.csv:4: benchmark 'egoschema' is in none of the inputs \(they hold nextqa, videomme; names "
        r"compare lowercase, without punctuation\)$",
    ):
        options.check_benchmarks(pd.Series(["Video-MME", "NExT-QA", "videomme"]))
    assert options.check_benchmarks(pd.Series(["Video-MME", "Ego-Schema"])) is None


# ----------------------------------------------------------------------------------- resolve_options


def _frame(benchmark: str, rows: list[tuple[str, str, str | None, str]]) -> pd.DataFrame:
    """(question_id, answer, pred, status) rows of one benchmark and task type; correct as pred == answer."""
    return tidy_frame(
        tidy_row(
            "m",
            "orig",
            qid,
            benchmark,
            task_type="T",
            answer=answer,
            pred=pred,
            status=status,
            correct=pd.NA if status == "error" else pred == answer,
            source=f"log:{i + 1}",
        )
        for i, (qid, answer, pred, status) in enumerate(rows)
    )


def test_counts_and_rules_are_filled_and_a_reply_beyond_them_is_unparsed():
    # vdgsynth declares 4 options (A-D): "E" and the lowercase "d" are no option letter
    frame = _frame(
        "vdgsynth",
        [("q1", "A", "D", "ok"), ("q2", "B", "E", "ok"), ("q3", "C", "d", "ok"), ("q4", "", None, "error")],
    )
    frame.loc[1, "correct"] = True  # whatever it said, a reply that is no option is scored wrong
    out = resolve_options(frame)
    assert out["n_options"].tolist() == [4, 4, 4, 4]
    assert list(out["n_options_rule"].astype(str)) == ["benchmark declares"] * 4
    assert list(out["status"]) == ["ok", "unparsed", "unparsed", "error"]
    assert out["pred"].iloc[0] == "D" and out["pred"].iloc[1] is None and out["pred"].iloc[2] is None
    assert pd.isna(out["pred"].iloc[3])  # an error row is left as it is
    assert out["correct"].tolist() == [False, False, False, pd.NA]


def test_an_options_file_row_sets_the_count_and_its_rule(tmp_path):
    frame = _frame("Video-MME", [("q1", "C", "C", "ok"), ("q2", "A", "C", "ok")])
    options = OptionsFile(tmp_path / "o.csv", {("videomme", "q1"): 3, ("videomme", "q2"): 2}, {}, {"videomme": 2})
    out = resolve_options(frame, options)
    assert out["n_options"].tolist() == [3, 2]
    assert list(out["n_options_rule"].astype(str)) == ["options file", "options file"]
    assert list(out["status"]) == ["ok", "unparsed"]  # C is the 3rd letter: beyond q2's two options


def test_an_answer_key_beyond_the_count_is_refused_naming_the_row_and_the_rule():
    frame = _frame("vdgsynth", [("q1", "A", "A", "ok"), ("q2", "E", "A", "ok")])
    with pytest.raises(
        LogError,
        match=r"^log:2: the answer key 'E' is not one of the question's 4 option letters \(A-D; n_options from the "
        r"rule 'benchmark declares'\); check its n_options / options field or the benchmark \(--benchmark\)$",
    ):
        resolve_options(frame)


def test_an_empty_answer_key_of_an_answered_question_is_refused():
    frame = _frame("vdgsynth", [("q1", "", "A", "unparsed")])
    with pytest.raises(LogError, match=r"^log:1: the answer key '' is not one of the question's 4 option letters"):
        resolve_options(frame)


def test_an_answer_key_beyond_an_options_file_count_names_the_file(tmp_path):
    frame = _frame("Video-MME", [("q1", "D", "A", "ok")])
    options = OptionsFile(tmp_path / "o.csv", {("videomme", "q1"): 3}, {}, {"videomme": 2})
    with pytest.raises(
        LogError,
        match=rf"option letters \(A-C; n_options from the rule 'options file'\); check its row in "
        rf"{re.escape(str(options.path))} or the benchmark \(--benchmark\)$",
    ):
        resolve_options(frame, options)
