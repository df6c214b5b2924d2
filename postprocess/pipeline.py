"""The report's one orchestration, which ``vdg report`` and ``postprocess.build_report`` both call.

``make_report`` reads the inputs, computes every table (each CSV kept as it is computed), then writes the report,
plots included.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from postprocess.analyses import check_registry
from postprocess.report import WrittenReport, compute_tables, write_report
from postprocess.settings import ReportSettings

__all__ = ["make_report"]


def make_report(
    frame: pd.DataFrame | Callable[[], pd.DataFrame],
    out: str | os.PathLike[str],
    *,
    options: ReportSettings,
    inputs: Mapping[str, Any] | None = None,
    plots: bool = True,
    workers: int | None = None,
    progress: bool = False,
) -> WrittenReport:
    """Compute every table of ``frame`` and write the report into ``out``.

    ``frame``: the tidy frame, or a function returning it (called once). ``inputs``: what the report names as its
    inputs (report.json). ``workers``: processes for the analyses (``postprocess.parallel.worker_count``).
    ``progress``: a bar of the tables computed on stderr (shown after a second), then a line before the files are
    written (``vdg report``).

    Raises:
        postprocess.reading.lmms_eval_logs.LogError: unreadable inputs; postprocess.report.ReportError: ``out`` holds
        files
            other than a previous report (both ``ValueError``s), and whatever ``frame`` raises.
    """
    check_registry()  # a module of analyses that cannot be read stops the report before its inputs are read
    folder = Path(out)

    def say(step: str) -> None:
        if progress:
            print(f"vdg report: {step}", file=sys.stderr, flush=True)

    tidy = frame() if callable(frame) else frame
    # After a second only: a refusal (of --out, say) stays the one line it is.
    with tqdm(desc="vdg report: tables", unit="table", disable=not progress, file=sys.stderr, delay=1.0) as bar:
        tables = compute_tables(tidy, options, folder, workers=workers, on_table=lambda name, table: bar.update())
    say("writing report.md, report.html, report.json" + (" and the plots" if plots else ""))
    return write_report(tables, folder, options=options, inputs=inputs, plots=plots, kept=True)
