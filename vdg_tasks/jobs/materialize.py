"""Pre-build every video a task list needs, so GPU time is never spent encoding.

``plan`` turns task names into jobs (one per source video and condition) from the benchmark's
docs, which it loads without lmms-eval's task index: a local dataset (``dataset_path: json``,
csv, parquet... with ``data_files``, as vdgsynth) is read with ``datasets.load_dataset`` from the
generated YAML; any other (videomme's hub dataset) through a ``TaskManager`` that indexes only that
benchmark's YAML folder (``include_defaults=False``), not lmms-eval's hundreds of built-in tasks.

``run_jobs`` builds them in a process pool. Stopping it stops its workers:

* SIGINT (Ctrl-C) or SIGTERM in the parent cancels the pending jobs, sends SIGTERM to every
  worker, waits briefly, SIGKILLs the stragglers, then re-raises (``KeyboardInterrupt``, or
  ``SystemExit(128 + SIGTERM)``).
* Each worker asks Linux (``prctl(PR_SET_PDEATHSIG, SIGTERM)``, in the pool initializer) to be sent
  SIGTERM when its parent dies, even by SIGKILL. (The signal follows the *thread* that started the
  worker: run_jobs starts them from the calling thread, which outlives the pool.) Not available
  on other systems, where a killed parent can leave workers running until their current job ends.
* A worker's SIGTERM handler deletes the temporary files of the video it is writing and exits at
  once; workers ignore SIGINT (a terminal sends it to the whole process group: the parent decides).

Whatever a killed run leaves behind (``*.tmp-<pid>.*`` of a SIGKILLed worker) is removed by the
next run, which sweeps the cache before building. A worker that dies on its own breaks the pool;
the jobs it took with it are retried once, each alone in a new worker process.
"""

from __future__ import annotations

import ctypes
import difflib
import json
import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from filelock import FileLock, Timeout
from loguru import logger
from tqdm import tqdm

from vdg_tasks.data.benchmarks import BENCHMARKS, Benchmark, VideoUnavailable, members, task_name
from vdg_tasks.data.local_copies import check_id_path, local_dir
from vdg_tasks.lmms import yamlgen  # the module: YAML_ROOT is read when used (tests point it elsewhere)
from vdg_tasks.lmms.dataset_fields import LocalCopyError, hub_problem, local_files, missing_dataset_message
from vdg_tasks.lmms.hooks import make_process_docs
from vdg_tasks.perturb.cache import materialize, remove_temps_in_progress, sweep_stale_temps
from vdg_tasks.perturb.video_request import RequestError, video_request
from vdg_tasks.vocabulary.conditions import CONDITIONS, families
from vdg_tasks.vocabulary.paths import cache_dir, ensure_writable
from vdg_tasks.vocabulary.seeding import stable_seed
from vdg_tasks.vocabulary.untrusted import UntrustedPath, redact_value

#: How long stopped workers get to exit after SIGTERM before they are SIGKILLed.
_TERMINATE_GRACE_S = 3.0


class TaskError(ValueError):
    """A task list ``vdg materialize`` cannot plan: an unknown name, or a benchmark without its data."""


@dataclass(frozen=True)
class Job:
    """One (source video, condition) to materialize."""

    benchmark: str
    condition: str
    video_id: str
    source: str
    bound: tuple[tuple[str, Any], ...] = ()
    """Per-question parameters (the oracle frames' times): a question's own video."""
    name: str = ""
    """The source's path relative to its benchmark's folder of videos (:func:`source_name`); "" when it has none."""


@dataclass(frozen=True)
class Outcome:
    job: Job
    path: str | None
    hit: bool
    error: str | None


@dataclass(frozen=True)
class Summary:
    """What a ``vdg materialize`` run did.

    Attributes:
        built: perturbed videos built now.
        cached: perturbed videos found intact in the cache.
        sources_checked: distinct source videos validated for the conditions that show the source itself
            (``orig`` and the text conditions: nothing is cached for them).
        failed: every failed job and every question whose source is unavailable.
    """

    built: int
    cached: int
    sources_checked: int
    failed: tuple[Outcome, ...]

    def line(self) -> str:
        return (
            f"{self.built} videos built, {self.cached} already cached, {self.sources_checked} source videos "
            f"checked, {len(self.failed)} failed (those questions are logged as error rows when evaluated)"
        )

    def counts(self) -> dict[str, int]:
        """The numbers of :meth:`line`, as a manifest records them."""
        return {
            "built": self.built,
            "cached": self.cached,
            "sources_checked": self.sources_checked,
            "failed": len(self.failed),
        }

    def failure_lines(self) -> list[str]:
        return [f"  {o.job.benchmark}/{o.job.condition} {o.job.video_id}: {o.error}" for o in self.failed]


def summarize(outcomes: Iterable[Outcome], unavailable: Iterable[Outcome] = ()) -> Summary:
    built = cached = 0
    checked: set[str] = set()  # one source serves orig and every text condition: counted once
    failed: list[Outcome] = []
    for o in outcomes:
        if o.error is not None or o.path is None:
            failed.append(o)
        elif CONDITIONS[o.job.condition].transform == "identity":
            checked.add(o.job.source)
        elif o.hit:
            cached += 1
        else:
            built += 1
    return Summary(built, cached, len(checked), tuple(failed) + tuple(unavailable))


def _known(names: Iterable[str]) -> str:
    return ", ".join(names)


def _unknown_condition(task: str, name: str) -> TaskError:
    choices = list(CONDITIONS) + list(families())
    near = difflib.get_close_matches(name, choices, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return TaskError(
        f"{task!r}: unknown condition {name!r}{hint}; known: {_known(CONDITIONS)} "
        f"(tags: {_known(f'<benchmark>_vdg_{f}' for f in families())}, <benchmark>_vdg)"
    )


def _unknown_benchmark(task: str, name: str) -> TaskError:
    known = list(_benchmark_names()) + list(BENCHMARKS)
    near = difflib.get_close_matches(name, dict.fromkeys(known), n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return TaskError(f"{task!r}: unknown benchmark {name!r}{hint}; known: {_known(_benchmark_names())}")


def _tag_members(bench: str) -> dict[str, list[str]]:
    """Tag suffix (family or protocol) -> the benchmark's conditions carrying that tag."""
    grouped: dict[str, list[str]] = {}
    prefix = f"{BENCHMARKS[bench].report_name}_vdg_"
    for cond in BENCHMARKS[bench].conditions():
        for tag in yamlgen.tags(bench, cond):
            if tag.startswith(prefix):
                grouped.setdefault(tag.removeprefix(prefix), []).append(cond.name)
    return grouped


def _benchmark_names() -> dict[str, None]:
    """Benchmarks as users name them: a group (``mvbench``) once, not each sub-task."""
    return dict.fromkeys(b.report_name for b in BENCHMARKS.values())


def _expand(name: str, bench: str, sub: str) -> list[str]:
    """The tasks of one benchmark spec that ``<bench>_vdg[_<sub>]`` names."""
    fams = _tag_members(bench)
    own = [c.name for c in BENCHMARKS[bench].conditions()]
    if not sub:  # <bench>_vdg: the tagged conditions of the main tag
        return [task_name(bench, c.name) for c in BENCHMARKS[bench].conditions() if c.in_audit]
    if sub in fams:
        return [task_name(bench, c) for c in fams[sub]]
    if sub in own:
        return [task_name(bench, sub)]
    if sub in CONDITIONS:
        needs = ", ".join(sorted(CONDITIONS[sub].requires - BENCHMARKS[bench].provides))
        raise TaskError(f"{name!r}: condition {sub!r} needs {needs}, which {bench} questions do not carry")
    raise _unknown_condition(name, sub)


def expand_tasks(names: Iterable[str]) -> list[str]:
    """Task names and vdg tags (``<benchmark>_vdg``, ``<benchmark>_vdg_<family or protocol>``) -> task names.

    Raises:
        TaskError: (a ValueError) one line naming the bad part and the known benchmarks or conditions.
    """
    out: list[str] = []
    for name in names:
        name = name.strip()
        if not name:
            continue
        bench, sep, rest = name.partition("_vdg")
        if not sep or (rest and not rest.startswith("_")):
            raise TaskError(
                f"{name!r} is not a vdg task or tag (expected <benchmark>_vdg, <benchmark>_vdg_<condition> or "
                f"<benchmark>_vdg_<tag>); benchmarks: {_known(_benchmark_names())}; conditions: {_known(CONDITIONS)}"
            )
        specs = [bench] if bench in BENCHMARKS else [b.name for b in members(bench)]
        if not specs:
            raise _unknown_benchmark(name, bench)
        for spec in specs:
            out += _expand(name, spec, rest[1:])
    return list(dict.fromkeys(out))


def vdg_task_config(yaml_root: Path, benchmark: str, task: str) -> tuple[dict[str, Any], Path]:
    """A derived task's YAML with its ``include`` merged (shallow, as lmms-eval does), and its folder."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: {"__function__": loader.construct_scalar(node)})
    folder = BENCHMARKS[benchmark].report_name if benchmark in BENCHMARKS else benchmark
    path = yaml_root / folder / f"{task}.yaml"
    if not path.is_file():
        raise TaskError(f"{task}: no task file {path} (run `vdg write-yamls`?)")
    config = yaml.load(path.read_text(), Loader=Loader) or {}
    include = config.pop("include", None)
    if include:
        base_path = Path(include) if Path(include).is_absolute() else path.parent / include
        base = yaml.load(base_path.read_text(), Loader=Loader) or {}
        config = {**base, **config}
    return config, path.parent


_LOCAL_BUILDERS = frozenset({"json", "csv", "parquet", "arrow", "text"})


def _is_vdg_hook(value: Any) -> bool:
    name = value.get("__function__", "") if isinstance(value, Mapping) else ""
    return str(name).startswith("vdg_tasks.hooks.")


def local_data_files(config: Mapping[str, Any], folder: Path) -> dict[str, list[Path]] | None:
    """The local files of a ``dataset_path: json|csv|...`` dataset, resolved against the YAML folder."""
    process_docs = config.get("process_docs")
    builder = config.get("dataset_path")
    if (
        not isinstance(builder, str)
        or builder not in _LOCAL_BUILDERS
        or (process_docs and not _is_vdg_hook(process_docs))
    ):
        return None
    files = (config.get("dataset_kwargs") or {}).get("data_files")
    if files is None:
        return None
    if not isinstance(files, Mapping):
        files = {"test": files}
    resolved: dict[str, list[Path]] = {}
    for split, value in files.items():
        values = value if isinstance(value, list) else [value]
        resolved[split] = [Path(v) if Path(v).is_absolute() else folder / v for v in values]
    return resolved


def load_docs(benchmark: str) -> list[dict[str, Any]]:
    """The questions of ``benchmark`` as canonical docs (``question_id``, ``task_type``, ...), read the
    way its vdg tasks read them (local copy, local file or hub).

    Raises:
        TaskError: an unknown benchmark (the message lists the known ones), or its data is missing.
    """
    parts = members(benchmark)
    if not parts:
        known = ", ".join(sorted({b.report_name for b in BENCHMARKS.values()}))
        raise TaskError(f"unknown benchmark {benchmark!r}; known: {known}")
    docs: list[dict[str, Any]] = []
    for bench in parts:
        first = bench.conditions()[0].name
        docs += [bench.view(d) for d in benchmark_docs(bench.name, task_name(bench.name, first))]
    return docs


def benchmark_docs(benchmark: str, any_task: str, yaml_root: Path | None = None) -> list[dict]:
    """The docs of ``benchmark``, as its derived task ``any_task`` (under ``yaml_root``) defines them.

    Raises:
        TaskError: a local dataset file is missing (for vdgsynth: run ``vdg synth`` first), a local
            copy in ``$VDG_LOCAL_DATA`` cannot be read, or a hub dataset could not be downloaded
            (``vdg_tasks.lmms.dataset_fields.hub_problem``, ``missing_dataset_message``).
    """
    root = Path(yaml_root) if yaml_root is not None else yamlgen.YAML_ROOT
    config, folder = vdg_task_config(root, benchmark, any_task)
    files = local_data_files(config, folder)
    if files is not None:
        missing = [p for paths in files.values() for p in paths if not p.is_file()]
        if missing:
            if benchmark == "vdgsynth":
                raise TaskError(
                    f"vdgsynth has no questions yet ({missing[0]} does not exist): run `vdg synth` first, "
                    "which writes the synthetic videos and that file"
                )
            if benchmark == "infinibench_ga":
                raise TaskError(
                    f"infinibench_ga has no questions yet ({missing[0]} does not exist): run `vdg infinibench "
                    "ANNOTATIONS --videos DIR` on a local copy of InfiniBench, or `vdg synth-episodes`"
                )
            raise TaskError(f"{benchmark}: dataset file {missing[0]} does not exist")
        # datasets (~2 s) only to load a local dataset's docs, not on import of this module
        import datasets

        split = config.get("test_split") or config.get("validation_split") or "test"
        data = datasets.load_dataset(
            str(config["dataset_path"]),
            data_files={s: [str(p) for p in paths] for s, paths in files.items()},
            split=split,
        )
        if benchmark in BENCHMARKS:  # the hook lmms-eval runs on these docs: the fixed question set
            data = make_process_docs(BENCHMARKS[benchmark])(data)
        return [dict(d) for d in data]

    # lmms_eval (torch, transformers; ~12 s) only for a hub benchmark's docs, not for local datasets
    from lmms_eval.tasks import TaskManager, get_task_dict

    if benchmark in BENCHMARKS:
        try:  # here, not inside lmms-eval, which would wrap vdg's message in an ImportError
            local_files(BENCHMARKS[benchmark].local)
        except LocalCopyError as exc:
            raise TaskError(str(exc)) from None
        problem = hub_problem(benchmark)  # before lmms-eval's minute of retries
        if problem is not None:
            raise TaskError(problem)
    manager = TaskManager("ERROR", include_path=str(folder), include_defaults=False)
    try:
        task = get_task_dict([any_task], manager)[any_task]
    except Exception as exc:
        message = missing_dataset_message(benchmark, exc)
        if message is None:
            raise
        raise TaskError(message) from exc
    docs = task.test_docs() if task.has_test_docs() else task.validation_docs()
    return [dict(d) for d in docs]


def plan(tasks: Sequence[str], yaml_root: Path | None = None) -> tuple[list[Job], list[Outcome]]:
    """Jobs for every (video, condition) the tasks need, and the (video, condition)s whose source is unavailable.

    Raises:
        TaskError: an unknown task name, or a benchmark whose data is missing.
    """
    by_bench: dict[str, list[str]] = {}
    for t in expand_tasks(tasks):
        bench, _, cond = t.partition("_vdg_")
        by_bench.setdefault(bench, []).append(cond)
    jobs: dict[tuple[str, str, str], Job] = {}
    failed: dict[tuple[str, str, str], Outcome] = {}
    for bench, conds in by_bench.items():
        spec = BENCHMARKS[bench]
        for raw in benchmark_docs(bench, task_name(bench, conds[0]), yaml_root):
            doc = spec.view(raw)
            for cond in conds:
                try:
                    request = video_request(spec, CONDITIONS[cond], raw)
                except RequestError as exc:
                    if not isinstance(exc.cause, VideoUnavailable | ValueError):
                        raise exc.cause from None
                    if exc.stage == "source":  # the video's failure: one per video and condition
                        outcome = Outcome(Job(bench, cond, str(doc["videoID"]), ""), None, False, str(exc.cause))
                        failed.setdefault((bench, cond, str(doc["videoID"])), outcome)
                    else:
                        job = Job(bench, cond, str(doc["videoID"]), exc.source)
                        outcome = Outcome(job, None, False, exc.describe())
                        failed.setdefault((bench, cond, str(doc.get("question_id"))), outcome)
                    continue
                if request is None:  # the condition shows no video: nothing to build
                    continue
                if request.key not in jobs:
                    name = source_name(spec, doc, request.source)
                    jobs[request.key] = Job(bench, cond, request.video_id, request.source, request.bound, name)
    return list(jobs.values()), list(failed.values())


def source_name(benchmark: Benchmark, view: Mapping[str, Any], source: str) -> str:
    """``source`` (a question's video, as ``video_request`` found it) relative to its benchmark's folder of videos:
    the name a harness reading that folder looks up ("" when the source has none, or none that stays inside).

    * a local copy (``$VDG_LOCAL_DATA``): the path under ``<copy>/videos`` that the copy's lookup found
      (``<videoID>.mkv`` where the copy holds that file);
    * a benchmark read where lmms-eval keeps it: the layout's folders (MVBench's per sub-task) and the file name
      lmms-eval's lookup found;
    * a benchmark whose docs name their video file (vdgsynth, infinibench_ga): its file name.

    A folder of frames (MVBench's TVQA clips), which vdg encodes to a video in its cache, has none. The name is
    judged by its spelling (``check_id_path``: not absolute, no ``..``, no empty part): one that fails has none.
    """
    path = Path(source)
    layout = benchmark.local
    if layout is None:
        relative = path.name
    else:
        folder = local_dir(layout)
        if folder is not None:
            try:
                relative = path.relative_to(folder / "videos").as_posix()
            except ValueError:  # not in the copy's videos/: a folder of frames encoded into the cache
                return ""
        else:
            declared = PurePosixPath(str(layout.video(view)))
            if path.stem != declared.stem:  # lmms-eval found another file: a folder of frames encoded into the cache
                return ""
            relative = str(declared.with_name(path.name))
    try:
        return check_id_path(relative)
    except UntrustedPath:
        return ""


def _run(job: Job) -> Outcome:
    """Build one job; any exception is this job's failure, never the run's."""
    try:
        condition = CONDITIONS[job.condition]
        result = materialize(job.source, condition.bound(**dict(job.bound)) if job.bound else condition, job.video_id)
    except Exception as exc:
        return Outcome(job, None, False, f"{type(exc).__name__}: {exc}")
    return Outcome(job, str(result.path), result.hit, None)


# -- stopping -------------------------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int) -> None:
    """Linux: have the kernel send this process SIGTERM when its parent dies (even by SIGKILL)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(128 + int(signal.SIGTERM))


def _worker_terminated(signum: int, frame: Any) -> None:
    remove_temps_in_progress()
    os._exit(128 + signum)


def _init_worker(parent_pid: int, codec_threads: int = 0) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_terminated)
    _die_with_parent(parent_pid)
    if codec_threads:
        # vdg_tasks.perturb.video (PyAV, ~0.08 s) only in a worker given codec threads, not in the parent that plans
        from vdg_tasks.perturb.video.transforms import set_codec_threads

        set_codec_threads(codec_threads)


def _raise_exit(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """In the main thread: SIGTERM raises ``SystemExit(143)``, so cleanup runs (unless SIGTERM is ignored)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGTERM, _raise_exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel pending jobs and end every worker now (SIGTERM, then SIGKILL after a grace period)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.terminate()
    for p in processes:
        p.join(_TERMINATE_GRACE_S)
        if p.is_alive():
            p.kill()
            p.join(1.0)


def run_jobs(jobs: Sequence[Job], workers: int = 1, progress: bool = True) -> list[Outcome]:
    """Materialize every job (in ``workers`` processes); a failing video is an outcome, never an exception.

    With ``W > 1`` workers each encoder and decoder gets ``cores // W`` threads (at least 1): the
    cores are shared between videos rather than oversubscribed; one worker (in this process) uses
    FFmpeg's automatic threading. A job already in the cache costs a source check and two ``stat``
    calls, so a second run over the same jobs encodes nothing.

    Stale temporary files of killed runs are swept from the cache first, and the lock files no
    process holds when the builds end (:func:`remove_idle_locks`). If any job needs the cache and
    the cache cannot be written, raises ``CacheUnwritable`` once, before any work.

    A worker process that dies (a crash, the out-of-memory killer) breaks the pool and every job
    not finished by then: each of those jobs is run once more, alone in a new worker process, and
    one whose worker dies again is a failed outcome (the others are not taken down with it).
    SIGINT / SIGTERM stop the workers and re-raise (see the module docstring).
    """
    needs_cache = any(CONDITIONS[j.condition].transform != "identity" for j in jobs)
    if needs_cache:
        ensure_writable()
        sweep_stale_temps()
    # Longest-first keeps the pool busy at the end (CRF re-encodes dominate).
    ordered = sorted(jobs, key=lambda j: (CONDITIONS[j.condition].transform != "crf", j.source))
    outcomes: list[Outcome] = []
    try:
        with tqdm(total=len(ordered), desc="materialize", unit="video", disable=not progress) as bar, _sigterm_raises():
            if workers <= 1 or len(ordered) <= 1:
                for job in ordered:
                    outcomes.append(_run(job))
                    bar.update()
                return outcomes
            done, lost = _pool_round(ordered, min(workers, len(ordered)), bar)
            outcomes += done
            if lost:
                logger.warning(
                    f"vdg materialize: a worker process died; retrying the {len(lost)} jobs it left unfinished"
                )
                for job in lost:  # each alone: a job that kills its worker again takes no other job with it
                    done, died = _pool_round([job], 1, bar)
                    outcomes += done + [Outcome(job, None, False, _DIED_TWICE) for job in died]
                    bar.update(len(died))
    finally:
        if needs_cache:
            remove_idle_locks(cache_dir())
    return outcomes


#: The error of a job whose worker process died in the first pool and again in the retry pool.
_DIED_TWICE = (
    "BrokenProcessPool: a worker process died (a crash in the decoder or encoder, or the out-of-memory killer) "
    "while this job was pending or running, and its worker died again when it was retried alone: this job "
    "kills its worker; rerun to retry"
)


def _pool_round(jobs: Sequence[Job], n_workers: int, bar: Any) -> tuple[list[Outcome], list[Job]]:
    """Run ``jobs`` in a new pool of ``n_workers`` processes: their outcomes, and the jobs lost when a
    worker process died (a dead worker breaks the whole pool: every job not finished by then is lost)."""
    pool = ProcessPoolExecutor(
        max_workers=n_workers,
        mp_context=mp.get_context("spawn"),
        initializer=_init_worker,
        initargs=(os.getpid(), max(1, default_workers() // n_workers)),
    )
    outcomes: list[Outcome] = []
    lost: list[Job] = []
    try:
        futures: dict[Future[Outcome], Job] = {pool.submit(_run, job): job for job in jobs}
        for fut in as_completed(futures):
            job = futures[fut]
            try:
                outcomes.append(fut.result())
            except BrokenProcessPool:
                lost.append(job)
                continue
            except Exception as exc:  # a pickling error
                outcomes.append(Outcome(job, None, False, f"{type(exc).__name__}: {exc}"))
            bar.update()
    except BaseException:
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return outcomes, lost


def remove_idle_locks(folder: Path) -> list[Path]:
    """Remove the lock files under ``folder`` that no process holds; return them.

    Each is taken with the cache's own ``FileLock`` (without waiting: a held one is kept) and
    unlinked while held. A process that opened the old file meanwhile and locks it after us finds
    it unlinked (``st_nlink == 0``); filelock then drops that lock and retries on the path, so two
    processes never hold one key's lock at once.
    """
    removed = []
    for path in sorted(folder.rglob("*.lock")):
        try:
            with FileLock(str(path), timeout=0):
                path.unlink(missing_ok=True)
        except (Timeout, OSError):  # held by a live build, or not ours to remove
            continue
        removed.append(path)
    return removed


def default_workers() -> int:
    """The cores this process may run on (``sched_getaffinity`` on Linux, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# -- sharding -------------------------------------------------------------------------------------


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)``: this run builds shard ``I`` (0-based) of ``N``.

    Raises:
        ValueError: not of the form ``I/N`` with integers ``N >= 1`` and ``0 <= I < N``.
    """
    index_text, sep, count_text = str(text).strip().partition("/")
    try:
        if not sep:
            raise ValueError
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise ValueError(f"--shard {text!r}: expected I/N with integers, e.g. 0/4 (the first of 4 shards)") from None
    _check_shard(index, count)
    return index, count


def _check_shard(index: int, count: int) -> None:
    if count < 1:
        raise ValueError(f"shard {index}/{count}: the number of shards N must be at least 1")
    if not 0 <= index < count:
        raise ValueError(f"shard {index}/{count}: the shard index I must be in 0..{count - 1} (0-based)")


def job_shard(job: Job, count: int) -> int:
    """The shard (``0..count-1``) that builds ``job``: a stable hash of its identity, the same on every machine.

    The identity is (benchmark, condition, video id, source path, bound parameters), so machines
    sharing a run must see the sources at the same paths.
    """
    if count < 1:
        raise ValueError(f"the number of shards must be at least 1, got {count}")
    bound = json.dumps([[name, value] for name, value in job.bound], sort_keys=True, default=str)
    return stable_seed("vdg-shard", job.benchmark, job.condition, job.video_id, job.source, bound) % count


def shard_jobs(jobs: Sequence[Job], index: int, count: int) -> list[Job]:
    """The jobs of shard ``index`` of ``count``, in their given order.

    Each job belongs to exactly one shard (:func:`job_shard`), whatever the order of ``jobs`` and
    whatever else is in it: the shards ``0..count-1`` of a plan together are that plan, without overlap.

    Raises:
        ValueError: ``count < 1`` or ``index`` outside ``0..count-1``.
    """
    _check_shard(index, count)
    return [job for job in jobs if job_shard(job, count) == index]


def shard_outcomes(outcomes: Sequence[Outcome], index: int, count: int) -> list[Outcome]:
    """The outcomes whose job belongs to shard ``index`` of ``count`` (``plan``'s unavailable sources:
    each is reported by exactly one shard)."""
    _check_shard(index, count)
    return [o for o in outcomes if job_shard(o.job, count) == index]


# -- manifest -------------------------------------------------------------------------------------


def _manifest_entry(outcome: Outcome) -> dict[str, Any]:
    job = outcome.job
    entry: dict[str, Any] = {
        "benchmark": job.benchmark,
        "condition": job.condition,
        "video_id": job.video_id,
        "source": job.source,
        "path": outcome.path,
        "hit": outcome.hit,
        "error": outcome.error,
    }
    if job.bound:
        entry["params"] = {name: value for name, value in job.bound}
    return entry


def write_manifest(
    path: str | os.PathLike[str],
    outcomes: Iterable[Outcome],
    unavailable: Iterable[Outcome],
    shard: tuple[int, int] | None,
    tasks: Sequence[str],
) -> Path:
    """Write what a run did as JSON, atomically (a temporary file renamed into place); return the path.

    Keys: ``tasks`` (as given), ``shard`` (``{"index": I, "count": N}`` or null), ``counts``
    (``built``, ``cached``, ``sources_checked`` (``orig``), ``failed``), ``jobs``: one entry per
    job and per unavailable source, failures first, each sorted by (benchmark, condition, video id,
    source), with ``benchmark``, ``condition``, ``video_id``, ``source``, ``path`` (the file a model is
    handed: the cache entry, the source itself for ``orig``; null on failure), ``hit`` (no work was
    done), ``error`` (null on success) and, for per-question conditions, ``params``.
    """
    outcomes, unavailable = list(outcomes), list(unavailable)
    summary = summarize(outcomes, unavailable)
    failed = [o for o in outcomes + unavailable if o.error is not None or o.path is None]
    done = [o for o in outcomes if o.error is None and o.path is not None]

    def order(o: Outcome) -> tuple[str, ...]:
        return (o.job.benchmark, o.job.condition, o.job.video_id, o.job.source, repr(o.job.bound))

    document = {
        "tasks": list(tasks),
        "shard": None if shard is None else {"index": int(shard[0]), "count": int(shard[1])},
        "counts": summary.counts(),
        "jobs": [_manifest_entry(o) for o in sorted(failed, key=order) + sorted(done, key=order)],
    }
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(json.dumps(redact_value(document), indent=1, default=str) + "\n")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
