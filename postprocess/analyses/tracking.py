"""Character tracking: is a score earned by following the named character through the video?

The protocol perturbs one thing at a time and compares with ``orig`` on the same questions:

- ``black`` (text only), ``oracle`` (one frame per ground-truth outfit window), ``subtitles``
  (dialogue added), ``abstain`` (an option "I cannot determine this from the video." added) and
  ``nameswap`` (the named character replaced by another main character; video and options unchanged,
  scored against the *original* key): ``tracking_tests`` (McNemar and Cohen's h per comparison);
- ``nameswap`` again, by letter: a model that conditions on the name changes its letter when the
  name changes, a name-blind model never does (``name_swap``, ``name_swap_pairs``);
- ``metadata`` (show and episode title and the question only): accuracy against chance, a
  contamination check (``metadata_chance``);
- ``open`` (options removed, a free-text answer scored 0 / 0.5 / 1 by a judge): against orig
  multiple choice (``open_ended``);
- ``abstain``: how often each kind of abstention is picked (``abstention``);
- frame budgets (model labels whose runs differ in frames per video): ``frame_budget``.

Only a benchmark on which the protocol ran has rows: one where some model ran a condition of the protocol beyond
orig and black (``TRACKING_CONDITIONS``: oracle, subtitles, nameswap, abstain, metadata, open). ``full_vs_text``
(orig against black) and ``frame_budget`` (orig by frames) would otherwise fill the character-tracking tables
with rows of any benchmark run on orig and black (Video-MME, MVBench), on which no tracking was done.

Conventions shared by every table here:

- Everything is per (model, benchmark); two conditions are paired on ``question_id`` within it (a
  question one arm lacks is not compared). Under ``missing="exclude"`` a question with an ``error``
  row in either arm is dropped from both (``n_excluded``); under ``"incorrect"`` an error is scored
  wrong (and, for ``open``, scored 0).
- Only these analyses see the ``open`` condition: ``postprocess.analyses.run_all`` gives every other
  analysis the frame without it (its rows have no letter and no ``correct`` flag).
- The protocol's columns (``character``, ``swap_to``, ``swap_gender``, ``abstain_letter``,
  ``idk_letter``, ``judge_score``, ``judge``, ``duration_s``, ``frames``) are read when present; a
  frame without one reads as "not known" (empty text, NaN).
- A model lacking a condition a table needs is left out and named in the ``skipped`` table
  (``needs``: "no name_swap for m: nameswap not run", or "... for any model of B" when none ran it);
  a table no model can enter is empty, as every analysis's is when its conditions are absent
  (``base.Analysis``), so a plain orig/black run skips nothing. ``ValueError`` (the table is skipped,
  with the reason) is kept for data that is there but unusable: open-ended answers nobody judged, a
  judge score outside [0, 1], a question twice under one condition.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from postprocess.analyses.base import Analysis, ReportSettings, conditions_needed, empty, memo_by_frame
from postprocess.analyses.vdg import conventions
from postprocess.reading.answer_options import option_counts
from postprocess.stats import binomial_test, cohen_h, mcnemar, wilson
from vdg_tasks.vocabulary.conditions import core_measured
from vdg_tasks.vocabulary.record import OPEN_STATUS

#: The protocol's roles, each the core condition declaring its measure (``Condition.measure``).
ORACLE = core_measured("window_frames")
SUBTITLES = core_measured("text_context")
NAME_SWAP = core_measured("swap_sensitivity")
ABSTAIN = core_measured("abstention")
OPEN = core_measured("judged_answer")
TITLE_ONLY = core_measured("title_chance")

#: (comparison, condition a, condition b) of ``tracking_tests``: a is the first-named arm.
COMPARISONS: tuple[tuple[str, str, str], ...] = (
    ("full_vs_text", "orig", "black"),
    (ORACLE, ORACLE, "orig"),
    (SUBTITLES, SUBTITLES, "orig"),
    (f"{NAME_SWAP}_accuracy", NAME_SWAP, "orig"),
    (f"{ABSTAIN}_accuracy", ABSTAIN, "orig"),
)
#: Text columns of the protocol: "" when absent or not applicable.
TEXT_COLUMNS: tuple[str, ...] = ("character", "swap_to", "swap_gender", "abstain_letter", "idk_letter", "judge")
#: Numeric columns of the protocol: NaN when absent or not applicable.
NUMBER_COLUMNS: tuple[str, ...] = ("duration_s", "frames", "judge_score")
#: Name-swap splits by the genders of the original and the replacement character.
SPLITS: tuple[str, ...] = ("all", "same", "cross")
#: Statuses of a multiple-choice answer (``open`` is the free-text one).
_ANSWERED = ("ok", "unparsed")

UNJUDGED_MESSAGE = (
    "open-ended answers are not judged: run `vdg report --judge offline` (deterministic token overlap) or "
    "`--judge api` with VDG_JUDGE_BASE_URL and VDG_JUDGE_MODEL set"
)

# ------------------------------------------------------------------------------------------ columns

TESTS_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "comparison": "full_vs_text (a = orig, b = black), oracle (a = oracle, b = orig), subtitles (a = subtitles, "
    "b = orig), nameswap_accuracy (a = nameswap scored against the original key, b = orig) or abstain_accuracy "
    "(a = abstain, b = orig; an abstention is wrong)",
    "condition_a": "the first-named arm's condition",
    "condition_b": "the other arm's condition",
    "n": "questions paired: answered in both arms (errors dropped under missing_policy=exclude, scored wrong under "
    "incorrect)",
    "n_excluded": "questions in both arms dropped because either arm has an error (missing_policy=exclude only)",
    "acc_a": "accuracy of condition_a over the n questions",
    "acc_a_ci_low": "lower end of the Wilson interval of acc_a",
    "acc_a_ci_high": "upper end of the Wilson interval of acc_a",
    "acc_b": "accuracy of condition_b over the n questions",
    "acc_b_ci_low": "lower end of the Wilson interval of acc_b",
    "acc_b_ci_high": "upper end of the Wilson interval of acc_b",
    "diff": "acc_a - acc_b",
    "b01": "questions wrong in condition_a and right in condition_b",
    "b10": "questions right in condition_a and wrong in condition_b",
    "p_mcnemar": "exact McNemar p-value: two-sided binomial test of b01 in b01 + b10 at 0.5 (empty when b01 = b10 = 0)",
    "cohen_h": "Cohen's h of acc_a against acc_b: 2 asin(sqrt acc_a) - 2 asin(sqrt acc_b)",
    "mean_spacing_s": "oracle row only: mean over the n questions (those with duration_s and frames known) of "
    "duration_s / frames of orig, the seconds between uniformly sampled frames; empty on other rows and when unknown",
    "ci_level": "confidence level of the intervals",
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
}

METADATA_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "n": "metadata questions scored (errors left out under missing_policy=exclude, scored wrong under incorrect)",
    "n_error": "metadata questions with no answer",
    "n_unparsed": "answers among the n with no readable letter (scored wrong)",
    "correct": "questions answered right among the n (the model saw the show and episode title and the question, "
    "no video)",
    "acc": "correct / n",
    "ci_low": "lower end of the Wilson interval of acc",
    "ci_high": "upper end of the Wilson interval of acc",
    "chance": "accuracy of uniform guessing on the n questions: the mean of 1 / (the question's number of options)",
    "n_options": "options per question when all n questions have the same count; empty when they differ",
    "p_binomial": "two-sided exact binomial test of correct in n at p = chance (exact when every question has "
    "n_options options; with mixed counts chance is their mean, which stands in for the Poisson-binomial null)",
    "ci_level": "confidence level of the interval",
    "missing_policy": "exclude or incorrect",
}

NAME_SWAP_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "split": "all; same (the question's character replaced by one of the same gender) or cross (the other "
    "gender): a same or cross row only when some question of that split is compared",
    "n": "questions answered with a readable letter in both orig and nameswap",
    "n_excluded": "questions in both conditions left out because either has no letter (error or unparsed)",
    "changed": "questions whose nameswap letter differs from the orig letter",
    "sensitivity": "changed / n: 0 for a model that ignores the name",
    "ci_low": "lower end of the Wilson interval of sensitivity",
    "ci_high": "upper end of the Wilson interval of sensitivity",
    "acc_orig": "orig accuracy over the n questions",
    "acc_swap": "nameswap accuracy over the n questions, against the original key",
    "ci_level": "confidence level of the interval",
}

PAIRS_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "character": "the character the original question names",
    "swap_to": "the character nameswap puts in its place",
    "swap_gender": "same or cross (empty when a gender is unknown)",
    "n": "questions of this swap answered with a letter in both orig and nameswap",
    "changed": "of which the letter changed",
    "sensitivity": "changed / n",
    "ci_low": "lower end of the Wilson interval of sensitivity",
    "ci_high": "upper end of the Wilson interval of sensitivity",
    "ci_level": "confidence level of the interval",
}

OPEN_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "n_mc": "questions among the n_open also scored on orig (multiple choice; errors left out under "
    "missing_policy=exclude, scored wrong under incorrect)",
    "mc_acc": "orig accuracy over the n_mc questions",
    "n_open": "open-ended answers judged (plus, under missing_policy=incorrect, errors scored 0)",
    "open_score": "mean judge score (0, 0.5 or 1) over the n_open answers",
    "open_score_mc": "mean judge score over the n_mc questions",
    "gap": "open_score_mc - mc_acc, on the same n_mc questions (negative: the options did part of the work)",
    "fully_correct": "answers among the n_open scored 1",
    "half_correct": "answers among the n_open scored 0.5",
    "n_unjudged": "open-ended answers with no judge score (not in n_open)",
    "n_error": "open-ended questions with no answer",
    "judge": "who scored the answers, from the judge column (several joined by '; '): the offline scorer is "
    "deterministic token overlap, not an LLM judge",
    "missing_policy": "exclude or incorrect",
}

ABSTAIN_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "n": "abstain questions scored (errors left out under missing_policy=exclude, scored wrong under incorrect)",
    "abstained_added": "answers picking the option vdg added, 'I cannot determine this from the video.' "
    "(pred = abstain_letter)",
    "abstained_benchmark": "answers picking the benchmark's own 'I don't know' option (pred = idk_letter)",
    "abstain_rate": "(abstained_added + abstained_benchmark) / n",
    "ci_low": "lower end of the Wilson interval of abstain_rate",
    "ci_high": "upper end of the Wilson interval of abstain_rate",
    "n_committed": "n minus the abstentions: answers that commit to an option (unparsed answers, and errors under "
    "incorrect, count here, wrong)",
    "acc_committed": "correct answers / n_committed (an abstention is never correct and is not in it)",
    "n_orig": "of the n questions, those also scored on orig (same missing policy)",
    "acc_orig": "orig accuracy over the n_orig questions; empty when orig was not run",
    "idk_rate_orig": "share of the n_orig orig answers picking the benchmark's own 'I don't know' option",
    "ci_level": "confidence level of the interval",
    "missing_policy": "exclude or incorrect",
}

BUDGET_COLUMNS: dict[str, str] = {
    "model": "model label (one label per frame budget)",
    "benchmark": "benchmark name",
    "frames": "frames per video the run used (from the model settings)",
    "n": "orig questions scored (errors left out under missing_policy=exclude, scored wrong under incorrect)",
    "correct": "orig questions answered right",
    "acc_orig": "correct / n",
    "ci_low": "lower end of the Wilson interval of acc_orig",
    "ci_high": "upper end of the Wilson interval of acc_orig",
    "mean_spacing_s": "mean over the n questions (with duration_s known) of duration_s / frames: seconds between "
    "uniformly sampled frames",
    "n_swap": "questions answered with a letter in both orig and nameswap (0 when nameswap was not run)",
    "sensitivity": "name-swap sensitivity (name_swap, split all): letters changed / n_swap; empty without nameswap",
    "sensitivity_ci_low": "lower end of its Wilson interval",
    "sensitivity_ci_high": "upper end of its Wilson interval",
    "ci_level": "confidence level of the intervals",
    "missing_policy": "exclude or incorrect",
}

# ------------------------------------------------------------------------------------------ helpers


def _text(frame: pd.DataFrame, column: str) -> pd.Series:
    """The column as str, "" where missing (or the whole column when the frame lacks it)."""
    if column not in frame.columns:
        return pd.Series("", index=frame.index, dtype=object)
    if isinstance(frame[column].dtype, pd.StringDtype):  # already text: no per-value str()
        return pd.Series(frame[column].fillna("").to_numpy(dtype=object), index=frame.index, dtype=object)
    values = frame[column].astype(object)
    return values.where(values.notna(), "").map(str).astype(object)


def _number(frame: pd.DataFrame, column: str) -> pd.Series:
    """The column as float, NaN where missing (or the whole column when the frame lacks it)."""
    if column not in frame.columns:
        return pd.Series(np.nan, index=frame.index, dtype=float)
    return pd.to_numeric(frame[column], errors="coerce").astype(float)


#: The conditions the tracking tables read; rows of any other condition are left out before they are prepared.
PROTOCOL_CONDITIONS: frozenset[str] = frozenset({c for _, a, b in COMPARISONS for c in (a, b)} | {TITLE_ONLY, OPEN})


#: The conditions only the tracking protocol runs (not orig and black, which every benchmark has): a benchmark on
#: which no model ran one of them has no row in any tracking table.
TRACKING_CONDITIONS: frozenset[str] = PROTOCOL_CONDITIONS - {"orig", "black"}


def tracking_benchmarks(frame: pd.DataFrame) -> frozenset[str]:
    """The benchmarks on which some model ran a condition of ``TRACKING_CONDITIONS``."""
    ran = frame.loc[frame["condition"].isin(TRACKING_CONDITIONS).to_numpy(), "benchmark"]
    return frozenset(str(b) for b in ran.unique())


def _protocol_rows(frame: pd.DataFrame) -> np.ndarray:
    """Boolean mask of the rows of ``PROTOCOL_CONDITIONS`` on the benchmarks of ``tracking_benchmarks``."""
    rows = frame["condition"].isin(PROTOCOL_CONDITIONS).to_numpy()
    return rows & frame["benchmark"].astype(str).isin(tracking_benchmarks(frame)).to_numpy()


@memo_by_frame
def _prepared(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """The rows of ``PROTOCOL_CONDITIONS`` on the benchmarks of ``tracking_benchmarks`` and the columns the tables
    read, the protocol's columns filled in and normalised (``options`` unused: ``memo_by_frame``'s signature; every
    tracking table reads this copy)."""
    frame = frame[_protocol_rows(frame)]
    out = pd.DataFrame(
        {
            "model": frame["model"].astype(object),
            "benchmark": frame["benchmark"].astype(object),
            "condition": frame["condition"].astype(object),
            "question_id": frame["question_id"].astype(object),
            "status": _text(frame, "status"),
            "pred": _text(frame, "pred"),
            "correct": frame["correct"].astype("boolean").fillna(False).astype(bool),
        },
        index=frame.index,
    )
    for column in TEXT_COLUMNS:
        out[column] = _text(frame, column)
    for column in NUMBER_COLUMNS:
        out[column] = _number(frame, column)
    return out


def _runs(frame: pd.DataFrame) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """(model, benchmark, its rows), sorted by model then benchmark."""
    for (model, benchmark), rows in frame.groupby(["model", "benchmark"], sort=True):
        yield str(model), str(benchmark), rows


def _arm(rows: pd.DataFrame, condition: str) -> pd.DataFrame:
    """One condition's rows of one (model, benchmark), indexed by question id."""
    arm = rows[rows["condition"] == condition]
    dup = arm["question_id"].duplicated()
    if dup.any():
        row = arm[dup].iloc[0]
        raise ValueError(
            f"model {row['model']!r} / {row['benchmark']!r}: question {row['question_id']!r} appears more than once "
            f"under condition {condition!r}; de-duplicate the frame (postprocess.reading.lmms_eval_logs.load_frame "
            f"does)"
        )
    return arm.set_index("question_id")


def _scored(arm: pd.DataFrame, missing: str) -> pd.Series:
    """Rows a multiple-choice arm scores: answered, plus errors under missing=incorrect."""
    answered = arm["status"].isin(_ANSWERED)
    return answered | (arm["status"] == "error") if missing == "incorrect" else answered


def _paired(rows: pd.DataFrame, a: str, b: str, missing: str) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """(arm a, arm b) on the questions both score, in question-id order, and the questions dropped for errors."""
    arm_a, arm_b = _arm(rows, a), _arm(rows, b)
    common = arm_a.index.intersection(arm_b.index).sort_values()
    arm_a, arm_b = arm_a.loc[common], arm_b.loc[common]
    keep = (_scored(arm_a, missing) & _scored(arm_b, missing)).to_numpy()
    errors = ((arm_a["status"] == "error") | (arm_b["status"] == "error")).to_numpy()
    return arm_a[keep], arm_b[keep], int((~keep & errors).sum())


def _interval(k: int, n: int, level: float) -> tuple[float, float, float]:
    """(k / n, Wilson low, Wilson high); NaN when n = 0."""
    if n == 0:
        return np.nan, np.nan, np.nan
    iv = wilson(int(k), int(n), level)
    return iv.estimate, iv.low, iv.high


def _mean(values: pd.Series | np.ndarray) -> float:
    values = np.asarray(values, dtype=float)
    return float(values.mean()) if values.size else np.nan


def _spacing(arm: pd.DataFrame) -> float:
    """Mean of duration_s / frames over the rows where both are known (NaN when none)."""
    spacing = (arm["duration_s"] / arm["frames"].where(arm["frames"] > 0)).dropna()
    return _mean(spacing)


def _table(rows: list[dict[str, object]], columns: dict[str, str], ints: tuple[str, ...] = ()) -> pd.DataFrame:
    table = pd.DataFrame(rows, columns=list(columns))
    for column in ints:
        table[column] = table[column].astype(np.int64)
    return table


# --------------------------------------------------------------------------------- tracking_tests


def _tests_needs(present: frozenset[str]) -> str | None:
    if "orig" not in present:
        return "orig not run"
    others = [a if a != "orig" else b for _, a, b in COMPARISONS]
    if not any(c in present for c in others):
        return f"none of {', '.join(others)} run"
    return None


def tracking_tests(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Each perturbed condition against orig (orig against black) on the same questions, on the benchmarks of
    ``tracking_benchmarks``; columns ``TESTS_COLUMNS``."""
    if frame.empty:
        return empty(TESTS_COLUMNS)
    data = _prepared(frame)
    rows: list[dict[str, object]] = []
    for model, benchmark, run in _runs(data):
        present = set(run["condition"])
        for comparison, a, b in COMPARISONS:
            if a not in present or b not in present:
                continue
            arm_a, arm_b, n_excluded = _paired(run, a, b, options.missing)
            ca = arm_a["correct"].to_numpy() & arm_a["status"].isin(_ANSWERED).to_numpy()
            cb = arm_b["correct"].to_numpy() & arm_b["status"].isin(_ANSWERED).to_numpy()
            n = len(ca)
            acc_a, a_low, a_high = _interval(int(ca.sum()), n, options.ci_level)
            acc_b, b_low, b_high = _interval(int(cb.sum()), n, options.ci_level)
            b01, b10 = int((~ca & cb).sum()), int((ca & ~cb).sum())
            rows.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "comparison": comparison,
                    "condition_a": a,
                    "condition_b": b,
                    "n": n,
                    "n_excluded": n_excluded,
                    "acc_a": acc_a,
                    "acc_a_ci_low": a_low,
                    "acc_a_ci_high": a_high,
                    "acc_b": acc_b,
                    "acc_b_ci_low": b_low,
                    "acc_b_ci_high": b_high,
                    "diff": acc_a - acc_b,
                    "b01": b01,
                    "b10": b10,
                    "p_mcnemar": mcnemar(b01, b10).p_exact if b01 + b10 else np.nan,
                    "cohen_h": cohen_h(acc_a, acc_b) if n else np.nan,
                    "mean_spacing_s": _spacing(arm_b) if comparison == ORACLE else np.nan,
                    **conventions(TESTS_COLUMNS, options),
                }
            )
    return _table(rows, TESTS_COLUMNS, ("n", "n_excluded", "b01", "b10"))


# -------------------------------------------------------------------------------- metadata_chance


def metadata_chance(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Accuracy with only the show/episode title and the question, against chance; columns ``METADATA_COLUMNS``."""
    if frame.empty or not (frame["condition"] == TITLE_ONLY).any():
        return empty(METADATA_COLUMNS)
    data = _prepared(frame).assign(_options=option_counts(frame).astype(float).to_numpy()[_protocol_rows(frame)])
    rows: list[dict[str, object]] = []
    for model, benchmark, run in _runs(data):
        arm = run[run["condition"] == TITLE_ONLY]
        if arm.empty:
            continue
        scored = _scored(arm, options.missing)
        counted = arm[scored]
        n = len(counted)
        correct = int((counted["correct"] & counted["status"].isin(_ANSWERED)).sum())
        acc, low, high = _interval(correct, n, options.ci_level)
        chance = _mean(1.0 / counted["_options"]) if n else np.nan
        counts = counted["_options"].unique()
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "n": n,
                "n_error": int((arm["status"] == "error").sum()),
                "n_unparsed": int((counted["status"] == "unparsed").sum()),
                "correct": correct,
                "acc": acc,
                "ci_low": low,
                "ci_high": high,
                "chance": chance,
                "n_options": int(counts[0]) if len(counts) == 1 else pd.NA,
                "p_binomial": binomial_test(correct, n, chance).p_value if n else np.nan,
                **conventions(METADATA_COLUMNS, options),
            }
        )
    table = _table(rows, METADATA_COLUMNS, ("n", "n_error", "n_unparsed", "correct"))
    table["n_options"] = table["n_options"].astype("Int64")
    return table


# ------------------------------------------------------------------------------------- name swap


def _swap_pairs(run: pd.DataFrame) -> pd.DataFrame:
    """One row per question in both orig and nameswap (question-id order); ``letters``: a letter in both."""
    orig, swap = _arm(run, "orig"), _arm(run, NAME_SWAP)
    common = orig.index.intersection(swap.index).sort_values()
    orig, swap = orig.loc[common], swap.loc[common]
    letters = (orig["status"] == "ok") & (swap["status"] == "ok") & (orig["pred"] != "") & (swap["pred"] != "")
    character = swap["character"].where(swap["character"] != "", orig["character"])
    return pd.DataFrame(
        {
            "character": character.to_numpy(dtype=object),
            "swap_to": swap["swap_to"].to_numpy(dtype=object),
            "swap_gender": swap["swap_gender"].to_numpy(dtype=object),
            "letters": letters.to_numpy(dtype=bool),
            "changed": (orig["pred"] != swap["pred"]).to_numpy(dtype=bool),
            "correct_orig": orig["correct"].to_numpy(dtype=bool),
            "correct_swap": swap["correct"].to_numpy(dtype=bool),
        },
        index=common,
    )


def _sensitivity(pairs: pd.DataFrame, level: float) -> dict[str, object]:
    n = len(pairs)
    changed = int(pairs["changed"].sum())
    value, low, high = _interval(changed, n, level)
    return {"n": n, "changed": changed, "sensitivity": value, "ci_low": low, "ci_high": high}


def _swap_runs(frame: pd.DataFrame) -> Iterator[tuple[str, str, pd.DataFrame]]:
    if frame.empty or not (frame["condition"] == NAME_SWAP).any():
        return
    for model, benchmark, run in _runs(_prepared(frame)):
        if {"orig", NAME_SWAP} <= set(run["condition"]):
            yield model, benchmark, _swap_pairs(run)


def name_swap(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Name-swap sensitivity per (model, benchmark, split); columns ``NAME_SWAP_COLUMNS``."""
    rows: list[dict[str, object]] = []
    for model, benchmark, pairs in _swap_runs(frame):
        for split in SPLITS:
            every = pairs if split == "all" else pairs[pairs["swap_gender"] == split]
            part = every[every["letters"]]
            if split != "all" and part.empty:
                continue
            n = len(part)
            rows.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "split": split,
                    **_sensitivity(part, options.ci_level),
                    "n_excluded": len(every) - n,
                    "acc_orig": _mean(part["correct_orig"]) if n else np.nan,
                    "acc_swap": _mean(part["correct_swap"]) if n else np.nan,
                    **conventions(NAME_SWAP_COLUMNS, options),
                }
            )
    return _table(rows, NAME_SWAP_COLUMNS, ("n", "n_excluded", "changed"))


def name_swap_pairs(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Sensitivity per (character, replacement), most sensitive first; columns ``PAIRS_COLUMNS``."""
    rows: list[dict[str, object]] = []
    for model, benchmark, pairs in _swap_runs(frame):
        for (character, swap_to, gender), part in pairs[pairs["letters"]].groupby(
            ["character", "swap_to", "swap_gender"], sort=True
        ):
            rows.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "character": character,
                    "swap_to": swap_to,
                    "swap_gender": gender,
                    **_sensitivity(part, options.ci_level),
                    **conventions(PAIRS_COLUMNS, options),
                }
            )
    table = _table(rows, PAIRS_COLUMNS, ("n", "changed"))
    if len(table):
        table = table.sort_values(
            ["model", "benchmark", "sensitivity", "n", "character", "swap_to"],
            ascending=[True, True, False, False, True, True],
            kind="stable",
        ).reset_index(drop=True)
    return table


# ------------------------------------------------------------------------------------ open ended


def open_ended(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Judged free-text answers against orig multiple choice on the same questions; columns ``OPEN_COLUMNS``."""
    if frame.empty or not (frame["condition"] == OPEN).any():
        return empty(OPEN_COLUMNS)
    data = _prepared(frame)
    answers = data[(data["condition"] == OPEN) & (data["status"] == OPEN_STATUS)]
    if len(answers) and answers["judge_score"].isna().all():
        raise ValueError(UNJUDGED_MESSAGE)
    scores = answers["judge_score"].dropna()
    if len(scores) and ((scores < 0) | (scores > 1)).any():
        row = answers.loc[scores[(scores < 0) | (scores > 1)].index[0]]
        raise ValueError(
            f"model {row['model']!r}, question {row['question_id']!r}: judge_score {row['judge_score']} is not in "
            "[0, 1] (the judge scores 0, 0.5 or 1)"
        )
    rows: list[dict[str, object]] = []
    for model, benchmark, run in _runs(data):
        arm = _arm(run, OPEN)
        if arm.empty:
            continue
        judged = (arm["status"] == OPEN_STATUS) & arm["judge_score"].notna()
        error = arm["status"] == "error"
        counted = judged | error if options.missing == "incorrect" else judged
        score = arm["judge_score"].where(judged, 0.0)[counted]
        mc_acc = open_mc = np.nan
        n_mc = 0
        if "orig" in set(run["condition"]):
            orig = _arm(run, "orig")
            orig = orig[_scored(orig, options.missing)]
            common = score.index.intersection(orig.index)
            n_mc = len(common)
            if n_mc:
                hit = orig.loc[common, "correct"] & orig.loc[common, "status"].isin(_ANSWERED)
                mc_acc, open_mc = _mean(hit), _mean(score.loc[common])
        labels = sorted({label for label in arm.loc[judged, "judge"] if label})
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "n_mc": n_mc,
                "mc_acc": mc_acc,
                "n_open": len(score),
                "open_score": _mean(score),
                "open_score_mc": open_mc,
                "gap": open_mc - mc_acc,
                "fully_correct": int((score == 1).sum()),
                "half_correct": int((score == 0.5).sum()),
                "n_unjudged": int(((arm["status"] == OPEN_STATUS) & ~judged).sum()),
                "n_error": int(error.sum()),
                "judge": "; ".join(labels),
                **conventions(OPEN_COLUMNS, options),
            }
        )
    return _table(rows, OPEN_COLUMNS, ("n_mc", "n_open", "fully_correct", "half_correct", "n_unjudged", "n_error"))


# ------------------------------------------------------------------------------------ abstention


def abstention(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """How often the model abstains when it may, and how it does when it commits; columns ``ABSTAIN_COLUMNS``."""
    if frame.empty or not (frame["condition"] == ABSTAIN).any():
        return empty(ABSTAIN_COLUMNS)
    data = _prepared(frame)
    rows: list[dict[str, object]] = []
    for model, benchmark, run in _runs(data):
        arm = _arm(run, ABSTAIN)
        if arm.empty:
            continue
        arm = arm[_scored(arm, options.missing)]
        has_letter = (arm["status"] == "ok") & (arm["pred"] != "")
        added = has_letter & (arm["abstain_letter"] != "") & (arm["pred"] == arm["abstain_letter"])
        own = has_letter & ~added & (arm["idk_letter"] != "") & (arm["pred"] == arm["idk_letter"])
        abstained = added | own
        committed = arm[~abstained]
        n = len(arm)
        rate, low, high = _interval(int(abstained.sum()), n, options.ci_level)
        hit = committed["correct"] & committed["status"].isin(_ANSWERED)
        n_orig, acc_orig, idk_orig = 0, np.nan, np.nan
        if "orig" in set(run["condition"]):
            orig = _arm(run, "orig")
            orig = orig[_scored(orig, options.missing)]
            orig = orig.loc[orig.index.intersection(arm.index)]
            n_orig = len(orig)
            if n_orig:
                acc_orig = _mean(orig["correct"] & orig["status"].isin(_ANSWERED))
                picked = (orig["status"] == "ok") & (orig["idk_letter"] != "") & (orig["pred"] == orig["idk_letter"])
                idk_orig = _mean(picked)
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "n": n,
                "abstained_added": int(added.sum()),
                "abstained_benchmark": int(own.sum()),
                "abstain_rate": rate,
                "ci_low": low,
                "ci_high": high,
                "n_committed": len(committed),
                "acc_committed": _mean(hit) if len(committed) else np.nan,
                "n_orig": n_orig,
                "acc_orig": acc_orig,
                "idk_rate_orig": idk_orig,
                **conventions(ABSTAIN_COLUMNS, options),
            }
        )
    return _table(rows, ABSTAIN_COLUMNS, ("n", "abstained_added", "abstained_benchmark", "n_committed", "n_orig"))


# ----------------------------------------------------------------------------------- frame budget


def frame_budget(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Orig accuracy (and name-swap sensitivity) by frames per video; columns ``BUDGET_COLUMNS``.

    Empty when no orig run states its frames (the ``frames`` column, parsed from the model settings), and no row
    for a benchmark the protocol did not run on (``tracking_benchmarks``).
    """
    if frame.empty:
        return empty(BUDGET_COLUMNS)
    data = _prepared(frame)
    if not ((data["condition"] == "orig") & data["frames"].notna()).any():
        return empty(BUDGET_COLUMNS)
    rows: list[dict[str, object]] = []
    for model, benchmark, run in _runs(data):
        arm = _arm(run, "orig")
        budgets = sorted(arm["frames"].dropna().unique())
        if not budgets:
            continue
        swap = None
        if NAME_SWAP in set(run["condition"]):
            swap = _swap_pairs(run)
            swap = swap[swap["letters"]]
        for frames in budgets:
            part = arm[arm["frames"] == frames]
            counted = part[_scored(part, options.missing)]
            n = len(counted)
            correct = int((counted["correct"] & counted["status"].isin(_ANSWERED)).sum())
            acc, low, high = _interval(correct, n, options.ci_level)
            sens: dict[str, object] = {"n": 0, "sensitivity": np.nan, "ci_low": np.nan, "ci_high": np.nan}
            if swap is not None:
                sens = _sensitivity(swap.loc[swap.index.intersection(part.index)], options.ci_level)
            rows.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "frames": int(frames),
                    "n": n,
                    "correct": correct,
                    "acc_orig": acc,
                    "ci_low": low,
                    "ci_high": high,
                    "mean_spacing_s": _spacing(counted),
                    "n_swap": sens["n"],
                    "sensitivity": sens["sensitivity"],
                    "sensitivity_ci_low": sens["ci_low"],
                    "sensitivity_ci_high": sens["ci_high"],
                    **conventions(BUDGET_COLUMNS, options),
                }
            )
    table = _table(rows, BUDGET_COLUMNS, ("frames", "n", "correct", "n_swap"))
    return table.sort_values(["benchmark", "frames", "model"], kind="stable").reset_index(drop=True)


ANALYSES = (
    Analysis(
        "tracking_tests",
        "Character tracking: each perturbed condition (black, oracle, subtitles, nameswap, abstain) against orig on "
        "the same questions, with exact McNemar and Cohen's h (only benchmarks the tracking protocol ran on).",
        TESTS_COLUMNS,
        tracking_tests,
        needs=_tests_needs,
        shares=(_prepared,),
    ),
    Analysis(
        "metadata_chance",
        "Contamination check: accuracy with only the show and episode title and the question, against chance "
        "(exact binomial test).",
        METADATA_COLUMNS,
        metadata_chance,
        needs=conditions_needed(TITLE_ONLY),
        shares=(_prepared,),
    ),
    Analysis(
        "name_swap",
        "Name-swap sensitivity: how often the answer letter changes when the named character is replaced, all "
        "questions and split by same- or cross-gender replacement.",
        NAME_SWAP_COLUMNS,
        name_swap,
        needs=conditions_needed("orig", NAME_SWAP),
        shares=(_prepared,),
    ),
    Analysis(
        "name_swap_pairs",
        "Name-swap sensitivity per original character and replacement, most sensitive first.",
        PAIRS_COLUMNS,
        name_swap_pairs,
        needs=conditions_needed("orig", NAME_SWAP),
        shares=(_prepared,),
    ),
    Analysis(
        "open_ended",
        "Options removed: the judge's mean score of the free-text answers against orig multiple-choice accuracy on "
        "the same questions, with the judge named.",
        OPEN_COLUMNS,
        open_ended,
        needs=conditions_needed(OPEN),
        shares=(_prepared,),
    ),
    Analysis(
        "abstention",
        "With an 'I cannot determine this from the video.' option added: how often the model abstains (that option "
        "or the benchmark's own 'I don't know'), and its accuracy when it commits.",
        ABSTAIN_COLUMNS,
        abstention,
        needs=conditions_needed(ABSTAIN),
        shares=(_prepared,),
    ),
    Analysis(
        "frame_budget",
        "Orig accuracy and name-swap sensitivity by frames per video (model labels whose runs differ in frame "
        "budget) on the benchmarks the tracking protocol ran on; a run whose settings do not state its frames is not "
        "in it (no rows when none does).",
        BUDGET_COLUMNS,
        frame_budget,
        needs=conditions_needed("orig"),
        shares=(_prepared,),
    ),
)
