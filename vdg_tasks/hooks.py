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

#: Key of the per-sample record in lmms-eval's samples log.
RECORD_KEY = "vdg"
#: The metric lmms-eval aggregates and prints per task: accuracy under that task's condition.
METRIC_KEY = "accuracy"


@dataclass(frozen=True)
class Visual:
    """What a question's model input resolved to: a file to show, or the reason there is none.

    ``effective_params`` are the condition's parameters as applied to this source (a held condition
    on a source shorter than K frames holds every frame: ``k`` becomes the frame count).
    """

    path: Path | None
    cache_key: str
    error: str | None
    effective_params: Mapping[str, Any] | None = None


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _effective_params(condition: Condition, source: str) -> dict[str, Any]:
    params = condition.params_dict()
    if condition.transform == "hold":
        from vdg_tasks.video import effective_k, probe

        params["k"] = effective_k(probe(source).n_frames, int(params["k"]))
    return params


@functools.lru_cache(maxsize=65536)
def _resolve(benchmark_name: str, condition_name: str, source: str, video_id: str) -> Visual:
    from vdg_tasks.cache import materialize

    condition = CONDITIONS[condition_name]
    try:
        result = materialize(source, condition, video_id)
        effective = _effective_params(condition, source)
    except Exception as exc:  # any failure is this question's error row, never a dead lmms-eval run
        logger.warning(f"vdg: {benchmark_name}/{condition_name} video {video_id}: {exc}")
        return Visual(None, "", _describe(exc))
    return Visual(result.path, result.key, None, effective)


def resolve_visual(benchmark: Benchmark, condition: Condition, doc: Mapping[str, Any]) -> Visual:
    """Materialize (or find in the cache) the video this question is shown under ``condition``."""
    try:
        source = benchmark.source_video(doc)
        video_id = str(doc["videoID"])
    except VideoUnavailable as exc:
        return Visual(None, "", f"VideoUnavailable: {exc}")
    except Exception as exc:
        return Visual(None, "", _describe(exc))
    return _resolve(benchmark.name, condition.name, str(source), video_id)


def make_doc_to_visual(benchmark: Benchmark, condition: Condition) -> Callable[[dict], list[str]]:
    def doc_to_visual(doc: dict) -> list[str]:
        # Never raises: an exception here would end the user's whole lmms-eval run.
        from vdg_tasks.cache import placeholder_video

        try:
            visual = resolve_visual(benchmark, condition, doc)
        except Exception as exc:
            logger.warning(f"vdg: {benchmark.name}/{condition.name}: {_describe(exc)}")
            visual = Visual(None, "", _describe(exc))
        return [str(visual.path if visual.path is not None else placeholder_video())]

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
        "effective_params": dict(visual.effective_params) if visual.effective_params is not None else None,
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


def _failed_record(benchmark: Benchmark, condition: Condition, doc: Any, exc: BaseException) -> dict[str, Any]:
    """The record of a question whose record could not be built (a malformed doc): an error row."""
    get = doc.get if isinstance(doc, Mapping) else (lambda key, default=None: default)
    return {
        "benchmark": benchmark.name,
        "condition": condition.name,
        "condition_params": condition.params_dict(),
        "effective_params": None,
        "transform_version": TRANSFORM_VERSION,
        "question_id": str(get("question_id", "")),
        "video_id": str(get("videoID", "")),
        "task_type": str(get("task_type", "")),
        "duration": str(get("duration", "")),
        "n_options": None,
        "answer": str(get("answer", "")),
        "visual_key": "",
        "pred": None,
        "parse_status": None,
        "parse_rule": None,
        "status": "error",
        "error": f"building the record failed: {_describe(exc)}",
        "correct": None,
    }


def _score(record: Mapping[str, Any]) -> float | None:
    return None if record["status"] == "error" else float(bool(record["correct"]))


def make_process_results(benchmark: Benchmark, condition: Condition) -> Callable[..., dict[str, Any]]:
    def process_results(doc: dict, results: list[str], **_: Any) -> dict[str, Any]:
        # Never raises: an exception here would end the user's whole lmms-eval run.
        try:
            visual = resolve_visual(benchmark, condition, doc)
            response = results[0] if results else None
            record = build_record(benchmark, condition, doc, response, visual)
        except Exception as exc:
            logger.warning(f"vdg: {benchmark.name}/{condition.name}: {_describe(exc)}")
            record = _failed_record(benchmark, condition, doc, exc)
        out: dict[str, Any] = {RECORD_KEY: record, METRIC_KEY: _score(record)}
        if benchmark.native_results is not None and record["status"] != "error":
            try:
                out.update(benchmark.native_results(doc, results))
            except Exception as exc:  # the benchmark's own scorer: its failure costs only its own metric
                logger.warning(f"vdg: {benchmark.name} native process_results failed: {_describe(exc)}")
        return out

    process_results.__name__ = f"{benchmark.name}__{condition.name}__process_results"
    return process_results


def aggregate_accuracy(scores: list[float | None]) -> float:
    """Accuracy over the questions that were answered (``error`` rows, logged as None, are never scored)."""
    scored = [s for s in scores if s is not None]
    if not scored:
        return float("nan")
    return sum(scored) / len(scored)


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
