"""Time, memory and size of materialising every video condition, and of ``run_jobs`` batches.

Usage::

    python benchmarks/materialize.py                 # 2 min of 720p30 and 10 min of 360p30 (minutes)
    python benchmarks/materialize.py --quick         # 1 min of 360p30, crf23/crf38 only: about a minute
    python benchmarks/materialize.py --conditions black,ordered,crf23

Sources are synthetic but encoder-realistic (a scrolling blurred-noise texture over moving luma and
chroma gradients, fine grain, a moving box), written once with libx264 (CRF 23, preset veryfast, GOP
250 with B frames) into ``--workdir`` and reused. Every measurement runs in its own spawned process;
its peak RSS is that process's VmHWM (interpreter, numpy and PyAV included, about 60 MB).

1. Per condition. Columns: ``wall s`` (time inside the child, excluding interpreter start-up),
   ``peak RSS MB``, ``x decode`` (wall / full frame-threaded decode of the same source),
   ``x transcode`` (CRF rows: wall / a plain PyAV decode-encode loop at the same CRF and preset),
   ``out MB`` (output file size) and ``x source`` (output size / source size).
2. Workers. ``run_jobs`` over ``--batch-videos`` short sources x ``--batch-conditions``, with one
   worker and with ``--workers`` (each run in a fresh process, with an empty cache): wall times and
   the speed-up.
3. Resume. The same batch again over the filled cache: every job must be a hit (nothing encoded).
4. Size. Each condition's output size over its source's, per table source.
5. API conditions (``vdg_tasks.extend``). Each one that re-encodes (``filter``, ``frames``) against ``crf18`` on the
   same source (``x crf18``: wall / crf18's wall; ``size x crf18``: output size / crf18's), and each one that writes a
   file (``container``: ``mute``) against the full decode (``x decode``), with its peak RSS.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import sys
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import av  # noqa: E402
import numpy as np  # noqa: E402


@dataclass(frozen=True)
class Source:
    name: str
    width: int
    height: int
    fps: int
    seconds: float
    seed: int = 0


FULL = (Source("720p30_2min", 1280, 720, 30, 120.0), Source("360p30_10min", 640, 360, 30, 600.0))
QUICK = (Source("360p30_1min", 640, 360, 30, 60.0),)
#: ``--quick`` renders three CRF levels (crf18, the control of every condition declared through ``vdg_tasks.extend``
#: that re-encodes; the source's own CRF; the highest), not all five.
QUICK_CRFS = ("crf18", "crf23", "crf38")
#: The transforms ``vdg_tasks.perturb.video.render`` writes a video for.
RENDERED = ("black", "hold", "crf", "hold_at", "frames", "container", "filter")
#: The condition a re-encoding API condition (``filter``, ``frames``) is timed and sized against.
CONTROL = "crf18"
#: Sources of the workers and resume batches (``--batch-videos`` of them, each with its own texture).
BATCH_FULL = Source("batch_360p30_10s", 640, 360, 30, 10.0)
BATCH_QUICK = Source("batch_360p30_4s", 640, 360, 30, 4.0)
BATCH_CONDITIONS = "black,single,ordered,crf28"


def generate(path: Path, src: Source) -> None:
    """Write a textured, moving test video (streaming: one frame in memory)."""
    w, h = src.width, src.height
    rng = np.random.default_rng(src.seed)
    coarse = rng.integers(0, 256, size=(h // 8 + 2, w // 8 + 2)).astype(np.float32)
    tex = np.kron(coarse, np.ones((8, 8), np.float32))
    tex = (tex + np.roll(tex, 4, 0) + np.roll(tex, 4, 1) + np.roll(np.roll(tex, 4, 0), 4, 1)) / 4
    tex = (tex * 0.25).astype(np.uint8) + rng.integers(0, 6, size=tex.shape, dtype=np.uint8)  # + fine grain
    tex = np.tile(tex, (2, 2))
    luma_ramp = (np.arange(2 * w) % w * 120 // w).astype(np.uint8)
    u_ramp = np.tile((np.arange(w) % (w // 2) * 60 // (w // 2) + 98).astype(np.uint8), (h // 2, 2))
    v_ramp = np.tile((np.arange(h) % (h // 2) * 60 // (h // 2) + 98).astype(np.uint8)[:, None], (2, w // 2))
    tmp = path.with_suffix(".part.mp4")
    with av.open(str(tmp), "w") as out:
        stream = out.add_stream("libx264", rate=src.fps)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.thread_type = "FRAME"
        stream.options = {"crf": "23", "preset": "veryfast"}
        buf = np.empty((h * 3 // 2, w), np.uint8)
        for i in range(int(round(src.fps * src.seconds))):
            t = i / src.fps
            ox, oy, g = (5 * i) % w, (2 * i) % h, (3 * i) % w
            y = buf[:h]
            np.add(tex[oy : oy + h, ox : ox + w], luma_ramp[g : g + w], out=y)
            cx, cy = int(w / 2 + w / 3 * np.sin(t)), int(h / 2 + h / 3 * np.cos(1.3 * t))
            y[max(0, cy - h // 8) : cy + h // 8, max(0, cx - w // 10) : cx + w // 10] = 220
            cu, cv = (2 * i) % (w // 2), i % (h // 2)
            buf[h : h + h // 4] = u_ramp[:, cu : cu + w // 2].reshape(h // 4, w)
            buf[h + h // 4 :] = v_ramp[cv : cv + h // 2].reshape(h // 4, w)
            frame = av.VideoFrame.from_ndarray(buf, format="yuv420p")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    tmp.rename(path)


# ------------------------------------------------------------------------------------------------
# Measurements (each runs in a spawned child)


def _full_decode(src: str) -> None:
    with av.open(src) as container:
        stream = container.streams.video[0]
        stream.thread_type = "FRAME"
        for _ in container.decode(stream):
            pass


def _plain_transcode(src: str, dst: str, crf: int, preset: str) -> None:
    """The reference loop: decode, reset picture type, encode; nothing else."""
    with av.open(src) as container, av.open(dst, "w") as out:
        ins = container.streams.video[0]
        ins.thread_type = "FRAME"
        stream = out.add_stream("libx264", rate=ins.average_rate)
        stream.width, stream.height, stream.pix_fmt = ins.codec_context.width, ins.codec_context.height, "yuv420p"
        stream.thread_type = "FRAME"
        stream.options = {"crf": str(crf), "preset": preset}
        stream.codec_context.time_base = 1 / Fraction(ins.average_rate)
        for i, frame in enumerate(container.decode(ins)):
            frame.pict_type = av.video.frame.PictureType.NONE
            frame.pts, frame.time_base = i, stream.codec_context.time_base
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def _bound(name: str, src: str) -> tuple:
    """Per-question parameters of condition ``name`` for ``src``: ``oracle`` holds 4 evenly spaced times."""
    from vdg_tasks.perturb.video import probe
    from vdg_tasks.vocabulary.conditions import CONDITIONS

    if CONDITIONS[name].transform != "hold_at":
        return ()
    duration = probe(src).duration
    return (("times", tuple(round(duration * (i + 0.5) / 4, 3) for i in range(4))),)


def _condition(name: str, src: str):
    from vdg_tasks.vocabulary.conditions import CONDITIONS

    bound = _bound(name, src)
    return CONDITIONS[name].bound(**dict(bound)) if bound else CONDITIONS[name]


def _render(src: str, dst: str, condition: str, seed: int) -> None:
    from vdg_tasks.perturb.video import render

    render(_condition(condition, src), src, dst, seed)


def _batch(cache: str, sources: list[str], conditions: list[str], workers: int, threads: int = 0) -> dict:
    """``run_jobs`` over every (source, condition) with ``cache`` as the cache: wall and counts.

    ``threads``: codec threads of jobs run in this process (``workers=1``; 0: automatic, as ``vdg
    materialize`` runs them). Pool workers always get ``cores // workers``.
    """
    os.environ["VDG_CACHE"] = cache
    from vdg_tasks.perturb.video.transforms import set_codec_threads

    set_codec_threads(threads)
    from vdg_tasks.jobs.materialize import Job, run_jobs, summarize

    jobs = [
        Job("vdgsynth", name, f"v{i}", src, _bound(name, src)) for i, src in enumerate(sources) for name in conditions
    ]
    load = os.getloadavg()[0]
    cpu0 = _cpu_seconds()
    start = time.perf_counter()
    outcomes = run_jobs(jobs, workers=workers, progress=False)
    wall = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu0
    summary = summarize(outcomes)
    errors = [o.error for o in outcomes if o.error]
    hits = sum(o.hit for o in outcomes)
    return {
        "wall": wall,
        "cpu": cpu,
        "load": load,
        "jobs": len(jobs),
        "hits": hits,
        **summary.counts(),
        "errors": errors,
    }


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children (the pool's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _cache_hit(src: str, cache: str) -> float:
    """Seconds of ``cache.materialize`` finding an already published file, with nothing memoized."""
    os.environ["VDG_CACHE"] = cache
    from vdg_tasks.perturb import cache as vdg_cache
    from vdg_tasks.vocabulary.conditions import CONDITIONS

    vdg_cache.materialize(src, CONDITIONS["black"], "bench")  # build (or find) it once
    times = []
    for _ in range(20):
        vdg_cache._identity.cache_clear()  # a first hit: the source is hashed again
        vdg_cache._verdict.cache_clear()  # and its integrity verdict recomputed
        start = time.perf_counter()
        assert vdg_cache.materialize(src, CONDITIONS["black"], "bench").hit
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _peak_rss_mb() -> float:
    """This process's peak resident set: VmHWM (reset by exec, unlike ru_maxrss which survives it)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


_KINDS = {"decode": _full_decode, "transcode": _plain_transcode, "render": _render, "cache_hit": _cache_hit}


def _child(conn, kind: str, args: tuple) -> None:
    try:
        if kind == "batch":
            conn.send(("ok", _batch(*args), _peak_rss_mb()))
            return
        if kind == "render":  # time the render, not what a process does once (the decode imports nothing either)
            from vdg_tasks.perturb.video import reference
            from vdg_tasks.vocabulary.conditions import CONDITIONS

            _ = CONDITIONS[args[2]]  # the registry, read once per process (entry points, declared modules)
            reference.decord_module()  # decord's import, once per process
        start = time.perf_counter()
        result = _KINDS[kind](*args)
        wall = result if kind == "cache_hit" else time.perf_counter() - start
        conn.send(("ok", wall, _peak_rss_mb()))
    except BaseException as err:  # report, never hang the parent
        conn.send(("error", repr(err), 0.0))
    finally:
        conn.close()


def measure(kind: str, *args, repeat: int = 1) -> tuple[float, float]:
    """(fastest wall seconds, largest peak RSS MB) over ``repeat`` runs, each in a fresh spawned process."""
    runs = [_measure_once(kind, *args) for _ in range(repeat)]
    return min(w for w, _ in runs), max(r for _, r in runs)


def _measure_once(kind: str, *args):
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, kind, args))
    proc.start()
    child.close()
    status, result, rss = parent.recv()
    proc.join()
    if status != "ok":
        raise RuntimeError(f"{kind}{args}: {result}")
    return (result if kind == "batch" else float(result)), float(rss)


def _ensure(path: Path, src: Source) -> Path:
    if not path.exists():
        print(f"generating {path} ...", flush=True)
        t0 = time.perf_counter()
        generate(path, src)
        print(f"  {time.perf_counter() - t0:.1f} s", flush=True)
    return path


def run_batches(args, workdir: Path) -> list[str]:
    """Sections 2 and 3: one worker against ``--workers``, then the same batch over the filled cache."""
    import shutil

    template = BATCH_QUICK if args.quick else BATCH_FULL
    sources = [
        str(_ensure(workdir / f"{template.name}_{i}.mp4", Source(f"{template.name}_{i}", *_dims(template), seed=i + 1)))
        for i in range(args.batch_videos)
    ]
    conditions = [c.strip() for c in args.batch_conditions.split(",") if c.strip()]
    source_mb = sum(os.path.getsize(s) for s in sources) / 2**20
    lines = [
        f"batch: {len(sources)} x {template.name} ({source_mb:.1f} MB) x {','.join(conditions)} = "
        f"{len(sources) * len(conditions)} jobs"
    ]
    print(lines[-1], flush=True)
    # (label, workers, codec threads of an in-process run): "1 worker" is how `vdg materialize --workers 1`
    # runs (FFmpeg threads on every core); "1 worker, 1 thread" is one pool worker's share of 2 cores.
    runs = [("1 worker", 1, 0), ("1 worker, 1 thread", 1, 1)]
    if args.workers > 1:
        runs.append((f"{args.workers} workers", args.workers, 0))
    best: dict[str, dict] = {}
    for _ in range(args.repeat):  # alternate, so that load from other processes hits all alike
        for label, workers, threads in runs:
            cache = workdir / f"batch_cache_w{workers}"
            shutil.rmtree(cache, ignore_errors=True)
            result, _ = _measure_once("batch", str(cache), sources, conditions, workers, threads)
            if result["errors"]:
                raise RuntimeError(f"batch with {label}: {result['errors'][:3]}")
            if label not in best or result["wall"] < best[label]["wall"]:
                best[label] = result
    for label, _, _ in runs:
        result = best[label]
        lines.append(
            f"  {label:<19} {result['wall']:7.2f} s wall, {result['cpu']:6.1f} s CPU "
            f"({result['cpu'] / result['wall']:.2f} cores busy; load average before {result['load']:.2f}); "
            f"{result['built']} built, {result['sources_checked']} orig checked"
        )
        print(lines[-1], flush=True)
    if args.workers > 1:
        many = best[f"{args.workers} workers"]["wall"]
        lines.append(
            f"  speed-up of {args.workers} workers: {best['1 worker']['wall'] / many:.2f}x over 1 worker, "
            f"{best['1 worker, 1 thread']['wall'] / many:.2f}x over 1 single-threaded worker "
            f"(target >= 1.7x on 2 idle cores; other processes' load lowers both)"
        )
        print(lines[-1], flush=True)
    cache = workdir / f"batch_cache_w{args.workers}"
    again, _ = _measure_once("batch", str(cache), sources, conditions, args.workers)
    lines.append(
        f"  second run ({args.workers} workers, same cache): {again['hits']}/{again['jobs']} hits, "
        f"{again['built']} built, {again['wall']:.2f} s"
    )
    print(lines[-1], flush=True)
    if again["built"] or again["errors"]:
        raise RuntimeError(f"the second run built {again['built']} videos: {again['errors'][:3]}")
    return lines


def _dims(src: Source) -> tuple[int, int, int, float]:
    return src.width, src.height, src.fps, src.seconds


def _api_rows(measured: dict[str, dict[str, tuple[float, float, float]]], conditions) -> list[str]:
    """Section 5's lines: each API condition's wall and size against its reference on the same source."""
    lines = [f"{'source':<14} {'condition':<18} {'wall s':>8} {'peak RSS MB':>12} {'against':>12} {'x time':>8} "
             f"{'size x':>8}"]  # fmt: skip
    for source, by_name in measured.items():
        for name, (wall, rss, out_mb) in by_name.items():
            if name not in conditions or not conditions[name].declared_in:
                continue
            if conditions[name].transform == "container":
                ref = "full decode"
            elif CONTROL in by_name:
                ref = CONTROL
            else:
                lines.append(f"{source:<14} {name:<18} {wall:8.2f} {rss:12.0f} {'(no ' + CONTROL + ')':>12}")
                continue
            ref_wall, _, ref_mb = by_name[ref]
            size = f"{out_mb / ref_mb:8.3f}" if ref != "full decode" else f"{'':>8}"
            lines.append(f"{source:<14} {name:<18} {wall:8.2f} {rss:12.0f} {ref:>12} {wall / ref_wall:8.3f} {size}")
    return lines if len(lines) > 1 else []


def main(argv: list[str] | None = None) -> int:
    from vdg_tasks.jobs.materialize import default_workers
    from vdg_tasks.vocabulary.conditions import CONDITIONS
    from vdg_tasks.vocabulary.seeding import stable_seed

    # the conditions render() writes a video for (blind shows none; jpeg changes a task's frames, not a video)
    video_conditions = [c.name for c in CONDITIONS.values() if c.modality == "video" and c.transform in RENDERED]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path(".bench_videos"), help="cache of sources and outputs")
    ap.add_argument("--quick", action="store_true", help="short sources: about a minute on 2 cores")
    ap.add_argument(
        "--conditions", default=None, help="comma-separated condition names (default: all; --quick: crf23 and crf38)"
    )
    ap.add_argument(
        "--transcode-baseline",
        default=None,
        help="CRF levels (comma-separated, or 'all' / 'none') for which a plain PyAV transcode is also timed "
        "(default: 23; --quick: none)",
    )
    ap.add_argument("--sources", default="", help="comma-separated source names (default: all)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement; the fastest is reported")
    ap.add_argument("--keep-outputs", action="store_true", help="keep the rendered files in WORKDIR/out")
    ap.add_argument("--workers", type=int, default=2, help="workers of the batch compared with one (default 2)")
    ap.add_argument("--batch-videos", type=int, default=8, help="sources in the workers and resume batches")
    ap.add_argument("--batch-conditions", default=BATCH_CONDITIONS, help="conditions of the batches")
    ap.add_argument("--skip-table", action="store_true", help="skip the per-condition table (sections 1 and 4)")
    ap.add_argument("--skip-batch", action="store_true", help="skip the workers and resume batches (2 and 3)")
    args = ap.parse_args(argv)
    if args.conditions is None:
        quick_skip = [c for c in video_conditions if CONDITIONS[c].transform == "crf" and c not in QUICK_CRFS]
        args.conditions = ",".join(c for c in video_conditions if not (args.quick and c in quick_skip))
    if args.transcode_baseline is None:
        args.transcode_baseline = "none" if args.quick else "23"

    names = [n.strip() for n in args.conditions.split(",") if n.strip()]
    for group in (names, [n.strip() for n in args.batch_conditions.split(",") if n.strip()]):
        for n in group:
            if n not in video_conditions and n != "orig":
                ap.error(f"unknown video condition {n!r}; choose from {', '.join(video_conditions)}")
    if args.workers < 1 or args.batch_videos < 1:
        ap.error("--workers and --batch-videos must be at least 1")
    if args.transcode_baseline == "all":
        baseline_crfs = {int(CONDITIONS[n].params["crf"]) for n in names if CONDITIONS[n].transform == "crf"}
    elif args.transcode_baseline == "none":
        baseline_crfs = set()
    else:
        baseline_crfs = {int(x) for x in args.transcode_baseline.split(",") if x.strip()}

    sources = QUICK if args.quick else FULL
    if args.sources:
        wanted = {n.strip() for n in args.sources.split(",")}
        if unknown := wanted - {src.name for src in sources}:
            ap.error(f"unknown sources {sorted(unknown)}; choose from {', '.join(src.name for src in sources)}")
        sources = tuple(src for src in sources if src.name in wanted)
    args.workdir.mkdir(parents=True, exist_ok=True)
    out_dir = args.workdir / "out"
    out_dir.mkdir(exist_ok=True)
    print(
        f"{os.cpu_count()} CPUs ({default_workers()} usable), load average {os.getloadavg()[0]:.2f}, "
        f"PyAV {av.__version__}; workdir {args.workdir}",
        flush=True,
    )
    started = time.perf_counter()

    header = (
        f"{'source':<14} {'condition':<18} {'wall s':>8} {'peak RSS MB':>12} {'x decode':>9} "
        f"{'x transcode':>14} {'out MB':>8} {'x source':>9}"
    )
    rows: list[str] = []
    ratios: dict[str, dict[str, float]] = {}  # condition -> source -> output size / source size
    measured: dict[str, dict[str, tuple[float, float, float]]] = {}  # source -> condition -> (wall, RSS, out MB)
    for src in sources if not args.skip_table else ():
        path = _ensure(args.workdir / f"{src.name}.mp4", src)
        mb = path.stat().st_size / 2**20
        decode_s, decode_rss = measure("decode", str(path), repeat=args.repeat)
        rows.append(
            f"{src.name:<14} {'full decode':<18} {decode_s:8.2f} {decode_rss:12.0f} {1:9.2f} {'':>14} {mb:8.2f} "
            f"{1:9.3f}"
        )
        print(rows[-1], flush=True)
        hit_s, hit_rss = measure("cache_hit", str(path), str(args.workdir / "cache"))
        rows.append(f"{src.name:<14} {'cache hit (ms)':<18} {hit_s * 1000:8.2f} {hit_rss:12.0f}")
        print(rows[-1], flush=True)
        for name in names:
            cond = CONDITIONS[name]
            dst = out_dir / f"{src.name}_{name}.mp4"
            dst.unlink(missing_ok=True)
            render_args = ("render", str(path), str(dst), name, stable_seed("bench", src.name, name))
            vs_transcode = ""
            if cond.transform == "crf" and int(cond.params["crf"]) in baseline_crfs:
                # Alternate render and reference runs so that load from other processes hits both alike.
                ref = out_dir / f"{src.name}_{name}_plain.mp4"
                ref_args = ("transcode", str(path), str(ref), int(cond.params["crf"]), cond.params["preset"])
                rounds = [(measure(*render_args), measure(*ref_args)) for _ in range(args.repeat)]
                wall, rss = min(r[0][0] for r in rounds), max(r[0][1] for r in rounds)
                ref_s = min(r[1][0] for r in rounds)
                ref.unlink(missing_ok=True)
                vs_transcode = f"{wall / ref_s:.3f} ({ref_s:.1f}s)"
            else:
                wall, rss = measure(*render_args, repeat=args.repeat)
            out_mb = dst.stat().st_size / 2**20
            ratios.setdefault(name, {})[src.name] = out_mb / mb
            measured.setdefault(src.name, {"full decode": (decode_s, decode_rss, mb)})[name] = (wall, rss, out_mb)
            if not args.keep_outputs:
                dst.unlink()
            rows.append(
                f"{src.name:<14} {name:<18} {wall:8.2f} {rss:12.0f} {wall / decode_s:9.2f} "
                f"{vs_transcode:>14} {out_mb:8.2f} {out_mb / mb:9.3f}"
            )
            print(rows[-1], flush=True)
    batch_lines = [] if args.skip_batch else run_batches(args, args.workdir)

    if rows:
        print("\n1. per condition")
        print(header)
        print("\n".join(rows))
    if batch_lines:
        print("\n2-3. workers and resume")
        print("\n".join(batch_lines))
    if ratios:
        print("\n4. output size / source size")
        print(f"{'condition':<18} " + " ".join(f"{src.name:>14}" for src in sources))
        for name, by_source in ratios.items():
            print(f"{name:<18} " + " ".join(f"{by_source[src.name]:14.3f}" for src in sources))
    api_lines = _api_rows(measured, CONDITIONS)
    if api_lines:
        print("\n5. API conditions against crf18 (re-encodes) and a full decode (container)")
        print("\n".join(api_lines))
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
