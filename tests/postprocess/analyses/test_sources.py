"""postprocess.analyses.sources: one row per input file from the record ``load_frame`` keeps in the frame's attrs,
with exactly the declared columns; empty for a frame not built by ``load_frame``."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from postprocess.analyses.base import ReportSettings
from postprocess.analyses.sources import ANALYSES, COLUMNS, sources_table
from postprocess.reading.frame import SOURCES_ATTR
from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.frames import make_frame
from tests.helpers.prediction_files import write_records


def _frame_with_sources(entries: object) -> pd.DataFrame:
    frame = make_frame([("m", "orig", "q1", "T", True)])
    frame.attrs[SOURCES_ATTR] = json.dumps(entries)
    return frame


def test_each_recorded_file_is_a_row_in_the_declared_column_order():
    first = {column: f"{column} of one" for column in COLUMNS} | {"n_records": 3}
    second = {column: f"{column} of two" for column in reversed(COLUMNS)} | {"n_records": 8}
    table = sources_table(_frame_with_sources([first, second]))
    assert list(table.columns) == list(COLUMNS)
    assert table.to_dict("records") == [first, {column: second[column] for column in COLUMNS}]


def test_a_field_the_record_lacks_is_empty_and_one_it_has_beyond_the_columns_is_dropped():
    table = sources_table(_frame_with_sources([{"file": "a.json", "kind": "predictions", "unknown": 1}]))
    assert list(table.columns) == list(COLUMNS)
    row = table.iloc[0]
    assert (row.file, row.kind) == ("a.json", "predictions")
    assert all(math.isnan(row[column]) for column in COLUMNS if column not in ("file", "kind"))


@pytest.mark.parametrize("attrs", [{}, {SOURCES_ATTR: [{"file": "a"}]}, {SOURCES_ATTR: json.dumps([])}])
def test_a_frame_without_a_source_record_gives_an_empty_table(attrs):
    frame = make_frame([("m", "orig", "q1", "T", True)])
    frame.attrs.update(attrs)  # none, not JSON text, or an empty list
    table = sources_table(frame)
    assert table.empty and list(table.columns) == list(COLUMNS)


def test_a_loaded_predictions_file_names_its_fields_and_counts(tmp_path):
    base = {"task_type": "T", "ground_truth": "A", "prediction": "A", "n_options": 4}
    records = [dict(base, question_id=q, video_id="v1", condition=c) for q in ("q1", "q2") for c in ("black", "orig")]
    path = write_records(tmp_path / "preds.json", records)
    (row,) = sources_table(load_frame(predictions=[("m", path)], benchmark="bench")).to_dict("records")
    assert row["file"] == str(path) and row["kind"] == "predictions"
    assert (row["model"], row["benchmark"], row["n_records"]) == ("m", "bench", 4)
    assert row["conditions"] == "orig,black"  # declaration order, not the order of the records
    assert (row["question_id_field"], row["video_id_field"]) == ("question_id", "video_id")
    assert row["n_options_source"] == "n_options field"  # every record gives it


def test_the_declared_analysis_reads_the_record():
    (analysis,) = ANALYSES
    assert analysis.name == "sources" and analysis.columns is COLUMNS
    assert analysis.compute is sources_table and analysis.needs is None
    assert analysis.run(_frame_with_sources([{"file": "x"}]), ReportSettings())["file"].tolist() == ["x"]
