"""postprocess.analyses itself: which rows the multiple-choice analyses see, the skip sentence, the label order of
a table and how many worker processes ``run_all`` uses (its tables in workers: tests/postprocess/test_parallel.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from postprocess import analyses
from postprocess.analyses import (
    MAX_WORKERS,
    PARALLEL_ROWS,
    in_label_order,
    multiple_choice_frame,
    skip_sentence,
    worker_count,
)
from postprocess.parallel import can_fork


def _rows(cells: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    frame = pd.DataFrame(cells, columns=["model", "benchmark", "condition", "status"])
    frame["question_id"] = [f"q{i}" for i in range(len(frame))]
    frame.attrs["note"] = "kept"
    return frame


def test_a_cell_holding_an_open_answer_is_left_out_whole_errors_included():
    frame = _rows(
        [
            ("m", "b", "orig", "ok"),
            ("m", "b", "open", "open"),
            ("m", "b", "open", "error"),  # same cell as an open row: goes with it
            ("n", "b", "open", "ok"),  # another model's cell without open rows stays
        ]
    )
    kept = multiple_choice_frame(frame)
    assert kept["question_id"].tolist() == ["q0", "q3"]
    assert kept.attrs == {"note": "kept"}


def test_a_frame_without_open_answers_is_returned_as_it_is():
    frame = _rows([("m", "b", "orig", "ok"), ("m", "b", "black", "unparsed")])
    assert multiple_choice_frame(frame) is frame
    no_status = frame.drop(columns="status")
    assert multiple_choice_frame(no_status) is no_status


@pytest.mark.parametrize(
    ("message", "sentence"),
    [
        ("fewer than 30 questions", "fewer than 30 questions."),
        ("two\n  lines\tof text", "two lines of text."),
        ("Does it end?", "Does it end?"),
        ("It ends.", "It ends."),
        ("", "ValueError."),  # no message: the exception's type
    ],
)
def test_the_skip_sentence_is_one_line_ending_in_a_period(message, sentence):
    assert skip_sentence(ValueError(message)) == sentence


def test_rows_follow_the_natural_order_of_model_labels_and_keep_their_order_otherwise():
    table = pd.DataFrame(
        {
            "model": ["m@16f", "m@8f", "m@16f", "M@2f", "m@8f"],
            "condition": ["black", "orig", "orig", "orig", "black"],
        }
    )
    ordered = in_label_order(table)
    # numbers compared as numbers, text case-insensitively; rows of one label keep their order (stable)
    assert list(zip(ordered["model"], ordered["condition"], strict=True)) == [
        ("M@2f", "orig"),
        ("m@8f", "orig"),
        ("m@8f", "black"),
        ("m@16f", "black"),
        ("m@16f", "orig"),
    ]
    assert ordered.index.tolist() == [0, 1, 2, 3, 4]


def test_pairs_are_ordered_by_the_first_model_then_the_second():
    table = pd.DataFrame({"model_a": ["b10", "b2", "b2"], "model_b": ["a", "a10", "a9"]})
    assert in_label_order(table).values.tolist() == [["b2", "a9"], ["b2", "a10"], ["b10", "a"]]


def test_a_table_without_label_columns_or_with_one_row_is_untouched():
    no_labels = pd.DataFrame({"condition": ["orig", "black"]})
    assert in_label_order(no_labels) is no_labels
    one = pd.DataFrame({"model": ["z"]})
    assert in_label_order(one) is one


def test_small_frames_stay_in_one_process_and_a_given_count_is_kept(monkeypatch):
    small = pd.DataFrame({"model": ["m"] * 10})
    large = pd.DataFrame({"model": ["m"] * PARALLEL_ROWS})
    if can_fork():
        assert worker_count(small) == 1
        assert worker_count(small, workers=3) == 3
        assert worker_count(small, workers=0) == 1
        assert 1 <= worker_count(large) <= MAX_WORKERS
    monkeypatch.setattr(analyses, "can_fork", lambda: False)  # no fork (Windows): always this process
    assert worker_count(large) == worker_count(large, workers=3) == 1
