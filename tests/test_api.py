"""The Python API re-exported by ``postprocess`` and ``vdg_tasks``: complete, lazy, and working."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import pandas as pd
import pytest

import postprocess
import vdg_tasks
from postprocess import analyses
from postprocess.analyses.base import Options
from tests.helpers.fakelogs import sample, write_run
from tests.helpers.reference_data import ORIG_BLACK, reference_frame

PACKAGES = [postprocess, vdg_tasks]
FAST = Options(n_resamples=50, stability_resamples=20)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_every_public_name_resolves_to_its_origin(package) -> None:
    assert sorted(package.__all__) == sorted(package._ORIGIN)
    for name in package.__all__:
        origin = package._ORIGIN[name]
        module, attr = origin if isinstance(origin, tuple) else (origin, name)
        assert getattr(package, name) is getattr(importlib.import_module(module), attr)
        assert name in dir(package)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        package.nope  # noqa: B018


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_no_public_name_is_a_submodule(package) -> None:
    """Importing ``package.<name>`` as a submodule would replace the re-exported attribute."""
    submodules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    assert not submodules & set(package.__all__)


def _new_modules(code: str) -> set[str]:
    probe = f"import json, sys\nbefore = set(sys.modules)\n{code}\nprint(json.dumps(sorted(set(sys.modules) - before)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


@pytest.mark.parametrize("package", ["vdg_tasks", "postprocess"])
def test_importing_the_package_imports_nothing_else(package) -> None:
    """lmms-eval imports ``vdg_tasks.hooks`` and friends on every task load: the package itself must cost nothing.
    """
    assert _new_modules(f"import {package}") <= {package, "__future__"}


def test_heavy_modules_stay_out_until_needed() -> None:
    heavy = {"torch", "lmms_eval", "matplotlib", "decord", "av"}
    assert not heavy & _new_modules("from vdg_tasks import CONDITIONS, get_condition")
    assert not heavy & _new_modules("from postprocess import load_frame, run_analysis, build_report")


def test_conditions() -> None:
    assert vdg_tasks.get_condition("black") is vdg_tasks.CONDITIONS["black"]
    assert isinstance(vdg_tasks.CONDITIONS["orig"], vdg_tasks.Condition)
    with pytest.raises(KeyError, match="Did you mean 'black'"):
        vdg_tasks.get_condition("blak")


def test_materialize_video_orig_is_the_source(tmp_path) -> None:
    from vdg_tasks.perturb.cache import placeholder_video

    source = placeholder_video()
    video = vdg_tasks.materialize_video(source, vdg_tasks.get_condition("orig"), "placeholder")
    assert isinstance(video, vdg_tasks.Materialized)
    assert video.path == source and video.key == ""


def test_run_analysis_is_run_alls_table() -> None:
    frame = reference_frame(("qwen2vl", "llava"), ORIG_BLACK)
    table = postprocess.run_analysis("vdg", frame, FAST)
    expected = analyses.run_all(frame, FAST, names=["vdg"])["vdg"]
    pd.testing.assert_frame_equal(table, expected)
    assert set(table["model"]) == {"qwen2vl", "llava"}
    assert postprocess.skip_reason(table) is None


def test_run_analysis_computes_a_digest_from_every_table() -> None:
    frame = reference_frame(("qwen2vl",), ORIG_BLACK)
    summary = postprocess.run_analysis("summary", frame, FAST)
    assert list(summary["model"]) == ["qwen2vl"]


def test_run_analysis_unknown_name() -> None:
    assert postprocess.analysis_names() == [t.name for t in analyses.TABLES]
    with pytest.raises(KeyError, match="Did you mean 'vdg'"):
        postprocess.run_analysis("vgd", pd.DataFrame())


def test_build_report_from_a_frame(tmp_path) -> None:
    frame = reference_frame(("qwen2vl",), ORIG_BLACK)
    written = postprocess.build_report(frame, tmp_path / "report", options=FAST, plots=False)
    assert isinstance(written, postprocess.WrittenReport)
    assert written.path == (tmp_path / "report").absolute()
    assert (written.path / "report.md").read_text() == written
    assert (written.path / "vdg.csv").exists()


def test_build_report_from_run_folders(tmp_path) -> None:
    samples = {
        f"vdgsynth_vdg_{c}": [sample(f"v{i}-q", c, "A" if (c == "orig" or i % 2) else "B") for i in range(8)]
        for c in ("orig", "black")
    }
    run = write_run(tmp_path / "runs" / "probe", "vdg_probe", samples)
    written = postprocess.build_report([f"probe={run}"], tmp_path / "report", options=FAST, plots=False)
    report = json.loads((written.path / "report.json").read_text())
    assert report["inputs"]["runs"] == [f"probe={run}"]
    assert [row["model"] for row in report["summary"]] == ["probe"]
    with pytest.raises(postprocess.ReportError):
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "notes.txt").write_text("mine")
        postprocess.build_report(str(run), tmp_path / "other", options=FAST, plots=False)
