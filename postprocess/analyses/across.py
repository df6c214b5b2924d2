"""One model across benchmarks: does its VDG differ, and does it pick letters differently?

Rows exist only when the frame holds two or more benchmarks; a pair of benchmarks is named in
alphabetical order (``benchmark_a < benchmark_b``), and every row compares *one model* with itself
(the same model on both benchmarks: paired by model, not by question; the questions differ).

``vdg_across``: per model and pair of benchmarks, the difference of its Overall VDGs (each the
``vdg`` table's Overall value: per-question VDG on that benchmark under the missing-answer policy)
with a percentile bootstrap CI. The two benchmarks are independent samples, so each is resampled
on its own (its questions, or its videos under ``cluster``) from one seeded stream per row, and the
CI is taken over the differences of the resampled means. The seed derives from the two benchmarks
and the two question sets (``question_set_seed``), never from the model label: two models on the
same questions resample them alike, and renaming a model moves no CI.

``letters_across``: per model, condition and pair of benchmarks, Pearson's chi-square test of
homogeneity of the predicted-letter distributions (``scipy.stats.chi2_contingency``, no
continuity correction) on the ``letters`` table's counts. Letter shares are only comparable between
question sets with the same option count (a uniform guesser picks D a quarter of the time on
4-option questions and never on 3-option ones), so the test is made only when every question of
both sets has the same count (``postprocess.reading.answer_options``); otherwise the row says why in
``not_compared``. Letters no answer uses in either benchmark are dropped.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from postprocess.analyses._paired import condition_sort_key, question_set_digest, question_set_seed
from postprocess.analyses.base import Analysis, ReportSettings, conditions_needed, empty
from postprocess.analyses.letters import letters_table
from postprocess.analyses.vdg import UNIT_QUESTION, UNIT_VIDEO, ci_clusters, conventions, per_question
from postprocess.reading.answer_options import option_counts
from postprocess.stats import chi2_independence, percentile_interval, resampled_means
from vdg_tasks.vocabulary.parse import LETTERS

VDG_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark_a": "first benchmark of the pair (alphabetical)",
    "benchmark_b": "second benchmark of the pair",
    "n_a": "questions compared on benchmark_a (as the vdg table's Overall n)",
    "n_b": "questions compared on benchmark_b",
    "vdg_a": "the model's Overall VDG on benchmark_a",
    "vdg_b": "the model's Overall VDG on benchmark_b",
    "diff": "vdg_a - vdg_b",
    "ci_low": "lower bound of the percentile bootstrap CI of diff (each benchmark resampled independently)",
    "ci_high": "upper bound of that CI",
    "ci_level": "confidence level of the CI",
    "n_resamples": "bootstrap resamples",
    "resample_unit": "question, or video (cluster bootstrap)",
    "missing_policy": "exclude or incorrect",
}

LETTER_COLUMNS: dict[str, str] = {
    "model": "model label",
    "condition": "condition the model ran on both benchmarks",
    "benchmark_a": "first benchmark of the pair (alphabetical)",
    "benchmark_b": "second benchmark of the pair",
    "n_options_a": "options per question of benchmark_a's questions (those the letters table counts): k when all "
    "have k, else 'min-max'",
    "n_options_b": "the same for benchmark_b",
    "not_compared": "why no test was made: the two sets' option counts differ, or one set mixes counts (letter "
    "shares then differ by construction); empty when it was made",
    "letters": "the letters compared: those of the shared option count that some answer uses, joined by ','; "
    "empty when not compared",
    "n_a": "answers on benchmark_a with a letter",
    "n_b": "answers on benchmark_b with a letter",
    "top_a": "benchmark_a's most frequent letter",
    "top_b": "benchmark_b's most frequent letter",
    "chi2": "Pearson chi-square of homogeneity of the 2 x letters table (no continuity correction)",
    "df": "letters compared - 1",
    "p": "p-value of chi2 (scipy.stats.chi2_contingency); empty when fewer than 2 letters or an empty side",
    "cramers_v": "Cramer's V: sqrt(chi2 / (n_a + n_b))",
    "missing_policy": "exclude or incorrect",
}


def _bootstrap_diff(
    a: np.ndarray,
    b: np.ndarray,
    clusters_a: np.ndarray | None,
    clusters_b: np.ndarray | None,
    options: ReportSettings,
    seed: int,
) -> tuple[float, float]:
    """Percentile CI of mean(a) - mean(b) with a and b resampled independently from one stream."""
    rng = np.random.default_rng(seed)
    means_a = resampled_means(a.astype(np.float64), clusters_a, rng, options.n_resamples, "auto")[0]
    means_b = resampled_means(b.astype(np.float64), clusters_b, rng, options.n_resamples, "auto")[0]
    return percentile_interval(means_a - means_b, options.ci_level)


def vdg_across_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Each model's VDG difference between each pair of benchmarks; columns as in ``VDG_COLUMNS``."""
    questions = per_question(frame, options)
    kept = questions[~questions["excluded"].astype(bool)]
    rows = []
    for model, group in kept.groupby("model", sort=True):
        by_bench = {str(b): t for b, t in group.groupby("benchmark", sort=True)}
        for bench_a, bench_b in itertools.combinations(sorted(by_bench), 2):
            ta, tb = by_bench[bench_a], by_bench[bench_b]
            # float: a graded benchmark's gaps lie between -1 and 1 (a letter's are -1, 0, +1)
            ga, gb = ta["vdg"].to_numpy(dtype=np.float64), tb["vdg"].to_numpy(dtype=np.float64)
            clusters_a = ci_clusters(ta["video_id"].to_numpy(dtype=object), ta["question_id"].to_numpy(), options)
            clusters_b = ci_clusters(tb["video_id"].to_numpy(dtype=object), tb["question_id"].to_numpy(), options)
            low, high = _bootstrap_diff(
                ga,
                gb,
                clusters_a,
                clusters_b,
                options,
                question_set_seed(
                    options,
                    "vdg_across",
                    bench_a,
                    bench_b,
                    question_set_digest(ta["question_id"]),
                    question_ids=tb["question_id"],
                ),
            )
            rows.append(
                {
                    "model": model,
                    "benchmark_a": bench_a,
                    "benchmark_b": bench_b,
                    "n_a": len(ga),
                    "n_b": len(gb),
                    "vdg_a": float(ga.mean()),
                    "vdg_b": float(gb.mean()),
                    "diff": float(ga.mean() - gb.mean()),
                    "ci_low": low,
                    "ci_high": high,
                    **conventions(
                        VDG_COLUMNS,
                        options,
                        n_resamples=options.n_resamples,
                        resample_unit=UNIT_QUESTION if clusters_a is None and clusters_b is None else UNIT_VIDEO,
                    ),
                }
            )
    if not rows:
        return empty(VDG_COLUMNS)
    return pd.DataFrame(rows, columns=list(VDG_COLUMNS))


def _count_ranges(frame: pd.DataFrame, options: ReportSettings) -> pd.DataFrame:
    """(min, max) option count per (model, condition, benchmark) over the questions the letters table counts."""
    counted = frame["status"].to_numpy(dtype=object) != "error" if options.missing == "exclude" else slice(None)
    rows = frame.loc[counted, ["model", "condition", "benchmark"]].assign(_k=option_counts(frame)[counted].to_numpy())
    return rows.groupby(["model", "condition", "benchmark"], sort=False)["_k"].agg(["min", "max"])


def _count_label(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def _why_not(bench_a: str, range_a: tuple[int, int], bench_b: str, range_b: tuple[int, int]) -> str:
    """Why two sets' letters cannot be compared ("" when they can): each must have one option count, the same."""
    for bench, (low, high) in ((bench_a, range_a), (bench_b, range_b)):
        if low != high:
            return f"{bench} mixes questions with {low} to {high} options"
    if range_a[0] != range_b[0]:
        return f"option counts differ: {range_a[0]} on {bench_a}, {range_b[0]} on {bench_b}"
    return ""


def letters_across_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Chi-square test of each model's predicted letters between benchmarks with the same option count;
    columns as in ``LETTER_COLUMNS``."""
    if frame.empty or frame["benchmark"].nunique() < 2:
        return empty(LETTER_COLUMNS)
    letters = letters_table(frame, options)
    ranges = _count_ranges(frame, options)
    pred = [f"pred_{x}" for x in LETTERS]
    rows = []
    for (model, condition), group in letters.groupby(["model", "condition"], sort=True):
        by_bench = {
            str(r["benchmark"]): r for _, r in group.iterrows() if (model, condition, r["benchmark"]) in ranges.index
        }
        for bench_a, bench_b in itertools.combinations(sorted(by_bench), 2):
            ra, rb = by_bench[bench_a], by_bench[bench_b]
            range_a = tuple(int(v) for v in ranges.loc[(model, condition, bench_a)])
            range_b = tuple(int(v) for v in ranges.loc[(model, condition, bench_b)])
            why = _why_not(bench_a, range_a, bench_b, range_b)
            ca = ra[pred].to_numpy(dtype=np.int64)
            cb = rb[pred].to_numpy(dtype=np.int64)
            k = 0 if why else range_a[0]
            used = (ca[:k] + cb[:k]) > 0
            shown = [LETTERS[i] for i in range(k) if used[i]]
            table = np.stack([ca[:k][used], cb[:k][used]])
            row = {
                "model": model,
                "condition": condition,
                "benchmark_a": bench_a,
                "benchmark_b": bench_b,
                "n_options_a": _count_label(*range_a),
                "n_options_b": _count_label(*range_b),
                "not_compared": why,
                "letters": ",".join(shown),
                "n_a": int(ca.sum()),
                "n_b": int(cb.sum()),
                "top_a": LETTERS[int(np.argmax(ca))] if ca.sum() else "",
                "top_b": LETTERS[int(np.argmax(cb))] if cb.sum() else "",
                "chi2": np.nan,
                "df": np.nan,
                "p": np.nan,
                "cramers_v": np.nan,
                **conventions(LETTER_COLUMNS, options),
            }
            if len(shown) >= 2 and table[0].sum() and table[1].sum():
                res, _ = chi2_independence(table)
                row["chi2"], row["df"], row["p"] = res.chi2, res.df, res.p
                row["cramers_v"] = math.sqrt(res.chi2 / table.sum())
            rows.append(row)
    if not rows:
        return empty(LETTER_COLUMNS)
    rows.sort(key=lambda r: (r["model"], condition_sort_key(r["condition"]), r["benchmark_a"], r["benchmark_b"]))
    return pd.DataFrame(rows, columns=list(LETTER_COLUMNS))


ANALYSES = (
    Analysis(
        "vdg_across",
        "Each model's Overall VDG difference between each pair of benchmarks, with a bootstrap CI "
        "(benchmarks resampled independently).",
        VDG_COLUMNS,
        vdg_across_table,
        needs=conditions_needed("orig", "black"),
        shares=(per_question,),
    ),
    Analysis(
        "letters_across",
        "Chi-square test of each model's predicted-letter distribution between each pair of benchmarks, per "
        "condition, where both have the same option count (else the row says why not).",
        LETTER_COLUMNS,
        letters_across_table,
    ),
)
