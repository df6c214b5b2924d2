"""The first screen: per model the Overall VDG with its CI, its tier and every flag, in md, html and json."""

from __future__ import annotations

import math

import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.summary import COLUMNS, FLAGS
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.rendering.pages import render_html, render_json, render_markdown
from tests.helpers.frames import make_frame
from tests.helpers.prediction_files import five_option_records, write_records
from tests.helpers.reference_data import reference_frame
from tests.helpers.report_tables import reference_tables

FAST = ReportSettings(n_resamples=100, stability_resamples=20)


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    """'fine' answers with letters; 'broken' answers in prose no parser reads, under orig and black: VDG 0 - 0."""
    folder = tmp_path_factory.mktemp("broken")
    fine = five_option_records("fine", n_questions=30)
    prose = [dict(r, prediction="I think the person is cooking") for r in five_option_records("broken", n_questions=30)]
    prose[0] = dict(prose[0], prediction=None, error="CUDA out of memory")
    frame = load_frame(
        predictions=[
            ("fine", write_records(folder / "f.json", fine)),
            ("broken", write_records(folder / "b.json", prose)),
        ],
        benchmark="egoschema",
    )
    return run_all(frame, FAST)


def test_a_broken_run_is_flagged_next_to_its_vdg(broken):
    summary = broken["summary"].set_index("model")
    assert list(broken["summary"].columns) == list(COLUMNS)
    row = summary.loc["broken"]
    assert row["vdg"] == 0 and row["acc_orig"] == row["acc_black"] == 0 and row["n"] == 29
    assert row["flags"] == "all-unparsed,errors"
    assert "orig: all 29 answers unparsed" in row["details"] and "black: all 30 answers unparsed" in row["details"]
    assert "questions with no answer: orig 1" in row["details"]
    assert summary.loc["fine", "flags"] == ""
    # Fewer questions than the default min_stratum (30) get no tier: "too small".
    fine_n = summary.loc["fine", "n"]
    assert summary.loc["fine", "tier"] == ("too small" if fine_n < 30 else summary.loc["fine", "tier"])
    assert (
        summary.loc["fine", "tier"] in ("high", "mid", "low", "too small") or "straddles" in summary.loc["fine", "tier"]
    )
    md = render_markdown(broken)
    assert md.startswith("# vdg report\n\n## At a glance\n")
    first_screen = md.split("\n## ", 4)[3]  # after the headline and the Findings
    assert first_screen.startswith("Summary\n")
    assert "**1 of 2 model runs have flags:**" in first_screen
    assert "- broken / egoschema: orig: all 29 answers unparsed" in first_screen
    line = next(ln for ln in first_screen.splitlines() if ln.startswith("| broken"))
    # 29 questions: below min_stratum, so the VDG is shown without a CI and the tier is "too small".
    assert "+0.000 " in line and "+0.000 [" not in line and "too small" in line
    assert line.rstrip(" |").endswith("all-unparsed,errors")


def test_summary_in_json_and_html(broken):
    data = render_json(broken, FAST)
    assert data["summary"] == data["tables"]["summary"]["rows"] and len(data["summary"]) == 2
    assert {r["model"]: r["flags"] for r in data["summary"]} == {"broken": "all-unparsed,errors", "fine": ""}
    page = render_html(broken)
    assert page.index('id="summary"') < page.index('id="vdg"')
    assert "1 of 2 model runs have flags:" in page and "broken / egoschema: orig: all 29 answers unparsed" in page


def test_summary_numbers_are_the_vdg_and_tier_tables_and_flags_the_coverage():
    tables = reference_tables()
    frame = reference_frame()
    summary = tables["summary"].set_index("model")
    vdg = tables["vdg"].query("task_type == 'Overall'").set_index("model")
    tiers = tables["tiers"].query("task_type == 'Overall'").set_index("model")
    for model in ("qwen2vl", "llava", "internvl2"):
        for column in ("n", "acc_orig", "acc_black", "vdg", "ci_low", "ci_high"):
            assert math.isclose(summary.loc[model, column], vdg.loc[model, column]), (model, column)
        assert summary.loc[model, "tier"] == tiers.loc[model, "tier"]
        # errors, counted here from the frame: every condition with a question that has no answer.
        rows = frame[(frame["model"] == model) & (frame["status"] == "error")]
        counts = rows.groupby("condition").size()
        assert ("errors" in summary.loc[model, "flags"].split(",")) == bool(len(counts))
        for condition, n in counts.items():
            assert f"{condition} {n}" in summary.loc[model, "details"]
    # qwen2vl ran shuffled and single, which llava (no single) and internvl2 (neither) lack: what other models ran is
    # theirs, so no model is flagged for it (orig and black are run by every model here).
    assert "missing-conditions" not in ",".join(summary["flags"])
    assert "not run for this model" not in " ".join(summary["details"])
    assert summary.loc["qwen2vl", "conditions"] == "orig,black,single,shuffled,crf18,crf23,crf28,crf33,crf38"
    assert set(",".join(summary["flags"]).split(",")) - {""} <= set(FLAGS)


def test_the_ci_method_and_resamples_are_those_of_the_vdg_row_quoted():
    # The summary states how the CI it quotes was computed, from the vdg row: under the default score interval no
    # resample is drawn (n_resamples 0, not options.n_resamples), and under ci_method="resample" the vdg row's own
    # count; its conventions sentence never claims a bootstrap the CI did not use.
    frame = reference_frame(("qwen2vl", "llava"))
    for options in (FAST, ReportSettings(n_resamples=100, stability_resamples=20, ci_method="resample")):
        tables = run_all(frame, options)
        summary = tables["summary"].set_index("model")
        vdg = tables["vdg"].query("task_type == 'Overall'").set_index("model")
        for model in ("qwen2vl", "llava"):
            assert summary.loc[model, "ci_method"] == vdg.loc[model, "ci_method"] != ""
            assert summary.loc[model, "n_resamples"] == vdg.loc[model, "n_resamples"]
        if options.ci_method == "score":
            assert (summary["n_resamples"] == 0).all() and summary["ci_method"].str.startswith("tango").all()
            intro = render_markdown(tables).split("## Summary\n\n", 1)[1].split("\n\n", 1)[0]  # intro, conventions
            assert "bootstrap" not in intro and "resamples" not in intro
            assert intro.count("Tango's score interval") == 2, intro  # the intro's CI and the conventions sentence
        else:
            assert (summary["ci_method"] == "monte carlo").all() and (summary["n_resamples"] >= 100).all()


def test_the_headline_counts_only_flags_about_the_vdg():
    """A probe whose answers are all unparsed and a CRF level with errors are flagged on the run, not on its VDG; an
    error under black is both."""

    def run(model: str, black_error: bool) -> list:
        rows = []
        for i in range(40):
            q = f"v{i:02d}-1"
            rows += [
                (model, "orig", q, "T", i % 2 == 0),
                (model, "black", q, "T", "e" if black_error and i < 2 else i % 4 == 0),
            ]
            rows += [(model, "video_only", q, "T", "u"), (model, "crf28", q, "T", "e" if i < 3 else True)]
        return rows

    frame = make_frame(run("clean", False) + run("broken", True))
    summary = run_all(frame, ReportSettings(n_resamples=200, stability_resamples=50), workers=1)["summary"]
    rows = summary.set_index("model")
    assert rows.loc["clean", "flags"] == "all-unparsed,errors" and rows.loc["clean", "headline_flags"] == ""
    assert rows.loc["broken", "flags"] == "all-unparsed,errors" and rows.loc["broken", "headline_flags"] == "errors"
    assert "video_only: all 40 answers unparsed" in rows.loc["clean", "details"]


def test_a_backbone_run_is_flagged_backbone_not_missing_its_vdg():
    from tests.postprocess.analyses.test_leakage import BACKBONE, LVLM, _frame, _outcomes

    tables = run_all(_frame(_outcomes()), ReportSettings(min_stratum=10, n_resamples=200), workers=1)
    summary = tables["summary"].set_index("model")
    assert summary.loc[BACKBONE, "flags"].split(",")[0] == "backbone"
    assert "no-vdg" not in summary.loc[BACKBONE, "flags"] and "missing-conditions" not in summary.loc[BACKBONE, "flags"]
    assert summary.loc[BACKBONE, "headline_flags"] == ""
    assert f"the language backbone of {LVLM}" in summary.loc[BACKBONE, "details"]
    assert "missing-conditions" in summary.loc[LVLM, "flags"]  # the LVLM ran no black: its own flag stays
