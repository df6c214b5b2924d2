"""postprocess.reading.frame: the tidy frame's schema (its columns and key) and what ``input_files`` and ``alignment``
decode
from ``frame.attrs``."""

from __future__ import annotations

import json

import pandas as pd

from postprocess.reading.frame import (
    ALIGNMENT_ATTR,
    EXTRA_COLUMNS,
    FRAME_COLUMNS,
    KEY,
    SAMPLE_COLUMNS,
    SOURCES_ATTR,
    VIDEO_ID_FIELDS,
    alignment,
    input_files,
)


def test_the_columns_are_distinct_and_hold_the_key():
    assert len(set(SAMPLE_COLUMNS)) == len(SAMPLE_COLUMNS)
    assert KEY == ("model", "benchmark", "condition", "question_id")
    assert set(KEY) <= set(SAMPLE_COLUMNS)


def test_the_extra_columns_are_every_column_after_source():
    # the module docstring: the text conditions, the character-tracking protocol, the judge and provenance
    assert EXTRA_COLUMNS == (
        "character", "swap_to", "swap_gender", "abstain_letter", "shuffled_from", "idk_letter", "question", "response",
        "truth",
        "duration_s", "frames", "judge_score", "judge", "precision", "export",
        "domain", "sub_category", "question_set", "sampling",
    )  # fmt: skip
    assert SAMPLE_COLUMNS[-len(EXTRA_COLUMNS) - 1] == "source"


def test_every_column_read_from_the_record_is_a_field_it_logs():
    from vdg_tasks.vocabulary.record import FIELDS

    carried = [c.name for c in FRAME_COLUMNS if c.from_record]
    assert len(carried) == 13 and set(carried) <= set(FIELDS)


def test_a_column_read_from_the_record_reaches_the_frame_as_its_declaration_says(tmp_path):
    """Each declared record column, logged with a value of its own (blanks around the stripped ones), is in the
    frame: as logged, or stripped."""
    from postprocess.reading.lmms_eval_logs import load_frame
    from tests.helpers.fakelogs import sample, write_run

    record = sample("q1-1", "orig", "A")
    for column in FRAME_COLUMNS:
        if column.from_record:
            record["vdg"][column.name] = f"  {column.name} value "
    frame = load_frame([write_run(tmp_path / "run", "m", {"vdgsynth_vdg_orig": [record]})])
    for column in FRAME_COLUMNS:
        if column.from_record:
            expected = f"  {column.name} value " if column.from_record == "text" else f"{column.name} value"
            assert frame[column.name].iloc[0] == expected, column.name


def test_the_multiple_choice_analyses_get_the_columns_declared_for_them():
    from postprocess import analyses

    assert set(analyses.UNREAD_BY_CHOICES) == {c.name for c in FRAME_COLUMNS if not c.read_by_choices}
    assert {"frames", "sampling", "shuffled_from", "answer"}.isdisjoint(analyses.UNREAD_BY_CHOICES)


def test_video_id_fields_are_distinct_and_start_with_video_id():
    assert VIDEO_ID_FIELDS[0] == "video_id" and len(set(VIDEO_ID_FIELDS)) == len(VIDEO_ID_FIELDS)


def test_input_files_decodes_the_json_the_reader_stored():
    entries = [{"file": "a.jsonl", "kind": "samples", "n_records": 3}, {"file": "p.csv", "kind": "predictions"}]
    frame = pd.DataFrame()
    frame.attrs[SOURCES_ATTR] = json.dumps(entries)
    assert input_files(frame) == entries


def test_a_frame_not_built_by_the_reader_has_no_sources():
    assert input_files(pd.DataFrame()) == []
    frame = pd.DataFrame()
    frame.attrs[SOURCES_ATTR] = [{"file": "a"}]  # not the JSON text the reader stores
    assert input_files(frame) == []


def test_alignment_decodes_the_drops_and_is_none_for_a_strict_load():
    frame = pd.DataFrame()
    assert alignment(frame) is None
    drops = [{"model": "m", "benchmark": "b", "condition": "black", "n_questions": 5, "n_dropped": 1}]
    frame.attrs[ALIGNMENT_ATTR] = json.dumps(drops)
    assert alignment(frame) == drops
    frame.attrs[ALIGNMENT_ATTR] = "[]"  # intersect with nothing dropped: a list, not None
    assert alignment(frame) == []
