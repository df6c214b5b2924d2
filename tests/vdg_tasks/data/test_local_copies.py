"""A video path that is not a video says why: missing, a folder, a loop of links, not a regular file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vdg_tasks.lmms.dataset_fields import VideoUnavailable, require_video_path, video_path_problem


def test_each_kind_of_bad_path_is_named(tmp_path: Path) -> None:
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"\0" * 16)
    folder = tmp_path / "frames"
    folder.mkdir()
    loop_a, loop_b = tmp_path / "a.mp4", tmp_path / "b.mp4"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    broken = tmp_path / "broken.mp4"
    broken.symlink_to(tmp_path / "gone.mp4")
    fifo = tmp_path / "pipe.mp4"
    os.mkfifo(fifo)
    assert video_path_problem(video) is None
    assert video_path_problem(folder) is None  # a folder of frames: the hooks decide
    assert video_path_problem(tmp_path / "none.mp4") == "does not exist"
    assert "too many levels of symbolic links" in video_path_problem(loop_a)
    assert video_path_problem(broken) == "is a symbolic link to a missing file"
    assert video_path_problem(fifo).startswith("is not a regular file")
    with pytest.raises(VideoUnavailable, match=r"video path:.*a\.mp4 is a loop of symbolic links"):
        require_video_path(loop_a)


def test_a_benchmark_lookup_names_the_problem(tmp_path: Path) -> None:
    from vdg_tasks.data.benchmarks import _local_source

    loop = tmp_path / "loop.mp4"
    loop.symlink_to(loop)
    with pytest.raises(VideoUnavailable, match="too many levels of symbolic links"):
        _local_source({"video": str(loop)})
    with pytest.raises(VideoUnavailable, match="does not exist"):
        _local_source({"video": str(tmp_path / "none.mp4")})


def test_a_local_folder_that_cannot_be_looked_for_is_named_not_a_bare_os_error(tmp_path, monkeypatch):
    from vdg_tasks.data.local_copies import LOCAL_DATA_ENV, LocalCopyError, LocalLayout, local_dir

    root = tmp_path / ("x" * 300)  # longer than any file name may be
    monkeypatch.setenv(LOCAL_DATA_ENV, str(root))
    layout = LocalLayout("videomme", ("videomme",), lambda doc: "v.mp4")
    with pytest.raises(OSError):  # what Path.is_dir raises for it, unhandled
        (root / "videomme").is_dir()
    with pytest.raises(
        LocalCopyError, match=rf"{LOCAL_DATA_ENV}=.*: cannot look for .*videomme \(File name too long\)"
    ):
        local_dir(layout)
