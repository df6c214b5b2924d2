"""The dataset fields of every hub benchmark's vdg tasks: its local copy, or the hub as lmms-eval reads it.

The task YAMLs stay as generated: their dataset fields name values here
(``!function vdg_tasks.sources.<benchmark>__dataset_kwargs``), which lmms-eval looks up when it
loads the task, so ``$VDG_LOCAL_DATA`` (``vdg_tasks.data.local_copies``) is read in the process that runs
the evaluation. A benchmark whose folder is absent is read from the hub as lmms-eval reads it (with
a warning when ``$VDG_LOCAL_DATA`` is set: it may be one level off). When neither is there,
``hub_problem`` says which dataset and shows ``layout_tree``, and the lmms-eval run stops there
(exit status 2) instead of in lmms-eval's retries.

The names of ``vdg_tasks.data.local_copies`` are here too, as earlier versions had them.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loguru import logger

from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.data.local_copies import (
    LOCAL_DATA_ENV,
    LocalCopyError,
    LocalLayout,
    VideoUnavailable,
    dataset_fields,
    hub_dataset,
    layout_tree,
    local_dir,
    local_files,
    local_root,
    local_video,
    near_miss,
    question_files,
    require_video_path,
    video_path_problem,
)
from vdg_tasks.data.upstream import task_config

__all__ = [
    "LOCAL_DATA_ENV",
    "LocalCopyError",
    "LocalLayout",
    "VideoUnavailable",
    "dataset_fields",
    "hub_dataset",
    "hub_problem",
    "layout_tree",
    "local_dir",
    "local_files",
    "local_root",
    "local_video",
    "missing_dataset_message",
    "near_miss",
    "question_files",
    "require_video_path",
    "video_path_problem",
]


def _hub_benchmark(benchmark: str) -> tuple[Any, Mapping[str, Any]] | None:
    """(Benchmark, lmms-eval's config) of a hub benchmark read from the hub (no local copy); else None."""
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
        f"({near_miss(bench.local)}), laid out as:\n{layout_tree(bench.local)}"
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
    # datasets.config (~1.1 s) only to look in the hub cache, not for a task whose dataset is a local copy
    import datasets.config
    from huggingface_hub import constants

    def key(name: str) -> str:
        return "".join(c for c in name.lower() if c.isalnum())

    wanted = key(repo_id)
    # lmms-eval loads into $LMMS_EVAL_DATASETS_CACHE where that is set (lmms_eval.api.task's cache folder)
    own = os.environ.get("LMMS_EVAL_DATASETS_CACHE", "").strip()
    caches = [Path(constants.HF_HUB_CACHE), Path(datasets.config.HF_DATASETS_CACHE)]
    caches += [Path(own).expanduser()] if own else []
    for cache in caches:
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
    error = hub_unreachable(str(found[1]["dataset_path"]))
    return None if error is None else _not_found(benchmark, error)


def hub_unreachable(repo_id: str) -> Exception | None:
    """The error that keeps lmms-eval from downloading the hub dataset ``repo_id`` (of any task: ``vdg derive``'s
    too), or None: its download is cached, or the hub answers. Asked as ``hub_problem`` asks it."""
    return None if _in_hub_cache(repo_id) else _unreachable(repo_id)


@functools.cache
def _unreachable(repo_id: str) -> Exception | None:
    """The error asking the hub about dataset ``repo_id`` met before any answer; None when the hub answered."""
    if os.environ.get("HF_DATASETS_OFFLINE", "").strip().lower() in ("1", "on", "yes", "true"):
        return ConnectionError("HF_DATASETS_OFFLINE is set and the dataset is not cached")
    # huggingface_hub's HfApi (httpx, ~0.45 s) only to ask the hub, not when the dataset is local or cached
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    try:
        HfApi().dataset_info(repo_id, timeout=10)
    except HfHubHTTPError:
        return None
    except Exception as exc:  # offline mode, no route, no name service: each library spells it its own way
        return exc
    return None


_FIELDS = ("dataset_path", "dataset_kwargs", "dataset_name")


def __getattr__(name: str) -> Any:
    # ``<benchmark>__dataset_path`` (and kwargs, name): looked up by lmms-eval's ``!function`` when it
    # loads a task, so the local-copy setting is read at evaluation time, not when the YAML was written.
    benchmark, sep, field = name.rpartition("__")
    if not sep or field not in _FIELDS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    bench = BENCHMARKS.get(benchmark)
    if bench is None or bench.upstream is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (no hub benchmark {benchmark!r})")
    upstream = task_config(bench.upstream.folder, bench.upstream.config)
    try:
        fields = dataset_fields(upstream, bench.local)
    except LocalCopyError as exc:
        _say(f"vdg: {exc}")  # lmms-eval reports it wrapped in an ImportError, at the end of a long traceback
        raise
    problem = hub_problem(benchmark) if lmms_eval_run() else None
    if problem is not None:
        # lmms-eval would retry for a minute, print tenacity's traceback, and exit 0 with nothing evaluated
        print(f"vdg: {problem}", file=sys.stderr, flush=True)
        raise SystemExit(2)
    if bench.local is not None and local_root() is not None and local_dir(bench.local) is None:
        _say(
            f"vdg: {benchmark} is read from the hub dataset {hub_dataset(upstream)}, which lmms-eval downloads: "
            f"{near_miss(bench.local)}"
        )
    return fields[field]


def lmms_eval_run() -> bool:
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
    logger.warning(message)
