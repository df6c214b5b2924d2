"""`vdg report` end to end: the published reference data plus generated EgoSchema-style files (5 options,
ids in q_uid / video_uid), through the API and through the `vdg` command in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from postprocess.analyses import ANALYSES, ReportSettings, skip_reason
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.report import compute_tables, write_report
from tests.helpers.prediction_files import five_option_records, letter_counts, write_records
from tests.helpers.reference_data import ORIG_BLACK, reference_predictions

FAST = ReportSettings(n_resamples=200, stability_resamples=50)
VDG = Path(sys.executable).with_name("vdg")


def _ego_files(folder: Path) -> list[tuple[str, Path]]:
    out = []
    for model in ("ego-a", "ego-b"):
        records = [dict(r, benchmark="egoschema") for r in five_option_records(model)]
        out.append((model, write_records(folder / f"{model}.jsonl", records)))
    return out


def _check_ego(out: Path, models: tuple[str, ...]) -> None:
    """What every run with the generated EgoSchema files must show, read back from the written files."""
    letters = pd.read_csv(out / "letters.csv")
    ego = letters[letters["benchmark"] == "egoschema"]
    for model in models:
        records = five_option_records(model)
        for condition in ("orig", "black"):
            row = ego[(ego["model"] == model) & (ego["condition"] == condition)].iloc[0]
            assert row["pred_E"] == letter_counts(records, condition)["E"] > 0 and row["n_unparsed"] == 0
            assert row["n_options"] == 5 and row["chance"] == pytest.approx(0.2)
    coverage = pd.read_csv(out / "coverage.csv", keep_default_na=False)
    assert (coverage.loc[coverage["benchmark"] == "egoschema", "flag"] == "").all()
    collective = pd.read_csv(out / "collective.csv")
    # 60 questions, 3 per video (video_uid): 20 groups per model and condition.
    assert (collective.loc[collective["benchmark"] == "egoschema", "n_groups"] == 20).all()
    sources = pd.read_csv(out / "sources.csv")
    ego_sources = sources[sources["benchmark"] == "egoschema"]
    assert set(ego_sources["question_id_field"]) == {"q_uid"} and set(ego_sources["video_id_field"]) == {"video_uid"}
    assert set(ego_sources["n_options_source"]) == {"benchmark 'egoschema' declares 5"}
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False).set_index("model")
    for model in models:
        assert summary.loc[model, "flags"] == "" and summary.loc[model, "benchmark"] == "egoschema"
    assert re.findall(r"^## (.+)$", (out / "report.md").read_text(), flags=re.M)[:2] == ["At a glance", "Findings"]
    data = json.loads((out / "report.json").read_text())
    assert {f["file"] for f in data["inputs"]["files"]} >= {str(p) for p in ego_sources["file"]}


@pytest.mark.slow
def test_api_reference_and_egoschema_together(tmp_path):
    predictions = reference_predictions(files=ORIG_BLACK) + _ego_files(tmp_path)
    frame = load_frame(predictions=predictions, benchmark="videomme")
    out = tmp_path / "report"
    tables = compute_tables(frame, FAST, out)
    assert not any(skip_reason(tables[a.name]) for a in ANALYSES)
    written = write_report(tables, out, options=FAST, inputs={"predictions": [[m, str(p)] for m, p in predictions]})
    assert written.path == out
    _check_ego(out, ("ego-a", "ego-b"))
    vdg = pd.read_csv(out / "vdg.csv").set_index(["model", "benchmark", "task_type"])
    assert vdg.loc[("qwen2vl", "videomme", "Overall"), "n"] == 547  # the reference's matched set
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False).set_index("model")
    assert summary.loc["qwen2vl", "flags"] == "errors" and summary.loc["qwen2vl", "n"] == 547
    # Pairs never cross benchmarks: the egoschema pair is compared on its own.
    mcnemar = pd.read_csv(out / "mcnemar.csv")
    assert {tuple(p) for p in mcnemar[["model_a", "model_b"]].drop_duplicates().to_numpy()} == {
        ("internvl2", "llava"),
        ("internvl2", "qwen2vl"),
        ("llava", "qwen2vl"),
        ("ego-a", "ego-b"),
    }


@pytest.mark.skipif(not VDG.is_file(), reason="the vdg command is installed with the package (make venv)")
@pytest.mark.slow
def test_cli_on_an_egoschema_file(tmp_path):
    (model, path), _ = _ego_files(tmp_path)
    out = tmp_path / "out"
    args = [str(VDG), "report", "--predictions", f"{model}={path}", "--benchmark", "egoschema", "--out", str(out)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("## At a glance\n") and "\n## Findings\n" in done.stdout
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False)
    assert summary[["model", "benchmark", "flags"]].to_dict("records") == [
        {"model": model, "benchmark": "egoschema", "flags": ""}
    ]
    _check_ego(out, (model,))


@pytest.mark.skipif(not VDG.is_file(), reason="the vdg command is installed with the package (make venv)")
@pytest.mark.slow
def test_cli_on_the_reference_with_egoschema_files(tmp_path):
    predictions = reference_predictions(files=ORIG_BLACK) + _ego_files(tmp_path)
    out = tmp_path / "out"
    args = [str(VDG), "report", *(x for m, p in predictions for x in ("--predictions", f"{m}={p}"))]
    args += ["--benchmark", "videomme", "--out", str(out), "--resamples", "200", "--stability-resamples", "50"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    _check_ego(out, ("ego-a", "ego-b"))
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False)
    assert len(summary) == 5 and set(summary["benchmark"]) == {"videomme", "egoschema"}
