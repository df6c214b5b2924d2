"""The plot worker draws what write_plots draws in-process, from tables offered as they are computed."""

from __future__ import annotations

import pytest

from postprocess.plot_worker import PLOT_TABLES, BackgroundPlots, PlotError
from postprocess.plots import write_plots
from tests.helpers.report_tables import reference_tables


@pytest.fixture(scope="module")
def tables():
    return reference_tables()


def _same_pngs(here, there):
    assert here and [p.name for p in there] == [p.name for p in here]
    for a, b in zip(here, there, strict=True):
        assert a.read_bytes() == b.read_bytes()


def test_the_worker_writes_the_in_process_plots_byte_for_byte(tables, tmp_path):
    here = write_plots(tables, tmp_path / "here")
    with BackgroundPlots() as worker:
        worker.submit(tables)
        there = worker.result(tmp_path / "there")
    assert all(p.parent == tmp_path / "there" for p in there)
    _same_pngs(here, there)


def test_tables_offered_one_by_one_give_the_same_plots(tables, tmp_path):
    here = write_plots(tables, tmp_path / "here")
    with BackgroundPlots() as worker:
        for name, table in tables.items():  # what compute_tables' on_table does
            worker.offer(name, table)
        worker.submit(tables)  # nothing left to send: drawing started when the last plot table came
        _same_pngs(here, worker.result(tmp_path / "there"))


def test_the_plot_tables_are_all_write_plots_reads(tables, tmp_path):
    here = write_plots(tables, tmp_path / "all")
    only = write_plots({n: tables[n] for n in PLOT_TABLES if n in tables}, tmp_path / "only")
    _same_pngs(here, only)


def test_other_tables_than_those_offered_are_refused(tables, tmp_path):
    with BackgroundPlots() as worker:
        worker.offer("vdg", tables["vdg"])
        with pytest.raises(ValueError, match="'vdg' differs"):
            worker.submit({**tables, "vdg": tables["vdg"].copy()})


def test_a_failure_in_the_worker_is_raised_with_its_traceback(tables, tmp_path):
    broken = tables["vdg"].assign(vdg="not a number", ci_low="x", ci_high="y")
    with BackgroundPlots() as worker:
        worker.submit({**tables, "vdg": broken})
        with pytest.raises(PlotError, match=r"(?s)drawing the plots failed:.*Traceback"):
            worker.result(tmp_path / "plots")


def test_a_worker_given_no_work_is_stopped_on_exit():
    with BackgroundPlots() as worker:
        proc = worker._proc
    assert not proc.is_alive() and proc.exitcode == 0


def test_a_worker_that_died_early_fails_the_plots_not_the_analyses(tables, tmp_path):
    with BackgroundPlots() as worker:
        worker._proc.kill()
        worker._proc.join()
        for name, table in tables.items():
            worker.offer(name, table)  # what compute_tables does: must not raise
        with pytest.raises(PlotError, match="the worker exited with status"):
            worker.result(tmp_path / "plots")


def test_each_plot_is_drawn_as_soon_as_its_tables_are_in(tables, tmp_path):
    import time

    here = write_plots(tables, tmp_path / "here")
    with BackgroundPlots() as worker:
        worker.offer("vdg", tables["vdg"])
        deadline = time.monotonic() + 60
        drawn = worker._scratch / "vdg_by_task.png"
        while not (drawn.exists() and (worker._scratch / "vdg_vs_accuracy.png").exists()):
            assert time.monotonic() < deadline, "the vdg plots were not drawn from the vdg table alone"
            time.sleep(0.05)
        assert not (worker._scratch / "ladder.png").exists()  # its table has not come
        for name, table in tables.items():
            worker.offer(name, table)
        _same_pngs(here, worker.result(tmp_path / "there"))


def test_the_plots_read_exactly_the_plot_tables():
    from postprocess.plots import PLOTS

    assert {name for plot in PLOTS for name in plot.needs} == set(PLOT_TABLES)
