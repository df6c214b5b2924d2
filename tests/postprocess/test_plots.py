"""Plots: a PNG when the tables have the rows, None otherwise, identical bytes for identical tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses.base import empty
from postprocess.analyses.ladder import COLUMNS as LADDER_COLUMNS
from postprocess.analyses.vdg import COLUMNS as VDG_COLUMNS
from postprocess.plots import (
    _ladder_steps,
    plot_crf,
    plot_ladder,
    plot_vdg_by_task,
    plot_vdg_vs_accuracy,
    write_plots,
)
from tests.postprocess.test_report import reference_tables

PNG = b"\x89PNG\r\n\x1a\n"


def _crf_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, flips = [], []
    for model, base in (("m1", 0.6), ("m2", 0.7)):
        for level in (0, 18, 28, 38):
            acc = base - level / 1000
            rows.append(
                {
                    "model": model,
                    "benchmark": "b",
                    "task_type": "Overall",
                    "condition": "orig" if level == 0 else f"crf{level}",
                    "crf": level,
                    "acc": acc,
                    "ci_low": acc - 0.05,
                    "ci_high": acc + 0.05,
                }
            )
            rows.append({**rows[-1], "task_type": "T1", "acc": 0.1})
            if level:
                flips.append(
                    {
                        "model": model,
                        "benchmark": "b",
                        "task_type": "Overall",
                        "condition": f"crf{level}",
                        "crf": level,
                        "c_to_i": level // 2,
                        "i_to_c": level // 4,
                    }
                )
    return pd.DataFrame(rows), pd.DataFrame(flips)


@pytest.fixture(scope="module")
def tables():
    return reference_tables()


@pytest.mark.parametrize(
    ("plot", "name"),
    [(plot_vdg_by_task, "vdg_by_task.png"), (plot_vdg_vs_accuracy, "vdg_vs_accuracy.png")],
)
def test_vdg_plots(tables, tmp_path, plot, name):
    path = plot(tables["vdg"], tmp_path)
    assert path == tmp_path / name and path.read_bytes().startswith(PNG)
    again = plot(tables["vdg"], tmp_path / "again")
    assert again.read_bytes() == path.read_bytes()  # deterministic
    assert plot(None, tmp_path / "none") is None
    assert plot(empty(VDG_COLUMNS), tmp_path / "none") is None
    assert plot(tables["vdg"].assign(vdg=np.nan), tmp_path / "none") is None
    assert not (tmp_path / "none").exists()


def test_ladder_plot(tables, tmp_path):
    path = plot_ladder(tables["ladder"], tmp_path)
    assert path == tmp_path / "ladder.png" and path.read_bytes().startswith(PNG)
    assert plot_ladder(None, tmp_path) is None and plot_ladder(empty(LADDER_COLUMNS), tmp_path) is None


def test_ladder_steps_follow_the_rungs_present():
    row = {"acc_black": 0.3, "acc_single": np.nan, "acc_shuffled": 0.6, "acc_ordered": np.nan, "acc_orig": 0.7}
    steps = _ladder_steps(row)
    assert [s[0] for s in steps] == ["shuffled - black", "temporal"]  # orig - shuffled: the table's temporal
    assert steps[1][1:] == (0.6, 0.7)
    full = {"acc_black": 0.3, "acc_single": 0.4, "acc_shuffled": 0.5, "acc_ordered": 0.6, "acc_orig": 0.7}
    assert [s[0] for s in _ladder_steps(full)] == ["spatial", "diversity", "temporal", "sampling"]


def test_crf_plot(tmp_path):
    crf, flips = _crf_tables()
    path = plot_crf(crf, flips, tmp_path)
    assert path == tmp_path / "crf.png" and path.read_bytes().startswith(PNG)
    assert plot_crf(crf, None, tmp_path / "a") is not None
    assert plot_crf(None, flips, tmp_path / "b") is not None
    assert plot_crf(None, None, tmp_path / "c") is None
    assert plot_crf(crf.drop(columns=["acc"]), flips.drop(columns=["c_to_i"]), tmp_path / "d") is None


def test_write_plots_makes_what_the_tables_allow(tables, tmp_path):
    crf, flips = _crf_tables()
    made = write_plots({**tables, "crf": crf, "crf_flips": flips}, tmp_path)
    assert [p.name for p in made] == ["vdg_by_task.png", "ladder.png", "vdg_vs_accuracy.png", "crf.png"]
    assert write_plots({}, tmp_path / "empty") == []
