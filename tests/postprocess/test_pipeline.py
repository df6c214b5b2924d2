"""postprocess.pipeline.make_report: one in-process report from a tiny tidy frame, with and without plots, and
what it writes (no lmms-eval run)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from postprocess.analyses import TABLES
from postprocess.pipeline import make_report
from postprocess.reading.files import LogError
from postprocess.report import ReportError, partial_dir
from postprocess.settings import ReportSettings
from postprocess.stats import paired_difference_ci
from tests.helpers.frames import make_frame

#: Few resamples, and strata of any size get their CI.
OPTIONS = ReportSettings(n_resamples=50, stability_resamples=20, min_stratum=1)


def _frame() -> pd.DataFrame:
    """One model, one task type, 4 questions: right under orig on v0, v1, v2; under black on v0 only."""
    outcomes = {"orig": [True, True, True, False], "black": [True, False, False, False]}
    return make_frame([("m", c, f"v{i}-q", "T1", o) for c, outs in outcomes.items() for i, o in enumerate(outs)])


def test_make_report_writes_every_table_and_the_three_pages(tmp_path):
    out = tmp_path / "out"
    written = make_report(_frame(), out, options=OPTIONS, inputs={"runs": ["m=dir"]}, plots=False, workers=1)
    assert written.path == out.absolute() and (out / "report.md").read_text() == written
    assert {p.name for p in out.iterdir()} == {f"{t.name}.csv" for t in TABLES} | {
        "report.md",
        "report.html",
        "report.json",
    }
    assert not partial_dir(out).exists()  # the CSVs kept while computing were moved into the report
    overall = pd.read_csv(out / "vdg.csv").set_index("task_type").loc["Overall"]
    # 3 of 4 right with the video, 1 of 4 without; d: right only with it (v1, v2), c: only without it (none)
    assert (overall["n"], overall["acc_orig"], overall["acc_black"]) == (4, 0.75, 0.25)
    assert (overall["vdg"], overall["d"], overall["c"]) == (0.5, 2, 0)
    # per-question VDG (0, 1, 1, 0): the written CI is the statistics module's score interval of those gaps (one
    # question a video: no clustering), with width although every gap is >= 0
    tango = paired_difference_ci([0, 1, 1, 0], level=0.95)
    assert (overall["ci_low"], overall["ci_high"]) == pytest.approx((tango.low, tango.high))
    assert overall["ci_method"] == "tango score" and overall["resample_unit"] == "question"
    assert overall["ci_low"] < 0 < 0.5 < overall["ci_high"] < 1
    report = json.loads((out / "report.json").read_text())
    assert report["inputs"] == {"runs": ["m=dir"]}
    assert report["options"]["n_resamples"] == 50 and report["options"]["min_stratum"] == 1


def test_a_frame_given_as_a_function_is_called_once(tmp_path):
    calls = []

    def frame() -> pd.DataFrame:
        calls.append(1)
        return _frame()

    written = make_report(frame, tmp_path / "out", options=OPTIONS, plots=False, workers=1)
    assert calls == [1] and "## Visual Dependency Gap by task type" in written
    assert json.loads((written.path / "report.json").read_text())["inputs"] is None


def test_the_plots_the_report_shows_are_the_ones_drawn(tmp_path):
    written = make_report(_frame(), tmp_path / "out", options=OPTIONS)
    drawn = {p.name for p in (written.path / "plots").iterdir()}
    assert drawn and drawn == set(re.findall(r"\]\(plots/([^)]+)\)", written))  # report.md shows each PNG


def test_a_folder_with_other_files_is_refused_and_left_as_it_was(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ReportError, match=r"holds files that are not part of a vdg report \(notes.txt\)"):
        make_report(_frame(), out, options=OPTIONS, plots=False, workers=1)
    assert [p.name for p in out.iterdir()] == ["notes.txt"] and not partial_dir(out).exists()


def test_what_reading_the_frame_raises_stops_the_report(tmp_path):
    def unreadable() -> pd.DataFrame:
        raise LogError("run.jsonl:3: not JSON")

    with pytest.raises(LogError, match="run.jsonl:3: not JSON"):
        make_report(unreadable, tmp_path / "out", options=OPTIONS)
    assert not (tmp_path / "out").exists()
