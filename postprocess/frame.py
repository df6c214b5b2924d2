"""The tidy frame ``postprocess.io.load_frame`` builds and the analyses read: its columns, its key, and
what the reader records in ``frame.attrs`` (the input files, the alignment's drops).

One row per (model, benchmark, condition, question): ``KEY``. The columns are ``SAMPLE_COLUMNS``, the
last of them (``EXTRA_COLUMNS``) those of the text conditions, the character-tracking protocol, the
judge and provenance; ``docs/report-schema.md`` describes the tables computed from it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from vdg_tasks.vocabulary.scoring import LETTER

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

SAMPLE_COLUMNS: tuple[str, ...] = (
    "model",
    "model_settings",
    "benchmark",
    "condition",
    "question_id",
    "video_id",
    "task_type",
    "duration",
    "n_options",
    "n_options_rule",
    "answer",
    "pred",
    "status",
    "error",
    "correct",
    "score",
    "scoring",
    "source",
    "character",
    "swap_to",
    "swap_gender",
    "abstain_letter",
    "shuffled_from",
    "idk_letter",
    "question",
    "response",
    "truth",
    "duration_s",
    "frames",
    "judge_score",
    "judge",
    "precision",
    "export",
    "domain",
    "sub_category",
    "question_set",
    "sampling",
)
#: The columns of the text conditions and the character-tracking protocol (module docstring).
EXTRA_COLUMNS: tuple[str, ...] = SAMPLE_COLUMNS[SAMPLE_COLUMNS.index("source") + 1 :]
#: The row key of the frame and of every analysis.
KEY = ("model", "benchmark", "condition", "question_id")

#: The mark of a quantized model in every label, table and plot (the paper's dagger).
QUANTIZED_MARK = "†"

#: Key of ``load_frame``'s per-file field record in ``frame.attrs`` (a JSON list; see ``sources``).
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
    import numpy as np  # this schema module imports no numpy or pandas until a frame is read

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


def sources(frame: pd.DataFrame) -> list[dict[str, Any]]:
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
    # pandas (~0.8 s) only to build this table, not on import of postprocess.frame
    import pandas as pd

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
