"""postprocess.settings: ``ReportSettings`` (every refused value with its message, ``min_n`` setting
``min_stratum``, lists de-duplicated, maps frozen, seeds from stable ids) and the natural order of model labels."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from postprocess.settings import ReportSettings, natural_key, natural_sorted


def _sha_seed(*parts: object) -> int:
    """The documented seed computed here: sha256 of the parts joined by 0x1f, its first 8 bytes shifted to 63 bits."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


# ----------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"missing": "drop"}, r"missing policy must be 'exclude' or 'incorrect', got 'drop'"),
        ({"ci_level": 0.0}, r"ci_level must be in \(0, 1\), got 0\.0"),
        ({"ci_level": 1}, r"ci_level must be in \(0, 1\), got 1"),
        ({"n_resamples": 0}, r"resample counts must be positive"),
        ({"stability_resamples": -1}, r"resample counts must be positive"),
        ({"tier_low": 0.4, "tier_high": 0.3}, r"tier_low \(0\.4\) must not exceed tier_high \(0\.3\)"),
        ({"align": "loose"}, r"align must be 'strict' or 'intersect', got 'loose'"),
        ({"question_set": "all"}, r"question_set must be 'shared' or 'per-model', got 'all'"),
        ({"ci_method": "bca"}, r"ci_method must be 'score', 'exact' or 'resample', got 'bca'"),
        ({"mc_se_target": -0.001}, r"mc_se_target must not be negative, got -0\.001"),
        ({"mc_se_target": float("nan")}, r"mc_se_target must not be negative, got nan"),  # NaN is no target either
        ({"min_n": -1}, r"min_n must not be negative, got -1"),
        ({"min_stratum": 0}, r"min_stratum must be at least 1, got 0"),
    ],
)
def test_each_invalid_option_is_refused_with_its_value(kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        ReportSettings(**kwargs)


def test_the_defaults_and_the_edges_of_each_range_are_valid():
    ReportSettings()
    ReportSettings(
        missing="incorrect", ci_level=1e-9, n_resamples=1, stability_resamples=1, tier_low=0.2, tier_high=0.2
    )
    ReportSettings(align="intersect", question_set="per-model", ci_method="resample", mc_se_target=0.0, min_stratum=1)


def test_min_n_above_zero_sets_min_stratum_and_zero_leaves_it():
    assert ReportSettings(min_n=5, min_stratum=30).min_stratum == 5
    assert ReportSettings(min_n=5, min_stratum=0).min_stratum == 5  # min_n is applied before min_stratum is checked
    assert ReportSettings(min_n=0, min_stratum=12).min_stratum == 12


def test_task_types_and_by_are_text_without_repeats_in_first_seen_order():
    options = ReportSettings(task_types=["b", "a", "b", 3], by=("domain", "domain", "sub_category"))
    assert options.task_types == ("b", "a", "3") and options.by == ("domain", "sub_category")


def test_the_maps_are_read_only_copies():
    tier_map = {"Counting": "low"}
    options = ReportSettings(tier_map=tier_map, temporal_map={"OCR": "single-frame"})
    tier_map["Counting"] = "high"  # the caller's dict changing afterwards does not change the options
    assert dict(options.tier_map) == {"Counting": "low"}
    with pytest.raises(TypeError):
        options.temporal_map["OCR"] = "temporal"  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 3  # type: ignore[misc]


# ----------------------------------------------------------------------------------- seed_for


def test_a_seed_comes_from_the_stable_ids_alone_without_a_seed():
    assert ReportSettings().seed_for("vdg", "m", 3) == _sha_seed("vdg", "m", 3)


def test_a_given_seed_is_mixed_in_first():
    assert ReportSettings(seed=7).seed_for("vdg", "m") == _sha_seed(7, "vdg", "m")
    assert ReportSettings(seed=7).seed_for("vdg") != ReportSettings(seed=8).seed_for("vdg")
    assert 0 <= ReportSettings(seed=7).seed_for("x") < 2**63


# ----------------------------------------------------------------------------------- natural order


def test_numbers_in_labels_sort_as_numbers():
    assert natural_sorted(["m@16f", "m@8f", "m@32f"]) == ["m@8f", "m@16f", "m@32f"]
    assert natural_sorted(["m@2fps", "m@0.5fps", "m@10fps"]) == ["m@0.5fps", "m@2fps", "m@10fps"]
    assert natural_sorted(["qwen-72b", "qwen-7b"]) == ["qwen-7b", "qwen-72b"]
    # a label before a longer one it begins (as a plain sort has them)
    assert natural_sorted(["qwen2", "qwen"]) == ["qwen", "qwen2"] and natural_sorted(["m1", "m"]) == ["m", "m1"]
    assert natural_sorted(["m@8f", "m"]) == ["m", "m@8f"]


def test_text_parts_compare_ignoring_case_then_as_written():
    assert natural_sorted(["Beta", "alpha", "Gamma"]) == ["alpha", "Beta", "Gamma"]  # a plain sort puts "alpha" last
    # equal but for case: ordered as written ("M" < "m"), whatever the input order
    assert natural_sorted(["m@8f", "M@8f"]) == natural_sorted(["M@8f", "m@8f"]) == ["M@8f", "m@8f"]


def test_natural_key_splits_a_label_into_text_and_number_parts():
    # "m@0.5fps" -> "m@", 0.5, "fps", then the label itself as the last tie-break, ranked below every part (-1)
    assert natural_key("M@0.5fps") == ((0, 0.0, "m@"), (1, 0.5, "0.5"), (0, 0.0, "fps"), (-1, 0.0, "M@0.5fps"))
