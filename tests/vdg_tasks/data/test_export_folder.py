"""vdg_tasks.data.export_folder: the names an export folder is written and found by, reading its manifest,
and the link where evaluation finds it (refused over a real folder or file, replaced when it is a link)."""

from __future__ import annotations

import json
import os

import pytest

from vdg_tasks.data.export_folder import (
    EXPORTS_ENV,
    MANIFEST,
    REVISION_HEX,
    SPLIT,
    ExportError,
    check_link,
    describe,
    link,
    read_manifest,
)


def test_the_fixed_names():
    assert (EXPORTS_ENV, SPLIT, MANIFEST, REVISION_HEX) == ("VDG_EXPORTS", "test", "export.json", 16)
    assert issubclass(ExportError, ValueError)  # the CLI reports every ValueError as one line


def test_describe_names_the_exception_type_and_message():
    assert describe(FileNotFoundError("no such file: x.mp4")) == "FileNotFoundError: no such file: x.mp4"
    assert describe(KeyError("clip")) == "KeyError: 'clip'"
    assert describe(RuntimeError()) == "RuntimeError: "


# --- the manifest --------------------------------------------------------------------------------------


def test_read_manifest_returns_the_manifest_of_a_folder(tmp_path):
    (tmp_path / "export.json").write_text(json.dumps({"name": "x", "tasks": ["a_vdg_black"]}))
    assert read_manifest(tmp_path) == {"name": "x", "tasks": ["a_vdg_black"]}
    assert read_manifest(str(tmp_path)) == {"name": "x", "tasks": ["a_vdg_black"]}  # a str folder too


@pytest.mark.parametrize(
    "content",
    [
        None,  # no manifest
        "{not json",  # unreadable
        '["a", "list"]',  # JSON, but not an object
        "",
    ],
)
def test_a_missing_or_unreadable_manifest_is_none(tmp_path, content):
    if content is not None:
        (tmp_path / "export.json").write_text(content)
    assert read_manifest(tmp_path) is None


def test_a_manifest_path_that_is_a_folder_is_none(tmp_path):
    (tmp_path / "export.json").mkdir()
    assert read_manifest(tmp_path) is None
    assert read_manifest(tmp_path / "no-such-folder") is None


# --- the link ------------------------------------------------------------------------------------------


def test_check_link_accepts_nothing_a_link_or_the_target_itself(tmp_path):
    target = tmp_path / "export"
    target.mkdir()
    check_link(tmp_path / "absent", target)  # nothing there yet
    other = tmp_path / "other"
    other.mkdir()
    (tmp_path / "old-link").symlink_to(other)
    check_link(tmp_path / "old-link", target)  # a link elsewhere is replaced, not refused
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    check_link(tmp_path / "dangling", target)
    check_link(target, target)  # the export lives at the link's path


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_check_link_refuses_a_real_folder_or_file_naming_the_fixes(tmp_path, kind):
    target = tmp_path / "export"
    target.mkdir()
    occupied = tmp_path / "vdg_exports" / "name"
    if kind == "folder":
        occupied.mkdir(parents=True)
    else:
        occupied.parent.mkdir()
        occupied.write_text("mine")
    with pytest.raises(ExportError, match="is a real folder or file, not a link to") as info:
        check_link(occupied, target)
    message = str(info.value)
    assert message.startswith(f"{occupied} (where evaluation finds this export's videos)")
    assert f"not a link to {target}; move it away, set VDG_EXPORTS to another folder" in message


def test_link_points_a_new_link_at_the_target_making_its_parents(tmp_path):
    target = tmp_path / "export"
    target.mkdir()
    where = tmp_path / "hf" / "vdg_exports" / "name"
    link(where, target)
    assert where.is_symlink() and os.readlink(where) == str(target)
    assert not list(where.parent.glob(".*"))  # no temporary link left


def test_link_replaces_a_link_to_an_older_export(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    where = tmp_path / "name"
    where.symlink_to(old)
    link(where, new)
    assert os.readlink(where) == str(new)
    assert old.is_dir()  # the older export itself stays


def test_link_leaves_a_link_that_already_points_at_the_target(tmp_path):
    target = tmp_path / "export"
    target.mkdir()
    where = tmp_path / "name"
    where.symlink_to(target)
    before = os.lstat(where).st_ino
    link(where, target)
    assert os.lstat(where).st_ino == before  # not replaced


def test_link_does_nothing_when_the_export_lives_at_the_link_s_path(tmp_path):
    target = tmp_path / "name"
    target.mkdir()
    (target / "export.json").write_text("{}")
    link(target, target)
    assert target.is_dir() and not target.is_symlink() and (target / "export.json").read_text() == "{}"


def test_link_refuses_a_foreign_folder_and_leaves_it(tmp_path):
    target = tmp_path / "export"
    target.mkdir()
    foreign = tmp_path / "name"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match="is a real folder or file"):
        link(foreign, target)
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"] and not foreign.is_symlink()


# --- what an export publishes -------------------------------------------------------------------------


def test_published_text_names_files_relative_to_the_export_or_by_name_and_hides_secrets():
    from vdg_tasks.data.export_folder import published

    roots = ["/data/exports/x", "/data/.x.partial-7"]
    error = "VideoUnavailable: video path:/tmp/hf_token=SECRET_DIR/data/videos/s000.mp4 does not exist"
    assert published(error, roots) == "VideoUnavailable: video path:s000.mp4 does not exist"
    assert published("bad /data/exports/x/videos/ab/k.mp4.", roots) == "bad videos/ab/k.mp4."
    assert published("in '/data/.x.partial-7/data/t.jsonl'", roots) == "in 'data/t.jsonl'"
    assert published("folder /data/exports/x", roots) == "folder x"
    assert published("cache_dir=~/secret/c (see https://u:pw@host/a/b)", roots) == (
        "cache_dir=c (see https://<redacted>@host/a/b)"
    )
    assert published("1/2 and/or a / b, videos/ab/k.mp4", roots) == "1/2 and/or a / b, videos/ab/k.mp4"
    nested = {"api_key": "sk-1", "params": ["/home/me/v.mp4", {"path": "/x/y/z.json"}], "n": 3}
    assert published(nested, roots) == {"api_key": "<redacted>", "params": ["v.mp4", {"path": "z.json"}], "n": 3}


def test_published_doc_fields_change_only_a_whole_absolute_path():
    from vdg_tasks.data.export_folder import published

    doc = {"video": "/tmp/hf_token=SECRET/My Videos/s0.mp4", "question": "Is the password: shown in /dev?", "n": 1}
    assert published(doc, ["/out"], whole=True) == {
        "video": "s0.mp4",
        "question": "Is the password: shown in /dev?",  # the benchmark's own text is kept as it is
        "n": 1,
    }
