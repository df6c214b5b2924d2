"""Pre-build every video a task list needs, so GPU time is never spent encoding."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from vdg_tasks.benchmarks import BENCHMARKS, VideoUnavailable, parse_task_name, task_name
from vdg_tasks.conditions import CONDITIONS, get_condition


@dataclass(frozen=True)
class Job:
    """One (source video, condition) to materialize."""

    benchmark: str
    condition: str
    video_id: str
    source: str


@dataclass(frozen=True)
class Outcome:
    job: Job
    path: str | None
    hit: bool
    error: str | None


def expand_tasks(names: Iterable[str]) -> list[str]:
    """Task names and vdg tags (``<benchmark>_vdg``, ``<benchmark>_vdg_<family>``) -> task names."""
    out: list[str] = []
    for name in names:
        name = name.strip()
        if not name:
            continue
        bench, sep, rest = name.partition("_vdg")
        if sep and bench in BENCHMARKS and rest in ("",) + tuple(f"_{c.family}" for c in CONDITIONS.values()):
            family = rest[1:]
            out += [task_name(bench, c.name) for c in CONDITIONS.values() if not family or c.family == family]
            continue
        get_condition(parse_task_name(name)[1])  # an unknown condition raises with a did-you-mean
        out.append(name)
    return list(dict.fromkeys(out))


def benchmark_docs(benchmark: str, any_task: str) -> list[dict]:
    """The benchmark's docs, loaded by lmms-eval itself from one of its derived tasks."""
    from lmms_eval.tasks import TaskManager, get_task_dict

    from vdg_tasks.yamlgen import YAML_ROOT

    manager = TaskManager("ERROR", include_path=str(YAML_ROOT))
    task = get_task_dict([any_task], manager)[any_task]
    docs = task.test_docs() if task.has_test_docs() else task.validation_docs()
    return [dict(d) for d in docs]


def plan(tasks: Sequence[str]) -> tuple[list[Job], list[Outcome]]:
    """Jobs for every (video, condition) the tasks need, and the questions whose source is unavailable."""
    by_bench: dict[str, list[str]] = {}
    for t in expand_tasks(tasks):
        bench, cond = parse_task_name(t)
        by_bench.setdefault(bench, []).append(cond)
    jobs: dict[tuple[str, str, str], Job] = {}
    failed: list[Outcome] = []
    for bench, conds in by_bench.items():
        docs = benchmark_docs(bench, task_name(bench, conds[0]))
        for doc in docs:
            try:
                source = str(BENCHMARKS[bench].source_video(doc))
            except VideoUnavailable as exc:
                for cond in conds:
                    failed.append(Outcome(Job(bench, cond, str(doc["videoID"]), ""), None, False, str(exc)))
                continue
            for cond in conds:
                jobs.setdefault((cond, source, str(doc["videoID"])), Job(bench, cond, str(doc["videoID"]), source))
    return list(jobs.values()), failed


def _run(job: Job) -> Outcome:
    from vdg_tasks.cache import materialize
    from vdg_tasks.video import VideoDecodeError

    try:
        result = materialize(job.source, CONDITIONS[job.condition], job.video_id)
    except (VideoDecodeError, OSError) as exc:
        return Outcome(job, None, False, str(exc))
    return Outcome(job, str(result.path), result.hit, None)


def run_jobs(jobs: Sequence[Job], workers: int = 1, progress: bool = True) -> list[Outcome]:
    """Materialize every job (in ``workers`` processes); a failing video is an outcome, never an exception."""
    from tqdm import tqdm

    # Longest-first keeps the pool busy at the end (CRF re-encodes dominate).
    ordered = sorted(jobs, key=lambda j: (CONDITIONS[j.condition].transform != "crf", j.source))
    bar = tqdm(total=len(ordered), desc="materialize", unit="video", disable=not progress)
    outcomes: list[Outcome] = []
    if workers <= 1:
        for job in ordered:
            outcomes.append(_run(job))
            bar.update()
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(_run, job) for job in ordered]
            for fut in as_completed(futures):
                outcomes.append(fut.result())
                bar.update()
    bar.close()
    return outcomes


def default_workers() -> int:
    return max(1, (os.cpu_count() or 2) // 2)
