"""Fixed question sets: `vdg subset`, vdg_tasks.data.question_sets and VDG_QUESTION_SET."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from vdg_tasks.cli import main
from vdg_tasks.data.question_sets import (
    ENV_VAR,
    QuestionSet,
    active,
    active_digest,
    digest_of,
    read,
    read_docs,
    restrict_ids,
    stratified_subset,
    write,
)
from vdg_tasks.jobs import materialize

REFERENCE_QUESTIONS = Path(__file__).resolve().parents[2] / "data" / "awg-videomme" / "questions.json"


def docs_of(sizes: dict[str, int]) -> list[dict]:
    """Docs with ``sizes[task_type]`` questions of each task type (ids <task>-<i>)."""
    return [
        {"question_id": f"{task}-{i:03d}", "task_type": task, "answer": "A"}
        for task, n in sizes.items()
        for i in range(n)
    ]


SIZES = {"ocr": 40, "counting": 25, "temporal": 30}


def type_counts(chosen: QuestionSet, docs: list[dict]) -> Counter:
    task_of = {d["question_id"]: d["task_type"] for d in docs}
    return Counter(task_of[q] for q in chosen.ids)


# ------------------------------------------------------------------------------------ stratified_subset


def test_exact_counts_per_task_type():
    docs = docs_of(SIZES)
    chosen = stratified_subset(docs, 10, seed=0, benchmark="b")
    assert type_counts(chosen, docs) == {"ocr": 10, "counting": 10, "temporal": 10}
    assert chosen.counts == (("counting", 10), ("ocr", 10), ("temporal", 10))
    assert len(chosen) == 30 and len(set(chosen.ids)) == 30 and list(chosen.ids) == sorted(chosen.ids)
    assert (chosen.benchmark, chosen.seed, chosen.per_task_type) == ("b", 0, 10)
    # the documented recipe: sha256 of the benchmark and the sorted ids joined by U+001F, first 12 hex digits
    recipe = hashlib.sha256("\x1f".join(["b", *sorted(chosen.ids)]).encode()).hexdigest()[:12]
    assert chosen.digest == recipe == digest_of("b", reversed(chosen.ids))
    assert chosen.short_task_types == []


def test_deterministic_and_independent_of_doc_order():
    docs = docs_of(SIZES)
    first = stratified_subset(docs, 10, seed=7, benchmark="b")
    shuffled = list(docs)
    random.Random(3).shuffle(shuffled)
    assert stratified_subset(shuffled, 10, seed=7, benchmark="b") == first
    assert stratified_subset(list(reversed(docs)), 10, seed=7, benchmark="b").digest == first.digest


def test_one_task_type_does_not_change_another():
    # The draw per task type depends on (seed, benchmark, task type) and that type's ids only.
    docs = docs_of(SIZES)
    both = stratified_subset(docs, 10, seed=1, benchmark="b")
    only_ocr = stratified_subset([d for d in docs if d["task_type"] == "ocr"], 10, seed=1, benchmark="b")
    assert set(only_ocr.ids) == {q for q in both.ids if q.startswith("ocr-")}


def test_different_seeds_and_benchmarks_differ():
    docs = docs_of(SIZES)
    a = stratified_subset(docs, 10, seed=0, benchmark="b")
    assert set(stratified_subset(docs, 10, seed=1, benchmark="b").ids) != set(a.ids)
    other = stratified_subset(docs, 10, seed=0, benchmark="c")
    assert set(other.ids) != set(a.ids) and other.digest != a.digest


def test_digest_is_the_content_not_the_seed():
    assert digest_of("b", ["x", "y"]) == digest_of("b", ["y", "x"]) != digest_of("c", ["x", "y"])
    docs = docs_of({"t": 5})
    # Every seed takes all 5 questions: one content, one digest.
    assert stratified_subset(docs, 5, seed=0, benchmark="b").digest == stratified_subset(docs, 5, 9, "b").digest


def test_short_task_types_contribute_every_question():
    docs = docs_of({"ocr": 40, "rare": 4})
    chosen = stratified_subset(docs, 10, seed=0, benchmark="b")
    assert type_counts(chosen, docs) == {"ocr": 10, "rare": 4}
    assert chosen.short_task_types == [("rare", 4)]


def test_duplicate_question_ids_are_an_error_naming_the_id():
    docs = [*docs_of({"ocr": 3}), {"question_id": "ocr-001", "task_type": "counting"}]
    with pytest.raises(ValueError, match=r"'ocr-001' appears twice"):
        stratified_subset(docs, 2, seed=0, benchmark="b")


def test_docs_without_the_fields_and_bad_sizes_are_errors():
    with pytest.raises(ValueError, match="doc #1 has no task_type"):
        stratified_subset([{"question_id": "a", "task_type": "t"}, {"question_id": "b"}], 1, 0, "b")
    with pytest.raises(ValueError, match="at least 1"):
        stratified_subset(docs_of(SIZES), 0, 0, "b")
    with pytest.raises(ValueError, match="empty"):
        stratified_subset([], 1, 0, "b")


def test_reference_videomme_questions_ten_per_task_type():
    docs = read_docs(REFERENCE_QUESTIONS)
    chosen = stratified_subset(docs, 10, seed=0, benchmark="videomme")
    assert len(docs) == 600 and len(chosen) == 60
    assert dict(chosen.counts) == dict.fromkeys(
        [
            "Action Reasoning",
            "Action Recognition",
            "Attribute Perception",
            "OCR Problems",
            "Object Recognition",
            "Temporal Reasoning",
        ],
        10,
    )
    assert set(type_counts(chosen, docs).values()) == {10}


# ------------------------------------------------------------------------------------ files


def test_write_read_round_trip(tmp_path):
    chosen = stratified_subset(docs_of(SIZES), 10, seed=3, benchmark="b")
    path = write(chosen, tmp_path / "sets" / "b.json")
    data = json.loads(path.read_text())
    assert data["benchmark"] == "b" and data["seed"] == 3 and data["per_task_type"] == 10
    assert data["digest"] == chosen.digest and data["n_questions"] == 30
    assert data["counts"] == {"counting": 10, "ocr": 10, "temporal": 10} and data["ids"] == list(chosen.ids)
    again = read(path)
    assert again == chosen and again.source == str(path)


def test_a_text_file_of_ids_is_a_set_for_any_benchmark(tmp_path, monkeypatch):
    path = tmp_path / "ids.txt"
    path.write_text("# my ids\nq2\n\n  q1  \nq3\n")
    plain = read(path)
    assert plain.ids == ("q1", "q2", "q3") and plain.benchmark == "" and plain.seed == plain.per_task_type == -1
    monkeypatch.setenv(ENV_VAR, str(path))
    bound = active("videomme")
    assert bound.benchmark == "videomme" and bound.digest == digest_of("videomme", ["q3", "q1", "q2"])
    assert active("other").digest != bound.digest


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty question-set file"),
        ("{not json", "not valid JSON"),
        ('["a", "b"]', "expected a JSON object"),
        ('{"ids": ["a"]}', "no benchmark"),
        ('{"benchmark": "b"}', "no ids"),
        ('{"benchmark": "b", "ids": []}', "holds no question ids"),
        ('{"benchmark": "b", "ids": ["a", "a"]}', "'a' is listed twice"),
        ('{"benchmark": "b", "ids": ["a"], "seed": "x"}', "seed must be an integer"),
        ('{"benchmark": "b", "ids": ["a"], "counts": {"t": 2}}', "counts add up to 2"),
        ('{"benchmark": "b", "ids": ["a"], "digest": "000000000000"}', "does not match"),
        ('{"format": "other/2", "benchmark": "b", "ids": ["a"]}', "format"),
    ],
)
def test_bad_json_files_name_the_file_and_the_problem(tmp_path, text, problem):
    path = tmp_path / "set.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=problem) as exc:
        read(path)
    assert str(path) in str(exc.value)


def test_bad_text_files_and_missing_files(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_text("a\nb\na\n")
    with pytest.raises(ValueError, match=rf"{path}: question id 'a' is listed twice"):
        read(path)
    with pytest.raises(ValueError, match=rf"{tmp_path / 'nope.json'}: no such question-set file"):
        read(tmp_path / "nope.json")


def test_a_digest_less_json_file_is_accepted(tmp_path):
    path = tmp_path / "hand.json"
    path.write_text('{"benchmark": "b", "ids": ["x", "y"]}')
    assert read(path).digest == digest_of("b", ["x", "y"])


# ------------------------------------------------------------------------------------ VDG_QUESTION_SET


def test_active_follows_the_variable_and_the_benchmark(tmp_path, monkeypatch):
    chosen = stratified_subset(docs_of(SIZES), 5, seed=0, benchmark="videomme")
    path = write(chosen, tmp_path / "set.json")
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert active("videomme") is None and active_digest("videomme") == ""
    monkeypatch.setenv(ENV_VAR, "")
    assert active("videomme") is None
    monkeypatch.setenv(ENV_VAR, str(path))
    assert active("videomme") == chosen and active_digest("videomme") == chosen.digest
    # Another benchmark's set is not applied: one variable can stay set across benchmarks.
    assert active("mvbench") is None and active_digest("mvbench") == ""


def test_active_rereads_a_rewritten_file(tmp_path, monkeypatch):
    path = tmp_path / "set.json"
    monkeypatch.setenv(ENV_VAR, str(path))
    first = write(stratified_subset(docs_of(SIZES), 5, seed=0, benchmark="b"), path)
    assert active("b") == read(first)
    second = stratified_subset(docs_of(SIZES), 6, seed=0, benchmark="b")
    write(second, path)
    assert active("b") == second


def test_an_unreadable_active_file_is_an_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "missing.json"))
    with pytest.raises(ValueError, match=rf"{ENV_VAR}=.*missing.json"):
        active("b")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    monkeypatch.setenv(ENV_VAR, str(bad))
    with pytest.raises(ValueError, match="bad.json.*not valid JSON"):
        active("b")


def test_restrict_ids(tmp_path, monkeypatch, caplog):
    docs = docs_of(SIZES)
    ids = [d["question_id"] for d in docs]
    chosen = stratified_subset(docs, 5, seed=0, benchmark="b")
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert restrict_ids(ids, "b") == [True] * len(ids)
    monkeypatch.setenv(ENV_VAR, str(write(chosen, tmp_path / "set.json")))
    keep = restrict_ids(ids, "b")
    assert [q for q, k in zip(ids, keep, strict=True) if k] == sorted(chosen.ids, key=ids.index)
    assert restrict_ids(ids, "other") == [True] * len(ids)
    # An explicit set overrides the variable.
    assert sum(restrict_ids(ids, "b", question_set=stratified_subset(docs, 2, 0, "b"))) == 6
    # Set ids the docs lack: a warning; none kept: an error.
    with caplog.at_level("WARNING"):
        assert sum(restrict_ids(ids[:40], "b")) == 5
    assert "10 of its 15 question ids are not among the questions of b" in caplog.text
    with pytest.raises(ValueError, match="set.json: none of its 15 question ids"):
        restrict_ids(["zzz"], "b")


# ------------------------------------------------------------------------------------ read_docs


def test_read_docs_formats(tmp_path):
    docs = docs_of({"t": 3, "u": 2})
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "d.json").write_text(json.dumps(docs))
    pd.DataFrame(docs).to_parquet(tmp_path / "d.parquet")
    pd.DataFrame(docs).to_csv(tmp_path / "d.csv", index=False)
    for name in ("d.jsonl", "d.json", "d.parquet", "d.csv"):
        read = read_docs(tmp_path / name)
        assert [(d["question_id"], d["task_type"]) for d in read] == [
            (d["question_id"], d["task_type"]) for d in docs
        ], name


def test_read_docs_errors_name_the_file(tmp_path):
    (tmp_path / "no_type.jsonl").write_text('{"question_id": "a"}\n')
    with pytest.raises(ValueError, match="no_type.jsonl: no task_type field"):
        read_docs(tmp_path / "no_type.jsonl")
    (tmp_path / "dup.jsonl").write_text('{"question_id": "a", "task_type": "t"}\n' * 2)
    with pytest.raises(ValueError, match="dup.jsonl: question id 'a' appears twice"):
        read_docs(tmp_path / "dup.jsonl")
    (tmp_path / "broken.jsonl").write_text('{"question_id": "a", "task_type": "t"}\n{oops\n')
    with pytest.raises(ValueError, match="broken.jsonl:2: not valid JSON"):
        read_docs(tmp_path / "broken.jsonl")
    (tmp_path / "broken.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match="broken.parquet: unreadable"):
        read_docs(tmp_path / "broken.parquet")
    with pytest.raises(ValueError, match="nothing.json: no such file"):
        read_docs(tmp_path / "nothing.json")


# ------------------------------------------------------------------------------------ vdg subset


def test_cli_subset_from_docs(tmp_path, capsys):
    docs = docs_of({**SIZES, "rare": 3})
    source = tmp_path / "docs.jsonl"
    source.write_text("".join(json.dumps(d) + "\n" for d in docs))
    out = tmp_path / "sets" / "b.json"
    argv = ["subset", "b", "--per-task-type", "10", "--seed", "4", "--out", str(out), "--docs", str(source)]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert printed.out.strip() == str(out)
    chosen = read(out)
    assert chosen == stratified_subset(docs, 10, seed=4, benchmark="b") and len(chosen) == 33
    assert "    10  ocr" in printed.err and "     3  rare" in printed.err
    assert "task type 'rare' has only 3 questions (fewer than 10)" in printed.err
    assert f"digest {chosen.digest}" in printed.err and f"VDG_QUESTION_SET={out}" in printed.err
    # The same command writes the same file.
    first = out.read_text()
    assert main(argv) == 0 and out.read_text() == first


def test_cli_subset_reference_questions(tmp_path, capsys):
    out = tmp_path / "videomme.json"
    assert (
        main(["subset", "videomme", "--per-task-type", "10", "--out", str(out), "--docs", str(REFERENCE_QUESTIONS)])
        == 0
    )
    assert set(json.loads(out.read_text())["counts"].values()) == {10} and len(read(out)) == 60
    assert "warning" not in capsys.readouterr().err


def test_cli_subset_loads_the_benchmark_docs(tmp_path, monkeypatch, capsys):
    asked = []

    def fake(benchmark):
        asked.append(benchmark)
        return docs_of(SIZES)

    monkeypatch.setattr(materialize, "load_docs", fake)
    out = tmp_path / "set.json"
    assert main(["subset", "videomme", "--per-task-type", "100", "--out", str(out)]) == 0
    assert asked == ["videomme"] and len(read(out)) == 95
    err = capsys.readouterr().err
    assert all(f"task type {t!r} has only {n} questions" in err for t, n in SIZES.items())


def test_cli_subset_errors_exit_2(tmp_path, capsys):
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"question_id": "a", "task_type": "t"}\n' * 2)
    assert main(["subset", "b", "--out", str(tmp_path / "o.json"), "--docs", str(dup)]) == 2
    assert "vdg subset: --docs" in capsys.readouterr().err and not (tmp_path / "o.json").exists()
    ok = tmp_path / "ok.jsonl"
    ok.write_text('{"question_id": "a", "task_type": "t"}\n')
    assert main(["subset", "b", "--per-task-type", "0", "--out", str(tmp_path / "o.json"), "--docs", str(ok)]) == 2
    assert "at least 1" in capsys.readouterr().err


def test_cli_subset_of_an_unknown_benchmark_names_the_known_ones(tmp_path, capsys):
    assert main(["subset", "videome", "--out", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert "vdg subset: unknown benchmark 'videome'; known: " in err and "videomme" in err
    assert not (tmp_path / "o.json").exists()
