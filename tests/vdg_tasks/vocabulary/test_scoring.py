"""How a reply becomes a score in [0, 1]: the declared scorings and the reading of a base task's own metric."""

from __future__ import annotations

import math

import pytest

from vdg_tasks.vocabulary.scoring import CORRECT_AT, counts_as_correct, metric_score, scoring, unit_score


def test_a_letter_is_not_graded_and_the_judge_and_a_base_metric_are():
    assert scoring("letter").graded is False and scoring("letter").metric_key == ""
    assert scoring("judge").graded is True and scoring("judge").metric_key == ""
    mra = scoring("metric:MRA:.5:.95:.05")
    assert mra.graded and mra.metric_key == "MRA:.5:.95:.05" and "`MRA:.5:.95:.05`" in mra.to_unit


def test_a_mean_over_questions_reads_its_key_and_declares_how_it_reaches_the_unit_interval():
    percent, unit = scoring("mean:charades_sta_mIOU/100"), scoring("mean:ewb_mIoU")
    assert percent.graded and percent.of_one_question and percent.metric_key == "charades_sta_mIOU"
    assert (percent.divisor, unit.divisor, scoring("metric:acc").divisor) == (100.0, 1.0, 1.0)
    assert "in percent, divided by 100" in percent.to_unit and "as it is" in unit.to_unit
    assert not scoring("metric:acc").of_one_question and unit.metric_key == "ewb_mIoU"


@pytest.mark.parametrize("name", ["", "letters", "metric:", "mean:", "mean:/100", "judge:offline"])
def test_an_unknown_scoring_is_refused_naming_the_known_ones(name):
    with pytest.raises(ValueError, match="letter, judge, metric:<key> or mean:<key>"):
        scoring(name)


@pytest.mark.parametrize(("value", "divisor", "expected"), [(25.0, 100.0, 0.25), (100, 100.0, 1.0), (0.4, 1.0, 0.4)])
def test_a_value_is_divided_into_the_unit_interval(value, divisor, expected):
    assert unit_score("miou", value, divisor) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("value", "expected"), [(0, 0.0), (1, 1.0), (0.35, 0.35), (True, 1.0), (False, 0.0), ("0.5", 0.5)]
)
def test_a_base_metric_in_the_unit_interval_is_taken_as_it_is(value, expected):
    assert metric_score("mra", {"mra": value, "other": 7}) == expected


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ({"mra": 70.0}, "is 70.0, outside [0, 1]"),
        ({"mra": -0.1}, "outside [0, 1]"),
        ({"mra": math.nan}, "outside [0, 1]"),
        ({"mra": {"pred": 3}}, "not a number"),
        ({"acc": 1.0}, "gave no 'mra' (it gave acc)"),
        ([1.0], "gave no 'mra' (it gave list)"),
    ],
)
def test_a_base_metric_that_is_no_unit_score_is_refused_with_its_value(results, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        metric_score("mra", results)


def test_a_graded_score_counts_as_correct_from_the_declared_threshold_on():
    assert CORRECT_AT == 0.5
    assert [counts_as_correct(s) for s in (0.0, 0.49, 0.5, 1.0)] == [False, False, True, True]
