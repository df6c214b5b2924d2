"""Per condition: how many questions were answered, unparsed, or failed."""

from __future__ import annotations

import pandas as pd

from postprocess.analyses.base import Analysis, ReportSettings

#: Above this share of unparsed answers a run measures format compliance, not comprehension.
UNPARSED_FLAG = 0.05

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "condition name",
    "n": "questions logged",
    "n_ok": "answers with a readable letter",
    "n_unparsed": "answers with no readable letter (scored wrong)",
    "n_error": "questions with no answer (missing or undecodable video)",
    "acc": "accuracy over the answered questions (ok + unparsed)",
    "unparsed_rate": "n_unparsed / (n_ok + n_unparsed)",
    "flag": "'unparsed' when unparsed_rate exceeds 5%, 'errors' when n_error > 0, else ''",
}


def coverage_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    counts = (
        frame.assign(
            ok=frame["status"] == "ok",
            unparsed=frame["status"] == "unparsed",
            err=frame["status"] == "error",
            hit=frame["correct"].fillna(False).astype(bool),
        )
        .groupby(["model", "benchmark", "condition"], sort=True)
        .agg(
            n=("question_id", "size"),
            n_ok=("ok", "sum"),
            n_unparsed=("unparsed", "sum"),
            n_error=("err", "sum"),
            n_correct=("hit", "sum"),
        )
        .reset_index()
    )
    answered = counts["n_ok"] + counts["n_unparsed"]
    counts["acc"] = counts["n_correct"] / answered.where(answered > 0)
    counts["unparsed_rate"] = counts["n_unparsed"] / answered.where(answered > 0)
    flags = []
    for rate, n_error in zip(counts["unparsed_rate"], counts["n_error"], strict=True):
        parts = (["unparsed"] if rate > UNPARSED_FLAG else []) + (["errors"] if n_error > 0 else [])
        flags.append(",".join(parts))
    counts["flag"] = flags
    return counts[list(COLUMNS)]


ANALYSES = (
    Analysis(
        "coverage", "Per condition: answered, unparsed and failed questions, with flags.", COLUMNS, coverage_table
    ),
)
