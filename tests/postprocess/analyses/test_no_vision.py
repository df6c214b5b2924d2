"""The no-vision table: VDG against black and against blind, and black - blind, counted by hand here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.no_vision import COLUMNS, no_vision_table
from tests.helpers.frames import make_frame

N = 60


def _outcomes(seed: int = 5) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "orig": rng.random(N) < 0.8,
        "black": rng.random(N) < 0.45,
        "blind": rng.random(N) < 0.3,
    }


def _frame(outcomes: dict[str, np.ndarray], model: str = "m", error_at: int | None = None) -> pd.DataFrame:
    records = []
    for condition, right in outcomes.items():
        for i, value in enumerate(right):
            outcome = "e" if (error_at == i and condition == "blind") else bool(value)
            records.append((model, condition, f"v{i:02d}-1", f"T{i % 2}", outcome))
    return make_frame(records)


def _percentile_ci(diff: np.ndarray, seed: int = 0, draws: int = 20_000) -> tuple[float, float]:
    """A plain Monte Carlo percentile bootstrap of the mean, written here (not vdg's)."""
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(draws, len(diff)))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def test_each_contrast_is_the_difference_of_the_two_arms_counted_by_hand():
    outcomes = _outcomes()
    table = no_vision_table(_frame(outcomes), ReportSettings(min_stratum=10))
    assert list(table.columns) == list(COLUMNS)
    overall = table[table.task_type == "Overall"].set_index("contrast")
    assert list(overall.index) == ["vdg_black", "vdg_blind", "black_blind"]
    for name, upper, lower in [
        ("vdg_black", "orig", "black"),
        ("vdg_blind", "orig", "blind"),
        ("black_blind", "black", "blind"),
    ]:
        row = overall.loc[name]
        assert (row.upper, row.lower, row.n, row.arms) == (upper, lower, N, "orig,black,blind")
        np.testing.assert_allclose(row.acc_upper, outcomes[upper].mean(), atol=1e-12)
        np.testing.assert_allclose(row.acc_lower, outcomes[lower].mean(), atol=1e-12)
        diff = outcomes[upper].astype(int) - outcomes[lower].astype(int)
        np.testing.assert_allclose(row["diff"], diff.mean(), atol=1e-12)
        low, high = _percentile_ci(diff)
        # vdg's CI is exact (closed form); a 20,000-draw Monte Carlo bootstrap lands within 0.02 of it
        np.testing.assert_allclose([row.ci_low, row.ci_high], [low, high], atol=0.02)
    per_type = table[(table.task_type != "Overall") & (table.contrast == "vdg_blind")]
    assert per_type.set_index("task_type").n.to_dict() == {"T0": N // 2, "T1": N // 2}


def test_the_vdg_against_black_equals_the_vdg_tables():
    from postprocess.analyses.vdg import vdg_table

    frame = _frame(_outcomes(seed=9))
    options = ReportSettings(min_stratum=10)
    mine = no_vision_table(frame, options).query("contrast == 'vdg_black'").set_index("task_type")
    vdg = vdg_table(frame, options).set_index("task_type")
    for column_mine, column_vdg in [("diff", "vdg"), ("ci_low", "ci_low"), ("ci_high", "ci_high"), ("n", "n")]:
        np.testing.assert_allclose(mine[column_mine].astype(float), vdg[column_vdg].astype(float), atol=1e-12)


def test_a_question_with_an_error_under_blind_leaves_every_contrast_of_its_model():
    outcomes = _outcomes()
    table = no_vision_table(_frame(outcomes, error_at=3), ReportSettings(min_stratum=10))
    overall = table[table.task_type == "Overall"].set_index("contrast")
    assert (overall.n == N - 1).all() and (overall.n_error == 1).all()
    keep = np.arange(N) != 3
    np.testing.assert_allclose(
        overall.loc["vdg_black", "diff"], outcomes["orig"][keep].mean() - outcomes["black"][keep].mean(), atol=1e-12
    )


def test_a_model_without_black_gets_only_the_vdg_against_blind():
    outcomes = _outcomes()
    del outcomes["black"]
    table = no_vision_table(_frame(outcomes), ReportSettings(min_stratum=10))
    assert set(table.contrast) == {"vdg_blind"}
    assert set(table.arms) == {"orig,blind"}


def test_a_stratum_below_min_stratum_keeps_its_values_but_no_ci():
    table = no_vision_table(_frame(_outcomes()), ReportSettings(min_stratum=31))
    per_type = table[table.task_type != "Overall"]
    assert per_type.too_small.all() and per_type.ci_low.isna().all() and per_type["diff"].notna().all()
    assert not table[table.task_type == "Overall"].too_small.any()


@pytest.mark.parametrize("conditions", [("orig", "black"), ("blind",)])
def test_without_blind_and_a_second_arm_the_table_is_skipped_with_a_reason(conditions):
    outcomes = {c: v for c, v in _outcomes().items() if c in conditions}
    tables = run_all(_frame(outcomes), ReportSettings(min_stratum=10, n_resamples=200), workers=1)
    assert tables["no_vision"].empty
    skipped = tables["skipped"]
    reasons = skipped[skipped.analysis == "no_vision"].reason.tolist()
    assert reasons and "blind" in reasons[0]
