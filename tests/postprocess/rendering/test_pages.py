"""postprocess.rendering.pages: report.md, report.html and report.json rendered from small hand-built tables."""

from __future__ import annotations

import base64
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import TABLES
from postprocess.analyses.base import ReportSettings, empty, skipped
from postprocess.analyses.vdg import COLUMNS as VDG_COLUMNS
from postprocess.reading.answer_options import RULE_INFERRED
from postprocess.reading.frame import QUANTIZED_MARK
from postprocess.rendering.formatting import CI_METHODS, conventions
from postprocess.rendering.pages import (
    HTML_MAX_ROWS,
    JSON_FORMAT,
    MD_MAX_ROWS,
    ci_method_lines,
    findings_by_run,
    html_layout,
    html_with_plots,
    inferred_option_lines,
    json_value,
    markdown_layout,
    markdown_with_plots,
    options_dict,
    quantized_note,
    question_set_lines,
    render_html,
    render_json,
    render_markdown,
    table_records,
    transform_version_lines,
)
from postprocess.rendering.sections import GROUPS, TRACKING

DECLARED = {t.name: t for t in TABLES}


def _section_text(md: str, heading: str) -> str:
    """The text of the section under ``heading`` (a whole line), up to the next heading of level 1 or 2."""
    return md.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def _table_rows(section: str) -> tuple[list[str], list[list[str]]]:
    """(header cells, body rows) of the first pipe table in ``section``."""
    lines = [line for line in section.splitlines() if line.startswith("|")]

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip("|").split("|")]

    return cells(lines[0]), [cells(line) for line in lines[2:]]


def _vdg_row(**columns) -> dict:
    """One vdg row: 4 questions, 3 right with the video and 1 without: d = 2, c = 0, VDG = 3/4 - 1/4."""
    row = {
        "model": "m",
        "benchmark": "b",
        "task_type": "Overall",
        "n": 4,
        "acc_orig": 0.75,
        "acc_black": 0.25,
        "vdg": 0.5,
        "ci_low": 0.0,
        "ci_high": 1.0,
        "d": 2,
        "c": 0,
        "too_small": False,
        "missing_policy": "exclude",
    }
    return row | columns


# ----------------------------------------------------------------------------------------- markdown


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


def test_a_headline_section_shows_its_columns_with_the_ci_merged_under_intro_and_conventions():
    vdg = pd.DataFrame([_vdg_row(task_type="T1"), _vdg_row()])
    section = _section_text(render_markdown({"vdg": vdg}), "## Visual Dependency Gap by task type")
    paragraph = section.strip().split("\n\n", 1)[0]
    assert paragraph.startswith("VDG = correct(orig) - correct(black), per question")
    assert paragraph.endswith(
        "Conventions: a question with an error (no answer) in a compared condition is dropped from both arms."
    )
    header, rows = _table_rows(section)
    # the section's columns present, in its order; too_small is not one of them, missing_policy is stated above
    assert header == ["model", "benchmark", "task_type", "n", "acc_orig", "acc_black", "vdg [CI]", "d", "c"]
    assert rows == [
        ["m", "b", "T1", "4", "0.750", "0.250", "+0.500 [+0.000, +1.000]", "2", "0"],
        ["m", "b", "Overall", "4", "0.750", "0.250", "+0.500 [+0.000, +1.000]", "2", "0"],
    ]


def test_a_long_section_shows_its_first_rows_and_points_to_the_csv():
    vdg = pd.DataFrame([_vdg_row(model=f"m{i}") for i in range(MD_MAX_ROWS + 1)])
    section = _section_text(render_markdown({"vdg": vdg}), "## Visual Dependency Gap by task type")
    assert f"First {MD_MAX_ROWS} of {MD_MAX_ROWS + 1} rows; every row is in `vdg.csv`." in section
    _, rows = _table_rows(section)
    assert [r[0] for r in rows] == [f"m{i}" for i in range(MD_MAX_ROWS)]


def test_grouped_sections_sit_under_one_group_heading_in_headline_order():
    name_swap = pd.DataFrame({"model": ["m"], "benchmark": ["b"], "split": ["all"], "n": [5], "changed": [2]})
    abstention = pd.DataFrame({"model": ["m"], "benchmark": ["b"], "n": [5], "abstained_added": [1]})
    md = render_markdown({"abstention": abstention, "name_swap": name_swap})  # dict order is not report order
    assert md.count(f"## {TRACKING}\n") == 1
    assert f"## {TRACKING}\n\n{GROUPS[TRACKING]}\n" in md
    assert md.index(f"## {TRACKING}") < md.index("### Name-swap sensitivity") < md.index("### Abstention")


def test_coverage_lists_each_flagged_condition():
    cov = pd.DataFrame(
        {
            "model": ["m", "m"],
            "condition": ["orig", "black"],
            "n": [10, 10],
            "n_unparsed": [0, 3],
            "n_error": [0, 1],
            "flag": ["", "unparsed"],
        }
    )
    section = _section_text(render_markdown({"coverage": cov}), "## Coverage")
    assert section.startswith("\nUnparsed answers are scored wrong; above 5% a run")  # UNPARSED_FLAG = 0.05
    assert "**Flags:** m / black: unparsed (3 unparsed, 1 errors)" in section
    assert "**Flags:**" not in render_markdown({"coverage": cov.assign(flag="")})


def _skipped_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "analysis": ["ladder", "categories", "name_swap", "kappa"],
            "model": ["m", "m", "m", ""],
            "benchmark": ["b", "b", "b", "b"],
            "reason": [
                "no ladder for m: no shuffled run",
                "no categories for m: no shuffled run",
                "no name_swap for m: no nameswap run",
                "kappa was skipped: one model only",
            ],
            "offered": [True, np.nan, False, True],  # a missing "offered" counts as offered
        }
    )


def test_what_was_not_computed_is_grouped_by_reason_and_leaves_out_what_is_not_offered():
    md = render_markdown({"skipped": _skipped_table()})
    # reasons naming the table come first as they are; the others grouped by (subject, why)
    expected = (
        "**Not computed** (those tables are written with the header only, or without the model):\n\n"
        "- kappa was skipped: one model only\n"
        "- no ladder, categories for m: no shuffled run\n"
    )
    assert expected in md and "name_swap for" not in md


def test_not_computed_is_repeated_in_one_line_under_coverage():
    cov = pd.DataFrame({"model": ["m"], "condition": ["orig"], "n": [3]})
    section = _section_text(render_markdown({"coverage": cov, "skipped": _skipped_table()}), "## Coverage")
    assert (
        "**Not computed:** kappa was skipped: one model only; no ladder, categories for m: no shuffled run" in section
    )


def _summary(flags: list[str]) -> pd.DataFrame:
    n = len(flags)
    return pd.DataFrame(
        {
            "model": [f"m{i}" for i in range(n)],
            "benchmark": ["b"] * n,
            "vdg": [0.5] * n,
            "flags": flags,
            "details": [f"{f} in words" if f else "" for f in flags],
            "missing_policy": ["exclude"] * n,
        }
    )


def test_the_summary_lists_each_flagged_run():
    section = _section_text(render_markdown({"summary": _summary(["errors", ""])}), "## Summary")
    assert "**1 of 2 model runs have flags:**\n\n- m0 / b: errors in words\n" in section
    assert "No flags" not in section
    header, rows = _table_rows(section)
    assert header == ["model", "benchmark", "vdg", "flags"]  # details: in the lines; missing_policy: stated
    assert rows == [["m0", "b", "+0.500", "errors"], ["m1", "b", "+0.500", ""]]


def test_a_summary_without_flags_says_so_unless_transform_versions_differ():
    assert "No flags: no condition above the unparsed threshold" in render_markdown({"summary": _summary([""])})
    sources = pd.DataFrame(
        {
            "kind": ["samples", "samples"],
            "model": ["m", "n"],
            "benchmark": ["b", "b"],
            "conditions": ["orig", "black"],
            "n_records": [4, 4],
            "transform_version": [1, 2],
        }
    )
    md = render_markdown({"summary": _summary([""]), "sources": sources})
    assert "No flags" not in md and "**Runs whose videos were built by different transform versions" in md


def test_a_skipped_summary_says_why():
    table = skipped(DECLARED["summary"].columns, "no model has both orig and black")
    assert "## Summary\n\nThe summary was skipped: no model has both orig and black\n" in render_markdown(
        {"summary": table}
    )


def test_findings_are_one_sentence_per_line_under_each_run_in_table_order():
    findings = pd.DataFrame(
        {"model": ["m", "n", "m"], "benchmark": ["b", "b", "b"], "sentence": ["First.", "Other.", "Second."]}
    )
    assert findings_by_run({"findings": findings}) == [("m on b", ["First.", "Second."]), ("n on b", ["Other."])]
    assert findings_by_run({}) == []
    md = render_markdown({"findings": findings})
    assert "## Findings" in md and "**m on b**\n\n- First.\n- Second.\n\n**n on b**\n\n- Other.\n" in md
    page = render_html({"findings": findings})
    assert "<p><b>m on b</b></p><ul><li>First.</li><li>Second.</li></ul>" in page


def test_inputs_count_the_logs_and_tabulate_the_prediction_files():
    sources = pd.DataFrame(
        {
            "file": ["a.jsonl", "b.jsonl", "p.json", "k_Video-MME_score.tsv"],
            "kind": ["lmms-eval samples log", "lmms-eval samples log", "predictions", "VLMEvalKit scores"],
            "model": ["m", "m", "n", "k"],
            "conditions": ["orig", "black", "orig", "black"],
            "n_records": [5, 7, 9, 3],
            "question_id_field": ["", "", "qid", "index"],
            "video_id_field": ["", "", "vid", "video"],
            "n_options_source": ["", "", "record", "candidates"],
        }
    )
    section = _section_text(render_markdown({"sources": sources}), "## Inputs")
    assert "2 lmms-eval samples logs (12 records), read from vdg's own record." in section  # 5 + 7 records
    header, rows = _table_rows(section)
    assert header[:2] == ["file", "kind"] and rows == [
        ["p.json", "predictions", "n", "orig", "9", "qid", "vid", "record"],
        ["k_Video-MME_score.tsv", "VLMEvalKit scores", "k", "black", "3", "index", "video", "candidates"],
    ]


def test_the_table_index_lists_every_table_with_its_rows_description_and_skip_reason():
    vdg = pd.DataFrame([_vdg_row()])
    ladder = skipped(DECLARED["ladder"].columns, "no shuffled run")
    md = render_markdown({"vdg": vdg, "ladder": ladder, "mine": pd.DataFrame({"x": [1, 2]})})
    index = md.split("## All tables", 1)[1]
    assert f"- `vdg.csv` (1 rows): {DECLARED['vdg'].description}\n" in index
    assert f"- `ladder.csv` (0 rows): {DECLARED['ladder'].description} **Skipped:** no shuffled run\n" in index
    assert "- `mine.csv` (2 rows)\n" in index  # an undeclared table: no description


def test_plots_go_in_before_the_table_index():
    md = render_markdown({"vdg": pd.DataFrame([_vdg_row()])}, [Path("out/plots/vdg_by_task.png")])
    assert "## Plots\n\n![vdg_by_task](plots/vdg_by_task.png)\n" in md
    assert md.index("## Visual Dependency Gap") < md.index("## Plots") < md.index("## All tables")
    assert "## Plots" not in markdown_with_plots(markdown_layout({}), [])


# -------------------------------------------------------------------------------------- first screen


def test_the_quantized_note_names_every_marked_label_once():
    mark = QUANTIZED_MARK
    tables = {
        "vdg": pd.DataFrame({"model": [f"q{mark}int4", "llava", f"q{mark}int4"]}),
        "coverage": pd.DataFrame({"model": [f"a{mark}int8", None]}),
        "other": pd.DataFrame({"x": [1]}),
    }
    assert quantized_note(tables).startswith(f"{mark} quantized: a{mark}int8, q{mark}int4 ran with 4- or 8-bit weights")
    assert quantized_note({"vdg": pd.DataFrame({"model": ["llava"]})}) == ""


def test_only_inferred_option_counts_are_listed():
    counts = pd.DataFrame(
        {
            "benchmark": ["b", "b"],
            "task_type": ["T1", "T2"],
            "n_questions": [10, 5],
            "n_options": [4, 5],
            "n_options_rule": [RULE_INFERRED, "options file"],
        }
    )
    title, lines = inferred_option_lines({"option_counts": counts})
    assert "--options-file" in title
    assert lines == [f"b / T1: 4 options, {RULE_INFERRED} (10 questions)"]
    assert inferred_option_lines({})[1] == []


def test_question_set_lines_describe_each_run_that_dropped_questions():
    table = pd.DataFrame(
        {
            "model": ["m", "m", "k", "z"],
            "benchmark": ["b", "b", "b", "b"],
            "condition": ["orig", "black", "orig", "orig"],
            "question_rule": ["shared", "shared", "shared", "shared"],
            "n_questions": [10, 10, 10, 10],
            "n_kept": [7, 7, 9, 10],
            "n_dropped": [3, 3, 1, 0],
            "n_dropped_own": [1, 1, 0, 0],
            "n_dropped_answered": [2, 0, 0, 0],
            "acc_kept": [0.75, 0.5, 0.5, 0.5],
            "acc_dropped": [0.5, np.nan, np.nan, np.nan],
            "p_fisher": [0.5, np.nan, np.nan, np.nan],
            "dropped_differ": [True, False, False, False],
        }
    )
    title, lines = question_set_lines({"question_sets": table})
    assert title.startswith("Questions the comparisons drop")
    assert lines == [
        "m / b: 'shared' keeps 7 of 10 questions (3 dropped, 1 for its own errors); orig 0.500 on the 2 dropped it "
        "answered vs 0.750 kept (Fisher p = 0.5, they differ)",
        "k / b: 'shared' keeps 9 of 10 questions (1 dropped, 0 for its own errors); it answered none of the dropped",
    ]  # z dropped nothing: no line
    assert question_set_lines({}) == ("", [])


def test_ci_method_lines_name_exact_and_resampled_tables():
    tables = {
        "vdg": pd.DataFrame({"ci_method": ["exact", "exact"]}),
        "kappa": pd.DataFrame({"ci_method": ["monte carlo", "monte carlo", "exact"], "mc_se": [0.001, 0.0031, 9.0]}),
        "ladder": pd.DataFrame({"ci_method": ["monte carlo"]}),  # no mc_se column: named alone
        "empty": pd.DataFrame({"ci_method": pd.Series([], dtype=object)}),
        "other": pd.DataFrame({"x": [1]}),
    }
    title, lines = ci_method_lines(tables)
    assert title == "How the CIs were computed:"
    # kappa's worst MC SE among its monte carlo rows: 0.0031 ("{:.2g}"); the exact row's 9.0 is not one of them
    assert lines[0] == f"{CI_METHODS['exact']}: vdg, kappa"
    assert lines[1].startswith(f"{CI_METHODS['monte carlo']} (cluster bootstrap")
    assert lines[1].endswith(": kappa (largest endpoint MC SE 0.0031), ladder")
    assert ci_method_lines({"other": tables["other"]})[1] == []


def test_ci_method_lines_are_generated_from_every_method_the_tables_used():
    # Score intervals (the default for paired differences of 0/1 outcomes) are named as such, never as a bootstrap;
    # a cell naming two methods (' + ') counts for both.
    tables = {
        "vdg": pd.DataFrame({"ci_method": ["tango score", "tango score (design effect)", ""]}),
        "ladder": pd.DataFrame({"ci_method": ["tango score (design effect) + exact"], "mc_se": [0.0]}),
        "dissociation": pd.DataFrame({"ci_method": ["monte carlo"], "mc_se": [0.0017]}),
    }
    _, lines = ci_method_lines(tables)
    assert lines == [
        f"{CI_METHODS['tango score']}: vdg",
        f"{CI_METHODS['tango score (design effect)']}: vdg, ladder",
        f"{CI_METHODS['exact']}: ladder",
        f"{CI_METHODS['monte carlo']} (cluster bootstrap, or values off a lattice; each endpoint's MC SE estimated "
        "from 20 batches of the resamples): dissociation (largest endpoint MC SE 0.0017)",
    ]
    assert not any("bootstrap" in line for line in lines[:2])


def test_transform_version_lines_flag_a_benchmark_built_by_two_versions():
    sources = pd.DataFrame(
        {
            "model": ["m", "n", "m", "k"],
            "benchmark": ["b", "b", "c", "d,e"],
            "conditions": ["orig", "black", "orig", "orig"],
            "transform_version": ["1", "2", "1", "1,2"],
        }
    )
    title, lines = transform_version_lines({"sources": sources})
    assert title.startswith("Runs whose videos were built by different transform versions")
    # c has one version; "d,e" / "1,2": each of d and e is built by both
    assert lines == [
        "b: version 1: m (orig); version 2: n (black)",
        "d: version 1: k (orig); version 2: k (orig)",
        "e: version 1: k (orig); version 2: k (orig)",
    ]
    assert transform_version_lines({"sources": sources.drop(columns="transform_version")}) == ("", [])
    one = sources.assign(transform_version=["1", "1", "1", np.nan])  # nan: no version
    assert transform_version_lines({"sources": one})[1] == []


# --------------------------------------------------------------------------------------------- HTML


def test_html_renders_empty_tables_as_a_note():
    page = render_html({"vdg": empty(VDG_COLUMNS)})
    assert 'id="vdg"' in page and "No rows" in page


def test_html_cells_are_escaped_and_classed_by_kind():
    table = pd.DataFrame({"model": ["<b>&"], "task_type": ["Overall"], "n": [3]})
    page = render_html({"coverage": table})
    assert '<th class="t">model</th><th class="t">task_type</th><th class="">n</th>' in page
    assert (
        '<tr class="overall"><td class="t">&lt;b&gt;&amp;</td><td class="t">Overall</td><td class="">3</td></tr>'
        in page
    )
    assert "<b>&" not in page


def test_a_long_html_table_is_cut_with_a_pointer_to_the_csv():
    table = pd.DataFrame({"model": [f"m{i}" for i in range(HTML_MAX_ROWS + 1)]})
    page = render_html({"mine": table})
    assert f"First {HTML_MAX_ROWS} of {HTML_MAX_ROWS + 1} rows; every row is in <code>mine.csv</code>" in page
    assert page.count("<tr>") == HTML_MAX_ROWS + 1  # the header row and the first HTML_MAX_ROWS rows


def test_a_skipped_table_says_why_in_html():
    page = render_html({"ladder": skipped(DECLARED["ladder"].columns, "no <shuffled> run")})
    assert '<p class="flag">Skipped: no &lt;shuffled&gt; run (<code>ladder.csv</code> has the header only.)</p>' in page


def test_a_filtered_headline_table_is_shown_again_whole():
    flips = pd.DataFrame({"model": ["m", "m"], "task_type": ["T1", "Overall"], "net": [1, -2]})
    layout = html_layout({"crf_flips": flips})
    assert [a for a, _ in layout.toc] == ["crf_flips", "crf_flips-all"]
    assert layout.toc[1][1] == "crf_flips (all rows)"
    # the headline shows the Overall row only; the table below shows both
    assert layout.parts[0].count("<tr") == 2 and layout.parts[1].count("<tr") == 3


def test_grouped_html_sections_get_a_group_heading_and_a_lower_level():
    name_swap = pd.DataFrame({"model": ["m"], "n": [5]})
    page = render_html({"name_swap": name_swap})
    assert f'<h2 id="group-character-tracking">{TRACKING}</h2>' in page
    assert '<h3 id="name_swap">Name-swap sensitivity</h3>' in page
    assert '<a href="#group-character-tracking">' in page


def test_html_plots_are_inlined_and_listed_after_coverage(tmp_path):
    plot = tmp_path / "vdg_by_task.png"
    plot.write_bytes(b"png")
    tables = {"coverage": pd.DataFrame({"model": ["m"]}), "mine": pd.DataFrame({"x": [1]})}
    page = html_with_plots(html_layout(tables), [plot], title="a<b")
    assert f'src="data:image/png;base64,{base64.b64encode(b"png").decode()}"' in page  # "cG5n"
    assert "<figcaption>vdg_by_task</figcaption>" in page
    assert "<title>a&lt;b</title>" in page and "<h1>a&lt;b</h1>" in page
    nav = page[page.index("<nav>") : page.index("</nav>")]
    assert nav.index("#coverage") < nav.index("#plots") < nav.index("#mine")
    assert page.index('id="coverage"') < page.index('id="plots"') < page.index('id="mine"')


def test_a_table_named_plots_never_takes_the_plots_anchor():
    page = render_html({"plots": pd.DataFrame({"x": [1]})})
    assert 'id="plots-all"' in page and 'id="plots"' not in page


# --------------------------------------------------------------------------------------------- JSON


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.nan, None),
        (pd.NA, None),
        (pd.NaT, None),
        (None, None),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (np.int64(3), 3),
        (np.float32(0.25), 0.25),
        (np.bool_(True), True),
        ("s", "s"),
        ((1, np.int8(2)), [1, 2]),
        ({"k": np.nan}, {"k": None}),
    ],
)
def test_json_value_makes_a_cell_strict_json(value, expected):
    converted = json_value(value)
    assert converted == expected and type(converted) is type(expected)


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


def test_table_records_of_a_table_without_rows_is_an_empty_list():
    assert table_records(pd.DataFrame({"a": pd.Series([], dtype=float)})) == []


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


def test_options_are_written_field_by_field():
    assert options_dict(None) is None
    written = options_dict(ReportSettings(n_resamples=7, tier_map={"T1": "high"}, task_types=("T1",)))
    assert list(written) == [f.name for f in dataclasses.fields(ReportSettings)]
    assert written["n_resamples"] == 7 and written["tier_map"] == {"T1": "high"} and written["task_types"] == ["T1"]
    assert written["missing"] == "exclude"  # a default
    json.dumps(written, allow_nan=False)


def test_json_inputs_gain_the_source_files():
    sources = pd.DataFrame({"file": ["a.jsonl"], "n_records": [5]})
    data = render_json({"sources": sources}, inputs={"runs": ["m=dir"]})
    assert data["inputs"] == {"runs": ["m=dir"], "files": [{"file": "a.jsonl", "n_records": 5}]}
    assert render_json({"sources": sources})["inputs"] == {"files": [{"file": "a.jsonl", "n_records": 5}]}
    assert render_json({}, inputs={"predictions": [("m", Path("p.json"))]})["inputs"] == {
        "predictions": [["m", "p.json"]]
    }
    assert render_json({})["inputs"] is None


def test_json_describes_declared_tables_and_lifts_summary_and_skipped():
    vdg = pd.DataFrame({"model": ["m"], "n": [4]})
    ladder = skipped(DECLARED["ladder"].columns, "no shuffled run")
    summary = pd.DataFrame({"model": ["m"], "flags": [""]})
    why = pd.DataFrame({"analysis": ["ladder"], "reason": ["no shuffled run"]})
    data = render_json({"vdg": vdg, "ladder": ladder, "summary": summary, "skipped": why}, options=ReportSettings())
    assert data["format"] == JSON_FORMAT == "vdg-report/2"
    assert data["options"]["n_resamples"] == ReportSettings().n_resamples
    assert data["summary"] == [{"model": "m", "flags": ""}]
    assert data["skipped"] == [{"analysis": "ladder", "reason": "no shuffled run"}]
    entry = data["tables"]["vdg"]
    assert entry["description"] == DECLARED["vdg"].description
    # only the columns the table has, each with its declared description
    assert entry["columns"] == {"model": DECLARED["vdg"].columns["model"], "n": DECLARED["vdg"].columns["n"]}
    assert entry["skipped"] is None and entry["n_rows"] == 1 and entry["rows"] == [{"model": "m", "n": 4}]
    assert data["tables"]["ladder"]["skipped"] == "no shuffled run" and data["tables"]["ladder"]["rows"] == []
    assert render_json({})["summary"] == [] and render_json({})["skipped"] == []
