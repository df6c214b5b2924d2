"""Local copies of benchmarks: where ``$VDG_LOCAL_DATA`` keeps each benchmark's questions and videos.

Clusters without hub access keep benchmarks as local files. One setting switches every vdg task of
a benchmark to its local copy: ``VDG_LOCAL_DATA=/data/benchmarks``, with one folder per benchmark
(``LocalLayout``)::

    /data/benchmarks/videomme/videomme.parquet      (or .jsonl/.json, or a folder videomme/ of them, as on the hub)
    /data/benchmarks/videomme/videos/<videoID>.mp4
    /data/benchmarks/mvbench/json/<sub_task>.json   (as on the hub; or <sub_task>.json|jsonl|parquet)
    /data/benchmarks/mvbench/videos/<lmms-eval's folder for the sub-task>/<video>
    /data/benchmarks/egoschema/Subset/*.parquet     (and GENERATION/ for the full set; or Subset.parquet ...)
    /data/benchmarks/egoschema/videos/<video_idx>.mp4

The question files keep the hub dataset's columns. This module knows layouts and paths only; which
benchmark has which layout is ``vdg_tasks.data.benchmarks``, and the dataset fields lmms-eval reads are
``vdg_tasks.lmms.dataset_fields``.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from vdg_tasks.vocabulary.untrusted import UntrustedPath, confined

#: The environment variable naming the folder of local benchmark copies.
LOCAL_DATA_ENV = "VDG_LOCAL_DATA"
_FORMATS = {".parquet": "parquet", ".jsonl": "json", ".json": "json"}


class VideoUnavailable(Exception):
    """The source video of a question cannot be found."""


def video_path_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a question's video, in words ("does not exist", "is not a regular file", ...), or
    None for a regular file or a folder (a folder of frames, where a benchmark ships those: the hooks decide)."""
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
    """The benchmark's local folder when ``$VDG_LOCAL_DATA`` has one, else None (read from the hub).

    Raises:
        LocalCopyError: the folder cannot be looked for (a name too long, no permission to search), naming it.
    """
    root = local_root()
    if layout is None or root is None:
        return None
    folder = root / layout.folder
    try:
        return folder if folder.is_dir() else None
    except OSError as exc:  # a name too long, a folder this user may not search: said, not a bare OSError
        why = exc.strerror or type(exc).__name__
        raise LocalCopyError(f"{LOCAL_DATA_ENV}={root}: cannot look for {folder} ({why})") from None


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

    The path is built from the doc's ids (``layout.video``), which come from the question file: it must stay
    inside ``<folder>/videos`` (``vdg_tasks.vocabulary.untrusted.confined``: no absolute id, no ``..``, no
    symbolic link leading out), and no id may be empty (the folder itself, or a file named ``.mp4``).

    Raises:
        UntrustedPath: the ids make a path that leaves ``<folder>/videos``, or an id is empty (the message
            names it).
        VideoUnavailable: no such file (the message names the path).
    """
    videos = folder / "videos"
    relative = str(layout.video(doc))
    reason = _empty_id(relative)
    if reason is not None:  # the folder of videos itself, or a file named by a suffix alone
        raise UntrustedPath(relative, videos, reason, "video path")
    confined(videos, relative, "video path")  # refused by its spelling even when no such file exists
    path = videos / relative
    candidates = [relative, *(str(PurePosixPath(relative).with_suffix(s)) for s in layout.suffixes)]
    for candidate in candidates:
        if os.path.lexists(videos / candidate):
            confined(videos, candidate, "video path")  # a symbolic link out of the copy is refused
            return require_video_path(videos / candidate, f" (local copy in {folder})")
    raise VideoUnavailable(f"video path:{path} does not exist (local copy in {folder})")


def _empty_id(text: str) -> str | None:
    """Why a path built from a doc's ids names no video when an id is empty (None: it names one): it ends with a
    separator (``<sub>/``, the folder itself) or its last part is a suffix alone (``.mp4``)."""
    last = re.split(r"[\\/]", text)[-1]
    if not last or (last.startswith(".") and "." not in last[1:]):
        return "an id in it is empty (it names a folder, or a suffix alone)"
    return None


def check_id_path(relative: str, what: str = "video path") -> str:
    """``relative`` (a path a benchmark builds from a doc's ids, such as ``<videoID>.mp4``) when joining it under
    a folder keeps it there: not absolute, no ``..``, no NUL, no empty part (``a//b``: an absolute id joined in,
    which ``os.path.join`` would follow out) and no empty id (``.mp4``). For lookups whose folder vdg does not know
    (lmms-eval's own). Judged by its spelling alone (pure path logic: no file is looked at, and a leading ``~`` is
    a character of the name, never expanded).

    Raises:
        UntrustedPath: naming the path and why.
    """
    text = str(relative)
    parts = re.split(r"[\\/]", text)
    if not text:
        reason: str | None = "it is empty"
    elif "\x00" in text:
        reason = "it holds a NUL character"
    elif text.startswith(("/", "\\")) or PureWindowsPath(text).drive or PurePosixPath(text).is_absolute():
        reason = "it is absolute"
    elif ".." in parts:
        reason = "it climbs out with '..'"
    elif any(not part for part in parts):
        reason = "a part of it is empty (an absolute id joined into it)"
    else:
        reason = _empty_id(text)
    if reason is not None:
        raise UntrustedPath(text, None, reason, what)
    return text


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


def near_miss(layout: LocalLayout) -> str:
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
        raise LocalCopyError(f"{exc}. {near_miss(layout)}. Expected layout:\n{layout_tree(layout)}") from None


def hub_dataset(upstream: Mapping[str, Any]) -> str:
    """The hub dataset lmms-eval's own config ``upstream`` reads (``lmms-lab/Video-MME``)."""
    return str(upstream["dataset_path"]) + (f" ({upstream['dataset_name']})" if upstream.get("dataset_name") else "")


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
