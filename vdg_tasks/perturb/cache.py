"""Content-addressed cache of materialized (perturbed) videos.

Every lmms-eval model decodes a video *path* itself, so a perturbed condition has to exist as a
real file. ``materialize`` returns that file, building it on a miss. The cache key covers the
source's identity (a sha256 of every byte of it: content, not path; memoized per path, size,
mtime, ctime and inode, in the process and in ``<cache>/source-digests``, so a source version is read once),
the condition's
name, transform and parameters, the per-video seed and ``TRANSFORM_VERSION``, and for a condition declared through
``vdg_tasks.extend`` the digest of its module's source (``Condition.source_digest``).
The location is ``$VDG_CACHE`` or the user's cache dir.

Publication. A video is rendered to ``<key>.tmp-<pid>.mp4`` and its sidecar to
``<key>.tmp-<pid>.json`` beside the target, under a per-key file lock; the sidecar is renamed into
place first, then the video. So two processes asking for the same video at once encode it once,
nobody ever reads a partial file, and a published video always has its sidecar. If anything fails,
both temporary files are removed and nothing is published.

Integrity. The sidecar records the video's size and a digest of its first and last 256 KiB. Every
hit checks them (memoized per (path, size, mtime), so repeated hits in one process cost two
``stat`` calls); a truncated or overwritten file, or one without a sidecar (written by an older
vdg), is rebuilt with a warning naming it. A change in the middle of a large file that keeps its
size and mtime is not detected: the check is cheap by design (no full-file hashing on a hit).

Leftovers. Temporary files of a killed build are removed when the same key is built again (under
the key's lock no other build of it can be running) and by :func:`sweep_stale_temps`, which
``vdg materialize`` runs first and which removes temporaries whose process is gone.

``orig`` never touches the cache (the source itself is shown), and :func:`placeholder_video` is a
file shipped in the package: neither needs a writable cache.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
from filelock import FileLock
from loguru import logger

from vdg_tasks.perturb.provenance import builder_versions, declared_origin
from vdg_tasks.vocabulary.conditions import TRANSFORM_VERSION, Condition
from vdg_tasks.vocabulary.paths import NO_ROOM, CacheUnwritable, cache_dir
from vdg_tasks.vocabulary.seeding import stable_seed
from vdg_tasks.vocabulary.untrusted import redact, redact_value

_SAMPLE_BYTES = 256 << 10
_CHUNK_BYTES = 4 << 20
#: A temporary file of a build: ``<stem>.tmp-<pid>.mp4`` (the video) or ``.json`` (its sidecar).
_TEMP = re.compile(r"^(?P<stem>.+)\.tmp-(?P<pid>\d+)\.(?:mp4|json)$")
#: Temporary files this process is writing right now (removed by a worker's SIGTERM handler).
_IN_PROGRESS: set[Path] = set()

PLACEHOLDER_FRAMES = 128
PLACEHOLDER = Path(__file__).resolve().parents[1] / "assets" / "placeholder-64x64-128f.mp4"


def _sample_digest(path: str | os.PathLike[str], size: int) -> str:
    """sha256 of the size and the first and last 256 KiB: at most 512 KiB read, whatever the size."""
    h = hashlib.sha256(str(size).encode())
    with open(path, "rb") as f:
        h.update(f.read(_SAMPLE_BYTES))
        if size > _SAMPLE_BYTES:
            f.seek(max(_SAMPLE_BYTES, size - _SAMPLE_BYTES))
            h.update(f.read(_SAMPLE_BYTES))
    return h.hexdigest()


def _content_digest(path: str | os.PathLike[str]) -> str:
    """sha256 of every byte of the file, read in 4 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(functools.partial(f.read, _CHUNK_BYTES), b""):
            h.update(chunk)
    return h.hexdigest()


def source_identity(path: str | os.PathLike[str]) -> str:
    """The sha256 of the file's whole content (path independent), read once per process and file version."""
    p = Path(path)
    st = p.stat()
    return _identity(str(p.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@functools.lru_cache(maxsize=65536)
def _identity(path: str, size: int, mtime_ns: int, ctime_ns: int, inode: int) -> str:
    # ctime and inode as well as mtime: a rewrite that restores the mtime (os.utime, rsync -t,
    # tar) still moves the ctime, and a file replaced by rename has a new inode.
    memo = _digest_memo(path, size, mtime_ns, ctime_ns, inode)
    try:
        remembered = memo.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        remembered = ""
    if _SHA256.fullmatch(remembered):
        return remembered
    digest = _content_digest(path)
    _remember(memo, digest)
    return digest


#: A sha256 in hex, as a digest memo holds it.
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _digest_memo(path: str, size: int, mtime_ns: int, ctime_ns: int, inode: int) -> Path:
    """Where the digest of this version of a source is remembered across processes (a later run, another
    worker): ``<cache>/source-digests/<sha256 of the path and its stat fields>.digest``."""
    version = hashlib.sha256(f"{path}\0{size}\0{mtime_ns}\0{ctime_ns}\0{inode}".encode()).hexdigest()
    return cache_dir() / "source-digests" / f"{version[:40]}.digest"


def _remember(memo: Path, digest: str) -> None:
    """Write the memo aside and rename it into place; a cache that cannot be written keeps it in this process only
    (``orig`` needs no writable cache)."""
    tmp = memo.with_name(f"{memo.name}.{os.getpid()}.part")
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(digest, encoding="ascii")
        os.replace(tmp, memo)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


@functools.lru_cache(maxsize=65536)
def _source_problem(path: str, size: int, mtime_ns: int, inode: int, decoded: bool) -> str | None:
    # Memoized per source identity, failures included: every condition of a question gets one status.
    # vdg_tasks.perturb.video (PyAV, ~0.4 s) only to check or build a video, not on import of this module
    from vdg_tasks.perturb.video import VideoDecodeError, validate

    try:
        validate(path, decoded=decoded)
    except VideoDecodeError as exc:
        return str(exc)
    return None


def check_source(path: str | os.PathLike[str], decoded: bool = True) -> None:
    """Run ``vdg_tasks.perturb.video.validate`` on a source once per process, file version and ``decoded``: whether
    the condition asking is built from the source's decoded pictures (``Condition.decodes_source``), which decord
    must then present as PyAV decodes them.

    Raises:
        VideoDecodeError: naming the file, when it is missing or fails validation (the same
            message for every condition that asks alike).
    """
    # vdg_tasks.perturb.video (PyAV, ~0.4 s) only to check or build a video, not on import of this module
    from vdg_tasks.perturb.video import VideoDecodeError

    p = Path(os.path.abspath(path))
    try:
        st = p.stat()
    except FileNotFoundError:
        raise VideoDecodeError(f"{p}: video file not found") from None
    except OSError as exc:
        raise VideoDecodeError(f"{p}: cannot be read: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(st.st_mode):
        raise VideoDecodeError(f"{p}: not a regular file")
    problem = _source_problem(str(p), st.st_size, st.st_mtime_ns, st.st_ino, bool(decoded))
    if problem is not None:
        raise VideoDecodeError(problem)


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
    if condition.source_digest:  # declared through vdg_tasks.extend: an edit of its module is a new video
        payload["declared_source"] = condition.source_digest
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Materialized:
    """A condition's video for one source.

    Attributes:
        path: the file a model should be handed (the source itself for ``orig``).
        key: the cache key (``""`` for ``orig``, which is never copied).
        hit: whether the file already existed (no work was done).
        source_digest: the source's identity (the sha256 of its whole content).
    """

    path: Path
    key: str
    hit: bool
    source_digest: str = ""


def _sidecar(out: Path) -> Path:
    return out.with_suffix(".json")


def entry_problem(out: Path, key: str) -> str | None:
    """Why the published entry ``out`` cannot be served (``None``: it is intact).

    Memoized per (video, sidecar) size, mtime, ctime and inode: a repeated hit costs two ``stat`` calls.
    """
    try:
        st = out.stat()
    except OSError:  # also NotADirectoryError when the cache path is not a folder
        return "missing"
    try:
        side = _sidecar(out).stat()
    except OSError:
        return "it has no sidecar with an integrity record (written by an older vdg)"
    video = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return _verdict(str(out), key, video, (side.st_size, side.st_mtime_ns, side.st_ctime_ns, side.st_ino))


@functools.lru_cache(maxsize=65536)
def _verdict(out: str, key: str, video: tuple[int, ...], sidecar_stat: tuple[int, ...]) -> str | None:
    # Memoized per (path, size, mtime, ctime, inode) of the video and its sidecar.
    size = video[0]
    sidecar = _sidecar(Path(out))
    try:
        meta = json.loads(sidecar.read_text())
        if meta.get("key", key) != key:
            return f"its sidecar {sidecar} belongs to another key ({meta.get('key')})"
        record = meta["integrity"]
        expected_size, expected_digest = int(record["size"]), str(record["digest"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"its sidecar {sidecar} has no readable integrity record ({type(exc).__name__}: {exc})"
    if size != expected_size:
        return f"its size is {size} bytes, {expected_size} were published (truncated or overwritten)"
    if _sample_digest(out, size) != expected_digest:
        return "its content differs from the digest recorded at publication (overwritten)"
    return None


def built_by(out: Path) -> dict[str, str] | None:
    """The builders' versions a published entry's sidecar records (None: an entry from before they were)."""
    try:
        side = _sidecar(out).stat()
    except OSError:
        return None
    return _built_by(str(out), (side.st_size, side.st_mtime_ns, side.st_ino))


@functools.lru_cache(maxsize=65536)
def _built_by(out: str, sidecar_stat: tuple[int, ...]) -> dict[str, str] | None:
    try:
        value = json.loads(_sidecar(Path(out)).read_text()).get("built_by")
    except (OSError, ValueError, AttributeError):
        return None
    return dict(value) if isinstance(value, dict) else None


def clear_memos() -> None:
    """Forget every memoized source identity, source check and hit verdict (benchmarks, tests)."""
    _identity.cache_clear()
    _source_problem.cache_clear()
    _verdict.cache_clear()
    _built_by.cache_clear()


def materialize(source: str | os.PathLike[str], condition: Condition, video_id: str) -> Materialized:
    """Return the video a model sees under ``condition``; build and publish it on a cache miss.

    The source is validated first for every condition (``orig`` included; memoized per file
    version), so all conditions of a question fail or succeed together. ``orig`` returns the
    source itself and never touches the cache.

    Raises:
        VideoDecodeError: naming the file, when the source is missing, unreadable or undecodable.
        CacheUnwritable: the cache folder cannot be created or written, or the disk is full
            (nothing partial is left and nothing is published).
    """
    src = Path(source)
    check_source(src, decoded=condition.decodes_source)
    identity = source_identity(src)
    if condition.transform == "identity":
        return Materialized(src, "", True, identity)

    seed = video_seed(condition, video_id)
    key = cache_key(identity, condition, seed)
    folder = cache_dir()
    out = folder / key[:2] / f"{key}.mp4"
    if entry_problem(out, key) is None:
        return Materialized(out, key, True, identity)

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheUnwritable(folder, out.parent, exc) from exc
    lock = FileLock(str(out) + ".lock")
    try:
        lock.acquire()
    except OSError as exc:
        raise CacheUnwritable(folder, str(out) + ".lock", exc) from exc
    try:
        problem = entry_problem(out, key)  # another process may have published it while we waited
        if problem is None:
            return Materialized(out, key, True, identity)
        if problem != "missing":
            logger.warning(f"vdg cache: {out}: {problem}; rebuilding it")
        out.unlink(missing_ok=True)
        _sidecar(out).unlink(missing_ok=True)
        remove_key_temps(out.parent, key)
        _build(src, condition, seed, video_id, key, out, folder)
    finally:
        lock.release()
    return Materialized(out, key, False, identity)


def _write_failure(exc: BaseException, tmp: Path) -> OSError | None:
    """The OSError behind ``exc`` if it is the cache refusing ``tmp`` (full, read-only), else None."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError):
            code = cur.errno
            if code in NO_ROOM or code == errno.EROFS:
                return cur
            if code in (errno.EACCES, errno.EPERM) and cur.filename and os.fspath(cur.filename) == str(tmp):
                return cur
        cur = cur.__cause__ or cur.__context__
    return None


def _build(src: Path, condition: Condition, seed: int, video_id: str, key: str, out: Path, folder: Path) -> None:
    """Render ``out`` and its sidecar aside, then publish both (sidecar first); nothing is left on failure."""
    # vdg_tasks.perturb.video (PyAV, ~0.4 s) only to build a video, not on import of this module
    from vdg_tasks.perturb.video import VideoDecodeError, render

    pid = os.getpid()
    tmp = out.with_name(f"{key}.tmp-{pid}.mp4")
    tmp_meta = out.with_name(f"{key}.tmp-{pid}.json")
    sidecar = _sidecar(out)
    _IN_PROGRESS.update((tmp, tmp_meta))
    sidecar_published = video_published = False
    try:
        try:
            render(condition, src, tmp, seed)
        except VideoDecodeError as exc:
            cause = _write_failure(exc, tmp)
            if cause is not None:
                raise CacheUnwritable(folder, tmp, cause) from exc
            raise
        size = tmp.stat().st_size
        # What came from outside (the source's path, the video id, a declared condition's params) is redacted: the
        # key, digests and integrity record are vdg's own and must stay as they are.
        meta = {
            "key": key,
            "source": redact(str(src)),
            "video_id": redact(str(video_id)),
            "condition": redact(condition.name),
            "params": redact_value(condition.params_dict()),
            "seed": seed,
            "transform_version": TRANSFORM_VERSION,
            **({"declared": redact_value(declared)} if (declared := declared_origin(condition)) is not None else {}),
            "source_digest": source_identity(src),
            "built_by": builder_versions(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "integrity": {"size": size, "digest": _sample_digest(tmp, size), "sample_bytes": _SAMPLE_BYTES},
        }
        try:
            tmp_meta.write_text(json.dumps(meta, indent=1))
        except OSError as exc:
            raise CacheUnwritable(folder, tmp_meta, exc) from exc
        try:
            os.replace(tmp_meta, sidecar)  # the sidecar first: a published video always has one
            sidecar_published = True
            os.replace(tmp, out)
            video_published = True
        except OSError as exc:
            raise CacheUnwritable(folder, out, exc) from exc
    finally:
        for path in (tmp, tmp_meta):
            path.unlink(missing_ok=True)
        if sidecar_published and not video_published:
            sidecar.unlink(missing_ok=True)
        _IN_PROGRESS.difference_update((tmp, tmp_meta))


def remove_temps_in_progress() -> None:
    """Delete the temporary files this process is writing (for a SIGTERM handler about to exit)."""
    for path in list(_IN_PROGRESS):
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass
    _IN_PROGRESS.clear()


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine (``os.kill(pid, 0)``)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def remove_key_temps(folder: Path, key: str) -> list[Path]:
    """Remove every temporary file of ``key`` in ``folder``; call only while holding the key's lock.

    Temporaries are only written under that lock, so while we hold it any one left is from a
    build that was killed, whatever its pid.
    """
    removed = []
    for path in folder.glob(f"{key}.tmp-*"):
        match = _TEMP.match(path.name)
        if match and match["stem"] == key and int(match["pid"]) != os.getpid():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def sweep_stale_temps(folder: Path | None = None) -> list[Path]:
    """Remove temporary files in the cache whose writing process is gone; return them.

    A temporary of a live process is kept (it may be building right now). Process ids are those
    of this machine: a cache shared between machines keeps another machine's live temporaries
    only if no local process reuses that id (then one is removed and that build fails cleanly).
    """
    folder = cache_dir() if folder is None else Path(folder)
    removed = []
    if not folder.is_dir():
        return removed
    for dirpath, _dirnames, filenames in os.walk(folder):
        for name in filenames:
            match = _TEMP.match(name)
            if match and not pid_alive(int(match["pid"])):
                path = Path(dirpath) / name
                try:
                    path.unlink()
                except FileNotFoundError:
                    continue
                removed.append(path)
    return removed


def placeholder_video() -> Path:
    """A tiny valid black clip handed to a model in place of a video that could not be produced.

    The model still runs (so one bad video never stops a run), and the hook records that
    question as ``error``: its answer is never scored. The clip ships with the package
    (``vdg_tasks/assets``, made by :func:`write_placeholder`): no cache, nothing written.
    """
    if not PLACEHOLDER.is_file():
        raise FileNotFoundError(f"{PLACEHOLDER}: vdg's placeholder clip is missing from the installed package")
    return PLACEHOLDER


def write_placeholder(path: str | os.PathLike[str]) -> Path:
    """How the shipped placeholder was made: 128 black 64x64 frames at 16 fps (8 s), H.264 in MP4.

    128 frames: a sampler asking for up to 128 frames (qwen_vl_utils raises when asked for more
    frames than a video has, which would end the run) still reads it.
    """
    # PyAV (~0.26 s) only to write a placeholder, not on import of this module
    import av

    with av.open(os.fspath(path), "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=16)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        stream.options = {"crf": "23", "preset": "medium"}
        black = np.zeros((64, 64, 3), dtype=np.uint8)
        for _ in range(PLACEHOLDER_FRAMES):
            for packet in stream.encode(av.VideoFrame.from_ndarray(black, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return Path(path)


#: Image files a frame-folder source (MVBench's TVQA frames) is read from, in name order.
FRAME_SUFFIXES = (".jpg", ".jpeg", ".png")


def frame_folder_video(folder: str | os.PathLike[str], fps: float) -> Path:
    """A folder of frames as one H.264 video at ``fps`` (near lossless, CRF 10), built once into the cache.

    The conditions then treat it as the question's source. Frames are read one at a time, in
    name order; the cache key covers the folder's path and every frame's name, size and mtime.

    Raises:
        ValueError: no frames, or a frame that cannot be read (naming it).
        CacheUnwritable: the cache cannot be written.
    """
    # PyAV and PIL.Image (~0.27 s) only to encode a frame folder, not on import of this module
    import av
    from PIL import Image

    src = Path(folder)
    frames = sorted(p for p in src.iterdir() if p.suffix.lower() in FRAME_SUFFIXES and p.is_file())
    if not frames:
        raise ValueError(f"{src}: a frame folder with no {', '.join(FRAME_SUFFIXES)} frames")
    listing = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in frames]
    key = hashlib.sha256(json.dumps([str(src.resolve()), fps, listing]).encode()).hexdigest()[:32]
    root = cache_dir()
    out = root / "frame-folders" / f"{key}.mp4"
    if out.is_file():
        return out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheUnwritable(root, out.parent, exc) from exc
    with FileLock(str(out) + ".lock"):
        if out.is_file():
            return out
        tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}.mp4")
        try:
            with av.open(str(tmp), mode="w", format="mp4") as container:
                stream = None
                rate = Fraction(fps).limit_denominator(1000)
                for i, path in enumerate(frames):
                    try:
                        with Image.open(path) as image:
                            rgb = np.asarray(image.convert("RGB"))
                    except Exception as exc:
                        raise ValueError(f"{path}: cannot read this frame ({type(exc).__name__}: {exc})") from exc
                    if stream is None:
                        stream = container.add_stream("libx264", rate=rate)
                        stream.width, stream.height = rgb.shape[1] // 2 * 2, rgb.shape[0] // 2 * 2
                        stream.pix_fmt, stream.options = "yuv420p", {"crf": "10", "preset": "veryfast"}
                    if rgb.shape[:2] != (stream.height, stream.width):
                        rgb = np.asarray(Image.fromarray(rgb).resize((stream.width, stream.height)))
                    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
                    frame.pts, frame.time_base = i, 1 / rate
                    container.mux(stream.encode(frame))
                container.mux(stream.encode(None))
            tmp.replace(out)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            failure = _write_failure(exc, tmp)
            raise (failure if failure is not None else exc) from None
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return out
