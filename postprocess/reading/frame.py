"""The tidy frame ``postprocess.reading.lmms_eval_logs.load_frame`` builds and the analyses read: its columns, its
key, and
what the reader records in ``frame.attrs`` (the input files, the alignment's drops).

One row per (model, benchmark, condition, question): ``KEY``. Its columns are declared once, each with its
meaning, how the reader fills it and whether the multiple-choice analyses get it (``FRAME_COLUMNS``); their
names (``SAMPLE_COLUMNS``), the reader's lists of record fields and the analyses' column filter follow from that,
and ``docs/report-schema.md`` prints them with the tables computed from the frame. A new logged text field reaches
the frame and every analysis by one ``Column`` here (``from_record="text"``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from vdg_tasks.vocabulary.scoring import LETTER


@dataclass(frozen=True)
class Column:
    """One column of the tidy frame, declared once: the reader fills it, the schema document lists it, and the
    multiple-choice analyses get it or not, from this.

    Attributes:
        name: the column's name.
        meaning: what it holds (docs/report-schema.md prints it).
        from_record: how the reader fills it from the logged record (``vdg_tasks.vocabulary.record``) and a
            prediction file's field of the same name: ``text`` (as logged; "" when absent), ``stripped`` (the same,
            its edges' blanks removed), or "" (made by the reader: its meaning says how).
        read_by_choices: whether the multiple-choice analyses get it; False leaves it out of their frame unless
            ``--by`` names it, so that taking a group's rows skips it and forked workers never copy its objects.
        extra: whether it is one of the text conditions', the tracking protocol's, the judge's or provenance's
            (``EXTRA_COLUMNS``: "" / NaN / <NA> where they do not apply, and for prediction files that lack them).
    """

    name: str
    meaning: str
    from_record: Literal["", "text", "stripped"] = ""
    read_by_choices: bool = True
    extra: bool = False


def _extra(name: str, meaning: str, from_record: Literal["", "text", "stripped"] = "", read: bool = False) -> Column:
    return Column(name, meaning, from_record, read, extra=True)


#: The frame's columns, in order (``load_frame``'s; each file's reader fills them,
#: ``postprocess.reading.lmms_eval_logs``).
FRAME_COLUMNS: tuple[Column, ...] = (
    Column("model", "the run's label (NAME=DIR on the command line, else lmms-eval's model name and the basename of "
           "its pretrained= argument)"),
    Column("model_settings", "model_args and gen_kwargs of the run; one label must have one setting",
           read_by_choices=False),
    Column("benchmark", "the benchmark, from the logged record"),
    Column("condition", "the condition, from the logged record"),
    Column("question_id", "the question's id, the join key (lmms-eval's doc_id is a row position)"),
    Column("video_id", "the video's id"),
    Column("task_type", "the question's task type"),
    Column("duration", "the video's duration class (Video-MME's short, medium, long)"),
    Column("n_options", "the question's number of options (postprocess.reading.answer_options)"),
    Column("n_options_rule", "the rule that gave n_options: options file (--options-file), record (the record's "
           "own), benchmark declares or inferred per task type"),
    Column("answer", "the ground-truth letter (as asked)"),
    Column("pred", "the parsed letter, or None"),
    Column("status", "ok (a letter among the question's options was read), unparsed (answered, no such letter: scored "
           "wrong), error (no answer: a missing or undecodable video) or open (a free-text answer)"),
    Column("error", "the reason for an error row", read_by_choices=False),
    Column("correct", "True/False for ok and unparsed rows, <NA> for error and open rows; a graded answer is correct "
           "when its score is at least vdg_tasks.vocabulary.scoring.CORRECT_AT"),
    Column("score", "the question's score in [0, 1] (correct as 1.0 / 0.0 for a letter; a graded answer's own); NaN "
           "for error rows and answers not yet judged; a logged score outside [0, 1] or contradicting correct is an "
           "error naming its file:line"),
    Column("scoring", "how score was made: letter, judge, metric:<key>"),
    Column("source", "file:line the row came from", read_by_choices=False),
    _extra("character", "the character the original question names", "text"),
    _extra("swap_to", "nameswap rows: the name put in the question", "text"),
    _extra("swap_gender", "nameswap rows: same or cross, the replacement's gender against the original's", "text"),
    _extra("abstain_letter", "abstain rows: the letter of the option vdg added", "text"),
    _extra("shuffled_from", "rows of a condition that reorders the options (options_shuffled, options_rotated*): the "
           "original letter of each option as asked, in order (CADB: the option asked as A was C); answer and pred "
           "are letters as asked", "text", read=True),
    _extra("idk_letter", "the letter of the benchmark's own \"I don't know\" option", "text"),
    _extra("question", "open rows (status open, no letter, correct <NA>): the question asked", "text"),
    _extra("response", "open rows: the reply", "text"),
    _extra("truth", "open rows: the ground truth the reply is judged against", "text"),
    _extra("duration_s", "the source video's duration in seconds"),
    _extra("frames", "frames per video the model was run with, read from its settings (max_num_frames, "
           "max_frames_num, nframes, ...)", read=True),
    _extra("judge_score", "open rows once judged (postprocess.judge): 0, 0.5 or 1"),
    _extra("judge", "open rows once judged: the judge"),
    _extra("precision", "the model's quantization (nf4, int8: its label is marked †nf4) or dtype (bf16...) as its "
           "settings state it; \"\" when they state neither"),
    _extra("export", "name@revision of the export a sample was evaluated from (\"\" when built from the cache)"),
    _extra("domain", "the question's domain (Video-MME's domain) as the record or prediction file gives it; \"\" "
           "when not given (vdg report --by domain)", "stripped"),
    _extra("sub_category", "the question's sub-category (Video-MME's sub_category); \"\" when not given",
           "stripped"),
    _extra("question_set", "the digest of the fixed question set (vdg subset, VDG_QUESTION_SET) the run was "
           "restricted to; \"\" when it ran on every question (runs of one benchmark on different sets are "
           "refused)", "stripped"),
    _extra("sampling", "the frame-sampling setting of a sweep run (frames:16, fps:0.5); \"\" when not logged. A "
           "prediction file states it per record in sampling or setting (frames:16, 16f, 0.5fps), frames or fps; "
           "such a record's model is labelled <model>@<N>f / <model>@<F>fps like a sweep run", "stripped", read=True),
)  # fmt: skip
SAMPLE_COLUMNS: tuple[str, ...] = tuple(c.name for c in FRAME_COLUMNS)
#: The columns of the text conditions, the character-tracking protocol, the judge and provenance (``Column.extra``).
EXTRA_COLUMNS: tuple[str, ...] = tuple(c.name for c in FRAME_COLUMNS if c.extra)
#: The record's text fields the reader carries as they are ("" when absent), then those it strips.
RECORD_TEXT_AS_LOGGED: tuple[str, ...] = tuple(c.name for c in FRAME_COLUMNS if c.from_record == "text")
RECORD_TEXT_STRIPPED: tuple[str, ...] = tuple(c.name for c in FRAME_COLUMNS if c.from_record == "stripped")
#: Columns the multiple-choice analyses do not get (``Column.read_by_choices``).
UNREAD_BY_CHOICES: tuple[str, ...] = tuple(c.name for c in FRAME_COLUMNS if not c.read_by_choices)
#: The row key of the frame and of every analysis.
KEY = ("model", "benchmark", "condition", "question_id")

#: The mark of a quantized model in every label, table and plot (the paper's dagger).
QUANTIZED_MARK = "†"

#: Key of ``load_frame``'s per-file field record in ``frame.attrs`` (a JSON list; see ``input_files``).
SOURCES_ATTR = "vdg_sources"
#: Key of ``load_frame(align="intersect")``'s drop counts in ``frame.attrs`` (a JSON list; see ``alignment``).
ALIGNMENT_ATTR = "vdg_alignment"
#: Fields read as the video id of a prediction record, in precedence order (per record, the first with
#: a value). A path is taken as it is: it names the video as well as an id does.
VIDEO_ID_FIELDS: tuple[str, ...] = (
    "video_id",
    "videoID",
    "video_uid",
    "video_idx",
    "video_name",
    "vid",
    "video",
    "video_path",
)


#: What a ``scoring`` cell holds for a letter: the name, or nothing (a source that logs none).
_LETTER_SCORINGS = (LETTER, "", "nan", "None", "<NA>")


def is_graded(scoring: Any) -> bool:
    """Whether a row's ``scoring`` is a graded one (not a letter's: no letter, no options)."""
    return str(scoring) not in _LETTER_SCORINGS


def graded_rows(frame: pd.DataFrame) -> np.ndarray:
    """``is_graded`` of every row (all False for a frame without ``scoring``)."""
    if "scoring" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    return (~frame["scoring"].astype(object).map(str).isin(_LETTER_SCORINGS)).to_numpy(dtype=bool)


def original_letter(letter: Any, shuffled_from: Any) -> Any:
    """The letter the option asked as ``letter`` had in the question's own order: under ``options_shuffled``
    (``shuffled_from`` = the original letter of each option as asked) mapped back, else ``letter`` as it is."""
    order = shuffled_from if isinstance(shuffled_from, str) else ""
    if not order or not isinstance(letter, str) or len(letter) != 1:
        return letter
    index = ord(letter) - ord("A")
    return order[index] if 0 <= index < len(order) else letter


def original_answers(frame: pd.DataFrame) -> pd.Series:
    """Each row's answer in the question's own order (``original_letter``): one answer key per question again."""
    if "shuffled_from" not in frame.columns:
        return frame["answer"]
    shuffled = frame["shuffled_from"].fillna("").astype(str) != ""
    if not shuffled.any():
        return frame["answer"]
    out = frame["answer"].astype(object).copy()
    out[shuffled] = [
        original_letter(a, s)
        for a, s in zip(frame.loc[shuffled, "answer"], frame.loc[shuffled, "shuffled_from"], strict=True)
    ]
    return out


def input_files(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Per input file of ``load_frame``: kind, model, benchmark, conditions, records and the fields read
    for the question id, video id and option count ([] for a frame not built by ``load_frame``)."""
    text = frame.attrs.get(SOURCES_ATTR)
    return list(json.loads(text)) if isinstance(text, str) else []


def alignment(frame: pd.DataFrame) -> list[dict[str, Any]] | None:
    """Per (model, benchmark, condition) of a frame loaded with ``align="intersect"``: n_questions it had
    and n_dropped (not present in every condition); None for a frame loaded with ``align="strict"``."""
    text = frame.attrs.get(ALIGNMENT_ATTR)
    return list(json.loads(text)) if isinstance(text, str) else None


#: Key of the text-only answerers' s(q) in ``frame.attrs`` (``with_text_scores``; a JSON list).
TEXT_SCORES_ATTR = "vdg_text_scores"
#: Key of the named question sets a report compares in ``frame.attrs`` (``with_named_sets``; a JSON list).
NAMED_SETS_ATTR = "vdg_named_sets"


#: The columns of ``vdg shortcuts``' shortcuts.csv the report keeps.
SHORTCUT_FIELDS: tuple[str, ...] = ("benchmark", "question_id", "task_type", "answerer", "n_options", "s", "picked")


def with_text_scores(frame: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """``frame`` carrying the text-only answerers' scores of its questions (``scores``: rows of ``vdg shortcuts``'
    shortcuts.csv), for the tables that relate answers to text-only shortcuts."""
    records = scores[list(SHORTCUT_FIELDS)].astype(object).values.tolist()
    frame.attrs[TEXT_SCORES_ATTR] = json.dumps(
        [[str(b), str(q), str(t), str(a), int(n), float(s), bool(p)] for b, q, t, a, n, s, p in records]
    )
    return frame


def shortcut_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The ``SHORTCUT_FIELDS`` rows ``with_text_scores`` gave, and ``chance`` (1 / n_options); empty without."""
    text = frame.attrs.get(TEXT_SCORES_ATTR)
    table = pd.DataFrame(json.loads(text) if isinstance(text, str) else [], columns=list(SHORTCUT_FIELDS))
    table["chance"] = 1.0 / table["n_options"].astype(float)
    return table


def text_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """benchmark, question_id and text_score (s(q) of the ``combined`` answerer) of every question
    ``with_text_scores`` gave; empty without."""
    table = shortcut_table(frame)
    combined = table[table["answerer"] == "combined"]
    return combined[["benchmark", "question_id", "s"]].rename(columns={"s": "text_score"}).reset_index(drop=True)


def with_named_sets(frame: pd.DataFrame, sets: list[dict[str, Any]]) -> pd.DataFrame:
    """``frame`` carrying question sets to compare side by side: each a dict with ``name``, ``benchmark``,
    ``ids``, ``description`` and ``source`` (the file)."""
    frame.attrs[NAMED_SETS_ATTR] = json.dumps(
        [{**s, "ids": sorted(map(str, s["ids"]))} for s in sets], ensure_ascii=False
    )
    return frame


def named_sets(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The question sets ``with_named_sets`` gave ([] without)."""
    text = frame.attrs.get(NAMED_SETS_ATTR)
    return list(json.loads(text)) if isinstance(text, str) else []
