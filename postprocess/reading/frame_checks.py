"""What the reader refuses to join: two answers to one question, two settings or question sets under one label,
runs from different exports, a question with two videos, two models under one label."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Literal

import pandas as pd

from postprocess.reading.files import LogError
from postprocess.reading.frame import (
    KEY,
    graded_rows,
    is_graded,
    original_answers,
)
from vdg_tasks.vocabulary.scoring import LETTER
from vdg_tasks.vocabulary.untrusted import redact

logger = logging.getLogger(__name__)


def _answer(row: pd.Series) -> str:
    """A row's answer as a refusal names it: its letter (a graded answer: its score and reference answer), and its
    status when that is not ok."""
    graded = "scoring" in row.index and is_graded(row["scoring"])
    if graded and pd.isna(row["score"]):  # not judged yet: its reply
        shown = f"reply {str(row['response'])[:80]!r}"
    else:
        shown = f"score {float(row['score']):g} against {row['answer']!r}" if graded else repr(row["pred"])
    return shown if row["status"] == "ok" else f"{shown} ({row['status']})"


#: What two records of one question must agree on to be one answer (a graded answer has no letter: its score,
#: reference answer and, before it is judged, its reply tell two apart).
_ONE_ANSWER = ("pred", "status", "score", "answer", "response")


def dedupe(frame: pd.DataFrame, on_duplicate: Literal["error", "last"] = "error") -> pd.DataFrame:
    """A valid record supersedes an error record of the same key; two different valid answers are
    an error naming both sources, unless ``on_duplicate="last"`` (the last one read wins)."""
    dup = frame.duplicated(list(KEY), keep=False)
    if not dup.any():
        return frame
    keep = []
    for _, group in frame[dup].groupby(list(KEY), sort=False):
        valid = group[group["status"] != "error"]
        compared = valid[[c for c in _ONE_ANSWER if c in valid.columns]]
        seen = compared.astype(object).where(compared.notna(), "").map(str)  # one text per value, "" for missing
        disagree = bool((seen.nunique() > 1).any())
        if disagree and on_duplicate == "error":
            a = valid.iloc[0]
            b = valid[(seen != seen.iloc[0]).any(axis=1).to_numpy()].iloc[0]
            raise LogError(
                f"question {a['question_id']} ({a['model']}, {a['benchmark']}, {a['condition']}) has two different "
                f"answers: {_answer(a)} at {a['source']} and {_answer(b)} at {b['source']}"
            )
        keep.append((valid if len(valid) else group).index[-1])
    return pd.concat([frame[~dup], frame.loc[keep]]).sort_index()


def check_settings(frame: pd.DataFrame) -> None:
    """One setting per model label: the settings are compared as read (``run_labels.model_settings``), and
    redacted only in the refusal that names them."""
    conflict = _first_conflict(frame, ["model"], "model_settings")
    if conflict is not None:
        a, b = conflict
        model = a["model"]
        shown_a, shown_b = redact(str(a["model_settings"])), redact(str(b["model_settings"]))
        hidden = " (they differ only in values hidden here (secret-looking))" if shown_a == shown_b else ""
        raise LogError(
            redact(
                f"model {model!r} was run with different settings: {shown_a!r} ({a['source']}) vs "
                f"{shown_b!r} ({b['source']}){hidden}. Label them apart with NAME=DIR, or rerun one."
            )
        )


def _source_file(source: str) -> str:
    """The file of a row's ``source`` (``file:line`` or ``file[#i]``)."""
    return re.sub(r"(:\d+|\[#\d+\])$", "", str(source))


def check_fixed_sets(frame: pd.DataFrame) -> None:
    """One question set per benchmark: runs restricted to different ``vdg subset`` lists (or one restricted,
    one not) answered different questions, so they are not compared. Before de-duplication, which could drop
    every row of one of them."""
    conflict = _first_conflict(frame, ["benchmark"], "question_set")
    if conflict is None:
        return

    def run(row: pd.Series) -> str:
        name = f"question set {row['question_set']}" if row["question_set"] else "no question set (every question)"
        return f"{row['model']} / {row['condition']} on {name} ({_source_file(row['source'])})"

    a, b = conflict
    raise LogError(
        f"{a['benchmark']}: runs were made on different question sets, so their question lists differ: {run(a)} "
        f"vs {run(b)}. Rerun them with the same VDG_QUESTION_SET (one `vdg subset` file), or report them apart."
    )


def check_exports(frame: pd.DataFrame) -> None:
    """One export per benchmark: runs evaluated from two exports (or two revisions) saw different pixels."""
    exported = (frame["export"] != "").to_numpy()
    if not exported.any():  # no run says where its videos came from
        return
    conflict = _first_conflict(frame[exported], ["benchmark"], "export")
    if conflict is not None:
        a, b = conflict
        raise LogError(
            f"{a['benchmark']}: runs were evaluated from different exports, {a['export']} ({a['source']}) and "
            f"{b['export']} ({b['source']}), so their videos may differ; pass --mixed-exports to join them anyway"
        )


def check_question_sets(frame: pd.DataFrame) -> None:
    keys = ["model", "benchmark"]
    per_condition = frame.groupby([*keys, "condition"]).size()  # its questions: KEY is unique (de-duplicated)
    union = frame.groupby(keys)["question_id"].nunique()
    short = per_condition[per_condition.to_numpy() < union.reindex(per_condition.index.droplevel(-1)).to_numpy()]
    if short.empty:
        return
    model, benchmark, cond = short.index[0]
    group = frame[(frame["model"] == model) & (frame["benchmark"] == benchmark)]
    missing = sorted(set(group["question_id"].unique()) - set(group.loc[group["condition"] == cond, "question_id"]))
    raise LogError(
        f"{model} / {benchmark}: condition {cond!r} lacks {len(missing)} of {union[(model, benchmark)]} questions "
        f"the other conditions have (e.g. {', '.join(missing[:3])}); "
        "was it run with --limit or on another split?"
    )


def _first_conflict(table: pd.DataFrame, by: list[str], column: str) -> tuple[pd.Series, pd.Series] | None:
    """Two rows of the first ``by`` group holding different ``column`` values, or None when none differs."""
    counts = table.groupby(by, sort=False)[column].nunique()
    clash = counts[counts > 1]
    if clash.empty:
        return None
    first = clash.index[0]
    rows = table
    for key, value in zip(by, first if isinstance(first, tuple) else (first,), strict=True):
        rows = rows[rows[key] == value]
    a = rows.iloc[0]
    return a, rows[rows[column] != a[column]].iloc[0]


def check_keys(frame: pd.DataFrame) -> None:
    """One question id is one question: the same answer key in every file and condition (an ``options_shuffled``
    row's answer read in the question's own order)."""
    keyed = frame.assign(answer=original_answers(frame)) if "shuffled_from" in frame.columns else frame
    conflict = _first_conflict(keyed, ["benchmark", "question_id"], "answer")
    if conflict is None:
        return
    a, b = conflict
    raise LogError(
        f"question {a['question_id']!r} of {a['benchmark']} has two different answer keys: {a['answer']!r} at "
        f"{a['source']} and {b['answer']!r} at {b['source']}; is the question id field unique per question "
        "(NExT-QA's 'qid', for one, counts the questions of a video)?"
    )


def check_one_video_per_question(table: pd.DataFrame) -> None:
    """Within one prediction file a question id names one video (a per-video question index does not)."""
    conflict = _first_conflict(table[table["video_id"] != ""], ["condition", "question_id"], "video_id")
    if conflict is None:
        return
    a, b = conflict
    raise LogError(
        f"question id {a['question_id']!r} ({a['condition']}) names two videos: {a['video_id']!r} at {a['source']} "
        f"and {b['video_id']!r} at {b['source']}; the question id field must be unique per question (NExT-QA's "
        "'qid', for one, counts the questions of a video: combine it with the video id)"
    )


def none_for_missing(table: pd.DataFrame) -> pd.DataFrame:
    """One missing-value marker in pred and error: None (NaN != NaN would split "no answer" apart)."""
    for column in ("pred", "error"):
        table[column] = table[column].astype(object).where(table[column].notna(), None)
    return table


def fill_scores(table: pd.DataFrame) -> pd.DataFrame:
    """``score`` and ``scoring`` where a source has none (an older log, a prediction file): a letter's score is its
    ``correct`` flag."""
    letter = ~graded_rows(table)
    table["scoring"] = table["scoring"].astype(object).where(~letter, LETTER)
    fill = table["score"].isna() & table["correct"].notna() & letter
    table["score"] = table["score"].astype(float).where(~fill, table["correct"].astype(float))
    return table


MODELS_ATTR = "vdg_models"


def check_models(runs: Iterable[Mapping[str, str]]) -> None:
    """One model per label: ``runs`` are (model label, source: the model behind it, where it says so); two
    different sources under one label would pool two models' answers into one row of every table."""
    first: dict[str, Mapping[str, str]] = {}
    for run in runs:
        seen = first.setdefault(run["model"], run)
        if seen["source"] != run["source"]:
            raise LogError(  # the sources are compared as read, and shown redacted
                redact(
                    f"label {run['model']!r} holds answers of two different models: {seen['source']} "
                    f"({_source_file(seen['where'])}) and {run['source']} ({_source_file(run['where'])}); give each "
                    "model its own label (NAME=DIR, MODEL=FILE or the records' model field)"
                )
            )
