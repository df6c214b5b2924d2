"""s(q) against the models' answers: correlations, terciles and VDG per tercile, counted by hand here."""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.shortcut_links import (
    LINK_COLUMNS,
    TERCILE_COLUMNS,
    shortcut_links,
    shortcut_types,
    terciles,
    vdg_by_shortcut,
)
from postprocess.reading.frame import with_text_scores
from tests.helpers.frames import make_frame

N = 60


def _scores(s: np.ndarray, benchmark: str = "b") -> pd.DataFrame:
    rows = []
    for i, value in enumerate(s):
        for answerer, shift in (("combined", 0.0), ("linear", 0.1)):
            rows.append(
                {
                    "benchmark": benchmark,
                    "question_id": f"v{i:02d}-1",
                    "task_type": f"T{i % 2}",
                    "answerer": answerer,
                    "n_options": 4,
                    "s": min(1.0, value + shift),
                    "picked": value > 0.5,
                }
            )
    return pd.DataFrame(rows)


def _world(seed: int = 3):
    rng = np.random.default_rng(seed)
    s = rng.random(N)
    outcomes = {"orig": rng.random(N) < 0.85, "black": rng.random(N) < s, "blind": rng.random(N) < s * 0.8}
    records = [
        ("m", condition, f"v{i:02d}-1", f"T{i % 2}", bool(right[i]))
        for condition, right in outcomes.items()
        for i in range(N)
    ]
    return with_text_scores(make_frame(records), _scores(s)), s, outcomes


def test_the_correlation_is_pearsons_of_s_and_correct():
    frame, s, outcomes = _world()
    table = shortcut_links(frame).set_index("condition")
    assert list(shortcut_links(frame).columns) == list(LINK_COLUMNS)
    for condition in ("black", "blind", "orig"):
        right = outcomes[condition].astype(float)
        np.testing.assert_allclose(table.loc[condition, "r"], np.corrcoef(s, right)[0, 1], atol=1e-12)
        np.testing.assert_allclose(table.loc[condition, "accuracy"], right.mean(), atol=1e-12)
    order = np.argsort(s, kind="stable")
    high = order[40:]  # 60 questions: thirds of 20
    np.testing.assert_allclose(table.loc["black", "acc_high"], outcomes["black"][high].mean(), atol=1e-12)
    assert table.loc["black", "r"] > 0.2  # black answers follow s here by construction


def test_terciles_are_equal_thirds_by_score_then_id_even_with_ties():
    scores = pd.DataFrame({"benchmark": "b", "question_id": [f"q{i}" for i in range(7)], "text_score": 0.5})
    cut = terciles(scores)
    # 7 tied questions: sizes 3, 2, 2, in question id order
    assert cut.groupby("tercile").size().to_dict() == {"high": 2, "low": 3, "mid": 2}
    assert cut[cut.tercile == "low"].question_id.tolist() == ["q0", "q1", "q2"]


def test_vdg_per_tercile_counts_by_hand():
    frame, s, outcomes = _world(seed=8)
    table = vdg_by_shortcut(frame, ReportSettings(min_stratum=10))
    assert list(table.columns) == list(TERCILE_COLUMNS)
    order = np.argsort(s, kind="stable")
    for name, members in zip(("low", "mid", "high"), (order[:20], order[20:40], order[40:]), strict=True):
        row = table.set_index("tercile").loc[name]
        gap = outcomes["orig"][members].astype(int) - outcomes["black"][members].astype(int)
        assert row.n == 20
        np.testing.assert_allclose(row.vdg, gap.mean(), atol=1e-12)
        np.testing.assert_allclose([row.s_min, row.s_max], [s[members].min(), s[members].max()], atol=1e-12)
        assert row.ci_low <= row.vdg <= row.ci_high


def test_the_type_summary_is_read_from_the_scores_the_frame_carries():
    frame, s, _ = _world()
    table = shortcut_types(frame)
    combined = table[(table.answerer == "combined") & (table.task_type == "Overall")].iloc[0]
    assert combined.n == N
    np.testing.assert_allclose(combined.accuracy, (s > 0.5).mean(), atol=1e-12)
    assert set(table.answerer) == {"combined", "linear"}


def test_without_scores_the_tables_are_empty_and_the_report_still_runs():
    frame = make_frame([("m", c, f"v{i}-1", "T", True) for c in ("orig", "black") for i in range(5)])
    tables = run_all(frame, ReportSettings(n_resamples=200), workers=1)
    for name in ("shortcut_types", "shortcut_links", "vdg_by_shortcut"):
        assert tables[name].empty, name
