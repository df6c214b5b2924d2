"""The Python API re-exported by ``postprocess`` and ``vdg_tasks``: complete, lazy, and working; and
postprocess.api's own functions (``analysis_names``, ``run_analysis``, ``build_report``) on tiny inputs."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import postprocess
import vdg_tasks
from postprocess import analyses
from postprocess.analyses.base import ReportSettings
from postprocess.api import build_report, run_analysis
from postprocess.reading.answer_options import RULE_FILE
from tests.helpers.fakelogs import sample, write_run
from tests.helpers.frames import make_frame
from tests.helpers.reference_data import ORIG_BLACK, reference_frame

PACKAGES = [postprocess, vdg_tasks]
FAST = ReportSettings(n_resamples=50, stability_resamples=20)


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
    """lmms-eval imports ``vdg_tasks.hooks`` and friends on every task load: the package itself must cost nothing."""
    assert _new_modules(f"import {package}") <= {package, "__future__"}


def test_the_model_side_stays_out_of_the_conditions_and_the_report() -> None:
    """What a report is read without: the model side's stack (a GPU machine's), and video decoding."""
    heavy = {"torch", "lmms_eval", "decord", "av"}
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


def _hand_vdg(frame: pd.DataFrame, model: str) -> tuple[int, float]:
    """(n, VDG) of ``model`` counted here: the questions it answered under orig and black (its own set)."""
    mine = frame[(frame.status != "error") & frame.condition.isin(["orig", "black"]) & (frame.model == model)]
    by_question = mine.pivot_table(index="question_id", columns="condition", values="correct", aggfunc="first")
    answered = by_question.dropna()
    gap = answered["orig"].astype(int) - answered["black"].astype(int)
    return len(answered), float(gap.mean())


def test_run_analysis_computes_the_vdg_counted_by_hand() -> None:
    frame = reference_frame(("qwen2vl", "llava"), ORIG_BLACK)
    table = postprocess.run_analysis("vdg", frame, FAST)
    assert set(table["model"]) == {"qwen2vl", "llava"}
    assert postprocess.skip_reason(table) is None
    overall = table[table.task_type == "Overall"].set_index("model")
    for model in ("qwen2vl", "llava"):
        n, vdg = _hand_vdg(frame, model)
        assert overall.loc[model, "n"] == n
        assert overall.loc[model, "vdg"] == pytest.approx(vdg, abs=1e-12)


def test_run_analysis_computes_a_digest_from_every_table() -> None:
    frame = reference_frame(("qwen2vl",), ORIG_BLACK)
    summary = postprocess.run_analysis("summary", frame, FAST)
    assert list(summary["model"]) == ["qwen2vl"]
    n, vdg = _hand_vdg(frame, "qwen2vl")
    # the summary's VDG is the vdg table's Overall row, which it reads
    assert (summary["n"].iloc[0], summary["vdg"].iloc[0]) == (n, pytest.approx(vdg, abs=1e-12))


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
    overall = pd.read_csv(written.path / "vdg.csv").query("task_type == 'Overall'").iloc[0]
    assert overall.vdg == pytest.approx(_hand_vdg(frame, "qwen2vl")[1], abs=1e-12)


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


def _tiny_frame() -> pd.DataFrame:
    """One model, one task type, 4 questions: right under orig on v0, v1, v2; under black on v0 only."""
    outcomes = {"orig": [True, True, True, False], "black": [True, False, False, False]}
    return make_frame([("m", c, f"v{i}-q", "T1", o) for c, outs in outcomes.items() for i, o in enumerate(outs)])


def _tiny_run(folder: Path) -> Path:
    """An lmms-eval output folder of model ``probe``: 4 questions of task type T1 under orig and black."""
    samples = {
        f"vdgsynth_vdg_{c}": [sample(f"v{i}-q", c, "A" if (c == "orig" or i % 2) else "B") for i in range(4)]
        for c in ("orig", "black")
    }
    return write_run(folder, "vdg_probe", samples)


def test_run_analysis_returns_the_declared_columns_computed_from_the_frame() -> None:
    table = run_analysis("vdg", _tiny_frame(), ReportSettings(n_resamples=50, min_stratum=1))
    assert list(table.columns) == list(next(t for t in analyses.TABLES if t.name == "vdg").columns)
    overall = table.set_index("task_type").loc["Overall"]
    # 3 of 4 right with the video, 1 of 4 without; d: right only with it (v1, v2), c: only without it (none)
    assert (overall["n"], overall["acc_orig"], overall["acc_black"], overall["vdg"]) == (4, 0.75, 0.25, 0.5)
    assert (overall["d"], overall["c"]) == (2, 0)


def test_run_analysis_without_options_uses_the_defaults() -> None:
    table = run_analysis("vdg", _tiny_frame())
    # ReportSettings(): min_stratum 30 > 4 questions, so the strata are too small for a CI; ci_level 0.95
    assert table["too_small"].tolist() == [True, True] and table["ci_low"].isna().all()
    assert table["ci_level"].tolist() == [0.95, 0.95]


def test_an_unknown_analysis_with_no_near_name_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"Unknown analysis 'zzzzzz'\. Known: coverage, question_sets, ") as info:
        run_analysis("zzzzzz", pd.DataFrame())
    assert "Did you mean" not in str(info.value)


def test_build_report_from_a_frame_names_no_inputs(tmp_path) -> None:
    written = build_report(_tiny_frame(), tmp_path / "report", options=FAST, plots=False)
    assert json.loads((written.path / "report.json").read_text())["inputs"] is None
    assert not (written.path / "plots").exists()


def test_build_report_from_one_folder_path_with_benchmark_and_options_file(tmp_path) -> None:
    run = _tiny_run(tmp_path / "runs" / "probe")
    counts = tmp_path / "options.csv"
    counts.write_text("benchmark,task_type,n_options\nvdgsynth,T1,5\n")
    written = build_report(
        run, tmp_path / "report", options=FAST, benchmark="vdgsynth", options_file=counts, plots=False
    )
    report = json.loads((written.path / "report.json").read_text())
    assert report["inputs"]["runs"] == [str(run)]
    assert report["inputs"]["benchmark"] == "vdgsynth" and report["inputs"]["options_file"] == str(counts)
    # the options file's count reached the frame: T1 has 5 options, by the file's rule
    rows = [(r["task_type"], r["n_options"], r["n_options_rule"]) for r in report["tables"]["option_counts"]["rows"]]
    assert rows == [("T1", 5, RULE_FILE)]


def test_the_former_name_of_the_report_settings_still_reads() -> None:
    """``Options`` was the report's settings before the name was left to the answer options."""
    import postprocess

    assert postprocess.Options is postprocess.ReportSettings
    assert "Options" not in postprocess.__all__
