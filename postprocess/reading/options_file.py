"""``--options-file``: each question's number of options, overriding the records (``read_options_file``), and
the frame's option counts resolved with it."""

from __future__ import annotations

import csv
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from postprocess.reading.answer_options import (
    MAX_OPTIONS,
    MIN_OPTIONS,
    RULE_FILE,
    benchmark_key,
    letter_position,
    resolve_option_counts,
)
from postprocess.reading.files import LogError, per_distinct
from postprocess.reading.frame import graded_rows
from vdg_tasks.vocabulary.parse import LETTERS

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OptionsFile:
    """An ``--options-file``: option counts keyed by (benchmark, question id) or (benchmark, task type), the
    benchmark in ``benchmark_key`` form; ``lines`` the file line of each benchmark's first row."""

    path: Path
    by_question: dict[tuple[str, str], int]
    by_task_type: dict[tuple[str, str], int]
    lines: dict[str, int]

    def counts(self, frame: pd.DataFrame) -> pd.Series:
        """Per row of ``frame`` the file's count (Float64; <NA> where it names neither the question nor its
        task type): a question's own row wins over its task type's."""
        keys = per_distinct(frame["benchmark"].astype(str), benchmark_key, object).to_numpy()
        out = pd.Series(np.nan, index=frame.index, dtype="Float64")
        for table, column in ((self.by_task_type, "task_type"), (self.by_question, "question_id")):
            if table:
                index = pd.MultiIndex.from_arrays([keys, frame[column].astype(str).to_numpy()])
                given = pd.Series(table, dtype="Float64").reindex(index).to_numpy(dtype=float, na_value=np.nan)
                out = out.where(np.isnan(given), pd.array(given, dtype="Float64"))
        return out

    def check_benchmarks(self, benchmarks: pd.Series) -> None:
        """A row naming a benchmark no input holds is an error (a typo would silently leave its counts out)."""
        present = {benchmark_key(b) for b in benchmarks.astype(str).unique()}
        for key, line in self.lines.items():
            if key not in present:
                raise LogError(
                    f"{self.path}:{line}: benchmark {key!r} is in none of the inputs "
                    f"(they hold {', '.join(sorted(present))}; names compare lowercase, without punctuation)"
                )


def read_options_file(path: Path) -> OptionsFile:
    """Read an ``--options-file``: a CSV with columns ``benchmark``, ``n_options`` and ``question_id`` and/or
    ``task_type``; each row fills one of the last two (a question, or every question of a task type).

    Raises:
        LogError: naming the file and line: a missing column, an empty benchmark, a row with neither or both
            of question_id and task_type, an n_options that is not an integer from 2 to 8, or a question (or
            task type) of a benchmark in two rows.
    """
    if not path.is_file():
        raise LogError(f"{path}: no such options file")
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = [str(c).strip() for c in reader.fieldnames or []]
        for column in ("benchmark", "n_options"):
            if column not in header:
                raise LogError(
                    f"{path}:1: no {column!r} column (an options file has benchmark, question_id or task_type, "
                    f"and n_options; it has {', '.join(header) or 'no header'})"
                )
        if "question_id" not in header and "task_type" not in header:
            raise LogError(f"{path}:1: neither a 'question_id' nor a 'task_type' column: say what each count is for")
        reader.fieldnames = header
        tables: dict[str, dict[tuple[str, str], int]] = {"question_id": {}, "task_type": {}}
        seen: dict[tuple[str, str, str], int] = {}
        lines: dict[str, int] = {}
        for row in reader:
            line = reader.line_num
            value = {k: str(v or "").strip() for k, v in row.items() if k is not None}
            bench = benchmark_key(value["benchmark"])
            if not bench:
                raise LogError(f"{path}:{line}: the benchmark is empty")
            keyed = [k for k in ("question_id", "task_type") if value.get(k, "")]
            if len(keyed) != 1:
                raise LogError(f"{path}:{line}: give a question_id or a task_type (one of them), not {len(keyed)}")
            text = value["n_options"]
            n = int(float(text)) if re.fullmatch(r"\d+(\.0*)?", text) else -1
            if not MIN_OPTIONS <= n <= MAX_OPTIONS:
                raise LogError(
                    f"{path}:{line}: n_options {text!r} is not a number of options from {MIN_OPTIONS} to {MAX_OPTIONS}"
                )
            column = keyed[0]
            key = (bench, value[column])
            if (column, *key) in seen:
                what = "question" if column == "question_id" else "task type"
                raise LogError(
                    f"{path}:{line}: {what} {key[1]!r} of {value['benchmark']} is given twice "
                    f"(lines {seen[(column, *key)]} and {line})"
                )
            seen[(column, *key)] = line
            lines.setdefault(bench, line)
            tables[column][key] = n
    return OptionsFile(path, tables["question_id"], tables["task_type"], lines)


def resolve_options(frame: pd.DataFrame, options_file: OptionsFile | None = None) -> pd.DataFrame:
    """Fill every row's n_options and n_options_rule (``postprocess.reading.answer_options``), refuse an answer key
    beyond
    the count, and make an ``ok`` answer whose letter is not one of its question's options ``unparsed``
    (scored wrong)."""
    file_counts = None if options_file is None else options_file.counts(frame)
    frame["n_options"], frame["n_options_rule"] = resolve_option_counts(frame, file_counts)
    n = frame["n_options"].to_numpy(dtype=np.int64)
    key = letter_position(frame["answer"])
    lettered = ~graded_rows(frame)  # a graded answer's key is the reference answer itself, and it has no letter
    bad_key = ((key < 0) | (key >= n)) & (frame["status"] != "error").to_numpy() & lettered  # no key: an error row
    if bad_key.any():
        row = frame.iloc[int(np.flatnonzero(bad_key)[0])]
        where = (
            f"its row in {options_file.path}" if row["n_options_rule"] == RULE_FILE else "its n_options / options field"
        )
        raise LogError(
            f"{row['source']}: the answer key {row['answer']!r} is not one of the question's {row['n_options']} "
            f"option letters ({LETTERS[0]}-{LETTERS[min(int(row['n_options']), MAX_OPTIONS) - 1]}; n_options from "
            "the rule "
            f"'{row['n_options_rule']}'); check {where} or the benchmark (--benchmark)"
        )
    pred = letter_position(frame["pred"])
    outside = (frame["status"] == "ok").to_numpy() & ((pred < 0) | (pred >= n)) & lettered
    if outside.any():
        frame["pred"] = frame["pred"].astype(object).where(~outside, None)
        frame["status"] = frame["status"].astype(object).where(~outside, "unparsed")
        frame["correct"] = frame["correct"].where(~outside, False)
        first = frame.iloc[int(np.flatnonzero(outside)[0])]
        logger.info(
            "%d answers name a letter outside their question's options and count as unparsed (first: %s)",
            int(outside.sum()),
            first["source"],
        )
    return frame
