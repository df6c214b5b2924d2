"""The content-addressed cache: keys, atomic publication, concurrency, errors."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import av
import numpy as np
import pytest

from vdg_tasks.cache import cache_key, materialize, placeholder_video, source_identity, video_seed
from vdg_tasks.conditions import CONDITIONS, crf
from vdg_tasks.video import VideoDecodeError, probe


def write_source(path: Path, n_frames: int = 72, size=(96, 64), fps: int = 8, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        for i in range(n_frames):
            frame = np.full((size[1], size[0], 3), (i * 3) % 255, dtype=np.uint8)
            frame[:, : size[0] // 2] = rng.integers(0, 255, 3, dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


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


def test_video_seed_is_stable_and_per_video():
    cond = CONDITIONS["shuffled"]
    assert video_seed(cond, "v1") == video_seed(cond, "v1") != video_seed(cond, "v2")


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
    assert (info.width, info.height) == (64, 64) and info.n_frames == 8
