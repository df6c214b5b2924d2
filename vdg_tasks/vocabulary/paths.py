"""Where vdg keeps what it builds: the cache folder (``$VDG_CACHE`` or the user's cache dir), shared by the
video cache (``vdg_tasks.perturb.cache``) and the judge's cache (``postprocess.judge``).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

#: errno values meaning "the cache cannot take this file" (not "the source is bad").
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


class CacheUnwritable(OSError):
    """The cache folder cannot be created or written (read-only, not a folder, full disk).

    Attributes:
        folder: the cache folder (``$VDG_CACHE`` or the user cache dir).
        path: the file or folder whose creation failed.
        errno: the underlying error number, when there is one.
    """

    def __init__(self, folder: str | os.PathLike[str], path: str | os.PathLike[str], cause: BaseException | None):
        self.folder = Path(folder)
        self.path = Path(path)
        code = getattr(cause, "errno", None)
        reason = getattr(cause, "strerror", None) or (str(cause) if cause is not None else "not writable")
        if code in NO_ROOM:
            message = (
                f"cannot write {self.path}: {reason}. The vdg cache {self.folder} has no room; "
                "free space there or set VDG_CACHE to a folder on a disk with room."
            )
        else:
            message = (
                f"the vdg cache folder {self.folder} is not writable ({reason}: {self.path}); "
                "set VDG_CACHE to a writable folder."
            )
        super().__init__(code, message, str(self.path))
        self.cause = cause

    def __str__(self) -> str:
        return str(self.strerror)

    def __reduce__(self):  # picklable across processes despite the custom signature
        return (_rebuild_unwritable, (str(self.folder), str(self.path), self.errno, self.strerror))


def _rebuild_unwritable(folder: str, path: str, code: int | None, message: str) -> CacheUnwritable:
    exc = CacheUnwritable(folder, path, None)
    exc.errno, exc.strerror = code, message
    return exc


def cache_dir() -> Path:
    """Where materialized videos live: ``$VDG_CACHE`` or ``<user cache dir>/vdg``."""
    env = os.environ.get("VDG_CACHE")
    if env:
        return Path(env).expanduser()
    # platformdirs (with tempfile, shutil; ~0.02 s) only with no cache variable set, not on vdg --help
    import platformdirs

    return Path(platformdirs.user_cache_dir("vdg"))


def ensure_writable(folder: Path | None = None) -> Path:
    """Create the cache folder if needed and check a file can be written there; return it.

    Raises:
        CacheUnwritable: naming the folder and the fix (set ``VDG_CACHE``). Note that root bypasses
            permission bits: for root only a read-only filesystem, a full disk or a path that is
            not a folder fails here.
    """
    folder = cache_dir() if folder is None else Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheUnwritable(folder, folder, exc) from exc
    probe = folder / f".write-test.tmp-{os.getpid()}.json"
    try:
        probe.write_bytes(b"{}")
    except OSError as exc:
        raise CacheUnwritable(folder, probe, exc) from exc
    finally:
        probe.unlink(missing_ok=True)
    return folder
