"""The derive spec (``vdg_derive.json``) and the run-time side of a derived folder: a doc's options and
answer, the derived :class:`~vdg_tasks.data.benchmarks.Benchmark` and the hooks ``vdg_derived.py`` holds.

Part of ``vdg derive`` (:mod:`vdg_tasks.lmms.derive`); lmms-eval imports this on every derived task's load.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import inspect
import itertools
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from loguru import logger

from vdg_tasks.data.benchmarks import Benchmark, VideoUnavailable
from vdg_tasks.data.local_copies import LocalLayout, local_dir, local_video, require_video_path
from vdg_tasks.lmms.hooks import (
    call_aggregation,
    make_doc_to_text,
    make_doc_to_visual,
    make_process_docs,
    make_process_results,
)
from vdg_tasks.perturb.text import option_text
from vdg_tasks.vocabulary.catalogue import OPTIONS_ONLY
from vdg_tasks.vocabulary.conditions import CONDITIONS, Requirement
from vdg_tasks.vocabulary.option_lines import OptionLines, find_options
from vdg_tasks.vocabulary.parse import LETTERS
from vdg_tasks.vocabulary.record import METRIC_KEY, RECORD_KEY
from vdg_tasks.vocabulary.scoring import JUDGE, LETTER, scoring
from vdg_tasks.vocabulary.seeding import stable_seed
from vdg_tasks.vocabulary.untrusted import UntrustedPath, path_component

SPEC_FILE = "vdg_derive.json"
HOOKS_MODULE = "vdg_derived"
#: Where the view keeps the raw doc (the base's own functions are called on it).
RAW_KEY = "vdg_raw_doc"
#: Marks an options spec of numbered fields: ``option{i}`` = option0, option1, ...
NUMBERED = "{i}"
#: Marks an options spec of lettered fields: ``choice_{a}`` = choice_a, choice_b, ... (EgoPlan; either case).
LETTERED = "{a}"
#: Separates alternative fields (``candidates|options``): the first one a doc has is read.
ALTERNATIVE = "|"
#: Marks an options spec of lettered lines inside text fields: ``@question|question_prompt`` reads them from the
#: first of those fields whose text has them (``vdg_tasks.vocabulary.option_lines``).
IN_TEXT = "@"
#: The pseudo-field of an ``IN_TEXT`` options spec that is the base's own prompt (``@<prompt>``): VITATECS builds its
#: lettered options from two caption fields inside its ``doc_to_text``, so only the prompt holds them.
PROMPT_FIELD = "<prompt>"
#: The rate of a source that is a folder of frames (``--frame-folder-fps``).
DEFAULT_FRAME_FOLDER_FPS = 1.0
#: What derived docs carry: options only (no characters, titles or subtitles).
PROVIDES: frozenset[Requirement] = OPTIONS_ONLY
GENERIC_POST_PROMPT = "Answer with the option's letter from the given choices directly."


class DeriveError(ValueError):
    """A task that cannot be derived, or a bad request (the message names the task and the reason;
    ``short``: the reason in a few words, for a group's list; ``derivable``: a refused group's members that can be
    derived one by one)."""

    def __init__(self, message: str, short: str = "", derivable: Sequence[DeriveSpec] = ()) -> None:
        super().__init__(message)
        self.short = short or message
        self.derivable = tuple(derivable)


def refusal(task: str, reason: str, short: str = "", derivable: Sequence[DeriveSpec] = ()) -> DeriveError:
    """The error of a task that cannot be derived: ``cannot derive <task>: <reason>``."""
    return DeriveError(f"cannot derive {task}: {reason}", short or reason, derivable)


@dataclass(frozen=True)
class Fields:
    """The doc fields of a base task (None: it has none). ``options`` is a field holding a list, a
    newline-separated string or a letter -> text mapping, or numbered (``option{i}``) or lettered (``choice_{a}``)
    fields."""

    question_id: str | None = None
    options: str | None = None
    answer: str | None = None
    video_id: str | None = None
    task_type: str | None = None
    question: str | None = None


@dataclass(frozen=True)
class DeriveSpec:
    """Everything the derived tasks' hooks need (``vdg_derive.json``).

    Attributes:
        task: the base task; the derived tasks are ``<task>_vdg_<condition>``.
        yaml_path: the base task's YAML.
        fields: its doc fields.
        doc_to_visual, doc_to_text: its video lookup and prompt builder (dotted or file-path names).
        process_results: its scorer, logged beside vdg's record; None when absent or not offline-safe.
        process_docs: its own ``process_docs``, applied before vdg's question-set filter.
        visual_kwargs: its ``lmms_eval_specific_kwargs`` (default entry merged), for a 2-parameter
            doc_to_visual; None when it has none.
        conditions: the derived conditions.
        group: the group (or tag) it was derived as a member of, "" for none.
        frame_folder_fps: the rate of a source that is a folder of frames.
        scoring: how a reply is scored (``vdg_tasks.vocabulary.scoring``): ``letter``, or for a task without
            options its own per-question metric or vdg's judge; such a task gets the conditions that need no options.
        frames: its doc_to_visual returns decoded frames or images, not a video file: the conditions apply to them.
        doc_to_target: its ``doc_to_target`` function, where no answer field is found: the answer is what it returns
            (the ``target`` lmms-eval logs); None when an answer field is read.
        aggregation: the base's aggregation of the metric a ``mean:<key>`` scoring reads, called on one question's
            value; None for the other scorings.
        dataset: the base's ``dataset_path``, ``dataset_kwargs`` (local files absolute), ``dataset_name`` and the
            ``split`` lmms-eval evaluates, which the template's dataset fields (``vdg_derived.dataset_path``, ...)
            give lmms-eval unless ``$VDG_LOCAL_DATA`` has a local copy (``vdg_tasks.lmms.derive_data``); None where
            the template keeps the base's own fields (a class task, a spec written before).
    """

    task: str
    yaml_path: str
    fields: Fields
    doc_to_visual: str
    doc_to_text: str
    process_results: str | None
    process_docs: str | None
    visual_kwargs: dict[str, Any] | None
    conditions: tuple[str, ...]
    group: str = ""
    frame_folder_fps: float = DEFAULT_FRAME_FOLDER_FPS
    scoring: str = LETTER
    frames: bool = False
    doc_to_target: str | None = None
    aggregation: str | None = None
    dataset: dict[str, Any] | None = None

    @property
    def graded(self) -> bool:
        """Whether its replies are scored on a graded scale (``vdg_tasks.vocabulary.scoring``)."""
        return scoring(self.scoring).graded

    def to_json(self) -> str:
        return json.dumps({"version": 1, **dataclasses.asdict(self)}, indent=1, default=str) + "\n"

    @classmethod
    def from_json(cls, text: str) -> DeriveSpec:
        data = json.loads(text)
        data.pop("version", None)
        return cls(**{**data, "fields": Fields(**data["fields"]), "conditions": tuple(data["conditions"])})


# --- options and answers ------------------------------------------------------------------------------


def field_marker(field: str) -> str | None:
    """The numbering marker of an options field (``NUMBERED``, ``LETTERED``), None for a plain field."""
    return next((m for m in (NUMBERED, LETTERED) if m in field), None)


def _numbered_keys(doc: Mapping[str, Any], field: str) -> dict[int, str]:
    """0-based position -> key of the doc's numbered (``option{i}``: its own numbers) or lettered
    (``choice_{a}``: a = 0) fields."""
    marker = field_marker(field)
    prefix, _, suffix = field.partition(str(marker))
    keys: dict[int, str] = {}
    for key in map(str, doc):
        tail = key[len(prefix) : len(key) - len(suffix)] if key.startswith(prefix) and key.endswith(suffix) else ""
        if marker == NUMBERED and tail.isdigit():
            keys[int(tail)] = key
        elif marker == LETTERED and len(tail) == 1 and tail.upper() in LETTERS:
            keys[LETTERS.index(tail.upper())] = key
    return keys


def _numbered_key(field: str, position: int, keys: Mapping[int, str]) -> str:
    """The key of a numbered or lettered field at ``position`` that the doc lacks, in the doc's own case."""
    if field_marker(field) == NUMBERED:
        return field.replace(NUMBERED, str(position))
    letter = LETTERS[position]
    lower = any(k == field.replace(LETTERED, LETTERS[i].lower()) for i, k in keys.items())
    return field.replace(LETTERED, letter.lower() if lower else letter)


def _absent(value: Any) -> bool:
    return value is None or str(value).strip() in ("", "N/A")


def chosen_field(doc: Mapping[str, Any], field: str | None) -> str | None:
    """The alternative of ``field`` (``a|b``) that ``doc`` has (not None; numbered: any of them); None if none."""
    for name in (field or "").split(ALTERNATIVE):
        present = _numbered_keys(doc, name) if field_marker(name) else doc.get(name) is not None
        if name and present:
            return name
    return None


def read_options(doc: Mapping[str, Any], field: str | None) -> list[str]:
    """The options as the doc holds them (labels kept): a list, a newline-separated string, a mapping's
    values, or numbered fields (``option{i}``: from 0 or 1, up to the first missing or "N/A"; ``choice_{a}``: from
    a)."""
    name = chosen_field(doc, field)
    if name is None:
        return []
    if field_marker(name):
        keys = _numbered_keys(doc, name)
        present = itertools.takewhile(lambda i: i in keys and not _absent(doc[keys[i]]), itertools.count(min(keys)))
        return [str(doc[keys[i]]) for i in present]
    value = doc[name]
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    if isinstance(value, Mapping):
        return [str(v) for v in value.values()]
    return [_option_entry_text(v) for v in value] if isinstance(value, list | tuple) else []


#: The key of an option's text in options given as mappings (physical_conflict's ``{"id": "A", "text": ...}``).
_TEXT_KEYS = ("text", "option", "content", "value")
#: The key of an option's label there.
_LABEL_KEYS = ("id", "label", "letter", "key")


def _option_entry_text(entry: Any) -> str:
    """An option given as a mapping: its text (``text``, ``option``, ...); any other entry as text."""
    if isinstance(entry, Mapping):
        key = next((k for k in _TEXT_KEYS if k in entry), None)
        return str(entry[key]) if key is not None else ""
    return str(entry)


def is_in_text(field: str | None) -> bool:
    """Whether an options spec names text fields the options are lettered lines of (``IN_TEXT``)."""
    return bool(field) and str(field).startswith(IN_TEXT)


def options_in_text(doc: Mapping[str, Any], field: str) -> tuple[str | None, OptionLines | None]:
    """(the field, its lettered option lines) of the first field of ``field`` (``@a|b``) whose text has them."""
    for name in field.removeprefix(IN_TEXT).split(ALTERNATIVE):
        value = doc.get(name)
        found = find_options(value) if isinstance(value, str) else None
        if found is not None:
            return name, found
    return None, None


def _style(options: Sequence[str]) -> str:
    """The label format of the base's options ("{}. ", "({}) ", "{}) "), "" for plain texts."""
    for style in ("{}. ", "({}) ", "{}) "):
        labels = [style.format(L).strip() for L in LETTERS]
        if options and all(str(o).strip().startswith(label) for label, o in zip(labels, options, strict=False)):
            return style
    return ""


def option_texts(options: Sequence[str]) -> list[str]:
    """The options' texts, their labels removed when they are lettered in order."""
    return [option_text(o) for o in options] if _style(options) else [str(o).strip() for o in options]


def answer_letter(value: Any, options: Sequence[str]) -> str:
    """The answer as a letter: given as a letter, a 0-based index (int or digit string), an option's
    text, or a label ("B. text", "(B)"); "" when it names none of ``options``."""
    n = min(len(options), len(LETTERS))
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) or hasattr(value, "__index__"):
        index = int(value)
        return LETTERS[index] if 0 <= index < n else ""
    text = str(value).strip()
    if len(text) == 1 and text in LETTERS[:n]:
        return text
    # An option's text before an index: a digit string equal to one option ("3" of 1, 2, 3) is that option.
    norm = " ".join(text.lower().split())
    texts = [" ".join(t.lower().split()) for t in option_texts(options)[:n]]
    if norm and texts.count(norm) == 1:
        return LETTERS[texts.index(norm)]
    if text.isdigit():
        return LETTERS[int(text)] if int(text) < n else ""
    label = re.match(r"^\(?([A-H])(?:[.):]|$)", text)
    return label.group(1) if label and label.group(1) in LETTERS[:n] else ""


def write_options(doc: Mapping[str, Any], field: str, options: Sequence[str]) -> dict[str, Any]:
    """``doc`` with ``options`` (lettered, as views hold them) written into ``field`` in the format of
    the doc's own options: the same container, lettered the same way or plain."""
    name = chosen_field(doc, field) or field.split(ALTERNATIVE)[0]
    style = _style(read_options(doc, name))
    shown = [f"{style.format(L)}{option_text(o)}" for L, o in zip(LETTERS, options, strict=False)]
    new = dict(doc)
    if field_marker(name):
        keys = _numbered_keys(doc, name)
        start = min(keys, default=0)
        filler = "N/A" if any(str(doc[k]).strip() == "N/A" for k in keys.values()) else None
        for i in sorted(set(keys) | set(range(start, start + len(shown)))):
            key = keys.get(i) or _numbered_key(name, i, keys)
            if i - start < len(shown):
                new[key] = shown[i - start]
            elif filler is None:
                new.pop(key, None)
            else:
                new[key] = filler
        return new
    value = doc.get(name)
    if isinstance(value, str):
        new[name] = "\n".join(shown)
    elif isinstance(value, Mapping):
        new[name] = dict(zip(LETTERS, shown, strict=False))
    elif isinstance(value, list | tuple) and value and isinstance(value[0], Mapping):  # the same keys, relabelled
        keys = dict(value[0])
        text_key = next((k for k in _TEXT_KEYS if k in keys), "text")
        label_key = next((k for k in _LABEL_KEYS if k in keys), None)
        new[name] = [
            {**keys, text_key: option_text(o), **({label_key: L} if label_key else {})}
            for L, o in zip(LETTERS, options, strict=False)
        ]
    else:
        new[name] = shown
    return new


# --- the derived benchmark --------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def load_module(module: str) -> Any:
    """The module a dotted (``pkg.mod``) or file-path (``/dir/utils``) name names, imported once: one module object
    per file, shared by its functions (some keep state at module level)."""
    if "/" not in module and os.sep not in module:
        return importlib.import_module(module)
    spec = importlib.util.spec_from_file_location(Path(module).name, f"{module}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {module}.py")
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def load_function(ref: str) -> Callable[..., Any]:
    """The function a dotted (``pkg.mod.fn``) or file-path (``/dir/utils.fn``) name names."""
    module, _, name = ref.rpartition(".")
    return getattr(load_module(module), name)


def prompt_builder(ref: str) -> Callable[..., str]:
    """The base's prompt builder: the function ``ref`` names, or, where ``doc_to_text`` names a doc field (a name
    without a dot, as lmms-eval reads a string ``doc_to_text`` that is a feature), that field's text as it is."""
    if "." in ref:
        return load_function(ref)

    def field_text(doc: Mapping[str, Any]) -> str:
        return str(doc.get(ref, ""))

    return field_text


def _n_params(fn: Callable[..., Any]) -> int:
    try:
        return len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return 1


def _text(doc: Mapping[str, Any], field: str | None) -> str:
    name = chosen_field(doc, field)
    value = doc.get(name) if name else None
    if value is None:
        return ""
    return ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def plain_values(value: Any) -> Any:
    """``value`` with only its text, numbers, booleans and nulls (in mappings and lists); anything else (an image,
    bytes, an object whose text holds a memory address) is None: what names a question must be the same in
    every process."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain_values(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_values(v) for v in value]
    return None


def _graded_answer(value: Any, structured: bool) -> str:
    """A graded question's reference answer as text. A structured one (a list or mapping: an interval, an order,
    several counts) is its JSON where the base's own metric scores it (``structured``), else "" (no answer: the
    question's error row): no score of words can be read against it."""
    if value is None:
        return ""
    if isinstance(value, list | tuple | dict):
        return json.dumps(plain_values(value), sort_keys=True) if structured else ""
    return str(value).strip()


def _target(ref: str, doc: Mapping[str, Any]) -> Any:
    """What the base's ``doc_to_target`` gives for ``doc``; None (the question's NoAnswer error row) where it fails."""
    try:
        return load_function(ref)(doc)
    except Exception:  # the base's own code on one doc: that question has no answer, the others do
        return None


def _view(spec: DeriveSpec) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The Video-MME view of a derived task's raw doc: its answer from the answer field, else from the base's
    ``doc_to_target``; a graded answer that is a list or mapping kept (as JSON) only where the base's own metric
    scores it; options read from the base's own prompt where only it holds them (``PROMPT_FIELD``)."""
    fields, graded, target = spec.fields, spec.graded, spec.doc_to_target
    structured_answers = graded and spec.scoring != JUDGE

    def view(doc: Mapping[str, Any]) -> dict[str, Any]:
        question = _text(doc, fields.question)
        if is_in_text(fields.options):  # a question without lettered lines has no options: an error row
            name, found = _found_options(spec, doc)
            texts = list(found.options) if found else []
            if found and (name == chosen_field(doc, fields.question) or name == PROMPT_FIELD):
                question = found.question
        else:
            texts = option_texts(read_options(doc, fields.options))
        video = _text(doc, fields.video_id)
        # Without options a question's text need not tell it apart (one count asked of every video): the whole doc.
        named_by = (json.dumps(plain_values(doc), sort_keys=True),) if graded else (question, *texts)
        digest = f"{stable_seed(*named_by) & 0xFFFFFFFF:08x}"
        question_id = _text(doc, fields.question_id) or (f"{video}#{digest}" if video else digest)
        answer = doc.get(chosen_field(doc, fields.answer) or "") if target is None else _target(target, doc)
        return {
            **doc,
            "question_id": question_id,
            "videoID": video or question_id,
            "task_type": _text(doc, fields.task_type),
            "duration": "",
            "question": question,
            "options": [f"{L}. {t}" for L, t in zip(LETTERS, texts, strict=False)],
            "answer": _graded_answer(answer, structured_answers) if graded else answer_letter(answer, texts),
            RAW_KEY: doc,
        }

    return view


def _found_options(
    spec: DeriveSpec, doc: Mapping[str, Any], kwargs: Mapping[str, Any] | None = None
) -> tuple[str | None, OptionLines | None]:
    """(the field, its lettered option lines) of an ``IN_TEXT`` options spec: the first text field holding them,
    else, where the spec ends with ``PROMPT_FIELD``, the base's own prompt of ``doc`` (``kwargs``: the model's prompt
    settings, else the task's default)."""
    spec_text = str(spec.fields.options)
    name, found = options_in_text(doc, spec_text)
    if found is not None or PROMPT_FIELD not in spec_text.removeprefix(IN_TEXT).split(ALTERNATIVE):
        return name, found
    build = prompt_builder(spec.doc_to_text)
    given = dict(kwargs) if kwargs is not None else dict(spec.visual_kwargs or {})
    prompt = build(doc, given) if _n_params(build) >= 2 else build(doc)
    return options_in_text({PROMPT_FIELD: prompt}, IN_TEXT + PROMPT_FIELD)


def _base_visuals(spec: DeriveSpec, view: Mapping[str, Any]) -> Any:
    """What the base's ``doc_to_visual`` gives for a view's raw doc.

    Raises:
        VideoUnavailable: it exits (lmms-eval's lookups do on a missing file) or fails.
    """
    raw = view.get(RAW_KEY, view)
    try:
        lookup = load_function(spec.doc_to_visual)
        two = spec.visual_kwargs is not None and _n_params(lookup) == 2
        return lookup(raw, dict(spec.visual_kwargs or {})) if two else lookup(raw)
    except SystemExit as exc:  # this question's error only
        raise VideoUnavailable(str(exc.code)) from None
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise VideoUnavailable(f"{spec.task}'s doc_to_visual failed: {reason}") from None


def _frames(spec: DeriveSpec) -> Callable[[Mapping[str, Any]], list[Any]]:
    def frames(view: Mapping[str, Any]) -> list[Any]:
        visuals = _base_visuals(spec, view)
        return list(visuals) if isinstance(visuals, list | tuple) else [visuals]

    return frames


#: ``dataset_path`` values that are datasets' builders of local files (lmms_eval.utils._LOCAL_BUILDERS).
LOCAL_BUILDERS = frozenset({"csv", "json", "parquet", "text", "pandas", "arrow"})
#: A video id ending in none of these is a file ``<id>.mp4`` in a local copy's ``videos/``.
_VIDEO_SUFFIXES = (".mp4", ".mkv", ".webm", ".avi", ".mov")
#: The suffixes tried in a local copy's ``videos/`` where ``<id>.mp4`` is not there.
_OTHER_SUFFIXES = (".MP4", ".mkv", ".webm")


def _safe_name(name: Any) -> str | None:
    try:
        return path_component(str(name), "local copy folder") if name else None
    except UntrustedPath:
        return None


def video_key(spec: DeriveSpec) -> str:
    """The doc field naming a question's video (its first alternative; the question id where none does)."""
    return (spec.fields.video_id or "").split(ALTERNATIVE)[0] or "question_id"


def _video_file(video_id: str) -> str:
    return video_id if PurePosixPath(video_id).suffix.lower() in _VIDEO_SUFFIXES else f"{video_id}.mp4"


def local_layout(spec: DeriveSpec) -> LocalLayout | None:
    """How a local copy of a derived task's data is laid out under ``$VDG_LOCAL_DATA``: a folder named for the hub
    dataset (``TempCompass/`` for ``lmms-eval/TempCompass``: a download of the hub dataset, shared by the tasks that
    read it) or, where the base reads local files, for the task; its questions in ``<dataset_name>/`` (the hub
    dataset's configuration; ``<split>/`` where it names none), or one file of that name; its videos in
    ``videos/<video id>.mp4``. None where the spec keeps no dataset (a class task) or its names cannot be folder
    names."""
    data = spec.dataset
    if data is None:
        return None
    local_files = str(data["dataset_path"]) in LOCAL_BUILDERS
    folder = _safe_name(spec.task if local_files else PurePosixPath(str(data["dataset_path"])).name)
    name = _safe_name(data.get("dataset_name") or data.get("split"))  # a configuration's own folder, as on the hub
    if folder is None or name is None:
        return None
    key = video_key(spec)
    return LocalLayout(folder, (name,), lambda doc: _video_file(str(doc[key])), _OTHER_SUFFIXES)


def local_videos(spec: DeriveSpec) -> Path | None:
    """The local copy's folder where it holds the videos (a ``videos/`` folder), for a task that gives a video
    file (one that gives frames decodes its own files); else None."""
    folder = local_dir(local_layout(spec))
    return folder if folder is not None and not spec.frames and (folder / "videos").is_dir() else None


def local_video_of(spec: DeriveSpec, view: Mapping[str, Any]) -> Path | None:
    """A question's video in the local copy (``videos/<video id>``) where the copy holds the videos; None where it
    does not (the base's own ``doc_to_visual`` finds them).

    Raises:
        VideoUnavailable: the copy holds videos, but not this one (the message names the path).
        UntrustedPath: the video id makes a path that leaves ``videos/``.
    """
    layout, folder = local_layout(spec), local_videos(spec)
    if folder is None or layout is None:
        return None
    return local_video(folder, layout, {video_key(spec): view.get("videoID", "")})


def _source(spec: DeriveSpec) -> Callable[[Mapping[str, Any]], Path]:
    """A question's video file: from the local copy where ``$VDG_LOCAL_DATA`` holds its videos, else the first the
    base's ``doc_to_visual`` gives."""

    def source(view: Mapping[str, Any]) -> Path:
        local = local_video_of(spec, view)
        if local is not None:
            return local
        visuals = _base_visuals(spec, view)
        first = visuals[0] if isinstance(visuals, list | tuple) and visuals else visuals
        if not isinstance(first, str | os.PathLike):
            raise VideoUnavailable(
                f"{spec.task}'s doc_to_visual returned {type(first).__name__}, not a video path: "
                "vdg perturbs video files"
            )
        return require_video_path(Path(first))

    return source


def _shows_options(prompt: str, options: Sequence[str]) -> bool:
    """Whether ``prompt`` shows every option with its letter ("B. text", "(B) text")."""
    for letter, text in zip(LETTERS, option_texts(options), strict=False):
        if text and not re.search(rf"(?<![A-Za-z]){letter}\s*[.):]\s*{re.escape(text)}", prompt):
            return False
    return True


def generic_prompt(view: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    """Question, one lettered option per line, the post prompt (vdg's own when it is not text)."""
    kwargs = dict(lmms_eval_specific_kwargs or {})
    pre = kwargs.get("pre_prompt") if isinstance(kwargs.get("pre_prompt"), str) else ""
    post = kwargs.get("post_prompt")
    post = post.strip("\n") if isinstance(post, str) and post.strip() else GENERIC_POST_PROMPT
    options = "\n".join(str(o) for o in view.get("options") or [])
    return f"{pre}{view.get('question', '')}\n{options}\n{post}"


def _base_prompt(spec: DeriveSpec) -> Callable[..., str]:
    """A graded task's prompt: the base's own builder on the doc as it is (there are no options to change)."""

    def prompt(view: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
        build = prompt_builder(spec.doc_to_text)
        raw = view.get(RAW_KEY, view)
        kwargs = dict(lmms_eval_specific_kwargs) if lmms_eval_specific_kwargs is not None else None
        return build(raw, kwargs) if _n_params(build) >= 2 else build(raw)

    return prompt


def _prompt(spec: DeriveSpec) -> Callable[..., str]:
    if spec.graded:
        return _base_prompt(spec)

    def prompt(view: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
        options = list(view.get("options") or [])
        raw = view.get(RAW_KEY, view)
        question_field = chosen_field(raw, spec.fields.question)
        kwargs = dict(lmms_eval_specific_kwargs) if lmms_eval_specific_kwargs is not None else None
        if is_in_text(spec.fields.options):
            doc = dict(raw)
            name, found = _found_options(spec, raw, kwargs)
            if name == PROMPT_FIELD and found is not None:  # the prompt itself, its question and options rewritten
                return found.render(options, view.get("question", ""))
            if name is not None and found is not None:
                doc[name] = found.render(options, view.get("question", "") if name == question_field else None)
        else:
            doc = write_options(raw, str(spec.fields.options), options)
            if question_field:
                doc[question_field] = view.get("question", "")
        try:
            build = prompt_builder(spec.doc_to_text)
            text = build(doc, kwargs) if _n_params(build) >= 2 else build(doc)
        except Exception as exc:
            logger.warning(f"vdg: {spec.task}: its doc_to_text failed on the changed question ({exc!r})")
            text = None
        # The base's builder may show a fixed number of options (5 of NExT-QA, 3 of PerceptionTest):
        # an added option it drops or mislabels would silently change the question.
        if isinstance(text, str) and _shows_options(text, options):
            return text
        return generic_prompt(view, lmms_eval_specific_kwargs)

    return prompt


def native_name(metric: str) -> str:
    """A base metric named like vdg's own keys (``accuracy``, ``vdg``) is renamed ``native_<name>``."""
    return f"native_{metric}" if metric in (METRIC_KEY, RECORD_KEY) else metric


def _native(spec: DeriveSpec) -> Callable[[Mapping[str, Any], list[str]], dict[str, Any]]:
    def native_results(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
        out = load_function(str(spec.process_results))(doc, results)
        return {native_name(k): v for k, v in dict(out).items()}

    return native_results


def _aggregate_one(ref: str) -> Callable[[Any], Any]:
    def aggregate_one(value: Any) -> Any:
        return call_aggregation(load_function(ref), [value])  # one question's aggregation has no run args

    return aggregate_one


def derived_benchmark(spec: DeriveSpec) -> Benchmark:
    """The Benchmark of a derived task: the base's video lookup, prompt builder and scorer behind the
    Video-MME view vdg's hooks read."""
    return Benchmark(
        spec.task,
        _source(spec),
        f"lmms-eval's `{spec.task}`, derived by `vdg derive` (same dataset, prompt builder and video lookup).",
        _native(spec) if spec.process_results else None,
        prompt=_prompt(spec),
        provides=(frozenset() if spec.graded else PROVIDES) | ({"frames"} if spec.frames else frozenset()),
        view=_view(spec),
        frame_folder_fps=spec.frame_folder_fps,
        scoring=spec.scoring,
        frames=_frames(spec) if spec.frames else None,
        aggregate_one=_aggregate_one(spec.aggregation) if spec.aggregation else None,
    )


def _process_docs(spec: DeriveSpec, benchmark: Benchmark) -> Callable[[Any], Any]:
    question_set = make_process_docs(benchmark)

    def process_docs(dataset: Any) -> Any:
        if spec.process_docs:
            dataset = load_function(spec.process_docs)(dataset)
        return question_set(dataset)

    process_docs.__name__ = f"{spec.task}__process_docs"
    return process_docs


@functools.lru_cache(maxsize=64)
def _hooks(path: str, _mtime_ns: int) -> dict[str, Callable[..., Any]]:
    spec = DeriveSpec.from_json(Path(path).read_text(encoding="utf-8"))
    bench = derived_benchmark(spec)
    hooks: dict[str, Callable[..., Any]] = {"process_docs": _process_docs(spec, bench)}
    for name in spec.conditions:
        cond = CONDITIONS.get(name)
        if cond is None:  # declared by a module this process did not load (vdg_tasks.extend): its tasks only fail
            logger.warning(f"vdg: {spec.task}: condition {name!r} is not declared here; its tasks have no hooks")
            continue
        hooks[f"{name}__doc_to_visual"] = make_doc_to_visual(bench, cond)
        hooks[f"{name}__process_results"] = make_process_results(bench, cond)
        if cond.modality == "text":
            hooks[f"{name}__doc_to_text"] = make_doc_to_text(bench, cond)
    return hooks


def hooks_for(spec_file: str | os.PathLike[str]) -> dict[str, Callable[..., Any]]:
    """The hooks a derived folder's leaves name (``vdg_derived.<hook>``), from its spec file; built once
    per process (lmms-eval executes ``vdg_derived.py`` again for every ``!function``)."""
    path = Path(spec_file).resolve()
    return dict(_hooks(str(path), path.stat().st_mtime_ns))
