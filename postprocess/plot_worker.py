"""The report's plots drawn by a second process, alongside the rest of the report.

Importing matplotlib and drawing take about as long as computing a small report. ``vdg report``
starts a ``BackgroundPlots`` first thing when the machine has a second CPU: the worker imports
``postprocess.plots`` and warms matplotlib up while this process reads the logs and runs the
analyses; it is handed each of the ``PLOT_TABLES`` as soon as it is computed (``offer``), draws each
plot as soon as its tables are in, while the remaining analyses run, and the PNGs are moved into the
report folder at the end (``result``). They are the PNGs ``postprocess.plots.write_plots`` draws
in-process: both draw ``postprocess.plots.PLOTS``.

Where processes can be forked the worker is forked (it shares what this process has imported);
elsewhere it is spawned.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import shutil
import tempfile
import threading
import traceback
from collections.abc import Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from postprocess.parallel import can_fork, cpus

#: The tables the plots are drawn from: ``postprocess.plots.write_plots`` reads these and no others.
PLOT_TABLES: tuple[str, ...] = ("vdg", "ladder", "crf", "crf_flips", "sampling_sweep")


class PlotError(RuntimeError):
    """The plot worker failed; the message holds its traceback."""


def _receive(conn: Connection, inbox: queue.SimpleQueue[Any]) -> None:
    """The worker's reading thread: messages into ``inbox`` while the main thread draws (so the parent's
    sends never wait on a drawing), up to the last one; None when the parent went away."""
    try:
        while True:
            message = conn.recv()
            inbox.put(message)
            if message is None or message[0] == "draw":
                return
    except (EOFError, OSError):
        inbox.put(None)


def _serve(conn: Connection, folder: str) -> None:
    """The worker: import and warm up, then draw each plot into ``folder`` once its tables have come
    (``("table", name, table)`` messages); on ``("draw",)`` draw the rest and reply with the files, once."""
    try:
        from postprocess.plots import PLOTS, warm_up  # the slow import, made while the parent works

        inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        threading.Thread(target=_receive, args=(conn, inbox), name="vdg-plots-inbox", daemon=True).start()
        warm_up()
        tables: dict[str, Any] = {}
        made: dict[int, Path | None] = {}
        while True:
            message = inbox.get()
            if message is None:  # nothing to draw, or the parent went away
                return
            if message[0] == "table":
                tables[message[1]] = message[2]
            for i, plot in enumerate(PLOTS):
                if i not in made and (message[0] == "draw" or all(name in tables for name in plot.needs)):
                    made[i] = plot.draw(tables, Path(folder))
            if message[0] == "draw":
                conn.send(("ok", [path.name for _, path in sorted(made.items()) if path is not None]))
                return
    except Exception:
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


class BackgroundPlots:
    """A worker process drawing the report's plots: ``offer`` tables as they are computed (or ``submit``
    them all), then ``result(folder)`` moves the PNGs there and returns their paths.

    Use it as a context manager: leaving the block stops a worker that was never given work.
    """

    def __init__(self) -> None:
        ctx = mp.get_context("fork" if can_fork() else "spawn")
        if ctx.get_start_method() == "fork":
            # The tables are DataFrames and the report imports pandas anyway: imported before the fork, the
            # worker inherits it rather than importing it a second time beside this process (half a CPU-second).
            import pandas  # noqa: F401
        self._scratch = Path(tempfile.mkdtemp(prefix="vdg-plots-"))
        self._conn, theirs = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(theirs, str(self._scratch)), name="vdg-plots", daemon=True)
        self._proc.start()
        theirs.close()
        self._tables: dict[str, Any] = {}  # those sent
        self._sent = False  # all of them: the worker draws what is left and replies

    @staticmethod
    def useful() -> bool:
        """Whether a worker can run beside this process (a second CPU)."""
        return cpus() > 1

    def offer(self, name: str, table: Any) -> None:
        """One computed table, sent at once if the plots read it: a plot is drawn as soon as its tables are in."""
        if name in PLOT_TABLES and not self._sent and name not in self._tables:
            self._tables[name] = table
            self._post(("table", name, table))
            if len(self._tables) == len(PLOT_TABLES):
                self._finish()

    def submit(self, tables: Mapping[str, Any]) -> None:
        """Draw from ``tables`` (the same table objects as any offered before)."""
        for name in PLOT_TABLES:
            if name in tables and self._tables.get(name, tables[name]) is not tables[name]:
                raise ValueError(f"BackgroundPlots: table {name!r} differs from the one offered before")
        for name in PLOT_TABLES:
            if name in tables:
                self.offer(name, tables[name])  # those not offered before; the last of all starts the drawing
        if not self._sent:
            self._finish()

    def _finish(self) -> None:
        self._sent = True
        self._post(("draw",))

    def _post(self, message: tuple[Any, ...]) -> None:
        try:
            self._conn.send(message)
        except OSError:  # the worker is gone: result() says so; the analyses go on meanwhile
            pass

    def result(self, folder: Path) -> list[Path]:
        """The plots, moved into ``folder``, once drawn; ``PlotError`` with the worker's traceback when it failed."""
        if not self._sent:
            raise RuntimeError("BackgroundPlots.result before any tables were submitted")
        try:
            status, detail = self._conn.recv()
        except EOFError:
            self._proc.join()
            raise PlotError(f"drawing the plots failed: the worker exited with status {self._proc.exitcode}") from None
        self._proc.join()
        if status != "ok":
            raise PlotError(f"drawing the plots failed:\n{detail}")
        if detail:
            folder.mkdir(parents=True, exist_ok=True)
        return [Path(shutil.move(str(self._scratch / name), str(folder / name))) for name in detail]

    def close(self) -> None:
        if self._proc.is_alive():
            if not self._sent:
                try:
                    self._conn.send(None)
                except OSError:
                    pass
            self._proc.join(timeout=5)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join()
        self._conn.close()
        shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self) -> BackgroundPlots:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
