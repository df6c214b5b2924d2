"""The content-addressed cache: keys, atomic publication, integrity, concurrency, errors, leftovers."""

from __future__ import annotations

import errno
import hashlib
import json
import multiprocessing as mp
import os
import pickle
import re
import subprocess
import sys
import time
from pathlib import Path

import av
import numpy as np
import pytest

import vdg_tasks.perturb.cache as vdg_cache
from tests.helpers.videos import write_source
from vdg_tasks.perturb.cache import (
    CacheUnwritable,
    cache_key,
    materialize,
    placeholder_video,
    source_identity,
    video_seed,
)
from vdg_tasks.perturb.video import VideoDecodeError, probe
from vdg_tasks.vocabulary.conditions import CONDITIONS, crf
from vdg_tasks.vocabulary.paths import ensure_writable


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_key_covers_content_condition_params_and_seed(tmp_path):
    a = write_source(tmp_path / "a.mp4", seed=1)
    b = write_source(tmp_path / "b.mp4", seed=2)
    ident = source_identity(a)
    assert source_identity(a) == ident != source_identity(b)
    moved = tmp_path / "moved.mp4"
    os.link(a, moved)
    assert source_identity(moved) == ident  # content, not path
    black = CONDITIONS["black"]
    keys = {
        cache_key(ident, black, 1),
        cache_key(ident, black, 2),
        cache_key(ident, CONDITIONS["single"], 1),
        cache_key(ident, crf(23), 1),
        cache_key(ident, crf(23, preset="slow"), 1),
    }
    assert len(keys) == 5


def write_bytes(path: Path, size: int = (3 << 20) + 12345) -> Path:
    """A file larger than the old 2 x 256 KiB sample and not a whole number of read chunks."""
    path.write_bytes(np.random.default_rng(0).bytes(size))
    return path


def test_the_source_identity_is_the_sha256_of_every_byte(tmp_path):
    src = write_bytes(tmp_path / "s.mp4")
    assert source_identity(src) == hashlib.sha256(src.read_bytes()).hexdigest()


def test_a_same_size_rewrite_in_the_middle_is_a_new_key_even_with_the_old_mtime(tmp_path):
    src = write_bytes(tmp_path / "s.mp4")
    before = src.stat()
    old_key = cache_key(source_identity(src), CONDITIONS["black"], 1)
    time.sleep(0.05)  # past the filesystem's timestamp tick, so the rewrite moves the ctime
    with open(src, "r+b") as f:
        f.seek(before.st_size // 2)
        middle = f.read(16)
        f.seek(before.st_size // 2)
        f.write(bytes(b ^ 0xFF for b in middle))
    os.utime(src, ns=(before.st_atime_ns, before.st_mtime_ns))  # as rsync -t or tar would leave it
    after = src.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert cache_key(source_identity(src), CONDITIONS["black"], 1) != old_key


def test_an_unchanged_source_is_read_once_and_a_changed_one_again(tmp_path, monkeypatch):
    src = write_bytes(tmp_path / "s.mp4")
    reads: list[str] = []
    real = vdg_cache._content_digest

    def counting(path):
        reads.append(str(path))
        return real(path)

    monkeypatch.setattr(vdg_cache, "_content_digest", counting)
    vdg_cache.clear_memos()
    first = source_identity(src)
    assert source_identity(src) == first and source_identity(str(src)) == first
    assert reads == [str(src.resolve())]
    st = src.stat()
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a new version of the file
    assert source_identity(src) == first and len(reads) == 2


def test_a_later_process_reads_the_digest_from_the_cache_not_the_source(tmp_path, monkeypatch):
    src = write_bytes(tmp_path / "s.mp4")
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    reads: list[str] = []
    real = vdg_cache._content_digest
    monkeypatch.setattr(vdg_cache, "_content_digest", lambda path: reads.append(str(path)) or real(path))
    vdg_cache.clear_memos()
    first = source_identity(src)
    (memo,) = (tmp_path / "cache" / "source-digests").iterdir()
    vdg_cache.clear_memos()  # as a new process starts
    assert source_identity(src) == first == hashlib.sha256(src.read_bytes()).hexdigest() and len(reads) == 1
    memo.write_text("not a digest")
    vdg_cache.clear_memos()
    assert source_identity(src) == first and len(reads) == 2  # a damaged memo is read past, and rewritten
    assert memo.read_text() == first
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("VDG_CACHE", str(blocked))  # no cache can be made here: the digest still comes
    vdg_cache.clear_memos()
    assert source_identity(src) == first and len(reads) == 3


def test_video_seed_is_stable_and_per_video():
    cond = CONDITIONS["shuffled"]
    assert video_seed(cond, "v1") != video_seed(cond, "v2")
    # stable: the same in a process whose str hashes differ (a seed from hash() would change)
    code = "from vdg_tasks.perturb.cache import video_seed; "
    code += "from vdg_tasks.vocabulary.conditions import CONDITIONS as C; "
    code += "print(video_seed(C['shuffled'], 'v1'))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(other.stdout) == video_seed(cond, "v1")


def test_miss_then_hit_and_nothing_partial_left(tmp_path, cache):
    src = write_source(tmp_path / "s.mp4")
    first = materialize(src, CONDITIONS["black"], "s")
    assert not first.hit and first.path.is_file() and first.path.parent.parent == cache
    again = materialize(src, CONDITIONS["black"], "s")
    assert again.hit and again.path == first.path
    assert probe(first.path).n_frames == probe(src).n_frames
    assert not list(cache.rglob("*.tmp-*"))
    assert first.path.with_suffix(".json").is_file()


def test_orig_is_the_source_itself(tmp_path, cache):
    src = write_source(tmp_path / "s.mp4")
    assert materialize(src, CONDITIONS["orig"], "s").path == src


def test_missing_and_corrupt_sources_raise_naming_the_file(tmp_path, cache):
    with pytest.raises(VideoDecodeError, match="nope.mp4"):
        materialize(tmp_path / "nope.mp4", CONDITIONS["black"], "x")
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(np.random.default_rng(0).bytes(5000))
    for name in ("orig", "black", "single"):
        with pytest.raises(VideoDecodeError, match="bad.mp4"):
            materialize(bad, CONDITIONS[name], "x")
    assert not [p for p in cache.rglob("*") if p.suffix == ".mp4"]


def _worker(args):
    src, cache_dir = args
    os.environ["VDG_CACHE"] = cache_dir
    result = materialize(src, CONDITIONS["ordered"], "s")
    return str(result.path), result.hit


def test_two_processes_build_one_file_once(tmp_path, cache):
    src = write_source(tmp_path / "s.mp4")
    with mp.get_context("spawn").Pool(2) as pool:
        results = pool.map(_worker, [(str(src), str(cache))] * 2)
    assert results[0][0] == results[1][0]
    assert sorted(hit for _, hit in results) == [False, True]  # one built it, the other waited and reused it
    assert len(list(cache.rglob("*.mp4"))) == 1


def test_placeholder_is_a_valid_video(cache):
    info = probe(placeholder_video())
    assert (info.width, info.height) == (64, 64) and info.n_frames == vdg_cache.PLACEHOLDER_FRAMES == 128


# -- integrity ------------------------------------------------------------------------------------


@pytest.fixture()
def warnings_log():
    """Messages loguru logs at WARNING and above while the test runs."""
    from loguru import logger

    messages: list[str] = []
    handle = logger.add(lambda m: messages.append(str(m)), level="WARNING", format="{message}")
    yield messages
    logger.remove(handle)


def test_sidecar_records_size_and_head_tail_digest(tmp_path, cache):
    src = write_source(tmp_path / "s.mp4")
    built = materialize(src, CONDITIONS["black"], "s")
    meta = json.loads(built.path.with_suffix(".json").read_text())
    size = built.path.stat().st_size
    assert meta["key"] == built.key
    assert meta["integrity"]["size"] == size
    data = built.path.read_bytes()
    expected = hashlib.sha256(str(size).encode() + data[: 256 << 10] + data[max(256 << 10, size - (256 << 10)) :])
    assert meta["integrity"]["digest"] == expected.hexdigest()


def test_truncated_entry_is_rebuilt_with_a_warning(tmp_path, cache, warnings_log):
    src = write_source(tmp_path / "s.mp4")
    first = materialize(src, CONDITIONS["single"], "s")
    good = first.path.read_bytes()
    assert materialize(src, CONDITIONS["single"], "s").hit  # verified once, memoized
    with open(first.path, "r+b") as f:
        f.truncate(len(good) // 2)
    again = materialize(src, CONDITIONS["single"], "s")
    assert not again.hit and again.path == first.path
    assert again.path.read_bytes() == good  # rebuilt: the transforms are deterministic
    assert probe(again.path).n_frames == probe(src).n_frames
    assert any(str(first.path) in m and "truncated" in m for m in warnings_log), warnings_log
    assert materialize(src, CONDITIONS["single"], "s").hit


def test_overwritten_entry_of_the_same_size_is_rebuilt(tmp_path, cache, warnings_log):
    src = write_source(tmp_path / "s.mp4")
    first = materialize(src, CONDITIONS["black"], "s")
    good = first.path.read_bytes()
    assert materialize(src, CONDITIONS["black"], "s").hit
    st = first.path.stat()
    with open(first.path, "r+b") as f:
        f.write(b"\0" * 64)
    # A later edit by hand: a newer mtime (a write within the same clock tick could keep the old one).
    os.utime(first.path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert first.path.stat().st_size == len(good)
    again = materialize(src, CONDITIONS["black"], "s")
    assert not again.hit and again.path.read_bytes() == good
    assert any(str(first.path) in m and "overwritten" in m for m in warnings_log), warnings_log


def test_entry_without_sidecar_is_rebuilt(tmp_path, cache, warnings_log):
    src = write_source(tmp_path / "s.mp4")
    first = materialize(src, CONDITIONS["black"], "s")
    first.path.with_suffix(".json").unlink()  # as an older vdg left it
    again = materialize(src, CONDITIONS["black"], "s")
    assert not again.hit and again.path.with_suffix(".json").is_file()
    assert any(str(first.path) in m and "sidecar" in m for m in warnings_log), warnings_log


def test_repeated_hits_do_not_reread_the_file(tmp_path, cache, monkeypatch):
    src = write_source(tmp_path / "s.mp4")
    materialize(src, CONDITIONS["black"], "s")
    calls: list[str] = []
    sample, content = vdg_cache._sample_digest, vdg_cache._content_digest

    def counting_sample(path, size):
        calls.append(str(path))
        return sample(path, size)

    def counting_content(path):
        calls.append(str(path))
        return content(path)

    monkeypatch.setattr(vdg_cache, "_sample_digest", counting_sample)
    monkeypatch.setattr(vdg_cache, "_content_digest", counting_content)
    vdg_cache.clear_memos()
    first_hit = materialize(src, CONDITIONS["black"], "s")
    # the source's digest comes from its memo in the cache (written by the first build), the entry is checked
    assert first_hit.hit and calls == [str(first_hit.path)]
    calls.clear()
    for _ in range(5):
        assert materialize(src, CONDITIONS["black"], "s").hit
    assert calls == []


# -- source validation ----------------------------------------------------------------------------


def test_every_condition_validates_the_source_once_per_file_version(tmp_path, cache, monkeypatch):
    import vdg_tasks.perturb.video

    src = write_source(tmp_path / "s.mp4")
    seen: list[str] = []
    real = vdg_tasks.perturb.video.validate

    def counting(path, decoded=True):
        seen.append((str(path), decoded))
        return real(path, decoded=decoded)

    monkeypatch.setattr(vdg_tasks.perturb.video, "validate", counting)
    vdg_cache.clear_memos()
    for name in ("orig", "black", "single", "crf38"):
        materialize(src, CONDITIONS[name], "s")
    # once for the conditions showing none of the decoded pictures (orig, black), once for those built from them
    assert seen == [(str(src), False), (str(src), True)]
    st = src.stat()
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a new version of the file
    materialize(src, CONDITIONS["black"], "s")
    assert seen[2:] == [(str(src), False)]


def test_a_source_failing_validation_fails_every_condition_alike(tmp_path, cache, monkeypatch):
    import vdg_tasks.perturb.video

    src = write_source(tmp_path / "s.mp4")
    calls: list[str] = []

    def failing(path, decoded=True):
        calls.append(str(path))
        raise VideoDecodeError(f"{path}: the last frame cannot be decoded")

    monkeypatch.setattr(vdg_tasks.perturb.video, "validate", failing)
    vdg_cache.clear_memos()
    messages = set()
    for name in ("orig", "black", "single", "crf38"):
        with pytest.raises(VideoDecodeError, match="s.mp4: the last frame cannot be decoded") as info:
            materialize(src, CONDITIONS[name], "s")
        messages.add(str(info.value))
    assert len(messages) == 1 and len(calls) == 2  # one check without, one with the decoded pictures compared
    assert not cache.exists() or not list(cache.rglob("*.mp4"))


@pytest.mark.slow
def test_a_source_decord_misreads_shows_orig_and_black_and_refuses_every_condition_built_from_its_pictures(
    tmp_path, cache
):
    """decord (what the models read orig with) presents frame i + 12 for MPEG-2 in MPEG-TS where PyAV, which builds
    the conditions, decodes frame i: orig (the source itself) and black (none of its pictures) are shown; every
    condition built from its decoded pictures is refused, naming the disagreement and a re-encode command."""
    from tests.helpers.disagreeing import write_mpeg2_ts

    src = write_mpeg2_ts(tmp_path / "misread.ts")
    vdg_cache.clear_memos()
    assert materialize(src, CONDITIONS["orig"], "m").path == src
    assert materialize(src, CONDITIONS["black"], "m").path.is_file()
    for name in ("single", "ordered", "shuffled", "crf23"):
        assert CONDITIONS[name].decodes_source
        with pytest.raises(
            VideoDecodeError, match=r"misread\.ts: the source's decoders disagree.*ffmpeg -fflags \+genpts"
        ):
            materialize(src, CONDITIONS[name], "m")
    assert {p.name for p in cache.rglob("*.mp4")} == {materialize(src, CONDITIONS["black"], "m").path.name}


# -- unwritable caches and full disks -------------------------------------------------------------


@pytest.fixture()
def unwritable_cache(tmp_path, monkeypatch):
    """$VDG_CACHE below a regular file: no folder can be created there, even by root.

    (Tests run as root, which ignores permission bits, so a chmod'ed folder would not do.)
    """
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    folder = blocker / "cache"
    monkeypatch.setenv("VDG_CACHE", str(folder))
    return folder


def test_placeholder_ships_with_the_package_and_needs_no_cache(unwritable_cache):
    import decord

    path = placeholder_video()
    assert path == vdg_cache.PLACEHOLDER and path.is_file() and path.stat().st_size < 8192
    assert Path(vdg_cache.__file__).parents[1] in path.parents  # inside the vdg_tasks package
    with av.open(str(path)) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert len(frames) == 128 and frames[0].shape == (64, 64, 3) and max(int(f.max()) for f in frames) <= 2
    reader = decord.VideoReader(str(path))
    assert len(reader) == 128 and reader.get_avg_fps() == 16.0
    assert reader.get_batch(list(range(0, 128, 7))).asnumpy().max() <= 2
    assert not unwritable_cache.exists()


def test_write_placeholder_makes_the_shipped_clip(tmp_path):
    made = vdg_cache.write_placeholder(tmp_path / "p.mp4")

    def frames(path):
        with av.open(str(path)) as container:
            return np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)])

    assert np.array_equal(frames(made), frames(placeholder_video()))
    assert probe(made) == probe(placeholder_video())


def test_orig_and_the_placeholder_never_touch_an_unwritable_cache(tmp_path, unwritable_cache):
    import vdg_tasks.lmms.hooks as hooks

    src = write_source(tmp_path / "v1.mp4")
    assert materialize(src, CONDITIONS["orig"], "v1").path == src
    hooks._resolve.cache_clear()
    doc = {"question_id": "v1-1", "videoID": "v1", "video": str(src), "options": ["A. a", "B. b"], "answer": "A"}
    assert hooks.vdgsynth__orig__doc_to_visual(doc) == [str(src)]
    gone = {**doc, "video": str(tmp_path / "gone.mp4")}
    assert hooks.vdgsynth__black__doc_to_visual(gone) == [str(vdg_cache.PLACEHOLDER)]
    assert hooks.vdgsynth__black__doc_to_visual(doc) == [str(vdg_cache.PLACEHOLDER)]  # an error row, no crash
    hooks._resolve.cache_clear()


def test_unwritable_cache_is_one_clear_error_naming_the_folder(tmp_path, unwritable_cache):
    src = write_source(tmp_path / "s.mp4")
    with pytest.raises(CacheUnwritable) as info:
        materialize(src, CONDITIONS["black"], "s")
    assert isinstance(info.value, OSError) and info.value.folder == unwritable_cache
    assert f"the vdg cache folder {unwritable_cache} is not writable" in str(info.value)
    assert "set VDG_CACHE" in str(info.value)
    with pytest.raises(CacheUnwritable, match=re.escape(str(unwritable_cache))):
        ensure_writable()
    copy = pickle.loads(pickle.dumps(info.value))  # crosses process pools intact
    assert str(copy) == str(info.value) and copy.folder == info.value.folder


def test_permission_denied_folder_is_cache_unwritable(tmp_path, cache, monkeypatch):
    # What a non-root user gets from a read-only folder (root ignores the mode bits, so it is simulated).
    src = write_source(tmp_path / "s.mp4")
    real_mkdir = Path.mkdir

    def denied(self, *args, **kwargs):
        if cache == self or cache in self.parents:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", denied)
    expected = f"the vdg cache folder {cache} is not writable (Permission denied"
    with pytest.raises(CacheUnwritable, match=re.escape(expected)):
        materialize(src, CONDITIONS["black"], "s")


def test_full_disk_while_writing_the_sidecar_leaves_nothing(tmp_path, cache, monkeypatch):
    src = write_source(tmp_path / "s.mp4")
    real_write_text = Path.write_text

    def disk_full(self, data, *args, **kwargs):
        if self.suffix == ".json":
            real_write_text(self, data[: len(data) // 2], *args, **kwargs)  # part of it made it to disk
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write_text(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", disk_full)
    with pytest.raises(CacheUnwritable) as info:
        materialize(src, CONDITIONS["black"], "s")
    assert info.value.errno == errno.ENOSPC
    assert str(info.value.path).endswith(".json") and str(info.value.path) in str(info.value)
    assert "No space left on device" in str(info.value) and str(cache) in str(info.value)
    assert sorted(p.name for p in cache.rglob("*") if p.is_file() and not p.name.endswith((".lock", ".digest"))) == []
    monkeypatch.undo()
    monkeypatch.setenv("VDG_CACHE", str(cache))
    rebuilt = materialize(src, CONDITIONS["black"], "s")
    assert not rebuilt.hit and vdg_cache.entry_problem(rebuilt.path, rebuilt.key) is None


_FULL_DISK_DRIVER = """
import json, os, resource, sys
from pathlib import Path
from vdg_tasks.perturb.cache import materialize
from vdg_tasks.vocabulary.conditions import CONDITIONS

resource.setrlimit(resource.RLIMIT_FSIZE, (4000, resource.RLIM_INFINITY))  # no file may grow past 4 kB
try:
    materialize(sys.argv[1], CONDITIONS["crf18"], "s")
    print(json.dumps({"raised": None}))
except OSError as exc:
    print(json.dumps({"raised": type(exc).__name__, "errno": exc.errno, "message": str(exc)}))
"""


def test_a_real_write_failure_while_rendering_is_cache_unwritable(tmp_path, cache):
    # Python ignores SIGXFSZ, so past RLIMIT_FSIZE the encoder's writes fail with EFBIG, like a full disk.
    src = write_source(tmp_path / "s.mp4", size=(256, 192))
    env = {**os.environ, "VDG_CACHE": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-c", _FULL_DISK_DRIVER, str(src)], env=env, capture_output=True, text=True, timeout=120
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["raised"] == "CacheUnwritable", proc.stderr[-2000:]
    assert result["errno"] == errno.EFBIG and str(cache) in result["message"] and "no room" in result["message"]
    assert [p.name for p in cache.rglob("*") if p.is_file() and not p.name.endswith((".lock", ".digest"))] == []


# -- leftovers of killed builds -------------------------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(proc.stdout)
    assert not vdg_cache.pid_alive(pid)
    return pid


def test_building_a_key_removes_its_leftover_temps(tmp_path, cache):
    src = write_source(tmp_path / "s.mp4")
    cond = CONDITIONS["black"]
    key = cache_key(source_identity(src), cond, video_seed(cond, "s"))
    folder = cache / key[:2]
    folder.mkdir(parents=True)
    dead = _dead_pid()
    leftovers = [folder / f"{key}.tmp-{dead}.mp4", folder / f"{key}.tmp-{dead}.json"]
    other = folder / f"{'0' * 32}.tmp-{dead}.mp4"  # another key's: not this build's business
    for p in [*leftovers, other]:
        p.write_bytes(b"partial")
    built = materialize(src, cond, "s")
    assert not built.hit and not any(p.exists() for p in leftovers) and other.exists()


def test_sweep_removes_temps_of_dead_processes_only(tmp_path, cache):
    dead = _dead_pid()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (cache / "ab").mkdir(parents=True)
        stale = [cache / "ab" / f"{'a' * 32}.tmp-{dead}.mp4", cache / "ab" / f"{'a' * 32}.tmp-{dead}.json"]
        busy = cache / "ab" / f"{'b' * 32}.tmp-{live.pid}.mp4"
        kept = [cache / "ab" / f"{'c' * 32}.mp4", cache / "ab" / f"{'c' * 32}.json", cache / "ab" / "x.mp4.lock"]
        for p in [*stale, busy, *kept]:
            p.write_bytes(b"x")
        assert sorted(vdg_cache.sweep_stale_temps()) == sorted(stale)
        assert busy.exists() and all(p.exists() for p in kept) and not any(p.exists() for p in stale)
    finally:
        live.kill()
        live.wait()
