"""Time and memory of materialising every video condition, against a plain full decode.

Usage::

    python benchmarks/materialize.py                 # 2 min of 720p30 and 10 min of 360p30 (minutes)
    python benchmarks/materialize.py --quick         # 10 s sources: a smoke run
    python benchmarks/materialize.py --conditions black,ordered,crf23

Sources are synthetic but encoder-realistic (a scrolling blurred-noise texture over moving luma and
chroma gradients, fine grain, a moving box), written once with libx264 (CRF 23, preset veryfast, GOP
250 with B frames) into ``--workdir`` and reused. Every measurement runs in its own spawned process;
its peak RSS is that process's VmHWM (interpreter, numpy and PyAV included, about 60 MB).

Columns: ``wall s`` (time inside the child, excluding interpreter start-up), ``peak RSS MB``,
``x decode`` (wall / full frame-threaded decode of the same source), ``x transcode`` (CRF rows: wall /
a plain PyAV decode-encode loop at the same CRF and preset), ``out MB`` (output file size).
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


FULL = (Source("720p30_2min", 1280, 720, 30, 120.0), Source("360p30_10min", 640, 360, 30, 600.0))
QUICK = (Source("720p30_10s", 1280, 720, 30, 10.0), Source("360p30_10s", 640, 360, 30, 10.0))


def generate(path: Path, src: Source) -> None:
    """Write a textured, moving test video (streaming: one frame in memory)."""
    w, h = src.width, src.height
    rng = np.random.default_rng(0)
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


def _render(src: str, dst: str, condition: str, seed: int) -> None:
    from vdg_tasks.conditions import get_condition
    from vdg_tasks.video import render

    render(get_condition(condition), src, dst, seed)


def _cache_hit(src: str, cache: str) -> float:
    """Seconds of ``cache.materialize`` finding an already published file, with nothing memoized."""
    os.environ["VDG_CACHE"] = cache
    from vdg_tasks import cache as vdg_cache
    from vdg_tasks.conditions import CONDITIONS

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


def _child(conn, kind: str, args: tuple) -> None:
    try:
        start = time.perf_counter()
        result = {"decode": _full_decode, "transcode": _plain_transcode, "render": _render, "cache_hit": _cache_hit}[
            kind
        ](*args)
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


def _measure_once(kind: str, *args) -> tuple[float, float]:
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, kind, args))
    proc.start()
    child.close()
    status, wall, rss = parent.recv()
    proc.join()
    if status != "ok":
        raise RuntimeError(f"{kind}{args}: {wall}")
    return float(wall), float(rss)


def main(argv: list[str] | None = None) -> int:
    from vdg_tasks.conditions import CONDITIONS
    from vdg_tasks.seeding import stable_seed

    video_conditions = [c.name for c in CONDITIONS.values() if c.modality == "video" and c.transform != "identity"]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path(".bench_videos"), help="cache of sources and outputs")
    ap.add_argument("--quick", action="store_true", help="10-second sources (smoke run)")
    ap.add_argument("--conditions", default=",".join(video_conditions), help="comma-separated condition names")
    ap.add_argument(
        "--transcode-baseline",
        default="23",
        help="CRF levels (comma-separated, or 'all' / 'none') for which a plain PyAV transcode is also timed",
    )
    ap.add_argument("--sources", default="", help="comma-separated source names (default: all)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement; the fastest is reported")
    ap.add_argument("--keep-outputs", action="store_true", help="keep the rendered files in WORKDIR/out")
    args = ap.parse_args(argv)

    names = [n.strip() for n in args.conditions.split(",") if n.strip()]
    for n in names:
        if n not in video_conditions:
            ap.error(f"unknown video condition {n!r}; choose from {', '.join(video_conditions)}")
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
    print(f"{os.cpu_count()} CPUs, PyAV {av.__version__}; workdir {args.workdir}", flush=True)

    header = (
        f"{'source':<14} {'condition':<18} {'wall s':>8} {'peak RSS MB':>12} {'x decode':>9} "
        f"{'x transcode':>14} {'out MB':>8}"
    )
    rows: list[str] = []
    for src in sources:
        path = args.workdir / f"{src.name}.mp4"
        if not path.exists():
            print(f"generating {path} ...", flush=True)
            t0 = time.perf_counter()
            generate(path, src)
            print(f"  {time.perf_counter() - t0:.1f} s", flush=True)
        mb = path.stat().st_size / 2**20
        decode_s, decode_rss = measure("decode", str(path), repeat=args.repeat)
        rows.append(
            f"{src.name:<14} {'full decode':<18} {decode_s:8.2f} {decode_rss:12.0f} {1:9.2f} {'':>14} {mb:8.1f}"
        )
        print(rows[-1], flush=True)
        hit_s, hit_rss = measure("cache_hit", str(path), str(args.workdir / "cache"))
        rows.append(
            f"{src.name:<14} {'cache hit (ms)':<18} {hit_s * 1000:8.2f} {hit_rss:12.0f} {'':>9} {'':>14} {'':>8}"
        )
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
            if not args.keep_outputs:
                dst.unlink()
            rows.append(
                f"{src.name:<14} {name:<18} {wall:8.2f} {rss:12.0f} {wall / decode_s:9.2f} "
                f"{vs_transcode:>14} {out_mb:8.1f}"
            )
            print(rows[-1], flush=True)
    print()
    print(header)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
