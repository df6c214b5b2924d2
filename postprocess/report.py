"""Tables -> files (CSV, report.md, report.html, report.json, plots). Rendering only.

Every number comes from an analysis (``postprocess.analyses.ANALYSES``); this module formats,
orders and writes them. It knows a few headline tables by name (``HEADLINE``) and renders any
other table generically from its declared columns, so a new analysis appears in the HTML and JSON
reports without a change here, and an absent or empty table is simply skipped.

Files written by ``write_report(tables, out)``:

- ``<name>.csv`` per table (NaN as an empty cell, infinity as ``inf``); a skipped table (its
  analysis could not run on the data) has the header only
- ``report.md``: first the summary (per model: Overall VDG with CI, tier, every flag) and what was
  skipped, then the headline tables, each under a sentence stating its conventions; a group of
  sections (``Section.group``: the character-tracking tables) sits under one heading (``GROUPS``)
  with a sentence saying what the group asks. The open-ended section names its judge (an offline
  scorer is called what it is: token overlap, not an LLM judge); the ``judge`` column carries the
  label into the CSV and report.json too
- ``report.html``: one self-contained page (inline CSS, plots as base64 PNG, no script): the
  summary, then every table, headline first
- ``report.json``: ``{"format": ..., "options": {...}, "inputs": {..., "files": [...]}, "summary":
  [...], "skipped": [...], "tables": {name: {"description", "columns": {column: description},
  "skipped", "n_rows", "rows": [{column: value}]}}}``; NaN and missing values are ``null``, +/-
  infinity the strings ``"inf"`` / ``"-inf"``
- ``plots/*.png`` (see ``postprocess.plots``)

``write_report`` writes into a new folder beside ``out`` and moves it into place only when every
file is written, so ``out`` never holds a mix of two runs: a previous report there is replaced
whole, and a folder holding anything but report files is refused. ``compute_tables(frame,
options, out)`` keeps each CSV it computes in ``.<out>.partial`` beside ``out`` until then, so a
crash loses nothing.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import glob
import html
import math
import multiprocessing as mp
import os
import re
import shutil
import signal
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import orjson
import pandas as pd
from tabulate import tabulate

import postprocess.analyses as _analyses
from postprocess.analyses.base import Options, skip_reason
from postprocess.analyses.coverage import UNPARSED_FLAG
from postprocess.parallel import can_fork, cpus
from postprocess.plot_worker import BackgroundPlots
from postprocess.stats import json_ready

#: Version of the report.json layout.
JSON_FORMAT = "vdg-report/2"
#: Rows of one table shown in report.html (the CSV always has every row).
HTML_MAX_ROWS = 200
#: Rows of one table shown in report.md.
MD_MAX_ROWS = 120

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
)


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
    if column == "ci_method" and value == "exact":
        return "exact percentile bootstrap (the bootstrap distribution in closed form, no resampling)"
    if column == "ci_method":
        return f"{value} percentile bootstrap"
    if column == "n_resamples" and _is_number(value):
        return f"percentile bootstrap with {int(value)} resamples" if value else ""
    if column == "stability_resamples" and _is_number(value):
        return f"stability over {int(value)} bootstrap resamples"
    if column == "resample_unit":
        return f"resampling unit: {value}"
    if column == "alpha":
        return f"significance level {value:g}" if _is_number(value) else f"alpha = {value}"
    if column == "temporal_definition":
        return f"temporal = {value}"
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


def _formatted(table: pd.DataFrame, columns: Sequence[str] | None = None) -> Shown:
    present = set(table.columns)
    cols = [c for c in (columns if columns is not None else table.columns) if c in present]
    return {c: _format_column(c, table[c]) for c in cols}


def format_table(table: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The table as strings, in ``columns`` (those present; default all)."""
    shown = _formatted(table, columns)
    return pd.DataFrame(shown, index=range(len(table)), columns=list(shown))


def _shown(frame: pd.DataFrame) -> Shown:
    return {c: frame[c].tolist() for c in frame.columns}


def merge_intervals(shown: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """``x``, ``x_ci_low``, ``x_ci_high`` -> one column ``x [95% CI]`` as ``+0.123 [+0.050, +0.200]``.

    A bare ``ci_low``/``ci_high`` pair belongs to the column just before ``ci_low``.
    """
    merged = _merge_interval_columns(_shown(shown), table)
    return pd.DataFrame(merged, index=shown.index, columns=list(merged))


def _merge_interval_columns(shown: Shown, table: pd.DataFrame) -> Shown:
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
    return shown[list(_nonblank(_shown(shown)))]


def _nonblank(shown: Shown) -> Shown:
    """``drop_blank_columns`` on a ``Shown`` table; one without rows keeps its header."""
    if not any(shown.values()):
        return shown
    return {c: cells for c, cells in shown.items() if any(cells)}


def _rows(shown: Shown, n_rows: int) -> list[list[str]]:
    return [list(row) for row in zip(*shown.values(), strict=True)] if shown else [[] for _ in range(n_rows)]


def is_text(table: pd.DataFrame, column: str) -> bool:
    return column in table.columns and not (
        pd.api.types.is_numeric_dtype(table[column]) and not pd.api.types.is_bool_dtype(table[column])
    )


def markdown_table(
    table: pd.DataFrame, columns: Sequence[str] | None = None, merge_ci: bool = True, drop_blank: bool = True
) -> str:
    shown = _formatted(table, columns)
    if merge_ci:
        shown = _merge_interval_columns(shown, table)
    if drop_blank:
        shown = _nonblank(shown)
    align = ["left" if is_text(table, c) else "right" for c in shown]
    # what DataFrame.to_markdown(index=False) calls, without building a frame of the text
    return tabulate(
        _rows(shown, len(table)), headers=list(shown), tablefmt="pipe", disable_numparse=True, colalign=align
    )


def _display_columns(table: pd.DataFrame, preferred: Sequence[str] | None) -> list[str]:
    """Preferred columns (or all), minus the conventions stated in the sentence above."""
    _, varying = conventions(table)
    stated = {c for c in CONVENTION_COLUMNS if c in table.columns and c not in varying}
    base = list(preferred) if preferred else list(table.columns)
    cols = [c for c in base if c in table.columns and c not in stated]
    if preferred:
        cols += [c for c in varying if c not in cols]
    return cols


# ------------------------------------------------------------------------------ headline sections


@dataclass(frozen=True)
class Section:
    """A headline table of report.md: which table, its title, its columns and what it shows."""

    table: str
    title: str
    columns: tuple[str, ...] | Callable[[pd.DataFrame], Sequence[str]] = ()
    """Columns shown (those present, in this order), or a function of the rows giving them; empty: every
    non-convention column."""
    intro: str | Callable[[pd.DataFrame], str] = ""
    """What the table shows, before the conventions sentence; default: the analysis description."""
    filter: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    aliases: tuple[str, ...] = ()
    """Other table names this section renders when ``table`` is absent or empty (the first non-empty one)."""
    group: str = ""
    """The group heading (``GROUPS``) the section sits under, one level down; empty: a top-level section."""

    def pick(self, tables: Mapping[str, pd.DataFrame]) -> tuple[str, pd.DataFrame] | None:
        """(name, rows to show) of the first non-empty table among ``table`` and ``aliases``, or None."""
        for name in (self.table, *self.aliases):
            table = tables.get(name)
            if table is None or not len(table):
                continue
            rows = self.filter(table) if self.filter else table
            if len(rows):
                return name, rows
        return None


def _ladder_intro(table: pd.DataFrame) -> str:
    return (
        "Accuracy at each rung (black > single > shuffled > ordered > orig) on the questions answered under "
        "all of a model's rungs; spatial = single - black, diversity = shuffled - single, temporal = ordered - "
        "shuffled (orig - shuffled when there is no ordered rung, as the paper), sampling = orig - ordered. "
        "Rows with no delta (a model run on black and orig only) are omitted here; see ladder.csv."
    )


def _ladder_rows(table: pd.DataFrame) -> pd.DataFrame:
    deltas = [c for c in ("spatial", "diversity", "temporal", "sampling") if c in table.columns]
    return table[table[deltas].notna().any(axis=1)] if deltas else table


def _letters_columns(table: pd.DataFrame) -> list[str]:
    """The letters section's columns: predicted counts of the letters some answer or key uses."""

    def used(column: str) -> bool:
        return column in table.columns and bool((pd.to_numeric(table[column], errors="coerce").fillna(0) > 0).any())

    letters = [c for c in table.columns if c.startswith("pred_") and (used(c) or used(f"gt_{c[5:]}"))]
    return [
        *("model", "benchmark", "condition", "n", "n_letter", "n_unparsed"),
        *letters,
        *("top_pred", "top_pred_share", "p_pred", "p_gt", "accuracy", "chance", "expected_from_letters"),
        "letter_share",
    ]


def _overall_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["task_type"] == "Overall"] if "task_type" in table.columns else table


def _chance_intro(table: pd.DataFrame) -> str:
    return (
        _analyses.chance.blind_sentence(table)
        + " Per condition and task type: accuracy against chance (the mean of 1 / options), p_chance: exact "
        "one-sided test (binomial, or Poisson-binomial when option counts differ), p_holm: Holm over the task "
        "types and Overall of one model, benchmark and condition; above_chance_black: that task type is above "
        "chance without the video. Orig and black rows here; every condition is in above_chance.csv."
    )


def _orig_black_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["condition"].isin(["orig", "black"])] if "condition" in table.columns else table


# ------------------------------------------------------------------------------- character tracking

TRACKING = "Character tracking"
#: Group heading -> the sentence under it.
GROUPS: dict[str, str] = {
    TRACKING: "Is the score earned by following the named character through the video? Each table perturbs one "
    "thing and compares with orig on the same questions: text only (black), one frame per ground-truth outfit "
    "window (oracle), dialogue added (subtitles), the name replaced (nameswap), options removed (open), only the "
    "show and episode title (metadata), an abstain option (abstain), and the frame budget. Accuracy per condition "
    "(accuracy), the letters picked (letters) and whole episodes right (collective) are in their own tables.",
}

#: Shown for a judge label naming the offline scorer, wherever the label is shown.
OFFLINE_JUDGE_NOTE = "the offline scorer is deterministic token overlap, not an LLM judge"


def judge_labels(table: pd.DataFrame) -> list[str]:
    """The distinct judge labels of an open_ended table (its ``judge`` column, split on '; ')."""
    if "judge" not in table.columns:
        return []
    labels: list[str] = []
    for value in table["judge"].dropna().tolist():
        for label in str(value).split("; "):
            if label and label not in labels:
                labels.append(label)
    return labels


def _open_intro(table: pd.DataFrame) -> str:
    labels = judge_labels(table)
    judged = "; ".join(labels) if labels else "no judge label recorded"
    offline = any("offline" in label.lower() for label in labels)
    note = f" ({OFFLINE_JUDGE_NOTE})" if offline and not any("not an llm" in label.lower() for label in labels) else ""
    return (
        f"Judge: {judged}{note}. Options removed: each free-text answer is scored 0, 0.5 or 1 against the ground-truth "
        "text. mc_acc is orig multiple-choice accuracy on the n_mc questions that also have a judged answer; gap = "
        "open_score_mc - mc_acc on those questions (negative: the options were doing part of the work); "
        "fully_correct / half_correct: answers scored 1 / 0.5."
    )


TRACKING_SECTIONS: tuple[Section, ...] = (
    Section(
        "tracking_tests",
        "Perturbed conditions against orig",
        (
            "model",
            "benchmark",
            "comparison",
            "n",
            "n_excluded",
            "acc_a",
            "acc_a_ci_low",
            "acc_a_ci_high",
            "acc_b",
            "acc_b_ci_low",
            "acc_b_ci_high",
            "diff",
            "b01",
            "b10",
            "p_mcnemar",
            "cohen_h",
            "mean_spacing_s",
        ),
        "a is the first-named arm: orig for full_vs_text (b = black), else the perturbed condition (b = orig); "
        "b01 = questions a got wrong and b right, b10 the reverse; p_mcnemar: exact McNemar on b01 and b10; "
        "cohen_h = 2 asin(sqrt acc_a) - 2 asin(sqrt acc_b). A large full_vs_text gap says the video matters; an "
        "oracle row near orig says uniform frames already catch the outfit windows (mean_spacing_s: seconds between "
        "uniform frames); nameswap is scored against the original key.",
        group=TRACKING,
    ),
    Section(
        "metadata_chance",
        "Title only: accuracy against chance",
        ("model", "benchmark", "n", "correct", "acc", "ci_low", "ci_high", "chance", "n_options", "p_binomial"),
        "The model sees the show and episode title and the question, no video. Accuracy reliably above chance "
        "(p_binomial: exact binomial test against chance) means the answer is recoverable without watching: from "
        "memory of the show (contamination) or from the options.",
        group=TRACKING,
    ),
    Section(
        "name_swap",
        "Name-swap sensitivity",
        (
            "model",
            "benchmark",
            "split",
            "n",
            "n_excluded",
            "changed",
            "sensitivity",
            "ci_low",
            "ci_high",
            "acc_orig",
            "acc_swap",
        ),
        "A model that conditions on the name changes its letter when the name changes; a name-blind model never "
        "does. sensitivity = changed / n over the questions with a letter in both orig and nameswap; same / cross: "
        "the character replaced by one of the same / the other gender; acc_swap is scored against the original key.",
        group=TRACKING,
    ),
    Section(
        "name_swap_pairs",
        "Name-swap sensitivity by character",
        (
            "model",
            "benchmark",
            "character",
            "swap_to",
            "swap_gender",
            "n",
            "changed",
            "sensitivity",
            "ci_low",
            "ci_high",
        ),
        "Per original character and the character put in its place, most sensitive first: a pair with sensitivity "
        "near 0 is one the model does not tell apart by name.",
        group=TRACKING,
    ),
    Section(
        "open_ended",
        "Open-ended answers against multiple choice",
        (
            "model",
            "benchmark",
            "n_mc",
            "mc_acc",
            "n_open",
            "open_score",
            "open_score_mc",
            "gap",
            "fully_correct",
            "half_correct",
            "n_unjudged",
            "judge",
        ),
        _open_intro,
        group=TRACKING,
    ),
    Section(
        "abstention",
        "Abstention",
        (
            "model",
            "benchmark",
            "n",
            "abstained_added",
            "abstained_benchmark",
            "abstain_rate",
            "ci_low",
            "ci_high",
            "n_committed",
            "acc_committed",
            "n_orig",
            "acc_orig",
            "idk_rate_orig",
        ),
        "An option 'I cannot determine this from the video.' is added. abstained_added: answers picking it; "
        "abstained_benchmark: answers picking the benchmark's own 'I don't know' option; abstaining is never "
        "counted correct. acc_committed: accuracy on the answers that commit to an option; acc_orig and "
        "idk_rate_orig: the same questions in orig (how often it already said 'I don't know' there).",
        group=TRACKING,
    ),
    Section(
        "frame_budget",
        "Frame budget",
        (
            "model",
            "benchmark",
            "frames",
            "n",
            "acc_orig",
            "ci_low",
            "ci_high",
            "mean_spacing_s",
            "n_swap",
            "sensitivity",
            "sensitivity_ci_low",
            "sensitivity_ci_high",
        ),
        "One row per run with a known frame budget (frames per video, from its model settings), by budget: orig "
        "accuracy and name-swap sensitivity. Accuracy flat in the budget says more frames add nothing the model uses.",
        group=TRACKING,
    ),
)


HEADLINE: tuple[Section, ...] = (
    Section(
        "vdg",
        "Visual Dependency Gap by task type",
        (
            "model",
            "benchmark",
            "task_type",
            "n",
            "acc_orig",
            "acc_black",
            "vdg",
            "ci_low",
            "ci_high",
            "d",
            "c",
            "dc_ratio",
            "n_error",
            "n_unparsed",
        ),
        "VDG = correct(orig) - correct(black), per question, averaged over the n questions compared; "
        "CI: paired percentile bootstrap. d / c: questions right only with / only without the video "
        "(dc_ratio = d / c).",
    ),
    Section(
        "ladder",
        "Ladder",
        (
            "model",
            "benchmark",
            "task_type",
            "n",
            "acc_black",
            "acc_single",
            "acc_shuffled",
            "acc_ordered",
            "acc_orig",
            "spatial",
            "spatial_ci_low",
            "spatial_ci_high",
            "diversity",
            "diversity_ci_low",
            "diversity_ci_high",
            "temporal",
            "temporal_ci_low",
            "temporal_ci_high",
            "sampling",
            "sampling_ci_low",
            "sampling_ci_high",
        ),
        _ladder_intro,
        _ladder_rows,
    ),
    Section(
        "mcnemar",
        "McNemar tests between models",
        (
            "model_a",
            "model_b",
            "benchmark",
            "condition",
            "task_type",
            "n",
            "n_excluded",
            "acc_a",
            "acc_b",
            "diff",
            "diff_ci_low",
            "diff_ci_high",
            "b01",
            "b10",
            "p",
            "test",
            "p_cc",
            "p_holm",
            "family",
        ),
        "Each pair of models on each condition both ran, on the questions both answered: b01 = model_a wrong and "
        "model_b right, b10 the reverse; p: McNemar's test (exact binomial below 25 discordant pairs, 1 when "
        "b01 = b10, else the continuity-corrected chi-square p_cc); p_holm: p Holm-adjusted within its family "
        "(orig+black: every pair's orig and black tests of the benchmark; each other condition its own), so running "
        "CRF levels never changes an orig/black conclusion (mcnemar.csv has b00, b11 and the family size).",
    ),
    Section(
        "dissociation",
        "Dissociation: do two models differ with the video, without it, or both?",
        (
            "model_a",
            "model_b",
            "benchmark",
            "n",
            "n_excluded",
            "acc_a_orig",
            "acc_b_orig",
            "acc_a_black",
            "acc_b_black",
            "b01_orig",
            "b10_orig",
            "p_orig",
            "p_holm_orig",
            "b01_black",
            "b10_black",
            "p_black",
            "p_holm_black",
            "pattern",
            "interaction",
            "interaction_ci_low",
            "interaction_ci_high",
            "p_interaction",
            "p_holm_interaction",
            "dissociation",
            "p_tost_orig",
            "equivalent_orig",
            "share_black_p01",
            "share_pattern",
            "share_black_only_unadjusted",
        ),
        "McNemar on orig and on black for each pair of models on their shared question set (the same p and Holm "
        "family as the mcnemar table); pattern (descriptive): where each difference alone is significant after Holm; "
        "interaction: the mean per-question difference of differences (a_orig - b_orig) - (a_black - b_black) with "
        "its paired bootstrap CI and exact sign-flip p, Holm-adjusted over the benchmark's pairs; dissociation: a "
        "significant interaction with an 'orig only' or 'black only' pattern (a difference significant on one "
        "condition and not the other is not by itself evidence that the two differ); TOST: are the orig accuracies "
        "equivalent within the margin; share_pattern: how often bootstrap resamples of the questions give the same "
        "pattern; share_black_p01 and share_black_only_unadjusted: unadjusted events on the pair's own resamples (the "
        "paper's stability).",
    ),
    Section(
        "crf_flips",
        "Answer flips under compression (CRF)",
        (),
        "Per CRF level against orig on the same questions (Overall rows; per task type in the CSV): c_to_i = right "
        "at orig and wrong at the level, i_to_c the reverse, net = i_to_c - c_to_i; stable_pct = 100 * share with "
        "the same correctness.",
        _overall_rows,
        aliases=("flips",),
    ),
    Section(
        "sampling_sweep",
        "Sampling sweep",
        (
            "model",
            "benchmark",
            "setting",
            "n",
            "acc_orig",
            "acc_black",
            "vdg",
            "vdg_ci_low",
            "vdg_ci_high",
            "d",
            "c",
            "n_error",
            "acc_single",
            "acc_shuffled",
            "acc_ordered",
        ),
        "One row per sampling setting (frames:<N> frames per video, fps:<F> frames per second) of each model run at "
        "two or more (`vdg sweep --frames` / `--fps`): accuracy with (orig) and without (black) the video and VDG "
        "with its paired bootstrap CI, as the vdg table's Overall row of that run; acc_single / acc_shuffled / "
        "acc_ordered from the ladder table when run. A VDG flat across settings says how densely the video is "
        "sampled does not change how much the answers depend on it.",
    ),
    Section(
        "letters",
        "Answer-letter bias",
        _letters_columns,
        "Predicted-letter counts per condition (letters no question or answer uses are left out; all are in "
        "letters.csv); p_pred / p_gt: chi-square of the predicted / correct letters against uniform guessing among "
        "each question's options; chance: the mean of 1 / options; "
        "expected_from_letters: accuracy a question-blind answerer with these letter counts gets; letter_share: "
        "the share of the above-chance accuracy that letter alignment alone explains (meant for black).",
    ),
    Section(
        "above_chance",
        "Above chance, and what is answered without the video",
        (
            "model",
            "benchmark",
            "condition",
            "task_type",
            "n",
            "acc",
            "ci_low",
            "ci_high",
            "n_options",
            "chance",
            "p_chance",
            "p_holm",
            "above_chance",
            "above_chance_black",
        ),
        _chance_intro,
        _orig_black_rows,
    ),
    Section(
        "kappa",
        "Agreement between models (Cohen's kappa)",
        (
            "benchmark",
            "condition",
            "model_a",
            "model_b",
            "n",
            "both_right",
            "a_only",
            "b_only",
            "both_wrong",
            "p_observed",
            "p_expected",
            "kappa",
            "ci_low",
            "ci_high",
            "p_zero",
        ),
        "Per pair of models and condition, on correct / incorrect per question: kappa = (p_observed - p_expected) / "
        "(1 - p_expected); CI: asymptotic (Fleiss, Cohen & Everitt SE); p_zero: test of kappa = 0. Kappa near 0 "
        "means the two models are right on unrelated questions; near 1, on the same ones.",
    ),
    Section(
        "categories_by_task",
        "Is grounding task-dependent? Categories I-IV by task type",
        (),
        "Per model: test of independence of the outcome categories (I right only with the video, II both, III "
        "only without it, IV neither) and the task type, over the task types with at least min_stratum questions "
        "(smaller ones: too_small); p: the chi-square, or a Monte Carlo permutation p (p_method) when an expected "
        "count is below 5 (Cochran's rule); a small p_holm (Holm over the benchmark's models) says the share of "
        "grounded answers depends on the task type.",
    ),
    Section(
        "models_right",
        "How many models are right, against independent models",
        (),
        "On the questions every model has: how many of the M models answer right, under orig and under black, "
        "against the Poisson-binomial of their accuracies (what independent models would give). Excess at 0 and M "
        "means the models succeed and fail on the same questions.",
    ),
    Section(
        "models_right_transition",
        "Models right: from black to orig",
        ("benchmark", "n_models", "n", "right_black", "right_orig", "n_questions", "share_of_black"),
        "Questions by the number of models right without the video (right_black) and with it (right_orig); "
        "share_of_black: the share of the right_black row.",
    ),
    Section(
        "vdg_across",
        "VDG across benchmarks",
        (),
        "Each model's Overall VDG on two benchmarks and their difference; CI: percentile bootstrap with each "
        "benchmark's questions resampled independently (the same model on both; the questions differ).",
    ),
    Section(
        "letters_across",
        "Answer letters across benchmarks",
        (),
        "Per model and condition: chi-square test of homogeneity of the predicted letters on two benchmarks, "
        "over the letters of their shared option count; sets whose option counts differ, or that mix counts, are "
        "not compared (not_compared says why).",
    ),
    Section(
        "crf_vdg",
        "Compression flips against VDG",
        (),
        "Per model: Spearman correlation over task types between the answer flips summed over the CRF levels "
        "(and the flip rate) and the task type's VDG. Positive: the task types that need the video are also those "
        "compression breaks.",
    ),
    *TRACKING_SECTIONS,
)


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
    columns = _display_columns(rows, _section_columns(section, rows))
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
_SUMMARY_INTRO = (
    "Per model: the Overall VDG (acc_orig - acc_black on the questions both arms answered) with its paired "
    "bootstrap CI, its tier, and every flag; read the flags before the numbers."
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
    from postprocess.frame import QUANTIZED_MARK

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
    from postprocess.choices import RULE_INFERRED

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


def ci_method_lines(tables: Mapping[str, pd.DataFrame]) -> tuple[str, list[str]]:
    """The first screen's note on how the CIs were computed: the tables whose CIs are exact, and those resampled
    with their largest Monte Carlo standard error (tables with a ``ci_method`` column)."""
    exact, resampled = [], []
    for name, table in tables.items():
        if "ci_method" not in table.columns or not len(table):
            continue
        methods = set(table["ci_method"].dropna().astype(str)) - {""}
        if "exact" in methods:
            exact.append(name)
        if "monte carlo" in methods:
            se = table.loc[table["ci_method"] == "monte carlo"].get("mc_se", pd.Series(dtype=float))
            worst = pd.to_numeric(se, errors="coerce").max()
            resampled.append(f"{name} (largest endpoint MC SE {worst:.2g})" if worst == worst else name)
    lines = []
    if exact:
        lines.append(
            "exact (the percentiles of the bootstrap distribution itself, in closed form: no resampling, no "
            f"Monte Carlo error): {', '.join(exact)}"
        )
    if resampled:
        lines.append(
            "Monte Carlo (cluster bootstrap, or values off a lattice; each endpoint's MC SE estimated from 20 "
            f"batches of the resamples): {', '.join(resampled)}"
        )
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


FINDINGS_INTRO = (
    "In words, per model: each number is that of the table named in findings.csv (the CIs are the tables' own)."
)


def findings_paragraphs(tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, str]]:
    """(who: 'model on benchmark', paragraph) per run of the ``findings`` table, in its order."""
    findings = _nonempty(tables, "findings")
    if findings is None:
        return []
    runs = findings.groupby(["model", "benchmark"], sort=False)["sentence"]
    return [(f"{model} on {benchmark}", " ".join(sentences)) for (model, benchmark), sentences in runs]


def _findings_markdown(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    paragraphs = findings_paragraphs(tables)
    if not paragraphs:
        return []
    return [
        "## Findings",
        "",
        FINDINGS_INTRO,
        "",
        *(line for who, text in paragraphs for line in (f"**{who}**: {text}", "")),
    ]


def _summary_markdown(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    summary = tables.get("summary")
    parts: list[str] = []
    if summary is not None and len(summary):
        sentence, _ = conventions(summary)
        n_flagged = int((summary["flags"].fillna("") != "").sum())
        parts += ["## Summary", "", " ".join(s for s in (_SUMMARY_INTRO, sentence) if s), ""]
        if n_flagged:
            parts += [f"**{n_flagged} of {len(summary)} model runs have flags:**", ""]
            parts += [f"- {line}" for line in _summary_lines(summary)] + [""]
        elif not transform_version_lines(tables)[1]:
            parts += [
                "No flags: no condition above the unparsed threshold, every question answered, orig and black run, "
                "no table leaves a model out.",
                "",
            ]
        parts += [markdown_table(summary, _display_columns(summary, SUMMARY_SHOWN)), ""]
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
    logs = src[src["kind"] != "predictions"]
    preds = src[src["kind"] == "predictions"]
    if len(logs):
        parts += [
            f"{len(logs)} lmms-eval samples logs ({int(logs['n_records'].sum())} records), read from vdg's own record.",
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
    """A rendered report but for its plots, which go in at ``at`` (sections are drawn while the plots are)."""

    parts: list[str]
    at: int
    toc: list[tuple[str, str]]
    toc_at: int


def render_markdown(tables: Mapping[str, pd.DataFrame], plots: Sequence[Path] = ()) -> str:
    """report.md: the headline tables (those present and non-empty), coverage, then an index of all tables."""
    return _markdown_with_plots(_markdown_layout(tables), plots)


def _markdown_with_plots(layout: _Layout, plots: Sequence[Path]) -> str:
    shown = ["## Plots", "", *(f"![{p.stem}](plots/{p.name})" for p in plots), ""] if plots else []
    return "\n".join(layout.parts[: layout.at] + shown + layout.parts[layout.at :])


def _markdown_layout(tables: Mapping[str, pd.DataFrame]) -> _Layout:
    info = _analysis_info()
    parts = ["# vdg report", ""]
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
img{max-width:100%;border:1px solid #eee;margin:.4rem 0}
nav ul{columns:3;font-size:.9rem}
code{background:#f3f3f3;padding:0 .2rem}
"""


def _html_table(table: pd.DataFrame, columns: Sequence[str] | None = None, merge_ci: bool = False) -> str:
    shown = _formatted(table, columns)
    if merge_ci:
        shown = _nonblank(_merge_interval_columns(shown, table))
    classes = ["t" if is_text(table, c) else "" for c in shown]
    head = "".join(f'<th class="{k}">{html.escape(str(c))}</th>' for c, k in zip(shown, classes, strict=True))
    opening = [f'<td class="{k}">' for k in classes]
    task = table["task_type"].tolist() if "task_type" in table.columns else [None] * len(table)
    body = []
    for kind, row in zip(task, _rows(shown, len(table)), strict=True):
        cls = ' class="overall"' if kind == "Overall" else ""
        cells = "".join(f"{td}{html.escape(v)}</td>" for td, v in zip(opening, row, strict=True))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f'<div class="wrap"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _html_section(
    name: str,
    title: str,
    intro: str,
    table: pd.DataFrame,
    columns: Sequence[str] | None,
    anchor: str = "",
    level: int = 2,
) -> str:
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
    parts.append(_html_table(shown, columns, merge_ci=columns is not None))
    parts.append(f'<p class="note">File: <code>{html.escape(name)}.csv</code></p>')
    return "\n".join(parts)


def _group_anchor(group: str) -> str:
    return "group-" + "-".join(group.lower().split())


def render_html(tables: Mapping[str, pd.DataFrame], plots: Sequence[Path] = (), title: str = "vdg report") -> str:
    """report.html: headline tables, coverage, plots, then every other table; self-contained, no script."""
    return _html_with_plots(_html_layout(tables), plots, title)


def _html_with_plots(layout: _Layout, plots: Sequence[Path], title: str = "vdg report") -> str:
    sections, toc = list(layout.parts), list(layout.toc)
    if plots:
        imgs = []
        for p in plots:
            data = base64.b64encode(Path(p).read_bytes()).decode("ascii")
            alt = html.escape(Path(p).stem)
            imgs.append(
                f'<figure><img alt="{alt}" src="data:image/png;base64,{data}"><figcaption>{alt}</figcaption></figure>'
            )
        sections.insert(layout.at, '<h2 id="plots">Plots</h2>\n' + "\n".join(imgs))
        toc.insert(layout.toc_at, ("plots", "Plots"))
    nav = "".join(f'<li><a href="#{html.escape(a)}">{html.escape(t)}</a></li>' for a, t in toc)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>\n"
        f"<h1>{html.escape(title)}</h1>\n<nav><ul>{nav}</ul></nav>\n" + "\n".join(sections) + "\n</body></html>\n"
    )


def _html_layout(tables: Mapping[str, pd.DataFrame]) -> _Layout:
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
            sections.append(_html_section(name, title_text, intro, table, columns, anchor, level))
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

    def bullets(title_text: str, lines: Sequence[str]) -> str:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
        return f'<p class="flag">{html.escape(title_text)}</p><ul>{items}</ul>' if lines else ""

    paragraphs = findings_paragraphs(tables)
    if paragraphs:
        sections.append(
            '<h2 id="findings">Findings</h2>\n'
            f'<p class="note">{html.escape(FINDINGS_INTRO)}</p>\n'
            + "".join(f"<p><b>{html.escape(who)}</b>: {html.escape(text)}</p>" for who, text in paragraphs)
        )
        toc.append(("findings", "Findings"))
    summary = tables.get("summary")
    skip_lines = _skip_lines(tables)
    if summary is not None and len(summary):
        flagged = _summary_lines(summary)
        add("summary", "Summary", _SUMMARY_INTRO, summary, _display_columns(summary, SUMMARY_SHOWN))
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
            sections.append(bullets(title, lines_of_note))

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
        columns = _display_columns(rows, _section_columns(section, rows))
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


def options_dict(options: Options | None) -> dict[str, Any] | None:
    if options is None:
        return None
    return {f.name: json_value(getattr(options, f.name)) for f in dataclasses.fields(options)}


def render_json(
    tables: Mapping[str, pd.DataFrame], options: Options | None = None, inputs: Mapping[str, Any] | None = None
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
        "inputs": json_value(given) if given is not None else None,
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


# ---------------------------------------------------------------------------------------- writing


def write_csv(table: pd.DataFrame, path: Path) -> None:
    table.to_csv(path, index=False)


class ReportError(ValueError):
    """The report cannot be written where asked (``--out``), with the path that says why."""


#: What a report folder holds; an existing ``--out`` holding anything else is never replaced.
_REPORT_FILES = frozenset({"report.md", "report.html", "report.json"})


#: The rule ``_check_out`` applies, as its refusal states it.
_REPORT_RULE = (
    "a report folder holds report.md, report.html, report.json, <table>.csv and in plots/ only the PNGs its "
    "report.md shows"
)


def _shown_plots(out: Path) -> set[str]:
    """The plots/ files the report.md in ``out`` shows (``![name](plots/<file>)``)."""
    try:
        text = (out / "report.md").read_text(errors="replace")
    except OSError:
        return set()
    return set(re.findall(r"\]\(plots/([^)/]+)\)", text))


def _foreign_entries(out: Path) -> list[str]:
    """What in ``out`` a previous report did not write (``_REPORT_RULE``), as paths relative to it."""
    foreign = []
    for path in sorted(out.iterdir()):
        if path.name == "plots" and path.is_dir() and not path.is_symlink():
            shown = _shown_plots(out)
            foreign += [
                f"plots/{p.name}"
                for p in sorted(path.iterdir())
                if not (p.suffix == ".png" and p.is_file() and not p.is_symlink() and p.name in shown)
            ]
        elif not (path.is_file() and (path.name in _REPORT_FILES or path.suffix == ".csv")):
            foreign.append(path.name)
    return foreign


def _check_out(out: Path) -> None:
    """``out`` is new, or a folder a previous report wrote (only CSVs, report.*, plots/*.png): safe to replace."""
    if out.parent == out or not out.name:
        raise ReportError(f"--out {out}: give a folder to write the report into, not a filesystem root")
    if not out.exists() and not out.is_symlink():
        _check_parent(out)
        return
    if out.is_symlink() or not out.is_dir():
        raise ReportError(f"--out {out}: exists and is not a folder; choose a new folder")
    foreign = _foreign_entries(out)
    if foreign:
        raise ReportError(
            f"--out {out}: holds files that are not part of a vdg report ({', '.join(foreign[:3])}"
            f"{', ...' if len(foreign) > 3 else ''}): {_REPORT_RULE}; the report replaces its folder whole, so "
            "choose a new or empty folder"
        )


def _check_parent(out: Path) -> None:
    """The nearest existing folder above a new ``out`` is a folder this process may write in."""
    above = out.parent
    while not above.exists() and not above.is_symlink() and above.parent != above:
        above = above.parent
    if not above.is_dir():
        raise ReportError(f"--out {out}: {above} is a file, not a folder, so no folder can be made under it")
    if not os.access(above, os.W_OK | os.X_OK):
        raise ReportError(f"--out {out}: the folder {above} is not writable (permission denied); choose another --out")


def _made(folder: Path, out: Path, parents: bool = False) -> None:
    """``folder.mkdir``, an OS refusal (a file in the way, no permission, a full disk) as a ``ReportError``."""
    try:
        folder.mkdir(parents=parents, exist_ok=parents)
    except OSError as exc:
        raise ReportError(f"--out {out}: cannot create {folder} ({exc.strerror or exc})") from None


def partial_dir(out: Path) -> Path:
    """Where ``compute_tables`` keeps the CSVs it has computed until ``write_report`` moves a report into ``out``."""
    out = Path(out).absolute()
    return out.with_name(f".{out.name}.partial")


def compute_tables(
    frame: pd.DataFrame,
    options: Options = Options(),
    out: Path | None = None,
    names: Sequence[str] | None = None,
    on_table: Callable[[str, pd.DataFrame], None] | None = None,
    first: Sequence[str] = (),
    workers: int | None = None,
) -> dict[str, pd.DataFrame]:
    """``run_all`` (``on_table(name, table)`` as each table is computed, ``first`` computed first, in
    ``worker_count(frame, workers)`` processes); with ``out``, first checks the report may be written there,
    and keeps each CSV in ``partial_dir(out)`` as soon as it is computed, by the process that computed it
    (never in ``out`` itself), so a crash loses nothing. ``write_report(..., kept=True)`` moves those CSVs
    into the report instead of writing them again."""
    if out is None:
        return _analyses.run_all(frame, options, names, on_table=on_table, first=first, workers=workers)
    out = Path(out).absolute()
    _check_out(out)
    staging = partial_dir(out)
    shutil.rmtree(staging, ignore_errors=True)
    _made(staging.parent, out, parents=True)
    _made(staging, out)
    kept: dict[str, tuple[Path, pd.DataFrame]] = {}

    def keep(name: str, table: pd.DataFrame) -> None:
        kept[name] = (staging / f"{name}.csv", table)  # this process's copy of what the CSV holds
        if on_table is not None:
            on_table(name, table)

    def write(name: str, table: pd.DataFrame) -> None:
        # Whole or not at all: a worker that died and the report process recomputing its table may both write.
        partial = staging / f".{name}.{os.getpid()}.tmp"
        write_csv(table, partial)
        os.replace(partial, staging / f"{name}.csv")

    tables = _analyses.run_all(frame, options, names, on_table=keep, first=first, workers=workers, on_computed=write)
    return ComputedTables(tables, kept)


class ComputedTables(dict[str, pd.DataFrame]):
    """``compute_tables(..., out)``'s tables (a dict: name -> table), and ``kept``: name -> (the CSV it
    kept, the table that CSV holds), so that ``write_report`` moves a CSV only for that very table."""

    def __init__(self, tables: Mapping[str, pd.DataFrame], kept: Mapping[str, tuple[Path, pd.DataFrame]]):
        super().__init__(tables)
        self.kept = dict(kept)


def _write_table(name: str, table: pd.DataFrame, path: Path, kept: Mapping[str, tuple[Path, pd.DataFrame]]) -> None:
    """``path`` <- the CSV ``compute_tables`` kept for this very table when there is one, else written anew."""
    csv, held = kept.get(name, (None, None))
    if csv is not None and held is table and csv.is_file():
        os.replace(csv, path)
    else:
        write_csv(table, path)


class WrittenReport(str):
    """``write_report``'s result: the markdown (a ``str``), with ``path``, the folder the report is in."""

    path: Path

    def __new__(cls, markdown: str, path: Path) -> WrittenReport:
        obj = super().__new__(cls, markdown)
        obj.path = path
        return obj

    @property
    def markdown(self) -> str:
        return str(self)


def _write_json(tables: Mapping[str, pd.DataFrame], options: Options | None, inputs: Any, path: Path) -> None:
    # orjson: several times json.dumps' speed on a large report; render_json has already made every NaN a null.
    path.write_bytes(orjson.dumps(render_json(tables, options, inputs)) + b"\n")


class _JsonWriter:
    """report.json written by a forked process while this one lays out the markdown and HTML (a large report:
    from ``PARALLEL_TABLE_ROWS`` table rows on, where processes are forked), else here; ``join`` waits for it. A
    child that fails leaves the file to this process, so any error is raised here, with its traceback."""

    def __init__(self, tables: Mapping[str, pd.DataFrame], options: Options | None, inputs: Any, path: Path) -> None:
        self._args = (tables, options, inputs, path)
        self._child: Any = None
        if can_fork() and cpus() > 1 and sum(len(t) for t in tables.values()) >= PARALLEL_TABLE_ROWS:
            child = mp.get_context("fork").Process(target=_write_json, args=self._args, name="vdg-report-json")
            try:
                child.start()
                self._child = child
            except OSError:  # no process to be had (out of memory, say): written here
                pass
        if self._child is None:
            _write_json(*self._args)

    def join(self) -> None:
        if self._child is not None:
            self._child.join()
            if self._child.exitcode != 0:
                _write_json(*self._args)


#: From this many rows in all the tables on, ``write_report`` writes report.json in a second process: the size
#: from which the analyses are spread over processes too.
PARALLEL_TABLE_ROWS = _analyses.PARALLEL_ROWS


def _write_files(
    tables: Mapping[str, pd.DataFrame],
    folder: Path,
    options: Options | None,
    inputs: Mapping[str, Any] | None,
    plots: bool | BackgroundPlots,
    kept: Mapping[str, tuple[Path, pd.DataFrame]],
) -> str:
    if isinstance(plots, BackgroundPlots):
        plots.submit(tables)  # drawn while the files below are written (or already, from offered tables)
    for name, table in tables.items():
        _write_table(name, table, folder / f"{name}.csv", kept)
    json_writer = _JsonWriter(tables, options, inputs, folder / "report.json")
    markdown, page = _markdown_layout(tables), _html_layout(tables)  # while the worker draws (and the JSON's)
    json_writer.join()
    written: list[Path] = []
    if isinstance(plots, BackgroundPlots):
        written = plots.result(folder / "plots")
    elif plots:
        from postprocess.plots import write_plots

        written = write_plots(tables, folder / "plots")
    text = _markdown_with_plots(markdown, written)
    (folder / "report.md").write_text(text)
    (folder / "report.html").write_text(_html_with_plots(page, written))
    return text


# Only .new: a killed run's .old may be the one copy of the previous report (killed between the two renames).
_LEFTOVER = r"\.{name}\.(?P<pid>\d+)-[0-9a-f]+\.new"
#: Signals that remove the folder being written (``kill``'s default and Ctrl-C).
CLEANUP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def sweep_leftovers(out: Path) -> list[Path]:
    """Remove the ``.<out>.<pid>-<hex>.new`` folders beside ``out`` of processes no longer running
    (a ``vdg report`` killed before it could clean up); the folders removed."""
    out = Path(out).absolute()
    pattern = re.compile(_LEFTOVER.format(name=re.escape(out.name)))
    removed = []
    for path in out.parent.glob(f".{glob.escape(out.name)}.*"):
        match = pattern.fullmatch(path.name)
        if match and path.is_dir() and not path.is_symlink() and not _alive(int(match["pid"])):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


@contextlib.contextmanager
def _removed_on_signal(folder: Path) -> Iterator[None]:
    """While the report is written into ``folder``: SIGTERM / SIGINT remove it, then act as they did before (the
    previous handlers are restored on the way out, and before the signal is raised again)."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in CLEANUP_SIGNALS}

    def restore() -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)

    def remove(signum: int, frame: Any) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        restore()
        signal.raise_signal(signum)  # the previous handler's turn: KeyboardInterrupt, exit, ...

    for signum in CLEANUP_SIGNALS:
        signal.signal(signum, remove)
    try:
        yield
    finally:
        restore()


def write_report(
    tables: Mapping[str, pd.DataFrame],
    out: Path,
    *,
    options: Options | None = None,
    inputs: Mapping[str, Any] | None = None,
    plots: bool | BackgroundPlots = True,
    kept: bool = False,
) -> WrittenReport:
    """Write every table as CSV plus report.md/.html/.json and plots/*.png into ``out``; return the markdown
    (``.path``: the report's folder, absolute). ``plots``: False for none, True to draw them here, or a
    started ``postprocess.plot_worker.BackgroundPlots`` to have its process draw them meanwhile. ``kept``:
    the tables are ``compute_tables(..., out)``'s, not modified since (as in ``vdg report``): the CSVs it kept
    are moved into the report rather than written again (a table it did not keep is written).

    Everything is written into a new folder beside ``out`` first and moved into place at the end, so
    ``out`` holds one complete report or what it held before: a previous report there is replaced
    whole; a folder with other files in it is refused (``ReportError``) before anything is written.
    """
    out = Path(out).absolute()
    _check_out(out)
    _made(out.parent, out, parents=True)
    sweep_leftovers(out)
    fresh = out.with_name(f".{out.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.new")
    _made(fresh, out)
    try:
        with _removed_on_signal(fresh):
            reuse = tables.kept if kept and isinstance(tables, ComputedTables) else {}
            markdown = _write_files(tables, fresh, options, inputs, plots, reuse)
    except BaseException as exc:
        if fresh.exists():
            exc.add_note(f"vdg: the report files written so far are in {fresh}; {out} is untouched")
        raise
    old = out.with_name(f".{out.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.old")
    if out.exists():
        out.rename(old)
    try:
        fresh.rename(out)
    except BaseException:
        if old.exists():
            old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(partial_dir(out), ignore_errors=True)
    return WrittenReport(markdown, out)
