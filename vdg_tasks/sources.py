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
the hub as lmms-eval reads it. The task YAMLs stay as generated: their dataset fields name values
here (``!function vdg_tasks.sources.<benchmark>__dataset_kwargs``), which lmms-eval looks up when it
loads the task, so the setting is read in the process that runs the evaluation.
"""

from __future__ import annotations

import os
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


def dataset_fields(upstream: Mapping[str, Any], layout: LocalLayout | None) -> dict[str, Any]:
    """``dataset_path``, ``dataset_kwargs``, ``dataset_name`` of a task: its local copy's files when
    ``$VDG_LOCAL_DATA`` has the benchmark, else those of lmms-eval's own config ``upstream``.

    Raises:
        LocalCopyError: the local folder exists but holds no question files.
    """
    folder = local_dir(layout)
    if folder is None or layout is None:
        return {
            "dataset_path": upstream["dataset_path"],
            "dataset_kwargs": dict(upstream.get("dataset_kwargs") or {}),
            "dataset_name": upstream.get("dataset_name"),
        }
    builder, files = question_files(folder, layout.questions)
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
    return dataset_fields(task_config(bench.upstream.folder, bench.upstream.config), bench.local)[field]


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
