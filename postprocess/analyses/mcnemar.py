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

Dissociation: one rule for the label and its stability. A pair *differs reliably* on orig (black)
when its McNemar p_cc there, Holm-adjusted over the benchmark's family (the orig and black p-values
of every pair), is below alpha; ``pattern`` and ``dissociation`` follow from that, and
``share_pattern`` is the share of bootstrap resamples in which *the same rule* gives the same
pattern: each resample draws the benchmark's questions (or videos) once for every pair, recomputes
every pair's p-values and Holm-adjusts them over the family again. Holm, not the unadjusted p, is
the rule because a report compares many pairs on two conditions each: with k models there are
k(k-1) tests, and an unadjusted 5 % rule would label spurious dissociations as the models grow.
A pair's label therefore depends on the other pairs of its benchmark (the family), as p_holm does.

``share_black_p01``, ``share_orig_p01`` and ``share_black_only_unadjusted`` are fixed events on the
pair's own resamples (seeded from the pair), not label stabilities: the last one, unadjusted orig
p >= alpha and black p < alpha, is the stability the Accuracy Without Grounding paper reports for its
black-only dissociation (section 4.2).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special as _special

from postprocess.analyses._paired import ordered_conditions
from postprocess.analyses.base import Analysis, Options, conditions_needed, empty, memo_by_frame
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
    "share_black_p01": "share of the pair's stability resamples (drawn for this pair, seeded from it) with unadjusted "
    "black p_cc < 0.01",
    "share_orig_p01": "share of those resamples with unadjusted orig p_cc < 0.01",
    "share_pattern": "share of stability resamples in which the rule behind pattern gives pattern again: each "
    "resample draws the benchmark's questions (videos when clustered) once for every pair, recomputes every pair's "
    "orig and black p_cc and Holm-adjusts them over the family (a p with b01 = b10 = 0 leaves it, as above), at alpha",
    "share_black_only_unadjusted": "share of the pair's stability resamples (those of share_black_p01) with "
    "unadjusted orig p_cc >= alpha and black p_cc < alpha, whatever pattern is: the paper's 'joint' stability of a "
    "black-only dissociation (no Holm; b01 = b10 = 0 counts as p = 1)",
    "alpha": "significance level of differs_* and the TOST",
    "equivalence_margin": "TOST margin (difference of proportions)",
    "stability_resamples": "bootstrap resamples of the question set (one draw shared by the orig and black arms)",
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


#: The columns ``_wide`` reads: the frame is narrowed to them before it is grouped (groups copy every column).
_WIDE_COLUMNS = ["model", "benchmark", "condition", "question_id", "video_id", "status", "correct"]


@memo_by_frame
def _wides(frame: pd.DataFrame, options: Options = Options()) -> list[tuple[str, dict[str, _Wide]]]:
    """Per benchmark (sorted), each model's ``_Wide`` (``options`` unused: ``memo_by_frame``'s signature)."""
    return [
        (str(benchmark), {str(m): _wide(g) for m, g in bench.groupby("model", sort=True)})
        for benchmark, bench in frame[_WIDE_COLUMNS].groupby("benchmark", sort=True)
    ]


def _pairs(frame: pd.DataFrame) -> Iterator[_Pair]:
    for benchmark, wides in _wides(frame):
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
                    yield _Pair(benchmark, model_a, model_b, common, a, b)


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


def holm_rows(pvalues: np.ndarray) -> np.ndarray:
    """Holm-adjust each row of ``pvalues`` on its own; NaN entries stay NaN and out of the row's family.

    Row by row equal to ``postprocess.stats.holm`` on the row's non-NaN entries.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    missing = np.isnan(p)
    filled = np.where(missing, np.inf, p)
    order = np.argsort(filled, axis=1, kind="mergesort")
    ranked = np.take_along_axis(filled, order, axis=1)
    m = (~missing).sum(axis=1, keepdims=True)
    finite = np.isfinite(ranked)
    scaled = np.where(finite, (m - np.arange(p.shape[1])[None, :]) * np.where(finite, ranked, 0.0), np.inf)
    stepped = np.minimum(np.maximum.accumulate(scaled, axis=1), 1.0)
    out = np.empty_like(p)
    np.put_along_axis(out, order, stepped, axis=1)
    return np.where(missing, np.nan, out)


def _mcnemar_p_or_nan(b01: np.ndarray, b10: np.ndarray) -> np.ndarray:
    """McNemar p_cc; NaN where there is no discordant pair (as the observed table: out of the Holm family)."""
    return np.where(b01 + b10 > 0, _mcnemar_p_vector(b01, b10), np.nan)


def resample_weights(n_units: int, n_resamples: int, seed: int, chunk: int | None = None) -> Iterator[np.ndarray]:
    """Bootstrap multiplicities of ``n_units`` units (draw n_units with replacement), ``chunk`` resamples at a time.

    Yields (rows, n_units) integer arrays; together they hold ``n_resamples`` rows. The draws depend only on
    (n_units, n_resamples, seed): the chunk size is derived from n_units.
    """
    rng = np.random.default_rng(seed)
    chunk = chunk or max(1, min(n_resamples, 4_000_000 // max(n_units, 1)))
    done = 0
    while done < n_resamples:
        rows = min(chunk, n_resamples - done)
        draws = rng.integers(0, n_units, size=(rows, n_units))
        flat = (np.arange(rows)[:, None] * n_units + draws).ravel()
        yield np.bincount(flat, minlength=rows * n_units).reshape(rows, n_units)
        done += rows


@dataclass(frozen=True)
class _Arms:
    """One pair's orig and black outcomes over the benchmark's full (sorted) question list."""

    keep: np.ndarray
    a_orig: np.ndarray
    b_orig: np.ndarray
    a_black: np.ndarray
    b_black: np.ndarray

    def cells(self) -> np.ndarray:
        """(questions, 4) indicators of the discordant cells b01_orig, b10_orig, b01_black, b10_black."""
        k = self.keep
        return np.column_stack(
            [
                k & ~self.a_orig & self.b_orig,
                k & self.a_orig & ~self.b_orig,
                k & ~self.a_black & self.b_black,
                k & self.a_black & ~self.b_black,
            ]
        )


def holm_pattern_stability(
    arms: list[_Arms], patterns: list[str], weights: Iterator[np.ndarray], alpha: float
) -> np.ndarray:
    """Per pair, the share of resamples (rows of question weights) whose Holm rule gives its observed pattern.

    Every resample recomputes the orig and black p_cc of every pair and Holm-adjusts them together
    (one family, NaN p-values left out), exactly as ``dissociation_table`` labels the observed data.
    """
    cells = np.hstack([arm.cells() for arm in arms]).astype(np.float64)  # (questions, 4 x pairs)
    want_orig = np.array([p in ("both", "orig only") for p in patterns])
    want_black = np.array([p in ("both", "black only") for p in patterns])
    hits = np.zeros(len(arms))
    total = 0
    for w in weights:
        counts = (w.astype(np.float64) @ cells).reshape(w.shape[0], len(arms), 4)  # exact: small integers
        p = np.empty((w.shape[0], len(arms), 2))
        p[..., 0] = _mcnemar_p_or_nan(counts[..., 0], counts[..., 1])
        p[..., 1] = _mcnemar_p_or_nan(counts[..., 2], counts[..., 3])
        adjusted = holm_rows(p.reshape(w.shape[0], -1)).reshape(p.shape)
        differs = np.nan_to_num(adjusted, nan=1.0) < alpha
        hits += ((differs[..., 0] == want_orig) & (differs[..., 1] == want_black)).sum(axis=0)
        total += w.shape[0]
    return hits / total if total else np.full(len(arms), np.nan)


def _full_arms(pair: _Pair, keep: np.ndarray) -> _Arms:
    def column(wide: _Wide, condition: str) -> np.ndarray:
        return wide.correct[:, wide.conditions[condition]]

    return _Arms(
        keep=keep,
        a_orig=column(pair.a, "orig"),
        b_orig=column(pair.b, "orig"),
        a_black=column(pair.a, "black"),
        b_black=column(pair.b, "black"),
    )


def _stability_units(pairs: list[_Pair], options: Options) -> tuple[int, np.ndarray | None]:
    """(number of resampling units, unit of each question or None when the unit is the question)."""
    if not options.cluster:
        return len(pairs[0].a.question_ids), None
    _, unit = np.unique(pairs[0].a.video_id.astype(str), return_inverse=True)
    return int(unit.max()) + 1 if unit.size else 0, unit.reshape(-1)


def dissociation_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Per pair: do the models differ with the video, without it, or both, and how stable is that."""
    rows = []
    pairs: list[_Pair] = []
    arms: list[_Arms] = []
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
            "share_black_only_unadjusted": np.nan,
            "alpha": options.alpha,
            "equivalence_margin": options.equivalence_margin,
            "stability_resamples": options.stability_resamples,
            "resample_unit": "video" if options.cluster else "question",
            "missing_policy": options.missing,
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
            row["share_black_only_unadjusted"] = float(((p_o >= options.alpha) & (p_b < options.alpha)).mean())
        rows.append(row)
        pairs.append(pair)
        arms.append(_full_arms(pair, keep))
    if not rows:
        return empty(DISSOCIATION_COLUMNS)
    table = _holm_by(pd.DataFrame(rows), ["p_orig", "p_black"], ["p_holm_orig", "p_holm_black"])
    table["differs_orig"] = table["p_holm_orig"] < options.alpha
    table["differs_black"] = table["p_holm_black"] < options.alpha
    table["pattern"] = [_pattern(o, b) for o, b in zip(table["differs_orig"], table["differs_black"], strict=True)]
    table["dissociation"] = table["differs_orig"] != table["differs_black"]
    for benchmark in table["benchmark"].unique():
        idx = np.flatnonzero((table["benchmark"] == benchmark).to_numpy())
        family = [pairs[i] for i in idx]
        n_units, unit = _stability_units(family, options)
        if n_units == 0:
            continue
        weights = resample_weights(n_units, options.stability_resamples, options.seed_for("dissociation", benchmark))
        if unit is not None:
            weights = (w[:, unit] for w in weights)
        shares = holm_pattern_stability(
            [arms[i] for i in idx], [str(table["pattern"].iat[i]) for i in idx], weights, options.alpha
        )
        table.loc[table.index[idx], "share_pattern"] = shares
    return table[list(DISSOCIATION_COLUMNS)]


ANALYSES = (
    Analysis(
        "mcnemar",
        "Every model pair on every shared condition: accuracies, paired CI of the difference, McNemar with Holm.",
        COLUMNS,
        mcnemar_table,
        min_models=2,
        shares=(_wides,),
    ),
    Analysis(
        "dissociation",
        "Per model pair: McNemar on orig and black, Holm-adjusted, TOST, and the bootstrap stability of the pattern.",
        DISSOCIATION_COLUMNS,
        dissociation_table,
        needs=conditions_needed("orig", "black"),
        min_models=2,
        shares=(_wides,),
    ),
)
