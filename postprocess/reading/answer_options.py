"""How many answer options a question has, and so its chance level.

Every row of the tidy frame carries ``n_options`` (the number of options of its question) and
``n_options_rule`` (which rule gave it). The first rule that gives a count decides:

1. ``"options file"``: an explicit ``--options-file`` (``vdg report``;
``postprocess.reading.lmms_eval_logs.read_options_file``),
   a CSV keyed by benchmark and question id, or by benchmark and task type, with an ``n_options``
   column. A question-keyed row wins over a task-type row. It overrides everything below: it is how
   a user corrects a count.
2. ``"record"``: the record's own count: vdg's samples logs log the options of the doc as the hooks
   see them (``n_options``; null when the doc has none), a prediction file gives ``n_options`` or
   the list of its ``options`` / ``candidates``.
3. ``"benchmark declares"``: the benchmark's declared count, ``KNOWN_OPTION_COUNTS``, only for
   benchmarks whose questions all have the same number of options (MVBench, LongVideoBench and
   others vary, so they are not listed).
4. ``"inferred per task type"``: the largest letter in the answer key and the replies of the
   question's (benchmark, task type), across every model and condition, with no floor (but at
   least ``MIN_OPTIONS``: one option is no choice). A task type is one kind of question, asked with
   one number of options, so its letters are pooled: a 5-option question nobody answered E reads 5
   when its task type's key or replies show E elsewhere, and 4 only when nothing in its task type
   shows E; a task type of 3-option questions (no key and no reply ever D) reads 3, not 4. A letter
   beyond a count that rule 1 or 2 gives its row is not evidence (it is no option there).

An answer letter beyond its question's count is not an answer: it is ``unparsed`` (scored wrong,
counted). Under rule 4 no letter is beyond the count, by construction. The chance level of a
question is ``1 / n_options``; of a set of questions, the mean of that over the set. The report's
first screen names every inferred count (the ``option_counts`` table).
"""

from __future__ import annotations

import re
from types import MappingProxyType

import numpy as np
import pandas as pd

from vdg_tasks.vocabulary.parse import LETTERS

#: Benchmarks whose every question has the same number of options (names compared lowercase,
#: without punctuation: ``Video-MME`` is ``videomme``).
KNOWN_OPTION_COUNTS = MappingProxyType(
    {
        "videomme": 4,
        "vdgsynth": 4,
        "egoschema": 5,
        "nextqa": 5,
        "perceptiontest": 3,
    }
)
#: The fewest options a question has (an inferred count is never below it).
MIN_OPTIONS = 2
#: The most options a question can have (one per letter of ``LETTERS``).
MAX_OPTIONS = len(LETTERS)
#: ``n_options_rule`` values, in precedence order (module docstring).
RULE_FILE = "options file"
RULE_RECORD = "record"
RULE_DECLARED = "benchmark declares"
RULE_INFERRED = "inferred per task type"
RULES: tuple[str, ...] = (RULE_FILE, RULE_RECORD, RULE_DECLARED, RULE_INFERRED)


def benchmark_key(name: str) -> str:
    """``Video-MME`` -> ``videomme``: the form ``KNOWN_OPTION_COUNTS`` is keyed by."""
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def declared_option_count(benchmark: str) -> int | None:
    """The benchmark's declared option count, or None when its questions vary or it is unknown."""
    return KNOWN_OPTION_COUNTS.get(benchmark_key(benchmark))


def declared_option_counts(benchmarks: pd.Series) -> pd.Series:
    """``declared_option_count`` of each value (looked up once per distinct benchmark); NaN where none."""
    lookup = {b: declared_option_count(str(b)) for b in benchmarks.unique()}
    return benchmarks.map({b: (np.nan if n is None else float(n)) for b, n in lookup.items()}).astype(float)


def letter_position(values: pd.Series) -> np.ndarray:
    """0-based position of each value in LETTERS (uppercase single letters only); -1 for anything else."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)  # any missing value (None, NaN, <NA>): -1
    lookup = np.array(
        [LETTERS.index(u) if isinstance(u, str) and len(u) == 1 and u in LETTERS else -1 for u in uniques] + [-1],
        dtype=np.int64,
    )
    return lookup[codes]


def inferred_option_counts(frame: pd.DataFrame, known: pd.Series | None = None) -> pd.Series:
    """Rule 4 per row: the largest letter in its (benchmark, task type)'s answer key and replies, at least
    ``MIN_OPTIONS`` (Int64). ``known``: the rows' counts from rules 1-3 (NA where none); a letter beyond a
    row's known count is not evidence."""
    if frame.empty:
        return pd.Series(dtype="Int64", index=frame.index)
    seen = np.maximum(letter_position(frame["answer"]), letter_position(frame["pred"])) + 1
    if known is not None:
        limit = known.to_numpy(dtype=float, na_value=np.inf)
        seen = np.where(seen > limit, 0, seen)
    task = frame["task_type"] if "task_type" in frame.columns else pd.Series("", index=frame.index)
    group = task_type_codes(frame["benchmark"], task)
    largest = np.zeros(int(group.max()) + 1, dtype=np.int64)
    np.maximum.at(largest, group, seen)
    return pd.Series(np.maximum(largest[group], MIN_OPTIONS), index=frame.index, dtype="Int64")


def task_type_codes(benchmark: pd.Series, task_type: pd.Series) -> np.ndarray:
    """One integer per distinct (benchmark, task type) of the rows (factorized: cheaper than grouping by text)."""
    b, _ = pd.factorize(benchmark, use_na_sentinel=False)
    t, tasks = pd.factorize(task_type, use_na_sentinel=False)
    return b.astype(np.int64) * max(len(tasks), 1) + t


def resolve_option_counts(frame: pd.DataFrame, file_counts: pd.Series | None = None) -> tuple[pd.Series, pd.Series]:
    """(n_options as Int64, n_options_rule as a categorical of ``RULES``) per row, by the module docstring's
    precedence. The record's own count is the frame's ``n_options`` (NA where the record gives none);
    ``file_counts`` the options file's count per row (NA where it names none; None: no options file)."""
    if "n_options" in frame.columns:
        counts = pd.to_numeric(frame["n_options"], errors="coerce").astype("Float64")
    else:
        counts = pd.Series(np.nan, index=frame.index, dtype="Float64")
    code = np.where(counts.notna().to_numpy(), RULES.index(RULE_RECORD), RULES.index(RULE_INFERRED)).astype(np.int8)
    if file_counts is not None:
        given = file_counts.notna().to_numpy()
        counts = counts.where(~given, file_counts.astype("Float64"))
        code[given] = RULES.index(RULE_FILE)
    if counts.isna().any():
        declared = declared_option_counts(frame["benchmark"]).astype("Float64")
        take = (counts.isna() & declared.notna()).to_numpy()
        counts = counts.where(~take, declared)
        code[take] = RULES.index(RULE_DECLARED)
    if counts.isna().any():
        counts = counts.fillna(inferred_option_counts(frame, counts).astype("Float64"))
    rules = pd.Series(pd.Categorical.from_codes(code, categories=list(RULES)), index=frame.index)
    return counts.round().astype("Int64"), rules


def option_counts(frame: pd.DataFrame) -> pd.Series:
    """Every row's option count (Int64): its ``n_options`` where the frame has it for every row (a frame
    ``postprocess.reading.lmms_eval_logs.load_frame`` built), else resolved by the module docstring's rules 2-4."""
    if "n_options" in frame.columns and frame["n_options"].notna().all():
        return pd.to_numeric(frame["n_options"]).round().astype("Int64")
    return resolve_option_counts(frame)[0]


def option_rules(frame: pd.DataFrame) -> pd.Series:
    """Every row's ``n_options_rule``: the frame's own where it has one for every row, else as
    ``option_counts`` resolves it (a count the frame holds without a rule is the record's)."""
    if "n_options_rule" in frame.columns and frame["n_options_rule"].notna().all():
        return frame["n_options_rule"]
    return resolve_option_counts(frame)[1]


def rule_codes(frame: pd.DataFrame) -> np.ndarray:
    """Every row's ``option_rules`` as its position in ``RULES`` (what ``rules_label`` reads)."""
    return np.asarray(pd.Categorical(option_rules(frame), categories=list(RULES)).codes)


def rules_label(codes: np.ndarray) -> str:
    """The rules (``rule_codes``) behind a set of questions' counts, in precedence order, joined by "; "."""
    return "; ".join(RULES[i] for i in np.unique(codes) if i >= 0)


def chance(n_options: pd.Series | np.ndarray) -> float:
    """Chance accuracy of a set of questions: the mean of 1 / n_options (NaN for an empty set)."""
    values = np.asarray(n_options, dtype=float)
    return float(np.mean(1.0 / values)) if values.size else float("nan")
