"""One set of answers written both as VLMEvalKit prediction files (Video-MME's and MVBench's columns, xlsx or tsv,
with or without the ``score`` column of VLMEvalKit's evaluation) and as lmms-eval samples logs, for the report
tests that compare the two."""

from __future__ import annotations

import ast
import csv
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tests.helpers.fakelogs import write_run
from vdg_tasks.vocabulary.seeding import rng_for

#: Video-MME's prediction file, as VLMEvalKit writes it (``vlmeval/dataset/videomme.py``), less ``score``.
VIDEOMME_COLUMNS = (
    "index", "video", "video_path", "duration", "domain", "candidates", "sub_category", "task_type",
    "subtitle_path", "question", "answer", "prediction",
)  # fmt: skip
#: MVBench's (``vlmeval/dataset/mvbench.py``: the JSON's fields, ``index`` appended, then ``prediction``).
MVBENCH_COLUMNS = (
    "task_type", "prefix", "data_type", "bound", "start", "end", "video", "question", "answer", "candidates",
    "index", "prediction",
)  # fmt: skip
VIDEOMME_TASKS = ("Temporal Perception", "OCR Problems", "Action Reasoning")
MVBENCH_TASKS = ("Action Sequence", "Object Shuffle")


@dataclass(frozen=True)
class Answer:
    """One question under one condition: the reply as text, the letter it reads as (None: unparsed), whether it
    failed (no prediction), and VLMEvalKit's score (1, 0, -1)."""

    index: int
    condition: str
    text: str | None
    letter: str | None
    score: int | None


def answers(benchmark: str, n_questions: int, n_options, missing: tuple[str, int] | None) -> list[Answer]:
    """Seeded replies under orig (mostly right) and black (mostly wrong), in the forms VLMEvalKit reads: a bare
    letter, "The answer is X.", "(X) ...", an unreadable reply (score -1) and, once under black, no prediction;
    ``missing`` (condition, index) is left out."""
    out = []
    for condition, p_right in (("orig", 0.8), ("black", 0.35)):
        rng = rng_for("vlmevalkit", benchmark, condition)
        for q in range(n_questions):
            if missing == (condition, q):
                continue
            n = n_options(q)
            key = "ABCDEFGH"[q % n]
            right = bool(rng.random() < p_right)
            letter = key if right else "ABCDEFGH"[(q + 1 + int(rng.integers(n - 1))) % n]
            form = q % 5
            if condition == "black" and q == 3:
                out.append(Answer(q, condition, None, None, None))
            elif form == 4 and q % 10 == 4:
                out.append(Answer(q, condition, "I am not sure.", None, -1))
            else:
                text = {0: letter, 1: f"The answer is {letter}.", 2: f"({letter}) that one"}.get(form % 3, letter)
                out.append(Answer(q, condition, text, letter, int(letter == key)))
    return out


def _videomme_row(q: int) -> dict[str, object]:
    return {
        "index": q,
        "video": f"vid{q // 3:03d}",
        "video_path": f"./video/vid{q // 3:03d}.mp4",
        "duration": ("short", "medium", "long")[q % 3],
        "domain": ("Knowledge", "Life Record")[q % 2],
        "candidates": repr([f"{x}. option {x.lower()} of {q}" for x in "ABCD"]),
        "sub_category": ("Astronomy", "Daily Life", "Travel")[q % 3],
        "task_type": VIDEOMME_TASKS[q % 3],
        "subtitle_path": f"./subtitle/vid{q // 3:03d}.srt",
        "question": f"What happens in clip {q}?",
        "answer": "ABCD"[q % 4],
    }


def mvbench_options(q: int) -> int:
    return 3 + q % 3


def _mvbench_row(q: int) -> dict[str, object]:
    texts = [f"thing {k} of {q}" for k in range(mvbench_options(q))]
    return {
        "task_type": MVBENCH_TASKS[q % 2],
        "prefix": "video/star/Charades_v1_480/",
        "data_type": "video",
        "bound": True,
        "start": 1.5,
        "end": 9.0,
        "video": f"clip{q:03d}.mp4",
        "question": f"What did the person do in clip {q}?",
        "answer": texts[q % len(texts)],
        "candidates": repr(texts),
        "index": q,
    }


def vlmevalkit_table(benchmark: str, rows: list[Answer], scored: bool) -> pd.DataFrame:
    """The prediction (or, ``scored``, score) file of one condition, in VLMEvalKit's columns."""
    make, columns = (_videomme_row, VIDEOMME_COLUMNS) if benchmark == "videomme" else (_mvbench_row, MVBENCH_COLUMNS)
    records = [{**make(a.index), "prediction": a.text} for a in rows]
    table = pd.DataFrame.from_records(records, columns=list(columns))
    if scored:
        table["score"] = [a.score for a in rows]
    return table


def write_vlmevalkit(path: Path, table: pd.DataFrame) -> Path:
    """xlsx (openpyxl) or tsv (every cell quoted, as VLMEvalKit's ``dump`` writes it) by suffix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".xlsx":
        table.to_excel(path, index=False, engine="openpyxl")
    else:
        table.to_csv(path, sep="\t", index=False, quoting=csv.QUOTE_ALL)
    return path


def samples(benchmark: str, rows: list[Answer]) -> list[dict]:
    """The same answers as vdg's logged records (question id = VLMEvalKit's index)."""
    make = _videomme_row if benchmark == "videomme" else _mvbench_row
    out = []
    for a in rows:
        row = make(a.index)
        options = ast.literal_eval(str(row["candidates"]))
        key = "ABCDEFGH"[options.index(row["answer"])] if benchmark == "mvbench" else row["answer"]
        failed = a.text is None
        status = "error" if failed else ("ok" if a.letter else "unparsed")
        record = {
            "benchmark": benchmark,
            "condition": a.condition,
            "question_id": str(a.index),
            "video_id": str(row["video"]),
            "task_type": str(row["task_type"]),
            "duration": str(row.get("duration", "")),
            "domain": str(row.get("domain", "")),
            "sub_category": str(row.get("sub_category", "")),
            "n_options": len(options),
            "answer": key,
            "pred": a.letter,
            "status": status,
            "error": "no prediction" if failed else None,
            "correct": None if failed else a.letter == key,
        }
        out.append({"doc_id": a.index, "doc_hash": "constant", "vdg": record})
    return out


def write_both(
    tmp_path: Path, fmt: str, scored: bool, model: str = "m", missing=("black", 7), n_questions: int = 40
) -> tuple[list[tuple[str, str]], Path]:
    """Video-MME and MVBench answers as VLMEvalKit files (``--predictions`` pairs) and as an lmms-eval run folder."""
    predictions, tasks = [], {}
    for benchmark, dataset, n_options in (
        ("videomme", "Video-MME", lambda q: 4),
        ("mvbench", "MVBench", mvbench_options),
    ):
        rows = answers(benchmark, n_questions, n_options, missing)
        for condition in ("orig", "black"):
            mine = [a for a in rows if a.condition == condition]
            name = f"{model}_{dataset}{'_score' if scored else ''}.{fmt}"
            path = write_vlmevalkit(
                tmp_path / "vlmevalkit" / condition / name, vlmevalkit_table(benchmark, mine, scored)
            )
            predictions.append((f"{model}:{condition}", str(path)))
            tasks[f"{benchmark}_vdg_{condition}"] = samples(benchmark, mine)
    run = write_run(tmp_path / "lmms" / model, model, tasks)
    return predictions, run
