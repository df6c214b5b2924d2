"""A plain run of a base task read as orig: each line matched to its question (by the base metric's question id,
else by doc_id), the reply re-parsed, the files named when they cannot be matched; the converted run read by the
report with its rows pointing at the base task's log."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import vdg_tasks.jobs.base_runs as base_runs
from postprocess.reading.files import LogError
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.reading.run_labels import results_of
from tests.helpers.docs import videomme_docs
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.jobs.base_runs import BaseRunError, BaseTask, as_orig, base_task, orig_lines
from vdg_tasks.vocabulary.record import BASE_RUN_KEY, METRIC_KEY, RECORD_KEY

VIDEOMME = BaseTask("videomme", BENCHMARKS["videomme"])
NO_MANAGER = SimpleNamespace(task_index={})


def _docs() -> list[dict]:
    return videomme_docs((1, 2, 3), ("Counting Problem", "Temporal Reasoning"), answer_step=1)


def _line(doc_id: int, doc: dict, reply: str, with_id: bool = True) -> dict:
    line = {"doc_id": doc_id, "target": doc["answer"], "filtered_resps": reply, "doc_hash": "0" * 8, "input": "..."}
    if with_id:
        line["videomme_perception_score"] = {"question_id": doc["question_id"], "answer": doc["answer"]}
    return line


def _write_run(folder: Path, lines: list[dict], task: str = "videomme") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    samples = folder / f"20260101_000000_samples_{task}.jsonl"
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = {"model": "vdg_probe", "model_args": "", "batch_size": 1}
    (folder / "20260101_000000_results.json").write_text(json.dumps({"config": config, "results": {}}))
    return samples


def test_lines_in_another_order_are_matched_by_the_question_id_the_base_metric_logs(tmp_path):
    docs = _docs()
    order = [4, 0, 5, 2, 1, 3]  # the run saw its docs in another order: doc_id says nothing about ours
    replies = {d["question_id"]: f"The answer is {'DCBA'[i % 4]}." for i, d in enumerate(docs)}
    lines = [_line(position, docs[i], replies[docs[i]["question_id"]]) for position, i in enumerate(order)]
    samples = _write_run(tmp_path / "run", lines)
    out = orig_lines(samples, VIDEOMME, docs)
    assert [line[RECORD_KEY]["question_id"] for line in out] == [docs[i]["question_id"] for i in order]
    for line, i in zip(out, order, strict=True):
        record, doc = line[RECORD_KEY], docs[i]
        letter = replies[doc["question_id"]][-2]
        assert (record["condition"], record["benchmark"], record["status"]) == ("orig", "videomme", "ok")
        assert (record["pred"], record["correct"]) == (letter, letter == doc["answer"])
        assert (record["task_type"], record["video_id"], record["n_options"]) == (doc["task_type"], doc["videoID"], 4)
        assert line[METRIC_KEY] == float(letter == doc["answer"])
        assert record["provenance"]["base_run"].startswith(f"{samples}:")
        assert line["videomme_perception_score"]["question_id"] == doc["question_id"]  # the base's own kept


def test_without_a_logged_question_id_doc_id_is_the_position_in_the_docs(tmp_path):
    docs = _docs()
    lines = [_line(i, doc, "B", with_id=False) for i, doc in enumerate(docs)][::-1]
    out = orig_lines(_write_run(tmp_path / "run", lines), VIDEOMME, docs)
    assert [line[RECORD_KEY]["question_id"] for line in out] == [d["question_id"] for d in docs][::-1]


def test_a_run_on_other_docs_is_refused_naming_the_file_and_line(tmp_path):
    docs = _docs()
    short = _write_run(tmp_path / "short", [_line(i, d, "A") for i, d in enumerate(docs[:-1])])
    with pytest.raises(BaseRunError, match=r"5 samples, but lmms-eval's videomme has 6 docs"):
        orig_lines(short, VIDEOMME, docs)
    lines = [_line(i, d, "A", with_id=False) for i, d in enumerate(docs)]
    lines[2]["target"] = "ABCD"[("ABCD".index(docs[2]["answer"]) + 1) % 4]
    moved = _write_run(tmp_path / "moved", lines)
    with pytest.raises(BaseRunError, match=rf"{moved}:3: the logged target '.' is not the answer"):
        orig_lines(moved, VIDEOMME, docs)
    lines = [_line(i, d, "A", with_id=False) for i, d in enumerate(docs)]
    lines[4]["doc_id"] = 99
    beyond = _write_run(tmp_path / "beyond", lines)
    with pytest.raises(BaseRunError, match=rf"{beyond}:5: doc_id 99 .* is no doc"):
        orig_lines(beyond, VIDEOMME, docs)


def test_an_unanswerable_reply_and_a_failed_request_are_scored_as_vdg_scores_them(tmp_path):
    docs = _docs()[:2]
    lines = [_line(0, docs[0], "I cannot tell."), _line(1, docs[1], "[LMMS_EVAL_REQUEST_FAILED after 3 retries]")]
    out = orig_lines(_write_run(tmp_path / "run", lines), VIDEOMME, docs)
    assert (out[0][RECORD_KEY]["status"], out[0][RECORD_KEY]["correct"], out[0][METRIC_KEY]) == ("unparsed", False, 0)
    assert out[1][RECORD_KEY]["status"] == "error" and out[1][METRIC_KEY] is None


def test_the_base_tasks_vdg_knows(tmp_path):
    assert base_task("videomme", {}, NO_MANAGER).benchmark is BENCHMARKS["videomme"]
    assert base_task("mvbench_action_sequence", {}, NO_MANAGER).benchmark.name == "mvbench_action_sequence"
    assert base_task("egoschema_subset", {}, NO_MANAGER).benchmark.report_name == "egoschema_subset"
    assert base_task("some_image_task", {}, NO_MANAGER) is None
    derived = {"lvbench": BENCHMARKS["vdgsynth"]}  # a derived base task wins over the built-ins
    assert base_task("lvbench", derived, NO_MANAGER).benchmark is BENCHMARKS["vdgsynth"]


def test_as_orig_converts_only_the_plain_log_and_the_report_points_at_it(tmp_path, monkeypatch):
    docs = _docs()
    monkeypatch.setattr(base_runs, "base_docs", lambda task, manager: docs)
    samples = _write_run(tmp_path / "run", [_line(i, d, "A") for i, d in enumerate(docs)])
    black = _write_run(tmp_path / "vdg", [{"doc_id": 0, RECORD_KEY: {"condition": "black"}}], task="videomme_vdg_black")
    logs, notes = as_orig([("probe", samples), ("probe", black)], results_of, tmp_path / "work", manager=NO_MANAGER)
    (label, converted), kept = logs
    assert kept == ("probe", black), "a vdg task's log is passed on as it is"
    assert label == "probe" and converted.name == "20260101_000000_samples_videomme_vdg_orig.jsonl"
    results = json.loads((converted.parent / "20260101_000000_results.json").read_text())
    assert results[BASE_RUN_KEY] == {"samples": str(samples), "task": "videomme", "benchmark": "videomme"}
    assert results["config"] == results_of(samples)["config"]
    assert notes == [
        f"orig of videomme from {samples} (a plain run of lmms-eval's videomme: the base task's prompt, replies "
        "re-parsed by vdg)"
    ]
    frame = load_frame([f"probe={converted}"])
    assert set(frame.condition) == {"orig"} and set(frame.model) == {"probe"}
    assert sorted(frame.source) == sorted(f"{samples}:{n}" for n in range(1, 7))
    assert frame.correct.tolist() == [d["answer"] == "A" for d in docs]


def test_a_log_of_a_task_vdg_does_not_know_is_left_to_the_reader(tmp_path):
    samples = _write_run(tmp_path / "run", [{"doc_id": 0, "target": "x", "filtered_resps": "y"}], task="image_task")
    logs, notes = as_orig([(None, samples)], results_of, tmp_path / "work", manager=NO_MANAGER)
    assert notes == [] and logs == [(None, samples)]
    with pytest.raises(LogError):
        load_frame([str(samples)])


def test_two_lines_of_one_question_are_refused(tmp_path):
    docs = _docs()
    lines = [_line(i, d, "A") for i, d in enumerate(docs)]
    lines[3]["videomme_perception_score"]["question_id"] = docs[0]["question_id"]  # its doc_id says otherwise
    twice = _write_run(tmp_path / "run", lines)
    with pytest.raises(BaseRunError, match=rf"{twice}:4: question 001-1 is matched a second time \(first at .*:1\)"):
        orig_lines(twice, VIDEOMME, docs)


# --- vdg's orig prompt is the base task's: what makes a plain run stand for orig ------------------------------


def _yaml_of(task: str) -> Path:
    from vdg_tasks.lmms.yamlgen import YAML_ROOT

    (path,) = YAML_ROOT.rglob(f"{task}.yaml")
    return path


@pytest.mark.slow
def test_every_builtin_benchmarks_orig_prompt_is_its_base_tasks_for_every_model(tmp_path):
    from lmms_eval.utils import load_yaml_config

    from tests.helpers.standins import write_standins
    from vdg_tasks.data.benchmarks import task_name
    from vdg_tasks.data.upstream import lmms_eval_tasks_dir

    standins = write_standins(tmp_path)
    docs = {"videomme": standins["videomme"], "egoschema": standins["egoschema"]["Subset"]}
    docs |= {f"mvbench_{sub}": rows for sub, rows in standins["mvbench"].items()}
    checked = 0
    for benchmark in BENCHMARKS.values():
        if benchmark.upstream is None:
            continue
        ours = load_yaml_config(str(_yaml_of(task_name(benchmark.name, "orig"))))
        theirs = load_yaml_config(str(lmms_eval_tasks_dir() / benchmark.upstream.folder / benchmark.upstream.config))
        assert ours["lmms_eval_specific_kwargs"] == theirs["lmms_eval_specific_kwargs"], benchmark.name
        rows = docs.get(benchmark.name) or docs["egoschema"]
        for model, kwargs in theirs["lmms_eval_specific_kwargs"].items():
            for doc in rows:
                assert ours["doc_to_text"](dict(doc), dict(kwargs)) == theirs["doc_to_text"](dict(doc), dict(kwargs)), (
                    benchmark.name,
                    model,
                )
        checked += 1
    assert checked == sum(b.upstream is not None for b in BENCHMARKS.values()) >= 22  # videomme, 20 mvbench, egoschema


@pytest.mark.slow
def test_every_derivable_tasks_orig_keeps_the_base_prompt_builder_and_settings():
    from vdg_tasks.data.upstream import load_config
    from vdg_tasks.lmms.coverage import coverage
    from vdg_tasks.lmms.derive import task_manager
    from vdg_tasks.lmms.derive_files import leaf, template

    manager = task_manager(None)
    derived = [row for row in coverage(manager) if row.derives]
    specs = [spec for row in derived for spec in row.specs]  # a group derived in part: the members that derive
    assert len(derived) >= 30 and len(specs) >= len(derived)
    for spec in specs:
        shared, _ = template(spec)
        base = load_config(Path(spec.yaml_path))
        assert str(shared["doc_to_text"]) == str(base["doc_to_text"]), spec.task
        assert shared.get("lmms_eval_specific_kwargs") == base.get("lmms_eval_specific_kwargs"), spec.task
        assert "doc_to_text" not in leaf(spec, "orig", shared), spec.task  # orig asks with the base's own builder


def test_a_plain_run_of_a_graded_task_is_scored_by_the_metric_it_logged_or_left_for_the_judge(tmp_path):
    import dataclasses

    docs = [
        {"question_id": f"c{i}", "videoID": f"v{i}", "task_type": "count", "question": "How many?", "options": [],
         "answer": str(3 + i)}
        for i in range(3)
    ]  # fmt: skip
    lines = [{"doc_id": i, "target": d["answer"], "filtered_resps": ["3"], "mra": m} for i, (d, m) in
             enumerate(zip(docs, (1.0, 0.7, 0.4), strict=True))]  # fmt: skip
    graded = dataclasses.replace(BENCHMARKS["vdgsynth"], scoring="metric:mra", provides=frozenset())
    out = orig_lines(_write_run(tmp_path / "metric", lines), BaseTask("vdgsynth", graded), docs)
    assert [(o[RECORD_KEY]["status"], o[RECORD_KEY]["score"], o[METRIC_KEY]) for o in out] == [
        ("ok", 1.0, 1.0), ("ok", 0.7, 0.7), ("ok", 0.4, 0.4)
    ]  # fmt: skip
    judged = dataclasses.replace(graded, scoring="judge")
    out = orig_lines(_write_run(tmp_path / "judge", lines), BaseTask("vdgsynth", judged), docs)
    assert {(o[RECORD_KEY]["status"], o[RECORD_KEY]["truth"], o[RECORD_KEY]["response"]) for o in out[:1]} == {
        ("open", "3", "3")
    }
    lines[1]["target"] = "9"
    with pytest.raises(BaseRunError, match=r":2: the logged target '9' is not the answer '4' of question c1"):
        orig_lines(_write_run(tmp_path / "other", lines), BaseTask("vdgsynth", graded), docs)
