"""Type-checked, never run: what mypy must infer through the lazy re-exports of ``postprocess`` and ``vdg_tasks``.

Listed in ``[tool.mypy] files``. Were a public name reachable only through the packages' module
``__getattr__`` (missing from their ``TYPE_CHECKING`` imports), mypy would see ``Any`` and the
``assert_type`` lines below would fail.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import postprocess
import vdg_tasks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing_extensions import assert_type


def _postprocess_api(out: Path) -> None:
    frame = postprocess.load_frame(predictions=[("m", "orig.json")], benchmark="videomme")
    assert_type(frame, pd.DataFrame)
    assert_type(postprocess.read_predictions(Path("orig.json")), pd.DataFrame)
    options = postprocess.ReportSettings(n_resamples=100)
    assert_type(postprocess.run_analysis("vdg", frame, options), pd.DataFrame)
    assert_type(postprocess.analysis_names(), list[str])
    tables = postprocess.run_all(frame, options)
    assert_type(tables, dict[str, pd.DataFrame])
    assert_type(postprocess.compute_tables(frame, options), dict[str, pd.DataFrame])
    assert_type(postprocess.skip_reason(tables["vdg"]), str | None)
    written = postprocess.write_report(tables, out, options=options, plots=False)
    assert_type(written, postprocess.WrittenReport)
    assert_type(written.path, Path)
    assert_type(postprocess.build_report(frame, out), postprocess.WrittenReport)
    assert_type(postprocess.build_report(["runs/a", Path("runs/b")], out, options=options), postprocess.WrittenReport)
    errors: tuple[type[ValueError], ...] = (postprocess.LogError, postprocess.ReportError)
    assert errors


def _vdg_tasks_api() -> None:
    condition = vdg_tasks.get_condition("black")
    assert_type(condition, vdg_tasks.Condition)
    assert_type(vdg_tasks.CONDITIONS["orig"], vdg_tasks.Condition)
    video = vdg_tasks.materialize_video("clip.mp4", condition, "clip")
    assert_type(video, vdg_tasks.Materialized)
    assert_type(video.path, Path)
    assert_type(video.hit, bool)
