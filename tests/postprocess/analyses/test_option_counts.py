"""postprocess.analyses.option_counts: distinct questions per (benchmark, task type, option count, rule), checked
against counts made in the test, for frames that carry their counts and frames whose counts the table resolves."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from postprocess.analyses.base import ReportSettings
from postprocess.analyses.option_counts import ANALYSES, COLUMNS, option_counts_table
from postprocess.reading.answer_options import RULES
from tests.helpers.frames import answer_fields, tidy_frame, tidy_row

#: (benchmark, task type, question id, conditions logged, n_options, n_options_rule)
QUESTIONS = [
    ("b", "T1", "q1", ("orig", "black", "single"), 4, "record"),
    ("b", "T1", "q2", ("orig", "black"), 4, "record"),
    ("b", "T1", "q3", ("orig",), 5, "options file"),
    ("b", "T2", "q4", ("orig", "black"), 4, "benchmark declares"),
    ("b", "T2", "q5", ("black",), 3, "inferred per task type"),
    ("a", "T1", "q1", ("orig",), 4, "record"),  # the same id in another benchmark is another question
]


def _frame(questions=QUESTIONS) -> pd.DataFrame:
    return tidy_frame(
        tidy_row("m", condition, qid, benchmark, task_type=task_type, n_options=n, n_options_rule=rule)
        for benchmark, task_type, qid, conditions, n, rule in questions
        for condition in conditions
    )


def test_each_row_counts_distinct_questions_of_its_benchmark_task_type_count_and_rule():
    table = option_counts_table(_frame())
    assert list(table.columns) == list(COLUMNS)
    counted = Counter((b, t, n, rule) for b, t, _, _, n, rule in QUESTIONS)  # one entry per question
    expected = sorted(  # the table's order: benchmark, task type, n_options, rule
        ((b, t, count, n, rule) for (b, t, n, rule), count in counted.items()),
        key=lambda row: (row[0], row[1], row[3], row[4]),
    )
    assert [tuple(row) for row in table.itertuples(index=False)] == expected
    # by hand: b/T1 holds q1 and q2 with 4 options (q1 logged under three conditions counts once) and q3 with 5
    assert table.values.tolist() == [
        ["a", "T1", 1, 4, "record"],
        ["b", "T1", 2, 4, "record"],
        ["b", "T1", 1, 5, "options file"],
        ["b", "T2", 1, 3, "inferred per task type"],
        ["b", "T2", 1, 4, "benchmark declares"],
    ]


def test_rows_of_one_count_sort_by_the_rule_name():
    same_count = [
        ("b", "T", "q1", ("orig",), 4, "record"),
        ("b", "T", "q2", ("orig",), 4, "options file"),
        ("b", "T", "q3", ("orig",), 4, "benchmark declares"),
    ]
    table = option_counts_table(_frame(same_count))
    assert table["n_options_rule"].tolist() == ["benchmark declares", "options file", "record"]  # alphabetical
    assert table["n_questions"].tolist() == [1, 1, 1] and table.index.tolist() == [0, 1, 2]


def test_counts_the_frame_lacks_are_resolved_by_the_declared_benchmark_or_the_task_types_letters():
    rows = [
        # Video-MME declares 4 options for every question
        tidy_row("m", "orig", "v1", "videomme", task_type="T", **answer_fields("A", "A", "ok")),
        tidy_row("m", "orig", "v2", "videomme", task_type="T", **answer_fields("B", "B", "ok")),
        # an undeclared benchmark: T's largest letter is the reply C -> 3 options, U shows only A -> at least 2
        tidy_row("m", "orig", "x1", "xbench", task_type="T", **answer_fields("A", "C", "ok")),
        tidy_row("m", "black", "x1", "xbench", task_type="T", **answer_fields("A", "B", "ok")),
        tidy_row("m", "orig", "x2", "xbench", task_type="T", **answer_fields("B", "B", "ok")),
        tidy_row("m", "orig", "x3", "xbench", task_type="U", **answer_fields("A", "A", "ok")),
    ]
    frame = tidy_frame(rows)
    assert frame["n_options"].isna().all() and frame["n_options_rule"].isna().all()
    table = option_counts_table(frame)
    assert table.values.tolist() == [
        ["videomme", "T", 2, 4, "benchmark declares"],
        ["xbench", "T", 2, 3, "inferred per task type"],
        ["xbench", "U", 1, 2, "inferred per task type"],
    ]
    assert set(table["n_options_rule"]) <= set(RULES)


def test_an_empty_frame_gives_an_empty_table_with_the_declared_columns():
    table = option_counts_table(tidy_frame([]))
    assert table.empty and list(table.columns) == list(COLUMNS)


def test_the_declared_analysis_runs_on_any_model():
    (analysis,) = ANALYSES
    assert analysis.name == "option_counts" and analysis.columns is COLUMNS
    assert analysis.compute is option_counts_table and analysis.needs is None
    assert analysis.run(_frame(), ReportSettings())["n_questions"].sum() == len(QUESTIONS)
