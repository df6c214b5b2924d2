"""`vdg materialize --mirror DIR`: each condition's videos under DIR/<condition>/ with the source's own name.

Fast: placing one file (link, copy, kept, replaced), what is refused (a name leaving DIR, a symbolic link in DIR),
the source names the plan gives, the manifest and a rerun that writes nothing, on tiny byte files. Slow: a vdgsynth
benchmark and a local Video-MME copy (one video a Matroska file) mirrored through the CLI, every file decoded and
compared by sha256 with its condition's cache entry, and nothing outside DIR written.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

import av
import numpy as np
import pandas as pd
import pytest

import vdg_tasks.jobs.mirror as mirror_module
from tests.helpers.videos import decode_all, write_indexed_source
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.jobs.materialize import Job, Outcome, source_name
from vdg_tasks.jobs.mirror import MANIFEST_NAME, MirrorError, mirror, place
from vdg_tasks.vocabulary.conditions import TRANSFORM_VERSION
from vdg_tasks.vocabulary.untrusted import UntrustedPath


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tree(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple[int, int, bytes]]:
    """Every file and link under ``root`` (outside ``skip``): (size, mtime_ns, content or link target)."""
    out = {}
    for path in sorted(root.rglob("*")):
        if any(path == s or s in path.parents for s in skip) or (path.is_dir() and not path.is_symlink()):
            continue
        st = os.lstat(path)
        body = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
        out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns, body)
    return out


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


# -- placing one file ------------------------------------------------------------------------------


def test_a_file_is_linked_then_kept_by_a_rerun(tmp_path):
    entry = tmp_path / "entry.mp4"
    entry.write_bytes(b"perturbed video bytes")
    digest = hashlib.sha256(b"perturbed video bytes").hexdigest()
    root = tmp_path / "mirror"
    assert place(root, "sub/dir/x.mkv", entry, digest) == "linked"
    target = root / "sub" / "dir" / "x.mkv"
    assert target.read_bytes() == b"perturbed video bytes" and os.path.samefile(target, entry)
    before = os.stat(target).st_mtime_ns
    assert place(root, "sub/dir/x.mkv", entry, digest) == "kept"
    assert os.stat(target).st_mtime_ns == before
    assert sorted(p.name for p in (root / "sub" / "dir").iterdir()) == ["x.mkv"]  # no temporary file left


def test_a_copy_when_links_fail_and_an_equal_copy_is_kept(tmp_path, monkeypatch):
    entry = tmp_path / "entry.mp4"
    entry.write_bytes(b"abc" * 1000)
    digest = hashlib.sha256(b"abc" * 1000).hexdigest()

    def cross_device(src, dst, *args, **kwargs):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(mirror_module.os, "link", cross_device)
    assert place(tmp_path / "m", "x.mp4", entry, digest) == "copied"
    target = tmp_path / "m" / "x.mp4"
    assert not os.path.samefile(target, entry) and sha256(target) == digest
    assert place(tmp_path / "m", "x.mp4", entry, digest) == "kept"  # another inode, the same content


def test_a_copy_that_does_not_match_the_digest_is_refused(tmp_path, monkeypatch):
    entry = tmp_path / "entry.mp4"
    entry.write_bytes(b"changed meanwhile")
    monkeypatch.setattr(mirror_module.os, "link", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.EXDEV, "x")))
    with pytest.raises(MirrorError, match="changed while it was copied"):
        place(tmp_path / "m", "x.mp4", entry, "0" * 64)
    assert list((tmp_path / "m").iterdir()) == []


def test_a_different_file_is_replaced_atomically(tmp_path):
    entry = tmp_path / "entry.mp4"
    entry.write_bytes(b"new")
    (tmp_path / "m").mkdir()
    old = tmp_path / "m" / "x.mp4"
    old.write_bytes(b"old!")
    assert place(tmp_path / "m", "x.mp4", entry, hashlib.sha256(b"new").hexdigest()) == "replaced"
    assert old.read_bytes() == b"new"


@pytest.mark.parametrize(
    ("relative", "reason"),
    [
        ("/tmp/x.mp4", "absolute"),
        ("../x.mp4", "climbs out"),
        ("a/../../x.mp4", "climbs out"),
        ("a//x.mp4", "empty"),
        ("", "empty"),
        ("a/.mp4", "empty"),
    ],
)
def test_a_name_leaving_the_folder_is_refused_and_nothing_is_written(tmp_path, relative, reason):
    entry = tmp_path / "entry.mp4"
    entry.write_bytes(b"v")
    (tmp_path / "m").mkdir()
    with pytest.raises(UntrustedPath, match=reason):
        place(tmp_path / "m", relative, entry, hashlib.sha256(b"v").hexdigest())
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["entry.mp4", "m"]


def test_symbolic_links_in_the_mirror_are_refused_never_followed(tmp_path):
    entry = tmp_path / "entry.mp4"
    entry.write_bytes(b"v")
    digest = hashlib.sha256(b"v").hexdigest()
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "x.mp4"
    victim.write_bytes(b"precious")
    root = tmp_path / "m"
    root.mkdir()
    (root / "black").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UntrustedPath, match="is a symbolic link"):
        place(root, "black/x.mp4", entry, digest)
    (root / "crf28").mkdir()
    (root / "crf28" / "x.mp4").symlink_to(victim)
    with pytest.raises(UntrustedPath, match="a symlink out"):
        place(root, "crf28/x.mp4", entry, digest)
    inside = root / "crf28" / "kept.mp4"
    inside.write_bytes(b"inside")
    (root / "crf28" / "y.mp4").symlink_to(inside)  # a link within the mirror is refused all the same
    with pytest.raises(UntrustedPath, match="is a symbolic link"):
        place(root, "crf28/y.mp4", entry, digest)
    assert inside.read_bytes() == b"inside" and (root / "crf28" / "y.mp4").is_symlink()
    assert victim.read_bytes() == b"precious" and sorted(p.name for p in outside.iterdir()) == ["x.mp4"]
    (root / "jpeg10").write_bytes(b"a file where a folder belongs")
    with pytest.raises(MirrorError, match="not a folder"):
        place(root, "jpeg10/x.mp4", entry, digest)


# -- source names ----------------------------------------------------------------------------------


def test_source_names_follow_the_benchmarks_folder_of_videos(tmp_path, monkeypatch):
    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)
    synth, videomme = BENCHMARKS["vdgsynth"], BENCHMARKS["videomme"]
    assert source_name(synth, {"video": "/d/videos/s000.mp4"}, "/d/videos/s000.mp4") == "s000.mp4"
    # where lmms-eval keeps it: the file its lookup found, .MP4 or .mkv included
    assert source_name(videomme, {"videoID": "abc"}, "/hf/videomme/data/abc.MP4") == "abc.MP4"
    assert source_name(videomme, {"videoID": "abc"}, "/cache/frame-folders/0f3e.mp4") == ""
    assert source_name(videomme, {"videoID": "../abc"}, "/hf/videomme/abc.mp4") == ""  # an id climbing out
    # a local copy: the path under <copy>/videos
    (tmp_path / "videomme" / "videos" / "sub").mkdir(parents=True)
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path))
    found = str(tmp_path / "videomme" / "videos" / "sub" / "abc.mkv")
    assert source_name(videomme, {"videoID": "sub/abc"}, found) == "sub/abc.mkv"
    assert source_name(videomme, {"videoID": "abc"}, str(tmp_path / "elsewhere" / "abc.mp4")) == ""


# -- the mirror and its manifest -------------------------------------------------------------------


def _outcome(tmp_path: Path, condition: str, video: str, content: bytes, name: str | None = None) -> Outcome:
    source = tmp_path / "src" / f"{video}.mp4"
    source.parent.mkdir(exist_ok=True)
    if not source.exists():
        source.write_bytes(f"source {video}".encode())
    entry = source if condition == "orig" else tmp_path / "entries" / f"{condition}-{video}-{len(content)}.mp4"
    if condition != "orig":
        entry.parent.mkdir(exist_ok=True)
        entry.write_bytes(content)
    job = Job("vdgsynth", condition, video, str(source), name=f"{video}.mp4" if name is None else name)
    return Outcome(job, str(entry), True, None)


def test_mirror_writes_each_condition_and_a_manifest_and_a_rerun_writes_nothing(tmp_path, cache):
    outcomes = [
        _outcome(tmp_path, "orig", "v1", b""),
        _outcome(tmp_path, "black", "v1", b"black v1"),
        _outcome(tmp_path, "crf28", "v1", b"crf28 v1"),
        _outcome(tmp_path, "open", "v1", b""),  # a text condition: no folder
        _outcome(tmp_path, "black", "v2", b"black v2", name=""),  # no name: a folder of frames
        Outcome(Job("vdgsynth", "black", "v3", "/gone.mp4", name="v3.mp4"), None, False, "VideoUnavailable: gone"),
    ]
    root = tmp_path / "m"
    summary = mirror(outcomes, root)
    assert summary.counts() == {"linked": 3, "copied": 0, "replaced": 0, "kept": 0} and summary.text_jobs == 1
    assert [o.job.video_id for o, _ in summary.failed] == ["v2"]
    assert "no name in the benchmark's folder of videos" in summary.failed[0][1]
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        "black/v1.mp4",
        "crf28/v1.mp4",
        "orig/v1.mp4",
        MANIFEST_NAME,
    ]
    assert (root / "black" / "v1.mp4").read_bytes() == b"black v1"
    assert (root / "orig" / "v1.mp4").read_bytes() == b"source v1"
    manifest = json.loads((root / MANIFEST_NAME).read_text())
    assert manifest["vdg_mirror"] == 1
    files = {e["path"]: e for e in manifest["files"]}
    assert list(files) == ["black/v1.mp4", "crf28/v1.mp4", "orig/v1.mp4"]
    crf = files["crf28/v1.mp4"]
    assert crf["sha256"] == hashlib.sha256(b"crf28 v1").hexdigest() and crf["size"] == len(b"crf28 v1")
    assert crf["source_sha256"] == hashlib.sha256(b"source v1").hexdigest()
    assert (crf["source"], crf["condition"], crf["benchmark"], crf["video_id"]) == ("v1.mp4", "crf28", "vdgsynth", "v1")
    assert (crf["transform"], crf["params"], crf["transform_version"]) == (
        "crf",
        {"crf": 28, "preset": "medium"},
        TRANSFORM_VERSION,
    )
    assert crf["cache_key"] == "crf28-v1-8" and isinstance(crf["seed"], int)
    assert (files["orig/v1.mp4"]["cache_key"], files["orig/v1.mp4"]["seed"]) == ("", None)
    assert str(tmp_path) not in (root / MANIFEST_NAME).read_text()  # no folder of this machine is named

    before = tree(root)
    again = mirror(outcomes, root)
    assert again.counts() == {"linked": 0, "copied": 0, "replaced": 0, "kept": 3}
    assert tree(root) == before  # the files and the manifest untouched, no lock or temporary file left


def test_two_videos_for_one_name_are_refused_and_earlier_entries_are_kept(tmp_path, cache):
    root = tmp_path / "m"
    mirror([_outcome(tmp_path, "black", "v1", b"black v1")], root)
    # a per-question condition: two questions of one video shown different videos
    clash = [_outcome(tmp_path, "single", "v1", b"one"), _outcome(tmp_path, "single", "v1", b"other")]
    summary = mirror(clash, root)
    assert len(summary.failed) == 2 and all("2 different videos would be single/v1.mp4" in w for _, w in summary.failed)
    assert not (root / "single").exists()
    paths = [e["path"] for e in json.loads((root / MANIFEST_NAME).read_text())["files"]]
    assert paths == ["black/v1.mp4"]  # the earlier run's file is still listed
    (root / "black" / "v1.mp4").unlink()
    mirror([], root)
    assert json.loads((root / MANIFEST_NAME).read_text())["files"] == []  # gone from the folder, gone from the list


def test_a_manifest_that_is_a_link_is_refused_before_anything_is_placed(tmp_path, cache):
    root = tmp_path / "m"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    (root / MANIFEST_NAME).symlink_to(elsewhere)
    with pytest.raises(MirrorError, match="symbolic link"):
        mirror([_outcome(tmp_path, "black", "v1", b"black v1")], root)
    assert not (root / "black").exists() and elsewhere.read_text() == "{}"


def _a_good_entry(tmp_path: Path) -> dict:
    """The entry a run writes for black/v1.mp4 (read back from its manifest)."""
    scratch = tmp_path / "scratch"
    mirror([_outcome(tmp_path, "black", "v1", b"black v1")], scratch)
    return json.loads((scratch / MANIFEST_NAME).read_text())["files"][0]


@pytest.mark.parametrize(
    ("document", "why"),
    [
        ("[" * 100_000 + "]" * 100_000, "nests arrays or objects too deeply"),
        (
            '{"vdg_mirror": 1, "files": ' + "[" * 900 + "]" * 900 + "}",
            "nests arrays or objects more than 16 levels deep",
        ),
        ('{"vdg_mirror": 1, "files": 5}', "has files of type int, not a list"),
        ('{"vdg_mirror": 1}', "has files of type NoneType, not a list"),
        ('{"vdg_mirror": 1, "files": ["x"]}', r"files\[0\] is a str, not an object"),
        ('{"vdg_mirror": 2, "files": []}', r"has format \(vdg_mirror\) 2, not 1"),
        ('{"vdg_mirror": true, "files": []}', r"has format \(vdg_mirror\) True, not 1"),
        ("[]", "holds a JSON list, not an object"),
        ("{not json", "cannot be read as JSON"),
        (b"\xff\xfe", "cannot be read as JSON"),
    ],
)
def test_a_manifest_vdg_cannot_merge_into_is_refused_before_anything_is_placed(tmp_path, cache, document, why):
    root = tmp_path / "m"
    root.mkdir()
    manifest = root / MANIFEST_NAME
    manifest.write_bytes(document if isinstance(document, bytes) else document.encode())
    before = manifest.read_bytes()
    with pytest.raises(MirrorError, match=rf"{MANIFEST_NAME} {why}.*move it aside"):
        mirror([_outcome(tmp_path, "black", "v1", b"black v1")], root)
    assert sorted(p.name for p in root.iterdir()) == [MANIFEST_NAME] and manifest.read_bytes() == before


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda e: e.pop("sha256"), r"files\[1\] has no 'sha256'"),
        (lambda e: e.__setitem__("path", 5), r"files\[1\] 'path' is int '5', not str"),
        (lambda e: e.__setitem__("size", True), r"files\[1\] 'size' is bool 'True', not int"),
        (lambda e: e.__setitem__("size", "8"), r"files\[1\] 'size' is str '8', not int"),
        (lambda e: e.__setitem__("seed", "7"), r"files\[1\] 'seed' is str '7', not int or null"),
        (lambda e: e.__setitem__("params", []), r"files\[1\] 'params' is list '\[\]', not dict"),
        (lambda e: e.__setitem__("declared_source", 3), r"files\[1\] 'declared_source' is int '3', not str"),
    ],
)
def test_a_manifest_entry_with_a_bad_field_is_refused_naming_the_manifest(tmp_path, cache, edit, why):
    good = _a_good_entry(tmp_path)
    bad = json.loads(json.dumps(good))
    edit(bad)
    root = tmp_path / "m"
    root.mkdir()
    (root / MANIFEST_NAME).write_text(json.dumps({"vdg_mirror": 1, "files": [good, bad]}))
    with pytest.raises(MirrorError, match=rf"{root / MANIFEST_NAME} {why}"):
        mirror([_outcome(tmp_path, "crf28", "v1", b"crf28 v1")], root)
    assert not (root / "crf28").exists()


def test_a_good_earlier_manifest_is_merged(tmp_path, cache):
    good = _a_good_entry(tmp_path)
    root = tmp_path / "m"
    mirror([_outcome(tmp_path, "black", "v1", b"black v1")], root)
    (root / MANIFEST_NAME).write_text(json.dumps({"vdg_mirror": 1, "files": [{**good, "declared_source": "abc"}]}))
    mirror([_outcome(tmp_path, "crf28", "v1", b"crf28 v1")], root)
    files = json.loads((root / MANIFEST_NAME).read_text())["files"]
    assert [(e["path"], e.get("declared_source")) for e in files] == [("black/v1.mp4", "abc"), ("crf28/v1.mp4", None)]


# -- end to end (slow) -----------------------------------------------------------------------------


def _check_mirror(root: Path, sources: dict[str, Path], conditions: tuple[str, ...], cache: Path) -> None:
    """Every file at DIR/<condition>/<source name>, decodable, and byte-equal to its condition's cache entry."""
    from vdg_tasks.perturb.cache import materialize
    from vdg_tasks.vocabulary.conditions import CONDITIONS

    manifest = {e["path"]: e for e in json.loads((root / MANIFEST_NAME).read_text())["files"]}
    expected = sorted(f"{c}/{name}" for c in conditions for name in sources)
    assert sorted(manifest) == expected
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [*expected, MANIFEST_NAME]
    for path in expected:
        condition, name = path.split("/", 1)
        entry = materialize(sources[name], CONDITIONS[condition], manifest[path]["video_id"])
        assert entry.hit  # built by the run: the cache entry itself, found again here
        if condition == "orig":
            assert entry.path == sources[name]
        else:
            assert cache in entry.path.parents
        assert sha256(root / path) == sha256(entry.path) == manifest[path]["sha256"]
        assert manifest[path]["source_sha256"] == sha256(sources[name])
        frames = decode_all(root / path)
        assert len(frames) == len(decode_all(entry.path)) > 0
        if condition == "black":
            assert max(int(f.max()) for f in frames) <= 20  # black pictures
    for name in sources:
        assert sha256(root / "orig" / name) == sha256(sources[name])


@pytest.mark.slow
def test_vdgsynth_mirror_through_the_cli(tmp_path, cache, monkeypatch, capsys):
    import vdg_tasks.lmms.yamlgen
    from vdg_tasks.cli import main as vdg_main
    from vdg_tasks.lmms.yamlgen import write_all
    from vdg_tasks.synthetic.synth import generate

    jsonl = generate(tmp_path / "data", n_videos=2, seed=0, width=96, height=72, seconds=8)
    write_all(tmp_path / "tasks", synth_data=str(jsonl))
    monkeypatch.setattr(vdg_tasks.lmms.yamlgen, "YAML_ROOT", tmp_path / "tasks")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    conditions = ("orig", "black", "shuffled", "crf28")
    tasks = ",".join(f"vdgsynth_vdg_{c}" for c in (*conditions, "open"))
    base = ["materialize", "--tasks", tasks, "--workers", "1", "--quiet"]
    assert vdg_main(base) == 0  # the cache first: then the mirror alone is watched
    capsys.readouterr()
    root = tmp_path / "mirror"
    outside = tree(tmp_path, skip=(root, cache, tmp_path / "hf"))
    assert vdg_main([*base, "--mirror", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"mirror {root}: 8 linked, 0 copied, 0 replaced, 0 already there, 0 not mirrored" in out
    assert "2 jobs of text conditions have no folder" in out
    sources = {p.name: p for p in sorted((tmp_path / "data" / "videos").glob("*.mp4"))}
    assert sorted(sources) == ["s000.mp4", "s001.mp4"]
    _check_mirror(root, sources, conditions, cache)
    assert tree(tmp_path, skip=(root, cache, tmp_path / "hf")) == outside  # nothing written outside DIR
    before = tree(root)
    assert vdg_main([*base, "--mirror", str(root)]) == 0
    assert "0 linked, 0 copied, 0 replaced, 8 already there" in capsys.readouterr().out
    assert tree(root) == before


@pytest.mark.slow
def test_local_videomme_copy_mirror_keeps_each_files_name(tmp_path, cache, monkeypatch, capsys):
    """A Video-MME copy in $VDG_LOCAL_DATA with one .mp4 and one .mkv video: the mirror keeps both names."""
    from vdg_tasks.cli import main as vdg_main

    folder = tmp_path / "local" / "videomme"
    (folder / "videos").mkdir(parents=True)
    (folder / "videomme").mkdir()
    sources = {
        "vmA1.mp4": write_indexed_source(folder / "videos" / "vmA1.mp4", 24, width=64, height=48),
        "vmB2.mkv": write_indexed_source(folder / "videos" / "vmB2.mkv", 24, width=64, height=48),
    }
    with av.open(str(sources["vmB2.mkv"])) as container:
        assert "matroska" in container.format.name
    rows = [
        {
            "video_id": f"{i + 1:03d}",
            "duration": "short",
            "domain": "Knowledge",
            "sub_category": "Humanity & History",
            "url": f"https://www.youtube.com/watch?v={video}",
            "videoID": video,
            "question_id": f"{i + 1:03d}-1",
            "task_type": "Counting Problem",
            "question": f"How many things in {video}?",
            "options": [f"{letter}. {n}" for letter, n in zip("ABCD", range(4), strict=True)],
            "answer": "A",
        }
        for i, video in enumerate(("vmA1", "vmB2"))
    ]
    pd.DataFrame(rows).to_parquet(folder / "videomme" / "test-00000-of-00001.parquet")
    for key, value in {
        "VDG_LOCAL_DATA": str(tmp_path / "local"),
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }.items():
        monkeypatch.setenv(key, value)
    conditions = ("orig", "black", "single")
    base = ["materialize", "--tasks", ",".join(f"videomme_vdg_{c}" for c in conditions), "--workers", "1", "--quiet"]
    assert vdg_main(base) == 0
    capsys.readouterr()
    root = tmp_path / "mirror"
    outside = tree(tmp_path, skip=(root, cache, tmp_path / "hf"))
    assert vdg_main([*base, "--mirror", str(root)]) == 0
    assert f"mirror {root}: 6 linked, 0 copied, 0 replaced, 0 already there, 0 not mirrored" in capsys.readouterr().out
    _check_mirror(root, sources, conditions, cache)
    with av.open(str(root / "black" / "vmB2.mkv")) as container:  # the cache's MP4 under the source's name
        assert "mp4" in container.format.name
    single = decode_all(root / "single" / "vmA1.mp4")
    assert all(np.array_equal(single[0], f) for f in single)  # one picture held throughout
    assert tree(tmp_path, skip=(root, cache, tmp_path / "hf")) == outside
