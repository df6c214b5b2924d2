"""The report's one orchestration, which ``vdg report`` and ``postprocess.build_report`` both call.

``make_report`` starts the plot worker first (it imports matplotlib on another CPU while the inputs are
read and analysed), computes every table (the plots' tables first, handed to the worker as they
come, each CSV kept as it is computed), then writes the report.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from postprocess.options import Options
from postprocess.plot_worker import PLOT_TABLES, BackgroundPlots

if TYPE_CHECKING:
    import pandas as pd

    from postprocess.report import WrittenReport

__all__ = ["make_report"]


def make_report(
    frame: pd.DataFrame | Callable[[], pd.DataFrame],
    out: str | os.PathLike[str],
    *,
    options: Options,
    inputs: Mapping[str, Any] | None = None,
    plots: bool = True,
    workers: int | None = None,
) -> WrittenReport:
    """Compute every table of ``frame`` and write the report into ``out``.

    ``frame``: the tidy frame, or a function returning it (called once the plot worker has started).
    ``inputs``: what the report names as its inputs (report.json). ``workers``: processes for the
    analyses (``postprocess.parallel.worker_count``); 1 also draws the plots in this process.

    Raises:
        postprocess.io.LogError: unreadable inputs; postprocess.report.ReportError: ``out`` holds files
            other than a previous report (both ``ValueError``s), and whatever ``frame`` raises.
    """
    background = plots and workers != 1 and BackgroundPlots.useful()
    with BackgroundPlots() if background else contextlib.nullcontext() as worker:
        # The report's modules (pandas, scipy, the analyses) load after the worker has started, beside it.
        from postprocess.report import compute_tables, write_report

        folder = Path(out)
        tidy = frame() if callable(frame) else frame
        offer = worker.offer if worker is not None else None
        tables = compute_tables(tidy, options, folder, on_table=offer, first=PLOT_TABLES, workers=workers)
        drawn = worker if worker is not None else plots
        return write_report(tables, folder, options=options, inputs=inputs, plots=drawn, kept=True)
