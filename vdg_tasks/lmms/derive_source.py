"""Reading a base task's source as text (never executed): its doc functions and what they call, whether
they stay offline, and the doc fields they read.

Part of ``vdg derive`` (:mod:`vdg_tasks.lmms.derive`).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vdg_tasks.data.upstream import Function
from vdg_tasks.lmms.derive_spec import ALTERNATIVE, LETTERED, NUMBERED, Fields

#: Field -> the names looked for in the base's source, most likely first.
KNOWN_FIELDS: Mapping[str, tuple[str, ...]] = {
    "question_id": ("question_id", "qid", "id", "question_idx", "uid", "key", "q_id", "qa_id", "sample_id"),
    "options": ("options", "candidates", "choices", "option", "answer_choices", "candidate_answers", "index2ans"),
    "answer": (
        "answer",
        "correct_choice",
        "correct_idx",
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
#: Names that reach the network or write a submission: a scorer or aggregation using one is not kept.
_UNSAFE_NAMES = frozenset(
    {"requests", "urllib", "httpx", "aiohttp", "openai", "OpenAI", "AzureOpenAI", "anthropic"}
    | {"generate_submission_file", "hf_hub_download", "snapshot_download", "HfApi"}
)
_DOC_KEY = re.compile(r"""\bdoc\s*(?:\[|\.get\()\s*["']([^"'\n]+)["']""")
_DOC_NUMBERED = re.compile(r"""\bdoc\s*(?:\[|\.get\()\s*f["']([A-Za-z_]\w*?)\{\w*\}["']""")
#: A numbered options key built before it is read (``key = f"answer_choice_{idx}"; doc.get(key)``).
_NAMED_NUMBERED = re.compile(r"""f["']((?:\w*(?:option|choice|candidate)\w*?)_?)\{\w*\}["']""", re.IGNORECASE)
#: A lettered options key (``doc[f"choice_{letter.lower()}"]``: EgoPlan's choice_a ... choice_d).
_DOC_LETTERED = re.compile(r"""\bdoc\s*(?:\[|\.get\()\s*f["']([A-Za-z_]\w*?)\{\w+\.(?:lower|upper)\(\)\}["']""")
_LITERAL = re.compile(r"""["']([A-Za-z_]\w*)["']""")
_IDENT = re.compile(r"[A-Za-z_][\w-]*")


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


def closure(ref: str) -> list[ast.FunctionDef]:
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


def closure_text(ref: str) -> str:
    loaded = _module(str(ref).rpartition(".")[0])
    if loaded is None:
        return ""
    return "\n".join(ast.get_source_segment(loaded[0], node) or "" for node in closure(ref))


def offline_safe(ref: str) -> bool:
    """Whether the function (and what it calls) stays offline: no network client, upload or submission file.
    Docstrings are not read (they cite papers' URLs)."""
    for node in closure(ref):
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
    refs = [config[k] for k in keys if is_fn(config.get(k))]
    modules = dict.fromkeys(str(r).rpartition(".")[0] for r in refs)
    whole = [loaded[0] for loaded in map(_module, modules) if loaded is not None]
    return ["\n".join(closure_text(r) for r in refs), "\n".join(whole)]


def doc_keys(source: str) -> list[str]:
    """The doc fields ``source`` reads (``doc["x"]``, ``doc.get("x")``), in order of first reading."""
    return list(dict.fromkeys(_DOC_KEY.findall(source)))


def is_fn(value: Any) -> bool:
    return isinstance(value, Function)


def names_a_field(value: Any) -> bool:
    """Whether a config value (``doc_to_text: input``, ``doc_to_target: answer``) names a doc field rather than a
    function or a template."""
    return isinstance(value, str) and not is_fn(value) and _IDENT.fullmatch(value) is not None


# --- fields -------------------------------------------------------------------------------------------


def _find(field: str, tiers: Sequence[str], guess: bool = True) -> str | None:
    """The known names of ``field`` read from ``doc`` in the first tier that reads any ("a|b": the first
    a doc has), else (with ``guess``, never for ids and options: a wrong guess there merges or misreads
    questions) the known names mentioned at all."""
    names = KNOWN_FIELDS[field]
    # Options only from the task's own functions: a module shared with an open-ended task reads them elsewhere.
    for text in tiers[:1] if field == "options" else tiers:
        keys = set(_DOC_KEY.findall(text))
        numbered = (_DOC_NUMBERED.search(text) or _NAMED_NUMBERED.search(text)) if field == "options" else None
        lettered = _DOC_LETTERED.search(text) if field == "options" else None
        # Video-Holmes spells them Question, Options, Answer
        hits = [k for n in names for k in sorted(keys) if k.lower() == n.lower()]
        hits += [f"{lettered.group(1)}{LETTERED}"] if lettered else []
        hits += [f"{numbered.group(1)}{NUMBERED}"] if numbered and not lettered else []
        if hits:
            return ALTERNATIVE.join(hits)
    if field in ("question_id", "options") or not guess:
        return None
    for text in tiers:
        hits = [n for n in names if n in set(_LITERAL.findall(text))]
        if hits:
            return ALTERNATIVE.join(hits)
    return None


def returned_field(ref: str) -> str | None:
    """The doc field a function returns as it is (``return doc["A"]``, ``return doc.get("A")``), else None."""
    nodes = closure(ref)
    node = nodes[0] if nodes and nodes[0].name == str(ref).rpartition(".")[2] else None
    if node is None or not node.args.args:
        return None
    body = [b for b in node.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    doc, value = node.args.args[0].arg, body[0].value
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id == doc:
        key = value.slice
    elif (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "get"
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == doc
        and value.args
    ):
        key = value.args[0]
    else:
        return None
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


def returns_constant(ref: str) -> bool:
    """Whether a function's every ``return`` gives a constant (VANTAGE's ``doc_to_target`` returns "": no answer)."""
    nodes = closure(ref)
    node = nodes[0] if nodes and nodes[0].name == str(ref).rpartition(".")[2] else None
    returns = [n for n in ast.walk(node) if isinstance(n, ast.Return)] if node is not None else []
    return bool(returns) and all(r.value is None or isinstance(r.value, ast.Constant) for r in returns)


#: A template naming one field (``doc_to_target: "{{reference_answer}}"``).
_FIELD_TEMPLATE = re.compile(r"^\{\{\s*([A-Za-z_][\w-]*)\s*\}\}$")


def template_field(value: Any) -> str | None:
    """The doc field a config value names, as it is (``answer``) or as a template of one field
    (``{{answer}}``); None for a function or any other template."""
    if names_a_field(value):
        return str(value)
    found = _FIELD_TEMPLATE.match(value.strip()) if isinstance(value, str) and not is_fn(value) else None
    return found.group(1) if found else None


def detect_fields(config: Mapping[str, Any], source: str | Sequence[str]) -> Fields:
    """The base's doc fields: ``doc_to_target`` / ``doc_to_text`` when they name a field or are a template of one
    (or, for the answer, a function returning one field as it is), else the known names (``KNOWN_FIELDS``) the
    source reads from ``doc`` (``source``: one text, or texts in the order to search), else the known names it
    mentions at all (not for the question id and options, nor for the answer where a ``doc_to_target`` function
    gives it)."""
    tiers = [source] if isinstance(source, str) else list(source)
    hints = {"answer": config.get("doc_to_target"), "question": config.get("doc_to_text")}
    found = {}
    target = config.get("doc_to_target")
    for field in KNOWN_FIELDS:
        # A doc_to_target function defines the answer better than a name merely mentioned (ExtremeWhenBench's "gt").
        guess = not (field == "answer" and is_fn(target))
        found[field] = template_field(hints.get(field)) or _find(field, tiers, guess)
    if found["answer"] is None and is_fn(target):
        found["answer"] = returned_field(str(target))
    return Fields(**found)
