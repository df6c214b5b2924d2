"""Notebook helpers on top of the analyses registry and the report writer.

``run_analysis`` computes one table by name, with the same rules as ``vdg report`` (free-text
answers seen only by the tracking analyses, a ``ValueError`` from the data turned into a skipped,
header-only table: ``skip_reason(table)`` says why). ``build_report`` goes from a tidy frame, or
lmms-eval output folders, to a written report in one call. Both are re-exported by ``postprocess``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from postprocess.analyses import DIGESTS, TABLES, run_all
from postprocess.analyses.base import Options
from postprocess.io import load_frame
from postprocess.pipeline import make_report
from postprocess.report import WrittenReport

__all__ = ["analysis_names", "build_report", "run_analysis"]


def analysis_names() -> list[str]:
    """Every table ``run_analysis`` can compute, in report order (the CSV stems of ``vdg report``)."""
    return [t.name for t in TABLES]


def run_analysis(name: str, frame: pd.DataFrame, options: Options | None = None) -> pd.DataFrame:
    """The table ``name`` (one of ``analysis_names()``) computed from the tidy ``frame``.

    Columns are exactly those the analysis declares (``docs/report-schema.md``). A digest
    (``skipped``, ``summary``) is computed from every other table, so it runs them all first.

    Raises:
        KeyError: ``name`` is no analysis (the message suggests the nearest names).
    """
    names = analysis_names()
    if name not in names:
        near = difflib.get_close_matches(name, names, n=3)
        hint = f" Did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        raise KeyError(f"Unknown analysis {name!r}.{hint} Known: {', '.join(names)}.")
    opts = Options() if options is None else options
    if name in {d.name for d in DIGESTS}:
        return run_all(frame, opts)[name]
    return run_all(frame, opts, names=[name])[name]


def build_report(
    data: pd.DataFrame | str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    options: Options | None = None,
    benchmark: str | None = None,
    plots: bool = True,
    options_file: str | os.PathLike[str] | None = None,
) -> WrittenReport:
    """``vdg report`` from Python: compute every table and write the report into ``out``.

    ``data`` is a tidy frame (``load_frame``: use it for prediction files) or one or more lmms-eval
    output folders (``NAME=DIR`` labels one, as on the command line; ``benchmark`` and ``options_file``,
    the ``--options-file`` CSV of option counts, as in ``load_frame``: for a frame, give it to ``load_frame``).
    Returns the markdown, a ``str`` whose ``.path`` is the report's folder.

    Raises:
        postprocess.io.LogError: unreadable inputs (a ``ValueError``).
        postprocess.report.ReportError: ``out`` holds files other than a previous report.
    """
    opts = Options() if options is None else options
    inputs: Mapping[str, Any] | None = None
    if isinstance(data, pd.DataFrame):
        frame = data
    else:
        runs = [os.fspath(data)] if isinstance(data, (str, os.PathLike)) else [os.fspath(r) for r in data]
        frame = load_frame(
            runs=runs, benchmark=benchmark, options_file=None if options_file is None else os.fspath(options_file)
        )
        inputs = {
            "runs": runs,
            "benchmark": benchmark,
            "options_file": None if options_file is None else str(options_file),
        }
    return make_report(frame, out, options=opts, inputs=inputs, plots=plots)
