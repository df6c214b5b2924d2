"""Iterative bias pruning and its random controls: what is removed first, how many, and determinism."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from postprocess.debias import (
    ALPHA,
    PRUNED_COLUMNS,
    bias_pruning,
    kept_ids,
    proportional_counts,
    random_pruning,
    removal_total,
    removed_per_type,
    types_above_chance,
)
from postprocess.shortcuts import type_summary
from vdg_tasks.data.text_questions import text_questions
from vdg_tasks.synthetic.shortcut_bench import shortcut_docs


@pytest.fixture(scope="module")
def questions():
    # the overlap type's right option shares a word with its question; null's answers are independent of the text
    docs = [d for d in shortcut_docs(per_task_type=60, seed=2) if d["task_type"] in ("overlap", "null")]
    return pd.DataFrame(text_questions("b", docs)[0])


def test_the_type_the_text_answers_is_removed_first(questions):
    pruned = bias_pruning(questions, 40, rounds=4)
    assert list(pruned.columns) == list(PRUNED_COLUMNS)
    assert len(pruned) == 40 and pruned.question_id.is_unique
    assert pruned["round"].value_counts().sort_index().tolist() == [10, 10, 10, 10]
    first_rounds = pruned[pruned["round"] <= 2]
    assert (first_rounds.task_type == "overlap").all(), first_rounds.task_type.value_counts()
    assert removed_per_type(pruned) == {"overlap": 40}, "the null type's text answers nothing: never pruned"
    # within a round, removals are in decreasing excess over chance
    for _, batch in pruned.groupby("round"):
        assert batch.excess.is_monotonic_decreasing


def test_pruning_is_the_same_for_the_same_questions_listed_in_another_order(questions):
    forward = bias_pruning(questions, 12, rounds=2)
    backward = bias_pruning(questions.iloc[::-1].reset_index(drop=True), 12, rounds=2)
    assert forward.question_id.tolist() == backward.question_id.tolist()


def test_random_controls_remove_the_counts_asked_and_differ_by_control_and_kind(questions):
    counts = {"overlap": 7, "null": 3}
    first = random_pruning(questions, counts, 0, "matched")
    by_type = questions.set_index("question_id").loc[first].task_type.value_counts().to_dict()
    assert by_type == counts
    assert first == random_pruning(questions, counts, 0, "matched")
    assert first != random_pruning(questions, counts, 1, "matched")
    assert first != random_pruning(questions, counts, 0, "uniform")
    kept = kept_ids(questions, first)
    assert len(kept) == len(questions) - 10 and not set(kept) & set(first)


def test_proportional_counts_split_by_size_with_largest_remainders():
    # 10 of (50, 30, 20): exactly 5, 3, 2
    assert proportional_counts({"a": 50, "b": 30, "c": 20}, 10) == {"a": 5, "b": 3, "c": 2}
    # 4 of (5, 5, 5): 4/3 each -> floors 1, 1, 1 and the one left to the first in order (equal remainders)
    assert proportional_counts({"x": 5, "y": 5, "z": 5}, 4) == {"x": 2, "y": 1, "z": 1}


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [({"budget": 30}, 30), ({"frac": 0.25}, 30), ({"frac": 0.001}, 1)],
)
def test_removal_total(kwargs, expected):
    assert removal_total(120, **kwargs) == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of --budget"),
        ({"budget": 3, "frac": 0.1}, "exactly one of --budget"),
        ({"budget": 0}, "--budget must be between 1 and 119"),
        ({"budget": 120}, "--budget must be between 1 and 119"),
        ({"frac": 1.0}, "--frac must be between 0 and 1"),
    ],
)
def test_removal_total_refuses_bad_requests(kwargs, message):
    with pytest.raises(ValueError, match=message):
        removal_total(120, **kwargs)


@pytest.mark.slow
def test_on_vdgsynth_the_text_only_questions_go_first():
    from vdg_tasks.synthetic.synth import N_VIDEOS, make_questions, video_spec

    docs = [
        q
        for i in range(N_VIDEOS)
        for q in make_questions(video_spec(f"s{i:03d}", seed=0), seed=0, video_path=f"/nowhere/s{i:03d}.mp4")
    ]
    pruned = bias_pruning(pd.DataFrame(text_questions("vdgsynth", docs)[0]), 30, rounds=5)
    # the question names the word it asks for: the first rounds hold text_only questions alone
    assert (pruned[pruned["round"] <= 2].task_type == "text_only").all(), pruned.task_type.tolist()
    assert removed_per_type(pruned)["text_only"] >= 24
    # only text_only carries a text shortcut: no other task type is touched
    assert set(pruned["task_type"]) == {"text_only"}, pruned.task_type.tolist()


@pytest.mark.slow
def test_pruning_empties_the_types_the_text_answers_and_stops_there(questions):
    pruned = bias_pruning(questions, 100, rounds=10)
    assert removed_per_type(pruned) == {"overlap": 60}, "every overlap question, then nothing of the null type"
    assert (pruned["type_p_holm"] < ALPHA).all() and pruned["type_accuracy"].nunique() == 1


def test_types_above_chance_is_a_holm_adjusted_one_sided_binomial_test():
    # three task types of 40 four-option questions: 30, 18 and 14 right
    rows = []
    for task_type, right in (("a", 30), ("b", 18), ("c", 14)):
        rows += [
            {
                "task_type": task_type,
                "benchmark": "b",
                "answerer": "combined",
                "s": 0.5,
                "chance": 0.25,
                "picked": i < right,
            }
            for i in range(40)
        ]
    found = types_above_chance(type_summary(pd.DataFrame(rows)))
    raw = [binomtest(k, 40, 0.25, alternative="greater").pvalue for k in (30, 18, 14)]
    adjusted = multipletests(raw, method="holm")[1]
    expected = {t: p for t, p in zip("abc", adjusted, strict=True) if p < ALPHA}
    assert dict(zip(found.task_type, found.type_p_holm, strict=True)) == pytest.approx(expected, rel=1e-9)
    assert set(expected) == {"a", "b"}, "the example must keep one type and drop one"
