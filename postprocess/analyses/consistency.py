"""Do models agree on which task types (and questions) need the video, and is a profile stable?

Two tables:

``consistency``: one row per pair of models on a benchmark.
  - task level: Spearman correlation of the two models' task-type VDG vectors, each VDG on the
    model's own question set under the missing-answer policy, over the task types both have with
    at least ``options.min_stratum`` questions each (smaller ones are listed in ``too_small``). VDGs
    are exact fractions of integer counts (``fractions.Fraction``), so equal VDGs tie exactly
    (float means of 0/1 columns can break a tie by one ulp and change the ranks).
  - question level: Spearman correlation and exact agreement of the per-question VDGs
    (-1, 0, +1) on the questions both models kept.
  - beside each Spearman correlation, the Pearson correlation of the same values
    (``scipy.stats.pearsonr``; undefined under the same conditions).

``split_half``: one row per model and benchmark. ``N_SPLITS`` times, each task type's questions
are split at random into two halves (sizes floor and ceil of n_k / 2; task types with fewer than
``options.min_stratum`` questions, and never fewer than 2, are left out), the task-type VDG vector
of each half is computed, and the two vectors are rank-correlated. Reports the mean and a
percentile interval of those correlations. Splitting within task types keeps every task type in
both halves. The splits draw from a seed of the benchmark and the question set split
(``_paired.question_set_seed``), never the model label: two models on the same questions get the
same splits.

A correlation across task types needs ``MIN_TASK_TYPES`` task types: a rank correlation of a few
small strata (a handful of questions each, zero-width VDGs) reads as strong and significant when
it is noise. It is also left empty when either side is constant (all ranks tied); ``task_reason``
and ``reason`` say why. The question-level correlations need ``MIN_POINTS`` values.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pandas as pd

from postprocess.analyses._paired import question_set_seed
from postprocess.analyses.base import Analysis, ReportSettings, conditions_needed, empty
from postprocess.analyses.vdg import conventions, per_question
from postprocess.settings import natural_sorted
from postprocess.stats import MIN_CORRELATION_POINTS, pearson, spearman

#: Random half splits per model for the split-half stability (a fixed design constant, so that
#: the table does not depend on the bootstrap settings).
N_SPLITS = 200
#: Fewest values a question-level Spearman correlation is computed on.
MIN_POINTS = MIN_CORRELATION_POINTS
#: Fewest task types (each with at least ``ReportSettings.min_stratum`` questions) a correlation across task types is
#: computed on.
MIN_TASK_TYPES = 5

COLUMNS: dict[str, str] = {
    "benchmark": "benchmark name",
    "model_a": "first model of the pair (alphabetical)",
    "model_b": "second model of the pair",
    "min_stratum": "fewest questions a task type needs, for each model, to enter the task-level correlations",
    "n_task_types": "task types that entered: both models have at least min_stratum questions in them",
    "too_small": "task types both models have, left out for fewer than min_stratum questions (the smaller "
    "model's n), as 'type (n=k)' joined by '; '",
    "task_spearman": "Spearman correlation of the two task-type VDG vectors (exact-fraction VDGs)",
    "task_p": "two-sided p-value of task_spearman (scipy.stats.spearmanr)",
    "task_pearson": "Pearson correlation of the same two task-type VDG vectors (scipy.stats.pearsonr)",
    "task_pearson_p": "two-sided p-value of task_pearson",
    "task_reason": "why the task-level correlations are empty (fewer than 5 task types entered, or a constant "
    "side); empty when computed",
    "n": "questions both models kept (both arms answered, or errors scored wrong under incorrect)",
    "n_error": "questions both models have, left out because either model lacks an arm's answer",
    "question_spearman": "Spearman correlation of the per-question VDGs (-1, 0, +1) on the n questions",
    "question_p": "two-sided p-value of question_spearman",
    "question_pearson": "Pearson correlation of the per-question VDGs on the n questions",
    "question_pearson_p": "two-sided p-value of question_pearson",
    "agreement": "share of the n questions with the same VDG for both models",
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
}

SPLIT_HALF_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "min_stratum": "fewest questions a task type needs to be split (never fewer than 2)",
    "n": "questions kept under missing_policy, in the task types split",
    "n_task_types": "task types split (at least min_stratum questions each)",
    "too_small": "task types left out for fewer than min_stratum questions, as 'type (n=k)' joined by '; '",
    "n_splits": "random splits drawn",
    "n_defined": "splits whose correlation is defined (neither half's vector constant)",
    "spearman_mean": "mean Spearman correlation between the halves' task-type VDG vectors",
    "spearman_low": "lower percentile of the split correlations at (1 - ci_level) / 2",
    "spearman_high": "upper percentile of the split correlations at 1 - (1 - ci_level) / 2",
    "ci_level": "coverage of the percentile interval",
    "reason": "why no split was correlated (fewer than 5 task types) or none is defined; empty otherwise",
    "missing_policy": "exclude or incorrect",
}


def exact_mean(total: float, n: int) -> Fraction:
    """``total / n`` as a fraction: exact for a letter's integer sum of gaps; a graded sum as its shortest decimal."""
    whole = float(total)
    return Fraction(int(whole), n) if whole.is_integer() else Fraction(repr(whole)) / n


def task_vdgs(questions: pd.DataFrame) -> dict[str, Fraction]:
    """Task type -> exact VDG (d - c) / n over one model's kept questions (types with n > 0)."""
    return {t: gap for t, (gap, _) in _task_profile(questions).items()}


def _task_profile(questions: pd.DataFrame) -> dict[str, tuple[Fraction, int]]:
    """Task type -> (exact VDG, n) over one model's kept questions (types with n > 0)."""
    kept = questions[~questions["excluded"]]
    sums = kept.groupby("task_type", sort=True)["vdg"].agg(["sum", "size"])
    return {str(t): (exact_mean(s, int(n)), int(n)) for t, (s, n) in sums.iterrows() if n > 0}


def too_small_note(sizes: dict[str, int], min_stratum: int) -> str:
    """The task types with fewer than ``min_stratum`` questions, as 'type (n=k)' joined by '; ' (by name)."""
    return "; ".join(f"{t} (n={int(n)})" for t, n in sorted(sizes.items()) if n < min_stratum)


def correlation_reason(n_types: int, min_stratum: int, *correlations: float) -> str:
    """Why a correlation across ``n_types`` task types is empty ('' when every one of ``correlations`` is
    defined)."""
    if n_types < MIN_TASK_TYPES:
        return (
            f"{n_types} task types with at least {min_stratum} questions; a correlation across task types needs "
            f"{MIN_TASK_TYPES}"
        )
    if any(np.isnan(c) for c in correlations):
        return "a side is constant over the task types (all ranks tied)"
    return ""


def _exact_floats(values: list[Fraction]) -> np.ndarray:
    # float(Fraction) is correctly rounded: equal fractions give equal floats, and the order of
    # distinct ones (denominators far below 2**26) is kept, so the ranks are the exact ranks.
    return np.array([float(v) for v in values], dtype=np.float64)


def consistency_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Task- and question-level VDG agreement per pair of models; columns as in ``COLUMNS``."""
    questions = per_question(frame, options)
    rows = []
    for benchmark, group in questions.groupby("benchmark", sort=True):
        profiles = {str(m): _task_profile(t) for m, t in group.groupby("model", sort=True)}
        models = natural_sorted(profiles)
        # question x model: the VDG (NaN when excluded or not asked) and whether it was asked.
        wide = group.pivot(index="question_id", columns="model", values="vdg").reindex(columns=models)
        asked = group.pivot(index="question_id", columns="model", values="excluded").reindex(columns=models).notna()
        gaps = wide.astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)
        present = asked.to_numpy(dtype=bool)
        for i, j in itertools.combinations(range(len(models)), 2):
            a, b = models[i], models[j]
            sizes = {t: min(profiles[a][t][1], profiles[b][t][1]) for t in set(profiles[a]) & set(profiles[b])}
            entered = sorted(t for t, n in sizes.items() if n >= options.min_stratum)
            task_a = _exact_floats([profiles[a][t][0] for t in entered])
            task_b = _exact_floats([profiles[b][t][0] for t in entered])
            rho_t, p_t, r_t, pr_t = np.nan, np.nan, np.nan, np.nan
            if len(entered) >= MIN_TASK_TYPES:
                rho_t, p_t = spearman(task_a, task_b)
                r_t, pr_t = pearson(task_a, task_b)
            both = present[:, i] & present[:, j]
            kept = both & ~np.isnan(gaps[:, i]) & ~np.isnan(gaps[:, j])
            va, vb = gaps[kept, i], gaps[kept, j]
            rho_q, p_q = spearman(va, vb)
            r_q, pr_q = pearson(va, vb)
            rows.append(
                {
                    "benchmark": benchmark,
                    "model_a": a,
                    "model_b": b,
                    "min_stratum": options.min_stratum,
                    "n_task_types": len(entered),
                    "too_small": too_small_note(sizes, options.min_stratum),
                    "task_spearman": rho_t,
                    "task_p": p_t,
                    "task_pearson": r_t,
                    "task_pearson_p": pr_t,
                    "task_reason": correlation_reason(len(entered), options.min_stratum, rho_t, r_t),
                    "n": int(kept.sum()),
                    "n_error": int((both & ~kept).sum()),
                    "question_spearman": rho_q,
                    "question_p": p_q,
                    "question_pearson": r_q,
                    "question_pearson_p": pr_q,
                    "agreement": float((va == vb).mean()) if kept.any() else np.nan,
                    **conventions(COLUMNS, options),
                }
            )
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _row_ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks within each row (``scipy.stats.rankdata(x, axis=1)``): the values below, plus half of
    the ties counting itself, plus one half. By pairwise comparison: rows hold a few task types."""
    below = (x[:, None, :] < x[:, :, None]).sum(axis=2)
    ties = (x[:, None, :] == x[:, :, None]).sum(axis=2)
    return below + (ties + 1) / 2.0


def _row_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman correlation of each row of x with the same row of y (NaN where a row is constant).

    As scipy.stats.spearmanr: the Pearson correlation of the average ranks.
    """
    rx, ry = _row_ranks(x), _row_ranks(y)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    sxx, syy = (rx * rx).sum(axis=1), (ry * ry).sum(axis=1)
    defined = (sxx > 0) & (syy > 0)
    out = np.full(x.shape[0], np.nan)
    out[defined] = (rx * ry).sum(axis=1)[defined] / np.sqrt(sxx[defined] * syy[defined])
    return np.clip(out, -1.0, 1.0)


def split_half_correlations(
    gaps: np.ndarray, task_codes: np.ndarray, rng: np.random.Generator, n_splits: int = N_SPLITS
) -> np.ndarray:
    """Spearman correlation between the task-type VDG vectors of two random halves, per split.

    ``gaps`` are per-question VDGs (integers for a letter, in [-1, 1] graded), ``task_codes`` their task type
    codes; every task type is split within itself (half A gets floor(n_k / 2) questions). Returns ``n_splits``
    values.
    """
    codes = np.unique(task_codes)
    keys = rng.random((n_splits, gaps.shape[0]))
    vdg_a = np.empty((n_splits, codes.size))
    vdg_b = np.empty((n_splits, codes.size))
    for j, code in enumerate(codes):
        idx = np.flatnonzero(task_codes == code)
        half = idx.size // 2
        chosen = np.argsort(keys[:, idx], axis=1)[:, :half]
        sum_a = gaps[idx][chosen].sum(axis=1)
        sum_b = gaps[idx].sum() - sum_a
        # Integer / integer in float64 is correctly rounded: equal VDGs of a letter tie exactly.
        vdg_a[:, j] = sum_a / half
        vdg_b[:, j] = sum_b / (idx.size - half)
    return _row_spearman(vdg_a, vdg_b)


def split_half_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Split-half stability of each model's task-type VDG profile; ``SPLIT_HALF_COLUMNS``."""
    questions = per_question(frame, options)
    rows = []
    tail = (1.0 - options.ci_level) / 2.0
    smallest = max(2, options.min_stratum)
    for (model, benchmark), table in questions.groupby(["model", "benchmark"], sort=True):
        kept = table[~table["excluded"]]
        sizes = kept["task_type"].astype(str).value_counts()
        kept = kept[kept["task_type"].astype(str).isin(sizes.index[sizes >= smallest])]
        codes = pd.factorize(kept["task_type"], sort=True)[0]
        n_types = int(np.unique(codes).size)
        row = {
            "model": model,
            "benchmark": benchmark,
            "min_stratum": smallest,
            "n": len(kept),
            "n_task_types": n_types,
            "too_small": too_small_note(sizes.to_dict(), smallest),
            "n_splits": N_SPLITS,
            "n_defined": 0,
            "spearman_mean": np.nan,
            "spearman_low": np.nan,
            "spearman_high": np.nan,
            "reason": correlation_reason(n_types, smallest),
            **conventions(SPLIT_HALF_COLUMNS, options),
        }
        if n_types >= MIN_TASK_TYPES:
            seed = question_set_seed(options, "split_half", benchmark, question_ids=kept["question_id"])
            rho = split_half_correlations(kept["vdg"].to_numpy(dtype=np.float64), codes, np.random.default_rng(seed))
            rho = rho[np.isfinite(rho)]
            row["n_defined"] = int(rho.size)
            if rho.size:
                row["spearman_mean"] = float(rho.mean())
                row["spearman_low"], row["spearman_high"] = (float(q) for q in np.quantile(rho, [tail, 1 - tail]))
            else:
                row["reason"] = "every split has a constant half (all ranks tied)"
        rows.append(row)
    if not rows:
        return empty(SPLIT_HALF_COLUMNS)
    return pd.DataFrame(rows, columns=list(SPLIT_HALF_COLUMNS))


ANALYSES = (
    Analysis(
        "consistency",
        "Per pair of models: Spearman and Pearson correlations of task-type VDGs (task types with >= min_stratum "
        "questions, at least 5), and agreement of per-question VDGs.",
        COLUMNS,
        consistency_table,
        needs=conditions_needed("orig", "black"),
        min_models=2,
        shares=(per_question,),
    ),
    Analysis(
        "split_half",
        "Per model: stability of the task-type VDG profile across random halves of each task type's questions.",
        SPLIT_HALF_COLUMNS,
        split_half_table,
        needs=conditions_needed("orig", "black"),
        shares=(per_question,),
    ),
)
