"""postprocess.reading.inputs, the report's one input path: `vdg report` and `postprocess.build_report` read through
it, so
the same inputs (a plain base-task run read as orig, a question set to compare, text-only shortcut scores, open
answers judged offline) write the same files, byte for byte; and its readers' refusals name the file and line."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import postprocess
import vdg_tasks.jobs.base_runs as base_runs
import vdg_tasks.lmms.derive as derive
from postprocess.settings import ReportSettings
from tests.helpers.docs import videomme_docs
from tests.helpers.fakelogs import sample, write_run
from vdg_tasks.cli import main as vdg_main
from vdg_tasks.data import question_sets

LETTERS = "ABCD"
TASK_TYPES = ("Counting Problem", "Temporal Reasoning", "Object Recognition")


def _docs() -> list[dict]:
    """Video-MME-shaped docs: 14 videos of three questions."""
    return videomme_docs(range(1, 15), TASK_TYPES, answer_step=3)


def _plain_line(doc_id: int, doc: dict, reply: str) -> dict:
    """A line of a plain lmms-eval run of videomme (no vdg record)."""
    return {
        "doc_id": doc_id,
        "target": doc["answer"],
        "filtered_resps": reply,
        "doc_hash": "0" * 8,
        "input": "...",
        "videomme_perception_score": {"question_id": doc["question_id"], "answer": doc["answer"]},
    }


def _open(question_id: str, reply: str) -> dict:
    record = sample(question_id, "open", None, answer="B", benchmark="infinibench_ga", video_id="e1")
    record["vdg"].update(
        status="open", correct=None, question="Which outfits, in order?", truth="red jacket; blue shirt",
        response=reply, n_options=6,
    )  # fmt: skip
    return record


@pytest.fixture
def inputs(tmp_path, monkeypatch) -> dict:
    docs = _docs()
    # the base task's docs as lmms-eval would load them, without its task index (seconds) or the dataset
    monkeypatch.setattr(base_runs, "base_docs", lambda task, manager: docs)
    monkeypatch.setattr(derive, "task_manager", lambda include_path=None: SimpleNamespace(task_index={}))
    rng = np.random.default_rng(41)
    plain = [_plain_line(i, d, d["answer"] if rng.random() < 0.7 else "A") for i, d in enumerate(docs)]
    black = []
    for d in docs:
        record = sample(d["question_id"], "black", LETTERS[int(rng.integers(4))], answer=d["answer"],
                        task_type=d["task_type"], video_id=d["video_id"], benchmark="videomme")  # fmt: skip
        record["vdg"]["n_options"] = 4
        black.append(record)
    video = write_run(tmp_path / "video", "vdg_probe", {"videomme": plain, "videomme_vdg_black": black})
    replies = {"q1": "A red jacket, then a blue shirt.", "q2": "A blue shirt.", "q3": "I don't know."}
    orig_open = [sample(q, "orig", "B", answer="B", benchmark="infinibench_ga", video_id="e1") for q in replies]
    for record in orig_open:
        record["vdg"]["n_options"] = 6
    opened = [_open(q, r) for q, r in replies.items()]
    judged = write_run(
        tmp_path / "open", "vdg_probe", {"infinibench_ga_vdg_orig": orig_open, "infinibench_ga_vdg_open": opened}
    )
    named = question_sets.write(
        question_sets.make_set("videomme", [d["question_id"] for d in docs[::2]], description="every other question"),
        tmp_path / "half.json",
    )
    scores = pd.DataFrame(
        [
            {"benchmark": "videomme", "question_id": d["question_id"], "task_type": d["task_type"], "answerer": a,
             "n_options": 4, "s": round(float(rng.random()), 6), "picked": bool(rng.random() < 0.3)}
            for d in docs
            for a in ("linear", "forest", "combined")
        ]
    )  # fmt: skip
    shortcuts = tmp_path / "shortcuts.csv"
    scores.to_csv(shortcuts, index=False)
    return {"runs": [f"probe={video}", f"probe={judged}"], "named": named, "shortcuts": shortcuts}


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_cli_and_build_report_write_the_same_files(inputs, tmp_path, capsys):
    args = ["report", *inputs["runs"], "--out", str(tmp_path / "cli"), "--question-set", f"half={inputs['named']}"]
    args += ["--shortcuts", str(inputs["shortcuts"]), "--judge", "offline", "--question-set", "shared"]
    assert vdg_main([*args, "--resamples", "200", "--stability-resamples", "50", "--workers", "1"]) == 0
    cli_notes = capsys.readouterr().err
    written = postprocess.build_report(
        inputs["runs"],
        tmp_path / "api",
        options=ReportSettings(n_resamples=200, stability_resamples=50, question_set="shared"),
        workers=1,
        question_sets=[f"half={inputs['named']}"],
        shortcuts=[inputs["shortcuts"]],
        judge="offline",
    )
    api_notes = capsys.readouterr().err
    cli, api = _files(tmp_path / "cli"), _files(written.path)
    assert sorted(cli) == sorted(api) and any(name.startswith("plots/") for name in cli)
    assert [name for name in cli if cli[name] != api[name]] == []
    # the inputs all took effect: the base run read as orig, the set compared, the scores related, the answers judged
    assert "orig of videomme from" in cli_notes and "orig of videomme from" in api_notes
    frame = pd.read_csv(tmp_path / "cli" / "question_set_comparison.csv")
    assert set(frame.question_set) == {"all", "half"}
    assert not pd.read_csv(tmp_path / "cli" / "shortcut_links.csv").empty
    assert pd.read_csv(tmp_path / "cli" / "open_ended.csv").n_open.tolist() == [3]
    described = json.loads((tmp_path / "api" / "report.json").read_text())["inputs"]
    assert described["question_sets"] == [f"half={inputs['named']}"] and described["shortcuts"] == [
        str(inputs["shortcuts"])
    ]


def test_build_report_refuses_input_keywords_it_would_not_read(tmp_path):
    with pytest.raises(TypeError, match="a frame is read already"):
        postprocess.build_report(pd.DataFrame(), tmp_path / "r", judge="offline")
    with pytest.raises(TypeError, match="the ReportInputs holds them"):
        postprocess.build_report(postprocess.ReportInputs(runs=("x",)), tmp_path / "r", shortcuts=["s.csv"])
    assert not (tmp_path / "r").exists()


def test_one_path_given_alone_is_one_input_not_its_characters(tmp_path):
    given = postprocess.ReportInputs(runs=str(tmp_path), shortcuts=tmp_path / "s.csv", derived="derived")
    assert given.runs == (str(tmp_path),) and given.shortcuts == (str(tmp_path / "s.csv"),)
    assert given.derived == ("derived",)


def test_inputs_keep_the_strings_report_json_names(tmp_path):
    given = postprocess.ReportInputs(runs=[tmp_path / "a"], shortcuts=[tmp_path / "s.csv"], derived=[tmp_path])
    assert given.runs == (str(tmp_path / "a"),) and given.derived == (str(tmp_path),)
    assert given.described()["shortcuts"] == [str(tmp_path / "s.csv")]
    same = postprocess.ReportInputs(runs=(str(tmp_path / "a"),), shortcuts=[f"{tmp_path}/s.csv"], derived=[tmp_path])
    assert same == given and hash(same) == hash(given)


def test_a_shortcut_file_with_a_bad_value_is_named_with_its_line(tmp_path):
    from postprocess.reading.inputs import read_shortcut_scores

    bad = tmp_path / "shortcuts.csv"
    bad.write_text("benchmark,question_id,task_type,answerer,n_options,s,picked\nb,q1,t,linear,4,0.5,True\n"
                   "b,q2,t,linear,4,0.5,maybe\n")  # fmt: skip
    with pytest.raises(ValueError, match=r"shortcuts.csv:3: picked is 'maybe'"):
        read_shortcut_scores([str(bad)])
    (tmp_path / "other.csv").write_text("benchmark,question_id\nb,q1\n")
    with pytest.raises(ValueError, match="no task_type, answerer, n_options, s, picked column"):
        read_shortcut_scores([str(tmp_path / "other.csv")])
    assert read_shortcut_scores([]) is None
    with pytest.raises(ValueError, match="https://example.org/s.csv: no such file"):
        read_shortcut_scores(["https://example.org/s.csv"])  # a URL is no file: never fetched


def test_two_question_sets_of_one_name_are_refused(tmp_path):
    from postprocess.reading.inputs import read_named_sets

    path = question_sets.write(question_sets.make_set("videomme", ["q1", "q2"]), tmp_path / "a.json")
    (sets,) = read_named_sets([f"x={path}"])
    assert sets["ids"] == ["q1", "q2"] and sets["description"] == str(path)
    with pytest.raises(ValueError, match="two sets are named 'x'"):
        read_named_sets([f"x={path}", f"x={path}"])
    with pytest.raises(ValueError, match="none.json: no such file"):
        read_named_sets([str(tmp_path / "none.json")])
