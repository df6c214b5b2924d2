"""Model against model on the same questions: McNemar per condition, and the orig/black dissociation.

A pair is two models of one benchmark, named in alphabetical order (``model_a < model_b``): renaming a
model can swap a pair's orientation (then acc_a <-> acc_b, diff -> -diff, b01 <-> b10, interaction ->
-interaction), and changes no other number.

Question sets: one function, ``_Pair.keep``, decides the questions of a pair under a condition, and every
table comparing the pair there (``mcnemar``, ``dissociation``, ``kappa``) uses it; ``question_rule`` names it.

- ``missing="exclude"``: the questions neither model has an error for, under that condition and
  under ``orig`` and ``black`` (the *anchor* conditions) where both models ran them. So the
  ``orig`` and ``black`` rows of a pair share one question set (the paper's matched 547 for
  internvl2 vs qwen2vl), and the other conditions are compared on a subset of it. The set depends on
  the pair alone: adding a model changes no pair's questions.
- ``missing="incorrect"``: every question, an error scored wrong.

Discordant-cell convention (the one ``postprocess.stats.mcnemar`` takes): ``b01`` counts questions
model_a got wrong and model_b right, ``b10`` questions model_a got right and model_b wrong.

McNemar's p (``p``, ``postprocess.stats.mcnemar_p``): 1 when b01 = b10, the exact binomial test when
b01 + b10 < 25, else the continuity-corrected chi-square; ``p_cc`` (the paper's test) and ``p_exact``
stay as columns. Holm families of ``p_holm`` (documented once, used by both tables):

- ``orig+black``: the orig and the black McNemar p of every model pair of a benchmark. ``mcnemar``'s
  orig and black rows and ``dissociation``'s p_holm_orig / p_holm_black are the same adjusted values.
- any other condition (a CRF level, ...): every model pair of the benchmark under that condition, so
  running more conditions never changes an orig/black conclusion.

A p with b01 = b10 = 0 (nothing to test) is empty and stays out of its family.

Dissociation. The descriptive ``pattern`` says where the pair differs reliably (McNemar p Holm-adjusted
in the ``orig+black`` family below alpha): 'orig only', 'black only', 'both' or 'neither'. That a
difference is significant in one condition and not in the other is no test that the two differences
differ, so the ``dissociation`` label also needs the interaction: per question
d(q) = (a_orig - b_orig) - (a_black - b_black), its mean ``interaction`` with a paired percentile
bootstrap CI (questions resampled; d lies on the integers, so ``ci_method="exact"`` computes it in
closed form), an exact sign-flip permutation p-value and its Holm adjustment over the pairs of the
benchmark. ``dissociation`` = p_holm_interaction < alpha and pattern 'orig only' or 'black only'.

``share_pattern`` is the share of bootstrap resamples in which the pattern's rule gives the same
pattern: each resample draws the benchmark's questions (or videos) once for every pair, recomputes
every McNemar p of the orig+black family and Holm-adjusts them again. A pair's pattern therefore
depends on the other pairs of its benchmark (the family), as p_holm does.

``share_black_p01``, ``share_orig_p01`` and ``share_black_only_unadjusted`` are fixed events on the
pair's own resamples, with the paper's p_cc, not label stabilities: the last one, unadjusted orig
p_cc >= alpha and black p_cc < alpha, is the stability the Accuracy Without Grounding paper reports
for its black-only dissociation (section 4.2).

Seeds (``_paired.question_set_seed``) derive from the analysis, the benchmark, the condition and the
question ids resampled, never from a model label; resampling runs on the pair in a data-determined
orientation, so a rename that swaps model_a and model_b mirrors every interval exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special as _special

from postprocess.analyses._paired import (
    SCALE_AT_THRESHOLD,
    SCALE_CORRECT,
    correct_scales,
    ordered_conditions,
    question_rule,
    question_set_seed,
)
from postprocess.analyses.base import Analysis, ReportSettings, conditions_needed, empty, memo_by_frame
from postprocess.analyses.vdg import CI_COLUMNS, as_text, ci_clusters, ci_columns, ci_or_none, conventions
from postprocess.settings import natural_sorted
from postprocess.stats import (
    BootstrapCI,
    DifferenceCI,
    holm,
    mcnemar_many,
    mcnemar_p,
    sign_flip_test,
    tost_paired,
)

#: Conditions whose question set every row of a pair shares under ``missing="exclude"``.
ANCHORS: tuple[str, ...] = ("orig", "black")
#: The Holm family of the anchor conditions' McNemar tests (``family`` column).
ANCHOR_FAMILY = "orig+black"
_PAIR = "pair"  # question_rule scope of a pair's own set


COLUMNS: dict[str, str] = {
    "model_a": "first model of the pair (alphabetically first)",
    "model_b": "second model of the pair",
    "benchmark": "benchmark name",
    "condition": "condition both models ran",
    "n": "questions compared (question_rule): no error for either model under this condition, orig and black "
    "(missing_policy=exclude), or all (incorrect); kappa reports the same set",
    "n_excluded": "questions dropped because either model has an error under this condition, orig or black",
    "question_rule": "which questions the row compares (the pair's own set)",
    "acc_a": "model_a's accuracy over the n questions",
    "acc_b": "model_b's accuracy over the n questions",
    "diff": "acc_a - acc_b",
    "diff_ci_low": "lower bound of the paired CI of diff (ci_method; unadjusted, beside a Holm-adjusted p)",
    "diff_ci_high": "upper bound of the paired CI of diff",
    "ci_method": CI_COLUMNS["ci_method"],
    "mc_se": CI_COLUMNS["mc_se"],
    "b00": "questions both models got wrong",
    "b01": "questions model_a got wrong and model_b right",
    "b10": "questions model_a got right and model_b wrong",
    "b11": "questions both models got right",
    "chi2_cc": "McNemar chi-square with continuity correction, (|b01 - b10| - 1)^2 / (b01 + b10); "
    "empty when b01 = b10 = 0",
    "p_cc": "p-value of chi2_cc (chi-square, 1 df), the paper's test",
    "p_exact": "exact McNemar p-value (two-sided binomial test of b01 in b01 + b10 at 0.5)",
    "p": "McNemar p-value: 1 when b01 = b10, p_exact when b01 + b10 < 25, else p_cc; empty when b01 = b10 = 0",
    "test": "the test behind p: 'exact binomial' or 'chi-square (continuity corrected)'",
    "family": "the Holm family of p_holm: 'orig+black' (the orig and black p of every pair of the benchmark, "
    "shared with dissociation) or the condition (every pair of the benchmark under it)",
    "p_holm": "p Holm-adjusted over its family (rows of the benchmark with this family and a p)",
    "n_family": "number of p-values in the Holm family of p_holm",
    "ci_level": "confidence level of the CI",
    "n_resamples": CI_COLUMNS["n_resamples"],
    "resample_unit": CI_COLUMNS["resample_unit"],
    "missing_policy": "exclude or incorrect",
    "scale": f"{SCALE_CORRECT!r}, or {SCALE_AT_THRESHOLD!r} for a benchmark with graded questions",
}

DISSOCIATION_COLUMNS: dict[str, str] = {
    "model_a": "first model of the pair (alphabetically first)",
    "model_b": "second model of the pair",
    "benchmark": "benchmark name",
    "n": "questions compared (the pair's shared orig/black set, question_rule; mcnemar's orig and black n)",
    "n_excluded": "questions dropped because either model has an error under orig or black",
    "question_rule": "which questions the row compares (the pair's own set)",
    "acc_a_orig": "model_a's accuracy on orig",
    "acc_b_orig": "model_b's accuracy on orig",
    "acc_a_black": "model_a's accuracy on black",
    "acc_b_black": "model_b's accuracy on black",
    "b01_orig": "orig: questions model_a got wrong and model_b right",
    "b10_orig": "orig: questions model_a got right and model_b wrong",
    "b01_black": "black: questions model_a got wrong and model_b right",
    "b10_black": "black: questions model_a got right and model_b wrong",
    "p_orig": "McNemar p on orig (mcnemar's p: exact when b01 + b10 < 25, 1 when b01 = b10; empty when b01 = b10 = 0)",
    "p_black": "McNemar p on black (as p_orig)",
    "p_holm_orig": "p_orig Holm-adjusted over the orig+black family: the orig and black p of every pair of this "
    "benchmark (mcnemar's p_holm of that row)",
    "p_holm_black": "p_black Holm-adjusted over the same family",
    "n_family": "number of p-values in that Holm family",
    "differs_orig": "p_holm_orig < alpha (the models differ reliably with the video)",
    "differs_black": "p_holm_black < alpha (they differ reliably without it)",
    "pattern": "descriptive: where they differ reliably: 'orig only', 'black only', 'both' or 'neither'",
    "interaction": "mean over the n questions of d = (a_orig - b_orig) - (a_black - b_black) (correct = 1): "
    "how much more model_a leads with the video than without it",
    "interaction_ci_low": "lower bound of the paired percentile bootstrap CI of interaction (see ci_method; "
    "unadjusted: dissociation is decided on p_holm_interaction, so a CI that excludes 0 can sit beside "
    "dissociation = False)",
    "interaction_ci_high": "upper bound of that CI",
    "n_interaction_nonzero": "questions with d != 0 (the only ones the sign-flip test draws on)",
    "p_interaction": "exact two-sided sign-flip permutation p-value of mean(d) = 0; empty when every d = 0",
    "p_holm_interaction": "p_interaction Holm-adjusted over the pairs of this benchmark that have one",
    "n_family_interaction": "number of p-values in the Holm family of p_holm_interaction",
    "dissociation": "p_holm_interaction < alpha and pattern 'orig only' or 'black only': the gap between the "
    "models differs reliably with and without the video, and only one of the two is reliable",
    "p_tost_orig": "TOST equivalence p-value of acc_a_orig - acc_b_orig within +-equivalence_margin "
    "(paired t; empty when all paired differences are equal)",
    "equivalent_orig": "p_tost_orig < alpha: the models' orig accuracies are equivalent within the margin",
    "p_tost_black": "TOST equivalence p-value on black",
    "equivalent_black": "p_tost_black < alpha",
    "share_black_p01": "share of the pair's stability resamples (seeded from the benchmark and the pair's "
    "questions) with unadjusted black p_cc < 0.01",
    "share_orig_p01": "share of those resamples with unadjusted orig p_cc < 0.01",
    "share_pattern": "share of stability resamples in which the rule behind pattern gives pattern again: each "
    "resample draws the benchmark's questions (videos when clustered) once for every pair, recomputes every McNemar "
    "p of the orig+black family and Holm-adjusts them (a p with b01 = b10 = 0 leaves it, as above), at alpha",
    "share_black_only_unadjusted": "share of the pair's stability resamples (those of share_black_p01) with "
    "unadjusted orig p_cc >= alpha and black p_cc < alpha, whatever pattern is: the paper's 'joint' stability of a "
    "black-only dissociation (no Holm; b01 = b10 = 0 counts as p = 1)",
    "alpha": "significance level of differs_*, dissociation and the TOST",
    "equivalence_margin": "TOST margin (difference of proportions)",
    "ci_level": "confidence level of the interaction CI",
    "ci_method": "how the interaction CI was computed: exact (closed-form bootstrap percentiles, question resampling) "
    "or monte carlo (cluster bootstrap)",
    "mc_se": "the larger estimated Monte Carlo standard error of the interaction CI's endpoints (0 when exact)",
    "n_resamples": "bootstrap resamples the interaction CI drew (0 when exact)",
    "stability_resamples": "bootstrap resamples of the question set (one draw shared by the orig and black arms)",
    "resample_unit": "the interaction CI's and the stability resamples' unit: video (a video holds several of the "
    "benchmark's questions) or question",
    "missing_policy": "exclude or incorrect",
    "scale": f"{SCALE_CORRECT!r}, or {SCALE_AT_THRESHOLD!r} for a benchmark with graded questions",
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
            f"once under condition {row['condition']!r}; de-duplicate the frame "
            f"(postprocess.reading.lmms_eval_logs.load_frame does)"
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
    return _Wide(qids, col, correct, error, as_text(video))


@dataclass(frozen=True)
class _Pair:
    benchmark: str
    model_a: str
    model_b: str
    conditions: list[str]
    a: _Wide
    b: _Wide

    def arms_of(self, condition: str) -> list[str]:
        """The conditions whose errors decide the pair's questions under ``condition``: the anchors it ran,
        then ``condition``."""
        return list(dict.fromkeys([*(c for c in ANCHORS if c in self.conditions), condition]))

    def keep(self, condition: str, missing: str) -> np.ndarray:
        """Questions compared under ``condition`` (boolean mask over the sorted question ids): the one rule of
        every table that compares the pair there."""
        if missing == "incorrect":
            return np.ones(len(self.a.question_ids), dtype=bool)
        arms = self.arms_of(condition)
        cols_a = [self.a.conditions[c] for c in arms]
        cols_b = [self.b.conditions[c] for c in arms]
        return ~(self.a.error[:, cols_a].any(axis=1) | self.b.error[:, cols_b].any(axis=1))

    def question_rule(self, condition: str, missing: str) -> str:
        return question_rule(self.arms_of(condition), missing, _PAIR)

    def arms(self, condition: str, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (
            self.a.correct[keep, self.a.conditions[condition]],
            self.b.correct[keep, self.b.conditions[condition]],
        )


#: The columns ``_wide`` reads: the frame is narrowed to them before it is grouped (groups copy every column).
_WIDE_COLUMNS = ["model", "benchmark", "condition", "question_id", "video_id", "status", "correct"]


@memo_by_frame
def paired_wides(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> list[tuple[str, dict[str, _Wide]]]:
    """Per benchmark (sorted), each model's ``_Wide`` (``options`` unused: ``memo_by_frame``'s signature)."""
    return [
        (str(benchmark), {str(m): _wide(g) for m, g in bench.groupby("model", sort=True)})
        for benchmark, bench in frame[_WIDE_COLUMNS].groupby("benchmark", sort=True)
    ]


def _pairs(frame: pd.DataFrame) -> Iterator[_Pair]:
    for benchmark, wides in paired_wides(frame):
        models = natural_sorted(wides)
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


def holm_family(condition: str) -> str:
    """The Holm family of a McNemar test under ``condition`` (within its benchmark; module docstring)."""
    return ANCHOR_FAMILY if condition in ANCHORS else condition


def _holm_within(table: pd.DataFrame, keys: list[str], pcol: str, holm_col: str, count_col: str) -> None:
    """Holm-adjust ``pcol`` within each group of ``keys`` into ``holm_col`` (NaNs stay out of the family), the
    family's size into ``count_col``; in place."""
    table[holm_col] = np.nan
    table[count_col] = 0
    for _, idx in table.groupby(keys if len(keys) > 1 else keys[0], sort=False).groups.items():
        p = table.loc[idx, pcol].to_numpy(dtype=float)
        ok = ~np.isnan(p)
        adjusted = np.full(p.shape, np.nan)
        if ok.any():
            adjusted[ok] = holm(p[ok])
        table.loc[idx, holm_col] = adjusted
        table.loc[idx, count_col] = int(ok.sum())


#: The columns of ``pair_tests``, in order.
_TEST_COLUMNS = [
    "model_a",
    "model_b",
    "benchmark",
    "condition",
    "n",
    "n_excluded",
    "question_rule",
    "acc_a",
    "acc_b",
    "diff",
    "b00",
    "b01",
    "b10",
    "b11",
    "chi2_cc",
    "p_cc",
    "p_exact",
    "p",
    "test",
    "family",
    "p_holm",
    "n_family",
]


@memo_by_frame
def pair_tests_and_sets(
    frame: pd.DataFrame, options: ReportSettings = ReportSettings()
) -> tuple[pd.DataFrame, list[tuple[_Pair, np.ndarray]]]:
    """Every model pair x shared condition: its question set (``_Pair.keep``), the four cells, McNemar and Holm
    within its family; with each row's (pair, kept-question mask). The one source of ``mcnemar``,
    ``dissociation`` and ``kappa`` rows."""
    rows, keeps = [], []
    for pair in _pairs(frame):
        for condition in pair.conditions:
            keep = pair.keep(condition, options.missing)
            ca, cb = pair.arms(condition, keep)
            b00, b01, b10, b11 = _cells(ca, cb)
            rows.append(
                {
                    "model_a": pair.model_a,
                    "model_b": pair.model_b,
                    "benchmark": pair.benchmark,
                    "condition": condition,
                    "n": int(keep.sum()),
                    "n_excluded": int((~keep).sum()),
                    "question_rule": pair.question_rule(condition, options.missing),
                    "acc_a": ca.mean() if ca.size else np.nan,
                    "acc_b": cb.mean() if cb.size else np.nan,
                    "diff": ca.mean() - cb.mean() if ca.size else np.nan,
                    "b00": b00,
                    "b01": b01,
                    "b10": b10,
                    "b11": b11,
                    "family": holm_family(condition),
                }
            )
            keeps.append((pair, keep))
    if not rows:
        return pd.DataFrame(columns=_TEST_COLUMNS), keeps
    table = pd.DataFrame(rows)
    table["chi2_cc"], table["p_cc"], table["p_exact"] = mcnemar_many(table["b01"], table["b10"])
    table["p"], table["test"] = mcnemar_p(table["b01"], table["b10"])
    _holm_within(table, ["benchmark", "family"], "p", "p_holm", "n_family")
    return table[_TEST_COLUMNS], keeps


def pair_tests(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Every model pair x shared condition of the frame: question set (n, n_excluded, question_rule), cells
    b00..b11, accuracies and McNemar with Holm (columns as ``COLUMNS`` without the CI ones). Other analyses that
    compare a pair (kappa) read their question sets and counts here. Callers must not mutate it."""
    return pair_tests_and_sets(frame, options)[0]


def _orientation(values: np.ndarray) -> int:
    """+1 or -1: the sign of the first non-zero entry (in sorted question order) of a per-question statistic that
    changes sign when the pair is swapped (+1 when all are 0). Resampling ``orientation * values`` then
    mirrors the result exactly under a swap, whatever the resampler draws."""
    nonzero = np.flatnonzero(values)
    return -1 if nonzero.size and values[nonzero[0]] < 0 else 1


def _mirrored(ci: BootstrapCI | DifferenceCI, sign: int) -> tuple[float, float]:
    return (ci.low, ci.high) if sign > 0 else (-ci.high, -ci.low)


def _ci_fields(ci: BootstrapCI | DifferenceCI | None) -> dict[str, object]:
    """The columns that say how a CI was computed (``vdg.CI_COLUMNS``; empty when there is none)."""
    return ci_columns([ci])


def mcnemar_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Every model pair x shared condition: accuracies, paired CI of the difference, McNemar with Holm."""
    tests, keeps = pair_tests_and_sets(frame, options)
    if tests.empty:
        return empty(COLUMNS)
    extra = []
    for (pair, keep), condition in zip(keeps, tests["condition"], strict=True):
        ca, cb = pair.arms(condition, keep)
        row: dict[str, object] = {"diff_ci_low": np.nan, "diff_ci_high": np.nan, **_ci_fields(None)}
        if ca.size:
            sign = _orientation(ca.astype(np.int8) - cb.astype(np.int8))
            first, second = (ca, cb) if sign > 0 else (cb, ca)
            ci = ci_or_none(
                first.astype(np.int8) - second.astype(np.int8),
                options,
                ("mcnemar", pair.benchmark, condition),
                pair.a.question_ids[keep],
                pair.a.video_id[keep],
                stratum=False,
            )
            if ci is not None:
                row["diff_ci_low"], row["diff_ci_high"] = _mirrored(ci, sign)
                row.update(_ci_fields(ci))
        extra.append(row)
    table = pd.concat([tests.reset_index(drop=True), pd.DataFrame(extra)], axis=1)
    table["ci_level"] = options.ci_level
    table["missing_policy"] = options.missing
    table["scale"] = correct_scales(frame, table["benchmark"])
    return table[list(COLUMNS)]


# ----------------------------------------------------------------------------------- dissociation


def _mcnemar_p_vector(b01: np.ndarray, b10: np.ndarray) -> np.ndarray:
    """McNemar p_cc for many (b01, b10) at once; p = 1 where there is no discordant pair."""
    total = b01 + b10
    chi2 = (np.abs(b01 - b10) - 1.0) ** 2 / np.where(total > 0, total, 1)
    # chi2.sf(x, 1) = erfc(sqrt(x / 2)); erfc is ~50 times faster than the incomplete gamma.
    return np.where(total > 0, _special.erfc(np.sqrt(chi2 / 2.0)), 1.0)


#: Joint outcome cell (8 a_orig + 4 b_orig + 2 a_black + b_black) -> the cell with model a and b swapped.
_SWAP_CELL = np.array([(c & 0b0101) << 1 | (c & 0b1010) >> 1 for c in range(16)])
#: Joint outcome cell -> its membership of b01 and b10 under orig, then b01 and b10 under black.
_DISCORDANT = np.array([[c >> 2 == 1, c >> 2 == 2, c & 3 == 1, c & 3 == 2] for c in range(16)], dtype=np.int64)


def stability_pvalues(
    correct: np.ndarray, n_resamples: int, seed: int, clusters: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """McNemar p_cc on orig and on black over bootstrap resamples of one question set.

    ``correct`` is (n, 4) boolean: columns a_orig, b_orig, a_black, b_black. A resample draws the
    units (questions, or whole clusters) with replacement once for both arms. Units are reduced to
    their counts over the 16 joint outcome cells; resampling n units is a multinomial over the
    distinct count vectors, so the cost does not grow with n. The pair is first put in a
    data-determined orientation (a and b swapped when the first question on which they differ has
    the larger cell code swapped), so swapping the columns of a and b gives the very same draws.
    Returns (p_orig, p_black), one entry per resample.
    """
    cell = correct.astype(np.int64) @ np.array([8, 4, 2, 1])
    swapped = _SWAP_CELL[cell]
    differ = np.flatnonzero(cell != swapped)
    if differ.size and swapped[differ[0]] < cell[differ[0]]:
        cell = swapped
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
    # Only the four discordant counts: exact integers (far below 2**53) whatever the order they are summed in.
    b = draws @ (patterns @ _DISCORDANT).astype(float)
    return _mcnemar_p_vector(b[:, 0], b[:, 1]), _mcnemar_p_vector(b[:, 2], b[:, 3])


def _pattern(orig: bool, black: bool) -> str:
    return {(True, True): "both", (True, False): "orig only", (False, True): "black only"}.get((orig, black), "neither")


def _tost_or_nan(ca: np.ndarray, cb: np.ndarray, options: ReportSettings) -> tuple[float, bool]:
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


def discordant_cells(pair: _Pair, condition: str, keep: np.ndarray) -> np.ndarray:
    """(questions, 2) indicators of the test's discordant cells b01, b10 over the benchmark's full (sorted)
    question list; a question outside ``keep`` is in neither."""
    a = pair.a.correct[:, pair.a.conditions[condition]]
    b = pair.b.correct[:, pair.b.conditions[condition]]
    return np.column_stack([keep & ~a & b, keep & a & ~b])


def holm_pattern_stability(
    cells: np.ndarray, tests: np.ndarray, patterns: list[str], weights: Iterator[np.ndarray], alpha: float
) -> np.ndarray:
    """Per pair, the share of resamples (rows of question weights) whose Holm rule gives its observed pattern.

    ``cells`` is (questions, 2 x family) : the b01 and b10 indicators (``discordant_cells``) of every McNemar
    test of the family; ``tests`` is (pairs, 2): the family index of each pair's orig and black test. Every
    resample recomputes every test's McNemar p (``stats.mcnemar_p``) and Holm-adjusts them together (one family,
    NaN p-values left out), exactly as ``dissociation_table`` labels the observed data.
    """
    cells = cells.astype(np.float64)
    family = cells.shape[1] // 2
    want_orig = np.array([p in ("both", "orig only") for p in patterns])
    want_black = np.array([p in ("both", "black only") for p in patterns])
    hits = np.zeros(len(patterns))
    total = 0
    for w in weights:
        counts = (w.astype(np.float64) @ cells).reshape(w.shape[0], family, 2)  # exact: small integers
        p, _ = mcnemar_p(counts[..., 0], counts[..., 1])
        differs = np.nan_to_num(holm_rows(p), nan=1.0) < alpha
        hits += ((differs[:, tests[:, 0]] == want_orig) & (differs[:, tests[:, 1]] == want_black)).sum(axis=0)
        total += w.shape[0]
    return hits / total if total else np.full(len(patterns), np.nan)


def _stability_units(
    question_ids: np.ndarray, video_id: np.ndarray, options: ReportSettings
) -> tuple[int, np.ndarray | None]:
    """(number of resampling units, unit of each question or None when the unit is the question): the video where
    ``vdg.ci_clusters`` clusters these questions."""
    clusters = ci_clusters(video_id, question_ids, options)
    if clusters is None:
        return len(question_ids), None
    _, unit = np.unique(clusters.astype(str), return_inverse=True)
    return int(unit.max()) + 1 if unit.size else 0, unit.reshape(-1)


def _interaction(pair: _Pair, keep: np.ndarray, options: ReportSettings) -> dict[str, object]:
    """Mean of d = (a_orig - b_orig) - (a_black - b_black) over the kept questions, its CI and sign-flip test."""
    ao, bo = pair.arms("orig", keep)
    ab, bb = pair.arms("black", keep)
    d = (ao.astype(np.int64) - bo) - (ab.astype(np.int64) - bb)
    out: dict[str, object] = {
        "interaction": np.nan,
        "interaction_ci_low": np.nan,
        "interaction_ci_high": np.nan,
        "n_interaction_nonzero": int(np.count_nonzero(d)),
        "p_interaction": np.nan,
        **_ci_fields(None),
    }
    if not d.size:
        return out
    sign = _orientation(d)
    # d is a difference of two differences (-2..2), not of two 0/1 outcomes: a bootstrap CI, never Tango's.
    ci = ci_or_none(
        sign * d,
        options,
        ("dissociation", pair.benchmark, "interaction"),
        pair.a.question_ids[keep],
        pair.a.video_id[keep],
        difference=False,
        stratum=False,
    )
    test = sign_flip_test(d)
    out["interaction"] = test.estimate
    if ci is not None:
        out["interaction_ci_low"], out["interaction_ci_high"] = _mirrored(ci, sign)
    out["p_interaction"] = test.p_value if test.n_nonzero else np.nan
    out.update(_ci_fields(ci))
    return out


def dissociation_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Per pair: do the models differ with the video, without it, or both, is that difference itself
    reliable (the interaction), and how stable is the pattern."""
    tests, keeps = pair_tests_and_sets(frame, options)
    if tests.empty:
        return empty(DISSOCIATION_COLUMNS)
    index = {
        key: i
        for i, key in enumerate(
            zip(tests["benchmark"], tests["model_a"], tests["model_b"], tests["condition"], strict=True)
        )
    }
    rows = []
    members: list[tuple[int, int]] = []  # each row's orig and black test (row of ``tests``)
    for pair in _pairs(frame):
        if not set(ANCHORS) <= set(pair.conditions):
            continue
        i_orig = index[(pair.benchmark, pair.model_a, pair.model_b, "orig")]
        i_black = index[(pair.benchmark, pair.model_a, pair.model_b, "black")]
        orig, black = tests.iloc[i_orig], tests.iloc[i_black]
        keep = keeps[i_orig][1]
        ao, bo = pair.arms("orig", keep)
        ab, bb = pair.arms("black", keep)
        p_tost_o, eq_o = _tost_or_nan(ao, bo, options)
        p_tost_b, eq_b = _tost_or_nan(ab, bb, options)
        row = {
            "model_a": pair.model_a,
            "model_b": pair.model_b,
            "benchmark": pair.benchmark,
            "n": int(orig["n"]),
            "n_excluded": int(orig["n_excluded"]),
            "acc_a_orig": orig["acc_a"],
            "acc_b_orig": orig["acc_b"],
            "acc_a_black": black["acc_a"],
            "acc_b_black": black["acc_b"],
            "b01_orig": int(orig["b01"]),
            "b10_orig": int(orig["b10"]),
            "b01_black": int(black["b01"]),
            "b10_black": int(black["b10"]),
            "p_orig": orig["p"],
            "p_black": black["p"],
            "p_holm_orig": orig["p_holm"],
            "p_holm_black": black["p_holm"],
            "n_family": int(orig["n_family"]),
            **_interaction(pair, keep, options),
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
            **conventions(DISSOCIATION_COLUMNS, options, rule=orig["question_rule"], later=("scale", *CI_COLUMNS)),
        }
        if ao.size:
            p_o, p_b = stability_pvalues(
                np.column_stack([ao, bo, ab, bb]),
                options.stability_resamples,
                question_set_seed(
                    options, "dissociation", pair.benchmark, _PAIR, question_ids=pair.a.question_ids[keep]
                ),
                clusters=ci_clusters(pair.a.video_id[keep], pair.a.question_ids[keep], options),
            )
            row["share_black_p01"] = float((p_b < 0.01).mean())
            row["share_orig_p01"] = float((p_o < 0.01).mean())
            row["share_black_only_unadjusted"] = float(((p_o >= options.alpha) & (p_b < options.alpha)).mean())
        rows.append(row)
        members.append((i_orig, i_black))
    if not rows:
        return empty(DISSOCIATION_COLUMNS)
    table = pd.DataFrame(rows)
    _holm_within(table, ["benchmark"], "p_interaction", "p_holm_interaction", "n_family_interaction")
    table["differs_orig"] = table["p_holm_orig"] < options.alpha
    table["differs_black"] = table["p_holm_black"] < options.alpha
    table["pattern"] = [_pattern(o, b) for o, b in zip(table["differs_orig"], table["differs_black"], strict=True)]
    table["dissociation"] = (table["p_holm_interaction"] < options.alpha) & table["pattern"].isin(
        ["orig only", "black only"]
    )
    _pattern_stability(table, tests, keeps, np.array(members), options)
    table["scale"] = correct_scales(frame, table["benchmark"])
    return table[list(DISSOCIATION_COLUMNS)]


def _pattern_stability(
    table: pd.DataFrame,
    tests: pd.DataFrame,
    keeps: list[tuple[_Pair, np.ndarray]],
    members: np.ndarray,
    options: ReportSettings,
) -> None:
    """Fill ``share_pattern`` per benchmark: resample its questions, re-run the orig+black family's Holm rule."""
    for benchmark in table["benchmark"].unique():
        rows = np.flatnonzero((table["benchmark"] == benchmark).to_numpy())
        family = np.flatnonzero(((tests["benchmark"] == benchmark) & (tests["family"] == ANCHOR_FAMILY)).to_numpy())
        position = {int(t): k for k, t in enumerate(family)}
        first = keeps[int(family[0])][0]
        n_units, unit = _stability_units(first.a.question_ids, first.a.video_id, options)
        if n_units == 0:
            continue
        cells = np.hstack([discordant_cells(keeps[t][0], str(tests["condition"].iat[t]), keeps[t][1]) for t in family])
        seed = question_set_seed(options, "dissociation", benchmark, question_ids=first.a.question_ids)
        weights = resample_weights(n_units, options.stability_resamples, seed)
        if unit is not None:
            weights = (w[:, unit] for w in weights)
        pair_tests_idx = np.array([[position[int(t)] for t in members[r]] for r in rows])
        shares = holm_pattern_stability(
            cells, pair_tests_idx, [str(table["pattern"].iat[r]) for r in rows], weights, options.alpha
        )
        table.loc[table.index[rows], "share_pattern"] = shares


ANALYSES = (
    Analysis(
        "mcnemar",
        "Every model pair on every shared condition: accuracies, paired CI of the difference, McNemar with Holm.",
        COLUMNS,
        mcnemar_table,
        min_models=2,
        shares=(paired_wides, pair_tests_and_sets),
    ),
    Analysis(
        "dissociation",
        "Per model pair: McNemar on orig and black (Holm), the interaction test of the two gaps, TOST, and the "
        "bootstrap stability of the pattern.",
        DISSOCIATION_COLUMNS,
        dissociation_table,
        needs=conditions_needed("orig", "black"),
        min_models=2,
        shares=(paired_wides, pair_tests_and_sets),
    ),
)
