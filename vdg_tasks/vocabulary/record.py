"""The per-sample record: what a vdg task logs for each question, declared once.

The hooks write it (``vdg_tasks.lmms.hooks.build_record``, failures included) under ``RECORD_KEY`` of the
dict lmms-eval's ``process_results`` returns, which lmms-eval writes into the samples log; the
report's reader (``postprocess.reading.lmms_eval_logs``) decodes it from there; its columns in the tidy frame are
described in
``postprocess.reading.lmms_eval_logs``'s docstring.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from typing import Any, BinaryIO, Literal, get_args

import msgspec

#: The key of the record in ``process_results``' output and in each samples-log line.
RECORD_KEY = "vdg"
#: The key of vdg's per-question metric: the record's ``score`` (None for an error or an answer not yet judged).
METRIC_KEY = "accuracy"
#: How lmms-eval names a samples log: ``<stamp>_samples_<task>.jsonl`` (its results file: ``<stamp>_results.json``),
#: or ``.jsonl.gz`` where its user compressed it (``log_bytes`` reads either).
SAMPLES_FILE = re.compile(r"^(?P<stamp>.+?)_samples_(?P<task>.+)\.jsonl(?:\.gz)?$")
#: The first two bytes of every gzip file (RFC 1952): how a compressed log is told, whatever its name.
GZIP_MAGIC = b"\x1f\x8b"


#: The most bytes a log decompresses to (``$VDG_MAX_LOG_BYTES`` overrides): a few hundred kB of gzip can expand to
#: gigabytes, so a log from outside is read only up to this size. lmms-eval's samples logs of whole benchmarks are
#: tens to hundreds of MB.
DEFAULT_MAX_LOG_BYTES = 4 << 30


class LogTooLarge(ValueError):
    """A gzip-compressed log that decompresses to more than ``max_log_bytes()`` bytes."""


def max_log_bytes() -> int:
    """``$VDG_MAX_LOG_BYTES`` (a positive integer), else ``DEFAULT_MAX_LOG_BYTES``.

    Raises:
        ValueError: the variable is set but not a positive integer.
    """
    text = os.environ.get("VDG_MAX_LOG_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_LOG_BYTES
    if not text.isdigit() or int(text) <= 0:
        raise ValueError(f"VDG_MAX_LOG_BYTES={text!r} is not a positive number of bytes")
    return int(text)


def open_log(path: str | os.PathLike[str]) -> BinaryIO:
    """A samples log or prediction file opened for reading, decompressing as it reads when it is gzip (told by the
    magic bytes, whatever the name: a gzip file named ``x.jsonl`` reads as ``x.jsonl.gz`` does; several gzip members
    read as one, RFC 1952).

    Raises:
        OSError: the file cannot be opened.
    """
    raw = open(path, "rb")  # noqa: SIM115 (returned open, or wrapped: the caller closes it)
    try:
        magic = raw.read(len(GZIP_MAGIC))
        raw.seek(0)
    except OSError:
        raw.close()
        raise
    return gzip.GzipFile(fileobj=raw, mode="rb") if magic == GZIP_MAGIC else raw


def log_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a samples log or prediction file (``open_log``): decompressed when gzip, up to
    ``max_log_bytes()``.

    Raises:
        OSError: the file cannot be read, or is gzip with a bad header or CRC (``gzip.BadGzipFile``).
        EOFError: gzip that ends before its end-of-stream marker (truncated).
        zlib.error: damaged deflate data.
        LogTooLarge: gzip that decompresses to more than ``max_log_bytes()`` (a plain file is read as it is).
    """
    with open_log(path) as stream:
        if not isinstance(stream, gzip.GzipFile):
            return stream.read()
        cap = max_log_bytes()
        data = stream.read(cap + 1)
        if len(data) > cap:
            raise LogTooLarge(
                f"{os.fspath(path)}: decompresses to more than {cap} bytes (VDG_MAX_LOG_BYTES); a samples log that "
                "large is unusual (a gzip bomb?): decompress it yourself if you trust it, or raise VDG_MAX_LOG_BYTES"
            )
        stream.close()
        return data


def holds_vdg_records(samples: str | os.PathLike[str]) -> bool:
    """Whether the first sample of ``samples`` carries vdg's record (a vdg task's log, not a base task's)."""
    try:
        with open_log(samples) as lines:
            for line in lines:
                if line.strip():
                    try:
                        first = json.loads(line)
                    except (json.JSONDecodeError, UnicodeDecodeError):
                        return True  # not for this function to judge: the report's reader names the line
                    return not isinstance(first, dict) or RECORD_KEY in first  # not an object: the reader names it
    except (OSError, EOFError, zlib.error):
        return True  # not for this function to judge: the report's reader names the file
    return True


#: The key of a results file written for a plain run of a base task read as orig (``vdg_tasks.jobs.base_runs``):
#: ``{"samples": the base task's samples log, "task": its task, "benchmark": the benchmark it stands for}``.
BASE_RUN_KEY = "vdg_base_run"

#: ``ok``: a letter was read and scored, or a graded answer was scored; ``unparsed``: no letter could be read
#: (scored wrong); ``error``: no answer to score (the video, the doc or the request failed: ``error`` says why);
#: ``open``: a free-text answer, scored later by a judge.
Status = Literal["ok", "unparsed", "error", "open"]
STATUSES: tuple[str, ...] = get_args(Status)
#: The status of a free-text answer (no letter, no ``correct`` flag until a judge scores it).
OPEN_STATUS = "open"

_Unset = msgspec.UnsetType


class SampleRecord(msgspec.Struct, kw_only=True):
    """One question under one condition, as logged. Fields left ``UNSET`` are not logged at all (those of
    the text conditions and of free-text answers, on other questions)."""

    benchmark: str
    condition: str
    #: The condition's declared parameters, and those applied to this video (a hold's ``k`` capped at its frames).
    condition_params: dict[str, Any]
    effective_params: dict[str, Any] | None = None
    transform_version: int
    question_id: str
    video_id: str
    task_type: str
    duration: str
    domain: str
    sub_category: str
    #: The options the question was asked with; None when the doc has none (the report infers the count).
    n_options: int | None = None
    answer: str
    #: The cache key of the video shown ("" for the source itself, or when none could be made).
    visual_key: str = ""
    #: Where the video's pixels came from (``vdg_tasks.perturb.provenance``).
    provenance: dict[str, Any] | None = None
    character: str = ""
    idk_letter: str = ""
    duration_s: float | None = None
    #: ``$VDG_SAMPLING`` as set ("" when unset).
    sampling: str = ""
    #: The digest of the fixed question set the run was restricted to ("" when none).
    question_set: str = ""
    # The text conditions' details (``vdg_tasks.perturb.text.TextChange.details``).
    swap_to: str | _Unset = msgspec.UNSET
    swap_gender: str | _Unset = msgspec.UNSET
    truth: str | _Unset = msgspec.UNSET
    abstain_letter: str | _Unset = msgspec.UNSET
    subtitle_chars: int | _Unset = msgspec.UNSET
    #: A condition that reorders the options (options_shuffled, the rotations): the original letter of each option as
    #: asked, in order ("CADB": A is the original C).
    shuffled_from: str | _Unset = msgspec.UNSET
    #: The letter read from the reply, the parser's verdict and the rule that read it.
    pred: str | None = None
    parse_status: str | None = None
    parse_rule: str | None = None
    status: Status
    error: str | None = None
    #: For a graded answer ``score >= vdg_tasks.vocabulary.scoring.CORRECT_AT``.
    correct: bool | None = None
    #: The question's score in [0, 1] (``correct`` as 1 or 0 for a letter); None until scored.
    score: float | None = None
    #: How ``score`` is made (``vdg_tasks.vocabulary.scoring``).
    scoring: str = "letter"
    # A free-text answer's question and reply.
    question: str | _Unset = msgspec.UNSET
    response: str | _Unset = msgspec.UNSET


#: Every field of the record, in the order it is logged.
FIELDS: tuple[str, ...] = SampleRecord.__struct_fields__


def logged(record: SampleRecord) -> dict[str, Any]:
    """The record as the dict lmms-eval logs: its fields in order, values as they are, ``UNSET`` ones left out."""
    values = (getattr(record, name) for name in FIELDS)
    return {name: value for name, value in zip(FIELDS, values, strict=True) if value is not msgspec.UNSET}
