"""One paired contrast of two conditions, question by question, computed one way for every table that reads one.

A ``Contrast`` names two arms, ``upper - lower``. ``paired_cells`` pairs one (model, benchmark)'s questions over a
set of arms (``vdg.paired_arms``: the questions answered under every arm, in the benchmark's compared question set)
and gives, per task type and then Overall, each contrast's ``Cell``: n, both accuracies, the mean per-question
difference with the vdg table's paired CI (``vdg.ci_or_none``), the questions left out and the row's ``scale``.
``choices_by_arm`` gives what a table reads beside the scores (the letter chosen under each arm, ...).

Which conditions enter a table is not written here: each table asks the declarations (``Condition.measure`` and
``Condition.beside``, ``vdg_tasks.vocabulary.conditions``) and adds its own columns to the cells: the added
conditions (``measure="difference"``), the probes (their five measures) and the no-vision arms.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from postprocess.analyses._paired import scale_of, task_type_masks
from postprocess.analyses.base import ReportSettings
from postprocess.analyses.vdg import Arms, ci_or_none, paired_arms
from postprocess.stats import BootstrapCI, DifferenceCI


@dataclass(frozen=True)
class Contrast:
    """``upper - lower``, labelled ``name``; its resampling seed is (table, benchmark, task type, *seed_parts)."""

    name: str
    upper: str
    lower: str
    seed_parts: tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    """One contrast on one task type's paired questions (``kept``, a mask over ``arms.table``'s rows)."""

    task_type: str
    contrast: Contrast
    arms: Arms
    rows_of_task: np.ndarray
    kept: np.ndarray
    differences: np.ndarray
    ci: BootstrapCI | DifferenceCI | None

    @property
    def n(self) -> int:
        return int(self.kept.sum())

    def accuracy(self, arm: str) -> float:
        """Mean score under ``arm`` over the kept questions (NaN when there is none)."""
        return self.arms.score[arm][self.kept].mean() if self.n else np.nan

    @property
    def diff(self) -> float:
        """The contrast's mean per-question difference (NaN when there is no question)."""
        return self.differences.mean() if self.n else np.nan

    def mean_difference(self, upper: str, lower: str) -> float:
        """Mean per-question ``upper - lower`` of two other arms over the same questions."""
        return (self.arms.score[upper][self.kept] - self.arms.score[lower][self.kept]).mean() if self.n else np.nan

    @property
    def ci_low(self) -> float:
        return self.ci.low if self.ci else np.nan

    @property
    def ci_high(self) -> float:
        return self.ci.high if self.ci else np.nan

    @property
    def n_error(self) -> int:
        """Questions of the task type left out because an arm has no answer."""
        return int((self.rows_of_task & self.arms.error).sum())

    @property
    def n_not_shared(self) -> int:
        """Questions answered under every arm but outside the benchmark's compared question set."""
        return int((self.rows_of_task & ~self.arms.error & ~self.arms.shared).sum())

    def n_unparsed(self, arm: str) -> int:
        """Of the kept questions, replies under ``arm`` no option could be read from."""
        return int(self.arms.table[f"unparsed_{arm}"].to_numpy(dtype=bool)[self.kept].sum())

    @property
    def scale(self) -> str:
        return scale_of(self.arms.graded[self.kept])

    def too_small(self, options: ReportSettings) -> bool:
        return self.n < options.min_stratum


def paired_cells(
    frame: pd.DataFrame,
    group: pd.DataFrame,
    benchmark: str,
    arms: Sequence[str],
    contrasts: Sequence[Contrast],
    options: ReportSettings,
    table: str,
) -> Iterator[Cell]:
    """Each of ``contrasts`` per task type (then Overall) of one model's rows ``group``, on the questions answered
    under every one of ``arms`` (which hold every contrast's two arms)."""
    pair = paired_arms(frame, group, benchmark, list(arms), options)
    for task_type, rows_of_task in task_type_masks(pair.table):
        kept = rows_of_task & ~pair.error & pair.shared
        for contrast in contrasts:
            differences = pair.score[contrast.upper][kept] - pair.score[contrast.lower][kept]
            seed = (table, benchmark, task_type, *contrast.seed_parts)
            ci = ci_or_none(differences, options, seed, pair.question_ids[kept], pair.videos[kept])
            yield Cell(task_type, contrast, pair, rows_of_task, kept, differences, ci)


def choices_by_arm(
    frame: pd.DataFrame, model: str, benchmark: str, arms: Sequence[str], fields: Sequence[str] = ("pred",)
) -> pd.DataFrame:
    """question_id (as text) -> ``<field>_<arm>`` for each of ``fields`` and ``arms`` (None, NaN or '' where the
    frame has no value: ``pred`` None, ``shuffled_from`` '', others NaN), for one model and benchmark: read from
    ``frame`` once for every contrast of a table."""
    wanted = ["question_id", "condition", *fields]
    rows = frame.loc[
        (frame["model"] == model) & (frame["benchmark"] == benchmark) & frame["condition"].isin(list(arms)),
        [c for c in wanted if c in frame.columns],
    ]
    repeated = rows.duplicated(["condition", "question_id"])
    if repeated.any():  # the message paired() gives, before a pandas one
        first = rows[repeated].iloc[0]
        raise ValueError(
            f"model {model!r}: question {first['question_id']!r} appears twice under {first['condition']!r}"
        )
    out = pd.DataFrame(index=pd.Index(sorted(rows["question_id"].astype(str).unique()), name="question_id"))
    for arm in arms:
        part = rows[rows["condition"] == arm]
        part = part.set_index(part["question_id"].astype(str))
        for field in fields:
            if field == "pred":
                out[f"pred_{arm}"] = part["pred"].astype(object).where(part["pred"].notna(), None)
            elif field in part:
                out[f"{field}_{arm}"] = part[field]
            else:
                out[f"{field}_{arm}"] = "" if field == "shuffled_from" else np.nan
    return out


def same_choice(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Whether the same option was chosen (a letter under both, and the same one), per question."""
    return np.array([isinstance(a, str) and a == b for a, b in zip(first, second, strict=True)], dtype=bool)
