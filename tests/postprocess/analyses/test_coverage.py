"""postprocess.analyses.coverage: per (model, benchmark, condition) counts of answered, unparsed and failed
questions, the accuracy over answered ones and the flags, checked against counts made in the test."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from numpy.testing import assert_allclose

from postprocess.analyses.base import ReportSettings
from postprocess.analyses.coverage import ANALYSES, COLUMNS, UNPARSED_FLAG, coverage_table
from tests.helpers.frames import make_frame, tidy_frame

T, F, U, E = True, False, "u", "e"

#: (model, benchmark, condition) -> outcome per question: True right, False wrong, "u" unparsed, "e" error.
CELLS: dict[tuple[str, str, str], list[object]] = {
    ("m", "b", "orig"): [T, T, F, U, E],  # unparsed 1/4 > 5% and an error: both flags
    ("m", "b", "black"): [F, T, F, F, F],  # all answered, none unparsed: no flag
    ("a", "b", "orig"): [E, E],  # nothing answered: acc and rate undefined, errors flagged
    ("m", "c", "orig"): [T] * 19 + [U],  # unparsed exactly 1/20 = 5%: not above the threshold
}


def _frame(cells: dict[tuple[str, str, str], list[object]]) -> pd.DataFrame:
    frames = [
        make_frame([(model, condition, f"q{i}", "T", value) for i, value in enumerate(values)], benchmark=benchmark)
        for (model, benchmark, condition), values in cells.items()
    ]
    return pd.concat(frames, ignore_index=True)


def _expected(values: list[object]) -> dict[str, object]:
    """One row counted by hand from the outcomes."""
    n_ok = sum(v is T or v is F for v in values)
    n_unparsed = values.count(U)
    n_error = values.count(E)
    answered = n_ok + n_unparsed
    acc = sum(v is T for v in values) / answered if answered else math.nan
    rate = n_unparsed / answered if answered else math.nan
    flags = (["unparsed"] if answered and rate > 0.05 else []) + (["errors"] if n_error else [])
    return {
        "n": len(values),
        "n_ok": n_ok,
        "n_unparsed": n_unparsed,
        "n_error": n_error,
        "acc": acc,
        "unparsed_rate": rate,
        "flag": ",".join(flags),
    }


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return coverage_table(_frame(CELLS))


def test_the_table_has_exactly_the_declared_columns_one_row_per_cell_sorted(table):
    assert list(table.columns) == list(COLUMNS)
    assert list(zip(table["model"], table["benchmark"], table["condition"], strict=True)) == sorted(CELLS)


def test_every_count_accuracy_and_rate_matches_a_hand_count(table):
    for (model, benchmark, condition), values in CELLS.items():
        row = table[(table.model == model) & (table.benchmark == benchmark) & (table.condition == condition)].iloc[0]
        expected = _expected(values)
        for column in ("n", "n_ok", "n_unparsed", "n_error"):
            assert row[column] == expected[column], (model, benchmark, condition, column)
        assert_allclose([row.acc, row.unparsed_rate], [expected["acc"], expected["unparsed_rate"]], atol=1e-12)
        assert row.flag == expected["flag"]


def test_an_unparsed_answer_counts_as_answered_and_wrong(table):
    row = table[(table.model == "m") & (table.benchmark == "b") & (table.condition == "orig")].iloc[0]
    # [T, T, F, U, E]: answered = 3 ok + 1 unparsed = 4, two right -> 2/4; unparsed rate 1/4
    assert row.acc == pytest.approx(0.5, abs=1e-12) and row.unparsed_rate == pytest.approx(0.25, abs=1e-12)
    assert row.flag == "unparsed,errors"


def test_a_cell_with_only_errors_has_no_accuracy_and_is_flagged_for_errors(table):
    row = table[table.model == "a"].iloc[0]
    assert (row.n, row.n_ok, row.n_unparsed, row.n_error) == (2, 0, 0, 2)
    assert math.isnan(row.acc) and math.isnan(row.unparsed_rate)
    assert row.flag == "errors"


def test_an_unparsed_rate_at_the_threshold_is_not_flagged_and_just_above_it_is():
    assert UNPARSED_FLAG == 0.05  # the 5% the column description names
    at = coverage_table(_frame({("m", "b", "orig"): [T] * 19 + [U]})).iloc[0]  # 1/20 = 0.05
    above = coverage_table(_frame({("m", "b", "orig"): [T] * 18 + [U]})).iloc[0]  # 1/19 > 0.05
    assert at.unparsed_rate == pytest.approx(0.05) and at.flag == ""
    assert above.unparsed_rate == pytest.approx(1 / 19) and above.flag == "unparsed"


def test_an_empty_frame_gives_an_empty_table_with_the_declared_columns():
    table = coverage_table(tidy_frame([]))
    assert table.empty and list(table.columns) == list(COLUMNS)


def test_the_declared_analysis_runs_the_table_and_needs_no_condition():
    (analysis,) = ANALYSES
    assert analysis.name == "coverage" and analysis.needs is None
    assert analysis.columns is COLUMNS and analysis.compute is coverage_table
    # rows sorted by key: (a, b, orig) 2 questions, (m, b, black) 5, (m, b, orig) 5, (m, c, orig) 20
    assert analysis.run(_frame(CELLS), ReportSettings())["n"].tolist() == [2, 5, 5, 20]
