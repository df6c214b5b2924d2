"""Selection, alignment and stratification: --task-types, --min-n, --align, --by, and prediction-file settings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import run_all, skip_reason
from postprocess.analyses.base import ReportSettings
from postprocess.analyses.selection import PATTERNS, by_field_analyses, select, selection_table
from postprocess.reading.files import LogError
from postprocess.reading.frame import alignment
from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.frames import outcome_fields, tidy_frame, tidy_row
from tests.helpers.prediction_files import write_records

OPTIONS = ReportSettings(n_resamples=50)


def _frame() -> pd.DataFrame:
    """Two models, orig and black, three task types (t1: 4 questions, t2: 4, t3: 1), duration short/long."""
    rows = []
    rng = np.random.default_rng(0)
    questions = [
        (f"v{i}-0", "t1" if i < 4 else "t2" if i < 8 else "t3", "short" if i % 2 else "long") for i in range(9)
    ]
    for model in ("m1", "m2"):
        for condition, p in (("orig", 0.8), ("black", 0.3)):
            for qid, task_type, duration in questions:
                value = bool(rng.random() < p)
                rows.append(
                    tidy_row(model, condition, qid, task_type=task_type, duration=duration, **outcome_fields(value))
                )
    return tidy_frame(rows)


def _vdg_by_hand(frame: pd.DataFrame, model: str, column: str, value: str) -> tuple[int, float]:
    sub = frame[(frame["model"] == model) & (frame[column] == value)]
    pivot = sub.pivot(index="question_id", columns="condition", values="correct").astype(bool)
    diff = pivot["orig"].astype(int) - pivot["black"].astype(int)
    return len(diff), float(diff.mean())


def test_vdg_by_duration_matches_a_hand_count():
    frame = _frame()
    tables = run_all(
        frame, ReportSettings(n_resamples=50, by=("duration",)), names=["vdg_by_duration", "accuracy_by_duration"]
    )
    table = tables["vdg_by_duration"]
    assert skip_reason(table) is None
    assert "duration" in table.columns and "task_type" not in table.columns
    for model in ("m1", "m2"):
        for value in ("short", "long"):
            n, vdg = _vdg_by_hand(frame, model, "duration", value)
            row = table[(table["model"] == model) & (table["duration"] == value)].iloc[0]
            assert row["n"] == n
            assert row["vdg"] == pytest.approx(vdg)
        overall = table[(table["model"] == model) & (table["duration"] == "Overall")].iloc[0]
        assert overall["n"] == 9
    acc = tables["accuracy_by_duration"]
    sub = frame[(frame["model"] == "m1") & (frame["condition"] == "orig") & (frame["duration"] == "long")]
    row = acc[(acc["model"] == "m1") & (acc["condition"] == "orig") & (acc["duration"] == "long")].iloc[0]
    assert row["n"] == len(sub) and row["acc"] == pytest.approx(sub["correct"].astype(bool).mean())


def test_by_tables_are_named_per_field_and_documented_as_patterns():
    names = [a.name for a in by_field_analyses(ReportSettings(by=("duration", "domain")))]
    assert names == [
        "vdg_by_duration",
        "accuracy_by_duration",
        "ladder_by_duration",
        "vdg_by_domain",
        "accuracy_by_domain",
        "ladder_by_domain",
    ]
    assert set(PATTERNS) == {"vdg_by_<field>", "accuracy_by_<field>", "ladder_by_<field>"}


def test_by_an_empty_field_is_none_and_unknown_fields_name_the_available_columns():
    frame = _frame()
    frame["domain"] = np.where(frame["question_id"].str.startswith(("v0", "v1")), "Sports", "")
    table = run_all(frame, ReportSettings(n_resamples=20, by=("domain",)), names=["vdg_by_domain"])["vdg_by_domain"]
    assert set(table["domain"]) == {"Sports", "(none)", "Overall"}
    with pytest.raises(ValueError, match=r"--by nosuch: no such question field; available: .*duration.*domain"):
        run_all(frame, ReportSettings(by=("nosuch",)), names=["vdg"])


def test_task_types_restrict_every_table_and_unknown_names_list_the_known():
    frame = _frame()
    tables = run_all(frame, ReportSettings(n_resamples=20, task_types=("t1",)), names=["vdg", "accuracy", "selection"])
    assert set(tables["vdg"]["task_type"]) == {"t1", "Overall"}
    overall = tables["vdg"][tables["vdg"]["task_type"] == "Overall"]
    assert set(overall["n"]) == {4}
    notes = tables["selection"]
    left_out = notes[notes["kind"] == "task_types"]
    assert set(left_out["task_type"]) == {"t2", "t3"}
    # t1 (4 questions) stays, listed as below min_stratum; the unselected types are not listed as small
    assert notes.loc[notes["kind"] == "too_small", "task_type"].tolist() == ["t1"]
    with pytest.raises(ValueError, match=r"unknown task type\(s\) t9; known: t1, t2, t3"):
        select(frame, ReportSettings(task_types=("t1", "t9")))


@pytest.mark.parametrize(
    "options", [ReportSettings(n_resamples=20, min_stratum=2), ReportSettings(n_resamples=20, min_n=2)]
)
def test_small_task_types_stay_without_inference_and_are_listed(options):
    """min_stratum (min_n its former spelling) no longer drops a task type: it keeps n and vdg, loses its CI."""
    frame = _frame()
    tables = run_all(frame, options, names=["vdg", "selection"])
    vdg = tables["vdg"].set_index(["model", "task_type"])
    for model in ("m1", "m2"):
        small = vdg.loc[(model, "t3")]
        n, gap = _vdg_by_hand(frame, model, "task_type", "t3")
        assert small["n"] == n == 1 and small["vdg"] == pytest.approx(gap) and bool(small["too_small"])
        assert np.isnan(small["ci_low"]) and np.isnan(small["ci_high"]) and small["ci_method"] == ""
        assert not vdg.loc[(model, "t1"), "too_small"] and np.isfinite(vdg.loc[(model, "t1"), "ci_low"])
        assert vdg.loc[(model, "Overall"), "n"] == 9
    notes = tables["selection"]
    assert notes[["kind", "benchmark", "task_type", "n_questions", "n_dropped"]].values.tolist() == [
        ["too_small", "b", "t3", 1, 0]
    ]
    assert "fewer than min_stratum 2" in notes["reason"].iloc[0]
    assert len(selection_table({}, frame)) == 0  # nothing selected: nothing noted
    assert len(run_all(frame, ReportSettings(n_resamples=20, min_stratum=1), names=["selection"])["selection"]) == 0


def _predictions(path: Path, model: str, conditions: dict[str, list[str]], **fields: object) -> Path:
    records = []
    for condition, qids in conditions.items():
        for qid in qids:
            records.append(
                {
                    "model": model,
                    "benchmark": "bench",
                    "condition": condition,
                    "question_id": qid,
                    "video_id": qid.split("-")[0],
                    "task_type": "t",
                    "ground_truth": "A",
                    "prediction": "A" if condition == "orig" else "B",
                    "n_options": 4,
                    **fields,
                }
            )
    return write_records(path, records)


def test_strict_refuses_and_intersect_compares_the_shared_questions(tmp_path):
    path = _predictions(
        tmp_path / "p.jsonl", "m", {"orig": ["q1-0", "q2-0", "q3-0", "q4-0"], "black": ["q1-0", "q2-0", "q5-0"]}
    )
    with pytest.raises(LogError, match="condition 'black' lacks"):
        load_frame(predictions=[("m", path)])
    frame = load_frame(predictions=[("m", path)], align="intersect")
    assert sorted(frame["question_id"].unique()) == ["q1-0", "q2-0"]
    drops = {(r["condition"], r["n_questions"], r["n_dropped"]) for r in alignment(frame)}
    assert drops == {("orig", 4, 2), ("black", 3, 1)}
    tables = run_all(frame, OPTIONS, names=["vdg", "selection"])
    assert tables["vdg"].loc[tables["vdg"]["task_type"] == "Overall", "n"].tolist() == [2]
    notes = tables["selection"].set_index("condition")
    assert notes.loc["orig", "n_dropped"] == 2 and notes.loc["black", "n_dropped"] == 1
    assert set(notes["kind"]) == {"align", "too_small"}
    assert alignment(load_frame(predictions=[("m", path)], align="intersect")) is not None
    strict_ok = _predictions(tmp_path / "ok.jsonl", "m", {"orig": ["q1-0"], "black": ["q1-0"]})
    assert alignment(load_frame(predictions=[("m", strict_ok)])) is None


def test_a_setting_is_an_axis_not_a_duplicate(tmp_path):
    qids = ["q1-0", "q2-0", "q3-0"]
    records = []
    for setting in ("8f", "32f"):
        for condition in ("orig", "black"):
            for qid in qids:
                records.append(
                    {
                        "model": "m",
                        "benchmark": "bench",
                        "condition": condition,
                        "question_id": qid,
                        "task_type": "t",
                        "ground_truth": "A",
                        "prediction": "A" if (condition == "orig" and setting == "32f") else "B",
                        "n_options": 4,
                        "setting": setting,
                    }
                )
    path = write_records(tmp_path / "p.json", records)
    frame = load_frame(predictions=[("m", path)])
    assert sorted(frame["model"].unique()) == ["m@32f", "m@8f"]
    assert set(frame["sampling"]) == {"frames:8", "frames:32"}
    assert set(frame["frames"].astype(int)) == {8, 32}
    sweep = run_all(frame, OPTIONS, names=["sampling_sweep"])["sampling_sweep"]
    assert sweep[["model", "value", "setting_source"]].values.tolist() == [
        ["m", 8.0, "sampling"],
        ["m", 32.0, "sampling"],
    ]
    assert sweep["vdg"].tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    ("fields", "sampling", "label"),
    [
        ({"fps": 0.5}, "fps:0.5", "m@0.5fps"),
        ({"fps": 2}, "fps:2", "m@2fps"),
        ({"frames": 16}, "frames:16", "m@16f"),
        ({"setting": "fps:1"}, "fps:1", "m@1fps"),
        ({"setting": "high-res"}, "", "m@high-res"),
    ],
)
def test_setting_fields_feed_sampling(tmp_path, fields, sampling, label):
    path = _predictions(tmp_path / "p.csv", "m", {"orig": ["q1-0"], "black": ["q1-0"]}, **fields)
    frame = load_frame(predictions=[("m", path)])
    assert set(frame["sampling"]) == {sampling}
    assert set(frame["model"]) == {label}


def test_bad_frames_value_names_the_record(tmp_path):
    path = _predictions(tmp_path / "p.jsonl", "m", {"orig": ["q1-0"]}, frames="many")
    with pytest.raises(LogError, match=r"p.jsonl:1: frames 'many' is not a number of frames"):
        load_frame(predictions=[("m", path)])


def test_prediction_files_keep_extra_fields_and_domain(tmp_path):
    a = _predictions(tmp_path / "a.jsonl", "m1", {"orig": ["q1-0"], "black": ["q1-0"]}, domain="Sports", scene="day")
    b = _predictions(tmp_path / "b.jsonl", "m2", {"orig": ["q1-0"], "black": ["q1-0"]}, sub_category="Football")
    frame = load_frame(predictions=[("m1", a), ("m2", b)])
    by_model = frame.groupby("model")
    assert by_model["domain"].first().to_dict() == {"m1": "Sports", "m2": ""}
    assert by_model["sub_category"].first().to_dict() == {"m1": "", "m2": "Football"}
    assert by_model["scene"].first().to_dict() == {"m1": "day", "m2": ""}
    table = run_all(frame, ReportSettings(n_resamples=20, by=("scene",)), names=["accuracy_by_scene"])[
        "accuracy_by_scene"
    ]
    assert set(table["scene"]) == {"day", "(none)", "Overall"}


def test_samples_logs_carry_domain_and_sub_category(tmp_path):
    from tests.helpers.fakelogs import sample, write_run

    samples = {}
    for condition in ("orig", "black"):
        rows = []
        for i, (domain, sub) in enumerate((("Sports", "Football"), ("Knowledge", "History"))):
            row = sample(f"v{i}-0", condition, "A" if condition == "orig" else "B", benchmark="videomme")
            row["vdg"].update(domain=domain, sub_category=sub)
            rows.append(row)
        samples[f"videomme_vdg_{condition}"] = rows
    samples["videomme_vdg_single"] = [sample(f"v{i}-0", "single", "A", benchmark="videomme") for i in range(2)]
    frame = load_frame([write_run(tmp_path / "run", "m", samples)])
    orig = frame[frame["condition"] == "orig"].sort_values("question_id")
    assert orig["domain"].tolist() == ["Sports", "Knowledge"]
    assert orig["sub_category"].tolist() == ["Football", "History"]
    assert set(frame.loc[frame["condition"] == "single", "domain"]) == {""}  # an older log: no field
    table = run_all(frame, ReportSettings(n_resamples=20, by=("domain",)), names=["vdg_by_domain"])["vdg_by_domain"]
    assert table.set_index("domain").loc["Sports", "vdg"] == 1.0


def test_cli_report_with_selection_options(tmp_path, capsys):
    from vdg_tasks.cli import main

    path = _predictions(
        tmp_path / "p.jsonl", "m", {"orig": ["q1-0", "q2-0", "q3-0"], "black": ["q1-0", "q2-0"]}, domain="Sports"
    )
    out = tmp_path / "out"
    base = ["report", "--predictions", f"m={path}", "--out", str(out), "--resamples", "20", "--no-plots"]
    assert main(base) != 0
    assert "lacks 1 of 3 questions" in capsys.readouterr().err
    assert main([*base, "--align", "intersect", "--by", "domain", "--task-types", "t", "--min-n", "1"]) == 0
    assert pd.read_csv(out / "vdg_by_domain.csv")["domain"].tolist() == ["Sports", "Overall"]
    notes = pd.read_csv(out / "selection.csv")
    assert notes[["kind", "condition", "n_dropped"]].values.tolist() == [["align", "orig", 1]]
    assert main([*base, "--align", "intersect", "--by", "nosuch"]) != 0
    assert "available:" in capsys.readouterr().err


def test_a_score_and_its_scoring_are_outcomes_not_fields_to_stratify_by():
    from postprocess.analyses.selection import stratifiable

    frame = tidy_frame([tidy_row("m", "orig", "q1", "b", domain="sports", score=1.0, scoring="letter")])
    fields = stratifiable(frame)
    assert "domain" in fields and not {"score", "scoring", "correct", "pred"} & set(fields)
