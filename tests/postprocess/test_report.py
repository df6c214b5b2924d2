"""postprocess.report: compute_tables and write_report, the report folder they write (CSVs, report.md / .html /
.json, plots) from the reference tables; the rendering of small tables is in rendering/test_pages.py."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from postprocess.analyses import ANALYSES, TABLES
from postprocess.rendering.formatting import CI_METHODS
from postprocess.rendering.pages import JSON_FORMAT, render_html
from postprocess.rendering.plots import PLOT_BESIDE
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
    # The CI's method in words, from the rows' ci_method (Tango's score interval, clustered by video on Video-MME's
    # three questions per video) in the intro and the conventions; no bootstrap the CIs did not use.
    words = CI_METHODS["tango score (design effect)"]
    assert set(tables["vdg"]["ci_method"]) - {""} == {"tango score (design effect)"}
    assert f"CI: paired, {words}." in text and text.count(words) == 2 and "CI unit: video" in text
    assert "bootstrap" not in text and "resamples" not in text  # score intervals draw no resamples
    assert "questions compared: no error under orig, black for this model" in text
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


def test_html_is_self_contained_and_escaped(written):
    out, tables, _ = written
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "<script" not in page.lower() and "http://" not in page and "https://" not in page
    assert page.count("data:image/png;base64,") == len(list((out / "plots").iterdir()))
    # Headline first, then every table.
    assert page.index('id="vdg"') < page.index('id="ladder"') < page.index('id="coverage"')
    # Each plot sits in the section of the table it illustrates, right after that table, before the next section.
    for plot in (out / "plots").iterdir():
        section = page.index(f'id="{PLOT_BESIDE[plot.stem]}"')
        figure = page.index(f'<img alt="{plot.stem}"')
        following = re.compile(r'<h[23] id="').search(page, section + 1)
        assert section < figure < (following.start() if following else len(page)), plot.stem
    assert 'id="plots"' not in page  # every plot has its section here
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
