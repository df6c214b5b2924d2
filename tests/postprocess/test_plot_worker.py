"""The plot worker process draws what write_plots draws in-process, and says why when it cannot."""

from __future__ import annotations

import pytest

from postprocess.plot_worker import BackgroundPlots, PlotError
from postprocess.plots import write_plots
from tests.postprocess.test_report import reference_tables


@pytest.fixture(scope="module")
def tables():
    return reference_tables()


def test_the_worker_writes_the_in_process_plots_byte_for_byte(tables, tmp_path):
    here = write_plots(tables, tmp_path / "here")
    with BackgroundPlots() as worker:
        worker.submit(tables, tmp_path / "there")
        there = worker.result()
    assert [p.name for p in there] == [p.name for p in here] and here
    for a, b in zip(here, there, strict=True):
        assert b == tmp_path / "there" / a.name
        assert a.read_bytes() == b.read_bytes()


def test_a_failure_in_the_worker_is_raised_with_its_traceback(tables, tmp_path):
    blocker = tmp_path / "plots"
    blocker.write_text("a file where the plots folder should go")
    with BackgroundPlots() as worker:
        worker.submit(tables, blocker)
        with pytest.raises(PlotError, match=r"(?s)drawing the plots failed.*(FileExistsError|NotADirectoryError)"):
            worker.result()


def test_a_worker_given_no_work_is_stopped_on_exit():
    with BackgroundPlots() as worker:
        proc = worker._proc
    assert proc.returncode is not None
