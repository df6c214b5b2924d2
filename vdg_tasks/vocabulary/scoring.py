"""How a reply becomes a question's score in [0, 1], declared once.

A multiple-choice question is scored by its letter (``letter``): 1 when the letter read is the answer, else 0, so
its ``score`` equals ``correct``. A question without options is *graded*:

- ``judge``: a free-text reply, scored after the run by vdg's judge (``postprocess.judge``, offline or through an
  OpenAI-compatible endpoint) on {0, 0.5, 1}, taken as it is;
- ``metric:<key>``: the base task's own per-question metric ``<key>`` (its ``process_results``, run offline),
  taken as it is; a value outside [0, 1] or not a number is an ``error`` row naming it;
- ``mean:<key>``: a metric that is a mean over questions (a mean IoU or a mean AP), whose value the base computes
  only in its aggregation: the base's own aggregation of ``<key>`` over this one question, taken as it is
  (``mean:<key>/100``: an aggregation in percent, divided by 100); the same range check.

VDG, the ladder and their paired CIs are computed on ``score``; the tables on correctness (McNemar, accuracy,
compression flips, the outcome categories) count a graded question as correct when ``score >= CORRECT_AT`` and
say so; letter bias and chance, which need letters and options, leave graded questions out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: A graded score counts as correct (McNemar, the letter analyses) from this value on.
CORRECT_AT = 0.5

LETTER = "letter"
JUDGE = "judge"
METRIC_PREFIX = "metric:"
MEAN_PREFIX = "mean:"
#: Ends a ``mean:`` scoring whose aggregation is in percent.
PERCENT_SUFFIX = "/100"


@dataclass(frozen=True)
class Scoring:
    """One way of scoring: its name as logged, whether its score can lie between 0 and 1, and in words how a
    reply's score is made and mapped to [0, 1] (for the report and the coverage table)."""

    name: str
    graded: bool
    to_unit: str

    @property
    def metric_key(self) -> str:
        """The base task's metric a ``metric:<key>`` or ``mean:<key>`` scoring reads ("" for the others)."""
        for prefix in (METRIC_PREFIX, MEAN_PREFIX):
            if self.name.startswith(prefix):
                return self.name[len(prefix) :].removesuffix(PERCENT_SUFFIX)
        return ""

    @property
    def of_one_question(self) -> bool:
        """Whether the score is the base's aggregation over the question alone (``mean:``)."""
        return self.name.startswith(MEAN_PREFIX)

    @property
    def divisor(self) -> float:
        """What the base's value is divided by to lie in [0, 1]."""
        return 100.0 if self.of_one_question and self.name.endswith(PERCENT_SUFFIX) else 1.0


def scoring(name: str) -> Scoring:
    """The scoring logged as ``name``.

    Raises:
        ValueError: no such scoring.
    """
    if name == LETTER:
        return Scoring(LETTER, False, "1 when the letter read from the reply is the answer, else 0")
    if name == JUDGE:
        return Scoring(
            JUDGE,
            True,
            "the free-text reply scored after the run by vdg's judge on {0, 0.5, 1} (`vdg report --judge "
            "offline|api`), as it is",
        )
    if name.startswith(METRIC_PREFIX) and name[len(METRIC_PREFIX) :]:
        key = name[len(METRIC_PREFIX) :]
        return Scoring(name, True, f"the base task's own per-question `{key}`, as it is (in [0, 1])")
    key = name[len(MEAN_PREFIX) :].removesuffix(PERCENT_SUFFIX) if name.startswith(MEAN_PREFIX) else ""
    if key:
        scale = "in percent, divided by 100" if name.endswith(PERCENT_SUFFIX) else "as it is (in [0, 1])"
        return Scoring(
            name,
            True,
            f"the base task's own `{key}` (a mean over questions) computed by its aggregation on this question "
            f"alone, {scale}",
        )
    raise ValueError(f"unknown scoring {name!r}: {LETTER}, {JUDGE}, {METRIC_PREFIX}<key> or {MEAN_PREFIX}<key>")


def metric_score(key: str, results: Any) -> float:
    """The per-question score a base task's ``process_results`` output ``results`` gives under ``metric:<key>``.

    Raises:
        ValueError: no such key, or its value is not a number in [0, 1] (the message names the value).
    """
    if not isinstance(results, dict) or key not in results:
        have = ", ".join(map(str, results)) if isinstance(results, dict) else type(results).__name__
        raise ValueError(f"its process_results gave no {key!r} (it gave {have})")
    return unit_score(key, results[key])


def unit_score(key: str, value: Any, divisor: float = 1.0) -> float:
    """``value`` (the base's ``key`` for one question) divided by ``divisor``, as a score.

    Raises:
        ValueError: it is not a number in [0, 1] once divided (the message names the value).
    """
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"its {key!r} is {str(value)[:80]!r}, not a number") from None
    scaled = number / divisor
    if not (math.isfinite(scaled) and 0.0 <= scaled <= 1.0):
        shown = f"{number!r} (/ {divisor:g})" if divisor != 1.0 else repr(number)
        raise ValueError(f"its {key!r} is {shown}, outside [0, 1]")
    return scaled


def counts_as_correct(score: float) -> bool:
    """Whether a score counts as a correct answer (``score >= CORRECT_AT``)."""
    return score >= CORRECT_AT
