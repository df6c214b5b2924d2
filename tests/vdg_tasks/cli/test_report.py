"""The report side of the `vdg` command (vdg_tasks.cli.report): report, leaderboard, stats (thin wrappers;
numbers tested elsewhere)."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest
from scipy import stats as st

from tests.helpers.fakelogs import sample, write_run
from tests.helpers.reference_data import REFERENCE, reference_predictions
from vdg_tasks.cli import main

FAST = ["--resamples", "200", "--stability-resamples", "50"]


def _prediction_args(models=("qwen2vl", "llava", "internvl2")) -> list[str]:
    return [x for m, path in reference_predictions() if m in models for x in ("--predictions", f"{m}={path}")]


def test_report_from_prediction_files(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["report", *_prediction_args(), "--benchmark", "videomme", "--out", str(out), *FAST]) == 0
    terminal = capsys.readouterr()
    printed = terminal.out.splitlines()
    markdown = (out / "report.md").read_text().splitlines()
    assert len(printed) <= 40 and printed[0] == "## At a glance" and "## Findings" in printed
    assert terminal.err.strip().endswith(f"report written to {out.resolve()}")
    assert "vdg report: writing report.md, report.html, report.json and the plots\n" in terminal.err  # progress
    position = markdown.index("## At a glance")
    assert markdown[:position] == ["# vdg report", ""]
    for line in printed:  # the report's own lines, in its order (a last "..." line says what is left out)
        if not line.startswith("... "):
            position = markdown.index(line, position)
    for name in ("vdg.csv", "ladder.csv", "coverage.csv", "report.html", "report.json", "plots/vdg_by_task.png"):
        assert (out / name).is_file(), name
    vdg = pd.read_csv(out / "vdg.csv").set_index(["model", "task_type"])
    assert vdg.loc[("qwen2vl", "Overall"), "n"] == 547  # reference: matched set
    data = json.loads((out / "report.json").read_text())
    assert data["options"]["n_resamples"] == 200 and data["options"]["missing"] == "exclude"
    assert data["inputs"]["benchmark"] == "videomme" and len(data["inputs"]["predictions"]) == 9


def test_report_options_reach_the_tables(tmp_path, capsys):
    tier_map = tmp_path / "tiers.csv"
    tier_map.write_text("task_type,tier\nOCR Problems,high\nTemporal Reasoning,low\n")
    temporal_map = tmp_path / "temporal.json"
    temporal_map.write_text(json.dumps({"Temporal Reasoning": "temporal"}))
    out = tmp_path / "out"
    args = ["report", *_prediction_args(("llava",)), "--benchmark", "videomme", "--out", str(out), *FAST]
    args += ["--missing", "incorrect", "--cluster", "--seed", "7", "--ci-level", "0.9", "--alpha", "0.01"]
    args += ["--equivalence-margin", "0.02", "--tier-high", "0.4", "--tier-low", "0.05", "--group-by", "video_id"]
    args += ["--tier-map", str(tier_map), "--temporal-map", str(temporal_map), "--no-plots"]
    args += ["--min-stratum", "12", "--question-set", "per-model", "--ci-method", "resample", "--mc-se-target", "0"]
    assert main(args) == 0
    capsys.readouterr()
    options = json.loads((out / "report.json").read_text())["options"]
    assert options == {
        "missing": "incorrect",
        "n_resamples": 200,
        "ci_level": 0.9,
        "cluster": "video",
        "alpha": 0.01,
        "equivalence_margin": 0.02,
        "stability_resamples": 50,
        "tier_high": 0.4,
        "tier_low": 0.05,
        "tier_map": {"OCR Problems": "high", "Temporal Reasoning": "low"},
        "temporal_map": {"Temporal Reasoning": "temporal"},
        "group_by": "video_id",
        "seed": 7,
        "task_types": [],
        "min_n": 0,
        "align": "strict",
        "by": [],
        "min_stratum": 12,
        "question_set": "per-model",
        "ci_method": "resample",
        "mc_se_target": 0.0,
        "backbones": {},
    }
    vdg = pd.read_csv(out / "vdg.csv")
    assert (vdg["missing_policy"] == "incorrect").all() and (vdg["resample_unit"] == "video").all()
    assert (vdg["ci_level"] == 0.9).all()
    assert not (out / "plots").exists()


def test_report_from_run_folders(tmp_path, capsys):
    samples = {
        f"vdgsynth_vdg_{cond}": [sample(f"v{i}-1", cond, "A" if (i % 3 or cond == "orig") else "B") for i in range(12)]
        for cond in ("orig", "black")
    }
    run = write_run(tmp_path / "run", "m", samples)
    out = tmp_path / "out"
    assert main(["report", f"probe={run}", "--out", str(out), "--resamples", "100", "--no-plots"]) == 0
    vdg = pd.read_csv(out / "vdg.csv")
    assert set(vdg["model"]) == {"probe"} and "Visual Dependency Gap" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--predictions", "m=/nonexistent/preds.json"], r"no such predictions file"),
        (["--predictions", "no-equals-sign"], r"--predictions expects MODEL=FILE"),
        ([], r"nothing to read"),
        (
            ["--predictions", f"m={REFERENCE / 'qwen2vl_black_results.json'}", "--tier-map", "/nonexistent.csv"],
            r"--tier-map /nonexistent.csv: no such file",
        ),
        (["--predictions", f"m={REFERENCE / 'qwen2vl_black_results.json'}", "--ci-level", "1.5"], r"ci_level"),
    ],
)
def test_report_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, message):
    assert main(["report", *args, "--benchmark", "videomme", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vdg report: ") and err.count("\n") == 1
    assert re.search(message, err)


def test_bad_maps_are_refused(tmp_path, capsys):
    bad_json = tmp_path / "map.json"
    bad_json.write_text('{"OCR Problems": 3}')
    bad_csv = tmp_path / "map.csv"
    bad_csv.write_text("OCR Problems,high,extra\n")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    base = ["report", "--predictions", f"m={REFERENCE / 'qwen2vl_black_results.json'}", "--benchmark", "videomme"]
    for path, message in (
        (bad_json, "expected a JSON object"),
        (bad_csv, "row 1 has 3 cells"),
        (broken, "not valid JSON"),
    ):
        assert main([*base, "--out", str(tmp_path / "o"), "--tier-map", str(path)]) == 2
        assert message in capsys.readouterr().err


def test_an_analysis_that_cannot_run_is_skipped_and_the_report_written(tmp_path, capsys, monkeypatch):
    import postprocess.analyses as analyses
    from postprocess.analyses.base import Analysis

    def broken(frame, options):
        raise ValueError("question 001-1 of model 'llava' is odd")

    first = analyses.ANALYSES[0]
    monkeypatch.setattr(analyses, "ANALYSES", (first, Analysis("broken", "fails", {"x": "x"}, broken)))
    out = tmp_path / "out"
    args = ["report", *_prediction_args(("llava",)), "--benchmark", "videomme", "--out", str(out), "--no-plots"]
    assert main(args) == 0
    printed = capsys.readouterr()
    assert "broken was skipped: question 001-1 of model 'llava' is odd." in printed.out
    assert printed.err.strip().endswith(f"report written to {out.resolve()}")
    assert (out / f"{first.name}.csv").is_file() and (out / "report.md").is_file()
    assert pd.read_csv(out / "broken.csv").empty
    data = json.loads((out / "report.json").read_text())
    assert data["tables"]["broken"]["skipped"] == "question 001-1 of model 'llava' is odd."


def test_out_holding_other_files_is_refused_in_one_line(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep")
    args = ["report", *_prediction_args(("llava",)), "--benchmark", "videomme", "--out", str(out), "--no-plots"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("vdg report: --out ") and "notes.txt" in err and err.count("\n") == 1
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("suffix", [".md", ".csv", ".json"])
def test_leaderboard(tmp_path, capsys, suffix):
    path = tmp_path / f"board{suffix}"
    assert main(["leaderboard", *_prediction_args(), "--benchmark", "videomme", "--out", str(path), *FAST]) == 0
    assert capsys.readouterr().out.strip() == str(path)
    if suffix == ".csv":
        board = pd.read_csv(path)
        assert board["model"].tolist() == ["llava", "internvl2", "qwen2vl"]


def test_leaderboard_bad_input(tmp_path, capsys):
    assert main(["leaderboard", *_prediction_args(("llava",)), "--benchmark", "videomme",
                 "--out", str(tmp_path / "board.txt")]) == 2  # fmt: skip
    assert "written as .md, .csv or .json" in capsys.readouterr().err
    assert main(["leaderboard", "--out", str(tmp_path / "b.md")]) == 2
    assert capsys.readouterr().err.startswith("vdg leaderboard: nothing to read")


def _stats(capsys, *args: str) -> dict:
    assert main(["stats", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_stats_commands(capsys):
    w = _stats(capsys, "wilson", "62", "600")
    assert w["k"] == 62 and w["n"] == 600 and w["level"] == 0.95 and w["low"] < 62 / 600 < w["high"]
    assert _stats(capsys, "wilson", "5", "10", "--level", "0.9")["level"] == 0.9
    # Reference T2: InternVL2 vs Qwen2-VL on orig, b01/b10 = 66/88 -> p_cc 0.0906.
    m = _stats(capsys, "mcnemar", "66", "88")
    assert abs(m["p_cc"] - 0.0906) < 5e-5 and math.isclose(m["p_exact"], st.binomtest(66, 154, 0.5).pvalue)
    # Reference 4.4 Fisher: cells 11, 7, 159, 368 -> OR 3.6370, one-sided p 0.0075.
    f = _stats(capsys, "fisher", "11", "7", "159", "368")
    assert (
        f["table"] == [[11, 7], [159, 368]]
        and abs(f["odds_ratio"] - 3.6370) < 5e-5
        and abs(f["p_greater"] - 0.0075) < 5e-5
    )
    h = _stats(capsys, "cohen-h", "0.6", "0.4")
    assert math.isclose(h["h"], 2 * math.asin(math.sqrt(0.6)) - 2 * math.asin(math.sqrt(0.4)))
    c = _stats(capsys, "chi2-uniform", "10", "20", "30", "40")
    assert c["df"] == 3 and math.isclose(c["p"], st.chisquare([10, 20, 30, 40]).pvalue)
    assert _stats(capsys, "fisher", "0", "5", "5", "5")["odds_ratio"] == 0.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["wilson", "5", "x"], "N must be an integer, got 'x'"),
        (["wilson", "11", "10"], "exceeds n"),
        (["wilson", "1", "10", "--level", "2"], "level"),
        (["mcnemar", "0", "0"], "no discordant pairs"),
        (["mcnemar", "-1", "3"], "b01"),
        (["fisher", "0", "0", "5", "5"], "empty"),
        (["cohen-h", "1.2", "0.5"], "p1"),
        (["cohen-h", "a", "0.5"], "P1 must be a number"),
        (["chi2-uniform", "4"], "at least 2 categories"),
        (["chi2-uniform", "1", "2.5"], "C2 must be an integer"),
    ],
)
def test_stats_bad_input_exit_2(capsys, args, message):
    assert main(["stats", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"vdg stats {args[0]}: ") and message in err and err.count("\n") == 1


def test_stats_wrong_arity_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["stats", "fisher", "1", "2", "3"])
    assert exc.value.code == 2 and "usage" in capsys.readouterr().err


@pytest.mark.slow
def test_report_with_worker_processes_equals_report_in_one_process(tmp_path, capsys):
    # Background plots (and the analyses in workers when forced) give the files of one process.
    base = ["report", *_prediction_args(("llava", "qwen2vl")), "--benchmark", "videomme", *FAST]
    assert main([*base, "--out", str(tmp_path / "one"), "--workers", "1"]) == 0
    assert main([*base, "--out", str(tmp_path / "many"), "--workers", "2"]) == 0
    one, many = tmp_path / "one", tmp_path / "many"
    names = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(many) for p in many.rglob("*") if p.is_file())
    assert any(str(n).startswith("plots/") for n in names)
    for name in names:
        assert (one / name).read_bytes() == (many / name).read_bytes(), name
    assert main([*base, "--out", str(tmp_path / "none"), "--workers", "0"]) == 2
    assert "--workers 0: give at least 1" in capsys.readouterr().err
