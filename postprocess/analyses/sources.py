"""Which file each answer came from, and which of its fields vdg read
(``postprocess.reading.lmms_eval_logs.load_frame``).

Prediction files from other harnesses name their ids in many ways (``video_uid``, ``qid``...); this
table says, per file, which field was read as the question id and the video id and where each
question's option count came from, so a report never hides how its inputs were read. It is empty
for a frame not built by ``load_frame``.
"""

from __future__ import annotations

import pandas as pd

from postprocess.analyses.base import Analysis, ReportSettings, empty
from postprocess.reading.frame import input_files
from vdg_tasks.vocabulary.untrusted import redact

COLUMNS: dict[str, str] = {
    "file": "input file (an lmms-eval samples log, a predictions file or a VLMEvalKit file)",
    "kind": "'lmms-eval samples log', a plain run of the base task read as orig, 'predictions' (another harness's "
    "file), 'VLMEvalKit predictions' or 'VLMEvalKit scores' (a _score file: its score column decided)",
    "model": "model label(s) of its records",
    "benchmark": "benchmark(s) of its records",
    "conditions": "conditions of its records, joined by ','",
    "n_records": "records read",
    "question_id_field": "field read as the question id (several joined by ', then ' when records differ: "
    "per record the first with a value)",
    "video_id_field": "field read as the video id, likewise; empty when the file has none",
    "model_source": "the model behind the file: the lmms-eval model and checkpoint of its results file, or the "
    "records' model_name/pretrained/model_path/checkpoint field; empty when the file names none",
    "transform_version": "transform version(s) its records were built by, joined by ','; empty when none says",
    "n_options_source": "where the records' option counts come from: the n_options, options or candidates field, "
    "else the benchmark's declared count, else 'not given: inferred per task type'; with record counts when mixed "
    "(an --options-file overrides them: the option_counts table says which rule each task type's count came from)",
}


def sources_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    rows = input_files(frame)
    if not rows:
        return empty(COLUMNS)
    table = pd.DataFrame(rows).reindex(columns=list(COLUMNS))
    # The frame keeps the model behind each file as read (runs are compared on it); the report shows it redacted.
    table["model_source"] = table["model_source"].map(lambda text: redact(text) if isinstance(text, str) else text)
    return table


ANALYSES = (
    Analysis(
        "sources",
        "Per input file: its kind, models (the label and the model behind it), conditions, records and "
        "transform versions, and the fields read as question id, video id and option count.",
        COLUMNS,
        sources_table,
    ),
)
