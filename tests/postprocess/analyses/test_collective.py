"""collective: share of groups (videos) answered entirely right, and the per-group distribution."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from statsmodels.stats.proportion import proportion_confint

from postprocess.analyses.base import ReportSettings
from postprocess.analyses.collective import (
    ANALYSES,
    COLUMNS,
    DISTRIBUTION_COLUMNS,
    collective_distribution,
    collective_table,
)
from tests.helpers.frames import outcome_fields, tidy_frame, tidy_row
from tests.helpers.reference_data import ORIG_BLACK, reference_frame


def make_frame(records, benchmark: str = "b") -> pd.DataFrame:
    """(model, condition, video_id, question_id, outcome) -> tidy frame; outcome True/False/"u"/"e"."""
    return tidy_frame(
        tidy_row(
            model, condition, qid, benchmark, video_id=video, task_type=f"T{len(qid) % 2}", **outcome_fields(value)
        )
        for model, condition, video, qid, value in records
    )


def random_records(seed: int = 0, n_videos: int = 40):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, size=n_videos)
    outcomes = np.array([True, False, "u", "e"], dtype=object)
    records = []
    for model in ("m1", "m2"):
        for condition in ("crf23", "orig"):
            for v, size in enumerate(sizes):
                for q in range(size):
                    outcome = outcomes[rng.choice(4, p=[0.6, 0.25, 0.05, 0.1])]
                    records.append((model, condition, f"v{v:02d}", f"v{v:02d}-{q}", outcome))
    return records


def dropped_questions(records, model, missing, question_set):
    """Questions the model's rows leave out: an error of any model (shared) or of this model (per-model),
    under any condition."""
    if missing == "incorrect":
        return set()
    return {q for m, _, _, q, o in records if o == "e" and (question_set == "shared" or m == model)}


def naive(records, model, condition, missing, question_set="shared"):
    groups = defaultdict(list)
    n_error = n_excluded = 0
    seen = set()
    dropped = dropped_questions(records, model, missing, question_set)
    for m, c, v, q, outcome in records:
        if m != model or c != condition:
            continue
        seen.add(v)
        n_error += outcome == "e"
        if q in dropped:
            n_excluded += 1
            continue
        groups[v].append(outcome is True)
    right = [all(g) for g in groups.values()]
    dist = defaultdict(int)
    for g in groups.values():
        dist[(len(g), sum(g))] += 1
    return {
        "n": sum(len(g) for g in groups.values()),
        "n_error": n_error,
        "n_excluded": n_excluded,
        "n_groups": len(groups),
        "n_groups_dropped": len(seen) - len(groups),
        "accuracy": sum(sum(g) for g in groups.values()) / sum(len(g) for g in groups.values()),
        "collective_accuracy": sum(right) / len(right),
        "k": sum(right),
    }, dist


@pytest.mark.parametrize(
    ("missing", "question_set"), [("exclude", "shared"), ("exclude", "per-model"), ("incorrect", "shared")]
)
def test_collective_matches_a_naive_count(missing, question_set):
    records = random_records()
    options = ReportSettings(missing=missing, ci_level=0.9, question_set=question_set)
    table = collective_table(make_frame(records), options)
    assert list(table.columns) == list(COLUMNS)
    keys = list(zip(table["model"], table["condition"], strict=True))
    assert keys == [("m1", "orig"), ("m1", "crf23"), ("m2", "orig"), ("m2", "crf23")]  # declared order
    for row in table.to_dict("records"):
        want, _ = naive(records, row["model"], row["condition"], missing, question_set)
        for key in ("n", "n_error", "n_excluded", "n_groups", "n_groups_dropped"):
            assert row[key] == want[key], key
        assert_allclose([row["accuracy"], row["collective_accuracy"]], [want["accuracy"], want["collective_accuracy"]])
        assert_allclose(row["mean_group_size"], want["n"] / want["n_groups"])
        lo, hi = proportion_confint(want["k"], want["n_groups"], alpha=0.1, method="wilson")
        assert_allclose([row["collective_ci_low"], row["collective_ci_high"]], [lo, hi], atol=1e-12)
        assert (row["group_by"], row["missing_policy"], row["ci_level"]) == ("video_id", missing, 0.9)
        if missing == "incorrect":
            assert row["n_groups_dropped"] == 0
            assert row["question_rule"] == "every question; errors scored wrong"
        else:
            whose = "any model" if question_set == "shared" else "this model"
            assert row["question_rule"] == f"no error under orig, crf23 for {whose}"
    if missing == "exclude" and question_set == "shared":
        # every compared row counts the very same questions
        assert table["n"].nunique() == 1


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_distribution_matches_a_naive_count(missing):  # the shared set
    records = random_records(seed=4)
    dist = collective_distribution(make_frame(records), ReportSettings(missing=missing, question_set="shared"))
    assert list(dist.columns) == list(DISTRIBUTION_COLUMNS)
    for (model, condition), part in dist.groupby(["model", "condition"]):
        _, want = naive(records, model, condition, missing)
        got = {(r.group_size, r.n_correct): r.n_groups for r in part.itertuples()}
        assert {k: v for k, v in got.items() if v} == dict(want)
        for size, per_size in part.groupby("group_size"):
            assert per_size["n_correct"].tolist() == list(range(size + 1))
            assert_allclose(per_size["share"].sum(), 1.0)


def test_hand_example_and_dropped_group():
    # video a: 2 right of 2; video b: 1 right, 1 wrong; video c: only an error.
    records = [
        ("m", "orig", "a", "a-0", True),
        ("m", "orig", "a", "a-1", True),
        ("m", "orig", "b", "b-0", True),
        ("m", "orig", "b", "b-1", False),
        ("m", "orig", "c", "c-0", "e"),
    ]
    row = collective_table(make_frame(records)).iloc[0]
    assert (row["n"], row["n_groups"], row["n_groups_dropped"], row["n_error"]) == (4, 2, 1, 1)
    assert (row["accuracy"], row["collective_accuracy"]) == (0.75, 0.5)
    row = collective_table(make_frame(records), ReportSettings(missing="incorrect")).iloc[0]
    assert (row["n"], row["n_groups"], row["n_groups_dropped"]) == (5, 3, 0)
    assert_allclose(row["collective_accuracy"], 1 / 3)
    dist = collective_distribution(make_frame(records))
    assert dist[["group_size", "n_correct", "n_groups"]].values.tolist() == [[2, 0, 0], [2, 1, 1], [2, 2, 1]]


def test_group_by_another_column():
    records = random_records(seed=2)
    frame = make_frame(records)
    table = collective_table(frame, ReportSettings(group_by="task_type"))
    assert (table["n_groups"] <= 2).all() and (table["group_by"] == "task_type").all()


def test_validation_errors_and_empty():
    frame = make_frame(random_records(n_videos=3))
    with pytest.raises(ValueError, match=r"group_by column 'scene' is not in the frame"):
        collective_table(frame, ReportSettings(group_by="scene"))
    blank = frame.copy()
    blank.loc[2, "video_id"] = None
    q = blank.loc[2, "question_id"]
    named = rf"groups questions by 'video_id', and question '{q}' of model 'm1' \(\w+, test\) has none \(1 rows"
    with pytest.raises(ValueError, match=named):
        collective_distribution(blank)
    blank.loc[2, "video_id"] = ""
    with pytest.raises(ValueError, match=r"has none .*give each prediction record a video id \(one of video_id, "):
        collective_table(blank)
    assert collective_table(frame.iloc[:0]).empty and list(collective_table(frame.iloc[:0]).columns) == list(COLUMNS)
    assert collective_distribution(frame.iloc[:0]).empty
    assert [a.name for a in ANALYSES] == ["collective", "collective_distribution"]


def test_reference_videos_against_pandas():
    frame = reference_frame(("qwen2vl",), ORIG_BLACK)
    table = collective_table(frame).set_index("condition")
    # the shared set: questions with an error under orig or black are out of both rows
    failed = set(frame.loc[frame["status"] == "error", "question_id"])
    for condition in ("orig", "black"):
        kept = frame[(frame["condition"] == condition) & ~frame["question_id"].isin(failed)]
        per_video = kept.groupby("video_id")["correct"].all()
        assert table.loc[condition, "n_groups"] == len(per_video) == 364  # 43 of 407 videos lose all questions
        assert table.loc[condition, "n_groups_dropped"] == 407 - 364
        assert_allclose(table.loc[condition, "collective_accuracy"], per_video.mean())
    per_model = collective_table(frame, ReportSettings(question_set="per-model")).set_index("condition")
    assert per_model.loc["black", "n_groups"] == 364  # one model: its own set is the shared one
