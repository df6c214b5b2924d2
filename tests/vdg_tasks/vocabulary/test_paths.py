"""Where vdg keeps what it builds (vdg_tasks.vocabulary.paths): the cache folder from ``$VDG_CACHE`` or the user's
cache dir, the writability check, and the ``CacheUnwritable`` error that names the folder and the fix.
"""

from __future__ import annotations

import errno
import os
import pickle
import re
import sys
from pathlib import Path

import pytest

from vdg_tasks.vocabulary.paths import NO_ROOM, CacheUnwritable, cache_dir, ensure_writable

#: The expected default folders follow the XDG layout platformdirs uses on Linux.
LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG layout of the user cache dir")


@pytest.fixture
def no_cache_variable(monkeypatch, tmp_path):
    """No ``$VDG_CACHE``; the XDG cache home (where the user cache dir lies on Linux) in ``tmp_path``."""
    monkeypatch.delenv("VDG_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg"


def test_cache_is_the_vdg_cache_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


def test_a_tilde_in_the_cache_variable_is_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VDG_CACHE", "~/vdg-cache")
    assert cache_dir() == tmp_path / "home" / "vdg-cache"


@LINUX
def test_without_the_variable_the_cache_is_vdg_in_the_user_cache_dir(no_cache_variable):
    # XDG Base Directory spec: the user cache dir is $XDG_CACHE_HOME; platformdirs appends the app name.
    assert cache_dir() == no_cache_variable / "vdg"


@LINUX
def test_an_empty_cache_variable_counts_as_unset(monkeypatch, no_cache_variable):
    monkeypatch.setenv("VDG_CACHE", "")
    assert cache_dir() == no_cache_variable / "vdg"


@LINUX
def test_without_any_variable_the_cache_is_under_home_dot_cache(monkeypatch, tmp_path):
    # XDG Base Directory spec: with $XDG_CACHE_HOME unset the cache home is $HOME/.cache.
    monkeypatch.delenv("VDG_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir() == tmp_path / ".cache" / "vdg"


def test_ensure_writable_creates_nested_folders_and_leaves_no_probe(tmp_path):
    folder = tmp_path / "a" / "b" / "c"
    assert ensure_writable(folder) == folder
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_ensure_writable_accepts_a_string_and_an_existing_folder(tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    assert ensure_writable(str(tmp_path)) == tmp_path
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_ensure_writable_defaults_to_the_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    assert ensure_writable() == tmp_path / "cache"
    assert (tmp_path / "cache").is_dir()


def test_a_file_where_the_folder_should_be_is_cache_unwritable(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    with pytest.raises(CacheUnwritable, match=re.escape(f"the vdg cache folder {blocker} is not writable (")) as info:
        ensure_writable(blocker)
    assert info.value.folder == info.value.path == blocker
    assert info.value.errno == errno.EEXIST  # mkdir(exist_ok=True) on a file: "File exists"
    assert isinstance(info.value.cause, FileExistsError)
    assert str(info.value).endswith("; set VDG_CACHE to a writable folder.")


def test_a_folder_under_a_file_is_cache_unwritable(tmp_path):
    (tmp_path / "file").write_text("x")
    folder = tmp_path / "file" / "cache"
    with pytest.raises(CacheUnwritable, match=re.escape(f"the vdg cache folder {folder} is not writable")) as info:
        ensure_writable(folder)
    assert info.value.errno == errno.ENOTDIR


def test_a_full_disk_while_probing_says_the_cache_has_no_room(monkeypatch, tmp_path):
    def disk_full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", disk_full)
    with pytest.raises(CacheUnwritable) as info:
        ensure_writable(tmp_path)
    probe = info.value.path
    assert probe.parent == tmp_path and probe.name.startswith(".write-test.tmp-") and probe.suffix == ".json"
    assert str(info.value) == (
        f"cannot write {probe}: No space left on device. The vdg cache {tmp_path} has no room; "
        "free space there or set VDG_CACHE to a folder on a disk with room."
    )
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(probe)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_probe_write_that_left_a_file_removes_it(monkeypatch, tmp_path):
    real_write_bytes = Path.write_bytes

    def half_written(self, data):
        real_write_bytes(self, data[:1])
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(Path, "write_bytes", half_written)
    with pytest.raises(CacheUnwritable, match=re.escape("is not writable (Input/output error: ")):
        ensure_writable(tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("code", sorted(NO_ROOM))
def test_every_no_room_errno_gives_the_no_room_message(tmp_path, code):
    exc = CacheUnwritable(tmp_path, tmp_path / "f", OSError(code, os.strerror(code)))
    assert str(exc) == (
        f"cannot write {tmp_path / 'f'}: {os.strerror(code)}. The vdg cache {tmp_path} has no room; "
        "free space there or set VDG_CACHE to a folder on a disk with room."
    )
    assert exc.errno == code


def test_no_room_errnos_are_full_disk_quota_and_file_too_large():
    assert NO_ROOM == {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


@pytest.mark.parametrize(
    ("cause", "reason"),
    [
        (None, "not writable"),  # no cause at all
        (ValueError("bad name"), "bad name"),  # no strerror: the cause's text
        (OSError("plain"), "plain"),  # an OSError built without errno/strerror
        (PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
    ],
)
def test_the_reason_is_the_causes_strerror_else_its_text(tmp_path, cause, reason):
    exc = CacheUnwritable(str(tmp_path), str(tmp_path / "p"), cause)
    assert str(exc) == (
        f"the vdg cache folder {tmp_path} is not writable ({reason}: {tmp_path / 'p'}); "
        "set VDG_CACHE to a writable folder."
    )
    assert exc.folder == tmp_path and exc.path == tmp_path / "p" and exc.cause is cause
    assert exc.errno == getattr(cause, "errno", None)


def test_cache_unwritable_is_an_os_error_and_survives_pickling(tmp_path):
    exc = CacheUnwritable(tmp_path, tmp_path / "x.json", OSError(errno.ENOSPC, "No space left on device"))
    assert isinstance(exc, OSError)
    copy = pickle.loads(pickle.dumps(exc))
    assert type(copy) is CacheUnwritable
    assert (copy.folder, copy.path, copy.errno, str(copy)) == (exc.folder, exc.path, exc.errno, str(exc))
    assert copy.cause is None  # the cause itself does not cross processes
