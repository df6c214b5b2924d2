"""Analyses: tidy frame in, tidy frames out, each with declared columns.

``ANALYSES`` lists every table computed from the frame, in report order; ``DIGESTS`` the tables
computed from those (what was skipped, the first-screen summary); ``TABLES`` is both, every table
the report writes. ``run_all`` computes them all.

Free-text answers (the ``open`` condition of the character-tracking protocol: status ``open``, no
letter, no ``correct`` flag) are read by the tracking analyses alone (``FULL_FRAME``): every other
analysis gets ``multiple_choice_frame(frame)``, the frame without each (model, benchmark, condition)
that holds an ``open`` row (its error rows included), so their question sets and conditions are
those of multiple-choice answers only. The digests (``skipped``, ``summary``) get the whole frame.

One rule for an analysis that cannot run on the data (it raises ``ValueError``: a letter that is no
option, a question with no video for ``group_by``...): it is *skipped*. Its table is written with
the header only and marked with the reason (``base.skip_reason``), the ``skipped`` table and the
report say why, and every other table is still computed. Any other exception is a bug and stops
the run.

From ``PARALLEL_ROWS`` rows on, the analyses run in forked worker processes (``worker_count``), which
inherit the frame rather than receive a copy; the tables are the same as in one process, in the same order.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pandas as pd

from postprocess.analyses import collective, findings, selection, skipped, summary, tracking
from postprocess.analyses.base import Analysis, Digest, ReportSettings, skip_reason
from postprocess.analyses.base import skipped as skipped_table
from postprocess.analyses.registry import CORE, ENTRY_POINT_GROUP, MODULES_ENV, declared
from postprocess.parallel import can_fork, cpus
from postprocess.reading.frame import UNREAD_BY_CHOICES
from postprocess.settings import natural_key
from vdg_tasks.vocabulary.record import OPEN_STATUS

logger = logging.getLogger(__name__)

#: Tables computed from the others, after them, in this order (``summary`` reads ``skipped``; ``findings`` reads
#: the analyses' tables).
DIGESTS: tuple[Digest, ...] = (*selection.DIGESTS, *skipped.DIGESTS, *summary.DIGESTS, *findings.DIGESTS)
#: Every analysis: vdg's own, then those of the modules named in $VDG_ANALYSES or entry points of group
#: vdg.analyses; and why any of theirs was left out (``run_all`` refuses to run with one).
ANALYSES, REGISTRY_PROBLEMS = declared(CORE, reserved=[d.name for d in DIGESTS])
#: The tables of the named modules' analyses (what they raise skips their table, whatever it is).
THEIRS: frozenset[str] = frozenset(a.name for a in ANALYSES[len(CORE) :])
#: Every table the report writes.
TABLES: tuple[Analysis | Digest, ...] = (*ANALYSES, *DIGESTS)
#: Analyses given the whole frame, free-text (``open``) answers included; the others never see them.
FULL_FRAME: frozenset[str] = frozenset(a.name for a in tracking.ANALYSES)


#: Analyses given every column of the multiple-choice frame: collective accuracy groups questions by the column
#: ``--group-by`` names, and its messages name a row's source and the frame's columns.
EVERY_COLUMN: frozenset[str] = frozenset(a.name for a in collective.ANALYSES)


def _choices_columns(choices: pd.DataFrame, options: ReportSettings) -> pd.DataFrame:
    """``choices`` without the columns no multiple-choice analysis reads
    (``postprocess.reading.frame.UNREAD_BY_CHOICES``,
    from each column's declaration; those ``--by`` names kept); ``attrs`` are kept."""
    unread = [c for c in UNREAD_BY_CHOICES if c in choices.columns and c not in options.by]
    out = choices.drop(columns=unread)
    out.attrs = dict(choices.attrs)
    return out


def multiple_choice_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without its free-text cells: every (model, benchmark, condition) holding a status-``open``
    row, with all its rows (errors too). The frame itself when it has none; ``attrs`` are kept."""
    if "status" not in frame.columns or not (frame["status"] == OPEN_STATUS).any():
        return frame
    keys = ["model", "benchmark", "condition"]
    cells = pd.MultiIndex.from_frame(frame.loc[frame["status"] == OPEN_STATUS, keys].drop_duplicates())
    out = frame[~pd.MultiIndex.from_frame(frame[keys]).isin(cells)]
    out.attrs = dict(frame.attrs)
    return out


def skip_sentence(exc: BaseException) -> str:
    """The reason an analysis was skipped, as one sentence (whitespace collapsed, a final period)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if text.endswith((".", "?", "!")) else text + "."


def check_registry() -> None:
    """Refuse to compute with analyses of a named module left out (``REGISTRY_PROBLEMS``), before anything is read.

    Raises:
        ValueError: naming each module and why.
    """
    if REGISTRY_PROBLEMS:
        raise ValueError(
            f"the analyses named in ${MODULES_ENV} or entry points of {ENTRY_POINT_GROUP} cannot all be read: "
            + "; ".join(REGISTRY_PROBLEMS)
        )


def _guarded(columns: Mapping[str, str], compute: Callable[[], pd.DataFrame], theirs: bool = False) -> pd.DataFrame:
    """``compute()``'s table, or the table skipped with why: the data cannot support it (``ValueError``), or, for an
    analysis of a user's module (``theirs``), whatever it raised."""
    try:
        return in_label_order(compute())
    except ValueError as exc:  # the data cannot support this analysis: skip it, say why
        return skipped_table(columns, skip_sentence(exc))
    except Exception as exc:
        if not theirs:
            raise
        reason = f"an analysis of a module named in ${MODULES_ENV} failed: {type(exc).__name__}: {exc}"
        return skipped_table(columns, skip_sentence(ValueError(reason)))


#: The columns holding model labels, in the order rows are sorted by them.
LABEL_COLUMNS = ("model", "model_a", "model_b")


def in_label_order(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its rows in natural label order (``m@8f`` before ``m@16f``), every other order kept: a
    stable sort on the label columns only."""
    by = [column for column in LABEL_COLUMNS if column in table.columns]
    if not by or len(table) < 2:
        return table
    ordered = table.sort_values(by, kind="stable", key=lambda labels: labels.map(natural_key))
    return ordered.reset_index(drop=True) if isinstance(table.index, pd.RangeIndex) else ordered


#: From this many rows on, ``run_all`` computes the analyses in parallel worker processes.
PARALLEL_ROWS = 20_000
#: At most this many workers: each holds its own copy of the intermediates (and, as pages are touched, of the frame).
MAX_WORKERS = 4
#: What forked workers compute from: the analyses by name, the frames (whole, multiple-choice, multiple-choice
#: without ``UNREAD_BY_CHOICES``), the options (inherited, never pickled).
_WORK: (
    tuple[
        dict[str, Analysis],
        pd.DataFrame,
        pd.DataFrame,
        pd.DataFrame,
        ReportSettings,
        Callable[[str, pd.DataFrame], None] | None,
    ]
    | None
) = None


def worker_count(frame: pd.DataFrame, workers: int | None = None) -> int:
    """Processes ``run_all`` uses where processes can be forked (else 1, this one): ``workers`` when given,
    else one per CPU (at most ``MAX_WORKERS``) from ``PARALLEL_ROWS`` rows on, else 1."""
    if not can_fork():
        return 1
    if workers is not None:
        return max(1, int(workers))
    if len(frame) < PARALLEL_ROWS:
        return 1
    return min(cpus(), MAX_WORKERS)


def _run_one(name: str) -> pd.DataFrame:
    """One analysis of ``_WORK`` (set by ``_run_analyses``, in this process or inherited by a forked worker)."""
    assert _WORK is not None, "_run_one runs inside _run_analyses"
    analyses, frame, choices, read_columns, options, on_computed = _WORK
    analysis = analyses[name]
    data = frame if name in FULL_FRAME else choices if name in EVERY_COLUMN else read_columns
    table = _guarded(analysis.columns, lambda: analysis.run(data, options), theirs=name in THEIRS)
    if on_computed is not None:
        on_computed(name, table)
    return table


def _run_task(names: tuple[str, ...]) -> list[pd.DataFrame]:
    """The tables of one task of ``_tasks``, computed one after another in this process."""
    return [_run_one(name) for name in names]


def _tasks(analyses: Mapping[str, Analysis]) -> list[tuple[str, ...]]:
    """``analyses`` as worker tasks: those sharing an intermediate (``Analysis.shares``), directly or through
    others, form one task, so that one process computes it once; tasks in the order of their first analysis,
    and each task's analyses in the given order."""
    position = {name: i for i, name in enumerate(analyses)}
    tasks: list[list[str]] = []
    owner: dict[Callable[..., Any], list[str]] = {}  # intermediate -> the task computing it
    for name, analysis in analyses.items():
        linked: list[list[str]] = []
        for task in (owner[shared] for shared in analysis.shares if shared in owner):
            if all(task is not seen for seen in linked):
                linked.append(task)
        if not linked:
            linked.append([])
            tasks.append(linked[0])
        into = linked[0]
        for other in linked[1:]:  # this analysis links two tasks: one task from now on
            into += other
            other.clear()
            owner.update((shared, into) for shared, task in list(owner.items()) if task is other)
        into.append(name)
        owner.update(dict.fromkeys(analysis.shares, into))
    ordered = [tuple(sorted(task, key=position.__getitem__)) for task in tasks if task]
    return sorted(ordered, key=lambda task: position[task[0]])


def _run_analyses(
    analyses: dict[str, Analysis],
    frame: pd.DataFrame,
    choices: pd.DataFrame,
    options: ReportSettings,
    workers: int,
    on_computed: Callable[[str, pd.DataFrame], None] | None = None,
) -> Iterator[tuple[str, pd.DataFrame]]:
    """(name, table) of every analysis, in order; computed by ``workers`` forked processes when more than one,
    each taking one task of ``_tasks`` at a time.

    A worker that dies (killed for memory, say) costs time, not the report: what it had not returned is
    computed in this process.
    """
    global _WORK
    _WORK = (analyses, frame, choices, _choices_columns(choices, options), options, on_computed)
    try:
        tasks = _tasks(analyses)
        if workers < 2 or len(tasks) < 2:
            for name in analyses:
                yield name, _run_one(name)
            return
        pool = ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=mp.get_context("fork"))
        try:
            futures = {task: pool.submit(_run_task, task) for task in tasks}
            done: dict[str, pd.DataFrame] = {}
            for name in analyses:
                task = next(task for task in futures if name in task)
                if name not in done:
                    try:
                        tables = futures[task].result()
                    except BrokenProcessPool:
                        logger.warning("an analysis worker died; computing %s in the report's own process", task)
                        tables = _run_task(task)
                    done.update(zip(task, tables, strict=True))
                yield name, done.pop(name)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    finally:
        _WORK = None


def run_all(
    frame: pd.DataFrame,
    options: ReportSettings = ReportSettings(),
    names: Sequence[str] | None = None,
    on_table: Callable[[str, pd.DataFrame], None] | None = None,
    workers: int | None = None,
    first: Sequence[str] = (),
    on_computed: Callable[[str, pd.DataFrame], None] | None = None,
) -> dict[str, pd.DataFrame]:
    """Every table of ``TABLES`` (only ``names`` when given) in that order, by name.

    Each table has exactly its declared columns (possibly no rows). An analysis that raises
    ``ValueError`` is skipped (module docstring): its table is empty and ``skip_reason(table)``
    says why. ``on_table(name, table)`` is called as soon as a table is computed; the analyses named
    in ``first`` are computed before the others, then those
    needing two or more models (``min_models`` > 1, mostly pairwise: the longest). Only the ``FULL_FRAME``
    analyses and the digests see free-text (``open``) answers. The analyses run in
    ``worker_count(frame, workers)`` processes; every table is the same whatever that number or order.
    ``on_computed(name, table)`` is called in the process that computed the table (a forked worker, or
    this one) before it is handed back: writing each table there spreads the writing over the workers.
    """
    check_registry()
    computed: dict[str, pd.DataFrame] = {}

    def keep(name: str, table: pd.DataFrame) -> None:
        computed[name] = table
        if on_table is not None:
            on_table(name, table)

    frame = selection.select(frame, options)  # --task-types, --min-n; checks --by
    choices = multiple_choice_frame(frame)
    wanted = {
        analysis.name: analysis
        for analysis in (*ANALYSES, *selection.by_field_analyses(options))  # --by: <analysis>_by_<field>
        if names is None or analysis.name in names
    }
    early = {name: wanted[name] for name in first if name in wanted}
    # Then the tables that need two or more models (mostly model pairs, whose cost grows with the square of the
    # models): the longest tasks start first, so that no worker is left with one when the others are done.
    pairwise = {name: analysis for name, analysis in wanted.items() if analysis.min_models > 1}
    count = worker_count(frame, workers)
    for name, table in _run_analyses({**early, **pairwise, **wanted}, frame, choices, options, count, on_computed):
        keep(name, table)
    tables = {name: computed[name] for name in wanted}  # declared order, whatever the order computed
    for digest in DIGESTS:
        if names is None or digest.name in names:
            table = _guarded(digest.columns, lambda d=digest: d.run(tables, frame, options, ANALYSES))
            if on_computed is not None:
                on_computed(digest.name, table)
            keep(digest.name, table)
            tables[digest.name] = computed[digest.name]
    return tables


__all__ = [
    "ANALYSES",
    "DIGESTS",
    "EVERY_COLUMN",
    "FULL_FRAME",
    "REGISTRY_PROBLEMS",
    "check_registry",
    "TABLES",
    "UNREAD_BY_CHOICES",
    "Analysis",
    "Digest",
    "ReportSettings",
    "multiple_choice_frame",
    "run_all",
    "skip_reason",
    "worker_count",
]
