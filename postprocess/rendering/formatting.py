"""How the report shows a value: the conventions stated above a table, number formats, markdown tables."""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tabulate import tabulate

#: Version of the report.json layout.


# ------------------------------------------------------------------------------------ conventions

#: Columns that state a convention rather than a result. When constant over a table they are
#: stated in the sentence above it instead of repeated in every row.
CONVENTION_COLUMNS: tuple[str, ...] = (
    "missing_policy",
    "question_rule",
    "ci_level",
    "ci_method",
    "n_resamples",
    "resample_unit",
    "stability_resamples",
    "alpha",
    "equivalence_margin",
    "margin",
    "correction",
    "p_adjust",
    "adjust",
    "test",
    "alternative",
    "method",
    "temporal_definition",
    "tier_high",
    "tier_low",
    "group_by",
    "reference",
    "baseline",
    "convention",
    "seed",
    "scale",
)


#: ``ci_method`` values in words.
CI_METHODS: dict[str, str] = {
    "tango score": "Tango's score interval for a paired difference of proportions",
    "tango score (design effect)": "Tango's score interval with its variance scaled by the video design effect",
    "exact": "exact percentile bootstrap (the bootstrap distribution in closed form, no resampling)",
    "monte carlo": "Monte Carlo percentile bootstrap",
}


def _phrase(column: str, value: Any) -> str:
    """One convention in words."""
    if column == "missing_policy":
        if value == "exclude":
            return "a question with an error (no answer) in a compared condition is dropped from both arms"
        if value == "incorrect":
            return "an error (no answer) is scored wrong"
    if column == "ci_level" and isinstance(value, (int, float)):
        return f"{value:.0%} confidence intervals"
    if column == "question_rule":
        return f"questions compared: {value}"
    if column == "ci_method" and isinstance(value, str) and value:
        return " and ".join(CI_METHODS.get(part, part) for part in value.split(" + "))
    if column == "n_resamples" and _is_number(value):
        return f"percentile bootstrap with {int(value)} resamples" if value else ""
    if column == "stability_resamples" and _is_number(value):
        return f"stability over {int(value)} bootstrap resamples"
    if column == "resample_unit":
        return f"CI unit: {value}"
    if column == "alpha":
        return f"significance level {value:g}" if _is_number(value) else f"alpha = {value}"
    if column == "temporal_definition":
        return f"temporal = {value}"
    if column == "scale":
        if "correct when" in str(value):
            return f"on a {value}"
        return f"on a {value} (accuracies are mean scores)" if "graded" in str(value) else ""
    if _is_number(value):
        return f"{column} = {value:g}"
    return f"{column} = {value}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def conventions(table: pd.DataFrame) -> tuple[str, list[str]]:
    """(sentence stating the table's constant conventions, convention columns that vary by row)."""
    phrases, varying = [], []
    for column in CONVENTION_COLUMNS:
        if column not in table.columns or not len(table):
            continue
        values = table[column].dropna().unique()
        if len(values) == 1:
            value = values[0]
            phrase = _phrase(column, value.item() if isinstance(value, np.generic) else value)
            if phrase:
                phrases.append(phrase)
        elif len(values) > 1:
            varying.append(column)
    if varying:
        phrases.append("varies by row: " + ", ".join(f"`{c}`" for c in varying))
    sentence = ("Conventions: " + "; ".join(phrases) + ".") if phrases else ""
    return sentence, varying


# ------------------------------------------------------------------------------------- formatting

#: Differences shown with a sign.
SIGNED: frozenset[str] = frozenset(
    {"vdg", "ci_low", "ci_high", "spatial", "diversity", "temporal", "sampling", "diff", "delta", "gap"}
)


def is_pvalue(column: str) -> bool:
    """p-value columns: ``p``, ``p_*``, ``*_p``, ``*pvalue*``."""
    return column == "p" or column.startswith("p_") or column.endswith("_p") or "pvalue" in column


def brief_p(p: float) -> str:
    """A p-value as a terminal line reads it: ``<0.001`` below that, else three decimals (empty when missing)."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _is_count(column: str) -> bool:
    return column in {"n", "d", "c", "k", "b01", "b10"} or column.startswith("n_") or column.endswith("_n")


def _signed(column: str) -> bool:
    base = column.removesuffix("_ci_low").removesuffix("_ci_high")
    return base in SIGNED or base.startswith("vdg_") or base.endswith(("_vdg", "_diff", "_delta"))


def _float_format(column: str) -> Callable[[float], str]:
    """How a finite float of ``column`` reads."""
    if is_pvalue(column):
        return "{:.4g}".format
    decimals = "{:+.3f}".format if _signed(column) else "{:.3f}".format
    if _is_count(column):
        return lambda v: str(int(v)) if v.is_integer() else decimals(v)
    return decimals


def format_value(column: str, value: Any) -> str:
    """One cell as text: 3 decimals, p-values 4 significant digits, counts as integers."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return _float_format(column)(v)
    return str(value)


def _format_column(column: str, values: pd.Series) -> list[str]:
    """``format_value`` of each cell; a float column picks its format once."""
    cells = values.tolist()
    if not (isinstance(values.dtype, np.dtype) and values.dtype.kind == "f"):
        return [format_value(column, v) for v in cells]
    finite = _float_format(column)
    return [finite(v) if math.isfinite(v) else format_value(column, v) for v in cells]


#: A table as text: column -> its cells, in display order (plain lists: cheap to merge, filter and render).
Shown = dict[str, list[str]]


def formatted_cells(table: pd.DataFrame, columns: Sequence[str] | None = None) -> Shown:
    present = set(table.columns)
    cols = [c for c in (columns if columns is not None else table.columns) if c in present]
    return {c: _format_column(c, table[c]) for c in cols}


def format_table(table: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The table as strings, in ``columns`` (those present; default all)."""
    shown = formatted_cells(table, columns)
    return pd.DataFrame(shown, index=range(len(table)), columns=list(shown))


def _shown(frame: pd.DataFrame) -> Shown:
    return {c: frame[c].tolist() for c in frame.columns}


def merge_intervals(shown: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """``x``, ``x_ci_low``, ``x_ci_high`` -> one column ``x [95% CI]`` as ``+0.123 [+0.050, +0.200]``.

    A bare ``ci_low``/``ci_high`` pair belongs to the column just before ``ci_low``.
    """
    merged = merge_interval_columns(_shown(shown), table)
    return pd.DataFrame(merged, index=shown.index, columns=list(merged))


def merge_interval_columns(shown: Shown, table: pd.DataFrame) -> Shown:
    """``merge_intervals`` on a ``Shown`` table."""
    columns = list(table.columns)
    pairs: list[tuple[str, str, str]] = []
    for i, col in enumerate(columns):
        if col in ("ci_low",) and i > 0 and "ci_high" in columns:
            pairs.append((columns[i - 1], "ci_low", "ci_high"))
        elif f"{col}_ci_low" in columns and f"{col}_ci_high" in columns:
            pairs.append((col, f"{col}_ci_low", f"{col}_ci_high"))
    for value, low, high in pairs:
        if not {value, low, high} <= shown.keys():
            continue
        # the bounds read like their value: signed only when the value is (a bare ci_low is the value's)
        lows = _format_column(value, table[low])
        highs = _format_column(value, table[high])
        merged = [
            v if not v or not lo else f"{v} [{lo}, {hi}]" for v, lo, hi in zip(shown[value], lows, highs, strict=True)
        ]
        shown = {
            (f"{value} [CI]" if c == value else c): (merged if c == value else cells)
            for c, cells in shown.items()
            if c not in (low, high)
        }
    return shown


def drop_blank_columns(shown: pd.DataFrame) -> pd.DataFrame:
    """Columns empty in every shown row (rungs a model set did not run) are left out."""
    return shown[list(nonblank(_shown(shown)))]


def nonblank(shown: Shown) -> Shown:
    """``drop_blank_columns`` on a ``Shown`` table; one without rows keeps its header."""
    if not any(shown.values()):
        return shown
    return {c: cells for c, cells in shown.items() if any(cells)}


def markdown_cell(text: str) -> str:
    """A cell's text as one markdown table cell: a ``|`` escaped, line breaks as spaces."""
    return " ".join(str(text).replace("|", "\\|").splitlines())


def shown_rows(shown: Shown, n_rows: int) -> list[list[str]]:
    if not shown:
        return [[] for _ in range(n_rows)]
    return [[markdown_cell(cell) for cell in row] for row in zip(*shown.values(), strict=True)]


def is_text(table: pd.DataFrame, column: str) -> bool:
    return column in table.columns and not (
        pd.api.types.is_numeric_dtype(table[column]) and not pd.api.types.is_bool_dtype(table[column])
    )


def markdown_table(
    table: pd.DataFrame, columns: Sequence[str] | None = None, merge_ci: bool = True, drop_blank: bool = True
) -> str:
    shown = formatted_cells(table, columns)
    if merge_ci:
        shown = merge_interval_columns(shown, table)
    if drop_blank:
        shown = nonblank(shown)
    align = ["left" if is_text(table, c) else "right" for c in shown]
    # what DataFrame.to_markdown(index=False) calls, without building a frame of the text
    return tabulate(
        shown_rows(shown, len(table)), headers=list(shown), tablefmt="pipe", disable_numparse=True, colalign=align
    )


def display_columns(table: pd.DataFrame, preferred: Sequence[str] | None) -> list[str]:
    """Preferred columns (or all), minus the conventions stated in the sentence above."""
    _, varying = conventions(table)
    stated = {c for c in CONVENTION_COLUMNS if c in table.columns and c not in varying}
    base = list(preferred) if preferred else list(table.columns)
    cols = [c for c in base if c in table.columns and c not in stated]
    if preferred:
        cols += [c for c in varying if c not in cols]
    return cols


def html_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    text_columns: Collection[str] = (),
    row_classes: Sequence[str] | None = None,
    links: Mapping[str, str] | None = None,
) -> str:
    """An HTML table of cells already formatted as text, in a div that scrolls sideways where the page is narrower:
    the cells of ``text_columns`` left-aligned (class ``t``), row i of class ``row_classes[i]`` (none when blank), a
    non-blank cell of a column in ``links`` a link to that anchor. Every text is escaped here."""
    kinds = ["t" if c in text_columns else "" for c in columns]
    head = "".join(f'<th class="{k}">{html.escape(str(c))}</th>' for c, k in zip(columns, kinds, strict=True))
    body = []
    for i, row in enumerate(rows):
        cells = []
        for column, kind, value in zip(columns, kinds, row, strict=True):
            text = html.escape(str(value))
            if links and column in links and text:
                text = f'<a href="#{html.escape(links[column])}">{text}</a>'
            cells.append(f'<td class="{kind}">{text}</td>')
        row_class = row_classes[i] if row_classes is not None else ""
        attribute = f' class="{html.escape(row_class)}"' if row_class else ""
        body.append(f"<tr{attribute}>{''.join(cells)}</tr>")
    return f'<div class="wrap"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'
