"""The report's pages from its tables: report.md (findings and the first screen, then the sections), report.html
and report.json."""

from __future__ import annotations

import base64
import dataclasses
import html
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

import postprocess.analyses as _analyses
from postprocess.analyses.base import ReportSettings, skip_reason
from postprocess.analyses.coverage import UNPARSED_FLAG
from postprocess.reading.answer_options import RULE_INFERRED
from postprocess.reading.files import PLAIN_RUN_KIND, harness_of
from postprocess.reading.frame import QUANTIZED_MARK
from postprocess.rendering.formatting import (
    conventions,
    display_columns,
    format_value,
    formatted_cells,
    html_table,
    is_text,
    markdown_table,
    merge_interval_columns,
    nonblank,
    shown_rows,
)
from postprocess.rendering.glance import CONTENTS_MARK, glance_html, glance_markdown
from postprocess.rendering.plots import PLOT_BESIDE
from postprocess.rendering.sections import GROUPS, HEADLINE, Section
from postprocess.stats import json_ready
from vdg_tasks.vocabulary.untrusted import redact_value

#: Version of the report.json layout.


#: Version of the report.json layout.
JSON_FORMAT = "vdg-report/2"
#: Rows of one table shown in report.html (the CSV always has every row).
HTML_MAX_ROWS = 200
#: Rows of one table shown in report.md.
MD_MAX_ROWS = 120


def _analysis_info() -> dict[str, tuple[str, Mapping[str, str]]]:
    return {a.name: (a.description, a.columns) for a in _analyses.TABLES}


def _section_columns(section: Section, rows: pd.DataFrame) -> Sequence[str] | None:
    columns = section.columns(rows) if callable(section.columns) else section.columns
    return list(columns) or None


def _intro(section: Section, name: str, rows: pd.DataFrame, info: Mapping[str, tuple[str, Any]]) -> str:
    intro = section.intro(rows) if callable(section.intro) else section.intro
    return intro or info.get(name, ("", {}))[0]


def _section_markdown(
    section: Section, name: str, rows: pd.DataFrame, info: Mapping[str, tuple[str, Any]]
) -> list[str]:
    intro = _intro(section, name, rows, info)
    sentence, _ = conventions(rows)
    columns = display_columns(rows, _section_columns(section, rows))
    parts = [f"{'###' if section.group else '##'} {section.title}", ""]
    text = " ".join(s for s in (intro, sentence) if s)
    if text:
        parts += [text, ""]
    shown = rows
    if len(rows) > MD_MAX_ROWS:
        shown = rows.iloc[:MD_MAX_ROWS]
        parts += [f"First {MD_MAX_ROWS} of {len(rows)} rows; every row is in `{name}.csv`.", ""]
    parts += [markdown_table(shown, columns), ""]
    return parts


_COVERAGE_INTRO = (
    f"Unparsed answers are scored wrong; above {UNPARSED_FLAG:.0%} a run measures format compliance, not "
    "comprehension. Errors (missing or undecodable videos) are never scored."
)


def _coverage_markdown(cov: pd.DataFrame) -> list[str]:
    parts = [
        "## Coverage",
        "",
        _COVERAGE_INTRO,
        "",
        markdown_table(cov, list(cov.columns)),
        "",
    ]
    flagged = cov[cov["flag"].fillna("") != ""] if "flag" in cov.columns else cov.iloc[:0]
    if len(flagged):
        parts += [
            "**Flags:** "
            + "; ".join(
                f"{r.model} / {r.condition}: {r.flag} ({r.n_unparsed} unparsed, {r.n_error} errors)"
                for r in flagged.itertuples()
            ),
            "",
        ]
    return parts


#: Columns of the summary table shown on the first screen (the rest is in summary.csv).
SUMMARY_SHOWN: tuple[str, ...] = (
    "model",
    "benchmark",
    "conditions",
    "n",
    "acc_orig",
    "acc_black",
    "vdg",
    "ci_low",
    "ci_high",
    "tier",
    "flags",
)


def _summary_intro(summary: pd.DataFrame) -> str:
    """What the summary shows, its CI named from its ``ci_method`` values (the vdg table's rows it quotes)."""
    words = _analyses.findings.methods_words(summary["ci_method"].tolist()) if "ci_method" in summary else []
    how = f" ({'; '.join(words)})" if words else ""
    return (
        "Per model: the Overall VDG (acc_orig - acc_black on the questions both arms answered) with its paired "
        f"CI{how}, its tier, and every flag; read the flags before the numbers."
    )


def _summary_lines(summary: pd.DataFrame) -> list[str]:
    """One line per flagged model: its flags in words."""
    flagged = summary[summary["details"].fillna("") != ""]
    return [f"{r.model} / {r.benchmark}: {r.details}" for r in flagged.itertuples()]


def _skip_lines(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """What was not computed, one line per skipped table or left-out model (reasons of the skipped table),
    grouped: 'no vdg, categories for m: black not run'. Only what the benchmark offers (``offered``): no line
    says that videomme's name-swap tables are missing, since Video-MME names no characters."""
    skipped = tables.get("skipped")
    if skipped is None or not len(skipped):
        return []
    lines: list[str] = []
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for r in skipped[skipped["offered"].fillna(True).astype(bool)].itertuples():
        reason = str(r.reason)
        if reason.startswith(f"{r.analysis} was skipped: "):
            lines.append(reason)
            continue
        head, _, why = reason.partition(": ")
        subject = head.removeprefix(f"no {r.analysis} for ")
        grouped.setdefault((str(r.benchmark), subject, why), []).append(str(r.analysis))
    for (_, subject, why), names in grouped.items():
        lines.append(f"no {', '.join(names)} for {subject}: {why}")
    return lines


def quantized_note(tables: Mapping[str, pd.DataFrame]) -> str:
    """The footnote explaining the quantized mark, when some model label carries it ("" otherwise)."""
    marked = sorted(
        {
            str(m)
            for table in tables.values()
            if "model" in table.columns
            for m in table["model"].dropna().unique()
            if QUANTIZED_MARK in str(m)
        }
    )
    if not marked:
        return ""
    return (
        f"{QUANTIZED_MARK} quantized: {', '.join(marked)} ran with 4- or 8-bit weights (the mark names the "
        "quantization). A quantized model can lose its visual pathway; its rows are its own, never pooled with "
        "another precision of the same model."
    )


def inferred_option_lines(tables: Mapping[str, pd.DataFrame]) -> tuple[str, list[str]]:
    """The first screen's note on option counts: (its title, one line per (benchmark, task type, count, rule)
    of the ``option_counts`` table whose count was inferred); no lines when none was."""
    table = tables.get("option_counts")
    rows = [] if table is None or not len(table) else table[table["n_options_rule"] == RULE_INFERRED].itertuples()
    title = (
        "Inferred option counts (no options file, record or benchmark gives them; chance is 1 / n_options; "
        "give the true counts with --options-file):"
    )
    return title, [
        f"{r.benchmark} / {r.task_type}: {r.n_options} options, {r.n_options_rule} ({r.n_questions} questions)"
        for r in rows
    ]


def question_set_lines(tables: Mapping[str, pd.DataFrame]) -> tuple[str, list[str]]:
    """The first screen's note on question sets: one line per (model, benchmark) whose VDG comparison dropped
    questions (``question_sets`` table): how many, how many for its own errors, and whether it answered the
    dropped ones differently; no lines when nothing was dropped."""
    table = tables.get("question_sets")
    if table is None or not len(table):
        return "", []
    lines = []
    for (model, benchmark), rows in table.groupby(["model", "benchmark"], sort=False):
        first = rows.iloc[0]
        if not first["n_dropped"]:
            continue
        arms = []
        for r in rows.itertuples():
            if r.n_dropped_answered:
                arms.append(
                    f"{r.condition} {format_value('acc', r.acc_dropped)} on the {r.n_dropped_answered} dropped it "
                    f"answered vs {format_value('acc', r.acc_kept)} kept (Fisher p = {format_value('p', r.p_fisher)}"
                    f"{', they differ' if r.dropped_differ else ''})"
                )
        lines.append(
            f"{model} / {benchmark}: '{first['question_rule']}' keeps {first['n_kept']} of {first['n_questions']} "
            f"questions ({first['n_dropped']} dropped, {first['n_dropped_own']} for its own errors)"
            + (f"; {'; '.join(arms)}" if arms else "; it answered none of the dropped")
        )
    return "Questions the comparisons drop (every compared row of a table shares one question set):", lines


#: What a Monte Carlo line adds: how its Monte Carlo error was estimated.
_MC_NOTE = (
    "cluster bootstrap, or values off a lattice; each endpoint's MC SE estimated from 20 batches of the resamples"
)


def ci_method_lines(tables: Mapping[str, pd.DataFrame]) -> tuple[str, list[str]]:
    """The first screen's note on how the CIs were computed: one line per ``ci_method`` value found in the tables
    (several in one cell joined by ' + '), in words (``formatting.CI_METHODS``), naming the tables that use it; a
    resampled table with its largest Monte Carlo standard error."""
    users: dict[str, list[str]] = {}
    for name, table in tables.items():
        if "ci_method" not in table.columns or not len(table):
            continue
        parts = [str(cell).split(" + ") if isinstance(cell, str) else [] for cell in table["ci_method"].tolist()]
        for method in dict.fromkeys(part for row in parts for part in row if part):
            label = name
            if method == "monte carlo" and "mc_se" in table.columns:
                resampled = np.array([method in row for row in parts])
                worst = pd.to_numeric(table["mc_se"][resampled], errors="coerce").max()
                label = f"{name} (largest endpoint MC SE {worst:.2g})" if worst == worst else name
            users.setdefault(method, []).append(label)
    lines = []
    for method, names in users.items():
        words = _analyses.findings.method_words(method)
        if method == "monte carlo":
            words = f"{words} ({_MC_NOTE})"
        lines.append(f"{words}: {', '.join(names)}")
    return "How the CIs were computed:", lines


def transform_version_lines(tables: Mapping[str, pd.DataFrame]) -> tuple[str, list[str]]:
    """The flag of a benchmark whose runs' videos were built by different ``TRANSFORM_VERSION``s (the
    ``transform_version`` of the ``sources`` table, per input file): one line per such benchmark naming each version
    and the labels (and conditions) built by it; no lines when every benchmark has one version."""
    src = tables.get("sources")
    if src is None or not len(src) or "transform_version" not in src.columns:
        return "", []
    seen: dict[str, dict[str, dict[str, None]]] = {}  # benchmark -> version -> "label (conditions)"
    for row in src.itertuples():
        versions = [v for v in str(row.transform_version or "").split(",") if v.strip() and v.strip() != "nan"]
        for benchmark in str(row.benchmark).split(","):
            for version in versions:
                runs = seen.setdefault(benchmark, {}).setdefault(version.strip(), {})
                runs[f"{row.model} ({row.conditions})"] = None
    lines = [
        f"{benchmark}: "
        + "; ".join(f"version {v}: {', '.join(runs)}" for v, runs in sorted(by.items(), key=lambda kv: kv[0]))
        for benchmark, by in seen.items()
        if len(by) > 1
    ]
    title = (
        "Runs whose videos were built by different transform versions (vdg's perturbations changed between them, "
        "so their conditions are not like for like; rebuild with `vdg materialize` and rerun the older runs):"
    )
    return title, lines


#: The first screen's notes, in order: (title, lines) from the tables; a note without lines is not shown.
FIRST_SCREEN_NOTES = (transform_version_lines, inferred_option_lines, question_set_lines, ci_method_lines)
#: Of those, the ones that warn (runs built by different transform versions); the others explain.
WARNING_NOTES = (transform_version_lines,)


FINDINGS_INTRO = (
    "In words, per model: each number is that of the table named in findings.csv, which also names the test or "
    "interval and the question set behind each sentence (the CIs are the tables' own)."
)


def findings_by_run(tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, list[str]]]:
    """(who: 'model on benchmark', its sentences: one claim each) per run of the ``findings`` table, in its order."""
    findings = _nonempty(tables, "findings")
    if findings is None:
        return []
    runs = findings.groupby(["model", "benchmark"], sort=False)["sentence"]
    return [(f"{model} on {benchmark}", [str(s) for s in sentences]) for (model, benchmark), sentences in runs]


def _findings_markdown(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    runs = findings_by_run(tables)
    if not runs:
        return []
    lines = ["## Findings", "", FINDINGS_INTRO, ""]
    for who, sentences in runs:
        lines += [f"**{who}**", "", *(f"- {sentence}" for sentence in sentences), ""]
    return lines


def _summary_markdown(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    summary = tables.get("summary")
    parts: list[str] = []
    if summary is not None and len(summary):
        sentence, _ = conventions(summary)
        n_flagged = int((summary["flags"].fillna("") != "").sum())
        parts += ["## Summary", "", " ".join(s for s in (_summary_intro(summary), sentence) if s), ""]
        if n_flagged:
            parts += [f"**{n_flagged} of {len(summary)} model runs have flags:**", ""]
            parts += [f"- {line}" for line in _summary_lines(summary)] + [""]
        elif not transform_version_lines(tables)[1]:
            parts += [
                "No flags: no condition above the unparsed threshold, every question answered, orig and black run, "
                "no table leaves a model out.",
                "",
            ]
        parts += [markdown_table(summary, display_columns(summary, SUMMARY_SHOWN)), ""]
        note = quantized_note(tables)
        if note:
            parts += [note, ""]
    elif summary is not None and skip_reason(summary):
        parts += ["## Summary", "", f"The summary was skipped: {skip_reason(summary)}", ""]
    for note_lines in FIRST_SCREEN_NOTES:
        title, lines_of_note = note_lines(tables)
        if lines_of_note:
            parts += [f"**{title}**", "", *(f"- {line}" for line in lines_of_note), ""]
    lines = _skip_lines(tables)
    if lines:
        parts += ["**Not computed** (those tables are written with the header only, or without the model):", ""]
        parts += [f"- {line}" for line in lines] + [""]
    return parts


def _sources_markdown(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    src = _nonempty(tables, "sources")
    if src is None:
        return []
    parts = ["## Inputs", ""]
    plain = src[src["kind"] == PLAIN_RUN_KIND]
    from_lmms_eval = src["kind"].astype(str).map(harness_of) == "lmms-eval"
    logs = src[from_lmms_eval & (src["kind"] != PLAIN_RUN_KIND)]
    preds = src[~from_lmms_eval]  # other harnesses' prediction files, VLMEvalKit's among them
    if len(logs):
        parts += [
            f"{len(logs)} lmms-eval samples logs ({int(logs['n_records'].sum())} records), read from vdg's own record.",
            "",
        ]
    if len(plain):
        parts += [
            "Orig from plain runs of the benchmark's base task (`lmms-eval --tasks <task>`): the base task's prompt, "
            "which is vdg's orig prompt; each reply re-parsed by vdg and matched to its question.",
            "",
            markdown_table(plain, ["file", "model", "benchmark", "n_records"]),
            "",
        ]
    if len(preds):
        parts += [
            "Prediction files: the fields read as question id and video id, and where the option counts came from.",
            "",
            markdown_table(
                preds,
                [
                    "file",
                    "kind",
                    "model",
                    "conditions",
                    "n_records",
                    "question_id_field",
                    "video_id_field",
                    "n_options_source",
                ],
            ),
            "",
        ]
    return parts


def _nonempty(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame | None:
    table = tables.get(name)
    return table if table is not None and len(table) else None


class _Layout(NamedTuple):
    """A rendered report but for its plots, which go in at ``at`` (laid out before the plots are drawn)."""

    parts: list[str]
    at: int
    toc: list[tuple[str, str]]
    toc_at: int


def render_markdown(tables: Mapping[str, pd.DataFrame], plots: Sequence[Path] = ()) -> str:
    """report.md: the headline tables (those present and non-empty), coverage, then an index of all tables."""
    return markdown_with_plots(markdown_layout(tables), plots)


def markdown_with_plots(layout: _Layout, plots: Sequence[Path]) -> str:
    shown = ["## Plots", "", *(f"![{p.stem}](plots/{p.name})" for p in plots), ""] if plots else []
    return "\n".join(with_contents(layout.parts[: layout.at] + shown + layout.parts[layout.at :]))


def markdown_anchor(title: str) -> str:
    """The anchor GitHub and most markdown viewers give a heading: lower case, punctuation dropped, spaces as -."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def with_contents(parts: list[str]) -> list[str]:
    """``parts`` with a line of links to every other section at the end of At a glance (the first screen's last
    line; ``glance.terminal_lines`` leaves it out of the terminal)."""
    headings = [p[3:] for p in parts if p.startswith("## ") and "\n" not in p]
    if "At a glance" not in headings:
        return parts
    after = parts.index("## At a glance") + 1
    end = next((i for i in range(after, len(parts)) if parts[i].startswith("## ")), len(parts))
    links = " · ".join(f"[{h}](#{markdown_anchor(h)})" for h in headings if h != "At a glance")
    return [*parts[:end], f"{CONTENTS_MARK} {links}", "", *parts[end:]] if links else parts


def markdown_layout(tables: Mapping[str, pd.DataFrame]) -> _Layout:
    info = _analysis_info()
    parts = ["# vdg report", ""]
    parts += glance_markdown(tables)
    parts += _findings_markdown(tables)
    parts += _summary_markdown(tables)
    group = ""
    for section in HEADLINE:
        picked = section.pick(tables)
        if picked is not None:
            if section.group and section.group != group:
                parts += [f"## {section.group}", "", GROUPS.get(section.group, ""), ""]
            group = section.group
            parts += _section_markdown(section, *picked, info)
    cov = _nonempty(tables, "coverage")
    if cov is not None:
        parts += _coverage_markdown(cov)
        lines = _skip_lines(tables)
        if lines:
            parts += ["**Not computed:** " + "; ".join(lines), ""]
    parts += _sources_markdown(tables)
    at = len(parts)
    listed = [(name, table) for name, table in tables.items()]
    if listed:
        parts += ["## All tables", "", "Every table is written as `<name>.csv` and in report.json.", ""]
        parts += [
            f"- `{name}.csv` ({len(table)} rows): {info.get(name, ('', {}))[0]}".rstrip(": ")
            + (f" **Skipped:** {skip_reason(table)}" if skip_reason(table) else "")
            for name, table in listed
        ]
        parts += [""]
    return _Layout(parts, at, [], 0)


# ------------------------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:84rem;
padding:0 1rem;color:#1d1d1f;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
p.note{color:#555;font-size:.9rem}
.wrap{overflow-x:auto}
table{border-collapse:collapse;font-size:.82rem;margin:.5rem 0}
th,td{border:1px solid #d0d0d0;padding:.2rem .45rem;text-align:right;white-space:nowrap}
th{background:#f3f3f3;position:sticky;top:0}
td.t,th.t{text-align:left}
tr:nth-child(even) td{background:#fafafa}
tr.overall td{font-weight:600}
.flag{color:#a40000;font-weight:600}
p.head{font-weight:600}
details{margin:.3rem 0 .8rem}summary{cursor:pointer;color:#333;font-size:.9rem}
img{max-width:100%;border:1px solid #eee;margin:.4rem 0}
nav ul{columns:3;font-size:.9rem}
code{background:#f3f3f3;padding:0 .2rem}
"""


def _html_table(table: pd.DataFrame, columns: Sequence[str] | None = None, merge_ci: bool = False) -> str:
    shown = formatted_cells(table, columns)
    if merge_ci:
        shown = nonblank(merge_interval_columns(shown, table))
    task = table["task_type"].tolist() if "task_type" in table.columns else [None] * len(table)
    return html_table(
        list(shown),
        shown_rows(shown, len(table)),
        text_columns=[c for c in shown if is_text(table, c)],
        row_classes=["overall" if kind == "Overall" else "" for kind in task],
    )


def _html_section(
    name: str,
    title: str,
    intro: str,
    table: pd.DataFrame,
    columns: Sequence[str] | None,
    anchor: str = "",
    level: int = 2,
    collapsed: bool = False,
) -> str:
    """A section: its heading, its sentence, its table (``collapsed``: inside ``<details>``, opened on a click)."""
    sentence, _ = conventions(table)
    parts = [f'<h{level} id="{html.escape(anchor or name)}">{html.escape(title)}</h{level}>']
    text = " ".join(s for s in (intro, sentence) if s)
    if text:
        parts.append(f"<p>{html.escape(text)}</p>")
    shown = table
    if len(table) > HTML_MAX_ROWS:
        shown = table.iloc[:HTML_MAX_ROWS]
        parts.append(
            f'<p class="note">First {HTML_MAX_ROWS} of {len(table)} rows; every row is in '
            f"<code>{html.escape(name)}.csv</code> and report.json.</p>"
        )
    table_html = _html_table(shown, columns, merge_ci=columns is not None)
    if collapsed:
        rows = f"{len(table)} row{'s' if len(table) != 1 else ''}"
        table_html = f"<details><summary>The table ({rows})</summary>\n{table_html}\n</details>"
    parts.append(table_html)
    parts.append(f'<p class="note">File: <code>{html.escape(name)}.csv</code></p>')
    return "\n".join(parts)


def _group_anchor(group: str) -> str:
    return "group-" + "-".join(group.lower().split())


def render_html(tables: Mapping[str, pd.DataFrame], plots: Sequence[Path] = (), title: str = "vdg report") -> str:
    """report.html: headline tables, coverage, plots, then every other table; self-contained, no script."""
    return html_with_plots(html_layout(tables), plots, title)


def _figure(path: Path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    alt = html.escape(Path(path).stem)
    return f'<figure><img alt="{alt}" src="data:image/png;base64,{data}"><figcaption>{alt}</figcaption></figure>'


def _section_index(sections: Sequence[str], anchor: str) -> int | None:
    """The index of the section whose heading has id ``anchor``."""
    opening = re.compile(rf'^<h[23] id="{re.escape(html.escape(anchor))}">')
    return next((i for i, section in enumerate(sections) if opening.match(section)), None)


def html_with_plots(layout: _Layout, plots: Sequence[Path], title: str = "vdg report") -> str:
    """The page: each figure right after the section of the table it illustrates (``plots.PLOT_BESIDE``), any other
    in a Plots section where the layout keeps one."""
    sections, toc = list(layout.parts), list(layout.toc)
    placed: dict[int, list[str]] = {}
    rest = []
    for p in plots:
        at = _section_index(sections, PLOT_BESIDE.get(Path(p).stem, ""))
        if at is None:
            rest.append(_figure(p))
        else:
            placed.setdefault(at, []).append(_figure(p))
    for at in sorted(placed, reverse=True):
        sections[at] = sections[at] + "\n" + "\n".join(placed[at])
    if rest:
        sections.insert(layout.at, '<h2 id="plots">Plots</h2>\n' + "\n".join(rest))
        toc.insert(layout.toc_at, ("plots", "Plots"))
    nav = "".join(f'<li><a href="#{html.escape(a)}">{html.escape(t)}</a></li>' for a, t in toc)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>\n"
        f"<h1>{html.escape(title)}</h1>\n"
        # Collapsed: the first screen is At a glance, not a list of every section.
        f'<details class="contents"><summary>Contents: {len(toc)} sections</summary>'
        f"<nav><ul>{nav}</ul></nav></details>\n" + "\n".join(sections) + "\n</body></html>\n"
    )


def html_layout(tables: Mapping[str, pd.DataFrame]) -> _Layout:
    info = _analysis_info()
    sections: list[str] = []
    toc: list[tuple[str, str]] = []
    done: set[str] = set()

    def add(
        name: str, title_text: str, intro: str, table: pd.DataFrame, columns: Sequence[str] | None, level: int = 2
    ) -> None:
        anchor = name if name not in {a for a, _ in toc} else f"{name}-all"
        title_text += " (all rows)" if anchor != name else ""
        reason = skip_reason(table)
        h = f"h{level}"
        if len(table):
            sections.append(_html_section(name, title_text, intro, table, columns, anchor, level, name != "summary"))
        elif reason:
            sections.append(
                f'<{h} id="{html.escape(anchor)}">{html.escape(title_text)}</{h}>\n'
                f'<p>{html.escape(intro)}</p>\n<p class="flag">Skipped: {html.escape(reason)} '
                f"(<code>{html.escape(name)}.csv</code> has the header only.)</p>"
            )
        else:
            sections.append(
                f'<{h} id="{html.escape(anchor)}">{html.escape(title_text)}</{h}>\n'
                f'<p class="note">{html.escape(intro)} No rows: the data lack what this table needs '
                f"(<code>{html.escape(name)}.csv</code> has the header only).</p>"
            )
        toc.append((anchor, title_text))

    def bullets(title_text: str, lines: Sequence[str], warning: bool = True) -> str:
        """A titled list; styled as a warning (``.flag``) only when it is one (flags, what was not computed)."""
        items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
        kind = "flag" if warning else "head"
        return f'<p class="{kind}">{html.escape(title_text)}</p><ul>{items}</ul>' if lines else ""

    first_screen = glance_html(tables)
    if first_screen:
        sections.append(first_screen)
        toc.append(("at-a-glance", "At a glance"))
    runs = findings_by_run(tables)
    if runs:
        sections.append(
            '<h2 id="findings">Findings</h2>\n'
            f'<p class="note">{html.escape(FINDINGS_INTRO)}</p>\n'
            + "".join(
                f"<p><b>{html.escape(who)}</b></p><ul>{''.join(f'<li>{html.escape(s)}</li>' for s in sentences)}</ul>"
                for who, sentences in runs
            )
        )
        toc.append(("findings", "Findings"))
    summary = tables.get("summary")
    skip_lines = _skip_lines(tables)
    if summary is not None and len(summary):
        flagged = _summary_lines(summary)
        add("summary", "Summary", _summary_intro(summary), summary, display_columns(summary, SUMMARY_SHOWN))
        note = quantized_note(tables)
        sections.append(
            bullets(f"{len(flagged)} of {len(summary)} model runs have flags:", flagged)
            + (f'<p class="flag">{html.escape(note)}</p>' if note else "")
            + bullets("Not computed (header-only tables, or tables without the model):", skip_lines)
        )
        done.add("summary")
    elif skip_lines:
        sections.append('<h2 id="not-computed">Not computed</h2>\n' + bullets("Not computed:", skip_lines))
        toc.append(("not-computed", "Not computed"))
    for note_lines in FIRST_SCREEN_NOTES:
        title, lines_of_note = note_lines(tables)
        if lines_of_note:
            sections.append(bullets(title, lines_of_note, warning=note_lines in WARNING_NOTES))

    group = ""
    for section in HEADLINE:
        picked = section.pick(tables)
        if picked is None:
            continue
        name, rows = picked
        if section.group and section.group != group:
            anchor = _group_anchor(section.group)
            sections.append(
                f'<h2 id="{html.escape(anchor)}">{html.escape(section.group)}</h2>\n'
                f"<p>{html.escape(GROUPS.get(section.group, ''))}</p>"
            )
            toc.append((anchor, section.group))
        group = section.group
        columns = display_columns(rows, _section_columns(section, rows))
        add(name, section.title, _intro(section, name, rows, info), rows, columns, 3 if section.group else 2)
        if len(rows) == len(tables[name]):
            done.add(name)
    if _nonempty(tables, "coverage") is not None:
        add("coverage", "Coverage", _COVERAGE_INTRO, tables["coverage"], None)
        sections.append(bullets("Not computed:", skip_lines))
        done.add("coverage")
    at, toc_at = len(sections), len(toc)
    # "plots" is reserved while the remaining anchors are chosen (so the layout does not depend on whether
    # plots come): a table named "plots" would be anchored "plots-all" even in a report without plots.
    toc.append(("plots", "Plots"))
    for name, table in tables.items():
        if name not in done:
            add(name, name, info.get(name, ("", {}))[0], table, None)
    toc.pop(toc_at)
    return _Layout(sections, at, toc, toc_at)


# ------------------------------------------------------------------------------------------- JSON


def json_value(value: Any) -> Any:
    """A cell as JSON: NaN/NA -> None, +/-inf -> "inf"/"-inf", numpy scalars -> Python."""
    return json_ready(value, missing=(pd.NA, pd.NaT))


def _numeric(values: pd.Series) -> bool:
    """Whether ``values.tolist()`` holds Python bools, ints and floats, NaN or NA where missing."""
    masked = (pd.arrays.IntegerArray, pd.arrays.FloatingArray, pd.arrays.BooleanArray)
    return values.dtype.kind in "biuf" and (isinstance(values.dtype, np.dtype) or isinstance(values.array, masked))


def _json_column(values: pd.Series) -> list[Any]:
    """``json_value`` of each cell, converting only the cells that need it: in a numeric column the missing and
    infinite ones, elsewhere all but the strings."""
    cells = values.tolist()
    if _numeric(values):
        for i in np.flatnonzero(~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))).tolist():
            cells[i] = json_value(cells[i])
        return cells
    return [v if type(v) is str else json_value(v) for v in cells]


def table_records(table: pd.DataFrame) -> list[dict[str, Any]]:
    columns = [str(c) for c in table.columns]
    values = [_json_column(table[c]) for c in table.columns]
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)] if len(table) else []


def options_dict(options: ReportSettings | None) -> dict[str, Any] | None:
    if options is None:
        return None
    return {f.name: json_value(getattr(options, f.name)) for f in dataclasses.fields(options)}


def render_json(
    tables: Mapping[str, pd.DataFrame], options: ReportSettings | None = None, inputs: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """report.json as a dict (see the module docstring)."""
    info = _analysis_info()
    files = table_records(tables["sources"]) if "sources" in tables else []
    given = dict(inputs) if inputs is not None else None
    if files:
        given = {**(given or {}), "files": files}
    out: dict[str, Any] = {
        "format": JSON_FORMAT,
        "options": options_dict(options),
        "inputs": json_value(redact_value(given)) if given is not None else None,
        "summary": table_records(tables["summary"]) if "summary" in tables else [],
        "skipped": table_records(tables["skipped"]) if "skipped" in tables else [],
        "tables": {},
    }
    for name, table in tables.items():
        description, columns = info.get(name, ("", {c: "" for c in table.columns}))
        out["tables"][name] = {
            "description": description,
            "columns": {str(c): columns.get(c, "") for c in table.columns},
            "skipped": skip_reason(table),
            "n_rows": len(table),
            "rows": table_records(table),
        }
    return out
