"""The report's first screen: per benchmark, one compact headline table and a task type x model grid of VDG.

The headline reads the ``summary`` table (accuracy with the video, the Overall VDG with its CI, its tier and how
many flags the run has, linked to them); the grid reads ``tiers``' rows of one model (each task type's VDG and its
tier, from the CI). Both are views of tables the report writes anyway: nothing here computes a number.
``terminal_lines`` is what ``vdg report`` prints: this first screen and the Findings, cut to a terminal's page.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import pandas as pd
from tabulate import tabulate

from postprocess.rendering.formatting import format_value, html_table, markdown_cell

OVERALL = "Overall"

#: How report.md's line of links to its sections starts (``pages.with_contents``); not for the terminal.
CONTENTS_MARK = "**Contents:**"

#: The most lines ``terminal_lines`` gives (the report's path follows them).
TERMINAL_LINES = 38


def glance_intro(level: str) -> str:
    """The sentence above the first screen, for CIs at ``level`` (``"95%"``)."""
    return (
        "Per model: accuracy with the video, the Visual Dependency Gap (VDG = accuracy with the video - accuracy with "
        f"a black screen of the same length, on the same questions) with its {level} CI, its tier and how many flags "
        "concern the VDG (every flag is listed under Summary). Below, each task type's VDG and tier per model: which "
        "task types need the video."
    )


def ci_level_text(summary: pd.DataFrame) -> str:
    """The summary's CI level as text (``95%``; several joined by ``/``)."""
    levels = pd.to_numeric(summary.get("ci_level", pd.Series(dtype=float)), errors="coerce").dropna().unique()
    return "/".join(f"{100 * level:g}%" for level in sorted(levels)) if len(levels) else "95%"


def _short_tier(tier: object) -> str:
    """A tier without its reason: ``mid/low (CI straddles 0.10)`` -> ``mid/low``."""
    return str(tier).split(" (", 1)[0] if isinstance(tier, str) else ""


def _vdg_with_ci(vdg: object, low: object, high: object) -> str:
    shown = format_value("vdg", vdg)
    if not shown:
        return ""
    low_text, high_text = format_value("vdg", low), format_value("vdg", high)
    return f"{shown} [{low_text}, {high_text}]" if low_text and high_text else shown


def headline(summary: pd.DataFrame, benchmark: str) -> pd.DataFrame:
    """The headline rows of ``benchmark`` as text: model, accuracy, VDG [CI], tier, flags (how many of those about
    the VDG: ``headline_flags``); a column the summary lacks is blank."""
    rows = summary[summary["benchmark"] == benchmark]
    rows = rows.reindex(columns=list(dict.fromkeys([*rows.columns, "acc_orig", "vdg", "ci_low", "ci_high", "tier"])))
    shown = "headline_flags" if "headline_flags" in rows else "flags"  # those about the VDG (summary's docstring)
    flags = rows[shown].fillna("").astype(str) if shown in rows else pd.Series("", index=rows.index)
    return pd.DataFrame(
        {
            "model": rows["model"].astype(str),
            "accuracy": [format_value("acc_orig", v) for v in rows["acc_orig"]],
            f"VDG [{ci_level_text(summary)} CI]": [
                _vdg_with_ci(v, lo, hi) for v, lo, hi in zip(rows["vdg"], rows["ci_low"], rows["ci_high"], strict=True)
            ],
            "tier": [_short_tier(t) for t in rows["tier"]],
            "flags": [str(len(f.split(","))) if f else "" for f in flags],
        }
    )


def grid(tiers: pd.DataFrame, benchmark: str, models: Sequence[str]) -> pd.DataFrame:
    """Task type x model, each cell the task type's VDG and short tier (``+0.180 mid/low``), Overall last; blank where
    the model has no row for the task type."""
    own = tiers[(tiers["benchmark"] == benchmark) & (tiers["n_models"] == 1) & tiers["model"].isin(models)]
    cells = {
        (str(r.task_type), str(r.model)): f"{format_value('vdg', r.vdg)} {_short_tier(r.tier)}".strip()
        for r in own.itertuples()
    }
    task_types = sorted({t for t, _ in cells if t != OVERALL}) + (
        [OVERALL] if any(t == OVERALL for t, _ in cells) else []
    )
    return pd.DataFrame(
        {"task type": task_types, **{m: [cells.get((t, m), "") for t in task_types] for m in models}}, dtype=object
    )


def glance(tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, pd.DataFrame, pd.DataFrame]]:
    """(benchmark, headline, grid) per benchmark of the ``summary`` table, in its order."""
    summary = tables.get("summary")
    if summary is None or not len(summary):
        return []
    tiers = tables.get("tiers")
    out = []
    for benchmark in dict.fromkeys(summary["benchmark"].astype(str)):
        head = headline(summary, benchmark)
        by_type = (
            grid(tiers, benchmark, head["model"].tolist())
            if tiers is not None and len(tiers) and "n_models" in tiers
            else pd.DataFrame()
        )
        out.append((benchmark, head, by_type))
    return out


def _markdown(table: pd.DataFrame) -> str:
    align = ["left"] + [
        "right" if c in ("accuracy", "flags") or c.startswith("VDG") else "left" for c in table.columns[1:]
    ]
    rows = [[markdown_cell(str(v)) for v in row] for row in table.values.tolist()]
    headers = [markdown_cell(str(c)) for c in table.columns]
    return tabulate(rows, headers=headers, tablefmt="pipe", colalign=align, disable_numparse=True)


def glance_markdown(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """The first screen of report.md (no lines when there is no summary)."""
    blocks = glance(tables)
    if not blocks:
        return []
    parts = ["## At a glance", "", glance_intro(ci_level_text(tables["summary"])), ""]
    for benchmark, head, by_type in blocks:
        parts += [f"### {markdown_cell(benchmark)}", "", _markdown(head), ""]
        if len(by_type):
            parts += [_markdown(by_type), ""]
    return parts


def _html_table(table: pd.DataFrame, flags_link: bool = False) -> str:
    return html_table(
        [str(c) for c in table.columns],
        [[str(v) for v in row] for row in table.itertuples(index=False)],
        text_columns=("model", "task type", "tier"),
        links={"flags": "summary"} if flags_link else None,
    )


def glance_html(tables: Mapping[str, pd.DataFrame]) -> str:
    """The first screen of report.html ('' when there is no summary)."""
    blocks = glance(tables)
    if not blocks:
        return ""
    parts = [
        '<h2 id="at-a-glance">At a glance</h2>',
        f"<p>{html.escape(glance_intro(ci_level_text(tables['summary'])))}</p>",
    ]
    for benchmark, head, by_type in blocks:
        parts += [f"<h3>{html.escape(benchmark)}</h3>", _html_table(head, flags_link=True)]
        if len(by_type):
            parts.append(_html_table(by_type))
    return "\n".join(parts)


#: The most lines of "Not computed" the terminal shows (the rest are counted).
NOT_COMPUTED_LINES = 6


def _section_lines(lines: Sequence[str], title: str) -> list[str]:
    """The lines of report.md's section ``## title`` (its contents line left out), trailing blanks dropped."""
    out: list[str] = []
    keep = False
    for line in lines:
        if line.startswith("## "):
            keep = line == f"## {title}"
        if keep and not line.startswith(CONTENTS_MARK):
            out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


def _headlines_only(glance_lines: Sequence[str]) -> list[str]:
    """At a glance without its intro and grids: the heading, then each benchmark's heading and headline table."""
    out = list(glance_lines[:1])
    table = 0
    for previous, line in zip(["", *glance_lines], glance_lines, strict=False):
        if line.startswith("### "):
            out += ["", line]
            table = 0
        elif line.startswith("|"):
            table += not previous.startswith("|")
            if table == 1:
                out.append(line)
    return out


def _findings_blocks(findings: Sequence[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(the lines before the first run, [(the run's bold line, its sentence lines)])."""
    head: list[str] = []
    blocks: list[tuple[str, list[str]]] = []
    for line in findings:
        if line.startswith("**") and line.endswith("**"):
            blocks.append((line, []))
        elif blocks and line.startswith("- "):
            blocks[-1][1].append(line)
        elif not blocks and line.strip() and not line.startswith("## "):
            head.append(line)
    return head, blocks


def _findings_within(findings: Sequence[str], room: int) -> list[str]:
    """The Findings in at most ``room`` lines: every run's first sentences (its Overall VDG first), as many per run as
    fit, the same number for each; where not even one each fits under its run's name, one line per run (name: first
    sentence), as many runs as fit."""
    if len(findings) <= room:
        return list(findings)
    _, blocks = _findings_blocks(findings)
    most = max((len(sentences) for _, sentences in blocks), default=0)
    for per_run in range(most, 0, -1):
        lines = ["## Findings"]
        for who, sentences in blocks:
            lines += [who, *sentences[:per_run]]
        if len(lines) <= room:
            return lines
    one_line = [f"- {who.strip('*')}: {sentences[0][2:]}" for who, sentences in blocks if sentences]
    return ["## Findings", *one_line][:room]


def terminal_lines(markdown: str, limit: int = TERMINAL_LINES) -> list[str]:
    """What ``vdg report`` prints of ``markdown`` (report.md), at most ``limit`` lines: the tables it could not compute
    (first: they are what a reader must not miss), its first screen and its Findings. Where they do not fit, the first
    screen keeps each benchmark's headline table (not the task-type grid) and the Findings keep a third of the lines
    at least, each run's first sentences; the last line then says how many more lines report.md's sections hold."""
    lines = markdown.splitlines()
    skipped = list(dict.fromkeys(line for line in lines if line.startswith("- ") and " was skipped: " in line))
    not_computed: list[str] = []
    if skipped:
        shown = skipped[:NOT_COMPUTED_LINES]
        more = [f"- and {len(skipped) - len(shown)} more (report.md)"] if len(skipped) > len(shown) else []
        not_computed = ["Not computed:", *shown, *more, ""]
    first_screen, findings = _section_lines(lines, "At a glance"), _section_lines(lines, "Findings")
    whole = [*not_computed, *first_screen, *([""] if first_screen and findings else []), *findings]
    if len(whole) <= limit:
        return whole
    total = len(whole)
    if not findings:
        return [*whole[: limit - 1], f"... report.md holds {total - limit + 1} more lines of these sections"]
    headlines = _headlines_only(first_screen)
    room = limit - 1 - len(not_computed)  # one line says what was left out
    findings_room = max(min(len(findings), room // 3), room - len(headlines) - 1) if findings else 0
    kept_findings = _findings_within(findings, findings_room)
    kept_head = headlines[: max(0, room - len(kept_findings) - (1 if kept_findings else 0))]
    shown = [*not_computed, *kept_head, *([""] if kept_head and kept_findings else []), *kept_findings]
    return [*shown, f"... report.md holds {total - len(shown)} more lines of these sections"]
