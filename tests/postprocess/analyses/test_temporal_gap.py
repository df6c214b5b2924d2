"""temporal_gap: single-frame vs temporal accuracy by task-type bucket, overall and per duration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from postprocess.analyses.base import ReportSettings
from postprocess.analyses.temporal_gap import (
    ANALYSES,
    COLUMNS,
    DEFAULT_MAP,
    VDGSYNTH_MAP,
    VIDEO_MME_MAP,
    temporal_gap_table,
)
from tests.helpers.frames import outcome_fields, tidy_frame, tidy_row
from tests.helpers.reference_data import ORIG_BLACK, reference_frame
from vdg_tasks.synthetic.synth import AUDIO_TASK_TYPE, TASK_TYPES

TYPES = ["OCR Problems", "Attribute Perception", "Temporal Reasoning", "Counting Problem", "text_only", "Mystery"]


def make_frame(records, benchmark: str = "b") -> pd.DataFrame:
    """(model, condition, question_id, task_type, duration, outcome) -> tidy frame.

    outcome: True, False, "u" (unparsed, wrong) or "e" (error).
    """
    return tidy_frame(
        tidy_row(model, condition, qid, benchmark, task_type=task_type, duration=duration, **outcome_fields(value))
        for model, condition, qid, task_type, duration, value in records
    )


def random_records(seed: int = 0, n: int = 120):
    rng = np.random.default_rng(seed)
    types = rng.choice(TYPES, size=n)
    durations = rng.choice(["long", "short", ""], size=n)
    outcomes = np.array([True, False, "u", "e"], dtype=object)
    records = []
    for model in ("m1", "m2"):
        for condition in ("black", "orig"):
            for i in range(n):
                outcome = outcomes[rng.choice(4, p=[0.5, 0.35, 0.05, 0.1])]
                records.append((model, condition, f"v{i // 3}-{i % 3}", str(types[i]), str(durations[i]), outcome))
    return records


def naive(records, model, condition, duration, missing, mapping, question_set="per-model"):
    """The row by hand; question_set="shared" also leaves out questions any model has an error for there."""
    failed = {q for _, c, q, _, _, outcome in records if c == condition and outcome == "e"}
    bucket = {"single-frame": [], "temporal": []}
    n_none = n_unknown = n_error = 0
    unknown_types = set()
    for m, c, q, t, d, outcome in records:
        if m != model or c != condition or (duration != "all" and d != duration):
            continue
        if outcome == "e":
            n_error += 1
            if missing == "exclude":
                continue
        if missing == "exclude" and question_set == "shared" and q in failed:
            continue
        b = mapping.get(t, "temporal")
        if t not in mapping:
            n_unknown += 1
            unknown_types.add(t)
        if b == "none":
            n_none += 1
        else:
            bucket[b].append(outcome is True)
    sf, tp = bucket["single-frame"], bucket["temporal"]
    return {
        "n_single_frame": len(sf),
        "acc_single_frame": np.mean(sf) if sf else np.nan,
        "n_temporal": len(tp),
        "acc_temporal": np.mean(tp) if tp else np.nan,
        "gap": np.mean(sf) - np.mean(tp) if sf and tp else np.nan,
        "n_none": n_none,
        "n_unknown_type": n_unknown,
        "unknown_types": "; ".join(sorted(unknown_types)),
        "n_error": n_error,
    }


@pytest.mark.parametrize("question_set", ["shared", "per-model"])
@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_buckets_match_a_naive_count(missing, question_set):
    records = random_records()
    table = temporal_gap_table(make_frame(records), ReportSettings(missing=missing, question_set=question_set))
    assert list(table.columns) == list(COLUMNS)
    # rows: per model, conditions in declared order (orig before black), durations all/short/long
    keys = list(zip(table["model"], table["condition"], table["duration"], strict=True))
    assert keys == [(m, c, d) for m in ("m1", "m2") for c in ("orig", "black") for d in ("all", "short", "long")]
    for row in table.to_dict("records"):
        want = naive(records, row["model"], row["condition"], row["duration"], missing, DEFAULT_MAP, question_set)
        for key, value in want.items():
            if isinstance(value, float):
                assert_allclose(row[key], value, atol=1e-12, err_msg=key)
            else:
                assert row[key] == value, key
        assert row["missing_policy"] == missing
    # the unknown type lands in temporal, text_only in neither bucket
    overall = table[(table["duration"] == "all")].iloc[0]
    assert overall["unknown_types"] == "Mystery" and overall["n_none"] > 0


def test_intervals_are_wilson_and_newcombe():
    records = random_records(seed=3)
    table = temporal_gap_table(make_frame(records), ReportSettings(ci_level=0.9, min_stratum=1))
    for row in table.to_dict("records"):
        k_sf = round(row["acc_single_frame"] * row["n_single_frame"])
        k_tp = round(row["acc_temporal"] * row["n_temporal"])
        lo, hi = proportion_confint(k_sf, row["n_single_frame"], alpha=0.1, method="wilson")
        assert_allclose([row["single_frame_ci_low"], row["single_frame_ci_high"]], [lo, hi], atol=1e-12)
        lo, hi = proportion_confint(k_tp, row["n_temporal"], alpha=0.1, method="wilson")
        assert_allclose([row["temporal_ci_low"], row["temporal_ci_high"]], [lo, hi], atol=1e-12)
        lo, hi = confint_proportions_2indep(
            k_sf, row["n_single_frame"], k_tp, row["n_temporal"], method="newcomb", alpha=0.1
        )
        assert_allclose([row["gap_ci_low"], row["gap_ci_high"]], [lo, hi], atol=1e-12)
        assert row["ci_level"] == 0.9


def test_temporal_map_extends_and_overrides():
    records = random_records(seed=5)
    custom = {"Counting Problem": "single-frame", "Mystery": "none"}
    table = temporal_gap_table(make_frame(records), ReportSettings(temporal_map=custom, question_set="per-model"))
    mapping = {**DEFAULT_MAP, **custom}
    for row in table.to_dict("records"):
        want = naive(records, row["model"], row["condition"], row["duration"], "exclude", mapping)
        assert (row["n_single_frame"], row["n_temporal"], row["n_none"]) == (
            want["n_single_frame"],
            want["n_temporal"],
            want["n_none"],
        )
        assert row["n_unknown_type"] == 0 and row["unknown_types"] == ""


def test_an_empty_bucket_leaves_the_gap_empty():
    records = [("m", "orig", f"v{i}-0", "Temporal Reasoning", "short", i % 2 == 0) for i in range(4)]
    row = temporal_gap_table(make_frame(records)).iloc[0]
    assert row["n_single_frame"] == 0 and np.isnan(row["acc_single_frame"]) and np.isnan(row["gap"])
    assert np.isnan(row["single_frame_ci_low"]) and np.isnan(row["gap_ci_low"])
    assert row["acc_temporal"] == 0.5


def test_validation_and_empty():
    records = random_records(n=6)
    with pytest.raises(ValueError, match=r"temporal_map sends task type 'OCR Problems' to 'spatial'"):
        temporal_gap_table(make_frame(records), ReportSettings(temporal_map={"OCR Problems": "spatial"}))
    table = temporal_gap_table(make_frame(records).iloc[:0])
    assert table.empty and list(table.columns) == list(COLUMNS)
    assert [a.name for a in ANALYSES] == ["temporal_gap"]


def test_built_in_maps_cover_videomme_and_vdgsynth():
    assert len(VIDEO_MME_MAP) == 12  # Video-MME's twelve task types
    assert set(VDGSYNTH_MAP) == {*TASK_TYPES, AUDIO_TASK_TYPE}
    assert VDGSYNTH_MAP[AUDIO_TASK_TYPE] == "none"  # answered from the sound: no frame needed
    assert set(DEFAULT_MAP.values()) <= {"single-frame", "temporal", "none"}


def test_reference_task_types_are_all_known():
    frame = reference_frame(("qwen2vl",), ORIG_BLACK)
    table = temporal_gap_table(frame).set_index(["condition", "duration"])
    orig = table.loc[("orig", "all")]
    assert orig["n_unknown_type"] == 0 and orig["n_none"] == 0
    # OCR / Attribute Perception / Object Recognition (300 questions, 19 OCR errors) vs the rest (34 errors)
    assert (orig["n_single_frame"], orig["n_temporal"], orig["n_error"]) == (281, 266, 53)
    assert table.index.get_level_values("duration").unique().tolist() == ["all"]  # no duration in these files
