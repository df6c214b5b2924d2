"""Who wrote a run: lmms-eval's results file beside a samples log, the model's label, settings, precision and
the model behind it; ``LogError``, the reader's error naming the file and line."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from postprocess.reading.files import ARROW_TEXT, TEXT_DTYPE, LogError, per_distinct
from postprocess.reading.frame import (
    QUANTIZED_MARK,
    RECORD_TEXT_AS_LOGGED,
    RECORD_TEXT_STRIPPED,
)
from vdg_tasks.vocabulary.record import SAMPLES_FILE

logger = logging.getLogger(__name__)


#: model_args naming the frames per video, in lmms-eval's video models.
FRAME_ARGS = ("max_num_frames", "max_frames_num", "nframes", "num_frames", "frames", "frames_num", "max_frames")
# Runtime placement arguments that do not change what a model answers.
_PLACEMENT_ARGS = {"device", "device_map", "batch_size", "attn_implementation"}


@dataclass(frozen=True)
class RunDir:
    """A folder to read, optionally labelled (``NAME=DIR`` on the command line)."""

    path: Path
    label: str | None = None

    @classmethod
    def parse(cls, text: str) -> RunDir:
        name, sep, rest = text.partition("=")
        if sep and name and not _exists(Path(text)):
            return cls(Path(rest), name)
        return cls(Path(text))


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; False for a name the filesystem refuses (too long, say) rather than a traceback."""
    try:
        return path.exists()
    except OSError:
        return False


def parse_model_args(model_args: Any) -> dict[str, str]:
    if isinstance(model_args, dict):
        return {str(k): str(v) for k, v in model_args.items()}
    out: dict[str, str] = {}
    for part in str(model_args or "").split(","):
        if "=" in part:
            key, value = part.split("=", 1)
            out[key.strip()] = value.strip()
    return out


def model_label(config: dict[str, Any]) -> str:
    """lmms-eval's model name, plus the basename of ``pretrained=`` when there is one, marked
    ``†<quantization>`` when the model was loaded quantized (``qwen2_vl:Qwen2-VL-72B†nf4``)."""
    name = str(config.get("model", "model"))
    args = parse_model_args(config.get("model_args"))
    pretrained = args.get("pretrained") or args.get("model")
    label = f"{name}:{Path(pretrained.rstrip('/')).name}" if pretrained and pretrained != name else name
    return mark_quantized(label, precision(args))


_QUANTIZED = ("nf4", "fp4", "int8", "int4")
_DTYPES = {
    "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32",
}  # fmt: skip


def precision(args: dict[str, str]) -> str:
    """The precision a run's model args state: the quantization (``nf4``, ``int8``...) when quantized,
    else the dtype (``bf16``, ``fp16``, ``fp32``); "" when they state neither."""
    quantization = str(args.get("quantization", "")).strip().lower()
    if quantization in _QUANTIZED:
        return quantization
    if str(args.get("load_in_4bit", "")).lower() in ("true", "1"):
        return "nf4" if str(args.get("bnb_4bit_quant_type", "nf4")).lower() == "nf4" else "fp4"
    if str(args.get("load_in_8bit", "")).lower() in ("true", "1"):
        return "int8"
    for key in ("dtype", "torch_dtype"):
        value = str(args.get(key, "")).strip().lower()
        if value in _DTYPES:
            return _DTYPES[value]
    return ""


def is_quantized(value: str) -> bool:
    return value in _QUANTIZED


def mark_quantized(label: str, value: str) -> str:
    """``label`` with ``†<value>`` appended when ``value`` is a quantization (and not already marked)."""
    return f"{label}{QUANTIZED_MARK}{value}" if is_quantized(value) and QUANTIZED_MARK not in label else label


def _settings_args(settings: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in settings.split(";")[0].split(",") if "=" in part)


def frames_setting(settings: str) -> int | None:
    """Frames per video named in a ``model_settings`` string (None when it names none)."""
    args = _settings_args(settings)
    for name in FRAME_ARGS:
        value = str(args.get(name, "")).strip()
        if value.isdigit():
            return int(value)
    return None


def extra_columns(raw: pd.DataFrame, settings: str | pd.Series = "") -> dict[str, pd.Series]:
    """``EXTRA_COLUMNS`` from a table of records (absent fields: "" / NaN / <NA>)."""
    out: dict[str, pd.Series] = {}
    out.update(text_columns(raw, RECORD_TEXT_AS_LOGGED))
    duration = raw["duration_s"] if "duration_s" in raw.columns else pd.Series(np.nan, index=raw.index)
    out["duration_s"] = pd.to_numeric(duration, errors="coerce").astype(float)
    per_row = settings if isinstance(settings, pd.Series) else pd.Series(settings, index=raw.index, dtype=object)
    out["frames"] = per_distinct(per_row, frames_setting, "Int64")
    out["judge_score"] = pd.Series(np.nan, index=raw.index, dtype=float)
    out["judge"] = pd.Series("", index=raw.index, dtype=object)
    out["precision"] = per_distinct(per_row, lambda text: precision(_settings_args(str(text))), object)
    out["export"] = (
        raw["provenance"].map(_export_label) if "provenance" in raw.columns else pd.Series("", index=raw.index)
    ).astype(object)
    for key, column in text_columns(raw, RECORD_TEXT_STRIPPED).items():
        out[key] = column.str.strip()
    return out


def text_columns(raw: pd.DataFrame, keys: Iterable[str]) -> dict[str, pd.Series]:
    """Fields of a table of records as text: "" where a record lacks one (one column of "" serves every field
    that no record has)."""
    out, empty = {}, pd.Series("", index=raw.index, dtype=str)
    for key in keys:
        column = raw[key] if key in raw.columns else None
        if column is None:
            out[key] = empty
        elif ARROW_TEXT and column.dtype == TEXT_DTYPE and not column.hasnans:  # text throughout already
            out[key] = column
        else:
            out[key] = column.astype(object).where(column.notna(), "").astype(str)
    return out


def _export_label(provenance: Any) -> str:
    export = provenance.get("export") if isinstance(provenance, dict) else None
    if not isinstance(export, dict):
        return ""
    return f"{export.get('name', '')}@{export.get('revision', '')}"


def model_settings(config: dict[str, Any]) -> str:
    """A run's model_args (placement arguments left out) and gen_kwargs as one text, as read: two runs are compared
    on what they were run with (a redacted read made ``token_strategy=single`` and ``=multiple`` one setting).
    Whatever shows it redacts it (``vdg_tasks.vocabulary.untrusted.redact``): ``frame_checks``' refusals."""
    args = {k: v for k, v in parse_model_args(config.get("model_args")).items() if k not in _PLACEMENT_ARGS}
    settings = ",".join(f"{k}={v}" for k, v in sorted(args.items()))
    gen = config.get("gen_kwargs") or ""
    return f"{settings};gen_kwargs={gen}" if gen else settings


#: model_args naming the checkpoint, in lmms-eval's precedence (``GeneralConfigTracker._get_model_name``).
CHECKPOINT_ARGS = ("peft", "delta", "pretrained", "model", "model_version", "model_name", "model_id", "path", "engine")
#: Fields of a prediction record naming the model behind it (per record, the first with a value).
MODEL_SOURCE_FIELDS: tuple[str, ...] = ("model_name", "pretrained", "model_path", "checkpoint")


def model_source(results: Mapping[str, Any]) -> str:
    """The model behind an lmms-eval results file: its model class and checkpoint (``qwen2_vl Qwen/Qwen2-VL-2B``),
    the checkpoint from the file's ``model_name`` else the first of ``CHECKPOINT_ARGS`` in its model_args. As read,
    for comparing runs (``check_models``); the ``sources`` table and ``check_models``' refusal redact it."""
    config = results.get("config") or {}
    name = str(config.get("model", "") or "")
    args = parse_model_args(config.get("model_args"))
    checkpoint = str(results.get("model_name") or "") or next((args[k] for k in CHECKPOINT_ARGS if args.get(k)), "")
    return " ".join(part for part in (name, checkpoint.rstrip("/")) if part)


def results_of(samples_file: Path) -> dict[str, Any]:
    """The lmms-eval results file beside a samples log (its ``config`` checked present)."""
    match = SAMPLES_FILE.match(samples_file.name)
    if not match:
        raise LogError(f"{samples_file}: not an lmms-eval samples file (<stamp>_samples_<task>.jsonl)")
    results = samples_file.with_name(f"{match['stamp']}_results.json")
    if not results.is_file():
        raise LogError(f"{samples_file}: no {results.name} beside it, so the model that wrote it is unknown")
    try:
        data = json.loads(results.read_bytes())
        if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
            raise KeyError("config")
        return data
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError) as exc:
        raise LogError(f"{results}: unreadable lmms-eval results file ({exc})") from None
