"""report.md / report.html / report.json from the analysis tables (rendering only)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import ANALYSES, TABLES
from postprocess.analyses.base import empty
from postprocess.analyses.vdg import COLUMNS as VDG_COLUMNS
from postprocess.formatting import (
    conventions,
    drop_blank_columns,
    format_table,
    format_value,
    is_text,
    markdown_table,
    merge_intervals,
)
from postprocess.render import JSON_FORMAT, json_value, render_html, render_json, render_markdown, table_records
from postprocess.report import compute_tables, partial_dir, write_report
from tests.helpers.reference_data import REFERENCE, reference_frame, reference_predictions
from tests.helpers.report_tables import FAST, reference_tables


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    tables = reference_tables()
    md = write_report(tables, out, options=FAST, inputs={"predictions": reference_predictions()})
    return out, tables, md


def test_every_table_and_report_file_is_written(written):
    out, tables, md = written
    for analysis in ANALYSES:
        header = pd.read_csv(out / f"{analysis.name}.csv", nrows=0).columns.tolist()
        assert header == list(analysis.columns), analysis.name
    for name in ("report.md", "report.html", "report.json"):
        assert (out / name).is_file()
    assert (out / "report.md").read_text() == md
    assert {p.name for p in (out / "plots").iterdir()} >= {"ladder.png", "vdg_by_task.png", "vdg_vs_accuracy.png"}


def test_markdown_headline_sections_state_their_conventions(written):
    _, tables, md = written
    assert md.startswith("# vdg report")
    section = md.split("## Visual Dependency Gap by task type", 1)[1].split("\n## ", 1)[0]
    # The convention sentence sits above the table and is read from the convention columns.
    text, table = section.split("\n|", 1)
    assert "dropped from both arms" in text and "95% confidence intervals" in text
    assert "exact percentile bootstrap" in text and "resampling unit: question" in text
    assert "percentile bootstrap with" not in text  # exact CIs draw no resamples
    assert "questions compared: no error under orig, black for any model" in text
    # Stated conventions are not repeated as columns; the CI joins its estimate.
    assert "missing_policy" not in table and "n_resamples" not in table and "vdg [CI]" in table
    # qwen2vl Overall on the matched 547 questions: VDG 130/547 (reference T1: n = 547).
    row = next(line for line in table.splitlines() if "qwen2vl" in line and "Overall" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "547" and cells[6].startswith(f"{(352 - 222) / 547:+.3f} [")
    assert "## Ladder" in md and "## Coverage" in md and "**Flags:**" in md
    assert "qwen2vl / orig: errors (0 unparsed, 53 errors)" in md
    # Every table is listed with its file.
    for name in tables:
        assert f"`{name}.csv`" in md


def test_markdown_skips_absent_and_empty_tables():
    md = render_markdown({"vdg": empty(VDG_COLUMNS)})
    assert md.startswith("# vdg report") and "Visual Dependency Gap" not in md and "## Coverage" not in md
    assert render_markdown({}).startswith("# vdg report")


def _pairs_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model_a": ["a", "a"],
            "model_b": ["b", "b"],
            "benchmark": ["x", "x"],
            "condition": ["orig", "black"],
            "n": [10, 10],
            "diff": [0.1, -0.25],
            "diff_ci_low": [-0.1, -0.5],
            "diff_ci_high": [0.3, 0.0],
            "b01": [3, 1],
            "b10": [4, 3],
            "p_cc": [0.123456789, 0.00001234567],
            "p_holm": [0.2469, np.nan],
            "missing_policy": ["incorrect", "incorrect"],
            "alpha": [0.05, 0.05],
        }
    )


def test_headline_tables_of_other_analyses_render_from_their_columns():
    md = render_markdown({"mcnemar": _pairs_table()})
    section = md.split("## McNemar tests between models", 1)[1]
    assert "an error (no answer) is scored wrong" in section and "significance level 0.05" in section
    assert "+0.100 [-0.100, +0.300]" in section  # diff with its CI
    assert "0.1235" in section and "1.235e-05" in section  # p-values: 4 significant digits
    # A section named by alias: crf_flips absent, flips present.
    flips = pd.DataFrame({"model": ["m"], "task_type": ["Overall"], "c_to_i": [3], "i_to_c": [1], "net": [-2]})
    assert "## Answer flips under compression (CRF)" in render_markdown({"flips": flips})


def test_convention_that_varies_stays_a_column():
    table = _pairs_table().assign(missing_policy=["exclude", "incorrect"])
    sentence, varying = conventions(table)
    assert varying == ["missing_policy"] and "varies by row: `missing_policy`" in sentence
    assert "missing_policy" in render_markdown({"mcnemar": table}).split("## McNemar", 1)[1]


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


def test_markdown_table_aligns_and_drops_columns_empty_everywhere():
    table = pd.DataFrame({"model": ["m"], "acc_ordered": [np.nan], "acc": [0.5]})
    text = markdown_table(table)
    assert "acc_ordered" not in text and "|:--" in text and "--:|" in text


@pytest.mark.parametrize(
    "table",
    [
        pd.DataFrame({"model": ["m"], "acc_ordered": [np.nan], "acc": [0.5]}),
        pd.DataFrame({"acc": [np.nan, np.nan]}),  # every column blank
        empty(VDG_COLUMNS),
        reference_tables()["vdg"],
        reference_tables()["coverage"],
    ],
)
def test_markdown_table_is_what_the_formatted_frame_renders_to(table):
    shown = drop_blank_columns(merge_intervals(format_table(table), table))
    align = ["left" if is_text(table, c) else "right" for c in shown.columns]
    assert markdown_table(table) == shown.to_markdown(index=False, disable_numparse=True, colalign=align)


def test_table_records_convert_each_column_as_json_value_does_each_cell():
    mixed = [np.nan, math.inf, -math.inf, pd.NA, pd.NaT, np.int64(3), np.bool_(True), np.float32(0.5), "s", None]
    mixed += [{"k": np.int8(1), 2: [np.nan, "x"]}, (np.inf, 1), 7, 2.5, False]
    n = len(mixed)

    def column(values: list, dtype: str | None = None) -> pd.Series:
        return pd.Series((values * n)[:n], dtype=dtype)

    table = pd.DataFrame(
        {
            "mixed": pd.Series(mixed, dtype=object),
            "float": column([0.25, np.nan, math.inf, -math.inf, -0.0, 1e300]),
            "float32": column([0.1, np.nan, -math.inf], "float32"),
            "int": column([1, -(2**62), 0]),
            "uint8": column([0, 255], "uint8"),
            "bool": column([True, False]),
            "Int64": column([1, None, -5], "Int64"),
            "boolean": column([True, None, False], "boolean"),
            "Float64": column([0.5, None, math.inf, np.nan], "Float64"),
            "str": column(["a", None, "b"], "str"),
            "category": column(["x", None], "category"),
            "time": column([pd.Timestamp("2024-01-02"), pd.NaT], "datetime64[ns]"),
        }
    )
    # repr tells True from 1 and 1 from 1.0
    cell_by_cell = [{c: json_value(table[c].tolist()[i]) for c in table.columns} for i in range(n)]
    assert repr(table_records(table)) == repr(cell_by_cell)
    json.dumps(table_records(table), allow_nan=False)


def test_json_is_strict_and_complete(written):
    out, tables, _ = written
    data = json.loads((out / "report.json").read_text(), parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))
    assert data["format"] == JSON_FORMAT
    assert data["options"]["n_resamples"] == 200 and data["options"]["tier_map"] == {}
    assert data["inputs"]["predictions"][0] == ["qwen2vl", str(REFERENCE / "qwen2vl_results.json")]
    declared = {a.name: a for a in TABLES}
    assert set(data["tables"]) == set(tables) == set(declared)
    for name, entry in data["tables"].items():
        assert list(entry["columns"]) == list(declared[name].columns)
        assert entry["columns"] == dict(declared[name].columns) and entry["description"] == declared[name].description
        assert entry["n_rows"] == len(entry["rows"]) == len(tables[name])
    vdg = {(r["model"], r["task_type"]): r for r in data["tables"]["vdg"]["rows"]}
    assert vdg[("qwen2vl", "Overall")]["n"] == 547 and vdg[("qwen2vl", "Overall")]["d"] == 170
    # The per-question table keeps the excluded rows with a null VDG.
    per_q = [r for r in data["tables"]["vdg_per_question"]["rows"] if r["model"] == "qwen2vl" and r["excluded"]]
    assert len(per_q) == 53 and all(r["vdg"] is None for r in per_q)


def test_json_values_nan_null_inf_string():
    table = pd.DataFrame(
        {
            "model": ["m", None],
            "dc_ratio": [math.inf, np.nan],
            "low": [-math.inf, 0.5],
            "n": pd.array([3, pd.NA], dtype="Int64"),
            "flag": pd.array([True, pd.NA], dtype="boolean"),
        }
    )
    data = render_json({"t": table})
    assert data["options"] is None
    rows = data["tables"]["t"]["rows"]
    assert rows == [
        {"model": "m", "dc_ratio": "inf", "low": "-inf", "n": 3, "flag": True},
        {"model": None, "dc_ratio": None, "low": 0.5, "n": None, "flag": None},
    ]
    assert data["tables"]["t"]["columns"] == {c: "" for c in table.columns}  # not a declared analysis
    json.dumps(data, allow_nan=False)
    assert json_value(np.float32(0.25)) == 0.25 and json_value((1, np.int8(2))) == [1, 2]


def test_html_is_self_contained_and_escaped(written):
    out, tables, _ = written
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "<script" not in page.lower() and "http://" not in page and "https://" not in page
    assert page.count("data:image/png;base64,") == len(list((out / "plots").iterdir()))
    # Headline first, then every table.
    assert page.index('id="vdg"') < page.index('id="ladder"') < page.index('id="coverage"')
    # The plots (drawn while the rest is rendered) go in after coverage, before the remaining tables, and in the nav.
    nav = page[page.index("<nav>") : page.index("</nav>")]
    assert nav.index('href="#coverage"') < nav.index('href="#plots"') < nav.index('href="#sources"')
    assert page.index('id="coverage"') < page.index('id="plots"') < page.index('id="sources"')
    markdown = (out / "report.md").read_text()
    assert markdown.index("## Plots") < markdown.index("## All tables")
    assert markdown.count("](plots/") == len(list((out / "plots").iterdir()))
    for name in tables:
        assert f"<code>{name}.csv</code>" in page
    # Long tables are cut, with a pointer to the CSV.
    assert "First 200 of 1800 rows" in page
    hostile = pd.DataFrame({"model": ["<script>alert(1)</script>"], "note": ['a & "b"']})
    html_text = render_html({"coverage": hostile})
    assert "<script>" not in html_text and "&lt;script&gt;" in html_text and "a &amp; &quot;b&quot;" in html_text


def test_html_renders_empty_tables_as_a_note():
    page = render_html({"vdg": empty(VDG_COLUMNS)})
    assert 'id="vdg"' in page and "No rows" in page


def test_write_report_without_plots_or_options(tmp_path):
    tables = {"vdg": reference_tables()["vdg"]}
    md = write_report(tables, tmp_path / "out", plots=False)
    assert not (tmp_path / "out" / "plots").exists() and "## Plots" not in md
    assert json.loads((tmp_path / "out" / "report.json").read_text())["options"] is None


def test_compute_tables_keeps_each_csv_beside_out_until_the_report_is_written(tmp_path, monkeypatch):
    import postprocess.analyses as analyses
    from postprocess.analyses.base import Analysis

    def crash(frame, options):
        raise KeyError("a bug, not a data problem")

    out = tmp_path / "out"
    fake = (*analyses.ANALYSES[:2], Analysis("crash", "always crashes", {"x": "x"}, crash))
    monkeypatch.setattr(analyses, "ANALYSES", fake)
    with pytest.raises(KeyError, match="a bug"):
        compute_tables(reference_frame(), FAST, out)
    # A bug stops the run; what was computed is kept beside out, and out is not created.
    assert not out.exists() and partial_dir(out) == tmp_path / ".out.partial"
    assert sorted(p.name for p in partial_dir(out).iterdir()) == sorted(f"{a.name}.csv" for a in fake[:2])
    only = compute_tables(reference_frame(), FAST, names=[fake[0].name])
    assert list(only) == [fake[0].name]
    tables = compute_tables(reference_frame(), FAST, out, names=[fake[0].name])
    written = write_report(tables, out, plots=False)
    assert written.path == out and (out / f"{fake[0].name}.csv").is_file() and not partial_dir(out).exists()


def test_letters_section_shows_the_letters_in_use():
    row = {"model": "m", "benchmark": "b", "condition": "black", "n": 10, "n_letter": 10, "n_unparsed": 0}
    row |= {f"pred_{x}": c for x, c in zip("ABCDEF", (6, 2, 0, 2, 0, 0), strict=True)}
    row |= {f"gt_{x}": c for x, c in zip("ABCDEF", (2, 3, 3, 2, 0, 0), strict=True)}
    row |= {"top_pred": "A", "p_pred": 0.0123, "missing_policy": "exclude"}
    section = render_markdown({"letters": pd.DataFrame([row])}).split("## Answer-letter bias", 1)[1]
    header = section.split("\n|", 1)[1].splitlines()[0]
    assert "pred_C" in header and "pred_D" in header and "pred_E" not in header and "gt_A" not in header
    assert "0.0123" in section
