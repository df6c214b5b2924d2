"""postprocess.rendering.formatting: the conventions sentence above a table, cell formats, CI merging and markdown
tables."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from postprocess.rendering.formatting import (
    brief_p,
    conventions,
    display_columns,
    drop_blank_columns,
    format_table,
    format_value,
    formatted_cells,
    is_pvalue,
    is_text,
    markdown_table,
    merge_interval_columns,
    merge_intervals,
    nonblank,
    shown_rows,
)


def _markdown_cells(text: str) -> tuple[list[str], list[str], list[list[str]]]:
    """A pipe table's (header cells, alignment markers, body rows), each cell stripped."""

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    header, rule, *body = text.splitlines()
    return cells(header), cells(rule), [cells(line) for line in body]


# ------------------------------------------------------------------------------------------ conventions


@pytest.mark.parametrize(
    ("column", "value", "phrase"),
    [
        (
            "missing_policy",
            "exclude",
            "a question with an error (no answer) in a compared condition is dropped from both arms",
        ),
        ("missing_policy", "incorrect", "an error (no answer) is scored wrong"),
        ("missing_policy", "drop", "missing_policy = drop"),  # an unknown policy: the generic "column = value"
        ("ci_level", 0.9, "90% confidence intervals"),
        ("question_rule", "shared", "questions compared: shared"),
        ("ci_method", "exact", "exact percentile bootstrap (the bootstrap distribution in closed form, no resampling)"),
        ("ci_method", "monte carlo", "Monte Carlo percentile bootstrap"),
        ("ci_method", "tango score", "Tango's score interval for a paired difference of proportions"),
        (
            "ci_method",
            "tango score + exact",
            "Tango's score interval for a paired difference of proportions and exact percentile bootstrap (the "
            "bootstrap distribution in closed form, no resampling)",
        ),
        ("n_resamples", 2000, "percentile bootstrap with 2000 resamples"),
        ("n_resamples", 2000.0, "percentile bootstrap with 2000 resamples"),  # a float count reads as an integer
        ("stability_resamples", 50, "stability over 50 bootstrap resamples"),
        ("resample_unit", "video_id", "CI unit: video_id"),
        ("alpha", 0.05, "significance level 0.05"),
        ("alpha", "holm", "alpha = holm"),
        ("temporal_definition", "ordered - shuffled", "temporal = ordered - shuffled"),
        ("equivalence_margin", 0.05, "equivalence_margin = 0.05"),
        ("seed", 7, "seed = 7"),
        ("test", "exact binomial", "test = exact binomial"),
    ],
)
def test_a_constant_convention_column_is_stated_in_words(column, value, phrase):
    assert conventions(pd.DataFrame({column: [value, value]})) == (f"Conventions: {phrase}.", [])


def test_zero_resamples_states_nothing():
    # exact CIs draw no resamples: the n_resamples phrase is empty and left out
    assert conventions(pd.DataFrame({"n_resamples": [0, 0]})) == ("", [])


def test_conventions_follow_the_declared_order_not_the_table_order():
    table = pd.DataFrame({"alpha": [0.05], "acc": [0.5], "missing_policy": ["incorrect"]})
    # CONVENTION_COLUMNS lists missing_policy before alpha; acc is no convention
    assert conventions(table) == ("Conventions: an error (no answer) is scored wrong; significance level 0.05.", [])


def test_a_varying_convention_is_named_and_missing_values_are_ignored():
    table = pd.DataFrame(
        {
            "missing_policy": ["exclude", np.nan, "exclude"],  # one value once NaN is dropped: stated
            "alpha": [0.05, 0.01, np.nan],  # two values: varies
            "seed": [np.nan, np.nan, np.nan],  # no value: neither stated nor varying
        }
    )
    sentence, varying = conventions(table)
    assert varying == ["alpha"]
    assert sentence == (
        "Conventions: a question with an error (no answer) in a compared condition is dropped from both arms; "
        "varies by row: `alpha`."
    )


def test_a_table_without_rows_or_conventions_states_nothing():
    assert conventions(pd.DataFrame({"missing_policy": pd.Series([], dtype=object)})) == ("", [])
    assert conventions(pd.DataFrame({"acc": [0.5]})) == ("", [])


def test_convention_values_from_numpy_columns_read_as_python_numbers():
    table = pd.DataFrame({"ci_level": np.array([0.95], dtype=np.float32), "n_resamples": np.array([200], np.int64)})
    sentence, _ = conventions(table)
    assert sentence == "Conventions: 95% confidence intervals; percentile bootstrap with 200 resamples."


# ------------------------------------------------------------------------------------------ cell formats


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        ("p", True),
        ("p_cc", True),
        ("p_holm_orig", True),
        ("task_p", True),
        ("chi2_pvalue", True),
        ("pred", False),  # starts with "p" but not "p_"
        ("top_pred", False),
        ("gap", False),
    ],
)
def test_p_value_columns_are_recognised_by_name(column, expected):
    assert is_pvalue(column) is expected


@pytest.mark.parametrize(
    ("column", "value", "text"),
    [
        ("acc", 0.12345, "0.123"),
        ("vdg", 0.12345, "+0.123"),
        ("temporal_ci_low", -0.0071, "-0.007"),
        ("p_cc", 0.000845512, "0.0008455"),
        ("p", 0.5, "0.5"),
        ("task_p", 0.123456, "0.1235"),
        ("n", 547.0, "547"),
        ("n_error", np.int64(53), "53"),
        ("dc_ratio", math.inf, "inf"),
        ("acc", float("nan"), ""),
        ("acc", None, ""),
        ("acc", pd.NA, ""),
        ("dissociation", True, "yes"),
        ("model", "qwen2vl", "qwen2vl"),
    ],
)
def test_format_value(column, value, text):
    assert format_value(column, value) == text


@pytest.mark.parametrize(
    ("column", "value", "text"),
    [
        ("x_vdg", 0.5, "+0.500"),  # *_vdg: signed
        ("vdg_by_duration", -0.25, "-0.250"),  # vdg_*: signed
        ("acc_diff", 0.0, "+0.000"),  # *_diff: signed, zero too
        ("acc_ci_low", 0.25, "0.250"),  # a bound reads like its base: acc is unsigned
        ("diff_ci_high", 0.25, "+0.250"),  # ... and diff signed
        ("n", 2.5, "2.500"),  # a count that is not whole keeps its decimals
        ("n_kept", 12.0, "12"),  # n_*: a count
        ("task_n", 3.0, "3"),  # *_n: a count
        ("b01", np.float64(4.0), "4"),
        ("p_holm", 1.0, "1"),  # 4 significant digits, trailing zeros dropped
        ("p", np.float32(0.5), "0.5"),
        ("dc_ratio", -math.inf, "-inf"),
        ("flag", np.bool_(False), "no"),
        ("n", np.nan, ""),
    ],
)
def test_format_value_signs_counts_and_special_values(column, value, text):
    assert format_value(column, value) == text


def test_a_float_column_formats_its_cells_like_single_values():
    table = pd.DataFrame(
        {"n": [3.0, 2.5, np.nan, np.inf], "vdg": [0.1, -0.1, np.nan, -np.inf], "model": ["a", None, "c", "d"]},
        index=[5, 7, 9, 11],
    )
    shown = format_table(table, ["vdg", "nope", "model", "n"])
    # columns in the order asked, those absent left out; a fresh 0..n-1 index
    assert list(shown.columns) == ["vdg", "model", "n"] and list(shown.index) == [0, 1, 2, 3]
    assert shown["n"].tolist() == ["3", "2.500", "", "inf"]
    assert shown["vdg"].tolist() == ["+0.100", "-0.100", "", "-inf"]
    assert shown["model"].tolist() == ["a", "", "c", "d"]
    assert list(formatted_cells(table)) == ["n", "vdg", "model"]  # default: every column, in table order


# ------------------------------------------------------------------------------------- merged intervals


def test_a_bare_ci_pair_joins_the_column_before_it_in_that_columns_format():
    unsigned = pd.DataFrame({"model": ["m"], "acc": [0.5], "ci_low": [0.4], "ci_high": [0.6]})
    assert merge_interval_columns(formatted_cells(unsigned), unsigned) == {
        "model": ["m"],
        "acc [CI]": ["0.500 [0.400, 0.600]"],
    }
    signed = pd.DataFrame({"vdg": [0.1], "ci_low": [-0.05], "ci_high": [0.2]})
    assert merge_interval_columns(formatted_cells(signed), signed) == {"vdg [CI]": ["+0.100 [-0.050, +0.200]"]}


def test_named_ci_pairs_join_their_value_in_place():
    table = pd.DataFrame(
        {
            "acc_orig": [0.75],
            "acc_orig_ci_low": [0.5],
            "acc_orig_ci_high": [1.0],
            "diff": [-0.125],
            "diff_ci_low": [-0.25],
            "diff_ci_high": [0.0],
            "n": [4],
        }
    )
    merged = merge_intervals(format_table(table), table)
    assert list(merged.columns) == ["acc_orig [CI]", "diff [CI]", "n"]
    assert merged.iloc[0].tolist() == ["0.750 [0.500, 1.000]", "-0.125 [-0.250, +0.000]", "4"]


def test_a_value_without_bounds_stands_alone_and_a_blank_value_stays_blank():
    table = pd.DataFrame({"vdg": [0.1, np.nan], "ci_low": [np.nan, 0.0], "ci_high": [np.nan, 0.2]})
    assert merge_interval_columns(formatted_cells(table), table) == {"vdg [CI]": ["+0.100", ""]}


def test_ci_columns_are_kept_when_they_cannot_be_merged():
    # unmerged, a bare bound is a signed column of its own (ci_low and ci_high are in SIGNED)
    first = pd.DataFrame({"ci_low": [0.1], "ci_high": [0.2]})  # no column before ci_low
    assert merge_interval_columns(formatted_cells(first), first) == {"ci_low": ["+0.100"], "ci_high": ["+0.200"]}
    table = pd.DataFrame({"acc": [0.5], "ci_low": [0.4], "ci_high": [0.6]})
    shown = formatted_cells(table, ["acc", "ci_high"])  # ci_low not shown: nothing to merge
    assert merge_interval_columns(shown, table) == {"acc": ["0.500"], "ci_high": ["+0.600"]}


# -------------------------------------------------------------------------------------- blank columns


def test_columns_blank_in_every_row_are_dropped_but_a_table_without_rows_keeps_its_header():
    assert nonblank({"a": ["x", ""], "b": ["", ""]}) == {"a": ["x", ""]}
    assert nonblank({"a": [], "b": []}) == {"a": [], "b": []}
    frame = pd.DataFrame({"a": ["x", ""], "b": ["", ""]})
    assert list(drop_blank_columns(frame).columns) == ["a"]


def test_shown_rows_are_the_cells_row_by_row():
    assert shown_rows({"a": ["1", "2"], "b": ["x", "y"]}, 2) == [["1", "x"], ["2", "y"]]
    assert shown_rows({}, 2) == [[], []]  # no columns: one empty row per table row


@pytest.mark.parametrize(
    ("column", "expected"),
    [("model", True), ("n", False), ("acc", False), ("flag", True), ("boolean", True), ("absent", False)],
)
def test_text_columns_are_those_not_numeric_with_booleans_as_text(column, expected):
    table = pd.DataFrame(
        {
            "model": ["m"],
            "n": [3],
            "acc": [0.5],
            "flag": [True],
            "boolean": pd.array([True], dtype="boolean"),
        }
    )
    assert is_text(table, column) is expected


# ------------------------------------------------------------------------------------------ markdown


def test_markdown_table_aligns_and_drops_columns_empty_everywhere():
    table = pd.DataFrame({"model": ["m"], "acc_ordered": [np.nan], "acc": [0.5]})
    text = markdown_table(table)
    assert "acc_ordered" not in text and "|:--" in text and "--:|" in text


def test_a_markdown_table_has_one_row_per_table_row_with_formatted_cells():
    table = pd.DataFrame(
        {"model": ["m1", "m2"], "n": [4, 10], "vdg": [0.5, -0.125], "ci_low": [0.0, -0.3], "ci_high": [1.0, 0.05]}
    )
    header, rule, body = _markdown_cells(markdown_table(table))
    assert header == ["model", "n", "vdg [CI]"]
    # text left-aligned (":---"), numbers right-aligned ("---:")
    assert [r.startswith(":") for r in rule] == [True, False, False]
    assert [r.endswith(":") for r in rule] == [False, True, True]
    assert body == [["m1", "4", "+0.500 [+0.000, +1.000]"], ["m2", "10", "-0.125 [-0.300, +0.050]"]]


def test_markdown_table_options_keep_ci_and_blank_columns_and_choose_the_order():
    table = pd.DataFrame({"model": ["m"], "acc": [0.5], "ci_low": [0.4], "ci_high": [0.6], "blank": [np.nan]})
    header, _, body = _markdown_cells(
        markdown_table(table, ["acc", "model", "ci_low", "ci_high", "blank"], False, False)
    )
    assert header == ["acc", "model", "ci_low", "ci_high", "blank"]
    assert body == [["0.500", "m", "+0.400", "+0.600", ""]]  # unmerged bounds: signed (SIGNED has ci_low, ci_high)


# --------------------------------------------------------------------------------- display columns


def test_display_columns_leave_out_stated_conventions_and_append_varying_ones():
    table = pd.DataFrame(
        {
            "model": ["a", "b"],
            "alpha": [0.05, 0.01],  # varies
            "acc": [0.5, 0.6],
            "missing_policy": ["exclude", "exclude"],  # stated above the table
        }
    )
    assert display_columns(table, None) == ["model", "alpha", "acc"]
    assert display_columns(table, []) == ["model", "alpha", "acc"]  # empty: as None
    # preferred order, absent and stated columns left out, varying conventions appended
    assert display_columns(table, ["acc", "nope", "missing_policy", "model"]) == ["acc", "model", "alpha"]
    assert display_columns(table, ["alpha", "acc"]) == ["alpha", "acc"]  # not repeated


def test_a_pipe_or_a_line_break_in_a_cell_stays_in_its_cell():
    table = pd.DataFrame({"model": ["a|b", "two\nlines"], "acc": [0.5, 0.25]})
    lines = markdown_table(table).splitlines()
    # a markdown table row splits on unescaped pipes: 2 columns means 3 of them, the escaped one aside
    for line in lines[2:]:
        assert len(re.findall(r"(?<!\\)\|", line)) == 3, line
    assert "a\\|b" in lines[2] and "two lines" in lines[3] and len(lines) == 4


@pytest.mark.parametrize(("p", "text"), [(0.0, "<0.001"), (0.000999, "<0.001"), (0.001, "0.001"), (0.0123, "0.012"),
                                         (1.0, "1.000"), (float("nan"), "")])  # fmt: skip
def test_a_terminal_p_value_is_below_a_thousandth_or_three_decimals(p, text):
    assert brief_p(p) == text
