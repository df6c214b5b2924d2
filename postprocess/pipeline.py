"""The report's one orchestration, which ``vdg report`` and ``postprocess.build_report`` both call.

``make_report`` reads the inputs, computes every table (each CSV kept as it is computed), then writes the report,
plots included.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

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
) -> WrittenReport:
    """Compute every table of ``frame`` and write the report into ``out``.

    ``frame``: the tidy frame, or a function returning it (called once). ``inputs``: what the report names as its
    inputs (report.json). ``workers``: processes for the analyses (``postprocess.parallel.worker_count``).

    Raises:
        postprocess.reading.lmms_eval_logs.LogError: unreadable inputs; postprocess.report.ReportError: ``out`` holds
        files
            other than a previous report (both ``ValueError``s), and whatever ``frame`` raises.
    """
    check_registry()  # a module of analyses that cannot be read stops the report before its inputs are read
    folder = Path(out)
    tidy = frame() if callable(frame) else frame
    tables = compute_tables(tidy, options, folder, workers=workers)
    return write_report(tables, folder, options=options, inputs=inputs, plots=plots, kept=True)
