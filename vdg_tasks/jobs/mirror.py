"""Perturbed folders for other harnesses: ``vdg materialize --mirror DIR``.

Each built video is placed at ``DIR/<condition>/<name>``, where ``<name>`` is its source's path relative to the
benchmark's folder of videos (``materialize.source_name``, worked out where the plan resolves the source). A harness
that reads a benchmark's video folder (VLMEvalKit's data root, a lab's own script) runs a condition by pointing its
video root at ``DIR/<condition>``.

* A file is a hard link to its cache entry (the source itself for ``orig``) when both are on one file system, else
  a copy checked against the entry's sha256 while it is written: nothing is encoded again.
* A file already there with the entry's content (the same inode, or the same sha256) is kept: a rerun writes
  nothing. One that differs is replaced atomically (written aside, renamed over it).
* Nothing is written through a symbolic link: a link anywhere below ``DIR`` (a folder or the file itself) is
  refused, and a name from a dataset row must stay inside ``DIR/<condition>`` (not absolute, no ``..``).
* ``DIR/vdg-mirror.json`` lists every file (:func:`manifest_entry`), merged with the entries of earlier runs whose
  files are still there, and rewritten only when it changes. A manifest vdg cannot read as its own (not JSON, another
  format, ``files`` not a list of entries with their fields and types) is refused before anything is placed, never
  replaced: replacing it would lose the entries it lists.

The cache writes MP4 whatever the source's container: a file keeps its source's exact name (``x.mkv`` holds MP4
where the source was Matroska). FFmpeg-based readers (decord, PyAV, OpenCV, torchvision) find the container from the
content, not the name. Text conditions change the question, not the video: they have no folder.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from filelock import FileLock, Timeout

from vdg_tasks.data.local_copies import check_id_path
from vdg_tasks.jobs.materialize import Outcome
from vdg_tasks.perturb.cache import pid_alive, source_identity, video_seed
from vdg_tasks.vocabulary.conditions import CONDITIONS, TRANSFORM_VERSION
from vdg_tasks.vocabulary.untrusted import UntrustedPath, confined, path_component

__all__ = ["MANIFEST_NAME", "MirrorError", "MirrorSummary", "manifest_entry", "mirror", "place"]

#: The manifest in ``DIR``.
MANIFEST_NAME = "vdg-mirror.json"
#: The manifest's format; a manifest of another format (or none of ours) is refused (``MirrorError``).
MANIFEST_FORMAT = 1
_CHUNK_BYTES = 4 << 20
#: A file being written: ``.<name>.vdg-tmp-<pid>`` beside its target.
_TEMP = re.compile(r"^\..+\.vdg-tmp-(?P<pid>\d+)$")

Action = Literal["linked", "copied", "replaced", "kept"]


class MirrorError(ValueError):
    """A file of the mirror cannot be placed, or its manifest cannot be merged into (the message names it and why)."""


@dataclass(frozen=True)
class Placed:
    """One file of the mirror: ``path`` relative to ``DIR``, what was done, and its manifest entry."""

    path: str
    action: Action
    entry: dict[str, Any]


@dataclass(frozen=True)
class MirrorSummary:
    """What ``--mirror`` did.

    Attributes:
        root: the mirror folder.
        placed: one per file, sorted by path.
        failed: (job outcome, why) for each built video that has no file in the mirror.
        text_jobs: jobs of text conditions (no folder: their change is the question).
    """

    root: Path
    placed: tuple[Placed, ...]
    failed: tuple[tuple[Outcome, str], ...]
    text_jobs: int

    def counts(self) -> dict[str, int]:
        actions: list[Action] = ["linked", "copied", "replaced", "kept"]
        return {a: sum(p.action == a for p in self.placed) for a in actions}

    def line(self) -> str:
        c = self.counts()
        text = f"; {self.text_jobs} jobs of text conditions have no folder" if self.text_jobs else ""
        return (
            f"mirror {self.root}: {c['linked']} linked, {c['copied']} copied, {c['replaced']} replaced, "
            f"{c['kept']} already there, {len(self.failed)} not mirrored{text}"
        )

    def failure_lines(self) -> list[str]:
        return [f"  {o.job.benchmark}/{o.job.condition} {o.job.video_id}: {why}" for o, why in self.failed]


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK_BYTES), b""):
            h.update(chunk)
    return h.hexdigest()


def _folder(root: Path, relative: str, parts: Iterable[str]) -> Path:
    """``root/<parts>``, each folder created where missing; a symbolic link or a file in the way is refused."""
    folder = root
    for part in parts:
        folder = folder / part
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            os.mkdir(folder)
            continue
        if stat.S_ISLNK(mode):
            raise UntrustedPath(relative, root, f"{folder} is a symbolic link (nothing is written through one)")
        if not stat.S_ISDIR(mode):
            raise MirrorError(f"{folder} is in the way of {relative}: it is not a folder")
    return folder


def _copy(entry: Path, tmp: Path) -> str:
    """Copy ``entry`` to the new file ``tmp`` (never through a link); return the sha256 of what was written."""
    h = hashlib.sha256()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with open(entry, "rb") as src, os.fdopen(fd, "wb") as dst:
        for chunk in iter(lambda: src.read(_CHUNK_BYTES), b""):
            h.update(chunk)
            dst.write(chunk)
    return h.hexdigest()


def place(
    root: str | os.PathLike[str], relative: str, entry: str | os.PathLike[str], digest: str | Callable[[], str]
) -> Action:
    """Make ``root/relative`` hold the content of ``entry`` (sha256 ``digest``, or a function giving it, called only
    when a copy or a file already there must be compared): ``kept`` when it does already (the same inode, or the same
    content), else a hard link to ``entry`` (``linked``) or, across file systems, a copy (``copied``), renamed into
    place (``replaced`` when a different file was there).

    Raises:
        UntrustedPath: ``relative`` is not a plain relative path, or a folder of it or the file is a symbolic link.
        MirrorError: a file where a folder belongs, a folder or device where the file belongs, or a copy whose
            content is not ``digest`` (the entry changed while it was copied).
    """
    base = Path(root)
    expected = digest if callable(digest) else (lambda: str(digest))
    text = check_id_path(str(relative), "mirror path")  # not absolute, no '..', no empty part
    parts = PurePosixPath(text).parts
    base.mkdir(parents=True, exist_ok=True)  # the folder given (it may be a link: the user's choice)
    folder = _folder(base, text, parts[:-1])
    confined(base, text, "mirror path")  # no folder of it is a link (just checked): it stays inside
    target = folder / parts[-1]
    source = Path(entry)
    try:
        st: os.stat_result | None = os.lstat(target)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise UntrustedPath(text, base, "it is a symbolic link (nothing is written through one)", "mirror path")
        if not stat.S_ISREG(st.st_mode):
            raise MirrorError(f"{target} is in the way: it is not a regular file")
        ref = os.stat(source)
        if (st.st_dev, st.st_ino) == (ref.st_dev, ref.st_ino):
            return "kept"
        if st.st_size == ref.st_size and _sha256_file(target) == expected():
            return "kept"
    tmp = folder / f".{parts[-1]}.vdg-tmp-{os.getpid()}"
    tmp.unlink(missing_ok=True)  # a link is removed, never followed
    try:
        try:
            os.link(source, tmp)
            action: Action = "linked"
        except OSError:  # another file system, or links refused (protected_hardlinks): a copy
            written = _copy(source, tmp)
            if written != expected():
                raise MirrorError(f"{source} changed while it was copied to {target}; rerun") from None
            action = "copied"
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return "replaced" if st is not None else action


def manifest_entry(outcome: Outcome, path: str, digest: str, source_digest: str) -> dict[str, Any]:
    """One file of the manifest (no folder of this machine is named in it).

    Keys: ``path`` (relative to ``DIR``: ``<condition>/<source>``), ``condition``, ``benchmark``, ``video_id``,
    ``source`` (the source video relative to its benchmark's folder of videos), ``source_sha256`` (of the whole
    source), ``sha256`` and ``size`` (of the file), ``transform``, ``params`` (the condition's, with the question's
    own where it has some), ``transform_version``, ``seed`` (the video's, null for ``orig``), ``cache_key`` (the
    cache entry's, "" for ``orig``: the source itself) and, for a condition declared through ``vdg_tasks.extend``,
    ``declared_source`` (the digest of its module).
    """
    job = outcome.job
    declared = CONDITIONS[job.condition]
    applied = declared.bound(**dict(job.bound)) if job.bound else declared
    identity = declared.transform == "identity"
    entry: dict[str, Any] = {
        "path": path,
        "condition": job.condition,
        "benchmark": job.benchmark,
        "video_id": job.video_id,
        "source": job.name,
        "source_sha256": source_digest,
        "sha256": digest,
        "size": os.stat(str(outcome.path)).st_size,
        "transform": declared.transform,
        "params": applied.params_dict(),
        "transform_version": TRANSFORM_VERSION,
        "seed": None if identity else video_seed(applied, job.video_id),
        "cache_key": "" if identity else Path(str(outcome.path)).stem,
    }
    if declared.source_digest:
        entry["declared_source"] = declared.source_digest
    return entry


def _sweep_temps(folder: Path) -> None:
    """Remove the files a killed run left being written under ``folder`` (their process is gone)."""
    for path in folder.rglob(".*.vdg-tmp-*"):
        match = _TEMP.match(path.name)
        if match and not pid_alive(int(match["pid"])) and not path.is_dir():
            path.unlink(missing_ok=True)


def _plan(outcomes: Iterable[Outcome]) -> tuple[dict[str, Outcome], list[tuple[Outcome, str]], int]:
    """(path under DIR -> the outcome whose file goes there, failures, jobs of text conditions)."""
    claims: dict[str, list[Outcome]] = {}
    failed: list[tuple[Outcome, str]] = []
    text = 0
    for o in outcomes:
        if o.error is not None or o.path is None:
            continue  # the run's own failure, listed by its summary
        condition = CONDITIONS[o.job.condition]
        if condition.modality != "video":
            text += 1
            continue
        if not o.job.name:
            why = "its source has no name in the benchmark's folder of videos (a folder of frames vdg encoded)"
            failed.append((o, why))
            continue
        try:
            folder = path_component(o.job.condition, "condition")
        except UntrustedPath as exc:
            failed.append((o, str(exc)))
            continue
        claims.setdefault(f"{folder}/{o.job.name}", []).append(o)
    chosen: dict[str, Outcome] = {}
    for path, group in claims.items():
        files = sorted({str(o.path) for o in group})
        if len(files) == 1:
            chosen[path] = group[0]
            continue
        sources = sorted({o.job.source for o in group})
        why = (
            f"{len(files)} different videos would be {path} (per-question parameters, or sources "
            f"{', '.join(sources[:3])}{' ...' if len(sources) > 3 else ''} of one name): not mirrored"
        )
        failed += [(o, why) for o in group]
    return chosen, failed, text


def mirror(outcomes: Iterable[Outcome], root: str | os.PathLike[str]) -> MirrorSummary:
    """Place every built video of ``outcomes`` at ``root/<condition>/<name>`` and update ``root/vdg-mirror.json``.

    A video that cannot be placed (no name, two videos for one name, a symbolic link in the way) is a failure of
    the summary, never an exception.

    Raises:
        MirrorError: ``root`` is not a folder, or its manifest is a symbolic link, not a regular file or not one
            vdg can merge into (``_earlier_entries``): checked before anything is placed.
        OSError: ``root`` cannot be created or written.
    """
    base = Path(root).expanduser()
    if base.exists() and not base.is_dir():
        raise MirrorError(f"--mirror {base}: not a folder")
    base.mkdir(parents=True, exist_ok=True)
    _earlier_entries(base / MANIFEST_NAME)  # a manifest that is a link is refused before anything is placed
    chosen, failed, text = _plan(outcomes)
    for condition in sorted({p.partition("/")[0] for p in chosen}):
        if os.path.isdir(base / condition) and not os.path.islink(base / condition):
            _sweep_temps(base / condition)
    placed: list[Placed] = []
    for path in sorted(chosen):
        o = chosen[path]
        entry = Path(str(o.path))
        try:
            action = place(base, path, entry, functools.partial(source_identity, entry))
            # read after placing: a new link changes the entry's ctime, which the digest memo follows (a rerun
            # finds it remembered); a fresh link is not read before
            digest = source_identity(entry)
            record = manifest_entry(o, path, digest, source_identity(o.job.source))
        except (UntrustedPath, MirrorError, OSError) as exc:
            failed.append((o, f"{type(exc).__name__}: {exc}"))
            continue
        placed.append(Placed(path, action, record))
    write_manifest(base, [p.entry for p in placed])
    return MirrorSummary(base, tuple(placed), tuple(failed), text)


#: The fields of a manifest entry and the JSON types each takes (``manifest_entry``); ``declared_source`` is
#: optional. ``bool`` is never taken for a number.
_ENTRY_FIELDS: dict[str, tuple[type, ...]] = {
    "path": (str,),
    "condition": (str,),
    "benchmark": (str,),
    "video_id": (str, int),
    "source": (str,),
    "source_sha256": (str,),
    "sha256": (str,),
    "size": (int,),
    "transform": (str,),
    "params": (dict,),
    "transform_version": (int, str),
    "seed": (int, type(None)),
    "cache_key": (str,),
}
_OPTIONAL_FIELDS: dict[str, tuple[type, ...]] = {"declared_source": (str,)}
#: The deepest nesting a manifest may have (the document, ``files``, an entry, ``params``, a list in it: 5).
_MAX_DEPTH = 16


def _depth(value: Any) -> int:
    """How deep arrays and objects nest in ``value`` (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


def _entry_problem(entry: Any) -> str:
    """Why ``entry`` is not a manifest entry ("" when it is one)."""
    if not isinstance(entry, dict):
        return f"is a {type(entry).__name__}, not an object"
    for name, kinds in {**_ENTRY_FIELDS, **_OPTIONAL_FIELDS}.items():
        if name not in entry:
            if name in _ENTRY_FIELDS:
                return f"has no {name!r}"
            continue
        value = entry[name]
        if isinstance(value, bool) or not isinstance(value, kinds):
            wanted = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
            return f"{name!r} is {type(value).__name__} {str(value)[:40]!r}, not {wanted}"
    return ""


def _earlier_entries(manifest: Path) -> list[dict[str, Any]]:
    """The entries of an earlier run's manifest ([] when there is none).

    A manifest vdg cannot read as its own is refused, never replaced: rewriting it would drop every entry it
    lists (files of earlier runs or of other shards sharing the folder).

    Raises:
        MirrorError: the manifest is a symbolic link or not a regular file, cannot be read, is not UTF-8 JSON,
            nests too deeply, is not an object of this format (``vdg_mirror``), or its ``files`` is not a list of
            entries with ``manifest_entry``'s fields and types (the first bad one named).
    """
    try:
        mode = os.lstat(manifest).st_mode
    except FileNotFoundError:
        return []
    if not stat.S_ISREG(mode):
        raise MirrorError(f"{manifest} is a symbolic link or not a regular file; remove it")
    try:
        document = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        problem = f"cannot be read as JSON ({type(exc).__name__}: {str(exc)[:200]})"
    except (RecursionError, MemoryError):
        problem = "nests arrays or objects too deeply"
    else:
        problem = _manifest_problem(document)
    if problem:
        raise MirrorError(
            f"{manifest} {problem}: it is not a manifest this vdg can merge into (format {MANIFEST_FORMAT}), and "
            "replacing it would lose its entries; move it aside (or remove it) and rerun"
        )
    return list(document["files"])


def _manifest_problem(document: Any) -> str:
    """Why ``document`` is not a manifest of ``MANIFEST_FORMAT`` ("" when it is one)."""
    if _depth(document) > _MAX_DEPTH:
        return f"nests arrays or objects more than {_MAX_DEPTH} levels deep"
    if not isinstance(document, dict):
        return f"holds a JSON {type(document).__name__}, not an object"
    found = document.get("vdg_mirror")
    if isinstance(found, bool) or found != MANIFEST_FORMAT:
        return f"has format (vdg_mirror) {found!r}, not {MANIFEST_FORMAT}"
    files = document.get("files")
    if not isinstance(files, list):
        return f"has files of type {type(files).__name__}, not a list"
    for index, entry in enumerate(files):
        problem = _entry_problem(entry)
        if problem:
            return f"files[{index}] {problem}"
    return ""


def _still_there(root: Path, relative: str) -> bool:
    try:
        check_id_path(relative)
    except UntrustedPath:
        return False
    try:
        return stat.S_ISREG(os.lstat(root / relative).st_mode)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return False
        raise


def write_manifest(root: Path, entries: Iterable[dict[str, Any]]) -> Path:
    """Merge ``entries`` into ``root/vdg-mirror.json`` (an earlier entry of the same path is replaced; one whose
    file is gone is dropped), sorted by path, written aside and renamed into place only when it changes. Runs
    sharing ``root`` (shards) take turns under a lock."""
    manifest = root / MANIFEST_NAME
    lock = root / f".{MANIFEST_NAME}.lock"
    if os.path.islink(lock):
        raise MirrorError(f"{lock} is a symbolic link (nothing is written through one); remove it")
    with FileLock(str(lock)):
        merged = {e["path"]: e for e in _earlier_entries(manifest) if _still_there(root, e["path"])}
        merged.update({e["path"]: e for e in entries})
        document = {
            "vdg_mirror": MANIFEST_FORMAT,
            "about": "Perturbed videos at <condition>/<source>: point a harness's video root at <condition>/. "
            "Every file but orig's is MP4 whatever its name; paths are relative to this folder.",
            "files": [merged[p] for p in sorted(merged)],
        }
        text = json.dumps(document, indent=1, sort_keys=False) + "\n"
        try:
            unchanged = manifest.read_text(encoding="utf-8") == text
        except (OSError, UnicodeDecodeError):
            unchanged = False
        if not unchanged:
            _write_text(manifest, text)
    _remove_idle_lock(lock)
    return manifest


def _write_text(target: Path, text: str) -> None:
    """Write ``text`` aside (never through a link) and rename it over ``target``."""
    tmp = target.with_name(f".{target.name}.vdg-tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _remove_idle_lock(lock: Path) -> None:
    """Unlink the manifest's lock file unless another run holds it (as ``materialize.remove_idle_locks``)."""
    try:
        with FileLock(str(lock), timeout=0):
            lock.unlink(missing_ok=True)
    except (Timeout, OSError):
        return
