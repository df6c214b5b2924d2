"""Visual Dependency Gap: VDG(q) = score(orig) - score(black): in {-1, 0, +1} for a letter (score = correct), in
[-1, 1] for a graded task (``vdg_tasks.vocabulary.scoring``; the ``scale`` column says which).

The models of one benchmark are compared on one question set (``ReportSettings.question_set="shared"``, the
default): the questions no model has an error for under orig or black (``compared_questions``), so one
model's failed videos (whose black accuracy need not be typical) never change another model's rows;
``"per-model"`` keeps each model on its own answered questions (the published paper's convention). A
stratum with fewer than ``ReportSettings.min_stratum`` questions keeps its descriptive values (n, accuracies,
vdg, d, c) but no CI (``too_small``). CIs are exact where the bootstrap distribution has a closed form
(``postprocess.stats.bootstrap_mean(method="exact")``) and seeded from the benchmark, the task type and
the question set otherwise (``_paired.question_set_seed``): never from a model label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from postprocess.analyses._paired import (
    QUESTION_SET_PER_MODEL,
    SCALE_CORRECT,
    SCALE_GRADED,
    by_model_benchmark,
    paired,
    question_rule,
    question_set_seed,
    scale_of,
    shared_questions,
    task_type_masks,
)
from postprocess.analyses.base import Analysis, ReportSettings, conditions_needed, empty, memo_by_frame
from postprocess.stats import BootstrapCI, DifferenceCI, bootstrap_mean, paired_difference_ci

#: The conditions a VDG compares.
ARMS: tuple[str, ...] = ("orig", "black")

#: ``resample_unit`` of a CI whose unit is the video (``ci_clusters``), and of one whose unit is the question.
UNIT_VIDEO = "video"
UNIT_QUESTION = "question"


#: The columns ``ci_columns`` fills, declared once for every table of paired-difference CIs.
CI_COLUMNS: dict[str, str] = {
    "ci_method": "how the row's CIs were computed: tango score (Tango's score interval for a paired difference of 0/1 "
    "outcomes), tango score (design effect) (its variance multiplied by the design effect of the questions' "
    "videos, at least 1), exact (the percentile bootstrap's distribution in closed form), monte carlo "
    "(resampled); several joined by ' + '; empty without a CI",
    "n_resamples": "the most bootstrap resamples a CI of the row drew (0 when none resampled, or without a CI)",
    "mc_se": "the largest estimated Monte Carlo standard error of the row's CI endpoints (0 when none resampled; "
    "empty without a CI)",
    "resample_unit": "the CIs' independent unit: video (a video holds several of the compared questions: the score "
    "interval's variance or the bootstrap's resamples clustered by video) or question",
}


PER_QUESTION_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "question_id": "question id",
    "video_id": "video id",
    "task_type": "task type",
    "correct_orig": "answered right with the original video (a graded score: at least 0.5)",
    "correct_black": "answered right with the black video (a graded score: at least 0.5)",
    "score_orig": "score with the original video (correct_orig as 1 / 0 for a letter)",
    "score_black": "score with the black video",
    "vdg": "score_orig - score_black (-1, 0, +1 for a letter; in [-1, 1] graded); empty when excluded",
    "excluded": "an arm has no answer and missing_policy is exclude",
    "missing_policy": "exclude or incorrect",
    "scale": f"{SCALE_CORRECT!r} (a letter) or {SCALE_GRADED!r}",
}

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "n": "questions compared (both arms answered, or errors scored wrong under missing_policy=incorrect)",
    "acc_orig": "accuracy (mean score, on a graded scale) on the original video over the n questions",
    "acc_black": "accuracy (mean score, on a graded scale) on the black video over the n questions",
    "vdg": "mean per-question VDG = acc_orig - acc_black",
    "ci_low": "lower bound of the paired CI of vdg (ci_method; empty when too_small)",
    "ci_high": "upper bound of the paired CI of vdg (ci_method; empty when too_small)",
    "d": "questions with VDG > 0 (right only with the video, for a letter)",
    "c": "questions with VDG < 0 (right only without it, for a letter)",
    "dc_ratio": "d / c (inf when c = 0 < d; empty when both are 0)",
    "n_error": "questions excluded because an arm has no answer (missing or undecodable video)",
    "n_not_shared": "questions this model answered in both arms but left out because another model has an error "
    "on them under orig or black (question_set=shared); 0 under per-model or missing_policy=incorrect",
    "n_unparsed": "answers among the n questions with no readable letter (scored wrong), both arms",
    "too_small": "n is below min_stratum: descriptive values only, no CI",
    "ci_level": "confidence level of the CI",
    **CI_COLUMNS,
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
    "question_rule": "which questions the benchmark's rows share (question_set and missing_policy)",
    "scale": f"{SCALE_CORRECT!r}, or {SCALE_GRADED!r} when a question of the row is graded",
}


@memo_by_frame
def per_question(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """One row per (model, benchmark, question) with its VDG; columns as in ``PER_QUESTION_COLUMNS``."""
    parts = []
    for (model, benchmark), group in by_model_benchmark(frame):
        if not {"orig", "black"} <= set(group["condition"].unique()):
            continue
        table = paired(group, ["orig", "black"], options.missing)
        graded = table["graded"].to_numpy(dtype=bool)
        gap = table["score_orig"] - table["score_black"]
        gap = gap if graded.any() else gap.astype(int)
        parts.append(
            pd.DataFrame(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "question_id": table["question_id"],
                    "video_id": table["video_id"],
                    "task_type": table["task_type"],
                    "correct_orig": table["correct_orig"],
                    "correct_black": table["correct_black"],
                    "score_orig": table["score_orig"],
                    "score_black": table["score_black"],
                    "vdg": gap.where(~table["error"]).astype("Float64" if graded.any() else "Int64"),
                    "excluded": table["error"],
                    **conventions(PER_QUESTION_COLUMNS, options, scale=scale_of(graded)),
                }
            )
        )
    if not parts:
        return empty(PER_QUESTION_COLUMNS)
    return pd.concat(parts, ignore_index=True)[list(PER_QUESTION_COLUMNS)]


def _dc_ratio(d: int, c: int) -> float:
    if c:
        return d / c
    return float("inf") if d else float("nan")


@memo_by_frame
def question_set_cache(
    frame: pd.DataFrame, options: ReportSettings = ReportSettings()
) -> dict[tuple[object, ...], frozenset]:
    """One cache per (frame, options) that ``compared_questions`` fills (its own, so mutated only there)."""
    return {}


def compared_questions(
    frame: pd.DataFrame, benchmark: str, conditions: Sequence[str], options: ReportSettings
) -> frozenset[str] | None:
    """The question ids (as text) every row of ``benchmark`` compared under ``conditions`` is computed on:
    ``_paired.shared_questions``, once per (frame, benchmark, conditions); None when each model keeps its
    own answered questions (``question_set="per-model"``, or missing=incorrect, where nothing is dropped)."""
    if options.question_set == QUESTION_SET_PER_MODEL or options.missing == "incorrect":
        return None
    cache = question_set_cache(frame, options)
    key = (benchmark, tuple(conditions))
    if key not in cache:
        cache[key] = frozenset(shared_questions(frame, benchmark, list(conditions), options.missing))
    return cache[key]


def rule_of(conditions: Sequence[str], options: ReportSettings) -> str:
    """The ``question_rule`` value of a table comparing ``conditions`` under ``options``."""
    return question_rule(list(conditions), options.missing, options.question_set)


def in_question_set(question_ids: np.ndarray, shared: frozenset[str] | None) -> np.ndarray:
    """Whether each question id is in ``shared`` (every one when ``shared`` is None)."""
    if shared is None:
        return np.ones(len(question_ids), dtype=bool)
    return np.fromiter((str(q) in shared for q in question_ids), dtype=bool, count=len(question_ids))


@dataclass(frozen=True)
class Arms:
    """One (model, benchmark)'s questions paired over ``conditions`` (``_paired.paired``), as arrays: each arm's
    ``correct`` flags and ``score`` values, ``error`` (an arm without an answer), ``shared`` (in the benchmark's
    compared question set, ``compared_questions``), ``graded`` (a question scored on a graded scale), the question
    and video ids and the ``question_rule`` of a table comparing them."""

    table: pd.DataFrame
    correct: dict[str, np.ndarray]
    score: dict[str, np.ndarray]
    graded: np.ndarray
    error: np.ndarray
    shared: np.ndarray
    question_ids: np.ndarray
    videos: np.ndarray
    rule: str


def paired_arms(
    frame: pd.DataFrame, group: pd.DataFrame, benchmark: str, conditions: Sequence[str], options: ReportSettings
) -> Arms:
    """``Arms`` of one model's rows ``group`` of ``frame`` over ``conditions`` (every one present in ``group``)."""
    table = paired(group, list(conditions), options.missing)
    question_ids = table["question_id"].to_numpy()
    return Arms(
        table=table,
        correct={arm: table[f"correct_{arm}"].to_numpy(dtype=bool) for arm in conditions},
        score={arm: table[f"score_{arm}"].to_numpy(dtype=float) for arm in conditions},
        graded=table["graded"].to_numpy(dtype=bool),
        error=table["error"].to_numpy(dtype=bool),
        shared=in_question_set(question_ids, compared_questions(frame, str(benchmark), conditions, options)),
        question_ids=question_ids,
        videos=table["video_id"].to_numpy(),
        rule=rule_of(conditions, options),
    )


def ci_or_none(
    values: np.ndarray,
    options: ReportSettings,
    seed_parts: tuple[object, ...],
    question_ids: np.ndarray,
    videos: np.ndarray | None,
    *,
    difference: bool = True,
    stratum: bool = True,
) -> BootstrapCI | DifferenceCI | None:
    """The CI of mean(values) under ``options``, or None when the stratum has fewer than ``options.min_stratum``
    questions (``stratum``; a whole benchmark's comparison, ``stratum=False``, gets a CI at any n).

    ``values`` are per-question paired differences (``difference``; else any per-question values). Under
    ``ci_method="score"`` a paired difference of 0/1 outcomes (every value -1, 0 or +1) gets Tango's score
    interval (``stats.paired_difference_ci``); everything else the percentile bootstrap, exact where it can be.
    The unit is ``ci_clusters``'s: the video where the questions share videos (under ``cluster="auto"``).
    ``seed_parts`` = (analysis, benchmark, ...): a resampling seed also digests the question ids, never a model label.
    """
    if not len(values) or (stratum and len(values) < options.min_stratum):
        return None
    clusters = ci_clusters(videos, question_ids, options)
    if difference and options.ci_method == "score" and is_paired_binary(values):
        return paired_difference_ci(values, level=options.ci_level, clusters=clusters)
    analysis, benchmark, *rest = seed_parts
    return bootstrap_mean(
        values,
        n_resamples=options.n_resamples,
        seed=question_set_seed(options, str(analysis), str(benchmark), *rest, question_ids=question_ids),
        level=options.ci_level,
        clusters=clusters,
        method="resample" if options.ci_method == "resample" else "exact",
        mc_se_target=options.mc_se_target,
    )


def is_paired_binary(values: np.ndarray) -> bool:
    """Whether every value is -1, 0 or +1: a paired difference of two 0/1 outcomes (Tango's interval applies)."""
    values = np.asarray(values, dtype=float)
    return bool(np.isin(values, (-1.0, 0.0, 1.0)).all())


def ci_clusters(videos: np.ndarray | None, question_ids: np.ndarray, options: ReportSettings) -> np.ndarray | None:
    """The cluster id of each question a CI treats as its unit, or None when the unit is the question.

    ``cluster="video"``: the question's video; ``"auto"``: the same, where some video holds more than one of these
    questions (questions of one video are not independent), else None; ``"question"``: None. A question without a
    video id is a cluster of its own.
    """
    if options.cluster == UNIT_QUESTION or videos is None or not len(videos):
        return None
    if isinstance(videos, np.ndarray) and videos.dtype.kind == "U" and not (videos == "").any():
        # ``as_text(videos)``: plain ids, compared and sorted as fixed-width text (what the CIs' np.unique does
        # fastest), to the same clusters in the same order
        return None if options.cluster == "auto" and np.unique(videos).size == videos.size else videos
    values = np.asarray(videos, dtype=object)
    distinct = pd.unique(values)
    if all(type(video) is str and video for video in distinct):  # the usual case, without a per-question pass
        return None if options.cluster == "auto" and len(distinct) == len(values) else values.copy()
    ids = pd.Series(videos, dtype=object)
    blank = ids.isna().to_numpy() | ids.astype(str).eq("").to_numpy()
    ids = ids.astype(str).to_numpy(dtype=object)
    if blank.any():
        ids[blank] = ["\x00question\x00" + str(q) for q in np.asarray(question_ids, dtype=object)[blank]]
    if options.cluster == "auto" and len(pd.unique(ids)) == len(ids):
        return None
    return ids


def as_text(videos: np.ndarray) -> np.ndarray:
    """``videos`` as a fixed-width text array when every id is a non-empty str that NumPy keeps as it is (no
    trailing NUL), else unchanged: ``ci_clusters`` gives the same clusters either way, in the same sorted order,
    but sorting text costs a fifth of sorting Python strings, and the pairwise tables cluster each pair's
    questions a dozen times."""
    if videos.dtype != object or not len(videos):
        return videos
    distinct = pd.unique(videos)
    if all(type(video) is str and video and not video.endswith("\x00") for video in distinct):
        return videos.astype(str)
    return videos


def ci_unit(ci: BootstrapCI | DifferenceCI | None) -> str:
    """``resample_unit`` of a CI: video when it treated some video's questions as one unit, else question."""
    return UNIT_VIDEO if ci is not None and ci.n_clusters < ci.n else UNIT_QUESTION


def ci_columns(cis: Sequence[BootstrapCI | DifferenceCI | None]) -> dict[str, object]:
    """``CI_COLUMNS`` of a row holding ``cis``: their methods, the most resamples any drew, the largest endpoint MC SE
    and their unit."""
    drawn = [ci for ci in cis if ci is not None]
    if not drawn:
        return {"ci_method": "", "n_resamples": 0, "mc_se": np.nan, "resample_unit": UNIT_QUESTION}
    return {
        "ci_method": " + ".join(dict.fromkeys(ci.method for ci in drawn)),
        "n_resamples": max(ci.n_resamples for ci in drawn),
        "mc_se": max(max(ci.mc_se_low, ci.mc_se_high) for ci in drawn),
        "resample_unit": UNIT_VIDEO if any(ci_unit(ci) == UNIT_VIDEO for ci in drawn) else UNIT_QUESTION,
    }


#: The columns every table may carry that record how its numbers were made (``conventions`` fills them).
CONVENTIONS: tuple[str, ...] = ("ci_level", *CI_COLUMNS, "missing_policy", "question_rule", "scale")


def conventions(
    columns: Mapping[str, str],
    options: ReportSettings,
    *,
    rule: str | None = None,
    scale: str | None = None,
    cis: Sequence[BootstrapCI | DifferenceCI | None] | None = None,
    later: tuple[str, ...] = (),
    **own: object,
) -> dict[str, object]:
    """The values of the ``CONVENTIONS`` a table declares in ``columns``, for a row computed under ``options`` on
    the questions of ``rule`` at ``scale`` with ``cis`` (``ci_columns``): filled one way for every table. ``own``
    gives a convention the table computes its own way (a CI level of its own, resamples it drew itself); ``later``
    names those it fills elsewhere (``scale`` over the whole table from a benchmark's questions, a test's CI). A
    declared column whose value is not given is a ValueError (a table that forgot it)."""
    unknown = (set(own) | set(later)) - set(CONVENTIONS)
    if unknown:
        raise ValueError(f"not a convention column: {', '.join(sorted(unknown))}")
    given: dict[str, object] = {"ci_level": options.ci_level, "missing_policy": options.missing}
    if cis is not None:
        given |= ci_columns(cis)
    given |= own
    if rule is not None:
        given["question_rule"] = rule
    if scale is not None:
        given["scale"] = scale
    wanted = [c for c in CONVENTIONS if c in columns and c not in later]
    lacking = [c for c in wanted if c not in given]
    if lacking:
        raise ValueError(f"the table declares {', '.join(lacking)} but no value was given for it")
    return {c: given[c] for c in wanted}


@memo_by_frame
def vdg_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """VDG per (model, benchmark, task type) with Overall rows; columns as in ``COLUMNS``."""
    questions = per_question(frame, options)
    if questions.empty:
        return empty(COLUMNS)
    unparsed = _unparsed_counts(frame)
    rule = rule_of(ARMS, options)
    rows = []
    for (model, benchmark), table in questions.groupby(["model", "benchmark"], sort=True):
        excluded = table["excluded"].to_numpy(dtype=bool)
        gaps = table["vdg"].astype(float).fillna(0.0).to_numpy(dtype=float)
        score_orig = table["score_orig"].to_numpy(dtype=float)
        score_black = table["score_black"].to_numpy(dtype=float)
        graded = table["scale"].eq(SCALE_GRADED).to_numpy(dtype=bool)
        question_ids = table["question_id"].to_numpy()
        videos = table["video_id"].to_numpy()
        shared = in_question_set(question_ids, compared_questions(frame, str(benchmark), ARMS, options))
        for task_type, rows_of_task in task_type_masks(table):
            kept = rows_of_task & ~excluded & shared
            n = int(kept.sum())
            gap = gaps[kept]
            d, c = int((gap > 0).sum()), int((gap < 0).sum())
            ci = ci_or_none(gap, options, ("vdg", benchmark, task_type), question_ids[kept], videos[kept])
            rows.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "task_type": task_type,
                    "n": n,
                    "acc_orig": score_orig[kept].mean() if n else np.nan,
                    "acc_black": score_black[kept].mean() if n else np.nan,
                    "vdg": gap.mean() if n else np.nan,
                    "ci_low": ci.low if ci else np.nan,
                    "ci_high": ci.high if ci else np.nan,
                    "d": d,
                    "c": c,
                    "dc_ratio": _dc_ratio(d, c),
                    "n_error": int((rows_of_task & excluded).sum()),
                    "n_not_shared": int((rows_of_task & ~excluded & ~shared).sum()),
                    "n_unparsed": _count_unparsed(unparsed, model, benchmark, question_ids[kept]),
                    "too_small": n < options.min_stratum,
                    **conventions(COLUMNS, options, rule=rule, scale=scale_of(graded[kept]), cis=[ci]),
                }
            )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _unparsed_counts(frame: pd.DataFrame) -> pd.Series:
    """Unparsed answers in the orig and black arms per (model, benchmark, question)."""
    arms = frame[frame["condition"].isin(["orig", "black"]) & (frame["status"] == "unparsed")]
    return arms.groupby(["model", "benchmark", "question_id"]).size()


def _count_unparsed(counts: pd.Series, model: str, benchmark: str, question_ids: np.ndarray) -> int:
    if counts.empty:
        return 0
    try:
        sub = counts.loc[(model, benchmark)]
    except KeyError:
        return 0
    return int(sub.reindex(question_ids).fillna(0).sum())


ANALYSES = (
    Analysis(
        "vdg",
        "VDG per model and task type on one question set per benchmark, with a paired bootstrap CI (exact where it "
        "can be; none for strata below min_stratum) and D:C.",
        COLUMNS,
        vdg_table,
        needs=conditions_needed("orig", "black"),
        shares=(per_question, vdg_table, question_set_cache),
    ),
    Analysis(
        "vdg_per_question",
        "Each question's VDG per model.",
        PER_QUESTION_COLUMNS,
        per_question,
        needs=conditions_needed("orig", "black"),
        shares=(per_question,),
    ),
)
