"""Where a benchmark's questions and videos come from: the hub (lmms-eval's own config) or a local copy.

Clusters without hub access keep benchmarks as local files. One setting switches every vdg task of
a benchmark to its local copy: ``VDG_LOCAL_DATA=/data/benchmarks``, with one folder per benchmark
(``LocalLayout``)::

    /data/benchmarks/videomme/videomme.parquet      (or .jsonl/.json, or a folder videomme/ of them, as on the hub)
    /data/benchmarks/videomme/videos/<videoID>.mp4
    /data/benchmarks/mvbench/json/<sub_task>.json   (as on the hub; or <sub_task>.json|jsonl|parquet)
    /data/benchmarks/mvbench/videos/<lmms-eval's folder for the sub-task>/<video>
    /data/benchmarks/egoschema/Subset/*.parquet     (and GENERATION/ for the full set; or Subset.parquet ...)
    /data/benchmarks/egoschema/videos/<video_idx>.mp4

The question files keep the hub dataset's columns. A benchmark whose folder is absent is read from
the hub as lmms-eval reads it (with a warning when ``$VDG_LOCAL_DATA`` is set: it may be one level
off). When neither is there, ``hub_problem`` says which dataset and shows ``layout_tree``, and the
lmms-eval run stops there (exit status 2) instead of in lmms-eval's retries.
The task YAMLs stay as generated: their dataset fields name values here
(``!function vdg_tasks.sources.<benchmark>__dataset_kwargs``), which lmms-eval looks up when it
loads the task, so the setting is read in the process that runs the evaluation.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The environment variable naming the folder of local benchmark copies.
LOCAL_DATA_ENV = "VDG_LOCAL_DATA"
_FORMATS = {".parquet": "parquet", ".jsonl": "json", ".json": "json"}


class VideoUnavailable(Exception):
    """The source video of a question cannot be found."""


def video_path_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a question's video, in words ("does not exist", "is not a regular file", ...), or
    None for a regular file or a folder (a folder of frames, where a benchmark ships those: the hooks decide)."""
    import errno
    import stat

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "is a symbolic link to a missing file" if os.path.islink(path) else "does not exist"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a loop of symbolic links (too many levels of symbolic links)"
        return f"cannot be opened ({exc.strerror or type(exc).__name__})"
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return None
    return "is not a regular file (a device, pipe or socket)"


def require_video_path(path: Path, where: str = "") -> Path:
    """``path``, or VideoUnavailable naming it and why it cannot be a video (``where``: appended context)."""
    problem = video_path_problem(path)
    if problem is not None:
        raise VideoUnavailable(f"video path:{path} {problem}{where}")
    return path


class LocalCopyError(ValueError):
    """A local copy is configured but its questions cannot be found or read (names the folder)."""


@dataclass(frozen=True)
class LocalLayout:
    """How a local copy of a benchmark is laid out under ``$VDG_LOCAL_DATA``.

    Attributes:
        folder: the benchmark's folder under ``$VDG_LOCAL_DATA``.
        questions: names tried in order, relative to the folder: a folder of question files, or a
            file name without its suffix (``.parquet``, ``.jsonl``, ``.json``).
        video: doc -> the video's path relative to ``<folder>/videos``.
        suffixes: alternative suffixes tried when that path does not exist (``.MP4``, ``.mkv``).
    """

    folder: str
    questions: tuple[str, ...]
    video: Callable[[Mapping[str, Any]], str]
    suffixes: tuple[str, ...] = ()


def local_root() -> Path | None:
    value = os.environ.get(LOCAL_DATA_ENV, "").strip()
    return Path(value).expanduser() if value else None


def local_dir(layout: LocalLayout | None) -> Path | None:
    """The benchmark's local folder when ``$VDG_LOCAL_DATA`` has one, else None (read from the hub)."""
    root = local_root()
    if layout is None or root is None:
        return None
    folder = root / layout.folder
    return folder if folder.is_dir() else None


def question_files(folder: Path, names: tuple[str, ...]) -> tuple[str, list[Path]]:
    """(datasets builder, files) of the first of ``names`` present in ``folder``.

    Raises:
        LocalCopyError: none present, or a folder mixing parquet and JSON files.
    """
    for name in names:
        candidate = folder / name
        if candidate.is_dir():
            files = sorted(p for p in candidate.iterdir() if p.suffix in _FORMATS and p.is_file())
        else:
            files = [p for p in (candidate.with_name(candidate.name + s) for s in _FORMATS) if p.is_file()][:1]
        if not files:
            continue
        builders = {_FORMATS[p.suffix] for p in files}
        if len(builders) > 1:
            raise LocalCopyError(f"{candidate}: mixes parquet and JSON question files; keep one format")
        return builders.pop(), files
    tried = ", ".join(f"{n}/ or {n}.parquet|.jsonl|.json" for n in names)
    raise LocalCopyError(f"{LOCAL_DATA_ENV}: no question file in {folder} (looked for {tried})")


def local_video(folder: Path, layout: LocalLayout, doc: Mapping[str, Any]) -> Path:
    """The video of ``doc`` in a local copy (a file, or a folder of frames where the benchmark ships those).

    Raises:
        VideoUnavailable: no such file (the message names the path).
    """
    path = folder / "videos" / layout.video(doc)
    for candidate in (path, *(path.with_suffix(s) for s in layout.suffixes)):
        if os.path.lexists(candidate):
            return require_video_path(candidate, f" (local copy in {folder})")
    raise VideoUnavailable(f"video path:{path} does not exist (local copy in {folder})")


class _Named(dict):
    """A doc whose every field is its own ``<name>``: a layout's video path as a pattern."""

    def __missing__(self, key: str) -> str:
        return f"<{key}>"


def layout_tree(layout: LocalLayout, root: str = f"${LOCAL_DATA_ENV}") -> str:
    """How a local copy of one benchmark is laid out under ``root``, as a tree (for messages and the README)."""
    first, *others = layout.questions
    also = "".join(f"; else {n}/ or {n}.parquet|.jsonl|.json" for n in others)
    suffixes = f"  (or {', '.join(layout.suffixes)})" if layout.suffixes else ""
    return "\n".join(
        (
            f"{root}/",
            f"└── {layout.folder}/",
            f"    ├── {first}/*.parquet  the questions, with the hub dataset's columns (or *.jsonl, *.json;",
            f"    │       or one file {first}.parquet|.jsonl|.json{also})",
            f"    └── videos/{layout.video(_Named())}{suffixes}",
        )
    )


def _near_miss(layout: LocalLayout) -> str:
    """Where ``$VDG_LOCAL_DATA`` points, and the setting that would find the benchmark when it is one level off."""
    root = local_root()
    if root is None:
        return f"{LOCAL_DATA_ENV} is not set"
    if not root.is_dir():
        return f"{LOCAL_DATA_ENV}={root} is not a folder"
    if root.name == layout.folder:
        return f"{LOCAL_DATA_ENV}={root} is the benchmark's own folder: set {LOCAL_DATA_ENV}={root.parent}"
    if (root / layout.folder).is_dir():
        return f"{LOCAL_DATA_ENV}={root}"
    below = sorted(c for c in root.iterdir() if (c / layout.folder).is_dir())
    if below:
        return f"{LOCAL_DATA_ENV}={root} holds {below[0] / layout.folder}: set {LOCAL_DATA_ENV}={below[0]}"
    return f"{LOCAL_DATA_ENV}={root} has no folder {layout.folder}/"


def local_files(layout: LocalLayout | None) -> tuple[str, list[Path]] | None:
    """(datasets builder, question files) of the benchmark's local copy; None when ``$VDG_LOCAL_DATA`` has none.

    Raises:
        LocalCopyError: the local folder exists but holds no (or mixed) question files; the message
            shows the expected layout, and the setting to use when ``$VDG_LOCAL_DATA`` is one level off.
    """
    folder = local_dir(layout)
    if folder is None or layout is None:
        return None
    try:
        return question_files(folder, layout.questions)
    except LocalCopyError as exc:
        raise LocalCopyError(f"{exc}. {_near_miss(layout)}. Expected layout:\n{layout_tree(layout)}") from None


def hub_dataset(upstream: Mapping[str, Any]) -> str:
    """The hub dataset lmms-eval's own config ``upstream`` reads (``lmms-lab/Video-MME``)."""
    return str(upstream["dataset_path"]) + (f" ({upstream['dataset_name']})" if upstream.get("dataset_name") else "")


def _hub_benchmark(benchmark: str) -> tuple[Any, Mapping[str, Any]] | None:
    """(Benchmark, lmms-eval's config) of a hub benchmark read from the hub (no local copy); else None."""
    from vdg_tasks.benchmarks import BENCHMARKS
    from vdg_tasks.upstream import task_config

    bench = BENCHMARKS.get(benchmark)
    if bench is None or bench.upstream is None or bench.local is None or local_dir(bench.local) is not None:
        return None
    return bench, task_config(bench.upstream.folder, bench.upstream.config)


def _not_found(benchmark: str, error: BaseException) -> str | None:
    found = _hub_benchmark(benchmark)
    if found is None:
        return None
    bench, upstream = found
    reason = " ".join(str(error).split())[:300] or type(error).__name__
    return (
        f"{benchmark}: the dataset {hub_dataset(upstream)} was not found. lmms-eval downloads it from the "
        f"Hugging Face hub, which failed here ({type(error).__name__}: {reason}).\n"
        f"To read a local copy instead, set {LOCAL_DATA_ENV} to the folder holding {bench.local.folder}/ "
        f"({_near_miss(bench.local)}), laid out as:\n{layout_tree(bench.local)}"
    )


def missing_dataset_message(benchmark: str, exc: BaseException) -> str | None:
    """What to say when lmms-eval's load of a hub benchmark's questions raised ``exc``; None when ``exc`` is
    not a missing dataset (the benchmark has a local copy, or the load failed otherwise than by an ``OSError``).

    The message names the dataset, says that lmms-eval downloads it from the hub, and shows the
    local layout that ``$VDG_LOCAL_DATA`` would read instead (and the setting, if it is one level off).
    """
    causes = [exc]  # lmms-eval's download raises tenacity's RetryError from the hub's error
    while (nxt := causes[-1].__cause__ or causes[-1].__context__) is not None and nxt not in causes:
        causes.append(nxt)
    return _not_found(benchmark, causes[-1]) if isinstance(causes[-1], OSError) else None


def _in_hub_cache(repo_id: str) -> bool:
    """Whether a download of the hub dataset ``repo_id`` is cached, where datasets could load it offline."""
    import datasets.config
    from huggingface_hub import constants

    def key(name: str) -> str:
        return "".join(c for c in name.lower() if c.isalnum())

    wanted = key(repo_id)
    for cache in (Path(constants.HF_HUB_CACHE), Path(datasets.config.HF_DATASETS_CACHE)):
        if cache.is_dir() and any(wanted in key(entry.name) for entry in cache.iterdir()):
            return True
    return False


def hub_problem(benchmark: str) -> str | None:
    """Why lmms-eval cannot download the questions of ``benchmark``, in vdg's words (as
    ``missing_dataset_message``), or None: it has a local copy, its hub dataset is cached, or the hub
    answers (a refusal, such as a gated dataset, is left to lmms-eval's own message).

    Asks the hub only when the dataset is not cached, once per process (a 10 s timeout).
    """
    found = _hub_benchmark(benchmark)
    if found is None:
        return None
    repo_id = str(found[1]["dataset_path"])
    if _in_hub_cache(repo_id):
        return None
    error = _unreachable(repo_id)
    return None if error is None else _not_found(benchmark, error)


@functools.cache
def _unreachable(repo_id: str) -> Exception | None:
    """The error asking the hub about dataset ``repo_id`` met before any answer; None when the hub answered."""
    if os.environ.get("HF_DATASETS_OFFLINE", "").strip().lower() in ("1", "on", "yes", "true"):
        return ConnectionError("HF_DATASETS_OFFLINE is set and the dataset is not cached")
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    try:
        HfApi().dataset_info(repo_id, timeout=10)
    except HfHubHTTPError:
        return None
    except Exception as exc:  # offline mode, no route, no name service: each library spells it its own way
        return exc
    return None


def dataset_fields(upstream: Mapping[str, Any], layout: LocalLayout | None) -> dict[str, Any]:
    """``dataset_path``, ``dataset_kwargs``, ``dataset_name`` of a task: its local copy's files when
    ``$VDG_LOCAL_DATA`` has the benchmark, else those of lmms-eval's own config ``upstream``.

    Raises:
        LocalCopyError: the local folder exists but holds no question files.
    """
    local = local_files(layout)
    if local is None:
        return {
            "dataset_path": upstream["dataset_path"],
            "dataset_kwargs": dict(upstream.get("dataset_kwargs") or {}),
            "dataset_name": upstream.get("dataset_name"),
        }
    builder, files = local
    split = upstream.get("test_split") or "test"
    return {
        "dataset_path": builder,
        "dataset_kwargs": {"data_files": {split: [str(p) for p in files]}},
        "dataset_name": None,
    }


_FIELDS = ("dataset_path", "dataset_kwargs", "dataset_name")


def __getattr__(name: str) -> Any:
    # ``<benchmark>__dataset_path`` (and kwargs, name): looked up by lmms-eval's ``!function`` when it
    # loads a task, so the local-copy setting is read at evaluation time, not when the YAML was written.
    benchmark, sep, field = name.rpartition("__")
    if not sep or field not in _FIELDS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from vdg_tasks.benchmarks import BENCHMARKS
    from vdg_tasks.upstream import task_config

    bench = BENCHMARKS.get(benchmark)
    if bench is None or bench.upstream is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (no hub benchmark {benchmark!r})")
    upstream = task_config(bench.upstream.folder, bench.upstream.config)
    try:
        fields = dataset_fields(upstream, bench.local)
    except LocalCopyError as exc:
        _say(f"vdg: {exc}")  # lmms-eval reports it wrapped in an ImportError, at the end of a long traceback
        raise
    problem = hub_problem(benchmark) if _lmms_eval_run() else None
    if problem is not None:
        # lmms-eval would retry for a minute, print tenacity's traceback, and exit 0 with nothing evaluated
        print(f"vdg: {problem}", file=sys.stderr, flush=True)
        raise SystemExit(2)
    if bench.local is not None and local_root() is not None and local_dir(bench.local) is None:
        _say(
            f"vdg: {benchmark} is read from the hub dataset {hub_dataset(upstream)}, which lmms-eval downloads: "
            f"{_near_miss(bench.local)}"
        )
    return fields[field]


def _lmms_eval_run() -> bool:
    """Whether this process is an lmms-eval run (``lmms-eval``, ``lmms_eval``, ``python -m lmms_eval``), which
    a missing dataset may stop; a task loaded in-process elsewhere (a notebook, a test) is left to raise."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return (spec is not None and spec.name.startswith("lmms_eval.")) or Path(sys.argv[0]).name in (
        "lmms-eval",
        "lmms_eval",
    )


@functools.cache
def _say(message: str) -> None:
    """Log ``message`` once per process (lmms-eval looks up each dataset field of each task)."""
    from loguru import logger

    logger.warning(message)


def load_docs(benchmark: str) -> list[dict[str, Any]]:
    """The questions of ``benchmark`` as canonical docs (``question_id``, ``task_type``, ...), read the
    way its vdg tasks read them (local copy, local file or hub).

    Raises:
        KeyError: unknown benchmark; vdg_tasks.materialize.TaskError: its data is missing.
    """
    from vdg_tasks.benchmarks import BENCHMARKS, members, task_name
    from vdg_tasks.materialize import benchmark_docs

    parts = members(benchmark)
    if not parts:
        known = ", ".join(sorted({b.report_name for b in BENCHMARKS.values()}))
        raise KeyError(f"unknown benchmark {benchmark!r}; known: {known}")
    docs: list[dict[str, Any]] = []
    for bench in parts:
        first = bench.conditions()[0].name
        docs += [bench.view(d) for d in benchmark_docs(bench.name, task_name(bench.name, first))]
    return docs
