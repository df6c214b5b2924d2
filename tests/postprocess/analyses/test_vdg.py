import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.ladder import ladder_table
from postprocess.analyses.vdg import COLUMNS, vdg_table
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.report import write_report
from tests.helpers.fakelogs import sample, write_run


def _random_run(tmp_path, n=120, seed=3, with_error=True):
    rng = np.random.default_rng(seed)
    truth = {}
    per_task = {c: [] for c in ("orig", "black", "single", "shuffled", "ordered")}
    for i in range(n):
        qid, tt = f"v{i:03d}-1", f"T{i % 3}"
        for cond in per_task:
            right = bool(
                rng.random() < {"orig": 0.8, "ordered": 0.75, "shuffled": 0.7, "single": 0.5, "black": 0.3}[cond]
            )
            err = with_error and cond == "orig" and i == 7
            pred = "A" if right else "B"
            per_task[cond].append(
                sample(qid, cond, None if err else pred, task_type=tt, error="VideoDecodeError: x" if err else None)
            )
            truth[(qid, cond)] = (right, tt, err)
    run = write_run(tmp_path / "run", "m", {f"vdgsynth_vdg_{c}": s for c, s in per_task.items()})
    return run, truth


def test_vdg_matches_an_independent_count(tmp_path):
    run, truth = _random_run(tmp_path)
    table = vdg_table(load_frame([run]), ReportSettings(n_resamples=500))
    assert list(table.columns) == list(COLUMNS)
    overall = table[table.task_type == "Overall"].iloc[0]
    kept = [q for (q, c), (_, _, err) in truth.items() if c == "orig" and not err]
    orig = np.array([truth[(q, "orig")][0] for q in kept])
    black = np.array([truth[(q, "black")][0] for q in kept])
    assert overall.n == len(kept) == 119 and overall.n_error == 1
    np.testing.assert_allclose(overall.acc_orig, orig.mean(), atol=1e-12)
    np.testing.assert_allclose(overall.vdg, orig.mean() - black.mean(), atol=1e-12)
    assert overall.d == int((orig & ~black).sum()) and overall.c == int((~orig & black).sum())
    assert overall.ci_low < overall.vdg < overall.ci_high
    per_type = table[table.task_type != "Overall"]
    assert per_type.n.sum() == overall.n and set(per_type.task_type) == {"T0", "T1", "T2"}


def test_missing_incorrect_scores_errors_wrong(tmp_path):
    run, truth = _random_run(tmp_path)
    overall = (
        vdg_table(load_frame([run]), ReportSettings(n_resamples=200, missing="incorrect"))
        .query("task_type == 'Overall'")
        .iloc[0]
    )
    assert overall.n == 120 and overall.n_error == 0 and overall.missing_policy == "incorrect"


def test_ladder_deltas_sum_to_the_vdg_on_the_same_questions(tmp_path):
    run, _ = _random_run(tmp_path)
    frame = load_frame([run])
    ladder = ladder_table(frame).set_index("task_type")
    vdg = vdg_table(frame, ReportSettings(n_resamples=100)).set_index("task_type")
    for tt in ladder.index:
        total = ladder.loc[tt, ["spatial", "diversity", "temporal", "sampling"]].sum()
        assert total == pytest.approx(ladder.loc[tt, "acc_orig"] - ladder.loc[tt, "acc_black"])
        assert ladder.loc[tt, "acc_orig"] - ladder.loc[tt, "acc_black"] == pytest.approx(vdg.loc[tt, "vdg"])


def test_bootstrap_is_seeded_from_stable_ids(tmp_path):
    """A resampled CI stays put when the model is renamed and in a process whose str hashes differ; another
    seed moves it (a control: the CI does depend on its seed)."""
    run, _ = _random_run(tmp_path)
    options, columns = ReportSettings(n_resamples=300, ci_method="resample"), ["task_type", "vdg", "ci_low", "ci_high"]
    here = vdg_table(load_frame([f"m={run}"]), options)[columns]
    renamed = vdg_table(load_frame([f"a-much-longer-label={run}"]), options)[columns]
    pd.testing.assert_frame_equal(here, renamed)
    code = (
        "from postprocess.analyses import ReportSettings; from postprocess.analyses.vdg import vdg_table; "
        "from postprocess.reading.lmms_eval_logs import load_frame; "
        f"t = vdg_table(load_frame(['m={run}']), ReportSettings(n_resamples=300, ci_method='resample')); "
        f"print(t[{columns!r}].to_json(orient='records', double_precision=15))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    elsewhere = pd.DataFrame(json.loads(other.stdout))[columns]
    pd.testing.assert_frame_equal(here.reset_index(drop=True), elsewhere, check_dtype=False, rtol=1e-12)
    reseeded = vdg_table(load_frame([f"m={run}"]), ReportSettings(n_resamples=300, ci_method="resample", seed=1))
    assert not np.allclose(reseeded["ci_low"], here["ci_low"], equal_nan=True)


def test_report_files_and_markdown(tmp_path):
    run, _ = _random_run(tmp_path)
    md = write_report(run_all(load_frame([run]), ReportSettings(n_resamples=200)), tmp_path / "out")
    for name in ("vdg.csv", "ladder.csv", "coverage.csv", "report.md"):
        assert (tmp_path / "out" / name).is_file()
    assert "Visual Dependency Gap by task type" in md and "| Overall" in md
    assert "errors" in md  # the error row is flagged


def _graded_sample(question_id, condition, score, task_type="T1", benchmark="numbench", error=None):
    """A record of a task scored by its own per-question metric (``metric:mra``), as the hooks log it."""
    record = sample(question_id, condition, None, answer="4", task_type=task_type, benchmark=benchmark, error=error)
    status = "error" if error else "ok"
    record["vdg"].update(
        status=status,
        scoring="metric:mra",
        score=None if error else float(score),
        correct=None if error else bool(score >= 0.5),
    )
    return record


def test_vdg_on_a_graded_score_is_the_mean_score_difference_and_says_so(tmp_path):
    rng = np.random.default_rng(11)
    levels = [0.0, 0.3, 0.7, 1.0]
    scores = {q: (float(rng.choice(levels)), float(rng.choice(levels))) for q in range(40)}
    orig = [_graded_sample(f"q{q}-0", "orig", o, f"T{q % 2}") for q, (o, _) in scores.items()]
    black = [_graded_sample(f"q{q}-0", "black", b, f"T{q % 2}") for q, (_, b) in scores.items()]
    black[0] = _graded_sample("q0-0", "black", 0.0, "T0", error="undecodable")
    letters = [
        sample(f"l{q}-0", c, "A" if (q + (c == "black")) % 3 else "B") for q in range(30) for c in ("orig", "black")
    ]
    run = write_run(
        tmp_path / "m",
        "m",
        {"numbench_vdg_orig": orig, "numbench_vdg_black": black, "vdgsynth_vdg": letters},
    )
    frame = load_frame([run])
    table = vdg_table(frame, ReportSettings(n_resamples=500)).set_index(["benchmark", "task_type"])
    kept = [q for q in scores if q != 0]
    gap = np.array([scores[q][0] - scores[q][1] for q in kept])
    graded = table.loc[("numbench", "Overall")]
    assert graded.n == len(kept) == 39 and graded.n_error == 1
    np.testing.assert_allclose(graded.vdg, gap.mean(), atol=1e-12)
    np.testing.assert_allclose(graded.acc_orig, np.mean([scores[q][0] for q in kept]), atol=1e-12)
    assert (graded.d, graded.c) == (int((gap > 0).sum()), int((gap < 0).sum()))
    assert graded.scale == "graded score in [0, 1]" and graded.ci_low < graded.vdg < graded.ci_high
    assert table.loc[("vdgsynth", "Overall"), "scale"] == "correct (0/1)"
    per_question = run_all(frame, ReportSettings(n_resamples=200))["vdg_per_question"].set_index(
        ["benchmark", "question_id"]
    )
    row = per_question.loc[("numbench", "q5-0")]
    assert (row.score_orig, row.score_black, row.vdg) == (scores[5][0], scores[5][1], scores[5][0] - scores[5][1])
    assert row.correct_orig == (scores[5][0] >= 0.5) and row.scale == "graded score in [0, 1]"
    letter = per_question.loc[("vdgsynth", "l1-0")]
    assert letter.vdg in (-1, 0, 1) and letter.score_orig == float(letter.correct_orig)


def _clusters_the_long_way(videos, question_ids, cluster):
    """``ci_clusters`` as it was written before its shortcuts: every id through pandas, blanks by question."""
    if cluster == "question" or not len(videos):
        return None
    ids = pd.Series(videos, dtype=object)
    blank = ids.isna().to_numpy() | ids.astype(str).eq("").to_numpy()
    ids = ids.astype(str).to_numpy(dtype=object)
    if blank.any():
        ids[blank] = ["\x00question\x00" + str(q) for q in np.asarray(question_ids, dtype=object)[blank]]
    if cluster == "auto" and len(pd.unique(ids)) == len(ids):
        return None
    return ids


@pytest.mark.parametrize("cluster", ["auto", "video", "question"])
@pytest.mark.parametrize(
    "videos",
    [
        ["v2", "v1", "v2", "v10", "é", "v1"],  # plain ids, shared: the text shortcut
        ["v2", "v1", "v3"],  # every video once: None under auto
        ["v2", "", "v2", None, "v1", np.nan],  # blanks: each its own cluster
        ["v2", 7, "v2", 7.0, "v1", "v1"],  # not str: as text
        ["v\x00", "v", "v\x00", "v"],  # a trailing NUL NumPy's text would drop: kept as Python strings
    ],
)
def test_ci_clusters_shortcuts_give_the_long_ways_clusters_in_its_order(videos, cluster):
    """Object ids, and ``as_text``'s fixed-width text of them, cluster as the straightforward pandas pass does:
    the same clusters, numbered in the same sorted order (what np.unique hands the CIs)."""
    from postprocess.analyses.vdg import as_text, ci_clusters

    options = ReportSettings(cluster=cluster)
    videos = np.array(videos, dtype=object)
    qids = np.array([f"q{i}" for i in range(len(videos))], dtype=object)
    want = _clusters_the_long_way(videos, qids, cluster)
    for given in (videos, as_text(videos)):
        got = ci_clusters(given, qids, options)
        if want is None:
            assert got is None
            continue
        assert list(got) == list(want)
        assert np.array_equal(np.unique(got, return_inverse=True)[1], np.unique(want, return_inverse=True)[1])
    text = as_text(videos)
    assert (text.dtype.kind == "U") == all(isinstance(v, str) and v and not v.endswith("\x00") for v in videos)
