"""What a report is computed from, and the one function that turns it into the tidy frame.

``ReportInputs`` holds everything ``vdg report`` takes besides its settings (``ReportSettings``): lmms-eval output
folders, prediction files, the ``--options-file`` counts, question sets to compare, ``vdg shortcuts``' scores,
the judge of open-ended answers and where a plain base-task run's task is declared. ``load_inputs`` reads them
into one frame: a plain run of a base task is read as its orig (``vdg_tasks.jobs.base_runs``), the named
question sets and the text-only scores ride in ``frame.attrs``, open answers are judged when a judge is named.
``vdg report``, ``vdg leaderboard`` and ``postprocess.build_report`` all call it, so a report is the same
whichever door it came in by; ``ReportInputs.described()`` is what report.json names as its inputs.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from postprocess.judge import judge_frame, make_judge
from postprocess.reading.files import samples_logs
from postprocess.reading.frame import SHORTCUT_FIELDS, with_named_sets, with_text_scores
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.reading.run_labels import RunDir, results_of
from postprocess.settings import ReportSettings
from vdg_tasks.data import question_sets
from vdg_tasks.vocabulary.conditions import OPEN_ANSWER
from vdg_tasks.vocabulary.record import OPEN_STATUS, holds_vdg_records
from vdg_tasks.vocabulary.untrusted import redact

__all__ = ["ReportInputs", "load_inputs", "read_named_sets", "read_shortcut_scores", "unjudged_benchmarks"]


def _strings(values: Iterable[Any] | str | os.PathLike[str]) -> tuple[str, ...]:
    """The values as strings; one path given alone is one value, not its characters."""
    if isinstance(values, (str, os.PathLike)):
        values = [values]
    return tuple(os.fspath(v) if isinstance(v, os.PathLike) else str(v) for v in values)


@dataclass(frozen=True)
class ReportInputs:
    """The inputs of one report (``vdg report``'s arguments other than its settings).

    ``runs``: lmms-eval ``--output_path`` folders (``NAME=DIR`` labels one); ``predictions``: (model, file) pairs;
    ``benchmark``: the benchmark of prediction files whose records do not name one; ``on_duplicate``: "error" or
    "last"; ``mixed_exports``: join runs of different exports of one benchmark; ``options_file``: a CSV of option
    counts; ``question_sets``: ``NAME=FILE`` (or ``FILE``, named by its stem) sets to compare beside every
    question; ``shortcuts``: ``vdg shortcuts``' shortcuts.csv files; ``judge``: "offline" or "api" to score
    open-ended answers (None: not judged); ``include_path`` and ``derived``: where a plain base-task run's task is
    declared (lmms-eval's task folder, ``vdg derive`` output folders).
    """

    runs: tuple[str, ...] = ()
    predictions: tuple[tuple[str, str], ...] = ()
    benchmark: str | None = None
    on_duplicate: Literal["error", "last"] = "error"
    mixed_exports: bool = False
    options_file: str | None = None
    question_sets: tuple[str, ...] = ()
    shortcuts: tuple[str, ...] = ()
    judge: Literal["offline", "api"] | None = None
    include_path: str | None = None
    derived: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # paths may come as Path objects and lists; kept as the strings report.json names
        object.__setattr__(self, "runs", _strings(self.runs))
        object.__setattr__(self, "predictions", tuple((str(m), str(p)) for m, p in self.predictions))
        object.__setattr__(self, "question_sets", _strings(self.question_sets))
        object.__setattr__(self, "shortcuts", _strings(self.shortcuts))
        object.__setattr__(self, "derived", _strings(self.derived))
        if self.options_file is not None:
            object.__setattr__(self, "options_file", str(self.options_file))
        if self.include_path is not None:
            object.__setattr__(self, "include_path", str(self.include_path))

    def described(self) -> dict[str, Any]:
        """The inputs as report.json names them."""
        return {
            "runs": list(self.runs),
            "predictions": [list(p) for p in self.predictions],
            "benchmark": self.benchmark,
            "on_duplicate": self.on_duplicate,
            "options_file": self.options_file,
            "question_sets": list(self.question_sets),
            "shortcuts": list(self.shortcuts),
        }


def read_named_sets(values: Iterable[str]) -> list[dict[str, object]]:
    """The question sets to compare, from ``NAME=FILE`` (or ``FILE``, named by its stem) values.

    Raises:
        ValueError: a file that cannot be read as a question set (the message names it), or two sets of one name.
    """
    out: list[dict[str, object]] = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep:
            name, path = Path(value).stem, value
        if not name or not path:
            raise ValueError(f"--question-set expects shared, per-model, NAME=FILE or FILE, got {value!r}")
        if not Path(path).is_file():
            raise ValueError(
                f"--question-set {value}: no such file (the rule is shared or per-model; a set to compare is NAME=FILE)"
            )
        chosen = question_sets.read(path)
        if any(s["name"] == name for s in out):
            raise ValueError(f"--question-set {value}: two sets are named {name!r}")
        out.append(
            {
                "name": name,
                "benchmark": chosen.benchmark,
                "ids": list(chosen.ids),
                "description": chosen.description or str(path),
                "source": str(path),
            }
        )
    return out


def read_shortcut_scores(paths: Iterable[str]) -> pd.DataFrame | None:
    """The rows of every ``vdg shortcuts`` shortcuts.csv of ``paths`` (None for none).

    Raises:
        ValueError: a file that cannot be read, lacks a column or holds a value of the wrong kind (named).
    """
    tables = []
    for path in paths:
        if not Path(path).is_file():
            raise ValueError(f"--shortcuts {path}: no such file (vdg shortcuts writes shortcuts.csv)")
        try:
            # every id and label as written ("null", "NA" and "1.0" are task types and ids, not missing or numbers)
            table = pd.read_csv(path, dtype=str, keep_default_na=False)
        except (OSError, ValueError) as exc:
            raise ValueError(f"--shortcuts {path}: unreadable ({' '.join(str(exc).split())})") from None
        missing = [c for c in SHORTCUT_FIELDS if c not in table.columns]
        if missing:
            raise ValueError(f"--shortcuts {path}: no {', '.join(missing)} column (a vdg shortcuts CSV)")
        try:
            table["n_options"] = table["n_options"].astype(int)
            table["s"] = table["s"].astype(float)
        except ValueError as exc:
            raise ValueError(f"--shortcuts {path}: {' '.join(str(exc).split())}") from None
        picked = table["picked"].map({"True": True, "False": False})
        if picked.isna().any():
            line = int(picked.isna().to_numpy().argmax()) + 2  # the header is line 1
            raise ValueError(f"--shortcuts {path}:{line}: picked is {table['picked'].iloc[line - 2]!r}, not True/False")
        tables.append(table.assign(picked=picked.astype(bool)))
    return pd.concat(tables, ignore_index=True) if tables else None


def unjudged_benchmarks(frame: pd.DataFrame) -> list[str]:
    """The benchmarks whose graded answers wait for the judge (status ``open`` under a condition asking the
    benchmark's own question)."""
    if "scoring" not in frame.columns:
        return []
    waiting = (frame["status"] == OPEN_STATUS) & (frame["scoring"] == "judge") & ~frame["condition"].isin(OPEN_ANSWER)
    return sorted(frame.loc[waiting, "benchmark"].astype(str).unique())


def _to_stderr(note: str) -> None:
    print(redact(f"vdg: {note}"), file=sys.stderr)


def _runs_as_orig(inputs: ReportInputs, work: Path, notify: Callable[[str], None]) -> list[RunDir]:
    """The runs to read: each plain run of a base task converted into its orig under ``work``."""
    runs = [RunDir.parse(text) for text in inputs.runs]
    logs = [(run.label, path) for run in runs for path in samples_logs(run.path)]
    if all(holds_vdg_records(path) for _, path in logs):
        return runs
    # the task side's reader of base-task runs (the hooks, PyAV; lmms-eval for the task's docs) only for a plain run
    from vdg_tasks.jobs.base_runs import as_orig

    converted, notes = as_orig(
        logs, results_of, work, include_path=inputs.include_path, derived=[Path(d) for d in inputs.derived]
    )
    for note in notes:
        notify(note)
    return [RunDir(path, label) for label, path in converted]


def load_inputs(
    inputs: ReportInputs, options: ReportSettings | None = None, notify: Callable[[str], None] = _to_stderr
) -> pd.DataFrame:
    """The tidy frame of ``inputs`` as ``vdg report`` reads it (``options.align`` decides how conditions holding
    different questions are joined); ``notify`` gets each line the reading has to say (default: stderr, as
    "vdg: ...", secrets redacted).

    Raises:
        ValueError: unreadable inputs (``postprocess.reading.lmms_eval_logs.LogError`` among them), or
        ``judge="api"`` with no
            endpoint configured.
        postprocess.judge.JudgeError: an answer could not be judged.
    """
    opts = ReportSettings() if options is None else options
    with tempfile.TemporaryDirectory(prefix="vdg-base-runs-") as work:
        frame = load_frame(
            runs=_runs_as_orig(inputs, Path(work), notify),
            predictions=inputs.predictions,
            benchmark=inputs.benchmark,
            on_duplicate=inputs.on_duplicate,
            mixed_exports=inputs.mixed_exports,
            align=opts.align,
            options_file=inputs.options_file,
        )
    sets = read_named_sets(inputs.question_sets)
    if sets:
        frame = with_named_sets(frame, sets)
    scores = read_shortcut_scores(inputs.shortcuts)
    if scores is not None:
        frame = with_text_scores(frame, scores)
    if inputs.judge:
        return judge_frame(frame, make_judge(inputs.judge))
    waiting = unjudged_benchmarks(frame)
    if waiting:
        notify(
            f"{', '.join(waiting)}: answers scored by vdg's judge are not judged, so these benchmarks have no VDG, "
            "ladder or accuracy; give --judge offline or --judge api"
        )
    return frame
