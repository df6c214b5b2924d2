"""vdg's analysis side as a Python API: load answers into the tidy frame, compute tables, write a report.

::

    from postprocess import ReportSettings, build_report, load_frame, run_analysis

    frame = load_frame(predictions=[("qwen2vl", "orig.json"), ("qwen2vl", "black.json")], benchmark="videomme")
    vdg = run_analysis("vdg", frame, ReportSettings(n_resamples=500))
    build_report(frame, "report/")

Public names (``__all__``):

- ``load_frame(runs=(), predictions=(), benchmark=None, ...)``: lmms-eval output folders and
  ``(model, file)`` prediction files -> one checked tidy frame; ``read_predictions`` reads one file.
- ``load_inputs(ReportInputs(...), options)``: everything ``vdg report`` reads -> its frame (plain base-task
  runs as orig, question sets to compare, ``vdg shortcuts``' scores, open answers judged).
- ``run_analysis(name, frame, options=None)``: one table by name (``analysis_names()``);
  ``run_all(frame, options, names=None)``: every table, by name; ``skip_reason(table)``: why a
  table was skipped (``None`` when it was computed). ``ReportSettings``: the conventions they share.
- ``compute_tables`` and ``write_report(tables, out)``: the two halves of ``vdg report``;
  ``build_report(run_dirs_or_frame, out, ...)`` reads ``vdg report``'s inputs and does both, writing the files
  ``vdg report`` writes. ``WrittenReport`` is what they return.
- ``Analysis``: a table of your own, declared in a module named by ``$VDG_ANALYSES`` or an entry point of group
  ``vdg.analyses`` (``postprocess.analyses.registry``); the report computes and writes it with vdg's.
- ``LogError`` (unreadable inputs) and ``ReportError`` (``out`` cannot take a report), both ``ValueError``.

Every name is imported on first use (PEP 562), so ``import postprocess`` (which also runs before any
``postprocess.<submodule>`` import) stays free of pandas, scipy and matplotlib.
"""

from __future__ import annotations

# typing itself costs ~15 ms to import: the constant below is what type checkers read as TYPE_CHECKING.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from postprocess.analyses import run_all
    from postprocess.analyses.base import Analysis, skip_reason
    from postprocess.api import analysis_names, build_report, run_analysis
    from postprocess.reading.files import LogError
    from postprocess.reading.inputs import ReportInputs, load_inputs
    from postprocess.reading.lmms_eval_logs import load_frame
    from postprocess.reading.prediction_files import read_predictions
    from postprocess.report import ReportError, WrittenReport, compute_tables, write_report
    from postprocess.settings import ReportSettings

#: Public name -> the module defining it.
_ORIGIN = {
    "load_frame": "postprocess.reading.lmms_eval_logs",
    "load_inputs": "postprocess.reading.inputs",
    "ReportInputs": "postprocess.reading.inputs",
    "read_predictions": "postprocess.reading.prediction_files",
    "LogError": "postprocess.reading.files",
    "ReportSettings": "postprocess.settings",
    "skip_reason": "postprocess.analyses.base",
    "Analysis": "postprocess.analyses.base",
    "run_all": "postprocess.analyses",
    "analysis_names": "postprocess.api",
    "run_analysis": "postprocess.api",
    "build_report": "postprocess.api",
    "compute_tables": "postprocess.report",
    "write_report": "postprocess.report",
    "WrittenReport": "postprocess.report",
    "ReportError": "postprocess.report",
}

__all__ = [
    "Analysis",
    "LogError",
    "ReportSettings",
    "ReportError",
    "ReportInputs",
    "WrittenReport",
    "analysis_names",
    "build_report",
    "compute_tables",
    "load_frame",
    "load_inputs",
    "read_predictions",
    "run_all",
    "run_analysis",
    "skip_reason",
    "write_report",
]


#: Former public names -> the names they stand for (``Options`` was the report's settings, a name the answer options
#: also took).
_FORMER = {"Options": "ReportSettings"}


def __getattr__(name: str) -> Any:
    if name in _FORMER:
        return __getattr__(_FORMER[name])
    origin = _ORIGIN.get(name)
    if origin is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # importlib only on first use of a lazy name: `import postprocess` imports nothing (tests/postprocess/test_api.py)
    import importlib

    value = getattr(importlib.import_module(origin), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
