"""Every record logs its question's true option count: built-in benchmarks, derived tasks, text conditions."""

from __future__ import annotations

from typing import Any

import pytest

from vdg_tasks.data.benchmarks import BENCHMARKS, Benchmark
from vdg_tasks.lmms.derive import DeriveSpec, Fields, derived_benchmark
from vdg_tasks.lmms.hooks import Visual, build_record

#: A resolved visual: build_record reads only its key and error.
SHOWN = Visual(path=None, cache_key="k", error=None)


def raw_doc(benchmark: Benchmark, n: int) -> dict[str, Any]:
    """A raw doc of ``benchmark`` in its dataset's own shape, with ``n`` options and the second one right."""
    texts = [f"choice {i}" for i in range(n)]
    if benchmark.report_name == "mvbench":
        return {"video": "v.mp4", "question": "What happens?", "candidates": texts, "answer": texts[1]}
    if benchmark.name.startswith("egoschema"):
        return {"question_idx": "q1", "video_idx": "v1", "question": "What?", "option": texts, "answer": "1"}
    return {
        "question_id": "q1",
        "videoID": "v1",
        "question": "What does SHELDON wear?",
        "task_type": "T",
        "options": [f"{'ABCDEFGH'[i]}. {t}" for i, t in enumerate(texts)],
        "answer": "B",
        "character": "Sheldon",
        "cast": {"Sheldon": "m", "Leonard": "m"},
    }


def expected(condition: str, n: int) -> int:
    """The options a condition asks with: abstain adds one; every other asks the question's own."""
    return n + 1 if condition == "abstain" else n


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
@pytest.mark.parametrize("n", [3, 5])
def test_every_builtin_benchmark_logs_its_questions_option_count(name, n):
    bench = BENCHMARKS[name]
    for condition in bench.conditions():
        record = build_record(bench, condition, raw_doc(bench, n), "B", SHOWN)
        assert record["n_options"] == expected(condition.name, n), (name, condition.name, record.get("error"))


def derived(options_field: str | None) -> Benchmark:
    fields = Fields("qid", options_field, "answer", "clip", "category", "question")
    spec = DeriveSpec("demo_mc", "demo.yaml", fields, "utils.visual", "utils.text", None, None, None, ("orig",))
    return derived_benchmark(spec)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_a_derived_task_logs_its_questions_option_count(n):
    bench = derived("candidates")
    doc = {"qid": "q1", "clip": "c1", "category": "T", "question": "Which?", "candidates": [f"c{i}" for i in range(n)]}
    doc["answer"] = doc["candidates"][1]
    for condition in bench.conditions():
        record = build_record(bench, condition, doc, "B", SHOWN)
        assert record["n_options"] == expected(condition.name, n), (condition.name, record.get("error"))


def test_a_doc_without_options_logs_none_and_its_reply_reads_every_letter():
    # No options field: the count is not known here (the report infers it per task type), and a reply F is read
    # as F, not refused as beyond a guessed 4.
    bench = BENCHMARKS["vdgsynth"]
    doc = {"question_id": "q1", "videoID": "v1", "question": "Which?", "task_type": "T", "answer": "F"}
    for condition in bench.conditions():
        record = build_record(bench, condition, doc, "The answer is F.", SHOWN)
        assert record["n_options"] is None, condition.name
        if condition.name in ("orig", "black"):
            assert (record["pred"], record["status"], record["correct"]) == ("F", "ok", True)
