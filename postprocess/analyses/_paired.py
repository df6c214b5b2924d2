"""Question-by-question alignment of conditions, under an explicit missing-answer policy."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from postprocess.analyses.base import MissingPolicy, ReportSettings, memo_by_frame
from postprocess.reading.frame import graded_rows
from vdg_tasks.vocabulary.conditions import CONDITIONS
from vdg_tasks.vocabulary.scoring import CORRECT_AT

OVERALL = "Overall"
_DECLARED_CONDITIONS = list(CONDITIONS)


#: The columns ``paired`` reads (and the keys of ``by_model_benchmark``).
PAIRED_COLUMNS: tuple[str, ...] = (
    "model",
    "benchmark",
    "condition",
    "question_id",
    "video_id",
    "task_type",
    "status",
    "correct",
    "score",
    "scoring",
)


def by_model_benchmark(frame: pd.DataFrame) -> Iterator[tuple[tuple[str, str], pd.DataFrame]]:
    """``frame.groupby(["model", "benchmark"], sort=True)`` over ``PAIRED_COLUMNS`` only: each group holds what
    ``paired`` reads, and is not a copy of every other column (most of the grouping's cost on a large frame)."""
    yield from frame[[c for c in PAIRED_COLUMNS if c in frame.columns]].groupby(["model", "benchmark"], sort=True)


def paired(frame: pd.DataFrame, conditions: Sequence[str], missing: MissingPolicy = "exclude") -> pd.DataFrame:
    """One row per question of one (model, benchmark) holding every condition in ``conditions``.

    Columns: question_id, video_id, task_type, then per condition ``correct_<cond>`` (bool), ``score_<cond>``
    (float in [0, 1]: the frame's ``score``, where it has none ``correct``; 0 for an error) and ``unparsed_<cond>``
    (bool), then ``error`` (bool: some condition had an error) and ``graded`` (bool: some condition's score is not a
    letter's).
    With ``missing="exclude"`` rows with an error are kept but flagged (callers drop them from both
    arms); with ``"incorrect"`` an error counts as a wrong answer and ``error`` is False.
    """
    if missing not in ("exclude", "incorrect"):
        raise ValueError(f"missing policy must be 'exclude' or 'incorrect', got {missing!r}")
    if len(set(conditions)) != len(conditions):
        raise ValueError(f"conditions to pair must be distinct, got {', '.join(conditions)}")
    condition_codes, names = pd.factorize(frame["condition"])  # a row without a condition: -1
    present = [str(name) for name in names]
    absent = [c for c in conditions if c not in present]
    if absent:
        raise ValueError(
            f"condition(s) {', '.join(absent)} missing for model {frame['model'].iloc[0]!r} "
            f"(it has {', '.join(sorted(present))})"
        )
    # Arrays rather than DataFrame.pivot, and text columns converted on the kept rows only: this runs once per
    # model in several analyses. A row's position in ``conditions``; -1 (left out) for others and for none.
    position = pd.Index(list(conditions)).get_indexer(present)
    c_codes = np.where(condition_codes >= 0, position[condition_codes], -1)
    rows = np.flatnonzero(c_codes >= 0)
    c_codes = c_codes[rows]
    q_codes, question_ids = pd.factorize(frame["question_id"].iloc[rows], sort=True)
    cell = q_codes * len(conditions) + c_codes
    shape = (len(question_ids), len(conditions))
    if (np.bincount(cell, minlength=shape[0] * shape[1]) > 1).any():
        dup = frame.iloc[rows[pd.Series(cell).duplicated().to_numpy()]].iloc[0]
        raise ValueError(
            f"model {dup['model']!r}: question {dup['question_id']!r} appears twice under {dup['condition']!r}"
        )

    def spread(values: np.ndarray, dtype: type = bool) -> np.ndarray:
        out = np.zeros(shape, dtype=dtype)
        out[q_codes, c_codes] = values[rows]
        return out

    correct = spread(frame["correct"].fillna(False).to_numpy(dtype=bool))
    flags = frame["correct"].astype(float)
    given = frame["score"].astype(float).fillna(flags) if "score" in frame.columns else flags
    score = spread(given.fillna(0.0).to_numpy(dtype=float), float)
    graded = spread(graded_rows(frame))
    unparsed = spread(frame["status"].eq("unparsed").to_numpy(dtype=bool, na_value=False))
    error = spread(frame["status"].eq("error").to_numpy(dtype=bool, na_value=False))
    first = rows[np.unique(q_codes, return_index=True)[1]]
    columns = {
        "question_id": np.asarray(question_ids, dtype=object),
        "video_id": frame["video_id"].iloc[first].to_numpy(dtype=object),
        "task_type": frame["task_type"].iloc[first].to_numpy(dtype=object),
    }
    for i, cond in enumerate(conditions):
        columns[f"correct_{cond}"] = correct[:, i]
        columns[f"score_{cond}"] = score[:, i]
        columns[f"unparsed_{cond}"] = unparsed[:, i]
    columns["error"] = error.any(axis=1) if missing == "exclude" else np.zeros(shape[0], dtype=bool)
    columns["graded"] = graded.any(axis=1)
    return pd.DataFrame(columns)


def task_type_masks(table: pd.DataFrame) -> Iterator[tuple[str, np.ndarray]]:
    """Each task type (sorted; rows without one belong to Overall only) as a boolean mask over ``table``'s
    rows, then Overall (every row). An analysis reading several columns per group indexes numpy arrays with
    these far faster than it would pandas group frames."""
    codes, task_types = pd.factorize(table["task_type"], sort=True)
    for code, task_type in enumerate(task_types):
        yield str(task_type), codes == code
    yield OVERALL, np.ones(len(table), dtype=bool)


def by_task_type(table: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """``task_type_masks``' groups as frames: each task type's rows, then all rows as ``Overall``."""
    for task_type, rows in task_type_masks(table):
        yield task_type, table[rows]


_DECLARED_CONDITIONS = list(CONDITIONS)


def condition_sort_key(condition: str) -> tuple[int, str]:
    """Declared conditions in declaration order (orig, black, single, ..., crf38), then others by name."""
    return (
        (_DECLARED_CONDITIONS.index(condition), "")
        if condition in _DECLARED_CONDITIONS
        else (len(_DECLARED_CONDITIONS), condition)
    )


def ordered_conditions(conditions: Iterable[str]) -> list[str]:
    """The distinct conditions, sorted by ``condition_sort_key``."""
    return sorted({str(c) for c in conditions}, key=condition_sort_key)


def group_index(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Each row's group number, and one row of key values per group (sorted by the keys).

    A vectorized stand-in for ``frame.groupby(keys).ngroup()``, which is slow on string columns.
    Key columns must have no missing values.
    """
    codes, levels = [], []
    for key in keys:
        code, level = pd.factorize(frame[key], sort=True)
        if (code < 0).any():
            row = frame.iloc[int(np.flatnonzero(code < 0)[0])]
            raise ValueError(
                f"column {key!r} is empty for question {row.get('question_id')!r}; fill it or drop the row"
            )
        codes.append(code)
        levels.append(np.asarray(level, dtype=object))
    shape = tuple(len(level) for level in levels)
    flat = np.ravel_multi_index(tuple(codes), shape) if len(frame) else np.zeros(0, dtype=np.int64)
    uniq, inverse = np.unique(flat, return_inverse=True)
    parts = np.unravel_index(uniq, shape)
    table = pd.DataFrame({key: level[part] for key, level, part in zip(keys, levels, parts, strict=True)})
    return inverse.reshape(-1), table


#: The cells several tables count in.
CELL_KEYS: tuple[str, ...] = ("model", "benchmark", "condition")


@memo_by_frame
def cell_index(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> tuple[np.ndarray, pd.DataFrame]:
    """``group_index(frame, CELL_KEYS)``, once per frame (``options`` unused: ``memo_by_frame``'s signature). Callers
    must not mutate it."""
    return group_index(frame, list(CELL_KEYS))


# ------------------------------------------------------------------------------- question sets
# One question set per comparison: rows of a table that are compared with each other (models, conditions) are
# computed on one set of questions, named by the table's ``question_rule`` column.

#: ``ReportSettings.question_set``: ``shared``: a benchmark's rows are compared on the questions no compared model has
#: an error for under the compared conditions; ``per-model`` (the default): each model on its own answered questions (so
#: adding a model moves no other model's numbers).
QUESTION_SET_SHARED = "shared"
QUESTION_SET_PER_MODEL = "per-model"


#: The ``scale`` column of a table on scores: a letter's 0 / 1, or a graded score (``vdg_tasks.vocabulary.scoring``).
SCALE_CORRECT = "correct (0/1)"
SCALE_GRADED = "graded score in [0, 1]"


#: The ``scale`` of a table on ``correct`` whose graded questions count as correct from ``CORRECT_AT`` on.
SCALE_AT_THRESHOLD = f"graded score, correct when at least {CORRECT_AT:g}"


def scale_of(graded: np.ndarray) -> str:
    """The ``scale`` of a row computed on questions of which ``graded`` marks the graded ones."""
    return SCALE_GRADED if bool(np.any(graded)) else SCALE_CORRECT


def correct_scales(frame: pd.DataFrame, benchmarks: pd.Series) -> list[str]:
    """The ``scale`` of rows on ``correct`` of ``benchmarks``: ``SCALE_AT_THRESHOLD`` for a benchmark with a graded
    question, else ``SCALE_CORRECT``."""
    graded = set(frame.loc[graded_rows(frame), "benchmark"].astype(str))
    return [SCALE_AT_THRESHOLD if str(b) in graded else SCALE_CORRECT for b in benchmarks]


def question_rule(conditions: Sequence[str], missing: MissingPolicy, scope: str = QUESTION_SET_SHARED) -> str:
    """The ``question_rule`` value of a table computed on ``conditions``: which questions its rows share.

    ``"every question; errors scored wrong"`` (missing=incorrect), ``"no error under orig, black for any
    model"`` (shared), ``"no error under orig, black for this model"`` (per-model), ``"... for either model"``
    (``scope="pair"``: a model pair's own set).
    """
    if missing == "incorrect":
        return "every question; errors scored wrong"
    whose = {QUESTION_SET_SHARED: "any model", QUESTION_SET_PER_MODEL: "this model", "pair": "either model"}[scope]
    return f"no error under {', '.join(conditions)} for {whose}"


def shared_questions(frame: pd.DataFrame, benchmark: str, conditions: Sequence[str], missing: MissingPolicy) -> set:
    """Question ids of ``benchmark`` that every model that ran all of ``conditions`` answered without an error
    under each of them (``missing="exclude"``: a question one of those models never logged is not shared
    either); every question of those models under ``"incorrect"``."""
    rows = frame[(frame["benchmark"] == benchmark) & frame["condition"].isin(list(conditions))]
    ran = rows.groupby("model", sort=False)["condition"].nunique()
    models = ran.index[ran == len(set(conditions))]
    rows = rows[rows["model"].isin(models)]
    if missing == "incorrect":
        return set(rows["question_id"].astype(str))
    answered = rows[~rows["status"].eq("error").to_numpy(dtype=bool, na_value=False)]
    cells = answered.groupby(["model", "condition"], sort=False, observed=True)["question_id"]
    if cells.ngroups < len(models) * len(set(conditions)):
        return set()
    return set.intersection(*(set(ids.astype(str)) for _, ids in cells)) if cells.ngroups else set()


def question_set_digest(question_ids: Iterable[object]) -> str:
    """A digest of a set of question ids (order and repeats ignored): the seed part that stands for "these
    questions", so a resampling seed never depends on a model label or on which other models ran."""
    text = "\x1f".join(sorted({str(q) for q in question_ids}))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def question_set_seed(
    options: ReportSettings, analysis: str, benchmark: str, *parts: object, question_ids: Iterable[object]
) -> int:
    """The seed of one resampling procedure: from the analysis, the benchmark, further stable parts (a task type,
    a condition) and the question set it resamples; never from a model label."""
    return options.seed_for(analysis, benchmark, *parts, question_set_digest(question_ids))
