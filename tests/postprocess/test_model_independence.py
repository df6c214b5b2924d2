"""A model's numbers do not depend on which other models are in the report, and CIs cluster by video where a
benchmark asks several questions per video (issue "Sound statistics II", items 2 and 3), on the published Video-MME
predictions in tests/data (three questions per video)."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.categories import POOLED
from postprocess.analyses.vdg import vdg_table
from postprocess.stats import paired_difference_ci, two_sided_z
from tests.helpers.frames import outcome_fields, tidy_frame, tidy_row
from tests.helpers.reference_data import reference_frame

FIRST_TWO = ("llava", "internvl2")
#: A pair's columns that are Holm-adjusted, or decisions made on Holm-adjusted values (their family grows with
#: the pairs compared, as it should), or the stability of such a decision.
HOLM_DECIDED = {
    "p_holm",
    "n_family",
    "p_holm_orig",
    "p_holm_black",
    "p_holm_interaction",
    "n_family_interaction",
    "differs_orig",
    "differs_black",
    "pattern",
    "dissociation",
    "share_pattern",
}
#: Tables on one model's orig and black answers: their Overall n is the model's one question set.
ORIG_BLACK_TABLES = ("vdg", "categories", "categories_by_task", "split_half", "above_chance", "tiers", "summary")


@functools.cache
def _tables(models: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    return run_all(reference_frame(models), ReportSettings())


def _rows_of(table: pd.DataFrame, models: set[str]) -> pd.DataFrame | None:
    """The rows of ``models`` (a pair's rows when both are), or None for a table with no model column."""
    if "model" in table.columns:
        rows = table[table["model"].astype(str).isin(models)]
    elif {"model_a", "model_b"} <= set(table.columns):
        rows = table[table["model_a"].astype(str).isin(models) & table["model_b"].astype(str).isin(models)]
    else:
        return None
    return rows.reset_index(drop=True)


def test_adding_a_third_model_changes_no_row_of_the_first_two():
    two, three = _tables(FIRST_TWO), _tables((*FIRST_TWO, "qwen2vl"))
    compared = 0
    for name, before in two.items():
        old, new = _rows_of(before, set(FIRST_TWO)), _rows_of(three[name], set(FIRST_TWO))
        if old is None or old.empty:
            continue
        pair = "model" not in old.columns
        keep = [c for c in old.columns if not (pair and c in HOLM_DECIDED)]
        pd.testing.assert_frame_equal(new[keep], old[keep], obj=name)
        compared += 1
        if pair:  # the Holm family grows with the pairs: 1 pair of two models, 3 of three
            family = [c for c in ("n_family",) if c in old.columns]
            for column in family:
                assert (new[column] >= old[column]).all() and (new[column] > old[column]).any(), name
    assert compared >= 20
    # the pooled rows belong to no model: they may move, and they are left out above
    assert not _rows_of(two["tiers"], {POOLED}).empty


def test_every_table_of_one_model_agrees_on_n():
    tables = _tables((*FIRST_TWO, "qwen2vl"))
    frame = reference_frame()
    for model in ("qwen2vl", "llava", "internvl2"):
        mine = frame[(frame["model"] == model) & frame["condition"].isin(["orig", "black"])]
        failed = set(mine.loc[mine["status"] == "error", "question_id"])
        answered = len(set(mine["question_id"]) - failed)  # answered under both, counted from the frame
        for name in ORIG_BLACK_TABLES:
            table = tables[name]
            rows = table[table["model"] == model]
            if "task_type" in rows.columns:
                rows = rows[rows["task_type"] == "Overall"]
            if "condition" in rows.columns:  # above_chance: a row per condition; orig's is on the orig+black set
                rows = rows[rows["condition"] == "orig"]
            assert rows["n"].astype(int).tolist() == [answered], (model, name)
    assert len(set(frame.loc[frame["model"] == "qwen2vl", "question_id"])) > 547  # qwen2vl lost questions


def _hand_design_effect(gaps: np.ndarray, videos: np.ndarray) -> float:
    """Cluster-robust variance of the mean gap over the i.i.d. one, floored at 1 (written here from the textbook
    formulas, not taken from the code under test)."""
    n = len(gaps)
    centred = gaps - gaps.mean()
    iid = centred @ centred / n / n
    totals = pd.Series(centred).groupby(videos).sum().to_numpy()
    g = len(totals)
    robust = g / (g - 1) * (totals @ totals) / n / n
    return max(1.0, robust / iid) if iid > 0 else 1.0


def test_default_vdg_cis_cluster_by_video_on_videomme_and_say_so():
    frame = reference_frame(FIRST_TWO)
    assert frame.groupby(["model", "condition"])["video_id"].value_counts().max() == 3  # three questions a video
    table = vdg_table(frame, ReportSettings()).set_index(["model", "task_type"])
    unclustered = vdg_table(frame, ReportSettings(cluster="question")).set_index(["model", "task_type"])
    z = two_sided_z(0.95)
    for model in FIRST_TWO:
        row = table.loc[(model, "Overall")]
        assert row["resample_unit"] == "video"
        assert unclustered.loc[(model, "Overall"), "resample_unit"] == "question"
        mine = frame[frame["model"] == model].pivot(index="question_id", columns="condition", values="correct")
        kept = mine[["orig", "black"]].dropna()
        gaps = kept["orig"].astype(int).to_numpy() - kept["black"].astype(int).to_numpy()
        videos = frame.drop_duplicates("question_id").set_index("question_id").loc[kept.index, "video_id"].to_numpy()
        deff = _hand_design_effect(gaps.astype(float), videos)
        assert deff > 1.0
        assert row["ci_method"] == "tango score (design effect)"
        # the clustered interval is the unclustered one on counts divided by the design effect: it is wider by
        # about sqrt(deff) (exactly so for a Wald interval; the score interval is close at this n)
        width = row["ci_high"] - row["ci_low"]
        plain = unclustered.loc[(model, "Overall"), "ci_high"] - unclustered.loc[(model, "Overall"), "ci_low"]
        assert width / plain == pytest.approx(np.sqrt(deff), rel=0.05)
        # and the same as the statistics module gives for the gaps and videos read here from the frame
        expected = paired_difference_ci(gaps, level=0.95, clusters=videos)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((expected.low, expected.high))
        assert row["n"] == len(gaps) and z > 0


def test_one_question_per_video_keeps_the_question_level_interval():
    """EgoSchema-shaped data: every video has one question, so the default interval is the unclustered one."""
    rng = np.random.default_rng(7)
    rows = [
        tidy_row("m", condition, f"v{i:03d}-0", task_type="t", **outcome_fields(bool(rng.random() < p)))
        for i in range(120)
        for condition, p in (("orig", 0.7), ("black", 0.4))
    ]
    frame = tidy_frame(rows)
    default = vdg_table(frame, ReportSettings())
    plain = vdg_table(frame, ReportSettings(cluster="question"))
    pd.testing.assert_frame_equal(default, plain)
    assert set(default["resample_unit"]) == {"question"} and set(default["ci_method"]) == {"tango score"}
