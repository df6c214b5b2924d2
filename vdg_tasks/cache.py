"""Content-addressed cache of materialized (perturbed) videos.

Every lmms-eval model decodes a video *path* itself, so a perturbed condition has to exist as a
real file. ``materialize`` returns that file, building it on a miss. The cache key covers the
source's identity (its size and a digest of its first and last MiB: content, not path), the
condition's name, transform and parameters, the per-video seed and ``TRANSFORM_VERSION``.
Files are published atomically (written beside the target, then renamed) under a per-key file
lock, so two processes asking for the same video at once encode it once and never read a
partial file. The location is ``$VDG_CACHE`` or the user's cache dir.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from vdg_tasks.conditions import TRANSFORM_VERSION, Condition
from vdg_tasks.seeding import stable_seed

_SAMPLE_BYTES = 256 << 10


def cache_dir() -> Path:
    """Where materialized videos live: ``$VDG_CACHE`` or ``<user cache dir>/vdg``."""
    env = os.environ.get("VDG_CACHE")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("vdg"))


def source_identity(path: str | os.PathLike[str]) -> str:
    """A digest of the file's size, first and last 256 KiB (cheap, content based, path independent)."""
    p = Path(path)
    stat = p.stat()
    return _identity(str(p.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _identity(path: str, size: int, mtime_ns: int) -> str:
    # Memoized per (file, size, mtime): the questions of one video hash it once per process.
    p = Path(path)
    h = hashlib.sha256(str(size).encode())
    with p.open("rb") as f:
        h.update(f.read(_SAMPLE_BYTES))
        if size > _SAMPLE_BYTES:
            f.seek(max(_SAMPLE_BYTES, size - _SAMPLE_BYTES))
            h.update(f.read(_SAMPLE_BYTES))
    return h.hexdigest()


def video_seed(condition: Condition, video_id: str) -> int:
    """The seed a condition's random choices use for one video (derived from stable ids only)."""
    return stable_seed("vdg", condition.name, video_id)


def cache_key(identity: str, condition: Condition, seed: int) -> str:
    payload = {
        "source": identity,
        "condition": condition.name,
        "transform": condition.transform,
        "params": condition.params_dict(),
        "seed": seed,
        "transform_version": TRANSFORM_VERSION,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Materialized:
    """A condition's video for one source.

    Attributes:
        path: the file a model should be handed (the source itself for ``orig``).
        key: the cache key (``""`` for ``orig``, which is never copied).
        hit: whether the file already existed (no work was done).
    """

    path: Path
    key: str
    hit: bool


def materialize(source: str | os.PathLike[str], condition: Condition, video_id: str) -> Materialized:
    """Return the video a model sees under ``condition``; build and publish it on a cache miss.

    Raises ``vdg_tasks.video.VideoDecodeError`` (naming the file) when the source is missing,
    unreadable or cannot be decoded. Nothing partial is ever left at the published path.
    """
    from vdg_tasks.video import VideoDecodeError, render, validate

    src = Path(source)
    if not src.is_file():
        raise VideoDecodeError(f"{src}: video file not found")
    if condition.transform == "identity":
        validate(src)
        return Materialized(src, "", True)

    seed = video_seed(condition, video_id)
    key = cache_key(source_identity(src), condition, seed)
    out = cache_dir() / key[:2] / f"{key}.mp4"
    if out.exists():
        return Materialized(out, key, True)

    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):
        if out.exists():  # another process published it while we waited
            return Materialized(out, key, True)
        tmp = out.with_name(f"{key}.tmp-{os.getpid()}.mp4")
        try:
            render(condition, src, tmp, seed)
            meta = {
                "source": str(src),
                "video_id": video_id,
                "condition": condition.name,
                "params": condition.params_dict(),
                "seed": seed,
                "transform_version": TRANSFORM_VERSION,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
            }
            out.with_suffix(".json").write_text(json.dumps(meta, indent=1))
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
    return Materialized(out, key, False)


def placeholder_video() -> Path:
    """A tiny valid black clip handed to a model in place of a video that could not be produced.

    The model still runs (so one bad video never stops a run), and the hook records that
    question as ``error``: its answer is never scored.
    """
    out = cache_dir() / "placeholder-64x64-1s.mp4"
    if out.exists():
        return out
    import av
    import numpy as np

    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):
        if out.exists():
            return out
        tmp = out.with_name(f"placeholder.tmp-{os.getpid()}.mp4")
        try:
            with av.open(str(tmp), "w") as container:
                stream = container.add_stream("libx264", rate=8)
                stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
                black = np.zeros((64, 64, 3), dtype=np.uint8)
                for _ in range(8):
                    for packet in stream.encode(av.VideoFrame.from_ndarray(black, format="rgb24")):
                        container.mux(packet)
                for packet in stream.encode():
                    container.mux(packet)
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
    return out
