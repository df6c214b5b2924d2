"""The report's plots drawn by a second process, alongside the rest of the report.

Importing matplotlib and drawing take about as long as computing a small report. ``vdg report``
starts a ``BackgroundPlots`` first thing, when the machine has a second CPU: the worker imports
``postprocess.plots`` while this process reads the logs and runs the analyses, then draws from the
tables it is sent while this process writes the CSVs and report.json. The PNGs are those of
``postprocess.plots.write_plots`` in-process: the worker calls it.

Protocol: the tables go through a pickle in a temporary file; the worker reads that file's path
from its standard input (an empty input: nothing to draw) and prints the written paths as a JSON list.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from postprocess.parallel import cpus

_PACKAGE_ROOT = Path(__file__).resolve().parents[1]


class PlotError(RuntimeError):
    """The plot worker failed; the message holds its traceback."""


class BackgroundPlots:
    """A worker process drawing the report's plots: ``start``, ``submit(tables, folder)``, ``result()``.

    Use it as a context manager: leaving the block stops a worker that was never given work.
    """

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p)
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        self._payload: str | None = None
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "postprocess.plot_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )

    @staticmethod
    def useful() -> bool:
        """Whether a worker can run beside this process (a second CPU)."""
        return cpus() > 1

    def submit(self, tables: Mapping[str, Any], folder: Path) -> None:
        """Draw the plots of ``tables`` into ``folder`` (``write_plots(tables, folder)``)."""
        fd, self._payload = tempfile.mkstemp(prefix="vdg-plots-", suffix=".pkl")
        with os.fdopen(fd, "wb") as f:
            pickle.dump((dict(tables), str(folder)), f, protocol=pickle.HIGHEST_PROTOCOL)
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(self._payload.encode() + b"\n")
            self._proc.stdin.close()
        except BrokenPipeError:  # the worker died while importing: result() says why
            pass

    def result(self) -> list[Path]:
        """The paths written, once the worker is done; ``PlotError`` with its traceback when it failed."""
        assert self._proc.stdout is not None
        try:
            out = self._proc.stdout.read()  # stderr goes to a file: reading stdout alone cannot deadlock
            self._proc.wait()
        finally:
            self._discard_payload()
        if self._proc.returncode != 0:
            self._stderr.seek(0)
            detail = self._stderr.read().decode(errors="replace").strip()
            raise PlotError(f"drawing the plots failed (exit status {self._proc.returncode}):\n{detail}")
        return [Path(p) for p in json.loads(out)]

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        for pipe in (self._proc.stdin, self._proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()
        self._stderr.close()
        self._discard_payload()

    def _discard_payload(self) -> None:
        if self._payload is not None:
            Path(self._payload).unlink(missing_ok=True)
            self._payload = None

    def __enter__(self) -> BackgroundPlots:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main() -> int:
    try:
        from postprocess.plots import warm_up, write_plots  # the slow import, done while the parent works

        warm_up()
        payload = sys.stdin.readline().strip()
        if not payload:
            return 0
        with open(payload, "rb") as f:
            tables, folder = pickle.load(f)
        written = write_plots(tables, Path(folder))
    except Exception:
        traceback.print_exc()
        return 1
    sys.stdout.write(json.dumps([str(p) for p in written]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
