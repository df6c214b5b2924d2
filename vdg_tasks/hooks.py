"""The only adapter between vdg and lmms-eval.

Task YAMLs name functions here with ``!function vdg_tasks.hooks.<benchmark>__<condition>__<hook>``.
lmms-eval calls ``process_results(doc, results)`` with no task context, so each
(benchmark, condition) pair gets its own small set of hooks, generated below from the
declarations in ``vdg_tasks.benchmarks`` and ``vdg_tasks.conditions``.

A question whose video is missing or cannot be decoded is handed a tiny placeholder clip (so the
model and the run go on) and is logged with ``status = "error"`` and the reason; its answer is
never scored.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from vdg_tasks.benchmarks import BENCHMARKS, Benchmark, VideoUnavailable
from vdg_tasks.conditions import CONDITIONS, TRANSFORM_VERSION, Condition
from vdg_tasks.parse import parse_answer

#: Key of the per-sample record in lmms-eval's samples log (and the metric aggregated from it).
RECORD_KEY = "vdg"


@dataclass(frozen=True)
class Visual:
    """What a question's model input resolved to: a file to show, or the reason there is none."""

    path: Path | None
    cache_key: str
    error: str | None


@functools.lru_cache(maxsize=65536)
def _resolve(benchmark_name: str, condition_name: str, source: str, video_id: str) -> Visual:
    from vdg_tasks.cache import materialize
    from vdg_tasks.video import VideoDecodeError

    try:
        result = materialize(source, CONDITIONS[condition_name], video_id)
    except (VideoDecodeError, OSError) as exc:
        logger.warning(f"vdg: {benchmark_name}/{condition_name} video {video_id}: {exc}")
        return Visual(None, "", f"{type(exc).__name__}: {exc}")
    return Visual(result.path, result.key, None)


def resolve_visual(benchmark: Benchmark, condition: Condition, doc: Mapping[str, Any]) -> Visual:
    """Materialize (or find in the cache) the video this question is shown under ``condition``."""
    try:
        source = benchmark.source_video(doc)
    except VideoUnavailable as exc:
        return Visual(None, "", f"VideoUnavailable: {exc}")
    return _resolve(benchmark.name, condition.name, str(source), str(doc["videoID"]))


def make_doc_to_visual(benchmark: Benchmark, condition: Condition) -> Callable[[dict], list[str]]:
    def doc_to_visual(doc: dict) -> list[str]:
        visual = resolve_visual(benchmark, condition, doc)
        if visual.path is None:
            from vdg_tasks.cache import placeholder_video

            return [str(placeholder_video())]
        return [str(visual.path)]

    doc_to_visual.__name__ = f"{benchmark.name}__{condition.name}__doc_to_visual"
    return doc_to_visual


def build_record(
    benchmark: Benchmark, condition: Condition, doc: Mapping[str, Any], response: str | None, visual: Visual
) -> dict[str, Any]:
    """The logged sample: everything the per-question join needs, nothing it must infer."""
    options = list(doc.get("options") or [])
    n_options = len(options) or 4
    record: dict[str, Any] = {
        "benchmark": benchmark.name,
        "condition": condition.name,
        "condition_params": condition.params_dict(),
        "transform_version": TRANSFORM_VERSION,
        "question_id": str(doc["question_id"]),
        "video_id": str(doc["videoID"]),
        "task_type": str(doc.get("task_type", "")),
        "duration": str(doc.get("duration", "")),
        "n_options": n_options,
        "answer": str(doc["answer"]),
        "visual_key": visual.cache_key,
    }
    if visual.error is not None:
        record.update(pred=None, parse_status=None, parse_rule=None, status="error", error=visual.error, correct=None)
        return record
    parsed = parse_answer(response, n_options=n_options, options=options)
    record.update(
        pred=parsed.letter,
        parse_status=parsed.status,
        parse_rule=parsed.rule,
        status=parsed.status,
        error=None,
        correct=parsed.letter == record["answer"],
    )
    return record


def make_process_results(benchmark: Benchmark, condition: Condition) -> Callable[..., dict[str, Any]]:
    def process_results(doc: dict, results: list[str], **_: Any) -> dict[str, Any]:
        visual = resolve_visual(benchmark, condition, doc)
        response = results[0] if results else None
        out: dict[str, Any] = {RECORD_KEY: build_record(benchmark, condition, doc, response, visual)}
        if benchmark.native_results is not None and visual.error is None:
            out.update(benchmark.native_results(doc, results))
        return out

    process_results.__name__ = f"{benchmark.name}__{condition.name}__process_results"
    return process_results


def aggregate_accuracy(records: list[dict[str, Any]]) -> float:
    """Accuracy over the questions that were answered (``error`` rows are excluded, never scored)."""
    scored = [r for r in records if r["status"] != "error"]
    if not scored:
        return float("nan")
    return sum(bool(r["correct"]) for r in scored) / len(scored)


def hook_name(benchmark: str, condition: str, hook: str) -> str:
    return f"{benchmark}__{condition}__{hook}"


def _generate_hooks() -> dict[str, Callable[..., Any]]:
    hooks: dict[str, Callable[..., Any]] = {}
    for bench in BENCHMARKS.values():
        for cond in CONDITIONS.values():
            hooks[hook_name(bench.name, cond.name, "doc_to_visual")] = make_doc_to_visual(bench, cond)
            hooks[hook_name(bench.name, cond.name, "process_results")] = make_process_results(bench, cond)
    return hooks


globals().update(_generate_hooks())
