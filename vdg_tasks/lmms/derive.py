"""``vdg derive``: vdg's condition tasks for any lmms-eval video multiple-choice task.

``vdg derive BASE_TASK --out DIR`` reads the base task's config as data (``vdg_tasks.data.upstream``),
finds the doc fields holding the question id, options, answer, video id, task type and question
(read from the source of its prompt builder, video lookup and scorer, or given), and writes
``DIR/<base>/``:

- ``_default_template_yaml``: the base config (functions absolute) minus what vdg replaces, with
  vdg's ``process_docs`` (the base's own, then vdg's question-set filter) and metric list;
- ``<base>_vdg_<condition>.yaml``: one leaf per condition, tagged ``<base>_vdg`` and
  ``<base>_vdg_<family>`` (and ``<group>_vdg...`` for a group's members);
- ``vdg_derive.json`` (the :class:`DeriveSpec`) and ``vdg_derived.py``, the module the leaves name:
  it holds no logic, only the hooks :func:`hooks_for` builds from the spec with the factories of
  ``vdg_tasks.hooks`` over :func:`derived_benchmark`;
- ``README.md``.

Deriving executes nothing of the base task: its module is read as text. A task that cannot be
derived (not ``generate_until``, frames or images instead of video paths, no options or answer
field, an unknown name) raises :class:`DeriveError` naming the task and the reason.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import importlib
import importlib.util
import inspect
import itertools
import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from vdg_tasks.data.benchmarks import Benchmark, VideoUnavailable, task_name
from vdg_tasks.data.local_copies import require_video_path
from vdg_tasks.data.upstream import Function, load_config
from vdg_tasks.lmms.hooks import make_doc_to_text, make_doc_to_visual, make_process_docs, make_process_results
from vdg_tasks.lmms.yamlgen import TEMPLATE, YamlFunction, condition_metadata, dump_yaml, vdg_metrics
from vdg_tasks.perturb.text import option_text
from vdg_tasks.vocabulary.conditions import CONDITIONS, Requirement, families, get_condition
from vdg_tasks.vocabulary.parse import LETTERS
from vdg_tasks.vocabulary.record import METRIC_KEY, RECORD_KEY
from vdg_tasks.vocabulary.seeding import stable_seed

__all__ = [
    "DeriveError",
    "DeriveSpec",
    "Fields",
    "answer_letter",
    "derive",
    "derived_benchmark",
    "detect_fields",
    "hooks_for",
    "plan",
    "read_options",
    "write_options",
]

SPEC_FILE = "vdg_derive.json"
HOOKS_MODULE = "vdg_derived"
#: Where the view keeps the raw doc (the base's own functions are called on it).
RAW_KEY = "vdg_raw_doc"
#: Marks an options spec of numbered fields: ``option{i}`` = option0, option1, ...
NUMBERED = "{i}"
#: Separates alternative fields (``candidates|options``): the first one a doc has is read.
ALTERNATIVE = "|"
#: The rate of a source that is a folder of frames (``--frame-folder-fps``).
DEFAULT_FRAME_FOLDER_FPS = 1.0
#: What derived docs carry: options only (no characters, titles or subtitles).
PROVIDES: frozenset[Requirement] = frozenset({"options"})
GENERIC_POST_PROMPT = "Answer with the option's letter from the given choices directly."
#: Base config keys vdg replaces (or that name the base task itself).
_REPLACED = frozenset(
    {"task", "tag", "group", "group_alias", "task_alias", "include", "class"}
    | {"doc_to_visual", "process_results", "process_docs", "metric_list", "metadata"}
)
_LOCAL_BUILDERS = frozenset({"csv", "json", "parquet", "text", "pandas", "arrow"})

#: Field -> the names looked for in the base's source, most likely first.
KNOWN_FIELDS: Mapping[str, tuple[str, ...]] = {
    "question_id": ("question_id", "qid", "id", "question_idx", "uid", "key", "q_id"),
    "options": ("options", "candidates", "choices", "option", "answer_choices", "candidate_answers"),
    "answer": (
        "answer",
        "correct_choice",
        "answer_idx",
        "answer_id",
        "answer_index",
        "correct_answer",
        "gt_answer",
        "gt",
        "label",
        "truth",
    ),
    "video_id": (
        "videoID",
        "video_id",
        "video_idx",
        "video_uid",
        "vid",
        "video_name",
        "video",
        "video_path",
        "video_file",
    ),
    "task_type": ("task_type", "question_type", "type", "category", "question_category", "dim", "area", "skill"),
    "question": ("question", "query", "prompt"),
}
#: In a doc_to_visual (or what it calls): it decodes frames or images instead of returning a video path.
_FRAME_MARKERS = ("VideoReader", "Image.fromarray", "Image.open", ".get_batch(", "cv2.", ".asnumpy(", "torchvision.io")
#: In a doc_to_visual that reads no video: it returns images (an image task).
_IMAGE_MARKERS = (".convert(", "Image.", "PIL")
#: Names that reach the network or write a submission: a scorer or aggregation using one is not kept.
_UNSAFE_NAMES = frozenset(
    {"requests", "urllib", "httpx", "aiohttp", "openai", "OpenAI", "AzureOpenAI", "anthropic"}
    | {"generate_submission_file", "hf_hub_download", "snapshot_download", "HfApi"}
)
_DOC_KEY = re.compile(r"""\bdoc\s*(?:\[|\.get\()\s*["']([^"'\n]+)["']""")
_DOC_NUMBERED = re.compile(r"""\bdoc\s*(?:\[|\.get\()\s*f["']([A-Za-z_]\w*?)\{\w*\}["']""")
_LITERAL = re.compile(r"""["']([A-Za-z_]\w*)["']""")
_IDENT = re.compile(r"[A-Za-z_][\w-]*")


class DeriveError(ValueError):
    """A task that cannot be derived, or a bad request (the message names the task and the reason;
    ``short``: the reason in a few words, for a group's list)."""

    def __init__(self, message: str, short: str = "") -> None:
        super().__init__(message)
        self.short = short or message


@dataclass(frozen=True)
class Fields:
    """The doc fields of a base task (None: it has none). ``options`` is a field holding a list, a
    newline-separated string or a letter -> text mapping, or numbered fields (``option{i}``)."""

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

    def to_json(self) -> str:
        return json.dumps({"version": 1, **dataclasses.asdict(self)}, indent=1, default=str) + "\n"

    @classmethod
    def from_json(cls, text: str) -> DeriveSpec:
        data = json.loads(text)
        data.pop("version", None)
        return cls(**{**data, "fields": Fields(**data["fields"]), "conditions": tuple(data["conditions"])})


# --- reading the base's source (never executed) ----------------------------------------------------


@functools.lru_cache(maxsize=256)
def _module(module: str) -> tuple[str, ast.Module] | None:
    """(source, tree) of a module named dotted or by file path (``/dir/utils``); None when unreadable."""
    try:
        if "/" in module or os.sep in module:
            path = Path(f"{module}.py")
        else:
            found = importlib.util.find_spec(module)
            path = Path(found.origin) if found is not None and found.origin else None
        if path is None or not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
        return text, ast.parse(text)
    except (ImportError, ValueError, SyntaxError, OSError):
        return None


def _closure(ref: str) -> list[ast.FunctionDef]:
    """The function ``ref`` names and every function of its module it calls, transitively."""
    module, _, name = str(ref).rpartition(".")
    loaded = _module(module)
    if loaded is None:
        return []
    defs = {n.name: n for n in loaded[1].body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    todo, seen = [name], {}
    while todo:
        current = todo.pop()
        if current in seen or current not in defs:
            continue
        seen[current] = defs[current]
        todo += [n.id for n in ast.walk(defs[current]) if isinstance(n, ast.Name) and n.id in defs]
    return list(seen.values())


def _closure_text(ref: str) -> str:
    loaded = _module(str(ref).rpartition(".")[0])
    if loaded is None:
        return ""
    return "\n".join(ast.get_source_segment(loaded[0], node) or "" for node in _closure(ref))


def _offline_safe(ref: str) -> bool:
    """Whether the function (and what it calls) stays offline: no network client, upload or submission file.
    Docstrings are not read (they cite papers' URLs)."""
    for node in _closure(ref):
        docstring = ast.get_docstring(node, clean=False)
        for sub in ast.walk(node):
            name = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else None
            if name and (name in _UNSAFE_NAMES or name.lower().startswith(("upload", "submit"))):
                return False
            value = sub.value if isinstance(sub, ast.Constant) else None
            if isinstance(value, str) and value != docstring and value.startswith(("http://", "https://")):
                return False
    return True


def base_sources(config: Mapping[str, Any]) -> list[str]:
    """The base's source in the order fields are looked for: its doc functions (and what they call),
    then their whole modules."""
    keys = ("doc_to_text", "doc_to_visual", "process_results", "doc_to_target")
    refs = [config[k] for k in keys if _is_fn(config.get(k))]
    modules = dict.fromkeys(str(r).rpartition(".")[0] for r in refs)
    whole = [loaded[0] for loaded in map(_module, modules) if loaded is not None]
    return ["\n".join(_closure_text(r) for r in refs), "\n".join(whole)]


def _is_fn(value: Any) -> bool:
    return isinstance(value, Function)


# --- fields -------------------------------------------------------------------------------------------


def _find(field: str, tiers: Sequence[str]) -> str | None:
    """The known names of ``field`` read from ``doc`` in the first tier that reads any ("a|b": the first
    a doc has), else (not for ids and options: a wrong guess there merges or misreads questions) the
    known names mentioned at all."""
    names = KNOWN_FIELDS[field]
    # Options only from the task's own functions: a module shared with an open-ended task reads them elsewhere.
    for text in tiers[:1] if field == "options" else tiers:
        keys = set(_DOC_KEY.findall(text))
        numbered = _DOC_NUMBERED.search(text) if field == "options" else None
        hits = [n for n in names if n in keys] + ([f"{numbered.group(1)}{NUMBERED}"] if numbered else [])
        if hits:
            return ALTERNATIVE.join(hits)
    if field in ("question_id", "options"):
        return None
    for text in tiers:
        hits = [n for n in names if n in set(_LITERAL.findall(text))]
        if hits:
            return ALTERNATIVE.join(hits)
    return None


def detect_fields(config: Mapping[str, Any], source: str | Sequence[str]) -> Fields:
    """The base's doc fields: ``doc_to_target`` / ``doc_to_text`` when they name a field, else the
    known names (``KNOWN_FIELDS``) the source reads from ``doc`` (``source``: one text, or texts in
    the order to search), else the known names it mentions at all (not for the question id)."""
    tiers = [source] if isinstance(source, str) else list(source)
    hints = {"answer": config.get("doc_to_target"), "question": config.get("doc_to_text")}
    found = {}
    for field in KNOWN_FIELDS:
        hint = hints.get(field)
        plain = isinstance(hint, str) and not _is_fn(hint) and _IDENT.fullmatch(hint)
        found[field] = hint if plain else _find(field, tiers)
    return Fields(**found)


# --- options and answers ------------------------------------------------------------------------------


def _numbered_keys(doc: Mapping[str, Any], field: str) -> dict[int, str]:
    prefix, n = field.replace(NUMBERED, ""), len(field) - len(NUMBERED)
    return {int(k[n:]): k for k in map(str, doc) if k.startswith(prefix) and k[n:].isdigit()}


def _absent(value: Any) -> bool:
    return value is None or str(value).strip() in ("", "N/A")


def chosen_field(doc: Mapping[str, Any], field: str | None) -> str | None:
    """The alternative of ``field`` (``a|b``) that ``doc`` has (not None; numbered: any of them); None if none."""
    for name in (field or "").split(ALTERNATIVE):
        present = _numbered_keys(doc, name) if NUMBERED in name else doc.get(name) is not None
        if name and present:
            return name
    return None


def read_options(doc: Mapping[str, Any], field: str | None) -> list[str]:
    """The options as the doc holds them (labels kept): a list, a newline-separated string, a mapping's
    values, or numbered fields (``option{i}``: from 0 or 1, up to the first missing or "N/A")."""
    name = chosen_field(doc, field)
    if name is None:
        return []
    if NUMBERED in name:
        keys = _numbered_keys(doc, name)
        present = itertools.takewhile(lambda i: i in keys and not _absent(doc[keys[i]]), itertools.count(min(keys)))
        return [str(doc[keys[i]]) for i in present]
    value = doc[name]
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    if isinstance(value, Mapping):
        return [str(v) for v in value.values()]
    return [str(v) for v in value] if isinstance(value, list | tuple) else []


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
    if NUMBERED in name:
        keys = _numbered_keys(doc, name)
        start = min(keys, default=0)
        filler = "N/A" if any(str(doc[k]).strip() == "N/A" for k in keys.values()) else None
        for i in sorted(set(keys) | set(range(start, start + len(shown)))):
            key = keys.get(i, name.replace(NUMBERED, str(i)))
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
    else:
        new[name] = shown
    return new


# --- the derived benchmark --------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _load_module(module: str) -> Any:
    # One module object per file, shared by its functions (some keep state at module level).
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
    return getattr(_load_module(module), name)


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


def _view(fields: Fields) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    def view(doc: Mapping[str, Any]) -> dict[str, Any]:
        texts = option_texts(read_options(doc, fields.options))
        question = _text(doc, fields.question)
        video = _text(doc, fields.video_id)
        digest = f"{stable_seed(question, *texts) & 0xFFFFFFFF:08x}"
        question_id = _text(doc, fields.question_id) or (f"{video}#{digest}" if video else digest)
        return {
            **doc,
            "question_id": question_id,
            "videoID": video or question_id,
            "task_type": _text(doc, fields.task_type),
            "duration": "",
            "question": question,
            "options": [f"{L}. {t}" for L, t in zip(LETTERS, texts, strict=False)],
            "answer": answer_letter(doc.get(chosen_field(doc, fields.answer) or ""), texts),
            RAW_KEY: doc,
        }

    return view


def _source(spec: DeriveSpec) -> Callable[[Mapping[str, Any]], Path]:
    def source(view: Mapping[str, Any]) -> Path:
        raw = view.get(RAW_KEY, view)
        try:
            lookup = load_function(spec.doc_to_visual)
            two = spec.visual_kwargs is not None and _n_params(lookup) == 2
            visuals = lookup(raw, dict(spec.visual_kwargs or {})) if two else lookup(raw)
        except SystemExit as exc:  # lmms-eval's lookups exit on a missing file: this question's error only
            raise VideoUnavailable(str(exc.code)) from None
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise VideoUnavailable(f"{spec.task}'s doc_to_visual failed: {reason}") from None
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


def _prompt(spec: DeriveSpec) -> Callable[..., str]:
    def prompt(view: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
        options = list(view.get("options") or [])
        raw = view.get(RAW_KEY, view)
        doc = write_options(raw, str(spec.fields.options), options)
        question_field = chosen_field(raw, spec.fields.question)
        if question_field:
            doc[question_field] = view.get("question", "")
        kwargs = dict(lmms_eval_specific_kwargs) if lmms_eval_specific_kwargs is not None else None
        try:
            build = load_function(spec.doc_to_text)
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


def _native_name(metric: str) -> str:
    """A base metric named like vdg's own keys (``accuracy``, ``vdg``) is renamed ``native_<name>``."""
    return f"native_{metric}" if metric in (METRIC_KEY, RECORD_KEY) else metric


def _native(spec: DeriveSpec) -> Callable[[Mapping[str, Any], list[str]], dict[str, Any]]:
    def native_results(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
        out = load_function(str(spec.process_results))(doc, results)
        return {_native_name(k): v for k, v in dict(out).items()}

    return native_results


def derived_benchmark(spec: DeriveSpec) -> Benchmark:
    """The Benchmark of a derived task: the base's video lookup, prompt builder and scorer behind the
    Video-MME view vdg's hooks read."""
    return Benchmark(
        spec.task,
        _source(spec),
        f"lmms-eval's `{spec.task}`, derived by `vdg derive` (same dataset, prompt builder and video lookup).",
        _native(spec) if spec.process_results else None,
        prompt=_prompt(spec),
        provides=PROVIDES,
        view=_view(spec.fields),
        frame_folder_fps=spec.frame_folder_fps,
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
        cond = CONDITIONS[name]
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


# --- planning: which tasks, which fields, which conditions --------------------------------------------


def resolve_conditions(names: Sequence[str] | None) -> tuple[str, ...]:
    """Condition names and family tags (``ladder``, ``crf``, ``text``) -> the derived conditions, in
    declaration order; None or empty: every condition derived tasks provide for."""
    offered = [c.name for c in CONDITIONS.values() if c.requires <= PROVIDES]
    if not names:
        return tuple(offered)
    chosen: set[str] = set()
    for name in (n.strip() for n in names if n.strip()):
        family = families().get(name)
        if family is not None:
            if not set(family) & set(offered):
                raise DeriveError(f"condition family {name!r} has no condition derived tasks provide for")
            chosen |= set(family) & set(offered)
            continue
        try:
            cond = get_condition(name)
        except KeyError as exc:
            raise DeriveError(str(exc.args[0])) from None
        if cond.name not in offered:
            needs = ", ".join(sorted(cond.requires - PROVIDES))
            raise DeriveError(
                f"condition {name!r} needs {needs}, which derived tasks do not provide "
                f"(they offer {', '.join(offered)})"
            )
        chosen.add(cond.name)
    return tuple(c for c in offered if c in chosen)


def _manager(include_path: str | os.PathLike[str] | None) -> Any:
    from lmms_eval.tasks import TaskManager

    logger.info("vdg derive: reading lmms-eval's task index (its YAMLs: some seconds)...")
    started = time.monotonic()
    logger.disable("lmms_eval")  # its indexing logs one DEBUG line per non-task YAML
    try:
        manager = TaskManager(verbosity="ERROR", include_path=str(include_path) if include_path else None)
    finally:
        logger.enable("lmms_eval")
    logger.info(f"vdg derive: {len(manager.task_index)} tasks indexed in {time.monotonic() - started:.1f} s")
    return manager


def _visual_kwargs(config: Mapping[str, Any]) -> dict[str, Any] | None:
    # As lmms-eval resolves them for a model with no entry of its own: the default entry merged in.
    kwargs = config.get("lmms_eval_specific_kwargs")
    if not isinstance(kwargs, Mapping):
        return None
    default = kwargs.get("default")
    return json.loads(json.dumps({**kwargs, **(default if isinstance(default, Mapping) else {})}, default=str))


def _refuse(task: str, reason: str, short: str = "") -> DeriveError:
    return DeriveError(f"cannot derive {task}: {reason}", short or reason)


def analyse(
    task: str,
    yaml_path: str | os.PathLike[str],
    conditions: tuple[str, ...],
    fields: Mapping[str, str | None] | None = None,
    group: str = "",
    frame_folder_fps: float = DEFAULT_FRAME_FOLDER_FPS,
) -> DeriveSpec:
    """The derive spec of one task config (``fields``: given fields, over the detected ones).

    Raises:
        DeriveError: the task cannot be derived (the message says why and what to give).
    """
    config = load_config(Path(yaml_path))
    output_type = config.get("output_type", "generate_until")
    if output_type != "generate_until":
        raise _refuse(
            task,
            f"output_type is {output_type} (scored from log-likelihoods); vdg derives generate_until tasks, "
            "whose answer it reads from the model's reply",
            f"output_type {output_type}",
        )
    visual, build = config.get("doc_to_visual"), config.get("doc_to_text")
    if not _is_fn(visual):
        raise _refuse(task, "it has no doc_to_visual function (not a video task)", "no doc_to_visual")
    code = _closure_text(visual)
    images = [m.strip(".(") for m in _IMAGE_MARKERS if m in code]
    if images and "video" not in code.lower():
        raise _refuse(
            task,
            f"not a video task: its doc_to_visual {visual} returns images ({', '.join(images)}) and reads no video",
            "not a video task",
        )
    markers = [m.strip(".(") for m in _FRAME_MARKERS if m in code]
    if markers:
        raise _refuse(
            task,
            f"its doc_to_visual {visual} returns decoded frames or images ({', '.join(markers)}), not video paths; "
            "vdg perturbs the video file",
            "frames or images, not video paths",
        )
    if not _is_fn(build):
        raise _refuse(
            task,
            f"its doc_to_text is {build!r}, not a prompt-building function vdg can give changed options",
            "doc_to_text is not a function",
        )
    found = detect_fields(config, base_sources(config))
    found = dataclasses.replace(found, **{k: v for k, v in (fields or {}).items() if v})
    if found.options is None:
        raise _refuse(
            task,
            f"no options field: its functions read none of {', '.join(KNOWN_FIELDS['options'])} (nor numbered "
            "fields like option0, option1) from the doc, so its options are likely inside the question text; "
            "give --options FIELD (a list, a newline-separated string, or FIELD{i} for numbered fields) if its docs "
            "hold them",
            "no options field",
        )
    if found.answer is None:
        known = ", ".join(KNOWN_FIELDS["answer"])
        raise _refuse(task, f"no answer field: none of {known}; give --answer FIELD", "no answer field")
    if found.task_type is None:
        logger.warning(
            f"vdg derive: {task}: no task-type field found (none of {', '.join(KNOWN_FIELDS['task_type'])}): "
            "every question gets one task type, so the report's per-task-type tables have one row; give "
            "--task-type FIELD if its docs have one"
        )
    results, docs = config.get("process_results"), config.get("process_docs")
    return DeriveSpec(
        task=task,
        yaml_path=str(Path(yaml_path).resolve()),
        fields=found,
        doc_to_visual=str(visual),
        doc_to_text=str(build),
        process_results=str(results) if _is_fn(results) and _offline_safe(results) else None,
        process_docs=str(docs) if _is_fn(docs) else None,
        visual_kwargs=_visual_kwargs(config),
        conditions=conditions,
        group=group,
        frame_folder_fps=frame_folder_fps,
    )


def _members(manager: Any, name: str) -> list[str | dict[str, Any]] | None:
    """The tasks of a group or tag (a group's inline configs as dicts); None for a task."""
    entry = manager.task_index[name]
    if entry["type"] == "tag":
        return list(entry["task"])
    if entry["type"] != "group":
        return None
    listed = load_config(Path(entry["yaml_path"])).get("task") or []
    return [listed] if isinstance(listed, str) else list(listed)


def plan(
    base_task: str,
    *,
    conditions: Sequence[str] | None = None,
    include_path: str | os.PathLike[str] | None = None,
    manager: Any = None,
    frame_folder_fps: float = DEFAULT_FRAME_FOLDER_FPS,
    **fields: str | None,
) -> list[DeriveSpec]:
    """The specs ``vdg derive base_task`` writes: one, or one per member of a group or tag.

    ``fields``: ``question_id``, ``options``, ``answer``, ``video_id``, ``task_type``, ``question``
    (None: detected). ``manager``: an lmms-eval ``TaskManager`` to reuse (its index takes seconds).

    Raises:
        DeriveError: an unknown name, a task (or a group member) that cannot be derived, a bad condition.
    """
    unknown = sorted(set(fields) - set(KNOWN_FIELDS))
    if unknown:
        raise DeriveError(f"unknown field option(s) {', '.join(unknown)}; known: {', '.join(KNOWN_FIELDS)}")
    numbered = [f for f in str(fields.get("options") or "").split(ALTERNATIVE) if NUMBERED in f]
    if any(not f.endswith(NUMBERED) or f.count(NUMBERED) > 1 for f in numbered):
        raise DeriveError(
            f"--options {fields['options']}: numbered fields are written FIELD{NUMBERED} (option{NUMBERED})"
        )
    if include_path is not None and not Path(include_path).is_dir():
        raise DeriveError(f"--include_path {include_path}: no such folder")
    chosen = resolve_conditions(conditions)
    manager = manager if manager is not None else _manager(include_path)
    index = manager.task_index
    if base_task not in index:
        near = difflib.get_close_matches(base_task, list(index), n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        where = f" (looked in lmms-eval's tasks and {include_path})" if include_path else ""
        raise _refuse(base_task, f"no lmms-eval task, group or tag of that name{where}{hint}")
    if index[base_task]["type"] == "python_task":
        raise _refuse(base_task, "it is a Python class task, not a YAML config vdg can read")
    members = _members(manager, base_task)
    if members is None:
        return [analyse(base_task, index[base_task]["yaml_path"], chosen, fields, "", frame_folder_fps)]
    specs, problems = [], []
    for member in members:
        name = member if isinstance(member, str) else str(member.get("task", member))
        entry = index.get(name) if isinstance(member, str) else None
        if entry is None or entry["type"] != "task":
            problems.append(f"{name} ({'a group' if entry else 'defined inline in the group'})")
            continue
        try:
            specs.append(analyse(name, entry["yaml_path"], chosen, fields, base_task, frame_folder_fps))
        except DeriveError as exc:
            problems.append(f"{name} ({exc.short})")
    if problems:
        derivable = f"; these can be derived one by one: {', '.join(s.task for s in specs)}" if specs else ""
        raise _refuse(
            base_task,
            f"it is a group of {len(members)} tasks and {len(problems)} cannot be derived: "
            f"{'; '.join(problems)} (`vdg derive MEMBER` says why){derivable}",
        )
    return specs


# --- writing ----------------------------------------------------------------------------------------


def _yaml_value(value: Any) -> Any:
    if isinstance(value, Function):
        return YamlFunction(str(value))
    if isinstance(value, Mapping):
        return {k: _yaml_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_yaml_value(v) for v in value]
    return value


def _local_paths(config: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """Relative local data files made absolute (the derived folder is elsewhere), as lmms-eval resolves them."""
    kwargs = config.get("dataset_kwargs")
    if config.get("dataset_path") not in _LOCAL_BUILDERS or not isinstance(kwargs, Mapping):
        return config

    def absolute(value: Any) -> Any:
        if isinstance(value, str) and value and not os.path.isabs(value) and (base_dir / value).is_file():
            return str((base_dir / value).resolve())
        if isinstance(value, Mapping):
            return {k: absolute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [absolute(v) for v in value]
        return value

    return {**config, "dataset_kwargs": {**kwargs, "data_files": absolute(kwargs.get("data_files"))}}


def _metrics(spec: DeriveSpec, config: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """vdg's accuracy, then the base's own metrics that are safe offline; notes on what was dropped."""
    kept, notes = vdg_metrics(), []
    for entry in config.get("metric_list") or []:
        name, aggregation = str(entry.get("metric")), entry.get("aggregation")
        if spec.process_results is None:
            notes.append(f"`{name}` dropped: the base's process_results is absent or reaches the network")
        elif _is_fn(aggregation) and not _offline_safe(aggregation):
            notes.append(f"`{name}` dropped: its aggregation {aggregation} uploads, submits or reaches the network")
        else:
            renamed = _native_name(name)
            kept.append(_yaml_value({**entry, "metric": renamed}))
            notes.append(f"`{renamed}` kept (the base's `{name}`, on the answered video-condition questions)")
    return kept, notes


def template(spec: DeriveSpec) -> tuple[dict[str, Any], list[str]]:
    """The shared part of the derived tasks (``_default_template_yaml``) and the metric notes."""
    config = load_config(Path(spec.yaml_path))
    config = _local_paths(config, Path(spec.yaml_path).parent)
    doc = {k: _yaml_value(v) for k, v in config.items() if k not in _REPLACED}
    doc["output_type"] = "generate_until"
    doc["process_docs"] = YamlFunction(f"{HOOKS_MODULE}.process_docs")
    doc["metric_list"], notes = _metrics(spec, config)
    return doc, notes


def tags(spec: DeriveSpec, condition: str) -> list[str]:
    """``<task>_vdg`` and ``<task>_vdg_<family>``; a member's also ``<group>_vdg``, ``<group>_vdg_<family>``
    and ``<group>_vdg_<condition>``."""
    family = CONDITIONS[condition].family
    names = [f"{spec.task}_vdg", f"{spec.task}_vdg_{family}"]
    if spec.group:
        names += [f"{spec.group}_vdg", f"{spec.group}_vdg_{family}", task_name(spec.group, condition)]
    return names


def leaf(spec: DeriveSpec, condition: str, base: Mapping[str, Any]) -> dict[str, Any]:
    """One derived task's YAML (``base``: the template, for the generation settings an open answer overrides)."""
    cond = CONDITIONS[condition]
    doc: dict[str, Any] = {"include": TEMPLATE, "task": task_name(spec.task, condition), "tag": tags(spec, condition)}
    if cond.modality == "text":
        doc["doc_to_text"] = YamlFunction(f"{HOOKS_MODULE}.{condition}__doc_to_text")
    doc["doc_to_visual"] = YamlFunction(f"{HOOKS_MODULE}.{condition}__doc_to_visual")
    doc["process_results"] = YamlFunction(f"{HOOKS_MODULE}.{condition}__process_results")
    if cond.max_new_tokens is not None:
        doc["generation_kwargs"] = {**dict(base.get("generation_kwargs") or {}), "max_new_tokens": cond.max_new_tokens}
    doc["metadata"] = {**condition_metadata(cond), "derived_from": spec.task}
    return doc


_HOOKS_SOURCE = '''"""Hooks of the vdg tasks in this folder: generated by `vdg derive`, do not edit.

lmms-eval loads this file for every `!function vdg_derived.<hook>`; the hooks are vdg's own
(vdg_tasks.hooks), built by vdg_tasks.derive.hooks_for from vdg_derive.json beside this file.
"""

from pathlib import Path

import vdg_tasks.lmms.derive

globals().update(vdg_tasks.derive.hooks_for(Path(__file__).with_name("vdg_derive.json")))
'''


def _field_lines(fields: Fields) -> list[str]:
    meaning = {
        "question_id": "none: a digest of the question and its options (with the video id)",
        "video_id": "none: the question id",
        "task_type": "none: empty",
        "question": "none: the open condition asks the instruction alone",
    }
    lines = []
    for name, value in dataclasses.asdict(fields).items():
        shown = f"`{value}`" if value else meaning.get(name, "none")
        lines.append(f"- {name}: {shown}")
    return lines


def readme(spec: DeriveSpec, notes: list[str]) -> str:
    conditions = [CONDITIONS[c] for c in spec.conditions]
    group = f" (a member of `{spec.group}`; tags `{spec.group}_vdg...` run every member)" if spec.group else ""
    lines = [
        f"# {spec.task} x vdg conditions",
        "",
        f"Derived by `vdg derive` from lmms-eval's `{spec.task}`{group}: its dataset, prompt builder and video "
        f"lookup ({spec.yaml_path}); vdg's hooks change the video or the question.",
        "",
        "Doc fields (answers given as a letter, a 0-based index or an option's text are scored as letters):",
        "",
        *_field_lines(spec.fields),
        "",
        "Metrics: `accuracy` (vdg's, over answered questions), then the base's own:",
        "",
        *([f"- {n}" for n in notes] or ["- none"]),
        "",
        f"Tags: `{spec.task}_vdg` (every condition), "
        + ", ".join(sorted({f"`{spec.task}_vdg_{c.family}`" for c in conditions}))
        + ".",
        "",
        "| task | condition | shown to the model |",
        "|---|---|---|",
        *(f"| `{task_name(spec.task, c.name)}` | `{c.name}` | {c.description} |" for c in conditions),
        "",
        f"Run: `lmms-eval --model MODEL --include_path <this folder's parent> --tasks {spec.task}_vdg --log_samples "
        "--output_path RUN`, then `vdg report RUN --out REPORT`.",
        "",
        "Generated by `vdg derive`; rerun it instead of editing these files (the hooks read vdg_derive.json).",
        "",
    ]
    return "\n".join(lines)


def render(spec: DeriveSpec) -> dict[str, str]:
    """File name -> text of the derived folder of ``spec``."""
    base, notes = template(spec)
    header = f"# Generated by `vdg derive {spec.group or spec.task}`; do not edit.\n"
    files = {TEMPLATE: header + dump_yaml(base)}
    for condition in spec.conditions:
        files[f"{task_name(spec.task, condition)}.yaml"] = header + dump_yaml(leaf(spec, condition, base))
    files[SPEC_FILE] = spec.to_json()
    files[f"{HOOKS_MODULE}.py"] = _HOOKS_SOURCE
    files["README.md"] = readme(spec, notes)
    return files


def write(spec: DeriveSpec, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``out_dir/<task>/``, removing leaves of conditions no longer derived; return the files written."""
    folder = Path(out_dir) / spec.task
    folder.mkdir(parents=True, exist_ok=True)
    files = render(spec)
    for stale in folder.glob(f"{spec.task}_vdg_*.yaml"):
        if stale.name not in files:
            stale.unlink()
    written = []
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
        written.append(folder / name)
    return written


def derive(
    base_task: str,
    out_dir: str | os.PathLike[str],
    conditions: Sequence[str] | None = None,
    *,
    include_path: str | os.PathLike[str] | None = None,
    manager: Any = None,
    frame_folder_fps: float = DEFAULT_FRAME_FOLDER_FPS,
    **fields: str | None,
) -> list[Path]:
    """Write the condition variants of ``base_task`` (a task, or every member of a group or tag) under
    ``out_dir``; return the files written. See :func:`plan` for the arguments.

    Raises:
        DeriveError: see :func:`plan`.
    """
    specs = plan(
        base_task,
        conditions=conditions,
        include_path=include_path,
        manager=manager,
        frame_folder_fps=frame_folder_fps,
        **fields,
    )
    return [path for spec in specs for path in write(spec, out_dir)]
