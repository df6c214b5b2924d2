"""The leaderboard: one row per (model, benchmark), copied from the analysis tables."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pandas as pd
import pytest

from postprocess.leaderboard import LEADERBOARD_COLUMNS, leaderboard_table, write_leaderboard
from tests.helpers.report_tables import reference_tables


@pytest.fixture(scope="module")
def tables():
    return reference_tables()


@pytest.fixture(scope="module")
def board(tables):
    return leaderboard_table(tables)


def test_one_row_per_model_with_the_vdg_tables_numbers(tables, board):
    assert list(board.columns) == list(LEADERBOARD_COLUMNS)
    # Sorted by VDG, largest first: llava 0.305 > internvl2 0.252 > qwen2vl 0.238 (reference T1 Overall).
    assert board["model"].tolist() == ["llava", "internvl2", "qwen2vl"]
    vdg = tables["vdg"].query("task_type == 'Overall'").set_index("model")
    row = board.set_index("model")
    for model in vdg.index:
        for col, src in (("vdg", "vdg"), ("vdg_ci_low", "ci_low"), ("vdg_ci_high", "ci_high"), ("n", "n")):
            assert row.loc[model, col] == vdg.loc[model, src], (model, col)
    # D:C = #(VDG = +1) / #(VDG = -1) on the shared question set (the paper's per-model D:C is reproduced in
    # test_reference under question_set="per-model").
    for model in vdg.index:
        np.testing.assert_allclose(row.loc[model, "dc_ratio"], vdg.loc[model, "d"] / vdg.loc[model, "c"])
    # Ladder deltas: llava has shuffled but no single rung; temporal = orig - shuffled (as the paper).
    assert np.isnan(row.loc["llava", "spatial"]) and not np.isnan(row.loc["llava", "temporal"])
    assert not np.isnan(row.loc["qwen2vl", "spatial"]) and np.isnan(row.loc["internvl2", "temporal"])
    # Temporal-reasoning VDG: Video-MME's task type; qwen2vl 40/86 - 40/86 = 0 (reference T1).
    assert (
        row.loc["qwen2vl", "temporal_vdg"] == 0
        and (board["temporal_vdg_source"] == "task_type: Temporal Reasoning").all()
    )
    temporal = tables["vdg"].query("task_type == 'Temporal Reasoning'").set_index("model")
    np.testing.assert_allclose(row.loc["llava", "temporal_vdg"], temporal.loc["llava", "vdg"])
    # Every model has an error row (CRF levels), none has unparsed answers or a VDG below 0.10.
    assert (board["flags"] == "errors").all()
    assert (board["missing_policy"] == "exclude").all() and (board["n_resamples"] == 0).all()  # exact CIs


def _vdg(model: str, vdg: float, task_type: str = "Overall") -> dict:
    return {"model": model, "benchmark": "b", "task_type": task_type, "n": 10, "acc_orig": 0.5, "acc_black": 0.5 - vdg,
            "vdg": vdg, "ci_low": vdg - 0.1, "ci_high": vdg + 0.1, "dc_ratio": float("inf"), "missing_policy":
            "incorrect", "ci_level": 0.9, "n_resamples": 10}  # fmt: skip


def _coverage(model: str, unparsed_rate: float, n_error: int) -> dict:
    return {"model": model, "benchmark": "b", "condition": "orig", "unparsed_rate": unparsed_rate, "n_error": n_error}


def test_flags_and_fallbacks():
    tables = {
        "vdg": pd.DataFrame([_vdg("low", 0.05), _vdg("high", 0.4), _vdg("high", 0.3, "Temporal Reasoning")]),
        "coverage": pd.DataFrame([_coverage("low", 0.06, 0), _coverage("high", 0.0, 0), _coverage("textonly", 0.0, 2)]),
        "temporal_gap": pd.DataFrame(
            [
                {"model": "low", "benchmark": "b", "condition": "orig", "duration": "all", "acc_temporal": 0.52},
                {"model": "low", "benchmark": "b", "condition": "orig", "duration": "short", "acc_temporal": 0.9},
                {"model": "low", "benchmark": "b", "condition": "black", "duration": "all", "acc_temporal": 0.5},
                {"model": "textonly", "benchmark": "b", "condition": "orig", "duration": "all", "acc_temporal": 0.5},
            ]
        ),
    }
    board = leaderboard_table(tables).set_index("model")
    assert board.index.tolist() == ["high", "low", "textonly"]  # no VDG last
    assert board.loc["high", "flags"] == "" and board.loc["high", "temporal_vdg"] == 0.3
    assert board.loc["low", "flags"] == "low-vdg,unparsed"
    np.testing.assert_allclose(board.loc["low", "temporal_vdg"], 0.02)
    assert board.loc["low", "temporal_vdg_source"] == "temporal_gap: acc_temporal orig - black"
    assert board.loc["textonly", "flags"] == "no-vdg,errors" and board.loc["textonly", "temporal_vdg_source"] == ""
    assert np.isinf(board.loc["high", "dc_ratio"]) and np.isnan(board.loc["high", "spatial"])


def test_empty_tables_give_an_empty_board():
    board = leaderboard_table({})
    assert list(board.columns) == list(LEADERBOARD_COLUMNS) and board.empty


@pytest.mark.parametrize("suffix", [".md", ".csv", ".json"])
def test_written_by_extension(board, tmp_path, suffix):
    path = write_leaderboard(board, tmp_path / f"board{suffix}")
    text = path.read_text()
    if suffix == ".md":
        assert text.startswith("# vdg leaderboard") and "| llava" in text and "exclude" not in text.split("|", 1)[1]
    elif suffix == ".csv":
        assert pd.read_csv(path).columns.tolist() == list(LEADERBOARD_COLUMNS)
    else:
        data = json.loads(text)
        assert list(data["columns"]) == list(LEADERBOARD_COLUMNS) and len(data["rows"]) == 3


def test_unknown_extension_is_refused(board, tmp_path):
    with pytest.raises(ValueError, match=r"written as \.md, \.csv or \.json"):
        write_leaderboard(board, tmp_path / "board.txt")


def test_counts_are_written_as_integers(tmp_path):
    # "textonly" has no vdg row, so its n is empty: a float column would print 300.0 for the others.
    rows = [{**_vdg("a", 0.3), "n": 300, "n_resamples": 2000}, {**_vdg("b", 0.2), "n": 7, "n_resamples": 2000}]
    tables = {"vdg": pd.DataFrame(rows), "coverage": pd.DataFrame([_coverage("textonly", 0.0, 0)])}
    board = leaderboard_table(tables)
    expected = {row["model"]: (str(row["n"]), str(row["n_resamples"])) for row in rows}
    with (write_leaderboard(board, tmp_path / "b.csv")).open() as f:
        written = {r["model"]: (r["n"], r["n_resamples"]) for r in csv.DictReader(f)}
    assert {m: written[m] for m in expected} == expected and written["textonly"] == ("", "")
    markdown = write_leaderboard(board, tmp_path / "b.md").read_text()
    assert "300.0" not in markdown and re.search(r"\|\s*300\s*\|", markdown)
    data = json.loads(write_leaderboard(board, tmp_path / "b.json").read_text())
    assert {r["model"]: r["n"] for r in data["rows"]} == {"a": 300, "b": 7, "textonly": None}


def test_labels_sort_naturally():
    from postprocess.settings import natural_key, natural_sorted

    labels = ["m@16f", "m@8f", "m@0.5fps", "m@2fps", "m", "a10", "a9"]
    # The numbers inside the labels, compared as numbers.
    assert natural_sorted(labels) == ["a9", "a10", "m", "m@0.5fps", "m@2fps", "m@8f", "m@16f"]
    assert natural_key("m@8f") < natural_key("m@16f") and sorted(["m@8f", "m@16f"]) == ["m@16f", "m@8f"]
    # Tied VDG on the leaderboard: the labels in that order (a plain string sort puts m@16f first).
    board = leaderboard_table({"vdg": pd.DataFrame([_vdg(m, 0.3) for m in ("m@16f", "m@8f", "m@32f")])})
    assert board["model"].tolist() == ["m@8f", "m@16f", "m@32f"]
