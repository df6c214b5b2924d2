"""The report's plots drawn by a second process, alongside the rest of the report.

Importing matplotlib and drawing take about as long as computing a small report. ``vdg report``
starts a ``BackgroundPlots`` first thing when the machine has a second CPU: the worker imports
``postprocess.plots`` and warms matplotlib up while this process reads the logs and runs the
analyses; it is handed the ``PLOT_TABLES`` as soon as they are computed (``offer``), draws while the
remaining analyses run, and the PNGs are moved into the report folder at the end (``result``). They
are the PNGs ``postprocess.plots.write_plots`` draws in-process: the worker calls it.

Where processes can be forked the worker is forked (it shares what this process has imported);
elsewhere it is spawned.
"""

from __future__ import annotations

import multiprocessing as mp
import shutil
import tempfile
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


def _serve(conn: Connection) -> None:
    """The worker: import and warm up, then draw the tables it is sent into a folder, once."""
    try:
        from postprocess.plots import warm_up, write_plots  # the slow import, made while the parent works

        warm_up()
        message = conn.recv()
        if message is None:  # nothing to draw
            return
        tables, folder = message
        written = write_plots(tables, Path(folder))
        conn.send(("ok", [p.name for p in written]))
    except EOFError:  # the parent went away
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
        self._conn, theirs = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(theirs,), name="vdg-plots", daemon=True)
        self._proc.start()
        theirs.close()
        self._scratch = Path(tempfile.mkdtemp(prefix="vdg-plots-"))
        self._tables: dict[str, Any] = {}
        self._sent = False

    @staticmethod
    def useful() -> bool:
        """Whether a worker can run beside this process (a second CPU)."""
        return cpus() > 1

    def offer(self, name: str, table: Any) -> None:
        """One computed table; drawing starts once every ``PLOT_TABLES`` table has been offered."""
        if name in PLOT_TABLES and not self._sent:
            self._tables[name] = table
            if len(self._tables) == len(PLOT_TABLES):
                self._send()

    def submit(self, tables: Mapping[str, Any]) -> None:
        """Draw from ``tables`` (the same table objects as any offered before)."""
        for name in PLOT_TABLES:
            if name in tables and self._tables.get(name, tables[name]) is not tables[name]:
                raise ValueError(f"BackgroundPlots: table {name!r} differs from the one offered before")
        if not self._sent:
            self._tables.update({n: tables[n] for n in PLOT_TABLES if n in tables})
            self._send()

    def _send(self) -> None:
        self._sent = True
        try:
            self._conn.send((self._tables, str(self._scratch)))
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
