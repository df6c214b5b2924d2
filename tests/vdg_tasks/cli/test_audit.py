"""vdg shortcuts and vdg debias from the command line, and their files read back by vdg report."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.helpers.fakelogs import sample, write_run
from vdg_tasks.cli import main
from vdg_tasks.data import question_sets
from vdg_tasks.synthetic.shortcut_bench import write_shortcut_docs

FAST = ["--resamples", "200", "--stability-resamples", "50", "--no-plots", "--workers", "1"]


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit")
    docs = write_shortcut_docs(root / "docs.jsonl", per_task_type=45, seed=5)
    assert main(["shortcuts", "planted", "--docs", str(docs), "--out", str(root / "short")]) == 0
    args = ["debias", "planted", "--docs", str(docs), "--frac", "0.2", "--controls", "3", "--rounds", "2"]
    assert main([*args, "--out", str(root / "debias")]) == 0
    return root, [json.loads(line) for line in docs.read_text().splitlines()]


def test_shortcuts_writes_both_tables(audited):
    root, docs = audited
    # "null" is a task type here, not a missing value
    scores = pd.read_csv(root / "short" / "shortcuts.csv", keep_default_na=False)
    types = pd.read_csv(root / "short" / "shortcut_types.csv", keep_default_na=False)
    assert len(scores) == 3 * len(docs) and set(scores.answerer) == {"linear", "forest", "combined"}
    assert set(types.task_type) == {"overlap", "longest", "number", "null", "Overall"}


def test_debias_writes_the_debiased_set_and_both_kinds_of_control(audited):
    root, docs = audited
    folder = root / "debias"
    names = sorted(p.stem for p in folder.glob("*.json"))
    assert names == ["debiased", *[f"matched_{i:02d}" for i in range(3)], *[f"uniform_{i:02d}" for i in range(3)]]
    pruned = pd.read_csv(folder / "pruned.csv")
    assert len(pruned) == round(0.2 * len(docs))
    debiased = question_sets.read(folder / "debiased.json")
    assert len(debiased) == len(docs) - len(pruned) and not set(debiased.ids) & set(pruned.question_id)
    assert debiased.description.startswith("debiased: iterative bias pruning")
    by_type = pruned.task_type.value_counts().to_dict()
    for i in range(3):
        matched = question_sets.read(folder / f"matched_{i:02d}.json")
        assert dict(matched.counts) == {t: 45 - by_type.get(t, 0) for t in ("longest", "null", "number", "overlap")}
        uniform = question_sets.read(folder / f"uniform_{i:02d}.json")
        assert len(uniform) == len(debiased)
        assert dict(uniform.counts) == {t: 45 - len(pruned) // 4 for t in ("longest", "null", "number", "overlap")}


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--frac", "1.5"], "--frac must be between 0 and 1"), (["--budget", "0"], "--budget must be between")],
)
def test_debias_refuses_bad_amounts_with_exit_status_2(audited, tmp_path, capsys, extra, message):
    root, _ = audited
    assert main(["debias", "x", "--docs", str(root / "docs.jsonl"), *extra, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_shortcuts_names_a_missing_docs_file(tmp_path, capsys):
    assert main(["shortcuts", "x", "--docs", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o")]) == 2
    assert "none.jsonl: no such file" in capsys.readouterr().err


def test_report_reads_the_shortcuts_and_the_named_sets(audited, tmp_path):
    root, docs = audited
    samples = {
        f"planted_vdg_{condition}": [
            sample(
                d["question_id"],
                condition,
                d["answer"] if condition == "orig" else "A",
                answer=d["answer"],
                task_type=d["task_type"],
                video_id=d["videoID"],
                benchmark="planted",
            )
            for d in docs
        ]
        for condition in ("orig", "black")
    }
    options = {d["question_id"]: len(d["options"]) for d in docs}
    for record in (s["vdg"] for rows in samples.values() for s in rows):
        record["n_options"] = options[record["question_id"]]  # 3 to 5 options, as the hooks log them
    run = write_run(tmp_path / "run", "m", samples)
    folder = root / "debias"
    args = ["report", str(run), "--out", str(tmp_path / "report"), "--shortcuts", str(root / "short" / "shortcuts.csv")]
    args += [
        "--question-set",
        f"debiased={folder / 'debiased.json'}",
        "--question-set",
        str(folder / "uniform_00.json"),
    ]
    assert main([*args, "--question-set", "per-model", *FAST]) == 0
    comparison = pd.read_csv(tmp_path / "report" / "question_set_comparison.csv")
    links = pd.read_csv(tmp_path / "report" / "shortcut_links.csv")
    assert links.set_index("condition").loc["black", "n"] == len(docs)
    assert comparison.question_set.tolist() == ["all", "debiased", "uniform_00"]
    assert comparison.n.tolist() == [len(docs), len(question_sets.read(folder / "debiased.json"))] * 1 + [
        len(question_sets.read(folder / "uniform_00.json"))
    ]
    assert not pd.read_csv(tmp_path / "report" / "vdg_by_shortcut.csv").empty
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["options"]["question_set"] == "per-model"
    assert len(report["inputs"]["question_sets"]) == 2 and report["inputs"]["shortcuts"]


def test_report_names_a_question_set_that_is_no_file(tmp_path, capsys):
    run = write_run(tmp_path / "run", "m", {"vdgsynth_vdg_orig": [sample("q1", "orig", "A")]})
    args = ["report", str(run), "--out", str(tmp_path / "r"), "--question-set", "sharde", *FAST]
    assert main(args) == 2
    assert "--question-set sharde: no such file" in capsys.readouterr().err


@pytest.mark.slow  # vdg derive indexes lmms-eval's task folders (about 8 s), as the derive tests do
def test_shortcuts_reads_a_derived_tasks_questions(tmp_path, capsys):
    from tests.helpers.derive_base import BASE_TASK, QUESTIONS, write_base_task

    base = write_base_task(tmp_path / "base")
    args = ["derive", BASE_TASK, "--include_path", str(base), "--out", str(tmp_path / "derived")]
    assert main([*args, "--video-id", "clip", "--task-type", "category", "--conditions", "orig"]) == 0
    capsys.readouterr()
    out = tmp_path / "short"
    assert main(["shortcuts", BASE_TASK, "--derived", str(tmp_path / "derived"), "--out", str(out)]) == 0
    # q5's answer is none of its options: left out and named; every other question is read with its task type
    assert "1 question(s) without a ground-truth answer left out: q5" in capsys.readouterr().err
    types = pd.read_csv(out / "shortcut_types.csv", keep_default_na=False)
    notes = types[types.answerer == "combined"].set_index("task_type").note.to_dict()
    assert set(notes) == {q[4] for q in QUESTIONS[:5]}  # each category has one video: listed, not scored
    assert all("cross-validation grouped by video needs 2" in n for n in notes.values())


def test_shortcuts_names_a_folder_without_the_derived_task(tmp_path, capsys):
    assert main(["shortcuts", "nothing", "--derived", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no " + str(tmp_path / "nothing" / "vdg_derive.json") in capsys.readouterr().err


def test_debias_of_a_benchmark_whose_text_answers_nothing_prunes_nothing(audited, tmp_path, capsys):
    _, docs = audited
    null_docs = tmp_path / "null.jsonl"
    null_docs.write_text("".join(json.dumps(d) + "\n" for d in docs if d["task_type"] == "null"))
    assert main(["debias", "null", "--docs", str(null_docs), "--frac", "0.2", "--out", str(tmp_path / "d")]) == 0
    assert "nothing to prune" in capsys.readouterr().err
    assert pd.read_csv(tmp_path / "d" / "pruned.csv").empty and not list((tmp_path / "d").glob("*.json"))


@pytest.mark.slow
def test_debias_stops_short_of_the_budget_and_says_so(audited, tmp_path, capsys):
    root, docs = audited
    out = tmp_path / "d"
    args = ["debias", "planted", "--docs", str(root / "docs.jsonl"), "--frac", "0.9", "--controls", "1"]
    assert main([*args, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    pruned = pd.read_csv(out / "pruned.csv", keep_default_na=False)
    assert len(pruned) < round(0.9 * len(docs)) and f"stopped after {len(pruned)} of the" in err
    assert "null" not in set(pruned.task_type)
    assert len(question_sets.read(out / "debiased.json")) == len(docs) - len(pruned)


@pytest.mark.slow
def test_debias_replaces_an_earlier_runs_sets(audited, tmp_path, capsys):
    root, _ = audited
    out = tmp_path / "d"
    args = ["debias", "planted", "--docs", str(root / "docs.jsonl"), "--frac", "0.2", "--rounds", "1"]
    assert main([*args, "--controls", "3", "--out", str(out)]) == 0
    assert main([*args, "--controls", "1", "--out", str(out)]) == 0
    assert sorted(p.stem for p in out.glob("*.json")) == ["debiased", "matched_00", "uniform_00"]
    assert "removed 7 question sets an earlier run wrote" in capsys.readouterr().err


def test_shortcuts_writes_into_a_folder_of_the_benchmarks_name_by_default(tmp_path, monkeypatch, capsys):
    docs = write_shortcut_docs(tmp_path / "docs.jsonl", per_task_type=12, seed=1)
    monkeypatch.chdir(tmp_path)
    assert main(["shortcuts", "../out of/planted", "--docs", str(docs)]) == 0  # a name that is no folder name
    written = tmp_path / "shortcuts____out_of_planted"
    assert (written / "shortcuts.csv").is_file() and (written / "shortcut_types.csv").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl", written.name]
    assert "<0.001" in capsys.readouterr().out  # the planted shortcuts' p-values, not 0.000
