"""The names an export folder is written and found by, shared by the export run (:mod:`vdg_tasks.jobs.export`),
its dataset card (:mod:`vdg_tasks.jobs.export_card`) and its task YAMLs: the fixed names, the manifest, and the
link at ``export_root(name)`` where evaluation finds the folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = [
    "EXPORTS_ENV",
    "MANIFEST",
    "REVISION_HEX",
    "SPLIT",
    "ExportError",
    "check_link",
    "describe",
    "link",
    "read_manifest",
]

#: Overrides where exports are found at evaluation time (default ``$HF_HOME/vdg_exports``).
EXPORTS_ENV = "VDG_EXPORTS"
#: The one split of every config.
SPLIT = "test"
MANIFEST = "export.json"
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
