"""``vdg register``: vdg's tasks where lmms-eval finds them with no ``--include_path``.

lmms-eval 0.7.3 builds its task index by walking its own package folder ``lmms_eval/tasks/`` (then each
``--include_path``) with ``os.walk`` and reading every ``*.yaml`` it meets: a YAML it cannot open makes
the whole index, every task, fail. Symlinked folders are listed but not entered, and a dangling symlink
is listed as a file, so only a name ending in ``.yaml`` is ever opened. An ``include:`` is read relative
to the YAML's path as walked, and a relative ``dataset_kwargs.data_files`` path is made absolute against
that folder only when the file exists there (``lmms_eval.utils._resolve_local_data_files``).

So :func:`register` COPIES ``yaml_tasks/`` into ``<lmms_eval>/tasks/vdg/``: a real folder per folder
holding task configs, a copy of each file in it (leaf YAMLs, ``_*`` templates, READMEs), and an absolute
symlink per top-level entry a relative ``data_files`` path names (``data`` -> the benchmark's own
``data/``), made even before that exists so ``vdg synth`` may run after ``vdg register``. Copies never
dangle: ``pip uninstall vdg`` before ``vdg register --undo`` leaves orphan copies that lmms-eval still
indexes, and that fail only when a vdg task is requested (their ``!function`` hooks import ``vdg_tasks``).
A data link left dangling is never opened while indexing, only when its own task loads its data.

The copies do not follow edits or upgrades: rerun ``vdg register`` after installing another version.
:func:`problems` (``vdg register --check``) compares the copies with the installed package, and
:func:`stale_registration_warning` answers cheaply whether the registration is out of date.
Names indexed from lmms-eval's own folder win over the same names in an ``--include_path``.

A manifest (``.vdg-register.json``, not a ``.yaml``: never indexed) lists every path placed, with each
copy's sha256 and a digest of the whole plan. A rerun rewrites exactly the changed copies, adds new ones
and removes the ones no longer generated; :func:`unregister` removes exactly what the manifest lists.
Neither deletes a path the manifest does not list, and neither overwrites or removes a copy edited since
it was written (its sha256 differs from the manifest's) unless ``force``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

#: The folder made inside lmms-eval's task folder.
FOLDER = "vdg"
#: What was placed, relative to ``FOLDER``: path -> entry (see :data:`Entry`), plus the plan's digest.
MANIFEST = ".vdg-register.json"
#: The manifest format: 1 linked every file (entries were link targets, or null for a folder).
MANIFEST_VERSION = 2
#: lmms-eval resolves relative data_files only for these builders (lmms_eval.utils._LOCAL_BUILDERS).
_LOCAL_BUILDERS = frozenset({"csv", "json", "parquet", "text", "pandas", "arrow"})
_SKIPPED_DIRS = frozenset({"__pycache__", ".ipynb_checkpoints"})
_TMP_SUFFIX = ".vdg-tmp"

#: ``{"kind": "dir"}``, ``{"kind": "copy", "sha256": ...}`` or ``{"kind": "link", "target": ...}``; an
#: entry of a manifest written mid-run may hold ``"was"``: the entry it replaces, also accepted as vdg's.
Entry = dict[str, Any]
Entries = dict[str, Entry]


class RegisterError(Exception):
    """The tasks cannot be registered or unregistered; the message names the path."""


@dataclass
class Summary:
    """What a :func:`register` or :func:`unregister` call did, in ``folder``."""

    folder: Path
    source: Path | None = None
    tasks: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    kept: int = 0
    #: Links to data not written yet (e.g. before ``vdg synth``), relative to ``folder``.
    missing_data: list[str] = field(default_factory=list)
    #: Paths under ``folder`` that vdg did not place (or a folder still holding them), left there.
    foreign: list[str] = field(default_factory=list)


def lmms_eval_tasks_dir() -> Path:
    """The folder lmms-eval indexes tasks from with no ``--include_path`` (``<lmms_eval>/tasks``)."""
    spec = importlib.util.find_spec("lmms_eval")
    if spec is None or spec.origin is None:
        raise RegisterError("lmms-eval is not installed in this environment")
    return Path(spec.origin).resolve().parent / "tasks"


def default_yaml_root() -> Path:
    """The installed package's ``yaml_tasks/`` (``vdg_tasks.lmms.yamlgen.YAML_ROOT``, without importing vdg's hooks)."""
    return Path(__file__).resolve().parents[2] / "yaml_tasks"


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Reads a task config with its ``!function`` tags as None."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def _parse(data: bytes) -> Any:
    """The config in ``data`` when it may name data files (most leaves do not), else None."""
    if b"data_files" not in data:
        return None
    try:
        return yaml.load(data.decode("utf-8"), Loader=_Loader)
    except (UnicodeDecodeError, yaml.YAMLError):
        return None


def _data_roots(config: Any) -> set[str]:
    """First components of the relative ``data_files`` paths lmms-eval resolves against the YAML's folder."""
    if not isinstance(config, dict) or config.get("dataset_path") not in _LOCAL_BUILDERS:
        return set()
    kwargs = config.get("dataset_kwargs")
    stack, roots = [kwargs.get("data_files") if isinstance(kwargs, dict) else None], set()
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and value and "://" not in value and not os.path.isabs(value):
            parts = [p for p in PurePosixPath(value).parts if p != "."]
            if parts and parts[0] != "..":
                roots.add(parts[0])
    return roots


def _is_config(name: str) -> bool:
    return name.endswith(".yaml") or name.startswith("_")  # leaf tasks and templates (_default_template_yaml)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def plan(yaml_root: Path) -> Entries:
    """What mirrors ``yaml_root``, by path relative to the mirror: folders, copies (with the source's
    sha256) and data links (absolute targets), parents before children."""
    yaml_root = Path(yaml_root).resolve()
    folders: dict[PurePosixPath, Entries] = {}  # folder -> its files and links
    with_tasks: set[PurePosixPath] = set()
    for root, dirs, files in os.walk(yaml_root):
        here, rel = Path(root), PurePosixPath(Path(root).relative_to(yaml_root).as_posix())
        files = sorted(f for f in files if not f.startswith(".") and not f.endswith((".py", ".pyc")))
        placed: Entries = {}
        roots: set[str] = set()
        for name in files:
            data = (here / name).read_bytes()
            placed[name] = {"kind": "copy", "sha256": _sha256(data)}
            if _is_config(name):
                roots |= _data_roots(_parse(data))
        dirs[:] = sorted(d for d in dirs if d not in roots and d not in _SKIPPED_DIRS and not d.startswith("."))
        for name in roots:
            placed[name] = {"kind": "link", "target": str(here / name)}
        folders[rel] = placed
        if any(f.endswith(".yaml") for f in files):
            with_tasks.add(rel)
    kept = {PurePosixPath(".")} | {p for rel in with_tasks for p in (rel, *rel.parents)}
    entries: Entries = {}
    for rel in sorted(kept, key=lambda p: p.parts):
        if rel.parts:
            entries[rel.as_posix()] = {"kind": "dir"}
        for name in sorted(folders[rel]):
            entries[(rel / name).as_posix()] = folders[rel][name]
    return entries


def digest(entries: Entries) -> str:
    """One sha256 for a whole :func:`plan`: equal digests, equal registrations."""
    clean = {rel: {k: v for k, v in entry.items() if k != "was"} for rel, entry in entries.items()}
    return _sha256(json.dumps(clean, sort_keys=True, separators=(",", ":")).encode())


def _entry(value: Any) -> Entry:
    """A manifest entry, from either format (version 1: null for a folder, else a link target)."""
    if value is None:
        return {"kind": "dir"}
    if isinstance(value, str):
        return {"kind": "link", "target": value}
    if isinstance(value, dict) and value.get("kind") in ("dir", "copy", "link"):
        return value
    raise ValueError(f"unknown entry {value!r}")


def _read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of ``folder``, entries normalized: None when there is no such folder (or an empty one)."""
    path = folder / MANIFEST
    if not path.is_file():
        if folder.is_symlink() or (folder.exists() and (not folder.is_dir() or any(folder.iterdir()))):
            raise RegisterError(f"{folder} exists and was not made by `vdg register`: move it away first")
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or not isinstance(manifest.get("entries"), dict):
            raise ValueError("no entries")
        manifest["entries"] = {str(rel): _entry(value) for rel, value in manifest["entries"].items()}
    except (OSError, ValueError) as exc:
        raise RegisterError(f"{path} is not a readable vdg register manifest ({exc})") from None
    return manifest


def _write_manifest(folder: Path, source: Path, entries: Entries) -> None:
    tmp = folder / (MANIFEST + ".tmp")
    doc = {
        "made_by": "vdg register",
        "version": MANIFEST_VERSION,
        "source": str(source),
        "digest": digest(entries),
        "entries": entries,
    }
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(folder / MANIFEST)


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK | os.X_OK)


def _check_writable(path: Path) -> None:
    if not _writable(path):
        raise RegisterError(
            f"{path} is not writable: run `vdg register` as the owner of this lmms-eval install "
            '(or use `lmms-eval --include_path "$(vdg tasks-path)"`)'
        )


def _deepest_first(paths) -> list[str]:
    return sorted(paths, key=lambda p: PurePosixPath(p).parts, reverse=True)


def _on_disk(path: Path) -> Entry | None:
    """What is at ``path`` now, as an entry (``{"kind": "other"}`` for anything else), None for nothing."""
    if path.is_symlink():
        return {"kind": "link", "target": os.readlink(path)}
    if path.is_dir():
        return {"kind": "dir"}
    if path.is_file():
        return {"kind": "copy", "sha256": _sha256(path.read_bytes())}
    return {"kind": "other"} if path.exists() else None


def _same(disk: Entry | None, entry: Entry | None) -> bool:
    if disk is None or entry is None or disk["kind"] != entry["kind"]:
        return False
    return disk.get("sha256") == entry.get("sha256") and disk.get("target") == entry.get("target")


def _ours(disk: Entry | None, recorded: Entry | None) -> bool:
    """Whether ``disk`` is what vdg placed at a path the manifest lists as ``recorded``."""
    return recorded is not None and (_same(disk, recorded) or _same(disk, recorded.get("was")))


def _replaceable(disk: Entry | None, recorded: Entry | None) -> bool:
    """Whether vdg may replace or remove ``disk`` without ``force``: what it placed, or any link where it
    placed a link (a link holds no content)."""
    if recorded is not None and disk is not None and disk["kind"] == recorded["kind"] == "link":
        return True
    return _ours(disk, recorded)


def _remove(path: Path, disk: Entry) -> bool:
    """Remove a file or link, or a folder when empty; False when a folder still holds something."""
    if disk["kind"] == "dir":
        try:
            path.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            return False
        return True
    path.unlink()
    return True


def _write_copy(source: Path, path: Path) -> str:
    """Copy ``source`` to ``path`` through a temporary file (a reader never sees half a YAML); its sha256."""
    data = source.read_bytes()
    tmp = path.with_name(f".{path.name}{_TMP_SUFFIX}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # never left behind: not in the manifest, undo would not remove it
        raise
    return _sha256(data)


def _refusal(folder: Path, edited: list[str], in_the_way: list[str]) -> RegisterError:
    parts = []
    if edited:
        names = ", ".join(str(folder / rel) for rel in edited)
        parts.append(f"changed since `vdg register` wrote them (rerun with --force to replace them): {names}")
    if in_the_way:
        names = ", ".join(str(folder / rel) for rel in in_the_way)
        parts.append(f"in the way and not placed by `vdg register` (move them away): {names}")
    return RegisterError("; ".join(parts))


def register(yaml_root: Path, tasks_dir: Path, *, force: bool = False) -> Summary:
    """Copy ``yaml_root`` into ``tasks_dir/vdg`` (see the module doc); a rerun brings it up to date.

    Nothing is written when a path the manifest lists was changed since (unless ``force``: replaced), or a
    path it does not list is in the way of a copy (never replaced).

    Raises:
        RegisterError: ``tasks_dir`` missing or not writable, or a path in the way, named in the message.
    """
    yaml_root, tasks_dir = Path(yaml_root).resolve(), Path(tasks_dir)
    folder = tasks_dir / FOLDER
    if not yaml_root.is_dir():
        raise RegisterError(f"{yaml_root}: no such task folder")
    if not tasks_dir.is_dir():
        raise RegisterError(f"{tasks_dir}: lmms-eval's task folder does not exist")
    old: Entries = (_read_manifest(folder) or {"entries": {}})["entries"]
    _check_writable(folder if folder.is_dir() else tasks_dir)
    want = plan(yaml_root)
    summary = Summary(folder=folder, source=yaml_root, tasks=sum(p.endswith(".yaml") for p in want))

    # Decide everything before writing anything: a refusal leaves the folder as it was.
    disk = {rel: _on_disk(folder / rel) for rel in {*old, *want}}
    edited, in_the_way, write, drop = [], [], [], []
    for rel in _deepest_first(set(old) - set(want)):
        if disk[rel] is None:
            continue
        if _replaceable(disk[rel], old[rel]) or (force and disk[rel]["kind"] in ("copy", "link")):
            drop.append(rel)
        elif old[rel]["kind"] != "dir":
            edited.append(rel)
    for rel, entry in want.items():
        if _same(disk[rel], entry):
            summary.kept += 1
        elif disk[rel] is None:
            write.append(rel)
        elif _replaceable(disk[rel], old.get(rel)) and disk[rel]["kind"] != "dir":
            write.append(rel)
        elif rel in old and old[rel]["kind"] != "dir" and disk[rel]["kind"] in ("copy", "link"):
            (write if force else edited).append(rel)
        else:
            in_the_way.append(rel)
    if edited or in_the_way:
        raise _refusal(folder, sorted(edited), sorted(in_the_way))

    try:
        folder.mkdir(exist_ok=True)
        # an interrupted run still undoes cleanly: each path listed, the old content accepted as well
        interim = dict(old)
        for rel, entry in want.items():
            interim[rel] = {**entry, "was": old[rel]} if rel in old and old[rel] != entry else entry
        _write_manifest(folder, yaml_root, interim)
        for rel in drop:
            if _remove(folder / rel, disk[rel]):
                summary.removed += 1
            else:
                summary.foreign.append(rel)
        for rel in write:
            path, entry = folder / rel, want[rel]
            if disk[rel] is not None and (entry["kind"] != "copy" or disk[rel]["kind"] == "link"):
                path.unlink()  # a copy replaces a file in place; a link or folder needs the path free
            if entry["kind"] == "dir":
                path.mkdir()
            elif entry["kind"] == "link":
                os.symlink(entry["target"], path)
            else:
                entry["sha256"] = _write_copy(yaml_root / rel, path)
            if disk[rel] is None:
                summary.added += 1
            else:
                summary.updated += 1
        _write_manifest(folder, yaml_root, want)
    except OSError as exc:
        raise RegisterError(f"cannot write {folder}: {exc}") from exc
    summary.foreign.sort()
    summary.missing_data = [
        rel for rel, entry in want.items() if entry["kind"] == "link" and not os.path.exists(folder / rel)
    ]
    return summary


def unregister(tasks_dir: Path, *, force: bool = False) -> Summary:
    """Remove what :func:`register` placed in ``tasks_dir/vdg``, and the folder when nothing else is left.

    Nothing is removed when a copy was changed since it was written, unless ``force``.

    Raises:
        RegisterError: the folder is not writable, is there but was not made by vdg, or holds changed copies.
    """
    folder = Path(tasks_dir) / FOLDER
    summary = Summary(folder=folder)
    manifest = _read_manifest(folder)
    if manifest is None:
        return summary
    _check_writable(folder)
    entries: Entries = manifest["entries"]
    summary.source = Path(manifest.get("source", ""))
    disk = {rel: _on_disk(folder / rel) for rel in entries}
    edited = sorted(
        rel
        for rel, entry in entries.items()
        if disk[rel] is not None and entry["kind"] != "dir" and not _replaceable(disk[rel], entry)
    )
    if edited and not force:
        raise _refusal(folder, edited, [])
    try:
        for rel in _deepest_first(entries):
            now = disk[rel]
            if now is None:
                continue
            if entries[rel]["kind"] == "dir" and now["kind"] != "dir":
                summary.foreign.append(rel)
            elif now["kind"] == "other" or not _remove(folder / rel, now):
                summary.foreign.append(rel)
            else:
                summary.removed += 1
        (folder / MANIFEST).unlink()
        try:
            folder.rmdir()
        except OSError:
            summary.foreign.extend(p.relative_to(folder).as_posix() for p in folder.rglob("*"))
    except OSError as exc:
        raise RegisterError(f"cannot write {folder}: {exc}") from exc
    summary.foreign = sorted(set(summary.foreign))
    return summary


def problems(yaml_root: Path, tasks_dir: Path) -> list[str]:
    """Why ``tasks_dir/vdg`` does not mirror ``yaml_root`` now (empty: it does), one line each.

    Compares what is on disk with what :func:`register` would place now: a copy that differs, is missing
    or is no longer generated, a data link that is missing or points elsewhere (dangling or not). A data
    link to the right place whose data is not written yet (before ``vdg synth``) is no problem.
    """
    yaml_root = Path(yaml_root).resolve()
    folder = Path(tasks_dir) / FOLDER
    manifest = _read_manifest(folder)
    if manifest is None:
        return [f"vdg's tasks are not registered in {tasks_dir}: run `vdg register`"]
    entries: Entries = manifest["entries"]
    want = plan(yaml_root)
    out, fix, force = [], "; run `vdg register`", "; run `vdg register --force` to replace it"
    for rel, entry in want.items():
        path, recorded = folder / rel, entries.get(rel)
        disk = _on_disk(path)
        if entry["kind"] == "dir" or _same(disk, entry):
            continue
        if entry["kind"] == "link":
            if disk is None:
                out.append(f"{path}: data link missing (to {entry['target']}){fix}")
            elif disk["kind"] != "link":
                fix_it = force if recorded else ": move it away"
                out.append(f"{path}: not the data link to {entry['target']}{fix_it}")
            else:
                dangling = "" if os.path.exists(path) else " (dangling)"
                out.append(f"{path}: links to {disk['target']}{dangling}, not {entry['target']}{fix}")
        elif disk is None:
            out.append(f"{path}: missing ({yaml_root / rel} has it){fix}")
        elif recorded is None:
            out.append(f"{path}: not placed by `vdg register`, in the way of {yaml_root / rel}: move it away")
        elif disk["kind"] == "link" and _replaceable(disk, recorded):
            out.append(f"{path}: a link made by an older `vdg register`, not a copy{fix}")
        elif _ours(disk, recorded):
            out.append(f"{path}: out of date (differs from {yaml_root / rel}){fix}")
        else:
            out.append(f"{path}: changed since `vdg register` (differs from {yaml_root / rel}){force}")
    for rel, entry in entries.items():
        if rel not in want and entry["kind"] != "dir" and _on_disk(folder / rel) is not None:
            extra = _replaceable(_on_disk(folder / rel), entry)
            out.append(f"{folder / rel}: extra, no longer in {yaml_root}" + (fix if extra else force))
    return out


def registered(tasks_dir: Path | None = None) -> Path | None:
    """The vdg folder of ``tasks_dir`` (default: this environment's lmms-eval) when it holds a registration."""
    try:
        folder = Path(tasks_dir if tasks_dir is not None else lmms_eval_tasks_dir()) / FOLDER
    except RegisterError:
        return None
    return folder if (folder / MANIFEST).is_file() else None


def stale_registration_warning(yaml_root: Path | None = None, tasks_dir: Path | None = None) -> str | None:
    """One line when vdg is registered in this environment's lmms-eval and out of date, else None.

    Compares the manifest's digest with the digest of :func:`plan` of the installed ``yaml_tasks/`` (read
    and hashed once, a few milliseconds); copies edited in place are :func:`problems`' business. Never raises.
    """
    try:
        folder = registered(tasks_dir)
        if folder is None:
            return None
        recorded = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("digest")
        root = Path(yaml_root) if yaml_root is not None else default_yaml_root()
        if recorded == digest(plan(root)):
            return None
    except (OSError, ValueError, AttributeError):
        return None
    return f"vdg's tasks registered in {folder} are out of date with {root.resolve()}: run `vdg register`"
