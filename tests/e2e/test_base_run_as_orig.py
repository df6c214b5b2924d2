"""A plain run of a base task read as orig gives the report vdg's own orig run gives: lmms-eval's Video-MME and a
derived task.

lmms-eval's ``videomme`` config, unchanged but for its dataset (a stand-in with the hub's columns, its rows in
another order than vdg's copy) and its name, runs with vdg_probe through the real CLI; vdg's
``videomme_vdg_orig`` and ``videomme_vdg_black`` run on the same questions. ``vdg report`` on the plain run plus
the black run must give, row by row, the per-question table the orig + black pair gives.
"""

from __future__ import annotations

import pandas as pd
import pytest

from postprocess.reading.files import PLAIN_RUN_KIND
from tests.helpers.derive_base import BASE_TASK, QUESTIONS, write_base_task
from tests.helpers.runs import lmms_eval, offline_env
from tests.helpers.standins import write_standins
from vdg_tasks.cli import main
from vdg_tasks.data.upstream import lmms_eval_tasks_dir
from vdg_tasks.lmms.yamlgen import YAML_ROOT

pytestmark = pytest.mark.slow

FAST = ["--resamples", "200", "--stability-resamples", "50", "--no-plots", "--workers", "1"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("base_orig")
    rows = write_standins(root / "local")["videomme"]
    env = {**offline_env(root), "VDG_LOCAL_DATA": str(root / "local")}
    # lmms-eval's own lookup reads $HF_HOME/videomme/data/<videoID>.mp4
    videos = root / "hf" / "videomme" / "data"
    videos.mkdir(parents=True)
    for video_id in {r["videoID"] for r in rows}:
        (videos / f"{video_id}.mp4").symlink_to(root / "local" / "videomme" / "videos" / f"{video_id}.mp4")
    data = root / "base_data" / "test.parquet"
    data.parent.mkdir()
    pd.DataFrame(rows[::-1]).to_parquet(data)  # its doc_ids are not vdg's positions
    tasks = root / "base_tasks"
    tasks.mkdir()
    (tasks / "videomme_standin.yaml").write_text(
        f"include: {lmms_eval_tasks_dir() / 'videomme' / 'videomme.yaml'}\n"
        "task: videomme_standin\n"
        "dataset_path: parquet\n"
        f"dataset_kwargs:\n  data_files:\n    test: {data}\n"
    )
    base = lmms_eval(env, root / "runs" / "base", tasks, "vdg_probe", "videomme_standin")
    ours = lmms_eval(env, root / "runs" / "vdg", YAML_ROOT, "vdg_probe", "videomme_vdg_orig,videomme_vdg_black")
    return {"root": root, "rows": rows, "tasks": tasks, "base": base, "vdg": ours, "env": env}


def _report(monkeypatch, env, out, *args) -> pd.DataFrame:
    for key in ("VDG_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "VDG_LOCAL_DATA"):
        monkeypatch.setenv(key, env[key])
    assert main(["report", *args, "--out", str(out), *FAST]) == 0
    return pd.read_csv(out / "vdg_per_question.csv")


def test_the_plain_run_as_orig_gives_the_per_question_table_of_vdgs_orig_run(runs, monkeypatch, capsys):
    root, vdg = runs["root"], runs["vdg"]
    (black,) = vdg.rglob("*_samples_videomme_vdg_black.jsonl")
    (plain,) = runs["base"].rglob("*_samples_videomme_standin.jsonl")
    ours = _report(monkeypatch, runs["env"], root / "report_vdg", f"probe={vdg}")
    theirs = _report(
        monkeypatch,
        runs["env"],
        root / "report_base",
        f"probe={runs['base']}",
        f"probe={black}",
        "--include_path",
        str(runs["tasks"]),
    )
    assert len(ours) == len(runs["rows"]) == 4
    key = ["model", "benchmark", "question_id"]
    pd.testing.assert_frame_equal(
        ours.sort_values(key).reset_index(drop=True), theirs.sort_values(key).reset_index(drop=True)
    )
    err = capsys.readouterr().err
    assert f"orig of videomme from {plain}" in err
    sources = pd.read_csv(root / "report_base" / "sources.csv")
    row = sources[sources.file == str(plain)].iloc[0]
    assert row.kind == PLAIN_RUN_KIND and row.conditions == "orig" and row.n_records == 4
    report = (root / "report_base" / "report.md").read_text()
    assert "Orig from plain runs of the benchmark's base task" in report
    (listed,) = [line for line in report.splitlines() if line.startswith(f"| {plain} ")]
    assert [cell.strip() for cell in listed.strip("|").split("|")] == [str(plain), "probe", "videomme", "4"]


def test_the_plain_run_on_other_docs_is_refused(runs, monkeypatch, capsys, tmp_path):
    (black,) = runs["vdg"].rglob("*_samples_videomme_vdg_black.jsonl")
    (plain,) = runs["base"].rglob("*_samples_videomme_standin.jsonl")
    copy = tmp_path / "base"
    copy.mkdir()
    lines = plain.read_text().splitlines()
    (copy / plain.name).write_text("\n".join(lines[:-1]) + "\n")
    (results,) = plain.parent.glob("*_results.json")
    (copy / results.name).write_text(results.read_text())
    for key in ("VDG_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(key, runs["env"][key])
    args = ["report", f"probe={copy}", f"probe={black}", "--include_path", str(runs["tasks"]), "--out", str(tmp_path)]
    assert main([*args, *FAST]) == 2
    assert "3 samples, but lmms-eval's videomme_standin has 4 docs" in capsys.readouterr().err


@pytest.fixture(scope="module")
def derived_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("base_orig_derived")
    base = write_base_task(root / "base")
    # the base task's own scorer raises on the question without a ground truth: a plain run needs it gone
    questions = base / "questions.jsonl"
    questions.write_text("".join(line + "\n" for line in questions.read_text().splitlines() if '"q5"' not in line))
    out = root / "derived"
    args = ["derive", BASE_TASK, "--include_path", str(base), "--out", str(out), "--conditions", "orig,black"]
    assert main([*args, "--video-id", "clip", "--task-type", "category"]) == 0
    env = offline_env(root)
    plain = lmms_eval(env, root / "runs" / "plain", base, "vdg_probe", BASE_TASK)
    ours = lmms_eval(env, root / "runs" / "vdg", out, "vdg_probe", f"{BASE_TASK}_vdg_orig,{BASE_TASK}_vdg_black")
    return {"root": root, "base": base, "out": out, "plain": plain, "vdg": ours, "env": env}


def test_a_derived_tasks_plain_run_is_mapped_through_doc_id(derived_runs, monkeypatch, capsys):
    runs, root = derived_runs, derived_runs["root"]
    (black,) = runs["vdg"].rglob(f"*_samples_{BASE_TASK}_vdg_black.jsonl")
    for key in ("VDG_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(key, runs["env"][key])
    assert main(["report", f"probe={runs['vdg']}", "--out", str(root / "ours"), *FAST]) == 0
    args = [f"probe={runs['plain']}", f"probe={black}", "--derived", str(runs["out"]), "--include_path"]
    assert main(["report", *args, str(runs["base"]), "--out", str(root / "theirs"), *FAST]) == 0
    assert f"orig of {BASE_TASK} from" in capsys.readouterr().err
    ours, theirs = (pd.read_csv(root / name / "vdg_per_question.csv") for name in ("ours", "theirs"))
    key = ["model", "benchmark", "question_id"]
    assert len(ours) == len(QUESTIONS) - 1
    pd.testing.assert_frame_equal(
        ours.sort_values(key).reset_index(drop=True), theirs.sort_values(key).reset_index(drop=True)
    )
