"""VLMEvalKit's per-question prediction files, read into the tidy frame's rows (``read_vlmevalkit``), and the one
door every ``--predictions`` file comes in by (``read_prediction_file``).

VLMEvalKit writes one file per model and dataset, ``{model}_{dataset}.xlsx`` (``.tsv`` or ``.json`` under
``PRED_FORMAT``): the dataset's own columns plus ``prediction``. Its evaluation writes ``{model}_{dataset}_score.xlsx``
beside it, the same columns plus ``score`` (1 right, 0 wrong, -1 not scored). The layouts read:

- Video-MME: ``index, video, video_path, duration, domain, candidates, sub_category, task_type, subtitle_path,
  question, answer, prediction``; ``candidates`` is a list of the option texts ("A. ..."), ``answer`` a letter.
- MVBench: ``index, task_type, ..., video, question, answer, candidates, prediction``; ``answer`` is the right
  candidate's text, not a letter.
- image-style MCQ: ``index, question, A, B, ..., answer, category, l2-category, ...``; ``answer`` a letter.

One file holds one condition. The condition is the one the spec names (``LABEL:CONDITION=FILE``), else a folder of
VLMEvalKit's layout named after a declared condition: of the file's real path (links and ``..`` resolved), its own
folder, else that folder's parent (VLMEvalKit run with ``--work-dir results/black`` writes ``results/black/<model>/``;
its run folder ``<model>/T<date>_G<commit>/`` is skipped); no folder further up is read. One file (or one content)
never stands for two conditions of one label, and one label's conditions of one benchmark are scored by one rule:
all ``_score`` files or none (``check_prediction_inputs``). The naming rule:
``{model}_{dataset}[_{setting}][_score].{xlsx,tsv,json}`` with a dataset of ``DATASETS`` gives the model (when the
spec gives no label) and the benchmark; a setting of the dataset's name (``_8frame``, ``_1fps``, ``_8frame_subs``) is
an axis, as a prediction file's ``sampling`` is: the label gets ``@8f`` / ``@1fps`` / ``@8frame_subs``. A dataset vdg
does not know needs ``--benchmark`` and a label.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import io
import json
import logging
import os
import re
import string
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import pandas as pd

from postprocess.reading.answer_options import MAX_OPTIONS
from postprocess.reading.files import (
    SOURCE_ATTR,
    VLMEVALKIT_PREDICTIONS,
    VLMEVALKIT_SCORES,
    LogError,
    check_utf8,
    log_name,
    read_log_bytes,
    source_info,
)
from postprocess.reading.frame import SAMPLE_COLUMNS, VIDEO_ID_FIELDS
from postprocess.reading.frame_checks import MODELS_ATTR, check_one_video_per_question, none_for_missing
from postprocess.reading.options_file import OptionsFile
from postprocess.reading.prediction_files import apply_settings, first_field, normalise_condition, read_predictions
from postprocess.reading.run_labels import extra_columns
from vdg_tasks.vocabulary.conditions import CONDITIONS, aliases
from vdg_tasks.vocabulary.parse import LETTERS, parse_answer

__all__ = [
    "DATASETS",
    "VLMEVALKIT_SUFFIXES",
    "FileName",
    "check_prediction_inputs",
    "condition_from_folders",
    "file_name",
    "is_vlmevalkit_file",
    "read_prediction_file",
    "read_vlmevalkit",
]

#: VLMEvalKit's dataset names -> vdg's benchmark (longest first: ``MVBench_MP4`` before ``MVBench``).
DATASETS: Mapping[str, str] = MappingProxyType(
    {"Video-MME": "videomme", "MVBench_MP4": "mvbench", "MVBench": "mvbench"}
)
#: The suffixes of VLMEvalKit's prediction files (``PRED_FORMAT``: xlsx by default, tsv, json).
VLMEVALKIT_SUFFIXES: tuple[str, ...] = (".xlsx", ".tsv", ".json")
#: What VLMEvalKit writes as the prediction when its call to the model failed.
FAIL_MESSAGE = "Failed to obtain answer via API"
#: Fields read as the question id, in precedence order (per row the first with a value).
QUESTION_ID_FIELDS: tuple[str, ...] = ("question_id", "index")
#: Fields read as the task type, in precedence order (Video-MME and MVBench: task_type; image MCQ: category).
TASK_TYPE_FIELDS: tuple[str, ...] = ("task_type", "category")
#: Fields read as the option texts (a list, or its Python / JSON text), in precedence order.
OPTION_FIELDS: tuple[str, ...] = ("candidates", "options")
#: Columns VLMEvalKit's files carry that are neither read nor kept (prompt parts, paths, frame bounds).
_NOT_KEPT = frozenset(
    {"question", "hint", "image", "image_path", "video_path", "subtitle_path", "prefix", "data_type", "bound",
     "start", "end", "prediction", "answer", "score", *string.ascii_uppercase}
)  # fmt: skip
#: VLMEvalKit's run folder (``<work_dir>/<model>/T<date>_G<commit>/``), which names no condition.
_RUN_FOLDER = re.compile(r"^T\d{8}_G\w*$")
#: Key of ``read_vlmevalkit``'s table attrs: label, benchmark, condition, whether scored, the real path, the
#: content's sha256 and the spec (what ``check_prediction_inputs`` compares).
INPUT_ATTR = "vdg_vlmevalkit_input"
logger = logging.getLogger(__name__)
_NAME = re.compile(
    r"^(?P<model>.+?)_(?P<dataset>" + "|".join(re.escape(d) for d in DATASETS) + r")(?P<rest>(?:_[^_]+)*?)"
    r"(?P<scored>_score)?$"
)
_FRAMES = re.compile(r"^(\d+)frames?$")
_FPS = re.compile(r"^(\d+(?:\.\d+)?)fps$")
Profile = Literal["videomme", "mvbench", "mcq"]


@dataclass(frozen=True)
class FileName:
    """What a VLMEvalKit file's name says by the naming rule ``{model}_{dataset}[_{setting}][_score].<suffix>``.

    Attributes:
        model: VLMEvalKit's model name.
        dataset: the dataset as VLMEvalKit names it, setting included (``Video-MME_8frame``).
        benchmark: vdg's benchmark (``DATASETS``).
        setting: the setting the dataset's name adds (``frames:8``, ``fps:1``, or other text such as
            ``8frame_subs``); "" for none.
        scored: whether it is the ``_score`` file of VLMEvalKit's evaluation.
    """

    model: str
    dataset: str
    benchmark: str
    setting: str
    scored: bool


def file_name(path: Path) -> FileName | None:
    """The naming rule applied to ``path``'s name; None when it names no dataset of ``DATASETS``."""
    stem = log_name(Path(path))
    stem = stem[: -len(Path(stem).suffix)] if Path(stem).suffix else stem
    match = _NAME.match(stem)
    if match is None:
        return None
    rest = match["rest"].lstrip("_")
    frames, fps = _FRAMES.match(rest), _FPS.match(rest)
    if frames:
        setting = f"frames:{int(frames[1])}"
    elif fps:
        rate = float(fps[1])
        setting = f"fps:{int(rate) if rate.is_integer() else rate}"
    else:
        setting = rest
    dataset = match["dataset"] + match["rest"]
    return FileName(match["model"], dataset, DATASETS[match["dataset"]], setting, bool(match["scored"]))


def _suffix(path: Path) -> str:
    return Path(log_name(Path(path))).suffix.lower()


def is_vlmevalkit_file(path: Path) -> bool:
    """Whether ``path`` is read as a VLMEvalKit file: an ``.xlsx`` or ``.tsv`` file, or a ``.json`` one whose first
    record has ``index`` and ``prediction`` and no ``condition`` (a prediction file of another harness names its
    condition in every record)."""
    suffix = _suffix(path)
    if suffix in (".xlsx", ".tsv"):
        return True
    if suffix != ".json" or not Path(path).is_file():
        return False
    try:
        records = json.loads(read_log_bytes(Path(path)).decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False  # read_predictions names the fault
    first = records[0] if isinstance(records, list) and records else None
    return isinstance(first, dict) and {"index", "prediction"} <= set(first) and "condition" not in first


def _declared_condition(name: str, where: str) -> str:
    """``name`` as a declared condition (an alias read as its condition); an unknown one suggests the nearest."""
    condition = normalise_condition(name, aliases())
    if condition in CONDITIONS:
        return condition
    near = difflib.get_close_matches(condition, list(CONDITIONS), n=3)
    hint = f" Did you mean {', '.join(repr(n) for n in near)}?" if near else ""
    raise LogError(f"{where}: {name!r} is not a declared condition.{hint} Declared: {', '.join(CONDITIONS)}.")


def condition_from_folders(path: Path) -> tuple[str, Path] | None:
    """(condition, the folder naming it) by VLMEvalKit's layout: of ``path``'s real path (links and ``..``
    resolved), its own folder, else that folder's parent, whose name is a declared condition or alias
    (``results/black/Qwen2-VL/Qwen2-VL_Video-MME.xlsx`` -> black, ``black/m_Video-MME.tsv`` -> black); VLMEvalKit's
    run folder (``T20250101_G1a2b3c4d``) is skipped. None when neither folder names one: a folder further up (a
    project folder named ``open`` or ``order``) is never read."""
    names = aliases()
    folder = Path(os.path.realpath(path)).parent
    if _RUN_FOLDER.match(folder.name):
        folder = folder.parent
    for candidate in (folder, folder.parent):
        condition = normalise_condition(candidate.name, names)
        if candidate.name and condition in CONDITIONS:
            return condition, candidate
    return None


def _read_table(path: Path) -> tuple[pd.DataFrame, str]:
    """The rows of an xlsx, tsv or json file, every cell as read (text for tsv), with ``_where`` ("FILE row N",
    the header being row 1 of a sheet or TSV; JSON records count from 1) and ``_source`` ("FILE:N"); and the
    sha256 of its (decompressed) bytes."""
    suffix = _suffix(path)
    data = read_log_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    if suffix == ".xlsx":
        try:
            table = pd.read_excel(io.BytesIO(data), dtype=object, keep_default_na=False, na_values=[""])
        except ImportError:
            raise LogError(
                f"{path}: reading .xlsx needs openpyxl (pip install openpyxl), or have VLMEvalKit write .tsv "
                "(PRED_FORMAT=tsv)"
            ) from None
        except (zipfile.BadZipFile, ValueError, KeyError, OSError) as exc:
            raise LogError(f"{path}: not a readable xlsx file ({' '.join(str(exc).split())})") from None
        first = 2
    elif suffix == ".tsv":
        check_utf8(data.removeprefix(b"\xef\xbb\xbf"), path)
        try:
            table = pd.read_csv(io.BytesIO(data), sep="\t", dtype=str, keep_default_na=False, na_values=[""])
        except pd.errors.EmptyDataError:
            raise LogError(f"{path}: empty predictions file (no header, no rows)") from None
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise LogError(f"{path}: not a readable TSV file ({' '.join(str(exc).split())})") from None
        first = 2
    else:
        check_utf8(data, path)
        try:
            records = json.loads(data.decode("utf-8"))
        except json.JSONDecodeError as exc:
            raise LogError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise LogError(f"{path}: expected a JSON array of VLMEvalKit rows (objects)")
        table = pd.DataFrame.from_records(records)
        first = 1
    rows = range(first, len(table) + first)
    table["_where"] = [f"{path} row {n}" for n in rows]
    table["_source"] = [f"{path}:{n}" for n in rows]
    return table.astype(object).where(table.notna(), None), digest


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or not str(value).strip()


def _text(value: Any) -> str:
    """A cell as text: an integral number without ``.0`` (xlsx reads ids as numbers)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _option_texts(raw: pd.DataFrame, where: pd.Series) -> tuple[pd.Series, str]:
    """The option texts of every row and where they came from: the first of ``OPTION_FIELDS`` (a list, or the
    Python / JSON text of one, as VLMEvalKit's TSV writes it), else the letter columns A, B, ... of an image MCQ."""
    field = next((f for f in OPTION_FIELDS if f in raw.columns), None)
    out = pd.Series(None, index=raw.index, dtype=object)
    if field is None:
        return _letter_columns(raw, where), "option columns"
    for idx, value in raw[field].items():
        texts = value
        if isinstance(value, str):
            try:
                texts = ast.literal_eval(value.strip())  # VLMEvalKit writes a Python list's repr; never eval()
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                texts = None
        if not isinstance(texts, (list, tuple)) or not all(isinstance(t, (str, int, float)) for t in texts):
            raise LogError(f"{where[idx]}: {field} {str(value)[:80]!r} is not a list of the option texts")
        out[idx] = [str(t) for t in texts]
    return _checked_counts(out, where), f"{field} field"


def _letter_columns(raw: pd.DataFrame, where: pd.Series) -> pd.Series:
    """The option texts of an image MCQ's letter columns, as VLMEvalKit reads them: per row the columns A, B, ...
    (any capital letter) that are not blank. They must run from A without a gap (a row with fewer options leaves
    its last columns blank) and number 2 to ``MAX_OPTIONS``; otherwise it is an error naming the row and column."""
    file = str(where.iloc[0]).rsplit(" row ", 1)[0]
    letters = sorted(c for c in raw.columns if isinstance(c, str) and len(c) == 1 and c in string.ascii_uppercase)
    if letters[:2] != ["A", "B"]:
        raise LogError(f"{file}: no options: no {' or '.join(OPTION_FIELDS)} column and no A, B columns")
    absent = [x for x in string.ascii_uppercase[: string.ascii_uppercase.index(letters[-1])] if x not in letters]
    if absent:
        after = next(x for x in letters if x > absent[0])
        raise LogError(
            f"{file}: option columns {', '.join(letters)}: no column {absent[0]}; a row's options are its columns A, "
            f"B, C, ... without a gap (read in order, column {after}'s text would be option {absent[0]})"
        )
    filled = ~raw[letters].map(_blank).to_numpy(dtype=bool)
    out = pd.Series(None, index=raw.index, dtype=object)
    for row, idx in enumerate(raw.index):
        n = int(filled[row].sum())
        if not filled[row, :n].all():
            gap = letters[int(np.flatnonzero(~filled[row, :n])[0])]
            after = letters[n + int(np.flatnonzero(filled[row, n:])[0])]
            raise LogError(
                f"{where[idx]}: column {gap} is blank but column {after} holds an option: a row's options are its "
                f"columns A, B, C, ... without a gap (its last ones blank when it has fewer)"
            )
        if n > MAX_OPTIONS:
            shown = f"columns A-{letters[n - 1]}"
            raise LogError(f"{where[idx]}: {n} options ({shown}); vdg reads 2 to {MAX_OPTIONS} (A-{LETTERS[-1]})")
        out[idx] = [_text(raw.at[idx, x]) for x in letters[:n]]
    return _checked_counts(out, where)


def _checked_counts(texts: pd.Series, where: pd.Series) -> pd.Series:
    for idx, options in texts.items():
        if not 2 <= len(options) <= MAX_OPTIONS:
            raise LogError(f"{where[idx]}: {len(options)} options; vdg reads 2 to {MAX_OPTIONS} (A-{LETTERS[-1]})")
    return texts


def _answer_letter(answer: Any, options: list[str], profile: Profile, where: str) -> str:
    """The ground-truth letter: a letter among the options, or (MVBench's way, tried first there) the right
    option's text."""
    text = "" if _blank(answer) else _text(answer)
    letters = LETTERS[: len(options)]
    by_text = [i for i, o in enumerate(options) if o.strip() == text]
    if profile == "mvbench" and by_text:
        return letters[by_text[0]]
    if len(text) == 1 and text.upper() in letters:
        return text.upper()
    if by_text:
        return letters[by_text[0]]
    raise LogError(
        f"{where}: answer {str(answer)[:80]!r} is neither a letter A-{letters[-1]} nor the text of one of its "
        f"{len(options)} options"
    )


#: The answer prefixes VLMEvalKit's Video-MME scoring removes before it takes the first option letter.
_VIDEOMME_PREFIXES = (
    "The best answer is", "The correct answer is", "The answer is", "The answer", "The best option is",
    "The correct option is", "Best answer:", "Best option:", "Answer:", "Option:",
)  # fmt: skip


def _first_letter(text: str, options: list[str], profile: Profile) -> str | None:
    """The letter VLMEvalKit's own rule reads, before its fallback: Video-MME's first capital option letter once
    the answer prefixes are removed; MVBench's first word as a letter ("(B)", "B.", "b"); None otherwise."""
    letters = LETTERS[: len(options)]
    if profile == "videomme":
        for prefix in _VIDEOMME_PREFIXES:
            text = text.replace(prefix, "")
        found = re.search(f"[{letters}]", text)
        return found[0] if found else None
    if profile == "mvbench":
        words = text.split()
        word = words[0].strip("().,:*").upper() if words else ""
        return word if len(word) == 1 and word in letters else None
    return None


def read_letter(prediction: str, options: list[str], profile: Profile) -> str | None:
    """The letter a VLMEvalKit prediction chose, read as VLMEvalKit scores it: its dataset's own rule
    (``_first_letter``), then, where that reads none, vdg's parser on the option texts
    (``vdg_tasks.vocabulary.parse.parse_answer``, standing for VLMEvalKit's ``can_infer`` fallback and its judge).

    Not copied: Video-MME's rule looks for A-D whatever the count, MVBench's substring test reads an empty first
    word as every answer; vdg reads the question's own letters and reads an empty reply as no letter."""
    letter = _first_letter(prediction, options, profile)
    if letter is not None:
        return letter
    return parse_answer(prediction, n_options=len(options), options=options).letter


def _score(value: Any, where: str) -> int | None:
    """A score cell: 1, 0 or -1 (None when blank); anything else is an error naming the row."""
    if _blank(value):
        return None
    text = _text(value)
    if re.fullmatch(r"-?\d+(\.0*)?", text) and float(text) in (1.0, 0.0, -1.0):
        return int(float(text))
    raise LogError(f"{where}: score {str(value)[:40]!r} is not 1 (right), 0 (wrong) or -1 (not scored)")


def _verdict(
    prediction: Any, answer: str, options: list[str], profile: Profile, score: int | None, scored: bool, where: str
) -> tuple[str | None, str, str | None]:
    """(letter, status, error) of one row; with a score column its score decides right and wrong."""
    if _blank(prediction) or FAIL_MESSAGE in str(prediction):
        return None, "error", "no prediction" if _blank(prediction) else FAIL_MESSAGE
    letter = read_letter(str(prediction), options, profile)
    if not scored:
        return letter, "ok" if letter else "unparsed", None
    if score is None:
        raise LogError(f"{where}: the score file has no score for prediction {str(prediction)[:80]!r}")
    if score == 1:
        return answer, "ok", None  # VLMEvalKit judged it the answer, whatever vdg's reading
    if score == -1:
        return None, "unparsed", None
    if letter == answer:
        raise LogError(
            f"{where}: score 0 but prediction {str(prediction)[:80]!r} reads as the answer {answer}; "
            "was the score file made from another prediction file?"
        )
    return letter, "ok" if letter else "unparsed", None


def _profile(name: FileName | None) -> Profile:
    dataset = name.dataset if name else ""
    if dataset.startswith("Video-MME"):
        return "videomme"
    if dataset.startswith("MVBench"):
        return "mvbench"
    return "mcq"


def _kept(raw: pd.DataFrame, read: set[str]) -> dict[str, pd.Series]:
    """VLMEvalKit's other scalar columns (``l2-category``, ``split``, ...) as text columns for ``vdg report --by``."""
    out = {}
    skip = read | _NOT_KEPT | set(SAMPLE_COLUMNS) | set(QUESTION_ID_FIELDS) | set(OPTION_FIELDS)
    for column in raw.columns:
        if not isinstance(column, str) or column in skip or column.startswith("_"):
            continue
        values = raw[column]
        if values.map(lambda v: isinstance(v, (list, dict, tuple, set))).any():
            continue
        out[column] = values.map(lambda v: "" if _blank(v) else _text(v)).astype(object)
    return out


def _spec(spec: str, path: Path) -> tuple[str, str | None]:
    """(label, condition or None) of ``LABEL:CONDITION`` / ``LABEL`` / ``:CONDITION`` / ""."""
    label, sep, condition = spec.rpartition(":")
    if not sep:
        return spec.strip(), None
    return label.strip(), _declared_condition(condition.strip(), f"--predictions {spec}={path}")


def read_vlmevalkit(path: Path, spec: str = "", benchmark: str | None = None) -> pd.DataFrame:
    """A VLMEvalKit prediction (or ``_score``) file of one condition as tidy rows.

    ``spec`` is the left side of ``--predictions LABEL:CONDITION=FILE``: the label (default: the model of the
    file's name) and the condition (default: ``condition_from_folders``). The benchmark is the file name's
    (``file_name``), else ``benchmark``. The question id is ``question_id`` where the row has one, else VLMEvalKit's
    ``index`` (its row number in the dataset's TSV, the same in every condition's file of one dataset); the task
    type ``task_type``, else ``category``; the video id the first of ``VIDEO_ID_FIELDS``; ``duration``, ``domain``
    and ``sub_category`` as given. The options are ``candidates`` (or ``options``), else the letter columns; the
    answer is a letter or (MVBench) the right option's text. A blank prediction or VLMEvalKit's failure message is
    an ``error`` row; otherwise the prediction is read as VLMEvalKit reads it (``read_letter``) and, in a score file,
    its ``score`` decides: 1 right (pred = the answer), 0 wrong (a score of 0 for a prediction that reads as the
    answer is refused), -1 ``unparsed`` (scored wrong, as every unparsed answer is). Score-decided rows keep
    ``scoring`` letter (any other value reads as a graded score: ``postprocess.reading.frame.is_graded``); their
    file's ``sources`` kind, ``VLMEVALKIT_SCORES``, says the score column decided, and ``check_prediction_inputs``
    keeps such files from being paired with files vdg reads itself.

    Raises:
        LogError: an unreadable file, a missing column, an empty id, task type or answer, a repeated question id,
            a score other than 1 / 0 / -1, option columns with a gap or beyond H, a condition that is not declared,
            or no label, condition or benchmark; each names the file and, for a row's fault, its row.
    """
    path = Path(path)
    if not path.is_file():
        raise LogError(f"{path}: no such predictions file")
    label, condition = _spec(spec, path)
    name = file_name(path)
    label = label or (name.model if name else "")
    if not label:
        raise LogError(f"{path}: no model label: give --predictions LABEL:CONDITION={path} (the name does not follow "
                       f"{{model}}_{{dataset}}.xlsx with a dataset of {', '.join(DATASETS)})")  # fmt: skip
    if condition is None:
        found = condition_from_folders(path)
        if found is None:
            raise LogError(f"{path}: no condition: give --predictions {label}:CONDITION={path}, or keep the file in a "
                           "folder named after its condition, or in its model's folder there (results/black/<model>/; "
                           "only those two folders of its real path are read)")  # fmt: skip
        condition, folder = found
        logger.info("%s: condition %s, named by its folder %s", path, condition, folder)
    bench = name.benchmark if name else benchmark
    if not bench:
        raise LogError(f"{path}: no benchmark: its name does not follow {{model}}_{{dataset}}.xlsx with a dataset of "
                       f"{', '.join(DATASETS)}; give --benchmark")  # fmt: skip
    raw, digest = _read_table(path)
    if raw.empty:
        raise LogError(f"{path}: holds no prediction rows")
    where = raw["_where"]
    task_field = next((f for f in TASK_TYPE_FIELDS if f in raw.columns), None)
    missing = [c for c in ("prediction", "answer") if c not in raw.columns]
    if not any(f in raw.columns for f in QUESTION_ID_FIELDS):
        missing.insert(0, "index")
    if task_field is None:
        missing.append(" or ".join(TASK_TYPE_FIELDS))
    if missing:
        shown = ", ".join(str(c) for c in raw.columns if not str(c).startswith("_"))
        raise LogError(f"{path}: missing column(s) {', '.join(missing)} (a VLMEvalKit prediction file; it has {shown})")
    question_id, id_fields = first_field(raw.assign(**{f: raw[f].map(lambda v: None if _blank(v) else _text(v))
                                                       for f in QUESTION_ID_FIELDS if f in raw.columns}),
                                         QUESTION_ID_FIELDS)  # fmt: skip
    for key, values in (("question id", question_id), (task_field, raw[task_field]), ("answer", raw["answer"])):
        empty = values.map(_blank).astype(bool)
        if empty.any():
            raise LogError(f"{where[raw.index[empty][0]]}: no {key}")
    repeated = question_id.duplicated(keep=False)
    if repeated.any():
        first_id = question_id[repeated].iloc[0]
        one, two = (str(where[i]).rsplit(" row ", 1)[1] for i in raw.index[question_id == first_id][:2])
        raise LogError(
            f"{path} rows {one} and {two}: question id {first_id!r} appears twice (one file holds one condition of "
            "one dataset)"
        )
    options, option_origin = _option_texts(raw, where)
    profile = _profile(name)
    scored = "score" in raw.columns
    answers, preds, statuses, errors = [], [], [], []
    for idx in raw.index:
        answer = _answer_letter(raw.at[idx, "answer"], options[idx], profile, where[idx])
        score = _score(raw.at[idx, "score"], where[idx]) if scored else None
        letter, status, error = _verdict(
            raw.at[idx, "prediction"], answer, options[idx], profile, score, scored, where[idx]
        )
        answers.append(answer)
        preds.append(letter)
        statuses.append(status)
        errors.append(error)
    status = pd.Series(statuses, index=raw.index, dtype=object)
    pred = pd.Series(preds, index=raw.index, dtype=object)
    answer = pd.Series(answers, index=raw.index, dtype=object)
    correct = pd.Series(pd.NA, index=raw.index, dtype="boolean")
    answered = status != "error"
    correct[answered] = (pred[answered] == answer[answered]).astype(bool)
    video, video_fields = first_field(raw, VIDEO_ID_FIELDS)

    def text_of(column: str) -> pd.Series:
        values = raw[column] if column in raw.columns else pd.Series(None, index=raw.index, dtype=object)
        return values.map(lambda v: "" if _blank(v) else _text(v)).astype(object)

    table = pd.DataFrame(
        {
            "model": label,
            "model_settings": "",
            "benchmark": bench,
            "condition": condition,
            "question_id": question_id.astype(str),
            "video_id": video.fillna("").astype(str),
            "task_type": text_of(task_field),
            "duration": text_of("duration"),
            "n_options": options.map(len).astype("Int64"),
            "n_options_rule": None,  # resolved by load_frame
            "answer": answer,
            "pred": pred,
            "status": status,
            "error": pd.Series(errors, index=raw.index, dtype=object),
            "correct": correct,
            "score": np.nan,  # a letter's: ``correct``, filled by load_frame
            "scoring": "",
            "source": raw["_source"],
            **extra_columns(pd.DataFrame({c: text_of(c) for c in ("domain", "sub_category")})),
        },
        index=raw.index,
    )
    table = none_for_missing(table[list(SAMPLE_COLUMNS)].copy())
    apply_settings(table, pd.Series(name.setting if name else "", index=raw.index, dtype=object))
    read = {task_field, "duration", "domain", "sub_category", *VIDEO_ID_FIELDS}
    for column, values in _kept(raw, read).items():
        table[column] = values
    check_one_video_per_question(table)
    table.attrs[SOURCE_ATTR] = source_info(
        path,
        VLMEVALKIT_SCORES if scored else VLMEVALKIT_PREDICTIONS,
        {column: table[column].unique() for column in ("model", "benchmark", "condition")},
        len(table),
        question_id_field=", then ".join(id_fields),
        video_id_field=", then ".join(video_fields),
        n_options_origins=[(option_origin, len(table))],
    )
    table.attrs[MODELS_ATTR] = []
    table.attrs[INPUT_ATTR] = {
        "label": str(table["model"].iloc[0]),
        "benchmark": bench,
        "condition": condition,
        "scored": scored,
        "real_path": os.path.realpath(path),
        "sha256": digest,
    }
    return table.reset_index(drop=True)


def _given(spec: str, path: Path) -> str:
    return f"--predictions {spec}={path}" if spec else f"--predictions {path}"


def _same_input(earlier: Mapping[str, Any], later: Mapping[str, Any]) -> str:
    if earlier["real_path"] == later["real_path"]:
        return f"one file ({later['real_path']})"
    return "files of the same content" if earlier["sha256"] == later["sha256"] else ""


def check_prediction_inputs(
    given: Sequence[tuple[str, Path, pd.DataFrame]], others: Sequence[pd.DataFrame] = ()
) -> None:
    """Refuse ``--predictions`` that would join one set of answers with itself, or score two arms by two rules.

    ``given`` is each ``(spec, FILE, rows read)`` in order, ``others`` the rows of the samples logs. Refused, naming
    both specs: a VLMEvalKit file (by its real path, or its content's sha256) given twice for one label (two
    conditions of it would be one run's answers, their gap 0); any other file given twice with one label (a
    prediction file of another harness may hold several conditions, so one file is read once per label); and a
    (label, benchmark) with a condition read from a VLMEvalKit ``_score`` file (its ``score`` decides) and another
    read from a prediction file or a samples log (vdg reads the reply): one reply would be right in one arm and
    unparsed in the other.

    Raises:
        LogError: naming both inputs.
    """
    generic: dict[tuple[str, str], str] = {}
    vlm: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    scored: dict[tuple[str, str], tuple[str, str]] = {}
    read_by_vdg: list[tuple[pd.DataFrame, str]] = [(t, "") for t in others]
    for spec, path, table in given:
        text = _given(spec, path)
        info = table.attrs.get(INPUT_ATTR)
        if info is None:
            key = (spec.strip(), os.path.realpath(path))
            if key in generic:
                raise LogError(f"{generic[key]} and {text}: one file given twice for one label; give it once")
            generic[key] = text
            read_by_vdg.append((table, text))
            continue
        for earlier_text, earlier in vlm.setdefault(info["label"], []):
            same = _same_input(earlier, info)
            if same:
                arms = list(dict.fromkeys((earlier["condition"], info["condition"])))
                what = f"for conditions {' and '.join(arms)}" if len(arms) == 2 else f"twice for condition {arms[0]}"
                raise LogError(
                    f"{earlier_text} and {text}: {same} {what} of {info['label']}; a VLMEvalKit file holds one "
                    "run of one condition: give each condition its own run's file"
                )
        vlm[info["label"]].append((text, info))
        if info["scored"]:
            scored.setdefault((info["label"], info["benchmark"]), (text, info["condition"]))
        else:
            read_by_vdg.append((table, text))
    if not scored:
        return
    for table, text in read_by_vdg:
        keys = table[["model", "benchmark", "condition"]].astype(str).drop_duplicates()
        for row, (model, benchmark, condition) in zip(keys.index, keys.itertuples(index=False), strict=True):
            if (model, benchmark) in scored:
                score_text, score_condition = scored[(model, benchmark)]
                text = text or f"the samples log {str(table.at[row, 'source']).rsplit(':', 1)[0]}"
                raise LogError(
                    f"{score_text} and {text}: {model} / {benchmark} has condition {score_condition} from a "
                    f"VLMEvalKit _score file (its score column decides) and condition {condition} from a file vdg "
                    "scores by reading the reply: one reply could be right in one arm and unparsed in the other. "
                    "Give every condition's _score file, or every condition's prediction file"
                )


def read_prediction_file(
    spec: str, path: str | Path, benchmark: str | None = None, options_file: OptionsFile | None = None
) -> pd.DataFrame:
    """One ``--predictions SPEC=FILE`` as tidy rows: a VLMEvalKit file (``is_vlmevalkit_file``) by
    ``read_vlmevalkit``, any other by ``postprocess.reading.prediction_files.read_predictions`` (``spec`` its
    model label)."""
    path = Path(path)
    if is_vlmevalkit_file(path):
        return read_vlmevalkit(path, spec, benchmark)
    if not spec:
        raise LogError(f"{path}: not a VLMEvalKit prediction file, so its name says no model: give --predictions "
                       f"MODEL={path}")  # fmt: skip
    return read_predictions(path, spec, benchmark, options_file=options_file)
