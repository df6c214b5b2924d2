"""Notebook helpers on top of the analyses registry and the report writer.

``run_analysis`` computes one table by name, with the same rules as ``vdg report`` (free-text
answers seen only by the tracking analyses, a ``ValueError`` from the data turned into a skipped,
header-only table: ``skip_reason(table)`` says why). ``build_report`` goes from a tidy frame, or
``vdg report``'s inputs, to a written report in one call, through the orchestration ``vdg report`` calls
(``postprocess.reading.inputs.load_inputs``, then ``postprocess.pipeline.make_report``). Both are re-exported by
``postprocess``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import replace
from typing import Literal

import pandas as pd

from postprocess.analyses import DIGESTS, TABLES, run_all
from postprocess.analyses.base import ReportSettings
from postprocess.pipeline import make_report
from postprocess.reading.inputs import ReportInputs, load_inputs
from postprocess.report import WrittenReport

__all__ = ["analysis_names", "build_report", "run_analysis"]


def analysis_names() -> list[str]:
    """Every table ``run_analysis`` can compute, in report order (the CSV stems of ``vdg report``)."""
    return [t.name for t in TABLES]


def run_analysis(name: str, frame: pd.DataFrame, options: ReportSettings | None = None) -> pd.DataFrame:
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
    opts = ReportSettings() if options is None else options
    if name in {d.name for d in DIGESTS}:
        return run_all(frame, opts)[name]
    return run_all(frame, opts, names=[name])[name]


def build_report(
    data: pd.DataFrame | ReportInputs | str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    options: ReportSettings | None = None,
    plots: bool = True,
    workers: int | None = None,
    predictions: Iterable[tuple[str, str | os.PathLike[str]]] = (),
    benchmark: str | None = None,
    on_duplicate: Literal["error", "last"] = "error",
    mixed_exports: bool = False,
    options_file: str | os.PathLike[str] | None = None,
    question_sets: Iterable[str | os.PathLike[str]] = (),
    shortcuts: Iterable[str | os.PathLike[str]] = (),
    judge: Literal["offline", "api"] | None = None,
    include_path: str | os.PathLike[str] | None = None,
    derived: Iterable[str | os.PathLike[str]] = (),
) -> WrittenReport:
    """``vdg report`` from Python: read the inputs as it does, compute every table and write the report into ``out``.

    ``data`` is one or more lmms-eval output folders (``NAME=DIR`` labels one, as on the command line; ``[]`` with
    only ``predictions``), a ``ReportInputs``, or a tidy frame already read (``load_frame``, ``load_inputs``). The
    keywords after ``workers`` are ``vdg report``'s inputs (``ReportInputs``): prediction files as ``(model, file)``
    pairs, ``question_sets`` as ``NAME=FILE`` or ``FILE``, ``shortcuts`` files, ``judge="offline"`` or ``"api"``, and
    where a plain base-task run's task is declared; with a frame they are refused (it is read already). The files
    written are those ``vdg report`` writes for the same inputs and settings, byte for byte. Returns the markdown, a
    ``str`` whose ``.path`` is the report's folder.

    Raises:
        postprocess.reading.lmms_eval_logs.LogError: unreadable inputs (a ``ValueError``, as is every other refusal
        of an input).
        postprocess.report.ReportError: ``out`` holds files other than a previous report.
        postprocess.judge.JudgeError: an answer could not be judged.
        TypeError: input keywords given with a frame or with a ``ReportInputs``.
    """
    opts = ReportSettings() if options is None else options
    given = ReportInputs(
        predictions=tuple((m, os.fspath(p)) for m, p in predictions),
        benchmark=benchmark,
        on_duplicate=on_duplicate,
        mixed_exports=mixed_exports,
        options_file=None if options_file is None else os.fspath(options_file),
        question_sets=tuple(os.fspath(q) for q in question_sets),
        shortcuts=tuple(os.fspath(s) for s in shortcuts),
        judge=judge,
        include_path=None if include_path is None else os.fspath(include_path),
        derived=tuple(os.fspath(d) for d in derived),
    )
    if isinstance(data, (pd.DataFrame, ReportInputs)):
        if given != ReportInputs():
            kind = "a frame is read already" if isinstance(data, pd.DataFrame) else "the ReportInputs holds them"
            raise TypeError(f"build_report: input keywords with {kind}; give them to ReportInputs (or load_inputs)")
        if isinstance(data, pd.DataFrame):
            return make_report(data, out, options=opts, inputs=None, plots=plots, workers=workers)
        inputs = data
    else:
        runs = [data] if isinstance(data, (str, os.PathLike)) else list(data)
        inputs = replace(given, runs=tuple(os.fspath(r) for r in runs))
    return make_report(
        lambda: load_inputs(inputs, opts), out, options=opts, inputs=inputs.described(), plots=plots, workers=workers
    )
