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


def test_a_benchmark_without_flips_has_its_accuracy_panel_and_a_legend_of_its_models(tmp_path, monkeypatch):
    crf, flips = _many_crf([("model00", "a"), ("model01", "a"), ("model02", "b")])
    _, fig = _drawn(monkeypatch, lambda: plot_crf(crf, flips[flips["benchmark"] == "a"], tmp_path))
    titles = [ax.get_title().split(":")[0] for ax in fig.axes]
    assert titles == ["a", "a", "b", ""]  # b's flips panel is empty, and hidden
    assert not fig.axes[3].axison and not fig.axes[3].get_lines()
    legends = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes if ax.get_legend()]
    assert legends == [["model00", "model01", "correct->wrong", "wrong->correct"], ["model02"]]
    assert [len(ax.get_lines()) for ax in fig.axes[:3]] == [2, 4, 1]


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


def _many_crf(models: list[tuple[str, str]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """m1's rows of ``_crf_tables`` for each (model, benchmark), the i-th pair's accuracy i/200 lower and its flips
    i more, the first pair's correct->wrong flips zero: each line's points tell its model."""
    crf, flips = _crf_tables()
    crf, flips = crf[crf["model"] == "m1"], flips[flips["model"] == "m1"]
    shifted = ("acc", "ci_low", "ci_high")
    return (
        pd.concat(
            [
                crf.assign(model=m, benchmark=b, **{c: crf[c] - i / 200 for c in shifted})
                for i, (m, b) in enumerate(models)
            ],
            ignore_index=True,
        ),
        pd.concat(
            [
                flips.assign(model=m, benchmark=b, c_to_i=(flips["c_to_i"] + i) * (i > 0), i_to_c=flips["i_to_c"] + i)
                for i, (m, b) in enumerate(models)
            ],
            ignore_index=True,
        ),
    )


def _many_sampling(models: list[tuple[str, str]]) -> pd.DataFrame:
    """Frames 8, 16 and 32 for each (model, benchmark): the i-th pair's accuracies differ from every other's, the
    first pair's accuracy on black is zero."""
    rows = [
        {
            "model": m,
            "benchmark": b,
            "axis": "frames",
            "value": v,
            "acc_orig": 0.5 + i / 100 + v / 1000,
            "acc_black": (0.3 - i / 200) * (i > 0),
            "vdg": 0.5 + i / 100 + v / 1000 - (0.3 - i / 200) * (i > 0),
            "vdg_ci_low": 0.1 + i / 100,
            "vdg_ci_high": 0.7 + i / 100,
        }
        for i, (m, b) in enumerate(models)
        for v in (8.0, 16.0, 32.0)
    ]
    return pd.DataFrame(rows)


def _beside(fig, count: int = 1) -> None:
    """The figure has ``count`` legends, each right of every panel (covering no data) and inside the figure."""
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert len(legends) == count
    for legend in legends:
        box = legend.get_window_extent()
        for ax in fig.axes:
            assert box.x0 >= ax.get_window_extent().x1
        assert box.x1 <= fig.bbox.x1 and box.y0 >= fig.bbox.y0


@pytest.mark.parametrize("name", ["vdg_by_task", "crf", "sampling_sweep"])
def test_a_twenty_model_figure_has_one_legend_beside_the_data_and_a_colour_per_model(
    tables, tmp_path, monkeypatch, name
):
    models = _models(20)
    draw = {
        "vdg_by_task": lambda: plot_vdg_by_task(_many_vdg(tables, models), tmp_path),
        "crf": lambda: plot_crf(*_many_crf(models), tmp_path),
        "sampling_sweep": lambda: plots.plot_sampling(_many_sampling(models), tmp_path),
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


def _two_benchmarks(n: int) -> list[tuple[str, str]]:
    """``n`` models on benchmark a and the first two of them on benchmark b: facets whose models differ."""
    return [*_models(n, ("a",)), *[(f"model{i:02d}", "b") for i in range(min(2, n))]]


def _drawn_ticks(axis) -> list:
    """The tick labels of ``axis`` within its view (matplotlib keeps a label for ticks outside it, not drawn)."""
    low, high = sorted(axis.get_view_interval())
    slack = 1e-9 * (high - low)
    pairs = zip(axis.get_majorticklocs(), axis.get_majorticklabels(), strict=True)
    return [label for at, label in pairs if low - slack <= at <= high + slack]


def _figure_text_overlaps(fig) -> list[tuple[str, str]]:
    """Every pair of texts of two different axes (titles, axis labels, tick labels, legend entries) whose boxes
    intersect, in the figure as it was saved."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    per_axes = []
    for ax in fig.axes:
        texts = [*_drawn_ticks(ax.xaxis), *_drawn_ticks(ax.yaxis), ax.title, ax.xaxis.label, ax.yaxis.label]
        texts += list(ax.get_legend().get_texts()) if ax.get_legend() is not None else []
        shown = [t for t in texts if t.get_visible() and t.get_text() and ax.axison]
        per_axes.append([(t.get_text(), t.get_window_extent(renderer)) for t in shown])
    return [
        (a, b)
        for i, mine in enumerate(per_axes)
        for theirs in per_axes[i + 1 :]
        for a, box_a in mine
        for b, box_b in theirs
        if box_a.x0 < box_b.x1 and box_b.x0 < box_a.x1 and box_a.y0 < box_b.y1 and box_b.y0 < box_a.y1
    ]


#: What a line panel draws, by its y label: the table and its columns whose values are the panel's lines' points.
_PANELS = {
    "accuracy": ("crf", ("acc",)),
    "questions": ("crf_flips", ("c_to_i", "i_to_c")),
    "accuracy (orig)": ("sampling_sweep", ("acc_orig",)),
    "accuracy (black)": ("sampling_sweep", ("acc_black",)),
    "VDG": ("sampling_sweep", ("vdg",)),
}


def _points(rows: pd.DataFrame, x: str, columns: tuple[str, ...]) -> dict[tuple, str]:
    """The model of each line ``rows`` hold, by its points: (x values, one column's values in x order)."""
    return {
        (tuple(mine[x]), tuple(np.round(mine[column], 9))): str(model)
        for model, mine in rows.sort_values(x).groupby("model")
        for column in columns
    }


def _check_line_facets(fig, data: dict[str, pd.DataFrame], x: str, colours, extra: list[str]) -> None:
    """One row of panels per benchmark (a, then b) and one legend beside it listing the models drawn in it (then
    ``extra``); each line is one model's points in that model's colour; the y axis holds every point, a point on
    its edge (a zero) whole, and fits the data (counts from zero)."""
    facets = [ax for ax in fig.axes if ax.get_title()]
    named = [ax.get_title().split(":")[0] for ax in facets]
    assert named == sorted(named) and set(named) == {"a", "b"}  # a row per benchmark, never mixed
    for benchmark in ("a", "b"):
        mine = [ax for ax in facets if ax.get_title().split(":")[0] == benchmark]
        drawn = natural_sorted({m for t in data.values() for m in t.loc[t["benchmark"] == benchmark, "model"]})
        legends = [ax.get_legend() for ax in mine if ax.get_legend() is not None]
        assert len(legends) == 1 and [t.get_text() for t in legends[0].get_texts()] == [*drawn, *extra]
        for ax in mine:
            table, columns = _PANELS[ax.get_ylabel()]
            rows = data[table][data[table]["benchmark"] == benchmark]
            lines = [line for line in ax.get_lines() if line.get_color() != "black"]  # not the zero line
            model_of = _points(rows, x, columns)
            models = [model_of[(tuple(line.get_xdata()), tuple(np.round(line.get_ydata(), 9)))] for line in lines]
            assert set(models) == set(drawn) and len(models) == len(drawn) * len(columns)  # a line per model
            assert [to_rgba(line.get_color()) for line in lines] == [to_rgba(colours[m]) for m in models]
            points = [float(y) for line in ax.get_lines() for y in line.get_ydata()]
            points += [y for band in ax.collections for y in band.get_datalim(ax.transData).intervaly]
            low, high = ax.get_ylim()
            assert low <= min(points) and max(points) <= high
            on_edge = [line for line in lines if low in line.get_ydata() or high in line.get_ydata()]
            assert all(not line.get_clip_on() for line in on_edge)  # drawn whole, not cut by the axes
            if table == "crf_flips":
                assert low == 0 and high <= 1.2 * max(1.0, max(points))
            else:
                slack = 0.1 + 0.1 * (max(points) - min(points))
                assert min(points) - slack <= low and high <= max(points) + slack


@pytest.mark.parametrize("n", [1, 6, 20])
@pytest.mark.parametrize("name", ["vdg_grid", "vdg_by_task", "vdg_vs_accuracy", "crf", "sampling_sweep"])
def test_figures_of_1_6_and_20_models_have_a_facet_per_benchmark_no_overlap_and_legends_of_what_is_drawn(
    tables, tmp_path, monkeypatch, n, name
):
    models = _two_benchmarks(n)
    data = {
        "crf": lambda: dict(zip(("crf", "crf_flips"), _many_crf(models), strict=True)),
        "sampling_sweep": lambda: {"sampling_sweep": _many_sampling(models)},
    }.get(name, lambda: {"vdg": _many_vdg(tables, models)})()
    # The report's colours, over one more model sorting first: each model's colour differs from the one the
    # figure would give it alone.
    colours = plots.model_colors({**data, "ladder": pd.DataFrame({"model": ["model"]})})
    plot = next(plot for plot in plots.PLOTS if plot.name == name)
    path, fig = _drawn(monkeypatch, lambda: plot.draw(data, tmp_path, colours))
    assert path.read_bytes().startswith(PNG)
    assert not _text_overlaps(fig) and not _figure_text_overlaps(fig), name
    if name in ("crf", "sampling_sweep"):
        _beside(fig, count=2)  # one beside each benchmark's row of panels
        overall = {k: t[t["task_type"] == "Overall"] if "task_type" in t else t for k, t in data.items()}
        styles = ["correct->wrong", "wrong->correct"] if name == "crf" else []
        _check_line_facets(fig, overall, "crf" if name == "crf" else "value", colours, styles)
        lines = [line for ax in fig.axes for line in ax.get_lines() if line.get_color() != "black"]
        assert any(not np.any(line.get_ydata()) for line in lines)  # model00's zeros on a: drawn (and whole)
        return
    vdg = data["vdg"]
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
