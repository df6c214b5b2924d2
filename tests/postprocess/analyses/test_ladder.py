"""postprocess.analyses.ladder: accuracy at each rung (black -> single -> shuffled -> ordered -> orig, the reversed
probe beside them) and the deltas between rungs, checked against accuracies counted in the test; the question set
(errors, shared across models, per-model, errors scored wrong); the CIs against an exact bootstrap computed here
with fractions; which models the ladder leaves out."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from postprocess.analyses.base import ReportSettings
from postprocess.analyses.ladder import ANALYSES, COLUMNS, ladder_table
from tests.helpers.frames import make_frame

T, F, E = True, False, "e"
RUNGS = ("black", "single", "shuffled", "ordered", "orig")
DELTAS = {  # column -> (upper, lower): the deltas the ladder declares
    "spatial": ("single", "black"),
    "diversity": ("shuffled", "single"),
    "temporal": ("ordered", "shuffled"),
    "sampling": ("orig", "ordered"),
    "direction": ("ordered", "reversed"),
}

#: Eight questions, v0-0..v3-0 of task type T0 and v4-0..v7-0 of T1; question 3 has an error under single.
FULL: dict[str, list[object]] = {
    "black": [F, F, T, F, F, T, F, F],
    "single": [T, F, T, E, F, T, F, T],
    "shuffled": [T, T, F, T, F, T, T, F],
    "ordered": [T, T, T, F, T, T, F, T],
    "orig": [T, T, T, T, T, F, T, T],
    "reversed": [F, T, T, T, F, T, F, T],
}


def qid(i: int) -> str:
    return f"v{i}-0"


def task_type(i: int) -> str:
    return "T0" if i < 4 else "T1"


def frame_of(outcomes: dict[str, dict[str, list[object]]], benchmark: str = "b") -> pd.DataFrame:
    """{model: {condition: [outcome per question]}} -> a tidy frame."""
    return make_frame(
        [
            (model, condition, qid(i), task_type(i), value)
            for model, by_condition in outcomes.items()
            for condition, values in by_condition.items()
            for i, value in enumerate(values)
        ],
        benchmark,
    )


def hand_rows(by_condition: dict[str, list[object]], dropped: frozenset[int] = frozenset()) -> dict[str, dict]:
    """Task type (and Overall) -> n, n_error and the accuracy of each condition over the questions with no error
    under any condition (and not in ``dropped``), counted question by question."""
    n_q = len(next(iter(by_condition.values())))
    out = {}
    for stratum in ("T0", "T1", "Overall"):
        members = [i for i in range(n_q) if stratum in ("Overall", task_type(i))]
        errors = [i for i in members if any(values[i] == E for values in by_condition.values())]
        kept = [i for i in members if i not in errors and i not in dropped]
        acc = {c: sum(values[i] is T for i in kept) / len(kept) for c, values in by_condition.items()}
        out[stratum] = {"n": len(kept), "n_error": len(errors), "kept": kept, "acc": acc}
    return out


def exact_bootstrap_ci(values: list[int], level: float) -> tuple[float, float]:
    """Percentile CI of the mean over every resample of ``values`` with replacement, weighted exactly: the
    distribution of the resampled sum is the n-fold convolution of the value frequencies (fractions, so no
    rounding); each end is the smallest mean whose cumulative probability reaches (1 - level) / 2, resp.
    1 - (1 - level) / 2 (the limit of np.quantile over ever more Monte Carlo resamples)."""
    n = len(values)
    freq = {v: Fraction(c, n) for v, c in Counter(values).items()}
    dist = {0: Fraction(1)}
    for _ in range(n):
        step: dict[int, Fraction] = {}
        for total, p in dist.items():
            for v, q in freq.items():
                step[total + v] = step.get(total + v, Fraction(0)) + p * q
        dist = step
    tail = (1 - Fraction(str(level))) / 2
    cumulative, low, high = Fraction(0), None, None
    for total in sorted(dist):
        cumulative += dist[total]
        if low is None and cumulative >= tail:
            low = total / n
        if high is None and cumulative >= 1 - tail:
            high = total / n
    assert low is not None and high is not None
    return low, high


@pytest.fixture(scope="module")
def full_frame() -> pd.DataFrame:
    return frame_of({"m": FULL})


def test_every_rung_accuracy_and_delta_matches_counts_made_question_by_question(full_frame):
    raw = ladder_table(full_frame)
    assert list(raw.columns) == list(COLUMNS)
    table = raw.set_index("task_type")
    assert table.index.tolist() == ["T0", "T1", "Overall"]
    for stratum, expected in hand_rows(FULL).items():
        row = table.loc[stratum]
        assert (row.n, row.n_error, row.n_not_shared) == (expected["n"], expected["n_error"], 0)
        for condition, acc in expected["acc"].items():
            assert_allclose(row[f"acc_{condition}"], acc, atol=1e-12, err_msg=f"{stratum} {condition}")
        for column, (upper, lower) in DELTAS.items():
            assert_allclose(row[column], expected["acc"][upper] - expected["acc"][lower], atol=1e-12)


def test_a_question_with_an_error_under_any_rung_leaves_every_rung(full_frame):
    overall = ladder_table(full_frame).set_index("task_type").loc["Overall"]
    # question 3 (an error under single) leaves all rungs: 7 kept; single right on 0, 2, 5, 7 = 4/7, black on 2, 5 =
    # 2/7, so spatial = 2/7; orig is right on every kept question but 5: 6/7
    assert (overall.n, overall.n_error) == (7, 1)
    assert_allclose([overall.acc_single, overall.acc_black, overall.spatial], [4 / 7, 2 / 7, 2 / 7], atol=1e-12)
    assert_allclose(overall.acc_orig, 6 / 7, atol=1e-12)


def test_the_rung_deltas_add_up_to_orig_minus_black(full_frame):
    for _, row in ladder_table(full_frame).iterrows():
        chain = row.spatial + row.diversity + row.temporal + row.sampling
        assert_allclose(chain, row.acc_orig - row.acc_black, atol=1e-12)


def test_descriptive_columns_name_the_rungs_policy_and_question_rule(full_frame):
    row = ladder_table(full_frame, ReportSettings(ci_level=0.9, question_set="shared")).iloc[0]
    assert row.rungs == "black>single>shuffled>ordered>orig"  # the probe is no rung
    assert row.temporal_definition == "ordered - shuffled"
    assert row.ci_level == 0.9 and row.missing_policy == "exclude"
    # compared: the rungs in ladder order, then the probe; no model may have an error on them (shared)
    assert row.question_rule == "no error under black, single, shuffled, ordered, orig, reversed for any model"


def test_strata_below_min_stratum_keep_their_deltas_but_have_no_ci(full_frame):
    table = ladder_table(full_frame)  # min_stratum 30 by default: every stratum (n <= 7) is too small
    assert table["too_small"].all()
    ci_columns = [f"{name}_ci_{end}" for name in DELTAS for end in ("low", "high")]
    assert table[ci_columns].isna().all().all()
    assert table["spatial"].notna().all()
    assert (table["ci_method"] == "").all() and (table["n_resamples"] == 0).all() and table["mc_se"].isna().all()


def test_each_delta_ci_is_the_exact_paired_bootstrap_of_the_per_question_differences(full_frame):
    options = ReportSettings(min_stratum=4, ci_level=0.9, ci_method="exact", cluster="question")
    table = ladder_table(full_frame, options).set_index("task_type")
    expected = hand_rows(FULL)
    assert table["too_small"].to_dict() == {"T0": True, "T1": False, "Overall": False}  # n = 3, 4, 7
    assert table.loc["T0", ["spatial_ci_low", "spatial_ci_high"]].isna().all()
    for stratum in ("T1", "Overall"):
        row, kept = table.loc[stratum], expected[stratum]["kept"]
        for column, (upper, lower) in DELTAS.items():
            diff = [int(FULL[upper][i] is T) - int(FULL[lower][i] is T) for i in kept]
            low, high = exact_bootstrap_ci(diff, 0.9)
            assert_allclose([row[f"{column}_ci_low"], row[f"{column}_ci_high"]], [low, high], atol=1e-12)
            assert row[f"{column}_ci_low"] <= row[column] <= row[f"{column}_ci_high"]
        assert (row.ci_method, row.n_resamples, row.mc_se) == ("exact", 0, 0.0)


def test_without_an_ordered_rung_temporal_is_orig_minus_shuffled_and_other_deltas_are_empty():
    partial = {c: FULL[c] for c in ("black", "shuffled", "orig", "reversed")}
    table = ladder_table(frame_of({"m": partial})).set_index("task_type")
    expected = hand_rows(partial)
    for stratum, row in table.iterrows():
        acc = expected[stratum]["acc"]
        assert row.rungs == "black>shuffled>orig" and row.temporal_definition == "orig - shuffled"
        assert_allclose(row.temporal, acc["orig"] - acc["shuffled"], atol=1e-12)
        assert_allclose(row.acc_reversed, acc["reversed"], atol=1e-12)  # the probe is still reported
        assert math.isnan(row.acc_single) and math.isnan(row.acc_ordered)
        # spatial, diversity, sampling lack a rung; direction lacks ordered
        assert row[["spatial", "diversity", "sampling", "direction"]].isna().all()


def test_a_model_with_fewer_than_two_rungs_has_no_rows():
    table = ladder_table(frame_of({"m": {"orig": FULL["orig"], "reversed": FULL["reversed"]}, "n": FULL}))
    assert set(table["model"]) == {"n"}
    alone = ladder_table(frame_of({"m": {"orig": FULL["orig"], "crf38": FULL["black"]}}))
    assert alone.empty and list(alone.columns) == list(COLUMNS)


FEWER = "fewer than two ladder rungs run (black, single, shuffled, ordered, orig;"


@pytest.mark.parametrize(
    ("present", "reason"),
    [
        ({"orig", "black"}, None),
        ({"single", "reversed", "crf38"}, f"{FEWER} has single)"),
        ({"reversed"}, f"{FEWER} has none)"),
    ],
)
def test_the_analysis_leaves_out_a_model_with_fewer_than_two_rungs_and_says_so(present, reason):
    (analysis,) = ANALYSES
    assert analysis.name == "ladder" and analysis.columns is COLUMNS and analysis.compute is ladder_table
    assert analysis.needs(frozenset(present)) == reason


# ----------------------------------------------------------------------------------- question sets

TWO = {
    # a and z ran black and orig on four questions; z has an error on question 1 under black
    "a": {"black": [F, T, F, F], "orig": [T, T, F, T]},
    "z": {"black": [F, E, T, F], "orig": [T, F, T, T]},
}


def test_under_shared_another_models_error_takes_the_question_out_of_every_models_rows():
    table = ladder_table(frame_of(TWO), ReportSettings(question_set="shared")).set_index("model")
    a = table[table.task_type == "Overall"].loc["a"]
    # a keeps questions 0, 2, 3: orig right on 0, 3 = 2/3, black on none = 0; question 1 is z's error
    assert (a.n, a.n_error, a.n_not_shared) == (3, 0, 1)
    assert_allclose([a.acc_orig, a.acc_black, a.spatial], [2 / 3, 0.0, np.nan], atol=1e-12)
    z = table[table.task_type == "Overall"].loc["z"]
    assert (z.n, z.n_error, z.n_not_shared) == (3, 1, 0)
    assert a.question_rule == "no error under black, orig for any model"
    assert table.index.tolist() == ["a", "a", "z", "z"]  # T0 and Overall per model, models sorted


def test_per_model_question_sets_keep_each_models_own_answered_questions():
    table = ladder_table(frame_of(TWO), ReportSettings(question_set="per-model"))
    a = table[(table.model == "a") & (table.task_type == "Overall")].iloc[0]
    # every question of a: orig right on 0, 1, 3 = 3/4, black on 1 = 1/4
    assert (a.n, a.n_not_shared) == (4, 0)
    assert_allclose([a.acc_orig, a.acc_black], [3 / 4, 1 / 4], atol=1e-12)
    assert a.question_rule == "no error under black, orig for this model"


def test_errors_scored_wrong_keep_every_question():
    table = ladder_table(frame_of(TWO), ReportSettings(missing="incorrect"))
    z = table[(table.model == "z") & (table.task_type == "Overall")].iloc[0]
    # z's error on question 1 counts as a wrong black answer: black right on 2 only = 1/4; orig on 0, 2, 3 = 3/4
    assert (z.n, z.n_error, z.n_not_shared) == (4, 0, 0)
    assert_allclose([z.acc_black, z.acc_orig], [1 / 4, 3 / 4], atol=1e-12)
    assert z.missing_policy == "incorrect" and z.question_rule == "every question; errors scored wrong"
