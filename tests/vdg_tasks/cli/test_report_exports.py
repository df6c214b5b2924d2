"""`vdg leaderboard --openvlm` and `vdg export-results` on the published predictions, checked against the records."""

from __future__ import annotations

import json
from collections import Counter

import datasets
import pandas as pd
import pytest

from tests.helpers.reference_data import ORIG_BLACK, REFERENCE
from vdg_tasks.cli import main

FAST = ["--resamples", "200", "--stability-resamples", "50"]
#: The files' own name of orig; their other conditions (black, crf18, ...) carry vdg's names.
ORIGINAL = {"original": "orig"}


def _inputs() -> list[str]:
    return [
        "--benchmark",
        "videomme",
        *(f"--predictions={m}={REFERENCE / f}" for m, files in ORIG_BLACK.items() for f in files),
    ]


def _records() -> pd.DataFrame:
    """Every record of each model's first two files (orig with the CRF ladder, black), read with json alone."""
    rows = []
    for model, files in ORIG_BLACK.items():
        for name in files:
            for record in json.loads((REFERENCE / name).read_text(encoding="utf-8")):
                rows.append(
                    {**record, "model": model, "condition": ORIGINAL.get(record["condition"], record["condition"])}
                )
    return pd.DataFrame(rows)


def _hand_vdg(records: pd.DataFrame, model: str) -> tuple[float, float, int]:
    """VDG and black accuracy (percent) of ``model`` over the questions both arms answered (a null prediction is an
    error, left out: the report's default ``--missing exclude``), and their number."""
    answered = records[records.prediction.notna() & (records.prediction.astype(str).str.strip() != "")]
    mine = answered[answered.model == model].pivot(index="question_id", columns="condition", values="correct")
    both = mine[["orig", "black"]].dropna()
    return (
        100 * (both["orig"].astype(float).mean() - both["black"].astype(float).mean()),
        100 * both["black"].astype(float).mean(),
        len(both),
    )


@pytest.fixture(scope="module")
def openvlm_fresh(tmp_path_factory):
    out = tmp_path_factory.mktemp("openvlm") / "OpenVLM.json"
    assert main(["leaderboard", *_inputs(), "--openvlm", str(out), "--time", "t0", *FAST]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_openvlm_holds_each_models_vdg_as_counted_from_the_records(openvlm_fresh):
    records = _records()
    assert openvlm_fresh["time"] == "t0"
    assert set(openvlm_fresh["results"]) == set(ORIG_BLACK)
    for model in ORIG_BLACK:
        entry = openvlm_fresh["results"][model]["videomme"]
        vdg, black, n = _hand_vdg(records, model)
        assert entry["VDG"] == pytest.approx(vdg, abs=0.006)
        assert entry["VDG Black"] == pytest.approx(black, abs=0.006)
        assert entry["VDG n"] == n
        low, high = entry["VDG CI"]
        assert low < entry["VDG"] < high
        orig = records[(records.model == model) & (records.condition == "orig") & records.prediction.notna()]
        assert entry["Overall"] == pytest.approx(100 * orig["correct"].mean(), abs=0.006)
        for task_type, rows in orig.groupby("task_type"):
            assert entry[task_type] == pytest.approx(100 * rows["correct"].mean(), abs=0.006)


def test_openvlm_merge_keeps_their_models_and_keys(tmp_path, capsys):
    theirs = {
        "time": "240601",
        "results": {
            "GPT-4o": {"META": {"Method": ["GPT-4o", "url"]}, "Video-MME": {"Overall": 71.9}},
            "Qwen2-VL-7B": {"META": {"Parameters": "7B"}, "Video-MME": {"Overall": 63.3, "Short": 71.2}},
        },
    }
    source = tmp_path / "OpenVLM.json"
    source.write_text(json.dumps(theirs, indent=2), encoding="utf-8")
    names = tmp_path / "names.csv"
    names.write_text("their_name,vdg_model\nQwen2-VL-7B,qwen2vl\n", encoding="utf-8")
    sets = tmp_path / "datasets.csv"
    sets.write_text("their_dataset,vdg_benchmark\nVideo-MME,videomme\n", encoding="utf-8")
    out = tmp_path / "merged.json"
    args = ["leaderboard", *_inputs(), "--openvlm", str(out), "--openvlm-merge", str(source)]
    assert main([*args, "--map", str(names), "--dataset-map", str(sets), *FAST]) == 0
    err = capsys.readouterr().err
    assert "no vdg data for 1 model(s)" in err and "GPT-4o" in err
    assert "2 vdg model(s) not in" in err and "internvl2" in err and "llava" in err
    merged = json.loads(out.read_text(encoding="utf-8"))
    assert merged["time"] == "240601" and merged["results"]["GPT-4o"] == theirs["results"]["GPT-4o"]
    qwen = merged["results"]["Qwen2-VL-7B"]
    assert qwen["META"] == {"Parameters": "7B"}
    entry = qwen["Video-MME"]
    assert list(entry)[:2] == ["Overall", "Short"] and entry["Overall"] == 63.3 and entry["Short"] == 71.2
    vdg, _, n = _hand_vdg(_records(), "qwen2vl")
    assert entry["VDG"] == pytest.approx(vdg, abs=0.006) and entry["VDG n"] == n
    assert source.read_text(encoding="utf-8") == json.dumps(theirs, indent=2)


def test_leaderboard_refusals_name_the_option(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"results": [1, 2]}', encoding="utf-8")
    out = tmp_path / "o.json"
    cases = [
        ([], "give --out FILE (.md, .csv or .json) and/or --openvlm FILE.json"),
        (["--openvlm", str(tmp_path / "o.csv")], "OpenVLM's layout is written as .json"),
        (["--out", str(tmp_path / "b.md"), "--openvlm-merge", str(bad)], "go with --openvlm FILE.json"),
        (["--openvlm", str(out), "--openvlm-merge", str(bad)], f"--openvlm-merge {bad}: not in OpenVLM.json's"),
        (["--openvlm", str(out), "--openvlm-merge", str(tmp_path / "none.json")], "none.json: cannot read"),
        (["--out", str(tmp_path / "b.md"), "--map", str(bad)], "--map goes with --merge or --openvlm"),
    ]
    for extra, message in cases:
        assert main(["leaderboard", *_inputs(), *extra, *FAST]) == 2, extra
        err = capsys.readouterr().err
        assert err.startswith("vdg leaderboard: ") and message in err, (extra, err)
    assert not out.exists()


def test_export_results_round_trips_every_record(tmp_path, capsys):
    out = tmp_path / "export"
    ids = ["--model-id", "qwen2vl=Qwen/Qwen2-VL-7B-Instruct", "--model-id", "llava=lmms-lab/llava-onevision"]
    ids += ["--model-id", "internvl2=OpenGVLab/InternVL2-8B"]
    assert main(["export-results", *_inputs(), "--out", str(out), *ids]) == 0
    said = capsys.readouterr().out
    assert str(out / "dataset") in said and str(out / "every_eval_ever") in said
    table = datasets.load_dataset(str(out / "dataset"))["train"].to_pandas()
    records = _records()
    assert len(table) == len(records)
    assert Counter(zip(table.model, table.condition, strict=True)) == Counter(
        zip(records.model, records.condition, strict=True)
    )
    got = table.set_index(["model", "condition", "question_id"]).sort_index()
    want = records.set_index(["model", "condition", "question_id"]).sort_index()
    answered = want.prediction.notna()
    assert (got.loc[answered, "correct"] == want.loc[answered, "correct"].astype(bool)).all()
    assert got.loc[~answered, "correct"].isna().all() and (got.loc[~answered, "status"] == "error").all()
    assert (got["target"] == want["ground_truth"]).all() and (got["task_type"] == want["task_type"]).all()
    aggregates = sorted((out / "every_eval_ever" / "data").glob("videomme/*/*/*.json"))
    assert len(aggregates) == len(records.groupby(["model", "condition"]))  # a model and condition each
    for path in aggregates:
        record = json.loads(path.read_text(encoding="utf-8"))
        result = record["evaluation_results"][0]
        model = next(m for m in ORIG_BLACK if record["model_info"]["id"].lower().endswith(_hub(m).lower()))
        condition = result["evaluation_name"].rsplit("_vdg_", 1)[1]
        rows = records[(records.model == model) & (records.condition == condition) & records.prediction.notna()]
        assert result["score_details"]["score"] == pytest.approx(rows["correct"].mean())


def _hub(model: str) -> str:
    return {"qwen2vl": "Qwen2-VL-7B-Instruct", "llava": "llava-onevision", "internvl2": "InternVL2-8B"}[model]


def test_export_results_refuses_a_folder_it_did_not_write(tmp_path, capsys):
    out = tmp_path / "export"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["export-results", *_inputs(), "--out", str(out), "--format", "dataset"]) == 2
    assert "holds notes.txt, which an export did not write" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_export_results_needs_a_hub_id(tmp_path, capsys):
    out = tmp_path / "export"
    assert main(["export-results", *_inputs(), "--out", str(out), "--format", "eee"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vdg export-results: model ") and "no hub id (org/name)" in err
    assert "LABEL=org/name" in err and not (out / "every_eval_ever" / "data").exists()


def test_export_results_names_a_linked_out_and_a_file_where_a_part_belongs(tmp_path, capsys):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert main(["export-results", *_inputs(), "--out", str(tmp_path / "link"), "--format", "dataset"]) == 2
    assert "is a symbolic link; give the folder itself" in capsys.readouterr().err
    out = tmp_path / "export"
    out.mkdir()
    (out / "dataset").write_text("x", encoding="utf-8")
    assert main(["export-results", *_inputs(), "--out", str(out), "--format", "dataset"]) == 2
    assert f"--out {out}: dataset is a file, not an earlier export's folder" in capsys.readouterr().err
    assert (out / "dataset").read_text(encoding="utf-8") == "x"
