"""docs/report-schema.md is generated from the declared columns and matches what the report writes."""

from __future__ import annotations

import re

import pandas as pd

from postprocess.analyses import TABLES
from postprocess.leaderboard import LEADERBOARD_COLUMNS
from postprocess.rendering.schema import SCHEMA_PATH, documented_columns, render_schema, write_schema
from postprocess.report import compute_tables, write_report
from tests.helpers.reference_data import reference_frame
from tests.helpers.report_tables import FAST
from vdg_tasks.cli import main


def test_committed_schema_is_the_generated_one():
    assert SCHEMA_PATH.read_text() == render_schema(), "docs/report-schema.md is stale: run `vdg schema`"


def test_every_table_and_column_is_documented():
    text = SCHEMA_PATH.read_text()  # the committed page users read
    assert documented_columns(text) == {a.name: list(a.columns) for a in TABLES}
    column_lines = [line for line in text.splitlines() if re.match(r"^- `[^`]+`:", line)]
    assert column_lines and all(re.match(r"^- `[^`]+`: \S", line) for line in column_lines)  # each described
    for column in LEADERBOARD_COLUMNS:
        assert f"- `{column}`: " in text.split("## Leaderboard", 1)[1]


def test_report_csv_headers_are_exactly_the_documented_columns(tmp_path):
    documented = documented_columns(SCHEMA_PATH.read_text())
    out = tmp_path / "out"
    tables = compute_tables(reference_frame(), FAST, out)
    write_report(tables, out, plots=False)
    assert set(tables) == set(documented)
    for name, columns in documented.items():
        assert pd.read_csv(out / f"{name}.csv", nrows=0).columns.tolist() == columns, name


def test_vdg_schema_writes_and_checks(tmp_path, capsys):
    path = tmp_path / "schema.md"
    assert main(["schema", "--check", "--out", str(path)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert main(["schema", "--out", str(path)]) == 0 and path.read_bytes() == SCHEMA_PATH.read_bytes()
    assert main(["schema", "--check", "--out", str(path)]) == 0
    path.write_text(path.read_text() + "edited\n")
    assert main(["schema", "--check", "--out", str(path)]) == 1
    assert write_schema(path) == path and path.read_bytes() == SCHEMA_PATH.read_bytes()
