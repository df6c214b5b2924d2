"""Figures from the analysis tables (matplotlib, Agg backend). Rendering only.

Each function takes the table(s) it draws and a folder, writes one PNG and returns its path, or
returns None when the tables lack the rows it needs. Output is deterministic for given tables
(fixed size, dpi and style; no timestamps in the PNG metadata).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from postprocess.settings import natural_key, natural_sorted  # noqa: E402
from vdg_tasks.vocabulary.conditions import LADDER, LADDER_DELTAS, LADDER_FALLBACKS  # noqa: E402

DPI = 100
_METADATA = {"Software": None}
_DELTAS = (("spatial", "#4c72b0"), ("diversity", "#55a868"), ("temporal", "#c44e52"), ("sampling", "#8172b2"))


def _usable(table: pd.DataFrame | None, columns: Sequence[str]) -> bool:
    return table is not None and len(table) > 0 and set(columns) <= set(table.columns)


def _in_natural_order(labels: pd.Series) -> pd.Series:
    return labels.map(natural_key)


def tick_labels_overlap(ax: plt.Axes, renderer: object) -> bool:
    """Whether two neighbouring x tick labels of ``ax`` overlap (their drawn boxes, as laid out now)."""
    boxes = sorted(
        (t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_visible() and t.get_text()),
        key=lambda box: box.x0,
    )
    return any(a.overlaps(b) for a, b in zip(boxes, boxes[1:], strict=False))


#: Rotations tried, in order, until no two x tick labels of an axes overlap (90 degrees always separates them).
_TICK_ROTATIONS = (30, 45, 90)


def _separate_tick_labels(fig: plt.Figure) -> bool:
    """Rotate each axes' x tick labels, as little as it takes, until none overlaps its neighbour; whether any
    axes changed (then the figure needs laying out again)."""
    renderer = fig.canvas.get_renderer()
    changed = False
    for ax in fig.axes:
        for rotation in _TICK_ROTATIONS:
            if not tick_labels_overlap(ax, renderer):
                break
            for label in ax.get_xticklabels():
                label.set_rotation(rotation)
                label.set_horizontalalignment("right" if rotation < 90 else "center")
                label.set_rotation_mode("anchor" if rotation < 90 else "default")
            changed = True
    return changed


def _save(fig: plt.Figure, path: Path) -> Path:
    """Lay the figure out and write it. A legend beside the axes (``_legend_beside``) gets its own room: the
    figure is widened by the legend's width and the axes keep the width they were given. Tick labels that
    would overlap are turned (``_separate_tick_labels``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rect = _layout(fig)
    if _separate_tick_labels(fig):
        fig.tight_layout(rect=rect)
    fig.set_layout_engine(None)  # laid out: savefig then skips the layout pass it would draw the figure for
    fig.savefig(path, dpi=DPI, metadata=_METADATA)
    plt.close(fig)
    return path


def _layout(fig: plt.Figure) -> tuple[float, float, float, float]:
    """Widen ``fig`` for a legend beside its axes and lay it out; the rectangle the axes were fitted into."""
    rect = (0.0, 0.0, 1.0, 1.0)
    beside = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None and not ax.get_legend().get_in_layout()]
    if beside:
        renderer = fig.canvas.get_renderer()
        width, height = fig.get_size_inches()
        room = max(legend.get_window_extent(renderer).width for legend in beside) / fig.dpi + _LEGEND_GAP
        fig.set_size_inches(width + room, height)
        rect = (0.0, 0.0, width / (width + room), 1.0)
    fig.tight_layout(rect=rect)
    return rect


def _colors(series: Sequence[str]) -> dict[str, object]:
    """A colour per series name: matplotlib's cycle (tab10) up to 10 series; up to 20, tab10's colours then
    their lighter tab20 partners (the default cycle repeats after 10, so on a 20-model leaderboard model00 and
    model10 would share one); beyond 20 they repeat."""
    if len(series) <= 10:
        return {name: f"C{i}" for i, name in enumerate(series)}
    pairs = plt.get_cmap("tab20").colors  # each tab10 colour, then its lighter partner
    palette = pairs[::2] + pairs[1::2]
    return {name: palette[i % len(palette)] for i, name in enumerate(series)}


#: Widest figure, inches (a ladder of many models would otherwise grow without bound).
_MAX_WIDTH = 16.0
#: Up to this many models a plot names each one in place (flat tick labels, a name beside each point).
_LABELS_FLAT = 10
#: Legend entries per column of a legend beside the axes.
_LEGEND_ROWS = 20
#: Inches added to a legend's width for the room beside the axes: its offset from them and a margin after it.
_LEGEND_GAP = 0.2


def _legend_beside(ax: plt.Axes, handles: Sequence[object] | None = None, labels: Sequence[str] | None = None) -> None:
    """The legend to the right of ``ax``, off the data, in columns of up to ``_LEGEND_ROWS`` entries; ``_save``
    widens the figure to hold it.

    An explicit place rather than matplotlib's "best": with many series no corner is free, and the search
    for one costs a fifth of a second per plot at 20 models."""
    if handles is None or labels is None:
        handles, labels = ax.get_legend_handles_labels()
    legend = ax.legend(
        handles,
        labels,
        fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        borderaxespad=1.0,  # one font size right of (and below the top of) the axes, whatever their width
        ncol=max(1, -(-len(labels) // _LEGEND_ROWS)),
    )
    legend.set_in_layout(False)  # its room is added beside the axes, not taken from them


def _overall(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["task_type"] == "Overall"] if "task_type" in table.columns else table


def _facets(table: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(benchmark, its rows) per benchmark, in name order: task types and models of two benchmarks never share
    an axes. One facet named "" when the table has no benchmark column."""
    if "benchmark" not in table.columns:
        return [("", table)]
    return [(str(b), rows) for b, rows in table.groupby("benchmark", sort=True)]


def plot_vdg_by_task(
    vdg: pd.DataFrame | None, out_dir: Path, colors: Mapping[str, object] | None = None
) -> Path | None:
    """Grouped bars: VDG per task type (Overall last), one bar per model, with the CI as error bars; one axes
    per benchmark, holding only its own models, and a legend beside each listing them. A VDG of zero is drawn as
    a flat mark in the model's colour (a bar of height zero would not show)."""
    if not _usable(vdg, ("model", "task_type", "vdg", "ci_low", "ci_high")):
        return None
    data = vdg.dropna(subset=["vdg"])
    if data.empty:
        return None
    facets = _facets(data)
    colors = colors or _colors(natural_sorted(set(data["model"].astype(str))))
    most_tasks = max(rows["task_type"].nunique() for _, rows in facets)
    fig, axes = plt.subplots(
        len(facets), 1, figsize=(max(6.0, 1.1 * most_tasks + 2), 4.0 * len(facets)), squeeze=False, sharey=True
    )
    for ax, (benchmark, rows) in zip(axes[:, 0], facets, strict=True):
        series = natural_sorted(set(rows["model"].astype(str)))
        tasks = sorted(t for t in rows["task_type"].unique() if t != "Overall")
        tasks += ["Overall"] if (rows["task_type"] == "Overall").any() else []
        width = 0.8 / len(series)
        x = np.arange(len(tasks))
        for i, name in enumerate(series):
            mine = rows[rows["model"].astype(str) == name].set_index("task_type").reindex(tasks)
            value = mine["vdg"].to_numpy(dtype=float)
            low = np.nan_to_num(value - mine["ci_low"].to_numpy(dtype=float))
            high = np.nan_to_num(mine["ci_high"].to_numpy(dtype=float) - value)
            centre = x - 0.4 + width * (i + 0.5)
            ax.bar(centre, value, width, label=name, color=colors[name], yerr=[low, high], capsize=2)
            for at in centre[value == 0]:
                ax.plot([at - width / 2, at + width / 2], [0, 0], color=colors[name], linewidth=3, zorder=3)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(x, [t.replace(" ", "\n", 1) for t in tasks], fontsize=8)
        ax.set_ylabel("VDG = acc(orig) - acc(black)")
        ax.set_title(
            f"{benchmark}: VDG by task type (CI bars)" if benchmark else "Visual Dependency Gap by task type (CI bars)"
        )
        _legend_beside(ax)
    return _save(fig, out_dir / "vdg_by_task.png")


def _ladder_steps(row: Mapping[str, object]) -> list[tuple[str, float, float]]:
    """(label, accuracy below, accuracy above) between consecutive rungs present in a ladder row.

    Consecutive declared rungs carry the delta's name (spatial, ...), as do a declared fallback's (orig over
    shuffled without an ordered rung is ``temporal``, the ladder table's definition); any other jump is
    ``upper - lower``.
    """
    names = {(upper, lower): name for name, upper, lower in LADDER_DELTAS}
    names.update({(upper, lower): name for name, upper, lower, _ in LADDER_FALLBACKS})
    present = [(r, float(row[f"acc_{r}"])) for r in LADDER if pd.notna(row.get(f"acc_{r}"))]
    steps = []
    for (lower, low), (upper, high) in zip(present, present[1:], strict=False):
        steps.append((names.get((upper, lower), f"{upper} - {lower}"), low, high))
    return steps


def plot_ladder(ladder: pd.DataFrame | None, out_dir: Path) -> Path | None:
    """Per model (Overall rows): acc_black as the base, then the step to each next rung present, stacked; one
    axes per benchmark."""
    if not _usable(ladder, ("model", "acc_black")):
        return None
    facets = []
    for benchmark, rows in _facets(_overall(ladder)):
        ordered = rows.assign(series=rows["model"].astype(str)).sort_values("series", key=_in_natural_order)
        records = [(r["series"], r["acc_black"], _ladder_steps(r)) for r in ordered.to_dict("records")]
        records = [r for r in records if r[2] and pd.notna(r[1])]
        if records:
            facets.append((benchmark, records))
    if not facets:
        return None
    colors = dict(_DELTAS)
    widths = [max(5.0, 1.2 * len(records) + 2.5) for _, records in facets]
    fig, axes = plt.subplots(
        1,
        len(facets),
        figsize=(min(sum(widths), _MAX_WIDTH - 2.0), 4.0),  # the legend beside takes up to 2 inches more
        squeeze=False,
        sharey=True,
        gridspec_kw={"width_ratios": [len(records) + 1 for _, records in facets]},
    )
    seen: set[str] = set()
    for ax, (benchmark, records) in zip(axes[0], facets, strict=True):
        for x, (_, base, steps) in enumerate(records):
            ax.bar(x, base, 0.6, color="#bbbbbb", label=None if "black" in seen else "black")
            seen.add("black")
            for label, low, high in steps:
                named = label in colors
                ax.bar(
                    x,
                    high - low,
                    0.6,
                    bottom=low,
                    color=colors.get(label, "#eeeeee"),
                    hatch=None if named else "//",
                    edgecolor="black",
                    linewidth=0.4,
                    label=None if label in seen else label,
                )
                seen.add(label)
            ax.plot([x - 0.3, x + 0.3], [steps[-1][2]] * 2, color="black", linewidth=1.5)
        ax.set_xticks(range(len(records)), [r[0] for r in records], fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(
            f"{benchmark}: ladder (Overall)" if benchmark else "Ladder: accuracy gained at each rung (Overall)"
        )
    axes[0, 0].set_ylabel("accuracy (black, then each next rung)")
    handles = [h for ax in axes[0] for h in ax.get_legend_handles_labels()[0]]
    labels = [lab for ax in axes[0] for lab in ax.get_legend_handles_labels()[1]]
    _legend_beside(axes[0, -1], handles, labels)  # beside the bars, never over one
    return _save(fig, out_dir / "ladder.png")


def _texts_overlap(ax: plt.Axes, renderer: object) -> bool:
    """Whether two of the names written on ``ax`` overlap (their drawn boxes)."""
    boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_visible() and t.get_text()]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def plot_vdg_vs_accuracy(
    vdg: pd.DataFrame | None, out_dir: Path, colors: Mapping[str, object] | None = None
) -> Path | None:
    """One point per model (Overall), its colour the model's: accuracy on the original video against VDG, with the
    VDG CI; one axes per benchmark. Each point is named beside it when there are few and no two names would
    overlap; otherwise the names are in a legend beside the axes."""
    if not _usable(vdg, ("model", "task_type", "acc_orig", "vdg")):
        return None
    data = _overall(vdg).dropna(subset=["acc_orig", "vdg"])
    if data.empty:
        return None
    colors = colors or _colors(natural_sorted(set(data["model"].astype(str))))
    facets = _facets(data)
    fig, axes = plt.subplots(len(facets), 1, figsize=(5.5, 4.5 * len(facets)), squeeze=False)
    renderer = fig.canvas.get_renderer()
    for ax, (benchmark, rows) in zip(axes[:, 0], facets, strict=True):
        rows = rows.assign(series=rows["model"].astype(str)).sort_values("series", key=_in_natural_order)
        value = rows["vdg"].to_numpy(dtype=float)
        yerr = None
        if {"ci_low", "ci_high"} <= set(rows.columns):
            yerr = [
                np.nan_to_num(value - rows["ci_low"].to_numpy(dtype=float)),
                np.nan_to_num(rows["ci_high"].to_numpy(dtype=float) - value),
            ]
        acc = rows["acc_orig"].to_numpy(dtype=float)
        series = [str(label) for label in rows["series"]]
        ax.errorbar(acc, value, yerr=yerr, fmt="none", ecolor="#999999", capsize=3)
        ax.scatter(acc, value, c=[colors[label] for label in series], zorder=3)
        ax.axhline(0, color="black", linewidth=0.8)
        low, high = float(np.nanmin(acc)), float(np.nanmax(acc))
        pad = max(0.05, (high - low) * 0.15)  # at least 0.1 of accuracy wide: close models do not crowd the ticks
        ax.set_xlim(max(0.0, low - pad), min(1.0, high + pad))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, prune="lower"))  # no x label in the corner of the y ones
        ax.set_xlabel("accuracy (orig)")
        ax.set_title(f"{benchmark}: VDG against accuracy" if benchmark else "Visual dependency against accuracy")
        if len(series) <= _LABELS_FLAT:
            for x, y, label in zip(acc, value, series, strict=True):
                ax.annotate(label, (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
            fig.tight_layout()
            if not _texts_overlap(ax, renderer):
                continue
            for text in list(ax.texts):  # names that would cover one another: a legend instead
                text.remove()
        handles = [Line2D([], [], color=colors[label], marker="o", linestyle="") for label in series]
        _legend_beside(ax, handles, series)
    for ax in axes[:, 0]:
        ax.set_ylabel("VDG (Overall)")
    return _save(fig, out_dir / "vdg_vs_accuracy.png")


def plot_vdg_grid(vdg: pd.DataFrame | None, out_dir: Path, colors: Mapping[str, object] | None = None) -> Path | None:
    """The first screen's grid as a heat map: task types (Overall last) by models, each cell coloured by its VDG
    (blue above zero, red below, one scale for every benchmark) and written in it; one axes per benchmark.
    ``colors`` is unused (a cell's colour is its value)."""
    if not _usable(vdg, ("model", "task_type", "vdg")):
        return None
    data = vdg.dropna(subset=["vdg"])
    if data.empty:
        return None
    facets = _facets(data)
    limit = max(0.05, float(np.abs(data["vdg"].to_numpy(dtype=float)).max()))
    most_models = max(rows["model"].nunique() for _, rows in facets)
    heights = [0.35 * rows["task_type"].nunique() + 1.6 for _, rows in facets]
    fig, axes = plt.subplots(
        len(facets), 1, figsize=(min(_MAX_WIDTH, max(5.0, 0.75 * most_models + 3.0)), sum(heights)),
        squeeze=False, gridspec_kw={"height_ratios": heights},
    )  # fmt: skip
    for ax, (benchmark, rows) in zip(axes[:, 0], facets, strict=True):
        models = natural_sorted(set(rows["model"].astype(str)))
        tasks = sorted(t for t in rows["task_type"].unique() if t != "Overall")
        tasks += ["Overall"] if (rows["task_type"] == "Overall").any() else []
        table = rows.assign(model=rows["model"].astype(str)).pivot_table(
            index="task_type", columns="model", values="vdg", aggfunc="first"
        )
        values = table.reindex(index=tasks, columns=models).to_numpy(dtype=float)
        ax.imshow(values, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
        for (i, j), value in np.ndenumerate(values):
            if not np.isnan(value):
                ink = "white" if abs(value) > 0.6 * limit else "black"
                ax.text(j, i, f"{value:+.2f}", ha="center", va="center", fontsize=7, color=ink)
        ax.set_xticks(range(len(models)), models, fontsize=8)
        ax.set_yticks(range(len(tasks)), tasks, fontsize=8)
        ax.set_title(f"{benchmark}: VDG by task type and model" if benchmark else "VDG by task type and model")
    return _save(fig, out_dir / "vdg_grid.png")  # every cell says its value: no colour bar to read


def _find(table: pd.DataFrame, candidates: Sequence[str]) -> str | None:
    return next((c for c in candidates if c in table.columns), None)


def _crf_level(values: pd.Series) -> pd.Series:
    """CRF level as a number: 18 from "crf18" or 18; "orig" -> 0 (the uncompressed source)."""
    numeric = pd.to_numeric(values, errors="coerce")
    text = values.astype(str).str.strip().str.lower()
    parsed = pd.to_numeric(text.str.extract(r"^crf(\d+)$", expand=False), errors="coerce")
    return numeric.fillna(parsed).where(text != "orig", 0.0).astype(float)


def _crf_series(table: pd.DataFrame, value_columns: Sequence[str]) -> pd.DataFrame | None:
    """Overall rows with a numeric ``level`` column and the model as text, or None."""
    level_col = _find(table, ("crf", "crf_level", "level", "condition"))
    if level_col is None or "model" not in table.columns:
        return None
    rows = _overall(table)
    rows = rows.assign(level=_crf_level(rows[level_col]), model=rows["model"].astype(str)).dropna(subset=["level"])
    rows = rows.dropna(subset=[c for c in value_columns], how="all")
    return rows if len(rows) else None


def _by_benchmark(*tables: pd.DataFrame | None) -> list[tuple[str, list[pd.DataFrame | None]]]:
    """(benchmark, each table's rows of it, None where it has none) per benchmark any table has, in name order."""
    split = [dict(_facets(table)) if table is not None else {} for table in tables]
    return [(b, [rows.get(b) for rows in split]) for b in sorted({b for rows in split for b in rows})]


def _models(rows: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """The models of ``rows`` with a value in one of ``columns``, in natural order (the lines drawn)."""
    return natural_sorted(set(rows.dropna(subset=list(columns), how="all")["model"].astype(str)))


def _model_lines(
    ax: plt.Axes, rows: pd.DataFrame, x: str, y: str, bounds: Sequence[str], colors: Mapping[str, object]
) -> list[float]:
    """One line per model in its colour, natural order, with a CI band between the ``bounds`` columns where each
    point has them; the values drawn (the band's too), for the y limits. Unclipped: a point on the axes' edge (a
    zero) shows whole."""
    drawn: list[float] = []
    by_model = {str(name): line for name, line in rows.groupby("model", sort=False)}
    for name in _models(rows, [y]):
        line = by_model[name].sort_values(x)
        at, value = line[x].to_numpy(dtype=float), line[y].to_numpy(dtype=float)
        ax.plot(at, value, marker="o", color=colors[name], zorder=3, clip_on=False)
        drawn += list(value)
        if set(bounds) <= set(line.columns) and line[list(bounds)].notna().all().all():
            low, high = (line[b].to_numpy(dtype=float) for b in bounds)
            ax.fill_between(at, low, high, color=colors[name], alpha=0.12, linewidth=0)
            drawn += [*low, *high]
    return drawn


def _fit_y(ax: plt.Axes, values: Sequence[float]) -> None:
    """y limits holding ``values`` with a margin of at least 0.05 each side (a zero is not on the edge)."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size:
        low, high = float(finite.min()), float(finite.max())
        pad = max(0.05, 0.08 * (high - low))
        ax.set_ylim(low - pad, high + pad)


def _level_ticks(ax: plt.Axes, levels: Sequence[float]) -> None:
    """A tick at each setting drawn, written as it is (8, 0.5), no minor ticks."""
    levels = sorted(set(levels))
    ax.set_xticks(levels, [f"{v:g}" for v in levels])
    ax.minorticks_off()


def _title(ax: plt.Axes, benchmark: str, text: str) -> None:
    """``benchmark: text`` (``text`` alone without a benchmark); broken after the benchmark when wider than the
    axes (measured before layout, when the axes are at their narrowest), so neighbours' titles never meet."""
    ax.set_title(f"{benchmark}: {text}" if benchmark else text[0].upper() + text[1:], fontsize=10)
    renderer = ax.figure.canvas.get_renderer()
    if benchmark and ax.title.get_window_extent(renderer).width > ax.get_window_extent(renderer).width:
        ax.set_title(f"{benchmark}:\n{text}", fontsize=10)


def _model_legend(
    ax: plt.Axes, models: Sequence[str], colors: Mapping[str, object], extra: Sequence[tuple[Artist, str]] = ()
) -> None:
    """The legend beside ``ax``: a line in its colour per model drawn in this facet, then ``extra`` entries
    (handle, label)."""
    handles: list[Artist] = [Line2D([], [], color=colors[m], marker="o") for m in models]
    _legend_beside(ax, handles + [h for h, _ in extra], [*models, *(label for _, label in extra)])


def _colors_for(models: set[str], colors: Mapping[str, object] | None) -> Mapping[str, object]:
    """``colors`` when it has every model (the report's, one per model), else a colour per model here."""
    return colors if colors and models <= set(colors) else _colors(natural_sorted(models))


_FLIP_STYLES = (("correct->wrong", "o", "-"), ("wrong->correct", "s", "--"))


def plot_crf(
    crf: pd.DataFrame | None,
    flips: pd.DataFrame | None,
    out_dir: Path,
    colors: Mapping[str, object] | None = None,
) -> Path | None:
    """A row per benchmark: accuracy across CRF levels per model, with its CI band (from crf), and the
    correct->wrong and wrong->correct flips against orig (from flips, counts from zero); each model in its colour,
    and a legend beside the row naming the models drawn in it."""
    acc_col = _find(crf, ("acc", "accuracy")) if crf is not None else None
    acc = _crf_series(crf, [acc_col]) if acc_col and _usable(crf, ("model",)) else None
    flip_cols = None
    if _usable(flips, ("model",)):
        to_wrong = _find(flips, ("c_to_i", "n_c_to_i", "correct_to_incorrect"))
        to_right = _find(flips, ("i_to_c", "n_i_to_c", "incorrect_to_correct"))
        if to_wrong and to_right:
            flip_cols = (to_wrong, to_right)
    flip = _crf_series(flips, list(flip_cols)) if flip_cols else None
    if acc is None and flip is None:
        return None
    facets = _by_benchmark(acc, flip)
    panels = [i for i, p in enumerate((acc, flip)) if p is not None]
    colors = _colors_for({m for p in (acc, flip) if p is not None for m in p["model"]}, colors)
    fig, axes = plt.subplots(len(facets), len(panels), figsize=(5.0 * len(panels), 3.8 * len(facets)), squeeze=False)
    for row, (benchmark, parts) in zip(axes, facets, strict=True):
        drawn: set[str] = set()
        for ax, i in zip(row, panels, strict=True):
            rows = parts[i]
            if rows is None:
                ax.axis("off")  # this benchmark has no rows for the panel
                continue
            if i == 0:
                _fit_y(ax, _model_lines(ax, rows, "level", acc_col, ("ci_low", "ci_high"), colors))
                drawn |= set(_models(rows, [acc_col]))
                ax.set_xlabel("CRF (0 = original)")
                ax.set_ylabel("accuracy")
                _title(ax, benchmark, "accuracy across CRF levels (CI bands)")
            else:
                for name in _models(rows, flip_cols):
                    line = rows[rows["model"] == name].sort_values("level")
                    for column, (_, marker, style) in zip(flip_cols, _FLIP_STYLES, strict=True):
                        ax.plot(line["level"], line[column], marker=marker, linestyle=style, color=colors[name],
                                zorder=3, clip_on=False)  # fmt: skip
                drawn |= set(_models(rows, flip_cols))
                most = float(np.nanmax(rows[list(flip_cols)].to_numpy(dtype=float)))
                ax.set_ylim(0, max(1.0, most) * 1.1)  # counts: from zero, and room above the largest
                ax.yaxis.set_major_locator(MaxNLocator(integer=True))
                ax.set_xlabel("CRF")
                ax.set_ylabel("questions")
                _title(ax, benchmark, "flips against the original")
            _level_ticks(ax, rows["level"].to_numpy(dtype=float))
        styles: list[tuple[Artist, str]] = []
        if parts[1] is not None:  # the flips' two line styles, after the models
            styles = [(Line2D([], [], color="black", marker=m, linestyle=s), label) for label, m, s in _FLIP_STYLES]
        _model_legend(row[-1], natural_sorted(drawn), colors, styles)
    return _save(fig, out_dir / "crf.png")


_SAMPLING_PANELS = (("acc_orig", "accuracy (orig)"), ("acc_black", "accuracy (black)"), ("vdg", "VDG"))
_AXIS_LABELS = {"frames": "frames per video", "fps": "frames per second (log scale)"}


def plot_sampling(
    sampling: pd.DataFrame | None, out_dir: Path, colors: Mapping[str, object] | None = None
) -> Path | None:
    """A row of panels per benchmark and sampling axis: accuracy on orig, on black and VDG (with their CI bands
    where the table has them) against the setting's value, one line per model in its colour; x log-scaled for fps.
    A legend beside each row names the models drawn in it."""
    if not _usable(sampling, ("model", "axis", "value", "acc_orig", "acc_black", "vdg")):
        return None
    data = sampling.dropna(subset=["value"])
    data = data[data["axis"].isin(list(_AXIS_LABELS))]
    if data.empty:
        return None
    data = data.assign(model=data["model"].astype(str))
    colors = _colors_for(set(data["model"]), colors)
    facets = [
        (benchmark, axis, rows[rows["axis"] == axis])
        for benchmark, rows in _facets(data)
        for axis in _AXIS_LABELS
        if (rows["axis"] == axis).any()
    ]
    fig, axes = plt.subplots(len(facets), len(_SAMPLING_PANELS), figsize=(13.0, 3.6 * len(facets)), squeeze=False)
    for row, (benchmark, axis, rows) in zip(axes, facets, strict=True):
        for ax, (column, title) in zip(row, _SAMPLING_PANELS, strict=True):
            bounds = (f"{column}_ci_low", f"{column}_ci_high")
            values = _model_lines(ax, rows, "value", column, bounds, colors)
            if column == "vdg":
                ax.axhline(0, color="black", linewidth=0.8)
            _fit_y(ax, [*values, 0.0] if column == "vdg" else values)
            if axis == "fps":
                ax.set_xscale("log")
            _level_ticks(ax, rows["value"].to_numpy(dtype=float))
            ax.set_xlabel(_AXIS_LABELS[axis])
            ax.set_ylabel(title)
            _title(ax, benchmark, f"{title} by {axis}" + (" (CI band)" if column == "vdg" else ""))
        models = natural_sorted({m for column, _ in _SAMPLING_PANELS for m in _models(rows, [column])})
        _model_legend(row[-1], models, colors)
    return _save(fig, out_dir / "sampling_sweep.png")


def _first(tables: Mapping[str, pd.DataFrame], *names: str) -> pd.DataFrame | None:
    return next((tables[n] for n in names if n in tables and len(tables[n])), None)


@dataclass(frozen=True)
class Plot:
    """One figure of the report: its file's stem, the tables it is drawn from, ``draw(tables, out_dir)`` (its path,
    or None when the tables lack what it needs) and the table whose section it illustrates (report.html shows it
    there)."""

    name: str
    needs: tuple[str, ...]
    draw: Callable[[Mapping[str, pd.DataFrame], Path, Mapping[str, object]], Path | None]
    beside: str


#: The report's figures, in the order they are listed.
PLOTS: tuple[Plot, ...] = (
    Plot("vdg_grid", ("vdg",), lambda t, out, c: plot_vdg_grid(t.get("vdg"), out, c), "at-a-glance"),
    Plot("vdg_by_task", ("vdg",), lambda t, out, c: plot_vdg_by_task(t.get("vdg"), out, c), "vdg"),
    Plot("ladder", ("ladder",), lambda t, out, c: plot_ladder(t.get("ladder"), out), "ladder"),
    Plot("vdg_vs_accuracy", ("vdg",), lambda t, out, c: plot_vdg_vs_accuracy(t.get("vdg"), out, c), "summary"),
    Plot("crf", ("crf", "crf_flips"), lambda t, out, c: plot_crf(t.get("crf"), _first(t, "crf_flips"), out, c), "crf"),
    Plot(
        "sampling_sweep",
        ("sampling_sweep",),
        lambda t, out, c: plot_sampling(t.get("sampling_sweep"), out, c),
        "sampling_sweep",
    ),  # fmt: skip
)


def model_colors(tables: Mapping[str, pd.DataFrame]) -> dict[str, object]:
    """One colour per model of the report (``_colors`` over every model any plotted table names, in natural
    order): a model has the same colour in every figure."""
    names: set[str] = set()
    for name in {n for plot in PLOTS for n in plot.needs}:
        table = tables.get(name)
        if table is not None and len(table) and "model" in table.columns:
            names |= set(table["model"].astype(str))
    return _colors(natural_sorted(names))


#: The table whose section each figure illustrates, by the figure's file stem.
PLOT_BESIDE: dict[str, str] = {plot.name: plot.beside for plot in PLOTS}


def write_plots(tables: Mapping[str, pd.DataFrame], out_dir: Path) -> list[Path]:
    """Every plot the tables allow, in ``PLOTS`` order; the paths written. Reads only the tables its plots
    declare they need (``Plot.needs``)."""
    out_dir = Path(out_dir)
    colors = model_colors(tables)
    made = [(plot, plot.draw(tables, out_dir, colors)) for plot in PLOTS]
    for plot, path in made:
        if path is not None and path.stem != plot.name:
            raise RuntimeError(f"plot {plot.name!r} wrote {path.name}")  # a figure named twice, differently
    return [path for _, path in made if path is not None]
