"""An export's rows are input from outside: a row is shown its video only when ``video_file`` resolves inside
the export and the file's sha256 is the one the export's manifest lists (``vdg_tasks.data.export_folder``, read
by ``vdg_tasks.lmms.hooks``); anything else
is an error row naming why, never a raise. A question under a condition that shows a video and was shown none is
never ``ok``. What an export publishes (README.md, export.json) names no folder of the machine and no secret.

The hostile rows are made here: absolute paths, ``..``, a symlink out, a file the manifest does not list, a video
swapped after the export (also after the first one was hashed), an export name that is a path, a non-string path.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

import pytest

from vdg_tasks.data import export_folder
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.data.export_folder import (
    FILES,
    ROWS,
    ExportError,
    ExportUnverified,
    exported_row_video,
    exported_video,
    manifest_digests,
    rows_sha256,
    video_file,
)
from vdg_tasks.jobs.export_card import card
from vdg_tasks.lmms import hooks
from vdg_tasks.vocabulary.conditions import CONDITIONS
from vdg_tasks.vocabulary.record import RECORD_KEY

NAME = "trusted-x"
GOOD = "videos/ab/abgood.mp4"
DATA = "data/vdgsynth_vdg_black.jsonl"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def exported(tmp_path, monkeypatch):
    """A minimal export at ``$VDG_EXPORTS/<NAME>``: one listed video, an unlisted file, and a private file
    outside the export (with a symlink to it from inside)."""
    monkeypatch.setenv("VDG_EXPORTS", str(tmp_path / "exports"))
    export_folder._MANIFEST_DIGESTS.clear()
    export_folder._FILE_DIGESTS.clear()
    export_folder._ROWS_CHECKED.clear()
    root = tmp_path / "exports" / NAME
    (root / "videos" / "ab").mkdir(parents=True)
    good = root / GOOD
    good.write_bytes(b"the exported video")
    (root / "videos" / "ab" / "unlisted.mp4").write_bytes(b"not in the manifest")
    (root / "videos" / "ab" / "abunlisted.mp4").write_bytes(b"not in the manifest either")
    private = tmp_path / "private.mp4"
    private.write_bytes(b"a private video outside the export")
    os.symlink(private, root / "videos" / "ab" / "link.mp4")
    rows = [{"question_id": "q1", "vdg_export": info(GOOD, visual_key="abgood")}]
    (root / "data").mkdir()
    (root / DATA).write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = {"name": NAME, "revision": "r", FILES: {GOOD: _sha(good.read_bytes())}, ROWS: {DATA: rows_sha256(rows)}}
    (root / "export.json").write_text(json.dumps(manifest))
    return {"root": root, "good": good, "private": private, "rows": rows}


def info(video_file, name: str = NAME, **extra) -> dict:
    """An export row naming ``video_file``; its ``visual_key`` is the file's stem, so a row names the file the
    export writes for its own key wherever the file lies where that key's video would (``videos/<key[:2]>/``)."""
    key = os.path.splitext(os.path.basename(video_file))[0] if isinstance(video_file, str) else "k"
    return {"name": name, "revision": "r", "video_file": video_file, "error": None, "visual_key": key, **extra}


def test_a_listed_video_with_its_digest_is_shown(exported):
    visual = hooks._exported_visual(info(GOOD))
    assert visual.error is None and visual.path == exported["good"].resolve()


@pytest.mark.parametrize(
    ("video_file", "reason"),
    [
        ("ABSOLUTE", "it is absolute"),
        ("../../private.mp4", "climbs out"),
        ("videos/../../../private.mp4", "climbs out"),
        ("videos/ab/link.mp4", "symlink out"),
        ("videos/ab/abunlisted.mp4", "lists no sha256"),
        ("videos/ab/unlisted.mp4", "not the file the export writes for this row"),
        ("export.json", "not the file the export writes for this row"),
        ("videos/ab/abmissing.mp4", "VideoUnavailable"),
        ("/etc/passwd", "it is absolute"),
        ("\\\\server\\share\\x.mp4", "it is absolute"),
        (["videos", "ab"], "not a path"),
    ],
)
def test_a_row_pointing_anywhere_else_is_an_error_naming_why(exported, video_file, reason):
    target = str(exported["private"]) if video_file == "ABSOLUTE" else video_file
    visual = hooks._exported_visual(info(target))
    assert visual.path is None and visual.error is not None and reason in visual.error, visual.error
    assert visual.provenance["export"] == {"name": NAME, "revision": "r"}


@pytest.mark.parametrize("name", ["../exports/" + NAME, "/tmp", "..", ".hidden", "a/b", ""])
def test_an_export_name_that_is_a_path_is_an_error(exported, name):
    visual = hooks._exported_visual(info(GOOD, name=name))
    assert visual.path is None and "refused" in (visual.error or "") or "no video_file" in (visual.error or "")


def test_a_video_swapped_after_the_export_is_an_error_even_after_it_was_hashed(exported):
    assert hooks._exported_visual(info(GOOD)).error is None  # hashed and cached
    exported["good"].write_bytes(b"another valid video, same path")
    os.utime(exported["good"], ns=(1, 1))  # a new mtime (and size): hashed again
    visual = hooks._exported_visual(info(GOOD))
    assert visual.path is None and "ExportUnverified" in visual.error and "replaced or edited" in visual.error


def test_a_file_is_hashed_once_per_process_and_the_manifest_read_once(exported, monkeypatch):
    opened: list[str] = []
    real_open = open

    def counting_open(path, *args, **kwargs):
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    for _ in range(5):
        assert hooks._exported_visual(info(GOOD)).error is None
    assert opened.count(str(exported["good"].resolve())) == 1
    assert opened.count(str((exported["root"] / DATA).resolve())) == 1
    assert len(export_folder._MANIFEST_DIGESTS) == 1


def test_a_same_size_edit_with_its_mtime_put_back_is_caught_after_the_file_was_hashed(exported):
    """The per-process digest cache is keyed on the file's device, inode, size, mtime and ctime: ``os.utime`` puts
    the mtime back, never the ctime (review 5)."""
    good = exported["good"]
    assert exported_video(NAME, GOOD) == good.resolve()  # hashed and cached
    st = good.stat()
    time.sleep(0.05)  # past the filesystem's timestamp granularity (a clock tick)
    good.write_bytes(b"the EDITED video!!")
    assert good.stat().st_size == st.st_size
    os.utime(good, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(ExportUnverified, match="replaced or edited"):
        exported_video(NAME, GOOD)


def test_a_file_replaced_by_rename_with_its_size_and_mtime_is_caught(exported):
    good = exported["good"]
    assert exported_video(NAME, GOOD) == good.resolve()
    st = good.stat()
    time.sleep(0.05)
    new = good.with_name("new.tmp")
    new.write_bytes(b"the OTHER video!!!")
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(new, good)
    assert good.stat().st_size == st.st_size and good.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.raises(ExportUnverified, match="replaced or edited"):
        exported_video(NAME, GOOD)


def test_a_row_is_shown_only_the_video_the_export_wrote_for_its_own_key(exported):
    """``video_file`` must be the path the export writes for the row's ``visual_key`` (or, for a source shown as it
    is, the first 32 hex digits of its source digest): a listed video of another row is refused (review 7)."""
    other = "videos/cd/cdother.mp4"
    (exported["root"] / "videos" / "cd").mkdir()
    (exported["root"] / other).write_bytes(b"the orig video")
    manifest = json.loads((exported["root"] / "export.json").read_text())
    manifest[FILES][other] = _sha(b"the orig video")
    (exported["root"] / "export.json").write_text(json.dumps(manifest))
    assert video_file("abgood") == GOOD and video_file("") == ""
    assert exported_video(NAME, GOOD, key="abgood") == exported["good"].resolve()
    assert exported_row_video(info(GOOD, visual_key="abgood")) == exported["good"].resolve()
    with pytest.raises(ExportUnverified, match="not the file the export writes for this row"):
        exported_video(NAME, other, key="abgood")
    with pytest.raises(ExportUnverified, match="not the file the export writes for this row"):
        exported_row_video(info(other, visual_key="abgood"))
    source = "cd" + "0" * 62  # a source shown as it is: no visual_key, named by its digest
    with pytest.raises(ExportUnverified, match="not the file the export writes for this row"):
        exported_row_video(info(other, visual_key="", provenance={"source_digest": source}))
    with pytest.raises(ExportUnverified, match="not the file the export writes for this row"):
        exported_row_video(info(other, visual_key=""))  # no key at all: nothing it may be shown


def test_edited_rows_are_caught_by_the_data_files_sha256(exported):
    """The manifest lists the sha256 of each ``data/*.jsonl`` (its rows in canonical form): rows edited after the
    export (or a data file added) make every row of that export an error, checked once per export and process."""
    assert hooks._exported_visual(info(GOOD)).error is None
    data = exported["root"] / DATA
    time.sleep(0.05)
    data.write_text(json.dumps({"question_id": "q1", "vdg_export": info("videos/cd/cdother.mp4")}) + "\n")
    visual = hooks._exported_visual(info(GOOD))
    assert visual.path is None and "ExportUnverified" in visual.error and DATA in visual.error, visual.error
    assert "rows were edited" in visual.error
    data.write_text("".join(json.dumps(r) + "\n" for r in exported["rows"]))
    assert hooks._exported_visual(info(GOOD)).error is None  # restored: the same rows, in any JSON layout
    (exported["root"] / "data" / "extra.jsonl").write_text("{}\n")
    with pytest.raises(ExportUnverified, match="data/extra.jsonl"):
        exported_video(NAME, GOOD)


def test_an_export_without_digests_is_an_error_not_trusted(exported):
    (exported["root"] / "export.json").write_text(json.dumps({"name": NAME, "revision": "r"}))
    visual = hooks._exported_visual(info(GOOD))
    assert visual.path is None and "export it again" in visual.error
    with pytest.raises(ExportError, match="not a sha256"):
        manifest_digests({FILES: {GOOD: "../../x"}})


# -- through the hooks lmms-eval calls --------------------------------------------------------------


def _doc(exported_info: dict) -> dict:
    return {
        "question_id": "q1",
        "videoID": "v1",
        "video": "/nonexistent/v1.mp4",
        "task_type": "t",
        "duration": "short",
        "question": "What colour?",
        "options": ["A. red", "B. green", "C. blue", "D. white"],
        "answer": "A",
        "vdg_export": exported_info,
    }


def _hook(condition: str, kind: str):
    return getattr(hooks, hooks.hook_name("vdgsynth", condition, kind))


def test_process_results_logs_a_hostile_row_as_an_error_and_doc_to_visual_never_shows_it(exported, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(exported["root"].parent.parent / "cache"))
    doc = _doc(info(str(exported["private"])))
    shown = _hook("orig", "doc_to_visual")(doc)
    assert shown and str(exported["private"]) not in shown and "private" not in shown[0]
    out = _hook("orig", "process_results")(doc, ["The answer is A."])
    record = out[RECORD_KEY]
    assert record["status"] == "error" and "it is absolute" in record["error"] and record.get("score") is None
    good = _hook("orig", "process_results")(_doc(info(GOOD)), ["The answer is A."])[RECORD_KEY]
    assert good["status"] == "ok" and good["correct"] is True


def test_a_video_condition_that_showed_no_video_is_never_ok(monkeypatch):
    """A Visual with no file and no frames under a condition that shows a video is an error row."""
    monkeypatch.setattr(hooks, "resolve_visual", lambda *a: hooks.Visual(None, "", None))
    doc = {k: v for k, v in _doc({}).items() if k != "vdg_export"}
    for condition in ("orig", "black", "shuffled"):
        assert CONDITIONS[condition].shows_video
        record = _hook(condition, "process_results")(doc, ["The answer is A."])[RECORD_KEY]
        assert record["status"] == "error" and record["error"].startswith("NoVideoShown"), record
    monkeypatch.setattr(hooks, "resolve_visual", lambda *a: hooks.Visual(None, "", None, frames=()))
    record = _hook("orig", "process_results")(doc, ["A"])[RECORD_KEY]
    assert record["status"] == "error" and record["error"].startswith("NoVideoShown")


def test_the_hooks_never_raise_on_any_hostile_row(exported):
    for hostile in (None, 7, {"a": 1}, "../" * 40 + "etc/passwd", "\x00", "videos/ab/link.mp4"):
        for name in (NAME, None, 3, "../x"):
            doc = _doc(info(hostile, name=name))  # type: ignore[arg-type]
            _hook("orig", "doc_to_visual")(doc)
            record = _hook("orig", "process_results")(doc, ["A"])[RECORD_KEY]
            assert record["status"] == "error"
    assert "vdgsynth" in BENCHMARKS


# -- what an export publishes -----------------------------------------------------------------------


def test_the_card_redacts_secret_settings(tmp_path):
    manifest = {
        "name": "n",
        "revision": "r" * 16,
        "tasks": ["vdgsynth_vdg_orig"],
        "benchmarks": ["vdgsynth"],
        "conditions": {"orig": {"description": "d", "params": {}}},
        "n_rows": {"vdgsynth_vdg_orig": 1},
        "n_errors_per_task": {"vdgsynth_vdg_orig": 0},
        "transform_version": 1,
        "built_by": {"vdg": "1"},
        "sources": {"vdgsynth": "org/ds loaded with api_key=sk-SECRET123,token=hf_SECRET https://u:pw@host/x"},
        "question_sets": {},
    }
    text = card(manifest, tmp_path / "out")
    assert "sk-SECRET123" not in text and "hf_SECRET" not in text and "u:pw@" not in text
    assert "<redacted>" in text and str(tmp_path) not in text


def test_an_export_downloaded_from_the_hub_reads_through_its_snapshots_links(tmp_path, monkeypatch):
    """lmms-eval links ``export_root(name)`` to the hub snapshot, whose files are links into the repository's
    ``blobs/``: those resolve outside the snapshot but inside its repository, and are shown; a link out of the
    repository is still refused."""
    monkeypatch.setenv("VDG_EXPORTS", str(tmp_path / "exports"))
    for memo in (export_folder._MANIFEST_DIGESTS, export_folder._FILE_DIGESTS, export_folder._ROWS_CHECKED):
        memo.clear()
    repo = tmp_path / "hub" / "datasets--someone--vdg-x"
    snapshot = repo / "snapshots" / "0123abcd"
    blobs = repo / "blobs"
    blobs.mkdir(parents=True)

    def stored(relative: str, data: bytes) -> None:
        blob = blobs / _sha(data)
        blob.write_bytes(data)
        link = snapshot / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(blob, link.parent), link)

    rows = [{"question_id": "q1", "vdg_export": info(GOOD)}]
    stored(GOOD, b"the exported video")
    stored(DATA, "".join(json.dumps(r) + "\n" for r in rows).encode())
    manifest = {"name": NAME, FILES: {GOOD: _sha(b"the exported video")}, ROWS: {DATA: rows_sha256(rows)}}
    stored("export.json", json.dumps(manifest).encode())
    private = tmp_path / "abprivate.mp4"
    private.write_bytes(b"a private video")
    os.symlink(private, snapshot / "videos" / "ab" / "abprivate.mp4")
    (tmp_path / "exports").mkdir()
    os.symlink(snapshot, tmp_path / "exports" / NAME)  # as lmms-eval's create_link does
    assert (snapshot / GOOD).resolve().parent == blobs
    shown = hooks._exported_visual(info(GOOD))
    assert shown.error is None and shown.path.read_bytes() == b"the exported video"
    refused = hooks._exported_visual(info("videos/ab/abprivate.mp4"))
    assert refused.path is None and "symlink out" in refused.error
