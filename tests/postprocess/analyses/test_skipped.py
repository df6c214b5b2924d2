"""The report never aborts half-way: what cannot be computed is skipped or named, and inputs that would
silently drop a condition are errors naming the file."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import postprocess.analyses as analyses
from postprocess.analyses import ANALYSES, ReportSettings, run_all, skip_reason
from postprocess.analyses.base import Analysis
from postprocess.analyses.letters import letters_table
from postprocess.reading.files import LogError
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.report import compute_tables, write_report
from tests.helpers.fakelogs import sample, write_run
from tests.helpers.prediction_files import five_option_records, write_records

FAST = ReportSettings(n_resamples=100, stability_resamples=20)


def _no_video_files(tmp_path):
    """Two models whose prediction files carry no video id at all."""
    paths = []
    for model in ("m1", "m2"):
        records = [{k: v for k, v in r.items() if k != "video_uid"} for r in five_option_records(model)]
        paths.append((model, write_records(tmp_path / f"{model}.json", records)))
    return paths


def test_an_analysis_that_cannot_run_is_skipped_and_every_other_table_written(tmp_path):
    frame = load_frame(predictions=_no_video_files(tmp_path), benchmark="egoschema")
    out = tmp_path / "out"
    tables = compute_tables(frame, FAST, out)
    reason = skip_reason(tables["collective"])
    assert reason and "collective accuracy groups questions by 'video_id'" in reason and "video_uid" in reason
    assert skip_reason(tables["collective_distribution"]) and tables["collective"].empty
    ran = [a.name for a in ANALYSES if not skip_reason(tables[a.name])]
    assert set(ran) == {a.name for a in ANALYSES} - {"collective", "collective_distribution"}
    assert len(tables["vdg"]) and len(tables["mcnemar"]) and len(tables["letters"])
    skipped = tables["skipped"].set_index("analysis")
    assert skipped.loc["collective", "reason"] == f"collective was skipped: {reason}"
    assert skipped.loc["collective", "model"] == "" and skipped.loc["collective", "benchmark"] == ""

    written = write_report(tables, out, options=FAST, plots=False)
    for analysis in ANALYSES:
        assert (out / f"{analysis.name}.csv").is_file(), analysis.name
    assert pd.read_csv(out / "collective.csv").empty
    md = (out / "report.md").read_text()
    assert md == written and f"collective was skipped: {reason}" in md
    coverage = md.split("## Coverage", 1)[1].split("\n## ", 1)[0]
    assert f"**Not computed:** collective was skipped: {reason}" in coverage
    assert "`collective.csv` (0 rows): " in md and f"**Skipped:** {reason}" in md
    page = (out / "report.html").read_text()
    assert "Skipped: collective accuracy groups questions by" in page
    data = json.loads((out / "report.json").read_text())
    assert data["tables"]["collective"]["skipped"] == reason and data["tables"]["vdg"]["skipped"] is None
    row = {"analysis": "collective", "model": "", "benchmark": "", "reason": f"collective was skipped: {reason}"}
    assert {**row, "offered": True} in data["skipped"]


def test_any_analysis_raising_value_error_is_skipped_by_the_runner(tmp_path, monkeypatch):
    def broken(frame, options):
        raise ValueError("question 001-1 of model 'm' is odd")

    fake = (*analyses.ANALYSES[:2], Analysis("broken", "always fails", {"x": "x"}, broken), analyses.ANALYSES[2])
    monkeypatch.setattr(analyses, "ANALYSES", fake)
    frame = load_frame(predictions=[("m", _write_small(tmp_path))], benchmark="videomme")
    tables = run_all(frame, FAST, names=[a.name for a in fake] + ["skipped"])
    assert list(tables) == [a.name for a in fake] + ["skipped"]
    assert skip_reason(tables["broken"]) == "question 001-1 of model 'm' is odd."
    assert list(tables["broken"].columns) == ["x"] and tables["broken"].empty
    assert len(tables[fake[3].name]) and skip_reason(tables[fake[3].name]) is None
    assert tables["skipped"].set_index("analysis").loc["broken", "reason"] == (
        "broken was skipped: question 001-1 of model 'm' is odd."
    )


def _write_small(folder):
    records = [
        {"question_id": f"{i:03d}-1", "task_type": "T", "condition": c, "ground_truth": "A", "prediction": p}
        for i in range(6)
        for c, p in (("orig", "A"), ("black", "B" if i % 2 else "A"))
    ]
    return write_records(folder / "small.json", records)


def test_a_letter_outside_the_options_in_a_samples_log_is_unparsed(tmp_path):
    black = [sample(f"v{i}-1", "black", p) for i, p in enumerate(["A", "E", "G", "B"])]
    black[1]["vdg"]["n_options"] = 4  # declared: E is not an option
    black[1]["vdg"]["correct"] = False
    run = write_run(
        tmp_path / "run",
        "m",
        {"vdgsynth_vdg_orig": [sample(f"v{i}-1", "orig", "A") for i in range(4)], "vdgsynth_vdg_black": black},
    )
    frame = load_frame([run])
    rows = frame[frame["condition"] == "black"].set_index("question_id")
    assert rows["status"].tolist() == ["ok", "unparsed", "unparsed", "ok"]
    assert rows.loc["v1-1", "pred"] is None and rows.loc["v2-1", "pred"] is None
    assert rows["correct"].tolist() == [True, False, False, False]
    table = letters_table(frame).set_index("condition")  # runs: no letter it cannot place
    assert table.loc["black", "n_unparsed"] == 2 and table.loc["black", "n_letter"] == 2
    assert table.loc["black", "n_options"] == 4 and table.loc["black", "pred_E"] == 0


def test_an_empty_samples_log_is_an_error_naming_it(tmp_path):
    run = write_run(
        tmp_path / "run",
        "m",
        {"vdgsynth_vdg_orig": [sample("v1-1", "orig", "A")], "vdgsynth_vdg_black": []},
    )
    empty = next(run.glob("*_samples_vdgsynth_vdg_black.jsonl"))
    with pytest.raises(
        LogError, match=rf"{empty.name}: holds no samples, so condition 'black' of m / vdgsynth has no rows"
    ):
        load_frame([run])


def test_a_model_without_black_is_named_not_silently_left_out(tmp_path):
    with_black = five_option_records("a")
    orig_only = five_option_records("b", conditions=("orig",))
    frame = load_frame(
        predictions=[
            ("a", write_records(tmp_path / "a.json", with_black)),
            ("b", write_records(tmp_path / "b.json", orig_only)),
        ],
        benchmark="egoschema",
    )
    tables = run_all(frame, FAST)
    assert set(tables["vdg"]["model"]) == {"a"}
    gaps = tables["skipped"]
    named = gaps[gaps["model"] == "b"].set_index("analysis")["reason"].to_dict()
    needs_black = [
        "question_sets",
        "vdg",
        "vdg_per_question",
        "categories",
        "hard_core",
        "task_type_contrast",
        "dissociation",
        "consistency",
        "split_half",
        "tiers",
        "categories_by_task",
        "models_right",
        "models_right_transition",
        "vdg_across",
    ]
    assert {name: named[name] for name in needs_black} == {
        name: f"no {name} for b: black not run" for name in needs_black
    }
    # Pairwise tables with one qualifying model say so once, for the benchmark.
    pair = gaps[(gaps["analysis"] == "dissociation") & (gaps["model"] == "")]
    assert pair["reason"].tolist() == [
        "no dissociation for egoschema: it compares 2 or more models and only a can take part"
    ]
    summary = tables["summary"].set_index("model")
    assert summary.loc["b", "flags"] == "no-vdg,missing-conditions,left-out"
    assert "no VDG: black not run" in summary.loc["b", "details"]
    assert np.isnan(summary.loc["b", "vdg"]) and summary.loc["a", "flags"] == ""
    md = write_report(tables, tmp_path / "out", plots=False)
    assert f"- no {', '.join(needs_black)} for b: black not run" in md
    # Nobody ran CRF: one line for the benchmark, and no model is flagged for it.
    assert "- no crf, crf_flips, crf_stability for any model of egoschema: a CRF level (crf<N>) not run" in md
