"""Every table of paired differences reports the interval whose coverage tests/postprocess/stats/
test_paired_proportions.py simulates (Tango's score interval), and a stratum with no discordant question still gets
an interval of width (issue "Sound statistics II", item 1)."""

from __future__ import annotations

import numpy as np

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.vdg import vdg_table
from tests.helpers.frames import outcome_fields, tidy_frame, tidy_row
from tests.helpers.reference_data import reference_frame

#: Paired-difference tables of the reference data, and their CI columns.
PAIRED_TABLES = {
    "vdg": ("ci_low", "ci_high"),
    "ladder": ("spatial_ci_low", "spatial_ci_high"),
    "mcnemar": ("diff_ci_low", "diff_ci_high"),
}


def test_every_paired_difference_table_uses_the_score_interval_by_default():
    tables = run_all(reference_frame(), ReportSettings(), names=list(PAIRED_TABLES))
    for name, (low, high) in PAIRED_TABLES.items():
        table = tables[name]
        with_ci = table[table[low].notna()]
        assert len(with_ci) >= 3, name
        assert with_ci["ci_method"].str.startswith("tango score").all(), name
        assert (with_ci["n_resamples"] == 0).all() and (with_ci[low] <= with_ci[high]).all(), name


def test_a_stratum_without_discordant_questions_gets_an_interval_of_width():
    """The demo's chance answerer: the same answer with and without the video on all 150 questions."""
    rng = np.random.default_rng(3)
    right = rng.random(150) < 0.25
    rows = [
        tidy_row("chance", condition, f"v{i:03d}-0", task_type="t", **outcome_fields(bool(right[i])))
        for i in range(150)
        for condition in ("orig", "black")
    ]
    row = vdg_table(tidy_frame(rows), ReportSettings()).set_index("task_type").loc["Overall"]
    assert (row["d"], row["c"], row["vdg"]) == (0, 0, 0.0)
    assert row["ci_low"] < 0 < row["ci_high"]
    # an interval of a few points either side: the data are compatible with a small gap
    assert 0.01 < row["ci_high"] < 0.05 and -0.05 < row["ci_low"] < -0.01
    exact = vdg_table(tidy_frame(rows), ReportSettings(ci_method="exact")).set_index("task_type").loc["Overall"]
    assert (exact["ci_low"], exact["ci_high"]) == (0.0, 0.0)  # the percentile bootstrap's point, kept as an option
