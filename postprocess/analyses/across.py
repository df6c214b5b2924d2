"""One model across benchmarks: does its VDG differ, and does it pick letters differently?

Rows exist only when the frame holds two or more benchmarks; a pair of benchmarks is named in
alphabetical order (``benchmark_a < benchmark_b``), and every row compares *one model* with itself
(the same model on both benchmarks: paired by model, not by question; the questions differ).

``vdg_across``: per model and pair of benchmarks, the difference of its Overall VDGs (each the
``vdg`` table's Overall value: per-question VDG on that benchmark under the missing-answer policy)
with a percentile bootstrap CI. The two benchmarks are independent samples, so each is resampled
on its own (its questions, or its videos under ``cluster``) from one seeded stream per row
(``seed_for("vdg_across", model, benchmark_a, benchmark_b)``), and the CI is taken over the
differences of the resampled means.

``letters_across``: per model, condition and pair of benchmarks, Pearson's chi-square test of
homogeneity of the predicted-letter distributions (``scipy.stats.chi2_contingency``, no
continuity correction) on the ``letters`` table's counts. Letters beyond the smaller benchmark's
option count (its ``n_options``: the largest among its questions) cannot be compared, so answers
with those letters are left out of both rows of the test (``n_beyond_a`` / ``n_beyond_b`` count
them); letters no answer uses in either benchmark are dropped too.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from postprocess.analyses._paired import condition_sort_key
from postprocess.analyses.base import Analysis, Options, conditions_needed, empty
from postprocess.analyses.letters import letters_table
from postprocess.analyses.vdg import per_question
from postprocess.stats import _percentiles, _resampled_means, chi2_independence
from vdg_tasks.parse import LETTERS

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
    "n_options_a": "benchmark_a's option count (the letters table's n_options)",
    "n_options_b": "benchmark_b's option count",
    "letters": "the letters compared: those within both option counts that some answer uses, joined by ','",
    "n_a": "answers on benchmark_a with a compared letter",
    "n_b": "answers on benchmark_b with a compared letter",
    "n_beyond_a": "answers on benchmark_a with a letter beyond benchmark_b's option count (left out)",
    "n_beyond_b": "answers on benchmark_b with a letter beyond benchmark_a's option count (left out)",
    "top_a": "benchmark_a's most frequent compared letter",
    "top_b": "benchmark_b's most frequent compared letter",
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
    options: Options,
    seed: int,
) -> tuple[float, float]:
    """Percentile CI of mean(a) - mean(b) with a and b resampled independently from one stream."""
    rng = np.random.default_rng(seed)
    means_a = _resampled_means(a.astype(np.float64), clusters_a, rng, options.n_resamples, "auto")[0]
    means_b = _resampled_means(b.astype(np.float64), clusters_b, rng, options.n_resamples, "auto")[0]
    return _percentiles(means_a - means_b, options.ci_level)


def vdg_across_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Each model's VDG difference between each pair of benchmarks; columns as in ``VDG_COLUMNS``."""
    questions = per_question(frame, options)
    kept = questions[~questions["excluded"].astype(bool)]
    rows = []
    for model, group in kept.groupby("model", sort=True):
        by_bench = {str(b): t for b, t in group.groupby("benchmark", sort=True)}
        for bench_a, bench_b in itertools.combinations(sorted(by_bench), 2):
            ta, tb = by_bench[bench_a], by_bench[bench_b]
            ga, gb = ta["vdg"].to_numpy(dtype=np.int64), tb["vdg"].to_numpy(dtype=np.int64)
            low, high = _bootstrap_diff(
                ga,
                gb,
                ta["video_id"].to_numpy(dtype=object) if options.cluster else None,
                tb["video_id"].to_numpy(dtype=object) if options.cluster else None,
                options,
                options.seed_for("vdg_across", model, bench_a, bench_b),
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
                    "ci_level": options.ci_level,
                    "n_resamples": options.n_resamples,
                    "resample_unit": "video" if options.cluster else "question",
                    "missing_policy": options.missing,
                }
            )
    if not rows:
        return empty(VDG_COLUMNS)
    return pd.DataFrame(rows, columns=list(VDG_COLUMNS))


def letters_across_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Chi-square test of each model's predicted letters between benchmarks; columns as in ``LETTER_COLUMNS``."""
    if frame.empty or frame["benchmark"].nunique() < 2:
        return empty(LETTER_COLUMNS)
    letters = letters_table(frame, options)
    pred = [f"pred_{x}" for x in LETTERS]
    rows = []
    for (model, condition), group in letters.groupby(["model", "condition"], sort=True):
        by_bench = {str(r["benchmark"]): r for _, r in group.iterrows()}
        for bench_a, bench_b in itertools.combinations(sorted(by_bench), 2):
            ra, rb = by_bench[bench_a], by_bench[bench_b]
            ka, kb = int(ra["n_options"]), int(rb["n_options"])
            k = min(ka, kb)
            ca = ra[pred].to_numpy(dtype=np.int64)
            cb = rb[pred].to_numpy(dtype=np.int64)
            used = (ca[:k] + cb[:k]) > 0
            shown = [LETTERS[i] for i in range(k) if used[i]]
            table = np.stack([ca[:k][used], cb[:k][used]])
            row = {
                "model": model,
                "condition": condition,
                "benchmark_a": bench_a,
                "benchmark_b": bench_b,
                "n_options_a": ka,
                "n_options_b": kb,
                "letters": ",".join(shown),
                "n_a": int(table[0].sum()),
                "n_b": int(table[1].sum()),
                "n_beyond_a": int(ca[k:].sum()),
                "n_beyond_b": int(cb[k:].sum()),
                "top_a": shown[int(np.argmax(table[0]))] if table[0].sum() else "",
                "top_b": shown[int(np.argmax(table[1]))] if table[1].sum() else "",
                "chi2": np.nan,
                "df": np.nan,
                "p": np.nan,
                "cramers_v": np.nan,
                "missing_policy": options.missing,
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
        "Chi-square test of each model's predicted-letter distribution between each pair of benchmarks, per condition.",
        LETTER_COLUMNS,
        letters_across_table,
    ),
)
