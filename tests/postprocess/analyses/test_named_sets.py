"""Named question sets side by side: each set's accuracies and VDG, counted by hand, and the controls it beats."""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses import ReportSettings
from postprocess.analyses.named_sets import COLUMNS, family, question_set_comparison
from postprocess.reading.frame import with_named_sets
from tests.helpers.frames import make_frame

N = 60


def _world():
    rng = np.random.default_rng(11)
    outcomes = {"orig": rng.random(N) < 0.8, "black": rng.random(N) < 0.4, "blind": rng.random(N) < 0.3}
    records = [("m", c, f"v{i:02d}-1", "T", bool(right[i])) for c, right in outcomes.items() for i in range(N)]
    ids = [f"v{i:02d}-1" for i in range(N)]
    sets = [
        {"name": "first_half", "benchmark": "b", "ids": ids[:30], "description": "the first 30", "source": "x.json"},
        *[
            {"name": f"ctl_{k:02d}", "benchmark": "b", "ids": ids[k : k + 30], "description": "", "source": ""}
            for k in (5, 10, 15)
        ],
        {"name": "elsewhere", "benchmark": "other", "ids": ids, "description": "", "source": ""},
    ]
    return with_named_sets(make_frame(records), sets), outcomes, ids


def test_each_set_holds_its_own_questions_counted_by_hand():
    frame, outcomes, ids = _world()
    table = question_set_comparison(frame, ReportSettings(min_stratum=10))
    assert list(table.columns) == list(COLUMNS)
    assert table.question_set.tolist() == ["all", "first_half", "ctl_05", "ctl_10", "ctl_15"]  # not other's set
    rows = table.set_index("question_set")
    for name, members in (("all", slice(0, N)), ("first_half", slice(0, 30)), ("ctl_10", slice(10, 40))):
        row = rows.loc[name]
        orig, black, blind = (outcomes[c][members] for c in ("orig", "black", "blind"))
        assert row.n == len(orig)
        np.testing.assert_allclose(
            [row.acc_orig, row.acc_black, row.acc_blind], [orig.mean(), black.mean(), blind.mean()]
        )
        np.testing.assert_allclose([row.vdg, row.vdg_blind], [orig.mean() - black.mean(), orig.mean() - blind.mean()])
    assert rows.loc["first_half", "description"] == "the first 30"


def test_above_controls_counts_the_control_family_with_a_lower_vdg():
    frame, _, _ = _world()
    table = question_set_comparison(frame, ReportSettings(min_stratum=10)).set_index("question_set")
    controls = table.loc[["ctl_05", "ctl_10", "ctl_15"], "vdg"]
    below = int((controls < table.loc["first_half", "vdg"]).sum())
    assert table.loc["first_half", "above_controls"] == f"ctl: {below} of 3"
    assert table.loc["ctl_05", "above_controls"] == ""  # its own family is not its control
    assert table.loc["all", "above_controls"] == ""


def test_family_drops_a_trailing_number():
    assert (family("uniform_03"), family("matched_10"), family("debiased"), family("set_2b")) == (
        "uniform",
        "matched",
        "debiased",
        "set_2b",
    )


def test_without_named_sets_the_table_is_empty():
    frame = make_frame([("m", c, f"v{i}-1", "T", True) for c in ("orig", "black") for i in range(5)])
    assert question_set_comparison(frame).empty
    assert isinstance(question_set_comparison(frame), pd.DataFrame)
