"""Labels sort naturally (``m@8f`` before ``m@16f``) in every table and plot, and pairs are oriented that way."""

from __future__ import annotations

import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.rendering.plots import plot_ladder, plot_vdg_by_task
from tests.helpers.reference_data import FILES, reference_frame

#: The reference models under sweep-like labels; lexicographically m@16f < m@2f < m@8f.
LABELS = {"qwen2vl": "m@16f", "llava": "m@8f", "internvl2": "m@2f"}
NATURAL = ["m@2f", "m@8f", "m@16f"]


@pytest.fixture(scope="module")
def tables():
    frame = reference_frame(tuple(FILES))
    frame["model"] = frame["model"].astype(str).map(LABELS)
    return run_all(frame, ReportSettings(n_resamples=50, stability_resamples=20), workers=1)


def _first_seen(values) -> list[str]:
    return [v for v in dict.fromkeys(str(v) for v in values) if v in NATURAL]


def test_every_table_lists_models_in_natural_order(tables):
    checked = 0
    for name, table in tables.items():
        if "model" in table.columns and table["model"].nunique() > 1:
            seen = _first_seen(table["model"])
            assert seen == [m for m in NATURAL if m in seen], name
            checked += 1
    assert checked >= 10


def test_model_pairs_are_oriented_and_listed_in_natural_order(tables):
    checked = 0
    for name, table in tables.items():
        if {"model_a", "model_b"} <= set(table.columns) and len(table):
            pairs = [(str(a), str(b)) for a, b in zip(table["model_a"], table["model_b"], strict=True)]
            assert all(NATURAL.index(a) < NATURAL.index(b) for a, b in pairs), (name, pairs)
            order = [(NATURAL.index(a), NATURAL.index(b)) for a, b in pairs]
            assert order == sorted(order), name
            checked += 1
    assert checked >= 2


def test_plots_draw_models_in_natural_order(tables, tmp_path, monkeypatch):
    import postprocess.rendering.plots as plots

    drawn = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: drawn.append(fig) or path)
    plot_ladder(tables["ladder"], tmp_path)
    ticks = [t.get_text() for t in drawn[-1].axes[0].get_xticklabels() if t.get_text()]
    assert _first_seen(ticks) == [m for m in NATURAL if m in ticks] and len(ticks) >= 2
    plot_vdg_by_task(tables["vdg"], tmp_path)
    legend = next(ax.get_legend() for ax in drawn[-1].axes if ax.get_legend() is not None)
    assert [t.get_text() for t in legend.get_texts()][:3] == NATURAL
