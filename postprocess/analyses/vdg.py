"""Visual Dependency Gap per task type: VDG(q) = correct(orig) - correct(black), in {-1, 0, +1}."""

from __future__ import annotations

import pandas as pd

from postprocess.analyses._paired import MissingPolicy, by_task_type, paired
from postprocess.stats import bootstrap_mean
from vdg_tasks.seeding import stable_seed

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "n": "questions compared (both arms answered, or errors scored wrong under missing=incorrect)",
    "acc_orig": "accuracy on the original video over the n questions",
    "acc_black": "accuracy on the black video over the n questions",
    "vdg": "mean per-question VDG = acc_orig - acc_black",
    "ci_low": "lower bound of the paired percentile bootstrap CI of vdg",
    "ci_high": "upper bound of the paired percentile bootstrap CI of vdg",
    "d": "questions with VDG = +1 (right only with the video)",
    "c": "questions with VDG = -1 (right only without it)",
    "n_error": "questions excluded because an arm has no answer (missing or undecodable video)",
    "n_unparsed": "answers among the n questions with no readable letter (scored wrong), both arms",
    "ci_level": "confidence level of the CI",
    "n_resamples": "bootstrap resamples",
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
}


def vdg_table(
    frame: pd.DataFrame,
    n_resamples: int = 2000,
    level: float = 0.95,
    missing: MissingPolicy = "exclude",
) -> pd.DataFrame:
    """VDG per (model, benchmark, task type) with Overall rows; columns as in ``COLUMNS``."""
    rows = []
    for (model, benchmark), group in frame.groupby(["model", "benchmark"], sort=True):
        table = paired(group, ["orig", "black"], missing)
        for task_type, part in by_task_type(table):
            kept = part[~part["error"]]
            gap = kept["correct_orig"].astype(int) - kept["correct_black"].astype(int)
            row = {
                "model": model,
                "benchmark": benchmark,
                "task_type": task_type,
                "n": len(kept),
                "acc_orig": kept["correct_orig"].mean() if len(kept) else float("nan"),
                "acc_black": kept["correct_black"].mean() if len(kept) else float("nan"),
                "vdg": gap.mean() if len(kept) else float("nan"),
                "ci_low": float("nan"),
                "ci_high": float("nan"),
                "d": int((gap == 1).sum()),
                "c": int((gap == -1).sum()),
                "n_error": int(part["error"].sum()),
                "n_unparsed": int(kept["unparsed_orig"].sum() + kept["unparsed_black"].sum()),
                "ci_level": level,
                "n_resamples": n_resamples,
                "missing_policy": missing,
            }
            if len(kept):
                ci = bootstrap_mean(
                    gap.to_numpy(),
                    n_resamples=n_resamples,
                    seed=stable_seed("vdg", model, benchmark, task_type),
                    level=level,
                )
                row["ci_low"], row["ci_high"] = ci.low, ci.high
            rows.append(row)
    return pd.DataFrame(rows, columns=list(COLUMNS))
