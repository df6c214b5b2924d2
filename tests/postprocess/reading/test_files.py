"""postprocess.reading.files: what the samples-log and prediction-file readers share: the record's own option counts and
where they come from, transform versions as text, the UTF-8 check naming line and column, a file's ``sources``
entry, and ``per_distinct`` (one call per distinct value)."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import numpy as np
import pandas as pd
import pytest

from postprocess.reading.files import (
    INFERRED_COUNT,
    OWN_COUNT,
    LogError,
    check_utf8,
    declared_counts,
    per_distinct,
    source_info,
    versions_text,
)

# ----------------------------------------------------------------------------------- declared_counts


def test_a_log_error_is_a_value_error():
    assert issubclass(LogError, ValueError)


def test_records_without_an_n_options_field_take_their_benchmarks_rule():
    benchmark = pd.Series(["Video-MME", "mybench", "Video-MME"], index=[10, 11, 12])
    counts, origin = declared_counts(pd.DataFrame(index=[10, 11, 12]), benchmark)
    assert counts.dtype == "Int64" and counts.isna().all() and list(counts.index) == [10, 11, 12]
    # Video-MME is declared with 4 options (postprocess.reading.answer_options.KNOWN_OPTION_COUNTS); mybench is not
    # declared
    assert list(origin) == ["benchmark 'Video-MME' declares 4", INFERRED_COUNT, "benchmark 'Video-MME' declares 4"]


def test_a_records_own_count_wins_and_is_rounded_while_an_unreadable_one_falls_back():
    table = pd.DataFrame({"n_options": pd.Series([4, None, 4.6, "x"], dtype=object)})
    benchmark = pd.Series(["mybench", "vdgsynth", "mybench", "vdgsynth"])
    counts, origin = declared_counts(table, benchmark)
    # 4 as given, None and "x" give no count of their own, 4.6 rounds to 5
    assert counts.tolist() == [4, pd.NA, 5, pd.NA]
    assert list(origin) == [OWN_COUNT, "benchmark 'vdgsynth' declares 4", OWN_COUNT, "benchmark 'vdgsynth' declares 4"]


# ----------------------------------------------------------------------------------- versions_text


def test_versions_text_is_the_distinct_versions_shortest_first_without_blanks():
    values = [3, None, 3.0, " 10 ", float("nan"), "", msgspec.UNSET, 2.5, "9", float("inf"), "  "]
    # 3 and 3.0 are one version "3"; " 10 " strips to "10"; None, UNSET, nan, inf and blanks give none;
    # sorted by (length, text): "3" < "9" (length 1), "10" (length 2), "2.5" (length 3)
    assert versions_text(values) == "3,9,10,2.5"


def test_versions_text_of_no_version_is_empty():
    assert versions_text([]) == "" and versions_text([None, float("nan"), ""]) == ""


# ----------------------------------------------------------------------------------- check_utf8


def test_utf8_text_passes_the_check(tmp_path):
    assert check_utf8('{"character": "Zoë"}\n'.encode(), tmp_path / "log.jsonl") is None


def test_a_byte_that_is_not_utf8_names_the_file_line_column_and_byte(tmp_path):
    path = tmp_path / "log.jsonl"
    data = b'{"a": 1}\n{"b": "\xff"}\n'
    # line 2 starts after the first newline; '{"b": "' is 7 characters, so the byte is in column 8
    with pytest.raises(
        LogError, match=rf"^{re.escape(str(path))}:2: byte 0xff at column 8 is not UTF-8 text; lmms-eval"
    ) as info:
        check_utf8(data, path)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_a_bad_first_byte_is_line_one_column_one(tmp_path):
    path = tmp_path / "p.csv"
    with pytest.raises(LogError, match=rf"^{re.escape(str(path))}:1: byte 0xe9 at column 1 "):
        check_utf8(b"\xe9tude,1\n", path)


def test_a_truncated_multibyte_character_is_named_at_its_first_byte(tmp_path):
    path = tmp_path / "p.csv"
    # "é" is c3 a9 in UTF-8; c3 followed by a newline is invalid: "ab" puts it in column 3 of line 1
    with pytest.raises(LogError, match=rf"^{re.escape(str(path))}:1: byte 0xc3 at column 3 "):
        check_utf8(b"ab\xc3\nx", path)


# ----------------------------------------------------------------------------------- source_info


def test_a_source_entry_lists_sorted_models_and_benchmarks_and_declared_condition_order():
    info = source_info(
        Path("/runs/a.jsonl"),
        "samples",
        {"model": ["m2", "m1", "m2"], "benchmark": ["vdgsynth"], "condition": ["zzz", "black", "orig", "black"]},
        n_records=7,
        question_id_field="question_id",
        video_id_field="video_id",
        n_options_origins=[(OWN_COUNT, 10)],
    )
    assert info == {
        "file": "/runs/a.jsonl",
        "kind": "samples",
        "model": "m1,m2",
        "benchmark": "vdgsynth",
        # declared conditions in declaration order (orig before black), then undeclared ones by name
        "conditions": "orig,black,zzz",
        "n_records": 7,
        "question_id_field": "question_id",
        "video_id_field": "video_id",
        "n_options_source": OWN_COUNT,  # one origin: its name alone
        "model_source": "",
        "transform_version": "",
    }


def test_several_count_origins_are_listed_in_order_with_their_record_counts():
    info = source_info(
        Path("p.csv"),
        "predictions",
        {"model": [1], "benchmark": ["b", "a"], "condition": ["orig"]},
        n_records=12,
        question_id_field="qid",
        video_id_field="",
        n_options_origins=[(OWN_COUNT, np.int64(10)), (INFERRED_COUNT, 2)],
        model_source="qwen2_vl Qwen/Qwen2-VL-2B",
        transform_version="2,3",
    )
    assert info["n_options_source"] == f"{OWN_COUNT} (10 records); {INFERRED_COUNT} (2 records)"
    assert (info["model"], info["benchmark"]) == ("1", "a,b")
    assert (info["model_source"], info["transform_version"]) == ("qwen2_vl Qwen/Qwen2-VL-2B", "2,3")


# ----------------------------------------------------------------------------------- per_distinct


def test_per_distinct_calls_the_function_once_per_distinct_value_missing_included():
    calls = []

    def fn(value):
        calls.append(value)
        return "<missing>" if pd.isna(value) else f"<{value}>"

    values = pd.Series(["a", "b", "a", None, "b", None], index=list("uvwxyz"), dtype=object)
    out = per_distinct(values, fn, object)
    assert calls[:2] == ["a", "b"] and len(calls) == 3 and pd.isna(calls[2])  # the missing value: one call
    assert list(out) == ["<a>", "<b>", "<a>", "<missing>", "<b>", "<missing>"]
    assert list(out.index) == list("uvwxyz")


def test_per_distinct_reads_a_categorical_by_its_codes():
    calls = []
    values = pd.Series(pd.Categorical(["x", "y", "x"], categories=["y", "x", "unused"]), index=[5, 6, 7])
    out = per_distinct(values, lambda v: calls.append(v) or len(v), "Int64")
    assert calls == ["y", "x", "unused"]  # one call per category, in category order
    assert out.dtype == "Int64" and out.tolist() == [1, 1, 1] and list(out.index) == [5, 6, 7]


def test_per_distinct_of_a_categorical_with_missing_values_still_gives_each_its_own_result():
    values = pd.Series(pd.Categorical(["x", None, "yy"]))
    out = per_distinct(values, lambda v: -1 if not isinstance(v, str) else len(v), "int64")
    assert out.tolist() == [1, -1, 2]  # len("x"), the missing value, len("yy")
