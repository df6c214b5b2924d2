"""Tables -> files (CSV, report.md, report.html, report.json, plots): computing the tables into an output
folder and writing the report there.

Every number comes from an analysis (``postprocess.analyses.ANALYSES``). The pages are rendered by
``postprocess.rendering.pages`` (values formatted by ``postprocess.rendering.formatting``): it knows a few headline
tables
by name (``postprocess.rendering.sections.HEADLINE``) and renders any other table generically from its declared
columns, so a new analysis appears in the HTML and JSON reports without a change there, and an absent
or empty table is simply skipped.

Files written by ``write_report(tables, out)``:

- ``<name>.csv`` per table (NaN as an empty cell, infinity as ``inf``); a skipped table (its
  analysis could not run on the data) has the header only
- ``report.md``: first the summary (per model: Overall VDG with CI, tier, every flag) and what was
  skipped, then the headline tables, each under a sentence stating its conventions; a group of
  sections (``Section.group``: the character-tracking tables) sits under one heading (``GROUPS``)
  with a sentence saying what the group asks. The open-ended section names its judge (an offline
  scorer is called what it is: token overlap, not an LLM judge); the ``judge`` column carries the
  label into the CSV and report.json too
- ``report.html``: one self-contained page (inline CSS, plots as base64 PNG, no script): the
  summary, then every table, headline first
- ``report.json``: ``{"format": ..., "options": {...}, "inputs": {..., "files": [...]}, "summary":
  [...], "skipped": [...], "tables": {name: {"description", "columns": {column: description},
  "skipped", "n_rows", "rows": [{column: value}]}}}``; NaN and missing values are ``null``, +/-
  infinity the strings ``"inf"`` / ``"-inf"``
- ``plots/*.png`` (see ``postprocess.rendering.plots``)

``write_report`` writes into a new folder beside ``out`` and moves it into place only when every
file is written, so ``out`` never holds a mix of two runs: a previous report there is replaced
whole, and a folder holding anything but report files is refused. ``compute_tables(frame,
options, out)`` keeps each CSV it computes in ``.<out>.partial`` beside ``out`` until then, so a
crash loses nothing.
"""

from __future__ import annotations

import contextlib
import glob
import multiprocessing as mp
import os
import re
import shutil
import signal
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

import postprocess.analyses as _analyses
from postprocess.analyses.base import ReportSettings
from postprocess.parallel import can_fork, cpus
from postprocess.rendering.pages import html_layout, html_with_plots, markdown_layout, markdown_with_plots, render_json
from postprocess.rendering.plots import write_plots

#: Version of the report.json layout.

# ---------------------------------------------------------------------------------------- writing


def write_csv(table: pd.DataFrame, path: Path) -> None:
    table.to_csv(path, index=False)


class ReportError(ValueError):
    """The report cannot be written where asked (``--out``), with the path that says why."""


#: What a report folder holds; an existing ``--out`` holding anything else is never replaced.
_REPORT_FILES = frozenset({"report.md", "report.html", "report.json"})


#: The rule ``_check_out`` applies, as its refusal states it.
_REPORT_RULE = (
    "a report folder holds report.md, report.html, report.json, <table>.csv and in plots/ only the PNGs its "
    "report.md shows"
)


def _shown_plots(out: Path) -> set[str]:
    """The plots/ files the report.md in ``out`` shows (``![name](plots/<file>)``)."""
    try:
        text = (out / "report.md").read_text(errors="replace")
    except OSError:
        return set()
    return set(re.findall(r"\]\(plots/([^)/]+)\)", text))


def _foreign_entries(out: Path) -> list[str]:
    """What in ``out`` a previous report did not write (``_REPORT_RULE``), as paths relative to it."""
    foreign = []
    for path in sorted(out.iterdir()):
        if path.name == "plots" and path.is_dir() and not path.is_symlink():
            shown = _shown_plots(out)
            foreign += [
                f"plots/{p.name}"
                for p in sorted(path.iterdir())
                if not (p.suffix == ".png" and p.is_file() and not p.is_symlink() and p.name in shown)
            ]
        elif not (path.is_file() and (path.name in _REPORT_FILES or path.suffix == ".csv")):
            foreign.append(path.name)
    return foreign


def _check_out(out: Path) -> None:
    """``out`` is new, or a folder a previous report wrote (only CSVs, report.*, plots/*.png): safe to replace."""
    if out.parent == out or not out.name:
        raise ReportError(f"--out {out}: give a folder to write the report into, not a filesystem root")
    if not out.exists() and not out.is_symlink():
        _check_parent(out)
        return
    if out.is_symlink() or not out.is_dir():
        raise ReportError(f"--out {out}: exists and is not a folder; choose a new folder")
    foreign = _foreign_entries(out)
    if foreign:
        raise ReportError(
            f"--out {out}: holds files that are not part of a vdg report ({', '.join(foreign[:3])}"
            f"{', ...' if len(foreign) > 3 else ''}): {_REPORT_RULE}; the report replaces its folder whole, so "
            "choose a new or empty folder"
        )


def _check_parent(out: Path) -> None:
    """The nearest existing folder above a new ``out`` is a folder this process may write in."""
    above = out.parent
    while not above.exists() and not above.is_symlink() and above.parent != above:
        above = above.parent
    if not above.is_dir():
        raise ReportError(f"--out {out}: {above} is a file, not a folder, so no folder can be made under it")
    if not os.access(above, os.W_OK | os.X_OK):
        raise ReportError(f"--out {out}: the folder {above} is not writable (permission denied); choose another --out")


def _made(folder: Path, out: Path, parents: bool = False) -> None:
    """``folder.mkdir``, an OS refusal (a file in the way, no permission, a full disk) as a ``ReportError``."""
    try:
        folder.mkdir(parents=parents, exist_ok=parents)
    except OSError as exc:
        raise ReportError(f"--out {out}: cannot create {folder} ({exc.strerror or exc})") from None


def partial_dir(out: Path) -> Path:
    """Where ``compute_tables`` keeps the CSVs it has computed until ``write_report`` moves a report into ``out``."""
    out = Path(out).absolute()
    return out.with_name(f".{out.name}.partial")


def compute_tables(
    frame: pd.DataFrame,
    options: ReportSettings = ReportSettings(),
    out: Path | None = None,
    names: Sequence[str] | None = None,
    on_table: Callable[[str, pd.DataFrame], None] | None = None,
    first: Sequence[str] = (),
    workers: int | None = None,
) -> dict[str, pd.DataFrame]:
    """``run_all`` (``on_table(name, table)`` as each table is computed, ``first`` computed first, in
    ``worker_count(frame, workers)`` processes); with ``out``, first checks the report may be written there,
    and keeps each CSV in ``partial_dir(out)`` as soon as it is computed, by the process that computed it
    (never in ``out`` itself), so a crash loses nothing. ``write_report(..., kept=True)`` moves those CSVs
    into the report instead of writing them again."""
    _analyses.check_registry()  # before the staging folder is made
    if out is None:
        return _analyses.run_all(frame, options, names, on_table=on_table, first=first, workers=workers)
    out = Path(out).absolute()
    _check_out(out)
    staging = partial_dir(out)
    shutil.rmtree(staging, ignore_errors=True)
    _made(staging.parent, out, parents=True)
    _made(staging, out)
    kept: dict[str, tuple[Path, pd.DataFrame]] = {}

    def keep(name: str, table: pd.DataFrame) -> None:
        kept[name] = (staging / f"{name}.csv", table)  # this process's copy of what the CSV holds
        if on_table is not None:
            on_table(name, table)

    def write(name: str, table: pd.DataFrame) -> None:
        # Whole or not at all: a worker that died and the report process recomputing its table may both write.
        partial = staging / f".{name}.{os.getpid()}.tmp"
        write_csv(table, partial)
        os.replace(partial, staging / f"{name}.csv")

    tables = _analyses.run_all(frame, options, names, on_table=keep, first=first, workers=workers, on_computed=write)
    return ComputedTables(tables, kept)


class ComputedTables(dict[str, pd.DataFrame]):
    """``compute_tables(..., out)``'s tables (a dict: name -> table), and ``kept``: name -> (the CSV it
    kept, the table that CSV holds), so that ``write_report`` moves a CSV only for that very table."""

    def __init__(self, tables: Mapping[str, pd.DataFrame], kept: Mapping[str, tuple[Path, pd.DataFrame]]):
        super().__init__(tables)
        self.kept = dict(kept)


def _write_table(name: str, table: pd.DataFrame, path: Path, kept: Mapping[str, tuple[Path, pd.DataFrame]]) -> None:
    """``path`` <- the CSV ``compute_tables`` kept for this very table when there is one, else written anew."""
    csv, held = kept.get(name, (None, None))
    if csv is not None and held is table and csv.is_file():
        os.replace(csv, path)
    else:
        write_csv(table, path)


class WrittenReport(str):
    """``write_report``'s result: the markdown (a ``str``), with ``path``, the folder the report is in."""

    path: Path

    def __new__(cls, markdown: str, path: Path) -> WrittenReport:
        obj = super().__new__(cls, markdown)
        obj.path = path
        return obj

    @property
    def markdown(self) -> str:
        return str(self)


def _write_json(tables: Mapping[str, pd.DataFrame], options: ReportSettings | None, inputs: Any, path: Path) -> None:
    # orjson: several times json.dumps' speed on a large report; render_json has already made every NaN a null.
    path.write_bytes(orjson.dumps(render_json(tables, options, inputs)) + b"\n")


class _JsonWriter:
    """report.json written by a forked process while this one lays out the markdown and HTML (a large report:
    from ``PARALLEL_TABLE_ROWS`` table rows on, where processes are forked), else here; ``join`` waits for it. A
    child that fails leaves the file to this process, so any error is raised here, with its traceback."""

    def __init__(
        self, tables: Mapping[str, pd.DataFrame], options: ReportSettings | None, inputs: Any, path: Path
    ) -> None:
        self._args = (tables, options, inputs, path)
        self._child: Any = None
        if can_fork() and cpus() > 1 and sum(len(t) for t in tables.values()) >= PARALLEL_TABLE_ROWS:
            child = mp.get_context("fork").Process(target=_write_json, args=self._args, name="vdg-report-json")
            try:
                child.start()
                self._child = child
            except OSError:  # no process to be had (out of memory, say): written here
                pass
        if self._child is None:
            _write_json(*self._args)

    def join(self) -> None:
        if self._child is not None:
            self._child.join()
            if self._child.exitcode != 0:
                _write_json(*self._args)


#: From this many rows in all the tables on, ``write_report`` writes report.json in a second process: the size
#: from which the analyses are spread over processes too.
PARALLEL_TABLE_ROWS = _analyses.PARALLEL_ROWS


def _write_files(
    tables: Mapping[str, pd.DataFrame],
    folder: Path,
    options: ReportSettings | None,
    inputs: Mapping[str, Any] | None,
    plots: bool,
    kept: Mapping[str, tuple[Path, pd.DataFrame]],
) -> str:
    for name, table in tables.items():
        _write_table(name, table, folder / f"{name}.csv", kept)
    json_writer = _JsonWriter(tables, options, inputs, folder / "report.json")
    markdown, page = markdown_layout(tables), html_layout(tables)  # while report.json is written
    json_writer.join()
    written = write_plots(tables, folder / "plots") if plots else []
    text = markdown_with_plots(markdown, written)
    (folder / "report.md").write_text(text)
    (folder / "report.html").write_text(html_with_plots(page, written))
    return text


# Only .new: a killed run's .old may be the one copy of the previous report (killed between the two renames).
_LEFTOVER = r"\.{name}\.(?P<pid>\d+)-[0-9a-f]+\.new"
#: Signals that remove the folder being written (``kill``'s default and Ctrl-C).
CLEANUP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def sweep_leftovers(out: Path) -> list[Path]:
    """Remove the ``.<out>.<pid>-<hex>.new`` folders beside ``out`` of processes no longer running
    (a ``vdg report`` killed before it could clean up); the folders removed."""
    out = Path(out).absolute()
    pattern = re.compile(_LEFTOVER.format(name=re.escape(out.name)))
    removed = []
    for path in out.parent.glob(f".{glob.escape(out.name)}.*"):
        match = pattern.fullmatch(path.name)
        if match and path.is_dir() and not path.is_symlink() and not _alive(int(match["pid"])):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


@contextlib.contextmanager
def _removed_on_signal(folder: Path) -> Iterator[None]:
    """While the report is written into ``folder``: SIGTERM / SIGINT remove it, then act as they did before (the
    previous handlers are restored on the way out, and before the signal is raised again)."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in CLEANUP_SIGNALS}

    def restore() -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)

    def remove(signum: int, frame: Any) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        restore()
        signal.raise_signal(signum)  # the previous handler's turn: KeyboardInterrupt, exit, ...

    for signum in CLEANUP_SIGNALS:
        signal.signal(signum, remove)
    try:
        yield
    finally:
        restore()


def write_report(
    tables: Mapping[str, pd.DataFrame],
    out: Path,
    *,
    options: ReportSettings | None = None,
    inputs: Mapping[str, Any] | None = None,
    plots: bool = True,
    kept: bool = False,
) -> WrittenReport:
    """Write every table as CSV plus report.md/.html/.json and plots/*.png into ``out``; return the markdown
    (``.path``: the report's folder, absolute). ``plots``: False for none. ``kept``:
    the tables are ``compute_tables(..., out)``'s, not modified since (as in ``vdg report``): the CSVs it kept
    are moved into the report rather than written again (a table it did not keep is written).

    Everything is written into a new folder beside ``out`` first and moved into place at the end, so
    ``out`` holds one complete report or what it held before: a previous report there is replaced
    whole; a folder with other files in it is refused (``ReportError``) before anything is written.
    """
    out = Path(out).absolute()
    _check_out(out)
    _made(out.parent, out, parents=True)
    sweep_leftovers(out)
    fresh = out.with_name(f".{out.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.new")
    _made(fresh, out)
    try:
        with _removed_on_signal(fresh):
            reuse = tables.kept if kept and isinstance(tables, ComputedTables) else {}
            markdown = _write_files(tables, fresh, options, inputs, plots, reuse)
    except BaseException as exc:
        if fresh.exists():
            exc.add_note(f"vdg: the report files written so far are in {fresh}; {out} is untouched")
        raise
    old = out.with_name(f".{out.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.old")
    if out.exists():
        out.rename(old)
    try:
        fresh.rename(out)
    except BaseException:
        if old.exists():
            old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(partial_dir(out), ignore_errors=True)
    return WrittenReport(markdown, out)
