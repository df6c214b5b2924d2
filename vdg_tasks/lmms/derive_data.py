"""The data of a derived task when lmms-eval loads it, and vdg's message where its base needs what is not there.

A derived folder's template names its dataset fields ``vdg_derived.dataset_path`` (``dataset_kwargs``,
``dataset_name``), as the built-in tasks name ``vdg_tasks.sources.<benchmark>__<field>``
(:mod:`vdg_tasks.lmms.dataset_fields`): lmms-eval looks them up when it loads the task (:func:`dataset_field`), so
they are read in the process that evaluates: the base's own dataset (``DeriveSpec.dataset``), or a local copy in
``$VDG_LOCAL_DATA/<folder>/`` (``vdg_tasks.lmms.derive_spec.local_layout``: the folder is named for the hub
dataset, or for the task where the base reads local files), whose ``videos/``, where it has one, then holds the
videos of a task that gives a video file (``derive_spec.local_video_of``).

The fields come first in the template, before the base's prompt builder, whose module lmms-eval then imports.
Their lookup checks what the base needs:

- an environment variable its module reads as it is imported, or its functions read, without a default
  (``os.environ["HF_HOME"]``: TempCompass, VITATECS, CVRR, ...): one not set stops the load with vdg's message
  (:func:`environment_problem`), not the base's ``KeyError`` inside lmms-eval's ``ImportError``;
- in an lmms-eval run, the dataset: a local file that is missing, or a hub dataset neither cached nor reachable
  (:func:`dataset_problem`), not lmms-eval's minute of retries and tenacity's traceback.

Each message names what is missing and how to point vdg at a local copy. In an lmms-eval run vdg prints
``vdg: <message>`` and exits with status 2 (lmms-eval would exit 0 with nothing evaluated); elsewhere (a test, a
notebook, ``vdg shortcuts --derived``) :class:`BaseUnavailable` carries the message, and the hub is not asked, as
for the built-in tasks.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import sys
import traceback
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from loguru import logger

from vdg_tasks.data.local_copies import (
    LOCAL_DATA_ENV,
    LocalCopyError,
    LocalLayout,
    layout_tree,
    local_dir,
    local_files,
    local_root,
    near_miss,
)
from vdg_tasks.data.upstream import Function
from vdg_tasks.lmms.dataset_fields import hub_unreachable, lmms_eval_run
from vdg_tasks.lmms.derive_source import closure
from vdg_tasks.lmms.derive_spec import (
    HOOKS_MODULE,
    LOCAL_BUILDERS,
    DeriveSpec,
    load_module,
    local_layout,
    local_videos,
    video_key,
)

__all__ = [
    "DATASET_FIELDS",
    "BaseUnavailable",
    "absolute_data_files",
    "dataset_config",
    "dataset_field",
    "dataset_fields",
    "dataset_problem",
    "environment_problem",
    "environment_warning",
    "problem",
]

#: The fields a derived template names ``vdg_derived.<field>``, looked up when lmms-eval loads the task.
DATASET_FIELDS = ("dataset_path", "dataset_kwargs", "dataset_name")
#: What setting a variable points at, for the variables lmms-eval's tasks read without a default.
_SETTING_HINTS = {
    "HF_HOME": "the Hugging Face cache holding the task's downloads (lmms-eval's tasks unpack their videos under "
    "it; the hub's own default is ~/.cache/huggingface)",
}


class BaseUnavailable(ValueError):
    """What a derived task's base needs is not here (an environment variable, its dataset): the message says what,
    and how to point vdg at a local copy."""


# --- the dataset fields -----------------------------------------------------------------------------------------


def absolute_data_files(config: Mapping[str, Any], base_dir: Path) -> dict[str, Any]:
    """``config`` with relative local data files made absolute (the derived folder is elsewhere), as lmms-eval
    resolves them against the base's YAML folder."""
    kwargs = config.get("dataset_kwargs")
    if config.get("dataset_path") not in LOCAL_BUILDERS or not isinstance(kwargs, Mapping):
        return dict(config)

    def absolute(value: Any) -> Any:
        if isinstance(value, str) and value and not os.path.isabs(value) and (base_dir / value).is_file():
            return str((base_dir / value).resolve())
        if isinstance(value, Mapping):
            return {k: absolute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [absolute(v) for v in value]
        return value

    return {**config, "dataset_kwargs": {**kwargs, "data_files": absolute(kwargs.get("data_files"))}}


def _holds_function(value: Any) -> bool:
    """Whether ``value`` is, or holds at any depth, a ``!function`` value."""
    if isinstance(value, Function):
        return True
    if isinstance(value, Mapping):
        return any(_holds_function(v) for v in value.values())
    return isinstance(value, list | tuple) and any(_holds_function(v) for v in value)


def dataset_config(config: Mapping[str, Any], base_dir: Path) -> dict[str, Any] | None:
    """The dataset of a base config as its derived tasks keep it (``DeriveSpec.dataset``): ``dataset_path``,
    ``dataset_kwargs`` (relative local files made absolute), ``dataset_name``, and the ``split`` lmms-eval
    evaluates; None for a config whose dataset is no plain value (a class task builds its own, a field that is a
    function)."""
    fields = {field: config.get(field) for field in DATASET_FIELDS}
    if "class" in config or not isinstance(fields["dataset_path"], str) or not fields["dataset_path"]:
        return None
    if any(_holds_function(value) for value in fields.values()):
        return None
    if fields["dataset_kwargs"] is not None and not isinstance(fields["dataset_kwargs"], Mapping):
        return None
    fields = absolute_data_files(fields, base_dir)
    split = config.get("test_split") or config.get("validation_split") or "test"
    plain = {**fields, "dataset_kwargs": dict(fields["dataset_kwargs"] or {}), "split": str(split)}
    try:  # a value that is no plain JSON: the template keeps the base's fields
        return dict(json.loads(json.dumps(plain)))
    except (TypeError, ValueError):
        return None


def _reads_local_files(dataset: Mapping[str, Any]) -> bool:
    return str(dataset["dataset_path"]) in LOCAL_BUILDERS


def dataset_fields(spec: DeriveSpec) -> dict[str, Any]:
    """``dataset_path``, ``dataset_kwargs``, ``dataset_name`` of a derived task: its local copy's question files
    when ``$VDG_LOCAL_DATA`` has one, else the base's own.

    Raises:
        LocalCopyError: the local folder is there but holds no (or mixed) question files.
    """
    data = spec.dataset
    if data is None:
        raise AttributeError(f"{spec.task}: its spec keeps no dataset (the template names the base's own)")
    local = local_files(local_layout(spec))
    if local is None:
        return {field: data.get(field) for field in DATASET_FIELDS}
    builder, files = local
    return {
        "dataset_path": builder,
        "dataset_kwargs": {"data_files": {data["split"]: [str(p) for p in split_files(files, str(data["split"]))]}},
        "dataset_name": None,
    }


#: A hub download's file of one split: ``test-00000-of-00001.parquet`` (the split, then the shard).
_SHARD = re.compile(r"(?P<split>.+?)-\d+-of-\d+$")


def _split_named(path: Path) -> str | None:
    """The split a question file's name gives (``test.parquet``, ``test-00000-of-00001.parquet``), else None."""
    stem = path.name.split(".")[0]
    shard = _SHARD.match(stem)
    return shard.group("split") if shard else None


def split_files(files: Sequence[Path], split: str) -> list[Path]:
    """The question files of ``split`` in a local copy's folder: those named for it (``<split>.parquet``,
    ``<split>-00000-of-00001.parquet``, as a download of the hub dataset names them) where any is, else all of them.

    Raises:
        LocalCopyError: none is named for ``split`` but some are named for other splits (their questions are not
            this task's).
    """
    own = [p for p in files if p.name.split(".")[0] == split or _split_named(p) == split]
    if own:
        return own
    others = sorted({name for p in files if (name := _split_named(p)) is not None})
    if others:
        folder = files[0].parent
        raise LocalCopyError(
            f"{LOCAL_DATA_ENV}: {folder} holds the questions of split(s) {', '.join(others)}, none of split {split} "
            f"(name its files {split}.parquet or {split}-00000-of-00001.parquet, as the hub does)"
        )
    return list(files)


# --- what vdg says ------------------------------------------------------------------------------------------------


def _copy_advice(spec: DeriveSpec, layout: LocalLayout, instead: str) -> str:
    """How to point vdg at a local copy: the setting, where it points now, the layout, and where videos come from."""
    tree = layout_tree(layout)
    if spec.frames:  # no videos/: the base's doc_to_visual decodes its own files
        tree = "\n".join(tree.splitlines()[:-1]).replace("    ├── ", "    └── ").replace("    │   ", "        ")
        videos = f"its doc_to_visual {spec.doc_to_visual} decodes the videos it finds itself"
    else:
        videos = (
            f"its videos/ holds the videos, named by the doc field {video_key(spec)} (without videos/, the base's "
            "doc_to_visual finds them)"
        )
    return (
        f"To read a local copy {instead}, set {LOCAL_DATA_ENV} to the folder holding {layout.folder}/ "
        f"({near_miss(layout)}); {videos}. Laid out as:\n{tree}"
    )


def _dataset_name(data: Mapping[str, Any]) -> str:
    return str(data["dataset_path"]) + (f" ({data['dataset_name']})" if data.get("dataset_name") else "")


def _data_files(data: Mapping[str, Any]) -> list[str]:
    files = (data.get("dataset_kwargs") or {}).get("data_files")
    if isinstance(files, Mapping):
        files = list(files.values())
    out: list[str] = []
    for value in files if isinstance(files, list) else [files]:
        out += [str(v) for v in value] if isinstance(value, list) else [str(value)] if value else []
    return out


def _plain_path(value: str) -> bool:
    """Whether a data file is a path to look at (not a URL, not a glob pattern)."""
    return "://" not in value and not any(c in value for c in "*?[")


def dataset_problem(spec: DeriveSpec) -> str | None:
    """Why lmms-eval cannot load a derived task's questions, in vdg's words, or None: the spec keeps no dataset,
    ``$VDG_LOCAL_DATA`` has a copy, its local files are there, its hub dataset is cached, or the hub answers (a
    refusal, such as a gated dataset, is left to lmms-eval's own message). Asks the hub only when the dataset is not
    cached, once per process (``vdg_tasks.lmms.dataset_fields``: not at all with ``HF_DATASETS_OFFLINE`` set)."""
    data, layout = spec.dataset, local_layout(spec)
    if data is None or local_dir(layout) is not None:
        return None
    path = str(data["dataset_path"])
    if _reads_local_files(data):
        missing = [f for f in _data_files(data) if _plain_path(f) and not Path(f).is_file()]
        if not missing:
            return None
        what = f"{spec.task}: the dataset file {missing[0]} does not exist (the base, {spec.yaml_path}, reads it)."
        return what if layout is None else f"{what}\n{_copy_advice(spec, layout, 'instead')}"
    error = None if Path(path).expanduser().exists() else hub_unreachable(path)
    if error is None:
        return None
    reason = " ".join(str(error).split())[:300] or type(error).__name__
    what = (
        f"{spec.task}: the dataset {_dataset_name(data)} was not found. lmms-eval downloads it from the Hugging Face "
        f"hub, which failed here ({type(error).__name__}: {reason})."
    )
    return what if layout is None else f"{what}\n{_copy_advice(spec, layout, 'instead')}"


def _base_functions(spec: DeriveSpec, with_visual: bool) -> dict[str, str]:
    """Role -> the base's function a derived task calls (dotted or file-path name)."""
    refs = {
        "doc_to_visual": spec.doc_to_visual if with_visual else None,
        "doc_to_text": spec.doc_to_text,
        "doc_to_target": spec.doc_to_target,
        "process_results": spec.process_results,
        "process_docs": spec.process_docs,
        "aggregation": spec.aggregation,
    }
    return {role: ref for role, ref in refs.items() if ref and "." in ref}


_ENVIRON_GETITEM = type(os.environ).__getitem__.__code__


def _unset_at_import(exc: BaseException) -> tuple[str, str, int] | None:
    """(variable, file, line) where ``exc`` is ``os.environ``'s KeyError for a variable that is not set, raised as
    a module read it; else None."""
    if not isinstance(exc, KeyError) or not exc.args or not isinstance(exc.args[0], str) or exc.args[0] in os.environ:
        return None
    frames = list(traceback.walk_tb(exc.__traceback__))
    if len(frames) < 2 or frames[-1][0].f_code is not _ENVIRON_GETITEM:
        return None
    reader, line = frames[-2]
    return exc.args[0], reader.f_code.co_filename, line


def _environ_reads(ref: str) -> Iterator[tuple[str, str]]:
    """(variable, function) of each ``os.environ["NAME"]`` the function ``ref`` (and what it calls) reads without
    a default, unless it asks first (``"NAME" in os.environ``)."""
    for node in closure(ref):
        asked = {
            cmp.left.value
            for cmp in ast.walk(node)
            if isinstance(cmp, ast.Compare)
            and isinstance(cmp.left, ast.Constant)
            and any(isinstance(op, ast.In | ast.NotIn) for op in cmp.ops)
        }
        for sub in ast.walk(node):
            if not (isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Load)):
                continue
            environ = sub.value
            is_environ = (isinstance(environ, ast.Attribute) and environ.attr == "environ") or (
                isinstance(environ, ast.Name) and environ.id == "environ"
            )
            key = sub.slice.value if isinstance(sub.slice, ast.Constant) else None
            if is_environ and isinstance(key, str) and key not in asked:
                yield key, node.name


def _setting(name: str) -> str:
    hint = _SETTING_HINTS.get(name)
    return f"Set {name}" + (f" to {hint}" if hint else " as the base task expects it")


def _advice(spec: DeriveSpec, name: str, where: str) -> str:
    message = (
        f"{spec.task}: the base task needs the environment variable {name}, which is not set here: {where}. "
        f"{_setting(name)}."
    )
    layout = local_layout(spec)
    if layout is None:
        return message
    own = "its own files" if _reads_local_files(spec.dataset or {}) else "the hub's"
    instead = f"of its questions instead of {own} ({name} is needed all the same)"
    return f"{message}\n{_copy_advice(spec, layout, instead)}"


def environment_problem(spec: DeriveSpec) -> str | None:
    """What to say where a module of the base reads an environment variable that is not set as it is imported (the
    module is imported here, as lmms-eval would next, and raises ``os.environ``'s KeyError): nothing of the task
    could run. None when no module does. The ``doc_to_visual``'s module is left out where the local copy holds the
    videos (it is not called)."""
    functions = _base_functions(spec, with_visual=local_videos(spec) is None)
    for module in dict.fromkeys(ref.rpartition(".")[0] for ref in functions.values()):
        try:
            load_module(module)
        except Exception as exc:  # the base's own module: only a missing variable is vdg's to name
            unset = _unset_at_import(exc)
            if unset is not None:
                name, file, line = unset
                return _advice(spec, name, f"{file} reads it (line {line}) as lmms-eval imports it")
    return None


def environment_warning(spec: DeriveSpec) -> str | None:
    """What to warn of where a function the derived task calls reads ``os.environ["NAME"]`` for a variable that is
    not set, without a default or asking first (read from its source: a read guarded elsewhere, or on a branch
    never taken, is found too, so the run goes on; a question that fails gets its error row). The ``doc_to_visual``
    is left out where the local copy holds the videos (it is not called). None when none does."""
    functions = _base_functions(spec, with_visual=local_videos(spec) is None)
    for role, ref in functions.items():
        missing = [(name, fn) for name, fn in _environ_reads(ref) if name not in os.environ]
        if missing:
            name, fn = missing[0]
            where = f"its {role} {ref} may read it" + (f" (in {fn})" if fn != ref.rpartition(".")[2] else "")
            return _advice(spec, name, where)
    return None


def problem(spec: DeriveSpec, in_lmms_eval_run: bool) -> str | None:
    """The first of what a derived task's base needs that is missing (``environment_problem``, then, in an
    lmms-eval run, ``dataset_problem``), in vdg's words; None when nothing is."""
    return environment_problem(spec) or (dataset_problem(spec) if in_lmms_eval_run else None)


@functools.cache
def _say(message: str) -> None:
    """Log ``message`` once per process (lmms-eval looks up each dataset field of each task)."""
    logger.warning(message)


def dataset_field(spec_file: str | os.PathLike[str], name: str) -> Any:
    """The dataset field ``name`` of the derived folder whose spec is ``spec_file``: what ``vdg_derived.<name>``
    is (the module's ``__getattr__``), looked up when lmms-eval loads a task.

    Raises:
        AttributeError: ``name`` is no dataset field (as a module lacking it would).
        SystemExit: in an lmms-eval run, the base needs what is missing (status 2, vdg's message printed).
        BaseUnavailable: elsewhere, an environment variable the base needs is not set (the message).
        LocalCopyError: elsewhere, the local copy holds no question files (the message).
    """
    if name not in DATASET_FIELDS:
        raise AttributeError(f"module {HOOKS_MODULE!r} has no attribute {name!r}")
    spec = DeriveSpec.from_json(Path(spec_file).read_text(encoding="utf-8"))
    run = lmms_eval_run()
    try:
        said = problem(spec, run)
        fields = dataset_fields(spec) if said is None else {}
    except LocalCopyError as exc:
        if not run:
            raise
        said, fields = str(exc), {}
    if said is not None:
        if run:  # lmms-eval would print the base's traceback, or retry for a minute, and exit 0 with nothing evaluated
            print(f"vdg: {said}", file=sys.stderr, flush=True)
            raise SystemExit(2)
        raise BaseUnavailable(said)
    warning = environment_warning(spec)
    if warning is not None:
        _say(f"vdg: {warning}")
    layout = local_layout(spec)
    if layout is not None and local_root() is not None and local_dir(layout) is None:
        _say(f"vdg: {spec.task} reads the base's dataset {_dataset_name(spec.dataset or {})}: {near_miss(layout)}")
    return fields[name]
