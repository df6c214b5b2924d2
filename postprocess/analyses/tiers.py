"""VDG tiers per task type, decided by the CI, and how well a predicted tier map (from another benchmark) holds.

The tier of a VDG v, with ``options.tier_low <= options.tier_high``:

- ``high``: v > tier_high
- ``mid``:  tier_low <= v <= tier_high
- ``low``:  v < tier_low (``review`` is True: the task type barely needs the video)

A row's tier is decided by its CI, not by the point estimate: the tiers of the CI's two ends.
When they agree, that is the tier; when the CI straddles a threshold the row is labelled with
every tier it spans and the thresholds straddled, e.g. ``high/mid (CI straddles 0.30)``. A
(model, benchmark, task type) with fewer than ``options.min_stratum`` questions gets the tier
``too small`` (its n in ``n``): its CI says little, and a handful of questions can give a
zero-width one. ``tier_basis`` names what decided each row.

The VDG numbers are those of ``postprocess.analyses.vdg.vdg_table`` under the same options,
with its CI (``ci_low``, ``ci_high`` as that table gives them). A ``model = "pooled"`` row per
(benchmark, task type) takes the unweighted mean of the models' VDGs (each model counts once),
when a benchmark has at least two models; it has no CI, so it has no tier either (its ``point_tier`` is
descriptive, and ``tier_basis`` says so): a tier read off a point estimate would claim what no interval
supports. It is ``too small`` when some model has fewer than ``min_stratum`` questions in the task type.

Two tables: ``tiers`` (one row per model or pooled, benchmark and task type, Overall included)
and ``tier_agreement`` (per model or pooled and benchmark: how many task types in
``options.tier_map`` land in their predicted tier; no rows when the map is empty). A task type
whose CI straddles a threshold with the predicted tier on one side, or that is too small, is
undecided: it neither agrees nor disagrees.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import numpy as np
import pandas as pd

from postprocess.analyses._paired import OVERALL, SCALE_CORRECT
from postprocess.analyses.base import Analysis, ReportSettings, conditions_needed, empty
from postprocess.analyses.categories import POOLED
from postprocess.analyses.vdg import conventions, per_question, question_set_cache, vdg_table

TIERS = ("high", "mid", "low")
#: The tier of a stratum with fewer than ``ReportSettings.min_stratum`` questions.
TOO_SMALL = "too small"
#: ``tier_basis`` values.
BASIS_CI, BASIS_NO_CI = "CI", "no CI, so no tier (point_tier is descriptive)"

COLUMNS: dict[str, str] = {
    "model": f"model label, or {POOLED!r} (mean of the models' VDGs)",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "n_models": "models behind the row (1, or the number pooled: those with questions in the task type)",
    "n": "questions compared (summed over models when pooled)",
    "n_smallest": "questions of the smallest model row behind this one (n itself unless pooled): what min_stratum "
    "is compared with",
    "vdg": "VDG (acc_orig - acc_black) of the vdg table; pooled: unweighted mean over models",
    "ci_low": "lower end of the vdg table's paired CI (its ci_method; unadjusted: each row's tier is read from its own "
    "CI, with no family-wise adjustment over the task types; empty when pooled)",
    "ci_high": "upper end of the vdg table's paired CI (unadjusted; empty when pooled)",
    "tier": "high (> tier_high), mid (tier_low to tier_high) or low (< tier_low) for both CI ends; the tiers "
    "spanned and the threshold(s) when the CI straddles one (e.g. 'high/mid (CI straddles 0.30)'); 'too small' "
    "below min_stratum questions",
    "tier_basis": f"what decided the tier: CI, too small, or {BASIS_NO_CI!r} (pooled rows, or a CI the vdg table "
    "left empty: such a row has no tier)",
    "point_tier": "tier of the point estimate vdg alone (descriptive; empty when vdg is)",
    "review": "tier is low (the whole CI below tier_low): the task type is answered about as well without the video",
    "predicted_tier": "tier predicted by tier_map for this task type (empty when unmapped)",
    "in_predicted_tier": "tier is predicted_tier (True), or predicted_tier is none of the tiers the CI spans "
    "(False); empty when unmapped, too small, or the CI spans predicted_tier and another",
    "tier_high": "threshold above which a VDG is high",
    "tier_low": "threshold below which a VDG is low",
    "min_stratum": "fewest questions a row needs for a tier",
    "ci_level": "confidence level of the CI",
    "n_resamples": "bootstrap resamples the vdg table's CI drew (0 for a score interval, an exact bootstrap or a "
    "pooled row)",
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
}

AGREEMENT_COLUMNS: dict[str, str] = {
    "model": f"model label, or {POOLED!r}",
    "benchmark": "benchmark name",
    "n_mapped": "task types of this benchmark that tier_map predicts a tier for and whose tier is decided",
    "n_agree": "mapped task types whose observed tier is the predicted one",
    "share_agree": "n_agree / n_mapped",
    "n_undecided": "mapped task types left out of n_mapped: too small, or a CI spanning the predicted tier and another",
    "n_unmapped": "task types of this benchmark that tier_map does not name",
    "off_tier": "mapped task types off their predicted tier, as 'task: predicted -> observed', joined by '; '",
    "tier_high": "threshold above which a VDG is high",
    "tier_low": "threshold below which a VDG is low",
    "missing_policy": "exclude or incorrect",
}


def tier_of(vdg: Fraction | float, options: ReportSettings) -> str | None:
    """The tier of one VDG under ``options`` (None for NaN).

    The thresholds are read as the decimals they print as (``0.3`` is 3/10), and a Fraction VDG
    is compared exactly, so 30/100 is ``mid`` under ``tier_high = 0.30``.
    """
    if not isinstance(vdg, Fraction):
        if not np.isfinite(vdg):
            return None
        vdg = Fraction(repr(float(vdg)))
    if vdg > Fraction(repr(float(options.tier_high))):
        return "high"
    if vdg < Fraction(repr(float(options.tier_low))):
        return "low"
    return "mid"


def spanned_tiers(low: float, high: float, options: ReportSettings) -> tuple[str, ...]:
    """The tiers an interval [low, high] spans, from high to low (empty when an end is NaN)."""
    top, bottom = tier_of(high, options), tier_of(low, options)
    if top is None or bottom is None:
        return ()
    return TIERS[TIERS.index(top) : TIERS.index(bottom) + 1]


def _threshold_text(value: float) -> str:
    return f"{value:.2f}" if round(value, 2) == value else repr(float(value))


def tier_label(spanned: tuple[str, ...], options: ReportSettings) -> str:
    """One tier, or the tiers spanned and the threshold(s) straddled: ``high/mid (CI straddles 0.30)``."""
    if len(spanned) == 1:
        return spanned[0]
    straddled = []
    if spanned[0] == "high":
        straddled.append(_threshold_text(options.tier_high))
    if spanned[-1] == "low":
        straddled.append(_threshold_text(options.tier_low))
    return f"{'/'.join(spanned)} (CI straddles {' and '.join(dict.fromkeys(straddled))})"


def _decide(exact: Fraction | None, low: float, high: float, n_smallest: int, options: ReportSettings):
    """(tier, tier_basis, tiers spanned) of one row: too small, by the CI, or none without a CI."""
    if exact is None:
        return None, None, ()
    if n_smallest < options.min_stratum:
        return TOO_SMALL, TOO_SMALL, ()
    spanned = spanned_tiers(low, high, options)
    if spanned:
        return tier_label(spanned, options), BASIS_CI, spanned
    return None, BASIS_NO_CI, ()


def _in_predicted(spanned: tuple[str, ...], predicted: object):
    if not isinstance(predicted, str) or not spanned:
        return pd.NA
    if predicted not in spanned:
        return False
    return True if len(spanned) == 1 else pd.NA


def _check_map(tier_map: Mapping[str, str]) -> None:
    for task_type, tier in tier_map.items():
        if tier not in TIERS:
            raise ValueError(
                f"tier_map gives task type {task_type!r} the tier {tier!r}; a tier is one of {', '.join(TIERS)}"
            )


def tiers_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Each (model, benchmark, task type) VDG with its tier, then pooled rows; columns as in ``COLUMNS``."""
    _check_map(options.tier_map)
    vdg = vdg_table(frame, options)
    if vdg.empty:
        return empty(COLUMNS)
    if (vdg["model"] == POOLED).any():
        raise ValueError(
            f"a model is labelled {POOLED!r}, the label of the pooled rows; relabel it (--predictions NAME=FILE)"
        )
    # Exact VDGs: (d - c) / n for a letter, of which the vdg column is the correctly rounded float; a graded
    # row's mean gap is no count of questions, so its float taken as the decimal it prints as.
    exact = [
        (Fraction(int(d) - int(c), int(n)) if scale == SCALE_CORRECT else Fraction(repr(float(gap)))) if n > 0 else None
        for d, c, n, gap, scale in zip(vdg["d"], vdg["c"], vdg["n"], vdg["vdg"], vdg["scale"], strict=True)
    ]
    rows = pd.DataFrame(
        {
            "model": vdg["model"],
            "benchmark": vdg["benchmark"],
            "task_type": vdg["task_type"],
            "n_models": 1,
            "n": vdg["n"],
            "n_smallest": vdg["n"],
            "exact": exact,
            "ci_low": vdg["ci_low"],
            "ci_high": vdg["ci_high"],
            "n_resamples": vdg["n_resamples"],
        }
    )
    pooled = []
    for benchmark, group in rows.groupby("benchmark", sort=True):
        if group["model"].nunique() < 2:
            continue
        for task_type, part in group.groupby("task_type", sort=False):
            answered = part[[v is not None for v in part["exact"]]]
            values = list(answered["exact"])
            pooled.append(
                {
                    "model": POOLED,
                    "benchmark": benchmark,
                    "task_type": task_type,
                    "n_models": len(values),
                    "n": int(part["n"].sum()),
                    "n_smallest": int(answered["n"].min()) if values else 0,
                    "exact": sum(values, Fraction(0)) / len(values) if values else None,
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                    "n_resamples": 0,
                }
            )
    out = pd.concat([rows, pd.DataFrame(pooled, columns=rows.columns)], ignore_index=True)
    decided = [
        _decide(v, lo, hi, int(k), options)
        for v, lo, hi, k in zip(out["exact"], out["ci_low"], out["ci_high"], out["n_smallest"], strict=True)
    ]
    out["vdg"] = [float(v) if v is not None else np.nan for v in out["exact"]]
    out["tier"] = [tier for tier, _, _ in decided]
    out["tier_basis"] = [basis for _, basis, _ in decided]
    out["point_tier"] = [tier_of(v, options) if v is not None else None for v in out["exact"]]
    out["review"] = out["tier"] == "low"
    out["predicted_tier"] = [options.tier_map.get(t) for t in out["task_type"]]
    out["in_predicted_tier"] = pd.array(
        [_in_predicted(spanned, p) for (_, _, spanned), p in zip(decided, out["predicted_tier"], strict=True)],
        dtype="boolean",
    )
    out["tier_high"] = options.tier_high
    out["tier_low"] = options.tier_low
    out["min_stratum"] = options.min_stratum
    out["ci_level"] = options.ci_level
    out["missing_policy"] = options.missing
    return out[list(COLUMNS)]


def agreement_from_tiers(tiers: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """The ``tier_agreement`` table from a ``tiers`` table (task types only, Overall left out)."""
    if not options.tier_map or tiers.empty:
        return empty(AGREEMENT_COLUMNS)
    rows = []
    for (model, benchmark), group in tiers.groupby(["model", "benchmark"], sort=False):
        types = group[(group["task_type"] != OVERALL) & group["tier"].notna()]
        predicted = types[types["predicted_tier"].notna()]
        mapped = predicted[predicted["in_predicted_tier"].notna()]
        agree = mapped["in_predicted_tier"].astype(bool)
        off = mapped[~agree]
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "n_mapped": len(mapped),
                "n_agree": int(agree.sum()),
                "share_agree": agree.mean() if len(mapped) else np.nan,
                "n_undecided": len(predicted) - len(mapped),
                "n_unmapped": len(types) - len(predicted),
                "off_tier": "; ".join(
                    f"{t}: {p} -> {o}"
                    for t, p, o in zip(off["task_type"], off["predicted_tier"], off["tier"], strict=True)
                ),
                "tier_high": options.tier_high,
                "tier_low": options.tier_low,
                **conventions(AGREEMENT_COLUMNS, options),
            }
        )
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


def tier_agreement_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """How many mapped task types land in their predicted tier; columns as in ``AGREEMENT_COLUMNS``."""
    _check_map(options.tier_map)
    if not options.tier_map:
        return empty(AGREEMENT_COLUMNS)
    return agreement_from_tiers(tiers_table(frame, options), options)


ANALYSES = (
    Analysis(
        "tiers",
        "Each task type's VDG tier (high / mid / low: review) decided by its CI (straddles named), per model and "
        "pooled; too small below min_stratum questions.",
        COLUMNS,
        tiers_table,
        needs=conditions_needed("orig", "black"),
        shares=(per_question, vdg_table, question_set_cache),
    ),
    Analysis(
        "tier_agreement",
        "How many task types land in the tier a map from another benchmark predicts.",
        AGREEMENT_COLUMNS,
        tier_agreement_table,
        shares=(per_question, vdg_table, question_set_cache),
    ),
)
