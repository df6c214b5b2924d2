"""postprocess.rendering.glance: the report's first screen (headline and task-type grid per benchmark) and what
``vdg report`` prints, checked against the summary and tiers tables of the reference predictions."""

from __future__ import annotations

import re

import pandas as pd

from postprocess.rendering.glance import TERMINAL_LINES, glance, grid, headline, terminal_lines
from postprocess.rendering.pages import render_html, render_markdown
from tests.helpers.report_tables import reference_tables


def test_the_headline_quotes_the_summary_row_of_each_model():
    summary = reference_tables()["summary"]
    shown = headline(summary, "videomme").set_index("model")
    for row in summary.itertuples():
        cells = shown.loc[row.model]
        assert cells["accuracy"] == f"{row.acc_orig:.3f}"
        assert cells["VDG [95% CI]"] == f"{row.vdg:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}]"
        assert cells["tier"] == row.tier.split(" (")[0]
        assert cells["flags"] == (str(len(row.headline_flags.split(","))) if row.headline_flags else "")
    assert "conditions" not in shown.columns


def test_the_grid_holds_each_models_own_vdg_and_tier_per_task_type_overall_last():
    tables = reference_tables()
    tiers = tables["tiers"]
    own = tiers[tiers["n_models"] == 1]
    models = sorted(own["model"].unique())
    table = grid(tiers, "videomme", models).set_index("task type")
    assert list(table.index)[-1] == "Overall" and list(table.columns) == models
    for row in own.itertuples():
        vdg, tier = table.loc[row.task_type, row.model].split(" ", 1)
        assert float(vdg) == round(row.vdg, 3) and row.tier.startswith(tier)
    assert len(table) == own["task_type"].nunique()


def test_a_model_without_a_task_type_has_a_blank_cell():
    tiers = pd.DataFrame(
        [("m", "b", "T1", 1, 0.2, "mid"), ("n", "b", "T2", 1, -0.1, "low"), ("all", "b", "T1", 2, 0.0, "low")],
        columns=["model", "benchmark", "task_type", "n_models", "vdg", "tier"],
    )
    table = grid(tiers, "b", ["m", "n"]).set_index("task type")
    assert table.to_dict("index") == {"T1": {"m": "+0.200 mid", "n": ""}, "T2": {"m": "", "n": "-0.100 low"}}


def test_the_first_screen_opens_report_md_and_html_and_fits_sixty_lines():
    tables = reference_tables()
    markdown = render_markdown(tables)
    lines = markdown.splitlines()
    assert re.findall(r"^## (.+)$", markdown, flags=re.M)[:2] == ["At a glance", "Findings"]
    grid_rows = [line for line in lines[: lines.index("## Findings")] if line.startswith("| ")]
    n_models, n_types = len(tables["summary"]), tables["tiers"]["task_type"].nunique()
    assert len(grid_rows) == (1 + n_models) + (1 + n_types)  # two tables: header and rows each
    assert lines.index("## Findings") <= 60
    page = render_html(tables)
    assert page.index('id="at-a-glance"') < page.index('id="findings"') < page.index('id="summary"')
    assert '<a href="#summary">1</a>' in page  # a flags count links to the flags
    assert [b for b, _, _ in glance(tables)] == ["videomme"]


def test_the_terminal_gets_the_first_screen_and_the_findings_within_its_page():
    markdown = render_markdown(reference_tables())
    lines = terminal_lines(markdown)
    assert lines[0] == "## At a glance" and "## Findings" in lines and len(lines) <= TERMINAL_LINES
    assert "## Summary" not in lines
    long = "\n".join(["# vdg report", "", "## At a glance", *(f"row {i}" for i in range(100)), "## Summary", "x"])
    cut = terminal_lines(long, limit=10)
    assert cut[:9] == ["## At a glance", *(f"row {i}" for i in range(8))]
    assert cut[9] == "... report.md holds 92 more lines of these sections" and len(cut) == 10


def _benchmark_block(benchmark: str, models: int) -> list[str]:
    headline = ["| model | accuracy |", "|:--|--:|", *(f"| m{i} | 0.5 |" for i in range(models))]
    grid_rows = ["| task type | m0 |", "|:--|:--|", *(f"| t{i} | +0.1 mid |" for i in range(6))]
    return [f"### {benchmark}", "", *headline, "", *grid_rows, ""]


def test_with_several_benchmarks_the_terminal_keeps_each_headline_and_every_runs_first_findings():
    benchmarks, models = ["b1", "b2", "b3"], 3
    findings = ["## Findings", "", "In words, per model.", ""]
    for b in benchmarks:
        for m in range(models):
            findings += [f"**m{m} on {b}**", "", *(f"- {b} m{m} claim {k}." for k in range(8)), ""]
    blocks = [line for b in benchmarks for line in _benchmark_block(b, models)]
    markdown = "\n".join(["# vdg report", "", "## At a glance", "", "Intro.", "", *blocks, *findings, "## Summary"])
    cut = terminal_lines(markdown)
    assert len(cut) <= TERMINAL_LINES and cut[-1].startswith("... report.md holds ")
    assert "Intro." not in cut and not any(line.startswith("| t") for line in cut)  # the grids give way
    for b in benchmarks:  # every headline row, every run named, every run's first claim
        assert f"### {b}" in cut
        for m in range(models):
            assert any(f"m{m} on {b}" in line and f"{b} m{m} claim 0." in line for line in cut) or (
                f"**m{m} on {b}**" in cut and f"- {b} m{m} claim 0." in cut
            )
    claims = [line for line in cut if " claim " in line]
    per_run = {k: sum(line.endswith(f"claim {k}.") for line in claims) for k in range(8)}
    assert all(count in (0, len(benchmarks) * models) for count in per_run.values())  # the same number for each run
    assert sum(line.startswith("| m") and line != "| model | accuracy |" for line in cut) == len(benchmarks) * models


def test_tables_that_could_not_be_computed_come_first_in_the_terminal():
    markdown = "\n".join(
        ["# vdg report", "", "## At a glance", "", "row", "", "## Summary", "", "- broken was skipped: it is odd.",
         "- no ladder for m: single not run"]
    )  # fmt: skip
    assert terminal_lines(markdown) == ["Not computed:", "- broken was skipped: it is odd.", "", "## At a glance", "",
                                        "row"]  # fmt: skip


def test_the_first_screen_ends_with_links_to_every_other_section_which_the_terminal_leaves_out():
    markdown = render_markdown(reference_tables())
    lines = markdown.splitlines()
    (contents,) = [line for line in lines if line.startswith("**Contents:**")]
    assert lines.index(contents) < lines.index("## Findings")
    headings = [line[3:] for line in lines if line.startswith("## ")][1:]
    links = re.findall(r"\[([^\]]+)\]\(#([a-z0-9-]+)\)", contents)
    assert [label for label, _ in links] == headings
    assert dict(links)["Answer flips under compression (CRF)"] == "answer-flips-under-compression-crf"
    assert contents not in terminal_lines(markdown)


def test_the_headline_says_the_reports_ci_level_and_escapes_what_markdown_reads():
    summary = reference_tables()["summary"].assign(ci_level=0.8)
    summary.loc[summary.index[0], "model"] = "m|odel"
    assert "VDG [80% CI]" in headline(summary, "videomme").columns
    markdown = render_markdown({"summary": summary})
    assert "with its 80% CI" in markdown and "| m\\|odel " in markdown and "| m|odel " not in markdown


def test_runs_that_fit_under_their_names_keep_as_many_sentences_each():
    findings = ["## Findings", ""]
    for m in range(2):
        findings += [f"**m{m} on b**", "", *(f"- m{m} claim {k}." for k in range(30)), ""]
    markdown = "\n".join(["## At a glance", "", "### b", "| model |", "|:--|", "| m0 |", "| m1 |", "", *findings])
    cut = terminal_lines(markdown)
    assert len(cut) == TERMINAL_LINES and "**m0 on b**" in cut and "**m1 on b**" in cut
    counts = [sum(line.startswith(f"- m{m} claim") for line in cut) for m in range(2)]
    assert counts[0] == counts[1] >= 10
