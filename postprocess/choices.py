"""How many answer options a question has, and so its chance level.

Every row of the tidy frame carries ``n_options``: the number of options of its question. The
first of these that exists decides:

1. the record itself: an ``n_options`` field, or the length of an ``options`` list (a prediction
   file; vdg's samples logs always log ``n_options``);
2. the benchmark's declared count, ``KNOWN_OPTION_COUNTS`` (benchmarks whose questions all have the
   same number of options; MVBench, LongVideoBench and others vary, so they are not listed);
3. inferred: the largest letter any model gave or the key holds for that question, under any
   condition, and at least ``MIN_INFERRED_OPTIONS``. A question whose largest seen letter is E has
   at least 5 options; a question whose letters are all A-C is read as having 4 (the usual
   minimum), so a benchmark with 2- or 3-option questions must declare them (rule 1 or 2).

An answer letter beyond its question's count is not an answer: it is ``unparsed`` (scored wrong,
counted). Under rule 3 no letter is beyond the count, by construction. The chance level of a
question is ``1 / n_options``; of a set of questions, the mean of that over the set.
"""

from __future__ import annotations

import re
from types import MappingProxyType

import numpy as np
import pandas as pd

from vdg_tasks.parse import LETTERS

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
#: The fewest options an inferred count (rule 3) gives.
MIN_INFERRED_OPTIONS = 4
#: The most options a question can have (one per letter of ``LETTERS``).
MAX_OPTIONS = len(LETTERS)


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


def inferred_option_counts(frame: pd.DataFrame) -> pd.Series:
    """Rule 3 per row: max(MIN_INFERRED_OPTIONS, largest letter seen for its (benchmark, question_id))."""
    if frame.empty:
        return pd.Series(dtype="Int64", index=frame.index)
    seen = np.maximum(letter_position(frame["answer"]), letter_position(frame["pred"])) + 1
    largest = pd.Series(seen, index=frame.index).groupby([frame["benchmark"], frame["question_id"]]).transform("max")
    return largest.clip(lower=MIN_INFERRED_OPTIONS).astype("Int64")


def option_counts(frame: pd.DataFrame) -> pd.Series:
    """Every row's option count (Int64): its ``n_options`` where known, else the benchmark's declared
    count, else inferred (module docstring)."""
    if "n_options" in frame.columns:
        known = pd.to_numeric(frame["n_options"], errors="coerce").astype("Float64")
    else:
        known = pd.Series(np.nan, index=frame.index, dtype="Float64")
    if known.isna().any():
        declared = declared_option_counts(frame["benchmark"]).astype("Float64")
        known = known.fillna(declared)
    if known.isna().any():
        known = known.fillna(inferred_option_counts(frame).astype("Float64"))
    return known.round().astype("Int64")


def chance(n_options: pd.Series | np.ndarray) -> float:
    """Chance accuracy of a set of questions: the mean of 1 / n_options (NaN for an empty set)."""
    values = np.asarray(n_options, dtype=float)
    return float(np.mean(1.0 / values)) if values.size else float("nan")
