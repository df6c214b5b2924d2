"""Model against model on the same questions: McNemar per condition, and the orig/black dissociation.

A pair is two models of one benchmark, named in alphabetical order (``model_a < model_b``).
Every table here compares them on one question set per condition:

- ``missing="exclude"``: the questions neither model has an error for, under that condition and
  under ``orig`` and ``black`` (the *anchor* conditions) where both models ran them. So the
  ``orig`` and ``black`` rows of a pair share one question set (the paper's matched 547 for
  internvl2 vs qwen2vl), and the other conditions are compared on a subset of it.
- ``missing="incorrect"``: every question, an error scored wrong.

Discordant-cell convention (the one ``postprocess.stats.mcnemar`` takes): ``b01`` counts questions
model_a got wrong and model_b right, ``b10`` questions model_a got right and model_b wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special as _special

from postprocess.analyses._paired import ordered_conditions
from postprocess.analyses.base import Analysis, Options, empty
from postprocess.stats import holm, mcnemar_many, paired_bootstrap_diff, tost_paired
from vdg_tasks.seeding import stable_seed

#: Conditions whose question set every row of a pair shares under ``missing="exclude"``.
ANCHORS: tuple[str, ...] = ("orig", "black")


COLUMNS: dict[str, str] = {
    "model_a": "first model of the pair (alphabetically first)",
    "model_b": "second model of the pair",
    "benchmark": "benchmark name",
    "condition": "condition both models ran",
    "n": "questions compared: no error for either model under this condition, orig and black "
    "(missing_policy=exclude), or all (incorrect)",
    "n_excluded": "questions dropped because either model has an error under this condition, orig or black",
    "acc_a": "model_a's accuracy over the n questions",
    "acc_b": "model_b's accuracy over the n questions",
    "diff": "acc_a - acc_b",
    "diff_ci_low": "lower bound of the paired percentile bootstrap CI of diff (questions resampled jointly)",
    "diff_ci_high": "upper bound of the paired percentile bootstrap CI of diff",
    "b00": "questions both models got wrong",
    "b01": "questions model_a got wrong and model_b right",
    "b10": "questions model_a got right and model_b wrong",
    "b11": "questions both models got right",
    "chi2_cc": "McNemar chi-square with continuity correction, (|b01 - b10| - 1)^2 / (b01 + b10); "
    "empty when b01 = b10 = 0",
    "p_cc": "p-value of chi2_cc (chi-square, 1 df), the paper's test",
    "p_exact": "exact McNemar p-value (two-sided binomial test of b01 in b01 + b10 at 0.5)",
    "p_holm": "p_cc Holm-adjusted over its family: every row of this table with the same benchmark "
    "(all pairs x all conditions) that has a p_cc",
    "n_family": "number of p-values in the Holm family of p_holm",
    "ci_level": "confidence level of the CI",
    "n_resamples": "bootstrap resamples",
    "resample_unit": "question, or video (cluster bootstrap)",
    "missing_policy": "exclude or incorrect",
}

DISSOCIATION_COLUMNS: dict[str, str] = {
    "model_a": "first model of the pair (alphabetically first)",
    "model_b": "second model of the pair",
    "benchmark": "benchmark name",
    "n": "questions compared (the pair's shared orig/black set; see missing_policy)",
    "n_excluded": "questions dropped because either model has an error under orig or black",
    "acc_a_orig": "model_a's accuracy on orig",
    "acc_b_orig": "model_b's accuracy on orig",
    "acc_a_black": "model_a's accuracy on black",
    "acc_b_black": "model_b's accuracy on black",
    "b01_orig": "orig: questions model_a got wrong and model_b right",
    "b10_orig": "orig: questions model_a got right and model_b wrong",
    "b01_black": "black: questions model_a got wrong and model_b right",
    "b10_black": "black: questions model_a got right and model_b wrong",
    "p_orig": "McNemar p_cc on orig (empty when b01 = b10 = 0)",
    "p_black": "McNemar p_cc on black (empty when b01 = b10 = 0)",
    "p_holm_orig": "p_orig Holm-adjusted over the family: the orig and black p-values of every pair of this benchmark",
    "p_holm_black": "p_black Holm-adjusted over the same family",
    "n_family": "number of p-values in that Holm family",
    "differs_orig": "p_holm_orig < alpha (the models differ reliably with the video)",
    "differs_black": "p_holm_black < alpha (they differ reliably without it)",
    "pattern": "where they differ: 'orig only', 'black only', 'both' or 'neither'",
    "dissociation": "they differ reliably on exactly one of orig and black",
    "p_tost_orig": "TOST equivalence p-value of acc_a_orig - acc_b_orig within +-equivalence_margin "
    "(paired t; empty when all paired differences are equal)",
    "equivalent_orig": "p_tost_orig < alpha: the models' orig accuracies are equivalent within the margin",
    "p_tost_black": "TOST equivalence p-value on black",
    "equivalent_black": "p_tost_black < alpha",
    "share_black_p01": "share of stability resamples with black p_cc < 0.01",
    "share_orig_p01": "share of stability resamples with orig p_cc < 0.01",
    "share_pattern": "share of stability resamples reproducing the observed pattern on unadjusted p_cc at alpha "
    "('black only': orig p >= alpha and black p < alpha; 'orig only' mirrored; 'both': both < alpha; "
    "'neither': both >= alpha); a resample with b01 = b10 = 0 has p = 1",
    "alpha": "significance level of differs_* and the TOST",
    "equivalence_margin": "TOST margin (difference of proportions)",
    "stability_resamples": "resamples of the question set (one draw shared by the orig and black arms)",
    "resample_unit": "question, or video (cluster bootstrap)",
    "missing_policy": "exclude or incorrect",
}


@dataclass(frozen=True)
class _Wide:
    """One model's answers on one benchmark: questions (sorted ids) x its conditions."""

    question_ids: np.ndarray
    conditions: dict[str, int]
    correct: np.ndarray
    error: np.ndarray
    video_id: np.ndarray


def _wide(group: pd.DataFrame) -> _Wide:
    dup = group.duplicated(["condition", "question_id"])
    if dup.any():
        row = group[dup].iloc[0]
        raise ValueError(
            f"model {row['model']!r} / {row['benchmark']!r}: question {row['question_id']!r} appears more than "
            f"once under condition {row['condition']!r}; de-duplicate the frame (postprocess.io.load_frame does)"
        )
    q_codes, q_uniques = pd.factorize(group["question_id"])
    order = np.argsort(np.asarray(q_uniques, dtype=object), kind="stable")
    qids = np.asarray(q_uniques, dtype=object)[order]
    q_idx = np.argsort(order)[q_codes]
    c_codes, c_uniques = pd.factorize(group["condition"])
    conds = ordered_conditions(c_uniques)
    col = {c: i for i, c in enumerate(conds)}
    c_idx = np.array([col[c] for c in c_uniques])[c_codes]
    correct = np.zeros((len(qids), len(conds)), dtype=bool)
    # A question a condition lacks counts as an error there (io.load_frame rejects such frames anyway).
    error = np.ones((len(qids), len(conds)), dtype=bool)
    correct[q_idx, c_idx] = group["correct"].fillna(False).to_numpy(dtype=bool)
    error[q_idx, c_idx] = (group["status"] == "error").to_numpy()
    video = np.empty(len(qids), dtype=object)
    video[q_idx] = group["video_id"].to_numpy()
    return _Wide(qids, col, correct, error, video)


@dataclass(frozen=True)
class _Pair:
    benchmark: str
    model_a: str
    model_b: str
    conditions: list[str]
    a: _Wide
    b: _Wide

    def keep(self, condition: str, missing: str) -> np.ndarray:
        """Questions compared under ``condition`` (boolean mask over the sorted question ids)."""
        if missing == "incorrect":
            return np.ones(len(self.a.question_ids), dtype=bool)
        arms = [condition, *(c for c in ANCHORS if c in self.conditions)]
        cols_a = [self.a.conditions[c] for c in arms]
        cols_b = [self.b.conditions[c] for c in arms]
        return ~(self.a.error[:, cols_a].any(axis=1) | self.b.error[:, cols_b].any(axis=1))

    def arms(self, condition: str, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (
            self.a.correct[keep, self.a.conditions[condition]],
            self.b.correct[keep, self.b.conditions[condition]],
        )


def _pairs(frame: pd.DataFrame) -> Iterator[_Pair]:
    for benchmark, bench in frame.groupby("benchmark", sort=True):
        wides = {str(m): _wide(g) for m, g in bench.groupby("model", sort=True)}
        models = sorted(wides)
        for i, model_a in enumerate(models):
            for model_b in models[i + 1 :]:
                a, b = wides[model_a], wides[model_b]
                if not np.array_equal(a.question_ids, b.question_ids):
                    only = sorted(set(a.question_ids) ^ set(b.question_ids))
                    raise ValueError(
                        f"{benchmark!r}: models {model_a!r} and {model_b!r} answered different question sets "
                        f"({len(only)} questions only one has, e.g. {', '.join(map(str, only[:3]))}); "
                        "pairwise tests need the same questions"
                    )
                common = ordered_conditions(set(a.conditions) & set(b.conditions))
                if common:
                    yield _Pair(str(benchmark), model_a, model_b, common, a, b)


def _cells(ca: np.ndarray, cb: np.ndarray) -> tuple[int, int, int, int]:
    return (
        int((~ca & ~cb).sum()),
        int((~ca & cb).sum()),
        int((ca & ~cb).sum()),
        int((ca & cb).sum()),
    )


def _holm_by(table: pd.DataFrame, pcols: list[str], holm_cols: list[str]) -> pd.DataFrame:
    """Holm-adjust the p-values in ``pcols`` jointly within each benchmark; NaNs stay out of the family."""
    for col in holm_cols:
        table[col] = np.nan
    table["n_family"] = 0
    for _, idx in table.groupby("benchmark", sort=False).groups.items():
        block = table.loc[idx, pcols].to_numpy(dtype=float)
        flat = block.ravel()
        ok = ~np.isnan(flat)
        adjusted = np.full(flat.shape, np.nan)
        if ok.any():
            adjusted[ok] = holm(flat[ok])
        table.loc[idx, holm_cols] = adjusted.reshape(block.shape)
        table.loc[idx, "n_family"] = int(ok.sum())
    return table


def mcnemar_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Every model pair x shared condition: accuracies, paired CI of the difference, McNemar with Holm."""
    rows = []
    for pair in _pairs(frame):
        for condition in pair.conditions:
            keep = pair.keep(condition, options.missing)
            ca, cb = pair.arms(condition, keep)
            b00, b01, b10, b11 = _cells(ca, cb)
            row = {
                "model_a": pair.model_a,
                "model_b": pair.model_b,
                "benchmark": pair.benchmark,
                "condition": condition,
                "n": int(keep.sum()),
                "n_excluded": int((~keep).sum()),
                "acc_a": ca.mean() if ca.size else np.nan,
                "acc_b": cb.mean() if cb.size else np.nan,
                "diff": ca.mean() - cb.mean() if ca.size else np.nan,
                "diff_ci_low": np.nan,
                "diff_ci_high": np.nan,
                "b00": b00,
                "b01": b01,
                "b10": b10,
                "b11": b11,
                "ci_level": options.ci_level,
                "n_resamples": options.n_resamples,
                "resample_unit": "video" if options.cluster else "question",
                "missing_policy": options.missing,
            }
            if ca.size:
                ci = paired_bootstrap_diff(
                    ca,
                    cb,
                    options.n_resamples,
                    seed=stable_seed("mcnemar", pair.model_a, pair.model_b, pair.benchmark, condition),
                    level=options.ci_level,
                    clusters=pair.a.video_id[keep] if options.cluster else None,
                )
                row["diff_ci_low"], row["diff_ci_high"] = ci.low, ci.high
            rows.append(row)
    if not rows:
        return empty(COLUMNS)
    table = pd.DataFrame(rows)
    table["chi2_cc"], table["p_cc"], table["p_exact"] = mcnemar_many(table["b01"], table["b10"])
    table = _holm_by(table, ["p_cc"], ["p_holm"])
    return table[list(COLUMNS)]


# ----------------------------------------------------------------------------------- dissociation


def _mcnemar_p_vector(b01: np.ndarray, b10: np.ndarray) -> np.ndarray:
    """McNemar p_cc for many (b01, b10) at once; p = 1 where there is no discordant pair."""
    total = b01 + b10
    chi2 = (np.abs(b01 - b10) - 1.0) ** 2 / np.where(total > 0, total, 1)
    # chi2.sf(x, 1) = erfc(sqrt(x / 2)); erfc is ~50 times faster than the incomplete gamma.
    return np.where(total > 0, _special.erfc(np.sqrt(chi2 / 2.0)), 1.0)


def stability_pvalues(
    correct: np.ndarray, n_resamples: int, seed: int, clusters: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """McNemar p_cc on orig and on black over bootstrap resamples of one question set.

    ``correct`` is (n, 4) boolean: columns a_orig, b_orig, a_black, b_black. A resample draws the
    units (questions, or whole clusters) with replacement once for both arms. Units are reduced to
    their counts over the 16 joint outcome cells; resampling n units is a multinomial over the
    distinct count vectors, so the cost does not grow with n. Returns (p_orig, p_black), one entry
    per resample.
    """
    cell = correct.astype(np.int64) @ np.array([8, 4, 2, 1])
    if clusters is None:
        freq = np.bincount(cell, minlength=16)
        present = np.flatnonzero(freq)
        patterns, freq = np.eye(16, dtype=np.int64)[present], freq[present]
    else:
        _, inverse = np.unique(clusters, return_inverse=True)
        per_unit = np.zeros((inverse.max() + 1, 16), dtype=np.int64)
        np.add.at(per_unit, (inverse.reshape(-1), cell), 1)
        # Distinct rows via a byte view: a 1-d sort, much faster than np.unique(axis=0).
        rows = np.ascontiguousarray(per_unit).view(np.dtype((np.void, 16 * 8))).ravel()
        _, first, freq = np.unique(rows, return_index=True, return_counts=True)
        patterns = per_unit[first]
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(int(freq.sum()), freq / freq.sum(), size=n_resamples)
    totals = draws @ patterns.astype(float)  # exact: integer counts far below 2**53
    counts = totals.reshape(n_resamples, 2, 2, 2, 2)  # axes: a_orig, b_orig, a_black, b_black
    orig = counts.sum(axis=(3, 4))
    black = counts.sum(axis=(1, 2))
    p_orig = _mcnemar_p_vector(orig[:, 0, 1], orig[:, 1, 0])
    p_black = _mcnemar_p_vector(black[:, 0, 1], black[:, 1, 0])
    return p_orig, p_black


def _pattern(orig: bool, black: bool) -> str:
    return {(True, True): "both", (True, False): "orig only", (False, True): "black only"}.get((orig, black), "neither")


def _tost_or_nan(ca: np.ndarray, cb: np.ndarray, options: Options) -> tuple[float, bool]:
    d = ca.astype(float) - cb.astype(float)
    if d.size < 2 or np.all(d == d[0]):
        return np.nan, False
    res = tost_paired(ca, cb, margin=options.equivalence_margin, alpha=options.alpha)
    return res.p_tost, res.equivalent


def dissociation_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Per pair: do the models differ with the video, without it, or both, and how stable is that."""
    rows = []
    for pair in _pairs(frame):
        if not set(ANCHORS) <= set(pair.conditions):
            continue
        keep = pair.keep("orig", options.missing)
        ao, bo = pair.arms("orig", keep)
        ab, bb = pair.arms("black", keep)
        _, b01_o, b10_o, _ = _cells(ao, bo)
        _, b01_b, b10_b, _ = _cells(ab, bb)
        p_tost_o, eq_o = _tost_or_nan(ao, bo, options)
        p_tost_b, eq_b = _tost_or_nan(ab, bb, options)
        row = {
            "model_a": pair.model_a,
            "model_b": pair.model_b,
            "benchmark": pair.benchmark,
            "n": int(keep.sum()),
            "n_excluded": int((~keep).sum()),
            "acc_a_orig": ao.mean() if ao.size else np.nan,
            "acc_b_orig": bo.mean() if bo.size else np.nan,
            "acc_a_black": ab.mean() if ab.size else np.nan,
            "acc_b_black": bb.mean() if bb.size else np.nan,
            "b01_orig": b01_o,
            "b10_orig": b10_o,
            "b01_black": b01_b,
            "b10_black": b10_b,
            "p_orig": float(mcnemar_many(np.array(b01_o), np.array(b10_o))[1]),
            "p_black": float(mcnemar_many(np.array(b01_b), np.array(b10_b))[1]),
            "p_tost_orig": p_tost_o,
            "equivalent_orig": eq_o,
            "p_tost_black": p_tost_b,
            "equivalent_black": eq_b,
            "share_black_p01": np.nan,
            "share_orig_p01": np.nan,
            "share_pattern": np.nan,
            "alpha": options.alpha,
            "equivalence_margin": options.equivalence_margin,
            "stability_resamples": options.stability_resamples,
            "resample_unit": "video" if options.cluster else "question",
            "missing_policy": options.missing,
            "_sig_o": None,
            "_sig_b": None,
        }
        if ao.size:
            p_o, p_b = stability_pvalues(
                np.column_stack([ao, bo, ab, bb]),
                options.stability_resamples,
                stable_seed("dissociation", pair.model_a, pair.model_b, pair.benchmark),
                clusters=pair.a.video_id[keep] if options.cluster else None,
            )
            row["share_black_p01"] = float((p_b < 0.01).mean())
            row["share_orig_p01"] = float((p_o < 0.01).mean())
            row["_sig_o"], row["_sig_b"] = p_o < options.alpha, p_b < options.alpha
        rows.append(row)
    if not rows:
        return empty(DISSOCIATION_COLUMNS)
    table = _holm_by(pd.DataFrame(rows), ["p_orig", "p_black"], ["p_holm_orig", "p_holm_black"])
    table["differs_orig"] = table["p_holm_orig"] < options.alpha
    table["differs_black"] = table["p_holm_black"] < options.alpha
    table["pattern"] = [_pattern(o, b) for o, b in zip(table["differs_orig"], table["differs_black"], strict=True)]
    table["dissociation"] = table["differs_orig"] != table["differs_black"]
    shares = []
    for pattern, sig_o, sig_b in zip(table["pattern"], table["_sig_o"], table["_sig_b"], strict=True):
        if not isinstance(sig_o, np.ndarray):
            shares.append(np.nan)
            continue
        want_o, want_b = pattern in ("both", "orig only"), pattern in ("both", "black only")
        shares.append(float(((sig_o == want_o) & (sig_b == want_b)).mean()))
    table["share_pattern"] = shares
    return table[list(DISSOCIATION_COLUMNS)]


ANALYSES = (
    Analysis(
        "mcnemar",
        "Every model pair on every shared condition: accuracies, paired CI of the difference, McNemar with Holm.",
        COLUMNS,
        mcnemar_table,
    ),
    Analysis(
        "dissociation",
        "Per model pair: McNemar on orig and black, Holm-adjusted, TOST, and the bootstrap stability of the pattern.",
        DISSOCIATION_COLUMNS,
        dissociation_table,
    ),
)
