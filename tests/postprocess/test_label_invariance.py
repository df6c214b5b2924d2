"""Per-model values depend on the data only: renaming models, reordering the input or adding a model that answered
every question changes none of them; one model's failures do not change another's question set; small strata keep
their descriptive values but no CI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.accuracy import accuracy_table
from postprocess.analyses.categories import POOLED
from postprocess.analyses.ladder import ladder_table
from postprocess.analyses.vdg import vdg_table
from tests.helpers.frames import outcome_fields, tidy_frame, tidy_row

CONDITIONS = {"orig": 0.8, "black": 0.35, "single": 0.5, "shuffled": 0.65}
#: Tables with one row per model (and benchmark, condition, task type): their values must not move.
TABLES = {
    "vdg": ["model", "benchmark", "task_type"],
    "accuracy": ["model", "benchmark", "condition", "task_type"],
    "ladder": ["model", "benchmark", "task_type"],
    "above_chance": None,
    "letters": None,
    "tiers": ["model", "benchmark", "task_type"],
}


def _frame(models=("m1", "m2"), sizes=(40, 35), failing=("m1",), seed=0) -> pd.DataFrame:
    """Questions of task types t0, t1 (``sizes``), answered by each model under CONDITIONS; the ``failing``
    models have an error under black on every 6th question (a model's own failures)."""
    rows = []
    questions = [(f"v{t}{i:03d}-0", f"t{t}") for t, size in enumerate(sizes) for i in range(size)]
    for m, model in enumerate(models):
        rng = np.random.default_rng([seed, m])
        for condition, p in CONDITIONS.items():
            for i, (qid, task_type) in enumerate(questions):
                value = "e" if model in failing and condition == "black" and i % 6 == 0 else bool(rng.random() < p)
                rows.append(tidy_row(model, condition, qid, task_type=task_type, **outcome_fields(value)))
    return tidy_frame(rows)


def _keyed(table: pd.DataFrame, keys: list[str] | None) -> pd.DataFrame:
    keys = keys or [c for c in ("model", "benchmark", "condition", "task_type") if c in table.columns]
    return table.sort_values(keys, kind="stable").set_index(keys)


def _tables(frame: pd.DataFrame, options: ReportSettings) -> dict[str, pd.DataFrame]:
    tables = run_all(frame, options, names=list(TABLES))
    # a pooled tier row is the mean over the models: it belongs to no model and may move when one is added
    tables["tiers"] = tables["tiers"][tables["tiers"]["model"] != POOLED]
    return {name: _keyed(tables[name], keys) for name, keys in TABLES.items()}


OPTIONS = [
    ReportSettings(),
    ReportSettings(cluster=True, ci_method="exact", mc_se_target=0.0, n_resamples=300),  # Monte Carlo: the seed matters
    ReportSettings(ci_method="resample", mc_se_target=0.0, n_resamples=300),
    ReportSettings(question_set="per-model", ci_method="resample", mc_se_target=0.0, n_resamples=300),
]


@pytest.mark.parametrize("options", OPTIONS, ids=["exact", "cluster", "resample", "per-model"])
def test_renaming_and_reordering_models_changes_no_per_model_value(options):
    frame = _frame()
    before = _tables(frame, options)
    rename = {"m1": "zz-last", "m2": "aa-first"}  # the order of the labels flips too
    renamed = frame.iloc[::-1].assign(model=frame["model"].iloc[::-1].map(rename)).reset_index(drop=True)
    after = _tables(renamed, options)
    back = {v: k for k, v in rename.items()}
    for name in TABLES:
        table = after[name].rename(index=back, level="model").sort_index()
        assert not before[name].empty
        pd.testing.assert_frame_equal(table, before[name].sort_index(), check_like=False, obj=name)


@pytest.mark.parametrize("options", OPTIONS, ids=["exact", "cluster", "resample", "per-model"])
def test_a_third_model_that_answered_everything_changes_nothing(options):
    two = _tables(_frame(), options)
    three = _tables(_frame(models=("m1", "m2", "m3")), options)
    for name in TABLES:
        kept = three[name][three[name].index.get_level_values("model").isin(["m1", "m2"])]
        pd.testing.assert_frame_equal(kept, two[name], obj=name)


def _hand_vdg(frame: pd.DataFrame, model: str, questions: set[str]) -> tuple[int, float]:
    sub = frame[(frame["model"] == model) & frame["question_id"].isin(questions)]
    pivot = sub.pivot(index="question_id", columns="condition", values="correct").astype(bool)
    return len(pivot), float((pivot["orig"].astype(int) - pivot["black"].astype(int)).mean())


def test_one_models_failures_no_longer_change_the_other_models_rows():
    frame = _frame()
    failed = set(frame.loc[frame["status"] == "error", "question_id"])
    every = set(frame["question_id"])
    assert failed and all(frame.loc[frame["model"] == "m2", "status"] != "error")
    shared = vdg_table(frame, ReportSettings(question_set="shared")).set_index(["model", "task_type"])
    own = vdg_table(frame, ReportSettings()).set_index(["model", "task_type"])  # the default: per-model
    for model in ("m1", "m2"):  # shared: both on the questions neither failed
        n, gap = _hand_vdg(frame, model, every - failed)
        assert shared.loc[(model, "Overall"), "n"] == n and shared.loc[(model, "Overall"), "vdg"] == pytest.approx(gap)
        assert shared.loc[(model, "Overall"), "question_rule"] == "no error under orig, black for any model"
    assert shared.loc[("m2", "Overall"), "n_not_shared"] == len(failed)
    # per-model, the default (and the paper's convention): m2 on all its questions
    n, gap = _hand_vdg(frame, "m2", every)
    assert own.loc[("m2", "Overall"), "n"] == n == len(every) and own.loc[("m2", "Overall"), "vdg"] == pytest.approx(
        gap
    )
    assert own.loc[("m2", "Overall"), "n_not_shared"] == 0
    assert own.loc[("m1", "Overall"), "n"] == len(every - failed)
    assert own.loc[("m2", "Overall"), "question_rule"] == "no error under orig, black for this model"
    # the ladder and accuracy follow the same rule, under either convention
    shared_options = ReportSettings(question_set="shared")
    ladder = ladder_table(frame, shared_options).set_index(["model", "task_type"])
    assert ladder.loc[("m1", "Overall"), "n"] == ladder.loc[("m2", "Overall"), "n"] == len(every - failed)
    accuracy = accuracy_table(frame, shared_options).set_index(["model", "condition", "task_type"])
    assert accuracy.loc[("m2", "black", "Overall"), "n"] == len(every - failed)
    assert accuracy.loc[("m2", "orig", "Overall"), "n"] == len(every)  # nobody failed under orig
    ladder = ladder_table(frame, ReportSettings()).set_index(["model", "task_type"])
    assert ladder.loc[("m1", "Overall"), "n"] == len(every - failed) and ladder.loc[("m2", "Overall"), "n"] == len(
        every
    )
    accuracy = accuracy_table(frame, ReportSettings()).set_index(["model", "condition", "task_type"])
    assert accuracy.loc[("m2", "black", "Overall"), "n"] == len(every)


@pytest.mark.parametrize(("size", "small"), [(29, True), (30, False)])
def test_strata_below_min_stratum_keep_descriptive_values_without_inference(size, small):
    frame = _frame(sizes=(40, size), failing=())
    vdg = vdg_table(frame, ReportSettings()).set_index(["model", "task_type"])
    ladder = ladder_table(frame, ReportSettings()).set_index(["model", "task_type"])
    accuracy = accuracy_table(frame, ReportSettings()).set_index(["model", "condition", "task_type"])
    questions = set(frame.loc[frame["task_type"] == "t1", "question_id"])
    for model in ("m1", "m2"):
        row = vdg.loc[(model, "t1")]
        n, gap = _hand_vdg(frame, model, questions)
        assert row["n"] == n == size and row["vdg"] == pytest.approx(gap) and row["too_small"] == small
        assert np.isnan(row["ci_low"]) == small and np.isnan(row["ci_high"]) == small
        assert row["d"] + row["c"] > 0
        assert (row["ci_method"] == "") == small and (row["ci_method"] == "tango score") != small
        assert ladder.loc[(model, "t1"), "too_small"] == small
        assert np.isnan(ladder.loc[(model, "t1"), "spatial_ci_low"]) == small
        assert np.isfinite(ladder.loc[(model, "t1"), "spatial"])
        acc = accuracy.loc[(model, "orig", "t1")]
        assert acc["n"] == size and acc["too_small"] == small and np.isnan(acc["ci_low"]) == small
        assert not vdg.loc[(model, "t0"), "too_small"] and not vdg.loc[(model, "Overall"), "too_small"]
    notes = run_all(frame, ReportSettings(), names=["selection"])["selection"]
    assert notes["task_type"].tolist() == (["t1"] if small else [])


def test_exact_and_monte_carlo_ci_columns():
    frame = _frame()
    tango = vdg_table(frame, ReportSettings()).iloc[0]
    assert tango["ci_method"] == "tango score" and tango["n_resamples"] == 0 and tango["mc_se"] == 0
    exact = vdg_table(frame, ReportSettings(ci_method="exact")).iloc[0]
    assert exact["ci_method"] == "exact" and exact["n_resamples"] == 0 and exact["mc_se"] == 0
    mc = vdg_table(frame, ReportSettings(cluster=True, ci_method="exact", n_resamples=400, mc_se_target=0.0)).iloc[0]
    assert mc["ci_method"] == "monte carlo" and mc["n_resamples"] == 400 and 0 < mc["mc_se"] < 0.05
    ladder = ladder_table(frame, ReportSettings()).iloc[0]
    assert ladder["ci_method"] == "tango score" and ladder["n_resamples"] == 0
