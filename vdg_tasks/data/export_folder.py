"""The names an export folder is written and found by, shared by the export run (:mod:`vdg_tasks.jobs.export`),
its dataset card (:mod:`vdg_tasks.jobs.export_card`), its task YAMLs and the hooks that evaluate it: the fixed
names, the manifest, the link at ``export_root(name)`` where evaluation finds the folder, where a row's video lies
(:func:`video_file`), the canonical form of the rows (:func:`rows_sha256`), what the export publishes
(:func:`published`), and ``exported_video``, which hands a row its video only when the file is the one the export
wrote for that row, listed in the manifest byte for byte, inside an export whose rows are the ones it wrote.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from vdg_tasks.data.local_copies import VideoUnavailable
from vdg_tasks.vocabulary.untrusted import UntrustedPath, confined, path_component, redact_value

__all__ = [
    "EXPORTS_ENV",
    "MANIFEST",
    "REVISION_HEX",
    "SPLIT",
    "FILES",
    "ROWS",
    "ROW_KEY",
    "ExportError",
    "ExportUnverified",
    "check_link",
    "describe",
    "export_root",
    "exported_row_video",
    "exported_video",
    "link",
    "manifest_digests",
    "published",
    "read_manifest",
    "row_video_key",
    "rows_sha256",
    "video_file",
]

#: Overrides where exports are found at evaluation time (default ``$HF_HOME/vdg_exports``).
EXPORTS_ENV = "VDG_EXPORTS"
#: The one split of every config.
SPLIT = "test"
MANIFEST = "export.json"
#: The manifest's field listing every video of the export: ``{"videos/<ab>/<key>.mp4": "<sha256 of its bytes>"}``.
#: Evaluation shows a row its video only when the file's sha256 is the one listed here.
FILES = "files"
#: The manifest's field listing every data file: ``{"data/<task>.jsonl": "<sha256 of its rows in canonical form>"}``
#: (:func:`rows_sha256`, as the revision hashes them). Evaluation shows no row a video when a data file's rows are
#: not the listed ones (rows edited after the export), or when a data file is not listed.
ROWS = "rows"
#: The row field vdg adds to each benchmark doc.
ROW_KEY = "vdg_export"
#: Length of the revision id (hex digits of a sha256).
REVISION_HEX = 16


class ExportError(ValueError):
    """An export that cannot be written (an occupied output folder or link, an unreadable export, bad tasks)."""


def describe(exc: BaseException) -> str:
    """``<exception type>: <message>``, as an error row or a source that cannot be read records it."""
    return f"{type(exc).__name__}: {exc}"


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The export manifest (``export.json``) of ``folder``, or None when it is missing or unreadable."""
    try:
        manifest = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def manifest_digests(manifest: dict[str, Any]) -> dict[str, str]:
    """``{relative path: sha256}`` of the videos a manifest lists (its ``files``).

    Raises:
        ExportError: the manifest lists none (an export written before vdg listed them: export it again), or
            the listing is not a mapping of paths to 64 hex digits.
    """
    files = manifest.get(FILES)
    if not isinstance(files, dict):
        raise ExportError(
            f"the export's {MANIFEST} lists no sha256 of its videos ({FILES!r}); it was written by an older vdg: "
            "export it again"
        )
    out = {}
    for rel, digest in files.items():
        if not isinstance(digest, str) or len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise ExportError(f"the export's {MANIFEST} lists {rel!r} with {digest!r}, not a sha256")
        out[str(rel)] = digest
    return out


def video_file(key: str) -> str:
    """Where the export writes the video named ``key`` (relative to the export): ``videos/<key[:2]>/<key>.mp4``,
    ``""`` for no key. The one definition the export writes by and evaluation checks a row's ``video_file`` by."""
    return f"videos/{key[:2]}/{key}.mp4" if key else ""


def row_video_key(info: Mapping[str, Any]) -> str:
    """The name of the video an export row (``doc["vdg_export"]``) is shown: its ``visual_key`` (a vdg cache key),
    or, for a condition that shows the source as it is (no ``visual_key``), the first 32 hex digits of its
    ``provenance.source_digest``; ``""`` when the row names neither."""
    key = info.get("visual_key")
    if isinstance(key, str) and key:
        return key
    provenance = info.get("provenance")
    digest = provenance.get("source_digest") if isinstance(provenance, Mapping) else None
    return digest[:32] if isinstance(digest, str) else ""


def _canonical(row: Mapping[str, Any]) -> str:
    """A row in the form the revision and the manifest's ``rows`` hash: ``vdg_export.revision`` blanked, keys
    sorted, compact JSON."""
    info = row.get(ROW_KEY)
    blank = {**row, ROW_KEY: {**info, "revision": ""}} if isinstance(info, Mapping) else row
    return json.dumps(blank, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def rows_sha256(rows: Iterable[Mapping[str, Any]]) -> str:
    """sha256 of ``rows`` in canonical form, one per line (``json.dumps(row with vdg_export.revision "",
    sort_keys=True, ensure_ascii=False, separators=(",", ":"))`` + newline): a data file's entry in the revision
    and in the manifest's ``rows``."""
    h = hashlib.sha256()
    for row in rows:
        h.update((_canonical(row) + "\n").encode())
    return h.hexdigest()


#: An absolute path inside a text: ``/`` or ``~/`` at the start, after whitespace or after one of ``:=([{<,;"'```
#: (``path:/tmp/x``, ``cache_dir=/x``), running to whitespace, a quote or a bracket. ``//`` (a URL) is no path.
_ABSOLUTE = re.compile(r"(?<![^\s:=(\[{<,;\"'`])~?/(?![/\s])[^\s\"'`<>|,;()\[\]{}]*")


def _roots(roots: Iterable[str | os.PathLike[str]]) -> list[str]:
    out = set()
    for root in roots:
        text = os.fspath(root)
        if text:
            out |= {os.path.abspath(text), os.path.realpath(text)}
    return sorted((r.rstrip("/") for r in out if r.rstrip("/")), key=len, reverse=True)


def _shown_path(path: str, roots: Sequence[str]) -> str:
    """An absolute ``path`` as an export publishes it: relative to the export when under one of ``roots`` (the
    export itself by its folder's name), else its file name only."""
    body = path.rstrip(".:")
    tail = path[len(body) :]
    for root in roots:
        if body == root:
            return PurePosixPath(root).name + tail
        if body.startswith(root + "/"):
            return body[len(root) + 1 :] + tail
    return PurePosixPath(body).name + tail


def _published_str(text: str, roots: Sequence[str], whole: bool) -> str:
    if whole:
        is_path = text.startswith(("/", "~/")) and not text.startswith("//") and "\n" not in text
        return _shown_path(text, roots) if is_path else text
    return _ABSOLUTE.sub(lambda m: _shown_path(m[0], roots), text)


def _paths_published(value: Any, roots: Sequence[str], whole: bool) -> Any:
    if isinstance(value, str):
        return _published_str(value, roots, whole)
    if isinstance(value, Mapping):
        return {k: _paths_published(v, roots, whole) for k, v in value.items()}
    if isinstance(value, list):
        return [_paths_published(v, roots, whole) for v in value]
    if isinstance(value, tuple):
        return tuple(_paths_published(v, roots, whole) for v in value)
    return value


def published(value: Any, roots: Iterable[str | os.PathLike[str]] = (), *, whole: bool = False) -> Any:
    """``value`` (a string, or a mapping, list or tuple of them, nested) as an export publishes it (its rows,
    ``export.json``, ``README.md``): every absolute path names a file under one of ``roots`` (the export, its
    staging folder, its link) relative to it, any other by its file name alone; then every secret-looking setting
    is redacted (``redact_value``).

    ``whole=True`` is for a benchmark's own doc fields: only a string that is an absolute path as a whole (a
    source video's path, spaces and all) changes, and nothing is redacted (a question's text stays as it is).
    A path inside a text ends at whitespace: a folder name with a space leaves the words after it, relative.
    """
    shown = _paths_published(value, _roots(roots), whole)
    return shown if whole else redact_value(shown)


def check_link(link: Path, target: Path) -> None:
    """Refuse when ``link`` is a real file or folder other than ``target`` (a symbolic link is replaced)."""
    if link.is_symlink() or not link.exists():
        return
    if link.resolve() == target.resolve():
        return
    raise ExportError(
        f"{link} (where evaluation finds this export's videos) is a real folder or file, not a link to {target}; "
        f"move it away, set {EXPORTS_ENV} to another folder, or choose another export name"
    )


def link(link: Path, target: Path) -> None:
    """Point ``link`` at ``target`` (atomically replacing an older link); nothing to do when they are one folder."""
    check_link(link, target)
    if link.exists() and not link.is_symlink():
        return  # the export itself lives at the link's path
    if link.is_symlink() and os.readlink(link) == str(target):
        return
    link.parent.mkdir(parents=True, exist_ok=True)
    tmp = link.with_name(f".{link.name}.link-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    os.symlink(target, tmp, target_is_directory=True)
    os.replace(tmp, link)


def export_root(name: str) -> Path:
    """Where an export named ``name`` lives for evaluation: ``$VDG_EXPORTS/<name>``, else
    ``$HF_HOME/vdg_exports/<name>`` (where lmms-eval links a downloaded hub export, and ``vdg export``
    links a local one)."""
    base = os.environ.get("VDG_EXPORTS")
    if base:
        return Path(base).expanduser() / name
    return Path(os.environ.get("HF_HOME", "~/.cache/huggingface")).expanduser() / "vdg_exports" / name


class ExportUnverified(ValueError):
    """A file an export row names that is not, byte for byte, one of the videos the export's manifest lists."""


#: (manifest path, size, mtime_ns) -> {relative path: sha256} of the export's manifest (``export.json``, its
#: ``files``), read once per export and process. An export replaced in place under one name is read again when its
#: manifest changes (the key holds the manifest's size and mtime).
_MANIFEST_DIGESTS: dict[tuple[str, int, int], Mapping[str, str]] = {}
#: (st_dev, st_ino, size, mtime_ns, ctime_ns) -> sha256 of a file shown from an export: each file hashed once per
#: process and version. The ctime cannot be set from userland (``os.utime`` sets the mtime back, never the ctime),
#: and a file replaced by rename has another inode.
_FILE_DIGESTS: dict[tuple[int, int, int, int, int], str] = {}
#: (export root, resolved) -> the file keys of its manifest and data files when their rows were last found to be the
#: listed ones: the data files are read again only when one of them (or the manifest) changes.
_ROWS_CHECKED: dict[str, tuple[Any, ...]] = {}


def _file_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _manifest_digests(root: Path) -> Mapping[str, str]:
    """The sha256 of each video the export at ``root`` (resolved) lists in its manifest (cached per process).

    Raises:
        ExportUnverified: no readable manifest, or one that lists no file digests (an export written before
            vdg listed them: export it again).
    """
    manifest_path = root / MANIFEST
    try:
        st = manifest_path.stat()
    except OSError as exc:
        raise ExportUnverified(f"the export has no readable {MANIFEST} ({describe(exc)})") from None
    key = (str(manifest_path), st.st_size, st.st_mtime_ns)
    if key not in _MANIFEST_DIGESTS:
        manifest = read_manifest(root)
        if manifest is None:
            raise ExportUnverified(f"the export's {MANIFEST} cannot be read")
        try:
            _MANIFEST_DIGESTS[key] = manifest_digests(manifest)
        except ExportError as exc:
            raise ExportUnverified(str(exc)) from None
    return _MANIFEST_DIGESTS[key]


def _data_files(root: Path) -> dict[str, os.stat_result]:
    folder = root / "data"
    if not folder.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p.stat() for p in sorted(folder.glob("*.jsonl"))}


def _check_rows(root: Path) -> None:
    """Check that each ``data/*.jsonl`` of the export at ``root`` (resolved) is listed in its manifest's ``rows``
    with the sha256 of its rows; read again only when the manifest or a data file changes (per process).

    Raises:
        ExportUnverified: the manifest lists no ``rows`` (an older export: export it again), a data file is not
            listed or is missing, or its rows are not the listed ones (edited after the export).
    """
    try:
        st = (root / MANIFEST).stat()
        found = _data_files(root)
    except OSError as exc:
        raise ExportUnverified(f"the export's {MANIFEST} or data files cannot be read ({describe(exc)})") from None
    state = (_file_key(st), tuple((rel, _file_key(s)) for rel, s in found.items()))
    if _ROWS_CHECKED.get(str(root)) == state:
        return
    manifest = read_manifest(root)
    listed = manifest.get(ROWS) if manifest is not None else None
    if not isinstance(listed, dict):
        raise ExportUnverified(
            f"the export's {MANIFEST} lists no sha256 of its data files ({ROWS!r}); it was written by an older vdg: "
            "export it again"
        )
    unlisted = sorted(set(found) - set(listed))
    if unlisted:
        raise ExportUnverified(f"the export's {MANIFEST} lists no sha256 for {', '.join(unlisted)} (not its rows)")
    for rel, digest in sorted(listed.items()):
        if rel not in found:
            raise ExportUnverified(f"the export's data file {rel} (listed in its {MANIFEST}) is missing")
        try:
            with open(root / rel, encoding="utf-8") as f:
                actual = rows_sha256(json.loads(line) for line in f if line.strip())
        except (OSError, ValueError) as exc:
            raise ExportUnverified(f"the export's data file {rel} cannot be read ({describe(exc)})") from None
        if actual != digest:
            raise ExportUnverified(
                f"{rel} has rows with sha256 {actual[:16]}..., the export's manifest lists {str(digest)[:16]}... "
                "(its rows were edited after the export)"
            )
    _ROWS_CHECKED[str(root)] = state


def _file_sha256(path: Path) -> str:
    """sha256 of ``path``'s bytes, hashed once per process for a given (device, inode, size, mtime, ctime).

    A cache hit is judged by ``stat(path)``; a miss hashes from one open descriptor and keys the digest by
    ``fstat`` of that same descriptor, so the digest is always that of the file version its key names.
    """
    digest = _FILE_DIGESTS.get(_file_key(path.stat()))
    if digest is not None:
        return digest
    h = hashlib.sha256()
    with open(path, "rb") as f:
        before = os.fstat(f.fileno())
        while chunk := f.read(1 << 20):
            h.update(chunk)
        after = os.fstat(f.fileno())
    digest = h.hexdigest()
    if _file_key(before) == _file_key(after):  # not written to while it was read
        _FILE_DIGESTS[_file_key(after)] = digest
    return digest


def _store(resolved_root: Path) -> Path:
    """Where an export's files may resolve: the export itself, or, for a Hugging Face snapshot
    (``.../datasets--<owner>--<name>/snapshots/<revision>``, which lmms-eval links ``export_root(name)`` to), its
    repository folder, whose ``blobs/`` the snapshot's files link into."""
    if resolved_root.parent.name == "snapshots" and resolved_root.parent.parent.name.startswith("datasets--"):
        return resolved_root.parent.parent
    return resolved_root


def exported_video(name: str, video_file: Any, key: str | None = None) -> Path:
    """The file an export row names (``vdg_export.video_file``), when it is one of the export's own videos.

    Checked, in order: ``name`` is one safe path component; ``video_file`` resolves inside ``export_root(name)``
    (``confined``); when ``key`` (:func:`row_video_key` of the row) is given, ``video_file`` is the path the export
    writes for it (:func:`video_file`), so a row is never shown another row's video; the file exists; every
    ``data/*.jsonl`` holds the rows the manifest lists (``rows``, checked once per export and process while the
    files stay as they are); the file's sha256 is the one the manifest lists (``files``).

    An export downloaded from the hub is a snapshot whose files link into its repository's ``blobs/``: those links
    may resolve there (``_store``), as spelled they must still stay inside the export.

    Time of check: the path returned is opened later, by the model's own loader. A file replaced between this
    check and that open is not caught here (a process that can write the export while it is evaluated can show
    the model anything); one replaced before a later question's check is, as the cache key holds the file's
    inode and ctime.

    Raises:
        UntrustedPath: the export name is not one safe path component, or the file is absolute, climbs out
            with ``..`` or resolves (through a symlink) outside the export.
        VideoUnavailable: no such file.
        ExportUnverified: ``video_file`` is not the file of ``key``; the export's rows are not the ones it
            wrote; the export lists no sha256 for the file, or the file's sha256 is not the one listed (a file
            swapped or edited after the export).
    """
    path_component(name, "export name")
    root = export_root(name)
    if not isinstance(video_file, str):
        raise UntrustedPath(str(video_file), root, f"it is a {type(video_file).__name__}, not a path", "video_file")
    resolved_root = root.resolve()
    path = confined(root, video_file, "video_file", within=_store(resolved_root))
    if key is not None and (not key or video_file != _video_file_of(key)):
        expected = _video_file_of(key) if key else "none: the row names no visual_key or source digest"
        raise ExportUnverified(
            f"video_file {video_file!r} is not the file the export writes for this row's video ({expected})"
        )
    if not path.is_file():
        raise VideoUnavailable(f"{path} does not exist or is not a file")
    _check_rows(resolved_root)
    relative = PurePosixPath(video_file).as_posix()  # as spelled: a hub snapshot's file resolves into its blobs
    listed = _manifest_digests(resolved_root).get(relative)
    if listed is None:
        raise ExportUnverified(f"the export's manifest lists no sha256 for {relative} (not one of its videos)")
    actual = _file_sha256(path)
    if actual != listed:
        raise ExportUnverified(
            f"{relative} has sha256 {actual[:16]}..., the export's manifest lists "
            f"{listed[:16]}... (the file was replaced or edited after the export)"
        )
    return path


_video_file_of = video_file  # exported_video's parameter shadows the module function


def exported_row_video(info: Mapping[str, Any]) -> Path:
    """The video of an export row (``doc["vdg_export"]``): :func:`exported_video` of its ``name`` and
    ``video_file``, bound to the row's own video (:func:`row_video_key`).

    Raises:
        as :func:`exported_video`.
    """
    return exported_video(str(info.get("name", "")), info.get("video_file"), key=row_video_key(info))
