"""VDG tiers per task type, and how well a predicted tier map (from another benchmark) holds.

The tier of a VDG v, with ``options.tier_low <= options.tier_high``:

- ``high``: v > tier_high
- ``mid``:  tier_low <= v <= tier_high
- ``low``:  v < tier_low (``review`` is True: the task type barely needs the video)

The VDG numbers are those of ``postprocess.analyses.vdg.vdg_table`` under the same options
(each model on its own question set under the missing-answer policy), with its CI. A
``model = "pooled"`` row per (benchmark, task type) takes the unweighted mean of the models'
VDGs (each model counts once), when a benchmark has at least two models.

Two tables: ``tiers`` (one row per model or pooled, benchmark and task type, Overall included)
and ``tier_agreement`` (per model or pooled and benchmark: how many task types in
``options.tier_map`` land in their predicted tier; no rows when the map is empty).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import numpy as np
import pandas as pd

from postprocess.analyses._paired import OVERALL
from postprocess.analyses.base import Analysis, Options, conditions_needed, empty
from postprocess.analyses.categories import POOLED
from postprocess.analyses.vdg import per_question, vdg_table

TIERS = ("high", "mid", "low")

COLUMNS: dict[str, str] = {
    "model": f"model label, or {POOLED!r} (mean of the models' VDGs)",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "n_models": "models behind the row (1, or the number pooled: those with questions in the task type)",
    "n": "questions compared (summed over models when pooled)",
    "vdg": "VDG (acc_orig - acc_black) of the vdg table; pooled: unweighted mean over models",
    "ci_low": "lower end of the vdg table's bootstrap CI (empty when pooled)",
    "ci_high": "upper end of the vdg table's bootstrap CI (empty when pooled)",
    "tier": "high (vdg > tier_high), mid (tier_low <= vdg <= tier_high) or low (vdg < tier_low)",
    "review": "tier is low: the task type is answered about as well without the video",
    "predicted_tier": "tier predicted by tier_map for this task type (empty when unmapped)",
    "in_predicted_tier": "tier equals predicted_tier (empty when unmapped)",
    "tier_high": "threshold above which a VDG is high",
    "tier_low": "threshold below which a VDG is low",
    "ci_level": "confidence level of the CI",
    "n_resamples": "bootstrap resamples of the CI",
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
}

AGREEMENT_COLUMNS: dict[str, str] = {
    "model": f"model label, or {POOLED!r}",
    "benchmark": "benchmark name",
    "n_mapped": "task types of this benchmark that tier_map predicts a tier for",
    "n_agree": "mapped task types whose observed tier is the predicted one",
    "share_agree": "n_agree / n_mapped",
    "n_unmapped": "task types of this benchmark that tier_map does not name",
    "off_tier": "mapped task types off their predicted tier, as 'task: predicted -> observed', joined by '; '",
    "tier_high": "threshold above which a VDG is high",
    "tier_low": "threshold below which a VDG is low",
    "missing_policy": "exclude or incorrect",
}


def tier_of(vdg: Fraction | float, options: Options) -> str | None:
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


def _check_map(tier_map: Mapping[str, str]) -> None:
    for task_type, tier in tier_map.items():
        if tier not in TIERS:
            raise ValueError(
                f"tier_map gives task type {task_type!r} the tier {tier!r}; a tier is one of {', '.join(TIERS)}"
            )


def tiers_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Each (model, benchmark, task type) VDG with its tier, then pooled rows; columns as in ``COLUMNS``."""
    _check_map(options.tier_map)
    vdg = vdg_table(frame, options)
    if vdg.empty:
        return empty(COLUMNS)
    if (vdg["model"] == POOLED).any():
        raise ValueError(
            f"a model is labelled {POOLED!r}, the label of the pooled rows; relabel it (--predictions NAME=FILE)"
        )
    # Exact VDGs (d - c) / n; the vdg column of the vdg table is their correctly rounded float.
    exact = [
        Fraction(int(d) - int(c), int(n)) if n > 0 else None
        for d, c, n in zip(vdg["d"], vdg["c"], vdg["n"], strict=True)
    ]
    rows = pd.DataFrame(
        {
            "model": vdg["model"],
            "benchmark": vdg["benchmark"],
            "task_type": vdg["task_type"],
            "n_models": 1,
            "n": vdg["n"],
            "exact": exact,
            "ci_low": vdg["ci_low"],
            "ci_high": vdg["ci_high"],
        }
    )
    pooled = []
    for benchmark, group in rows.groupby("benchmark", sort=True):
        if group["model"].nunique() < 2:
            continue
        for task_type, part in group.groupby("task_type", sort=False):
            values = [v for v in part["exact"] if v is not None]
            pooled.append(
                {
                    "model": POOLED,
                    "benchmark": benchmark,
                    "task_type": task_type,
                    "n_models": len(values),
                    "n": int(part["n"].sum()),
                    "exact": sum(values, Fraction(0)) / len(values) if values else None,
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                }
            )
    out = pd.concat([rows, pd.DataFrame(pooled, columns=rows.columns)], ignore_index=True)
    out["vdg"] = [float(v) if v is not None else np.nan for v in out["exact"]]
    out["tier"] = [tier_of(v, options) if v is not None else None for v in out["exact"]]
    out["review"] = out["tier"] == "low"
    out["predicted_tier"] = [options.tier_map.get(t) for t in out["task_type"]]
    mapped = out["predicted_tier"].notna() & out["tier"].notna()
    out["in_predicted_tier"] = pd.array(
        [bool(a == b) if m else pd.NA for a, b, m in zip(out["tier"], out["predicted_tier"], mapped, strict=True)],
        dtype="boolean",
    )
    out["tier_high"] = options.tier_high
    out["tier_low"] = options.tier_low
    out["ci_level"] = options.ci_level
    out["n_resamples"] = options.n_resamples
    out["missing_policy"] = options.missing
    return out[list(COLUMNS)]


def agreement_from_tiers(tiers: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """The ``tier_agreement`` table from a ``tiers`` table (task types only, Overall left out)."""
    if not options.tier_map or tiers.empty:
        return empty(AGREEMENT_COLUMNS)
    rows = []
    for (model, benchmark), group in tiers.groupby(["model", "benchmark"], sort=False):
        types = group[(group["task_type"] != OVERALL) & group["tier"].notna()]
        mapped = types[types["predicted_tier"].notna()]
        agree = mapped["in_predicted_tier"].astype(bool)
        off = mapped[~agree]
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "n_mapped": len(mapped),
                "n_agree": int(agree.sum()),
                "share_agree": agree.mean() if len(mapped) else np.nan,
                "n_unmapped": len(types) - len(mapped),
                "off_tier": "; ".join(
                    f"{t}: {p} -> {o}"
                    for t, p, o in zip(off["task_type"], off["predicted_tier"], off["tier"], strict=True)
                ),
                "tier_high": options.tier_high,
                "tier_low": options.tier_low,
                "missing_policy": options.missing,
            }
        )
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


def tier_agreement_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """How many mapped task types land in their predicted tier; columns as in ``AGREEMENT_COLUMNS``."""
    _check_map(options.tier_map)
    if not options.tier_map:
        return empty(AGREEMENT_COLUMNS)
    return agreement_from_tiers(tiers_table(frame, options), options)


ANALYSES = (
    Analysis(
        "tiers",
        "Each task type's VDG tier (high / mid / low: review), per model and pooled.",
        COLUMNS,
        tiers_table,
        needs=conditions_needed("orig", "black"),
        shares=(per_question, vdg_table),
    ),
    Analysis(
        "tier_agreement",
        "How many task types land in the tier a map from another benchmark predicts.",
        AGREEMENT_COLUMNS,
        tier_agreement_table,
        shares=(per_question, vdg_table),
    ),
)
