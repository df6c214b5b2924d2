"""Plots: a PNG when the tables have the rows, None otherwise, identical bytes for identical tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.colors import to_rgba
from matplotlib.container import BarContainer

import postprocess.rendering.plots as plots
from postprocess.analyses.base import empty
from postprocess.analyses.ladder import COLUMNS as LADDER_COLUMNS
from postprocess.analyses.vdg import COLUMNS as VDG_COLUMNS
from postprocess.rendering.plots import (
    _colors,
    _ladder_steps,
    plot_crf,
    plot_ladder,
    plot_vdg_by_task,
    plot_vdg_vs_accuracy,
    write_plots,
)
from postprocess.settings import natural_sorted
from tests.helpers.report_tables import reference_tables

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
    assert [p.name for p in made] == ["vdg_grid.png", "vdg_by_task.png", "ladder.png", "vdg_vs_accuracy.png", "crf.png"]
    assert write_plots({}, tmp_path / "empty") == []


def test_every_series_of_a_leaderboard_has_its_own_colour():
    assert _colors(["a", "b"]) == {"a": "C0", "b": "C1"}  # matplotlib's own cycle up to 10
    many = _colors([f"model{i:02d}" for i in range(20)])
    assert len(set(many.values())) == 20  # the default cycle would give model00 and model10 one colour


def _drawn(monkeypatch, draw):
    """The figure a plot function draws, as written, and the path it returned."""
    figures = []
    real_save = plots._save

    def keep(fig, path):
        figures.append(fig)
        return real_save(fig, path)

    monkeypatch.setattr(plots, "_save", keep)
    return draw(), figures[0]


def _models(n: int, benchmarks: tuple[str, ...] = ("b",)) -> list[tuple[str, str]]:
    return [(f"model{i:02d}", benchmark) for i in range(n) for benchmark in benchmarks]


def _many_vdg(tables: dict[str, pd.DataFrame], models: list[tuple[str, str]]) -> pd.DataFrame:
    vdg = tables["vdg"]
    first = vdg[vdg["model"] == vdg["model"].iloc[0]]
    shifted = ("vdg", "ci_low", "ci_high")
    return pd.concat(
        [
            first.assign(model=model, benchmark=benchmark, **{c: first[c] + i / 200 for c in shifted})
            for i, (model, benchmark) in enumerate(models)
        ],
        ignore_index=True,
    )


def _many_crf(n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    crf, flips = _crf_tables()
    grow = lambda t: pd.concat([t[t["model"] == "m1"].assign(model=m) for m, _ in _models(n)])  # noqa: E731
    return grow(crf), grow(flips)


def _many_sampling(n: int) -> pd.DataFrame:
    rows = [
        {"model": m, "benchmark": "b", "axis": "frames", "value": v, "acc_orig": 0.5, "acc_black": 0.3, "vdg": 0.2}
        for m, _ in _models(n)
        for v in (8.0, 16.0, 32.0)
    ]
    return pd.DataFrame(rows)


def _beside(fig) -> None:
    """The figure has one legend, right of every panel (covering no data) and inside the figure."""
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert len(legends) == 1
    box = legends[0].get_window_extent()
    for ax in fig.axes:
        assert box.x0 >= ax.get_window_extent().x1
    assert box.x1 <= fig.bbox.x1 and box.y0 >= fig.bbox.y0


@pytest.mark.parametrize("name", ["vdg_by_task", "crf", "sampling_sweep"])
def test_a_twenty_model_figure_has_one_legend_beside_the_data_and_a_colour_per_model(
    tables, tmp_path, monkeypatch, name
):
    draw = {
        "vdg_by_task": lambda: plot_vdg_by_task(_many_vdg(tables, _models(20)), tmp_path),
        "crf": lambda: plot_crf(*_many_crf(20), tmp_path),
        "sampling_sweep": lambda: plots.plot_sampling(_many_sampling(20), tmp_path),
    }[name]
    path, fig = _drawn(monkeypatch, draw)
    assert path.read_bytes().startswith(PNG)
    _beside(fig)
    legend = next(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[:20] == [m for m, _ in _models(20)]
    if name == "vdg_by_task":
        assert len({tuple(bar.get_facecolor()) for bar in fig.axes[0].patches}) == 20
    else:  # every panel draws a model in its one colour, and the models' colours differ
        colours: dict[str, set[tuple[float, ...]]] = {}
        for ax in fig.axes:
            lines = [line for line in ax.get_lines() if line.get_color() != "black"]  # not the zero line
            per_model = len(lines) // 20  # the lines of one model follow each other (the flips: two)
            for i, line in enumerate(lines):
                colours.setdefault(labels[i // per_model], set()).add(to_rgba(line.get_color()))
        assert all(len(c) == 1 for c in colours.values()) and len(set().union(*colours.values())) == 20


def test_a_long_legend_widens_the_figure_and_leaves_the_axes_their_width(tables, tmp_path, monkeypatch):
    # 60 models: 60 entries in three columns.
    _, few = _drawn(monkeypatch, lambda: plot_vdg_by_task(_many_vdg(tables, _models(2)), tmp_path / "few"))
    many_models = _models(60)
    _, many = _drawn(monkeypatch, lambda: plot_vdg_by_task(_many_vdg(tables, many_models), tmp_path / "many"))
    _beside(many)
    width = lambda fig: fig.axes[0].get_window_extent().width  # noqa: E731
    assert width(many) == pytest.approx(width(few), abs=0.3 * plots.DPI)
    assert many.get_size_inches()[0] > few.get_size_inches()[0] + 1.5  # two more columns of names


def test_many_models_are_told_apart_by_colour_and_few_by_name(tables, tmp_path, monkeypatch):
    _, many = _drawn(monkeypatch, lambda: plot_vdg_vs_accuracy(_many_vdg(tables, _models(20)), tmp_path / "many"))
    ax = many.axes[0]
    assert not ax.texts  # twenty names beside their points would overlap
    _beside(many)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [m for m, _ in _models(20)]
    points = next(c for c in ax.collections if isinstance(c, PathCollection))
    assert len({tuple(colour) for colour in points.get_facecolors()}) == 20
    handles = ax.get_legend().legend_handles
    assert [to_rgba(h.get_color()) for h in handles] == [tuple(colour) for colour in points.get_facecolors()]
    _, few = _drawn(monkeypatch, lambda: plot_vdg_vs_accuracy(tables["vdg"], tmp_path / "few"))
    named = sorted(t.get_text() for t in few.axes[0].texts)
    assert named == sorted(tables["vdg"]["model"].unique()) and few.axes[0].get_legend() is None


def test_a_ladder_of_many_models_stays_within_the_widest_figure(tables, tmp_path, monkeypatch):
    ladder = tables["ladder"]
    first = ladder[ladder["model"] == ladder["model"].iloc[0]]
    many = pd.concat([first.assign(model=m) for m, _ in _models(40)], ignore_index=True)
    _, fig = _drawn(monkeypatch, lambda: plot_ladder(many, tmp_path / "many"))
    assert fig.get_size_inches()[0] <= 16.0  # 40 bars at their flat-label width would take 50 inches
    assert not _overlapping_ticks(fig)
    _, few = _drawn(monkeypatch, lambda: plot_ladder(ladder, tmp_path / "few"))
    assert all(label.get_rotation() == 0 for label in few.axes[0].get_xticklabels())


def _overlapping_ticks(fig) -> list[tuple[str, str]]:
    """Every pair of x tick labels of one axes whose drawn boxes intersect (the figure as it was saved)."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    pairs = []
    for ax in fig.axes:
        drawn = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.get_xticklabels() if t.get_text()]
        for i, (a, box_a) in enumerate(drawn):
            for b, box_b in drawn[i + 1 :]:
                if box_a.x0 < box_b.x1 and box_b.x0 < box_a.x1 and box_a.y0 < box_b.y1 and box_b.y0 < box_a.y1:
                    pairs.append((a, b))
    return pairs


def test_a_ladder_of_five_long_model_names_has_no_tick_label_over_another(tables, tmp_path, monkeypatch):
    ladder = tables["ladder"]
    first = ladder[ladder["model"] == ladder["model"].iloc[0]]
    names = [f"Qwen2-VL-7B-Instruct@{f}frames-variant" for f in (8, 16, 32, 64, 128)]
    five = pd.concat([first.assign(model=m) for m in names], ignore_index=True)
    _, fig = _drawn(monkeypatch, lambda: plot_ladder(five, tmp_path))
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == names  # natural order: 8 before 16
    assert not _overlapping_ticks(fig)


def test_task_types_of_two_benchmarks_never_share_an_axes(tables, tmp_path, monkeypatch):
    vdg = tables["vdg"]
    other = vdg.assign(
        benchmark="mvbench",
        task_type=vdg["task_type"].where(vdg["task_type"] == "Overall", "Action " + vdg["task_type"]),
    )
    both = pd.concat([vdg, other], ignore_index=True)
    _, fig = _drawn(monkeypatch, lambda: plot_vdg_by_task(both, tmp_path))
    panels = [ax for ax in fig.axes if ax.get_xticklabels()]
    assert len(panels) == 2
    for ax, benchmark in zip(panels, sorted(both["benchmark"].unique()), strict=True):
        shown = {t.get_text().replace("\n", " ") for t in ax.get_xticklabels()}
        assert shown == set(both.loc[both["benchmark"] == benchmark, "task_type"])
        assert benchmark in ax.get_title()
    assert not _overlapping_ticks(fig)


def _text_overlaps(fig) -> list[tuple[str, str]]:
    """Every pair of texts drawn in one axes (tick labels, names, cell values, title, its legend's entries) whose
    boxes intersect, in the figure as it was saved."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    pairs = []
    for ax in fig.axes:
        texts = [*ax.get_xticklabels(), *ax.get_yticklabels(), *ax.texts, ax.title]
        legend = ax.get_legend()
        texts += list(legend.get_texts()) if legend is not None else []
        drawn = [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_visible() and t.get_text()]
        for i, (a, box_a) in enumerate(drawn):
            for b, box_b in drawn[i + 1 :]:
                if box_a.x0 < box_b.x1 and box_b.x0 < box_a.x1 and box_a.y0 < box_b.y1 and box_b.y0 < box_a.y1:
                    pairs.append((a, b))
    return pairs


def _two_benchmarks(tables, n: int) -> pd.DataFrame:
    """``n`` models on benchmark a and the first two of them on benchmark b: facets whose models differ."""
    return _many_vdg(tables, [*_models(n, ("a",)), *[(f"model{i:02d}", "b") for i in range(min(2, n))]])


@pytest.mark.parametrize("n", [1, 6, 20])
@pytest.mark.parametrize("name", ["vdg_grid", "vdg_by_task", "vdg_vs_accuracy"])
def test_figures_of_1_6_and_20_models_have_a_facet_per_benchmark_no_overlap_and_legends_of_what_is_drawn(
    tables, tmp_path, monkeypatch, n, name
):
    vdg = _two_benchmarks(tables, n)
    draw = getattr(plots, f"plot_{name}")
    path, fig = _drawn(monkeypatch, lambda: draw(vdg, tmp_path))
    assert path.read_bytes().startswith(PNG)
    assert not _text_overlaps(fig), name
    facets = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title().split(":")[0] for ax in facets] == ["a", "b"]  # one axes per benchmark, never mixed
    for ax, benchmark in zip(facets, ("a", "b"), strict=True):
        drawn = natural_sorted(vdg.loc[vdg["benchmark"] == benchmark, "model"].unique())
        legend = ax.get_legend()
        if name == "vdg_grid":
            assert [t.get_text() for t in ax.get_xticklabels()] == drawn
        elif legend is not None:
            assert [t.get_text() for t in legend.get_texts()] == drawn  # only the models of this benchmark
        else:  # named beside their points
            assert sorted(t.get_text() for t in ax.texts) == sorted(drawn)


def test_the_heat_map_writes_each_cells_vdg(tables, tmp_path, monkeypatch):
    vdg = tables["vdg"]
    _, fig = _drawn(monkeypatch, lambda: plots.plot_vdg_grid(vdg, tmp_path))
    ax = fig.axes[0]
    models = [t.get_text() for t in ax.get_xticklabels()]
    tasks = [t.get_text() for t in ax.get_yticklabels()]
    assert tasks[-1] == "Overall"
    written = {(tasks[round(t.get_position()[1])], models[round(t.get_position()[0])]): t.get_text() for t in ax.texts}
    expected = {(r.task_type, r.model): f"{r.vdg:+.2f}" for r in vdg.dropna(subset=["vdg"]).itertuples()}
    assert written == expected


def test_a_zero_vdg_is_drawn_and_a_model_keeps_its_colour_in_every_figure(tables, tmp_path, monkeypatch):
    vdg = tables["vdg"].copy()
    first = vdg["model"].iloc[0]
    vdg.loc[(vdg["model"] == first) & (vdg["task_type"] == "Overall"), ["vdg", "ci_low", "ci_high"]] = 0.0
    figures = {}
    real_save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.setdefault(path.stem, fig) and real_save(fig, path))
    crf, flips = _crf_tables()
    models = sorted(vdg["model"].unique())
    crf, flips = (t.assign(model=t["model"].map({"m1": models[0], "m2": models[1]})) for t in (crf, flips))
    write_plots({"vdg": vdg, "crf": crf, "crf_flips": flips}, tmp_path)
    colour = plots.model_colors({"vdg": vdg})
    by_task = figures["vdg_by_task"].axes[0]
    marks = [line for line in by_task.get_lines() if list(line.get_ydata()) == [0, 0] and line.get_linewidth() == 3]
    zeros = vdg.loc[vdg["vdg"] == 0, "model"]  # the one set here, and any the data hold
    assert first in set(zeros)
    assert sorted(to_rgba(m.get_color()) for m in marks) == sorted(to_rgba(colour[m]) for m in zeros)
    bars = {
        b.get_label(): to_rgba(b.patches[0].get_facecolor()) for b in by_task.containers if isinstance(b, BarContainer)
    }
    assert bars == {m: to_rgba(colour[m]) for m in models}
    points = next(c for c in figures["vdg_vs_accuracy"].axes[0].collections if isinstance(c, PathCollection))
    assert [tuple(c) for c in points.get_facecolors()] == [to_rgba(colour[m]) for m in natural_sorted(models)]
    crf_lines = [line for line in figures["crf"].axes[0].get_lines()]
    assert [to_rgba(line.get_color()) for line in crf_lines[:2]] == [to_rgba(colour[m]) for m in models[:2]]
    flips_axes = figures["crf"].axes[1]
    assert flips_axes.get_ylim()[0] == 0
