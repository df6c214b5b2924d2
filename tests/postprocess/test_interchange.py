"""Every per-question result written for others: a long-format datasets dataset and Every Eval Ever records
(postprocess.interchange)."""

from __future__ import annotations

import json
import os
import re
import sys

import pandas as pd
import pytest

from postprocess.interchange import (
    EEE_EXTRA,
    INTERCHANGE_COLUMNS,
    UNKNOWN_HARNESS,
    results_table,
    validate_eee_records,
    write_eee_records,
    write_results_dataset,
)
from postprocess.reading.frame import input_files
from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.fakelogs import sample, write_run
from tests.helpers.frames import make_frame, tidy_frame, tidy_row
from tests.helpers.vlmevalkit_files import write_both

SECRET = "sk-abcdefghijklmnop1234"
ARGS = f"pretrained=Qwen/Qwen2-VL-2B-Instruct,api_key={SECRET}"

#: (question, condition, predicted letter or None, task type); every answer is A.
ANSWERS = [
    ("q1-1", "orig", "A", "T1"),
    ("q2-1", "orig", "B", "T2"),
    ("q3-1", "orig", None, "T1"),
    ("q1-1", "black", "B", "T1"),
    ("q2-1", "black", "A", "T2"),
    ("q3-1", "black", "A", "T1"),
]


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    """A run read as vdg report reads it (load_frame), settings holding a secret, plus a second model."""
    root = tmp_path_factory.mktemp("runs")
    by_task: dict[str, list] = {}
    for qid, condition, pred, task in ANSWERS:
        by_task.setdefault(f"vdgsynth_vdg_{condition}", []).append(sample(qid, condition, pred, task_type=task))
    first = write_run(root / "qwen", "qwen2_vl", by_task, model_args=ARGS)
    second = write_run(root / "other", "llava", by_task, model_args="pretrained=lmms-lab/llava-7b")
    return load_frame(runs=[f"m10={first}", f"m9={second}"])


def _expected_rows(models: list[str]) -> list[tuple[str, str, str, str, str | None, bool]]:
    """(model, benchmark, question, condition, prediction, correct) of ANSWERS, in the export's order: model in
    natural order (m9 before m10), then question and condition."""
    rows = [
        (model, "vdgsynth", qid, condition, pred, pred == "A")
        for model in models
        for qid, condition, pred, _ in ANSWERS
    ]
    return sorted(rows, key=lambda r: (models.index(r[0]), r[2], r[3]))


def test_the_rows_are_the_frames_one_per_question_and_condition_in_a_fixed_order(frame):
    table = results_table(frame)
    assert list(table.columns) == list(INTERCHANGE_COLUMNS)
    got = list(zip(table["model"], table["benchmark"], table["question_id"], table["condition"], strict=True))
    assert got == [r[:4] for r in _expected_rows(["m9", "m10"])]
    assert table["prediction"].tolist() == [r[4] for r in _expected_rows(["m9", "m10"])]
    assert table["correct"].tolist() == [r[5] for r in _expected_rows(["m9", "m10"])]
    assert (table["target"] == "A").all()
    assert results_table(frame.sample(frac=1, random_state=1)).equals(table)  # the input order does not matter


def test_the_settings_are_json_with_secrets_redacted(frame):
    table = results_table(frame)
    settings = json.loads(table.loc[table["model"] == "m10", "settings"].iloc[0])
    assert "pretrained=Qwen/Qwen2-VL-2B-Instruct" in settings["model_settings"]
    assert "<redacted>" in settings["model_settings"]
    assert not table.apply(lambda column: column.astype(str).str.contains(SECRET)).any().any()


def test_an_open_answer_exports_its_reply_and_truth():
    row = tidy_row("m", "orig", "q1-1", status="open", pred=None, correct=pd.NA, response="a red car", truth="red")
    table = results_table(tidy_frame([row]))
    assert table[["prediction", "target", "status"]].values.tolist() == [["a red car", "red", "open"]]
    assert table["correct"].isna().all() and table["score"].isna().all()


def test_a_key_twice_is_refused():
    frame = make_frame([("m", "orig", "q1-1", "T", True), ("m", "orig", "q1-1", "T", False)])
    with pytest.raises(ValueError, match=r"\['m', 'b', 'q1-1', 'orig'\] more than once"):
        results_table(frame)


def test_the_dataset_round_trips_through_load_dataset(frame, tmp_path, monkeypatch):
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    out = write_results_dataset(frame, tmp_path / "export")
    loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    assert list(loaded) == ["train"]
    train = loaded["train"]
    assert {name: feature.dtype for name, feature in train.features.items()} == {
        name: kind for name, (kind, _) in INTERCHANGE_COLUMNS.items()
    }
    expected = _expected_rows(["m9", "m10"])
    assert train.num_rows == len(expected) == 2 * len(ANSWERS)
    assert [(r["model"], r["benchmark"], r["question_id"], r["condition"]) for r in train] == [e[:4] for e in expected]
    assert train["prediction"] == [e[4] for e in expected]
    assert train["correct"] == [e[5] for e in expected]
    assert train["score"] == [1.0 if e[5] else 0.0 for e in expected]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "dataset_info:" in card and "configs:" not in card and SECRET not in card
    # written again: the same files, no stale ones
    write_results_dataset(frame, out)
    assert sorted(p.name for p in (out / "data").iterdir()) == ["train-00000-of-00001.parquet"]


def test_two_exports_loaded_through_one_cache_each_read_their_own_rows(frame, tmp_path, monkeypatch):
    """Every export's folder is named alike (vdg export-results writes OUT/dataset): datasets must not serve one
    export's cached rows for another's."""
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    cache = str(tmp_path / "cache")
    other = make_frame([("solo", "orig", f"q{i}-1", "T", i % 3 == 0) for i in range(5)])
    first = write_results_dataset(frame, tmp_path / "a" / "dataset")
    second = write_results_dataset(other, tmp_path / "b" / "dataset")
    for out, models, rows in ((first, ["m10", "m9"], 2 * len(ANSWERS)), (second, ["solo"], 5), (first, None, None)):
        train = datasets.load_dataset(str(out), cache_dir=cache)["train"]
        if models is None:  # the first again, after the second: still its own
            models, rows = ["m10", "m9"], 2 * len(ANSWERS)
        assert (sorted(set(train["model"])), train.num_rows) == (models, rows)
        assert {name: feature.dtype for name, feature in train.features.items()} == {
            name: kind for name, (kind, _) in INTERCHANGE_COLUMNS.items()
        }
    solo = datasets.load_dataset(str(second), cache_dir=cache)["train"]
    assert solo["correct"] == [i % 3 == 0 for i in range(5)]  # q0 .. q4, in natural order
    assert solo["n_options"] == [None] * 5 and solo["score"] == [1.0 if i % 3 == 0 else 0.0 for i in range(5)]
    # the same folder written again with other rows reads back the new rows
    write_results_dataset(other[other["question_id"] != "q0-1"], first)
    assert datasets.load_dataset(str(first), cache_dir=cache)["train"].num_rows == 4


def test_question_ids_sort_in_natural_order():
    frame = make_frame([("m", "orig", qid, "T", True) for qid in ("q10-1", "q2-1", "q1-1")])
    assert results_table(frame)["question_id"].tolist() == ["q1-1", "q2-1", "q10-1"]


def _eee(frame, out):
    return write_eee_records(frame, out, retrieved_timestamp="1764590400", vdg_version="0.1.0")


def test_the_records_hold_one_aggregate_and_companion_per_run_and_condition(frame, tmp_path):
    export = _eee(frame, tmp_path)
    assert len(export.aggregates) == len(export.samples) == 4 and export.skipped == []
    folders = {p.parent.relative_to(tmp_path).as_posix() for p in export.aggregates}
    assert folders == {"data/vdgsynth/Qwen/Qwen2-VL-2B-Instruct", "data/vdgsynth/lmms-lab/llava-7b"}
    for aggregate_path, samples_path in zip(export.aggregates, export.samples, strict=True):
        aggregate = json.loads(aggregate_path.read_text(encoding="utf-8"))
        lines = [json.loads(line) for line in samples_path.read_text(encoding="utf-8").splitlines()]
        (result,) = aggregate["evaluation_results"]
        condition = result["source_data"]["additional_details"]["condition"]
        answers = [a for a in ANSWERS if a[1] == condition]
        # counted from ANSWERS: the questions of the condition, those answered A among them
        assert len(lines) == len(answers) == aggregate["detailed_evaluation_results"]["total_rows"]
        assert result["score_details"]["score"] == pytest.approx(sum(a[2] == "A" for a in answers) / len(answers))
        assert result["evaluation_name"] == f"vdgsynth_vdg_{condition}"
        assert {line["evaluation_id"] for line in lines} == {aggregate["evaluation_id"]}
        assert sorted(line["sample_id"] for line in lines) == sorted(a[0] for a in answers)
        assert SECRET not in aggregate_path.read_text(encoding="utf-8")
    # a rerun writes the same names and contents
    again = _eee(frame, tmp_path / "again")
    assert [p.name for p in again.aggregates] == [p.name for p in export.aggregates]


def _needs_the_validator() -> None:
    """`make venv` installs every-eval-ever (see the Makefile); elsewhere its absence skips, under CI it fails."""
    if os.environ.get("CI"):
        import every_eval_ever  # noqa: F401
    else:
        pytest.importorskip("every_eval_ever", reason=f"every-eval-ever is not installed (the {EEE_EXTRA} extra)")


def test_the_records_validate_with_every_eval_evers_own_validator(frame, tmp_path):
    _needs_the_validator()
    _eee(frame, tmp_path)
    assert validate_eee_records(tmp_path) == []


def test_the_validator_finds_a_broken_record(frame, tmp_path):
    _needs_the_validator()
    export = _eee(frame, tmp_path)
    record = json.loads(export.aggregates[0].read_text(encoding="utf-8"))
    del record["model_info"]
    export.aggregates[0].write_text(json.dumps(record), encoding="utf-8")
    problems = validate_eee_records(tmp_path)
    where = export.aggregates[0].relative_to(tmp_path).as_posix()
    assert f"{where}: error: model_info: Field required" in problems


def test_validating_without_the_package_names_the_extra(frame, tmp_path, monkeypatch):
    _eee(frame, tmp_path)
    monkeypatch.setitem(sys.modules, "every_eval_ever", None)
    with pytest.raises(ImportError, match=rf"pip install 'vdg\[{EEE_EXTRA}\]'"):
        validate_eee_records(tmp_path)


def test_a_model_without_a_hub_id_is_refused_unless_mapped(tmp_path):
    frame = make_frame([("m", "orig", "q1-1", "T", True)])
    with pytest.raises(ValueError, match=r"model 'm': no hub id .* model_ids \(LABEL=org/name\)"):
        write_eee_records(frame, tmp_path, retrieved_timestamp="1")
    export = write_eee_records(frame, tmp_path, model_ids={"m": "acme/m-7b"}, retrieved_timestamp="1")
    assert export.aggregates[0].parent == tmp_path / "data" / "b" / "acme" / "m-7b"
    with pytest.raises(ValueError, match="is not of the form org/name"):
        write_eee_records(frame, tmp_path, model_ids={"m": "m-7b"}, retrieved_timestamp="1")


def test_a_condition_with_no_scored_answer_is_skipped_and_named(tmp_path):
    frame = make_frame([("m", "orig", "q1-1", "T", True), ("m", "black", "q1-1", "T", "e")])
    export = write_eee_records(frame, tmp_path, model_ids={"m": "acme/m"}, retrieved_timestamp="1")
    assert len(export.aggregates) == 1
    assert export.skipped == ["m / b / black: no scored answer"]


@pytest.mark.parametrize(
    ("hub_id", "bad"),
    [
        ("org/..", "its model name '..'"),
        ("org/.", "its model name '.'"),
        ("data/data", "its developer 'data'"),
        ("acme/data", "its model name 'data'"),
        ("unknown/m", "its developer 'unknown'"),
        ("acme/CON.x", "its model name 'CON.x'"),
        ("acme/m.", "its model name 'm.'"),
    ],
)
def test_a_hub_id_that_cannot_name_datastore_folders_is_refused_before_anything_is_written(tmp_path, hub_id, bad):
    frame = make_frame([("good", "orig", "q1-1", "T", True), ("m", "orig", "q1-1", "T", True)])
    out = tmp_path / "deep" / "out"
    with pytest.raises(ValueError, match=rf"model 'm': hub id '{re.escape(hub_id)}': {re.escape(bad)} cannot name"):
        write_eee_records(frame, out, model_ids={"good": "acme/good", "m": hub_id}, retrieved_timestamp="1")
    assert not tmp_path.joinpath("deep").exists()  # nothing written, not even the good model's records


def test_a_pretrained_hub_id_is_checked_as_a_given_one(tmp_path):
    frame = make_frame([("m", "orig", "q1-1", "T", True)])
    frame["model_settings"] = "pretrained=org/.."
    with pytest.raises(ValueError, match=r"model 'm': hub id 'org/\.\.': its model name '\.\.' cannot name"):
        write_eee_records(frame, tmp_path / "out", retrieved_timestamp="1")
    assert not (tmp_path / "out").exists()


def _harness(export) -> set[str]:
    return {
        json.loads(p.read_text(encoding="utf-8"))["eval_library"]["additional_details"]["harness"]
        for p in export.aggregates
    }


def test_the_harness_is_the_one_that_wrote_the_models_files(frame, tmp_path):
    assert _harness(_eee(frame, tmp_path / "logs")) == {"lmms-eval"}  # lmms-eval samples logs
    predictions, _ = write_both(tmp_path / "files", "tsv", scored=True, model="vk", missing=None, n_questions=6)
    vk = load_frame(predictions=[(label, path) for label, path in predictions if "Video-MME" in path])
    assert {source["kind"] for source in input_files(vk)} == {"VLMEvalKit scores"}
    export = write_eee_records(vk, tmp_path / "vk", model_ids={"vk": "acme/vk"}, retrieved_timestamp="1")
    assert len(export.aggregates) == 2 and _harness(export) == {"VLMEvalKit"}
    # a frame that records no file (built by hand) claims none
    bare = write_eee_records(
        make_frame([("m", "orig", "q1-1", "T", True)]),
        tmp_path / "bare",
        model_ids={"m": "a/m"},
        retrieved_timestamp="1",
    )
    assert _harness(bare) == {UNKNOWN_HARNESS} == {"unknown"}
