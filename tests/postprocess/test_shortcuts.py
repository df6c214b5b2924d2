"""The text-only answerers: planted shortcuts found, a null task type at chance, features counted by hand,
scores independent of the process, bad input named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from postprocess.shortcuts import (
    FEATURES,
    QUESTION_COLUMNS,
    TYPE_COLUMNS,
    option_features,
    shortcut_scores,
    type_summary,
)
from vdg_tasks.data.text_questions import text_questions
from vdg_tasks.synthetic.shortcut_bench import TASK_TYPES, shortcut_docs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def planted():
    questions = pd.DataFrame(text_questions("planted", shortcut_docs(per_task_type=300, seed=0))[0])
    scores, types = shortcut_scores(questions)
    return questions, scores, types


def test_every_planted_shortcut_is_found_far_above_chance_and_the_null_type_is_not(planted):
    _, _, types = planted
    combined = types[types.answerer == "combined"].set_index("task_type")
    for task_type in ("overlap", "longest", "number"):
        row = combined.loc[task_type]
        assert row.n == 300 and row.ci_low > row.chance + 0.4, (task_type, row.accuracy, row.chance)
        assert row.p_above_chance < 1e-10
    null = combined.loc["null"]
    assert null.ci_low <= null.chance <= null.ci_high, (null.accuracy, null.chance)
    # chance: the mean of 1 / options over the null type's questions, counted here from the docs
    docs = [d for d in shortcut_docs(per_task_type=300, seed=0) if d["task_type"] == "null"]
    np.testing.assert_allclose(null.chance, np.mean([1 / len(d["options"]) for d in docs]), atol=1e-12)


def test_the_summary_counts_what_the_per_question_rows_say(planted):
    _, scores, types = planted
    assert list(scores.columns) == list(QUESTION_COLUMNS) and list(types.columns) == list(TYPE_COLUMNS)
    assert len(scores) == 3 * 300 * len(TASK_TYPES)
    for (task_type, answerer), rows in scores.groupby(["task_type", "answerer"]):
        row = types[(types.task_type == task_type) & (types.answerer == answerer)].iloc[0]
        np.testing.assert_allclose(row.accuracy, rows.picked.mean(), atol=1e-12)
        np.testing.assert_allclose(row.mean_s, rows.s.mean(), atol=1e-12)


def test_questions_about_one_video_are_held_out_together(planted):
    _, scores, _ = planted
    folds_per_video = scores.groupby("video_id").fold.nunique()
    assert (folds_per_video == 1).all()
    assert scores.fold.nunique() == 5


def test_scores_are_probabilities_over_each_questions_options(planted):
    questions, scores, _ = planted
    combined = scores[scores.answerer == "combined"]
    assert combined.s.between(0, 1).all()
    # a question's s is at most 1 and the right option's share: the picked questions have s >= 1 / options
    assert (combined[combined.picked].s >= 1 / combined[combined.picked].n_options - 1e-12).all()


def test_option_features_count_by_hand():
    question = pd.DataFrame(
        [
            {
                "benchmark": "b",
                "question_id": "q1",
                "video_id": "v1",
                "task_type": "t",
                "question": "What did the cat eat after minute 12?",
                "options": ("a small cat bowl", "12 fish", "bread"),
                "answer": 1,
            }
        ]
    )
    features = option_features(question)
    assert list(features.columns) == ["question_id", "option", "right", *FEATURES]
    first, second, third = (features.iloc[i] for i in range(3))
    assert (first.n_chars, first.n_words, second.n_words) == (16, 4, 2)  # len("a small cat bowl") == 16
    assert (first.is_longest, third.is_shortest, second.is_longest) == (1.0, 1.0, 0.0)
    # lengths 16, 7, 5: ranks 3, 2, 1 -> (rank - 1) / (n - 1)
    assert (first.length_rank, second.length_rank, third.length_rank) == (1.0, 0.5, 0.0)
    assert first.question_overlap == 1  # "cat" ("a" is a stop word; "small", "bowl" are not in the question)
    assert (second.has_number, second.number_in_question, first.has_number) == (1.0, 1.0, 0.0)
    assert (first.position, third.position) == (0.0, 1.0)
    assert features.right.tolist() == [False, True, False]


@pytest.mark.slow
def test_scores_do_not_depend_on_the_process_or_the_order_of_the_questions(tmp_path):
    code = (
        "import sys, pandas as pd\n"
        "from vdg_tasks.synthetic.shortcut_bench import shortcut_docs\n"
        "from vdg_tasks.data.text_questions import text_questions\n"
        "from postprocess.shortcuts import shortcut_scores\n"
        "docs = shortcut_docs(per_task_type=30, seed=4)\n"
        "docs = docs[::-1] if sys.argv[1] == 'reversed' else docs\n"
        "scores, _ = shortcut_scores(pd.DataFrame(text_questions('b', docs)[0]))\n"
        "cols = ['question_id', 'answerer', 's', 'picked', 'fold']\n"
        "print(scores.sort_values(['answerer', 'question_id'])[cols].to_csv(index=False))\n"
    )
    outputs = []
    for hash_seed, order in (("1", "forward"), ("98765", "reversed")):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run(
            [sys.executable, "-c", code, order], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1] and outputs[0].count("\n") > 100


def _one(**changes) -> pd.DataFrame:
    row = {
        "benchmark": "b",
        "question_id": "q1",
        "video_id": "v1",
        "task_type": "t",
        "question": "Which?",
        "options": ("x", "y"),
        "answer": 0,
    }
    return pd.DataFrame([{**row, **changes}])


@pytest.mark.parametrize(
    ("questions", "message"),
    [
        (_one().drop(columns="question"), "lack column"),
        (pd.concat([_one(), _one()]), "question 'q1' of b appears twice"),
        (_one(options=("only",)), "question 'q1': 1 option"),
        (_one(answer=2), "question 'q1': answer index 2 is not one of its 2 options"),
    ],
)
def test_bad_input_is_refused_naming_the_question(questions, message):
    with pytest.raises(ValueError, match=message):
        shortcut_scores(questions)


def test_a_task_type_about_one_video_is_listed_with_the_reason_and_left_out():
    questions = pd.concat(
        [_one(question_id=f"q{i}", task_type="lonely", video_id="only") for i in range(4)], ignore_index=True
    )
    scores, types = shortcut_scores(questions)
    assert scores.empty
    assert set(types.note) == {"questions about 1 video(s): cross-validation grouped by video needs 2"}
    assert (types.n == 0).all()


def test_type_summary_wilson_interval_and_binomial_p_match_statsmodels_and_scipy():
    from scipy.stats import binomtest
    from statsmodels.stats.proportion import proportion_confint

    scores = pd.DataFrame(
        {
            "benchmark": "b",
            "question_id": [f"q{i}" for i in range(40)],
            "task_type": "t",
            "answerer": "combined",
            "n_options": 4,
            "s": np.linspace(0, 1, 40),
            "picked": [i % 3 == 0 for i in range(40)],  # 14 of 40
            "chance": 0.25,
        }
    )
    row = type_summary(scores).query("task_type == 't'").iloc[0]
    low, high = proportion_confint(14, 40, alpha=0.05, method="wilson")
    np.testing.assert_allclose([row.ci_low, row.ci_high], [low, high], atol=1e-12)
    np.testing.assert_allclose(row.p_above_chance, binomtest(14, 40, 0.25, alternative="greater").pvalue, rtol=1e-9)
    none_right = type_summary(scores.assign(picked=False)).query("task_type == 't'").iloc[0]
    assert none_right.p_above_chance == binomtest(0, 40, 0.25, alternative="greater").pvalue == 1.0


def test_the_decision_is_holm_over_the_benchmarks_task_types_with_a_simultaneous_interval():
    """Three task types with 5, 14 and 22 right of 40 (chance 0.25): the decision is each one-sided binomial p
    Holm-adjusted over the three (statsmodels), the adjusted interval Wilson at 1 - 0.05 / 3; Overall is a family of
    its own."""
    from scipy.stats import binomtest
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.proportion import proportion_confint

    right = {"a": 5, "b": 14, "c": 22}
    scores = pd.DataFrame(
        [
            {"benchmark": "b", "question_id": f"{t}{i}", "task_type": t, "answerer": "linear", "n_options": 4,
             "s": 0.5, "picked": i < k, "chance": 0.25}
            for t, k in right.items()
            for i in range(40)
        ]
    )  # fmt: skip
    table = type_summary(scores).set_index("task_type")
    p = [binomtest(k, 40, 0.25, alternative="greater").pvalue for k in right.values()]
    np.testing.assert_allclose(table.loc[list(right), "p_holm"], multipletests(p, method="holm")[1], rtol=1e-9)
    assert table.loc[list(right), "above_chance"].tolist() == [
        bool(x < 0.05) for x in multipletests(p, method="holm")[1]
    ]
    low, high = proportion_confint(list(right.values()), 40, alpha=0.05 / 3, method="wilson")
    np.testing.assert_allclose(table.loc[list(right), "ci_low_adjusted"], low, atol=1e-12)
    np.testing.assert_allclose(table.loc[list(right), "ci_high_adjusted"], high, atol=1e-12)
    assert (table.loc[list(right), "n_family"] == 3).all()
    overall = table.loc["Overall"]
    assert overall.n_family == 1 and overall.p_holm == overall.p_above_chance
    np.testing.assert_allclose([overall.ci_low_adjusted, overall.ci_high_adjusted], [overall.ci_low, overall.ci_high])


def test_with_no_shortcut_the_family_decision_keeps_its_error_rate_and_the_simultaneous_intervals_cover():
    """A seeded simulation of 600 benchmarks of five task types of 30 questions each, every pick right with
    probability 0.25 independently (no shortcut, no cross-validation): some type is called above chance in at most
    5% of benchmarks (Holm), and all five simultaneous intervals hold chance in at least 93% of them."""
    rng = np.random.default_rng(20261207)
    n_benchmarks, n_types, n = 600, 5, 30
    picked = rng.random((n_benchmarks, n_types, n)) < 0.25
    b, t, q = np.indices(picked.shape)
    columns = {"benchmark": b.ravel(), "question_id": q.ravel(), "task_type": t.ravel(), "picked": picked.ravel()}
    scores = pd.DataFrame({**columns, "answerer": "linear", "n_options": 4, "s": 0.5, "chance": 0.25})
    table = type_summary(scores)
    types = table[table["task_type"] != "Overall"]
    assert (types["n_family"] == n_types).all() and len(types) == n_benchmarks * n_types
    any_called = types.groupby("benchmark")["above_chance"].any().mean()
    covered = types.assign(hold=(types["ci_low_adjusted"] <= 0.25) & (0.25 <= types["ci_high_adjusted"]))
    all_hold = covered.groupby("benchmark")["hold"].all().mean()
    assert any_called <= 0.05 + 3 * (0.05 * 0.95 / n_benchmarks) ** 0.5, any_called
    assert all_hold >= 0.93, all_hold


def test_the_decision_uses_the_reports_alpha():
    scores = pd.DataFrame(
        [{"benchmark": "b", "question_id": f"q{i}", "task_type": "t", "answerer": "linear", "n_options": 4, "s": 0.5,
          "picked": i < 16, "chance": 0.25} for i in range(40)]
    )  # fmt: skip
    p = binomtest(16, 40, 0.25, alternative="greater").pvalue
    assert 0.01 < p < 0.05
    decide = lambda alpha: type_summary(scores, alpha=alpha).query("task_type == 't'")["above_chance"].item()  # noqa: E731
    assert decide(0.05) and not decide(0.01)
