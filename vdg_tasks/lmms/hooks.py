"""The only adapter between vdg and lmms-eval.

Task YAMLs name functions here with ``!function vdg_tasks.hooks.<benchmark>__<condition>__<hook>``.
lmms-eval calls ``process_results(doc, results)`` with no task context, so each
(benchmark, condition) pair gets its own small set of hooks, generated below from the
declarations in ``vdg_tasks.data.benchmarks`` and ``vdg_tasks.vocabulary.conditions``: ``doc_to_visual`` and
``process_results`` for every pair, ``doc_to_text`` for text conditions (the question
transforms of ``vdg_tasks.perturb.text`` applied before the benchmark's own prompt builder), and one
``process_docs`` per benchmark (``<benchmark>__process_docs``: the fixed question set of
``$VDG_QUESTION_SET``, when one is selected), and one ``<benchmark>__<metric>__aggregation`` per
lmms-eval metric a benchmark keeps (its own aggregation, made unable to end the run). Hooks read
docs through the benchmark's ``view`` (``vdg_tasks.data.benchmarks``), so every benchmark's record has
the same fields.

The frame-sampling setting of a sweep (``$VDG_SAMPLING``: ``frames:N`` or ``fps:F``, set by
``vdg sweep``) makes the held conditions hold K = N key frames, or K = F x duration per video, so a
uniform sampler sees exactly the key frames at every point of the sweep; it is logged as ``sampling``.

A question whose video is missing or cannot be decoded, or whose doc lacks what a text condition
needs, is handed a tiny placeholder clip or its unchanged prompt (so the model and the run go on)
and is logged with ``status = "error"`` and the reason; its answer is never scored. An open-ended
answer is logged with ``status = "open"`` and its text; it is scored by a judge at report time.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger
from msgspec.structs import replace

from vdg_tasks.data.benchmarks import BENCHMARKS, Benchmark, open_prompt
from vdg_tasks.data.export_folder import exported_row_video
from vdg_tasks.data.question_sets import active, active_digest, restrict_ids
from vdg_tasks.lmms.model_classes import calling_model, empty_visual_refusal, use_cache_run
from vdg_tasks.lmms.register import stale_registration_warning
from vdg_tasks.perturb.frames import apply_to_frames, effective_frame_params, frame_count
from vdg_tasks.perturb.provenance import declared_origin, provenance
from vdg_tasks.perturb.text import TextChange, TextUnavailable, idk_letter, numbered_kwargs, numbered_prompt
from vdg_tasks.perturb.text import apply as apply_text
from vdg_tasks.perturb.video_request import (
    RequestError,
    VideoRequest,
    bound_params,
    sampling_label,
    shown_from,
    video_request,
)
from vdg_tasks.vocabulary.conditions import TRANSFORM_VERSION, Condition, registry
from vdg_tasks.vocabulary.parse import LETTERS, parse_answer, parse_number
from vdg_tasks.vocabulary.record import METRIC_KEY, RECORD_KEY, SampleRecord, logged
from vdg_tasks.vocabulary.scoring import JUDGE, counts_as_correct, metric_score, scoring, unit_score
from vdg_tasks.vocabulary.untrusted import redact

#: Longest open-ended reply kept in the record (characters).
MAX_RESPONSE_CHARS = 8000


@dataclass(frozen=True)
class Visual:
    """What a question's model input resolved to: a file to show, or the reason there is none.

    ``effective_params`` are the condition's parameters as applied to this source (a held condition
    on a source shorter than K frames holds every frame: ``k`` becomes the frame count);
    ``provenance`` says where the pixels came from (``vdg_tasks.perturb.provenance``).
    """

    path: Path | None
    cache_key: str
    error: str | None
    effective_params: Mapping[str, Any] | None = None
    provenance: Mapping[str, Any] | None = None
    #: The frames shown, for a task that gives frames rather than a video file (``Benchmark.frames``).
    frames: tuple[Any, ...] | None = None

    @property
    def none_shown(self) -> bool:
        """The condition shows no video at all (``blind``): not a failure."""
        return self.path is None and self.error is None and self.frames is None


#: What a question is shown under a condition that shows no video.
NO_VIDEO = Visual(None, "", None)


def _describe(exc: BaseException) -> str:
    """An exception as a question's error and a warning say it, secret-looking settings redacted."""
    return redact(f"{type(exc).__name__}: {exc}")


def _warn(message: str) -> None:
    """Log a warning, secret-looking settings redacted (a failure may quote a URL, a header or model args)."""
    logger.warning(redact(message))


@functools.lru_cache(maxsize=65536)
def _resolve(benchmark_name: str, request: VideoRequest) -> Visual:
    # vdg_tasks.perturb.cache (filelock, ~0.06 s) only when a video is resolved, not when lmms-eval imports hooks
    from vdg_tasks.perturb.cache import built_by, materialize

    condition = request.applied
    try:
        result = materialize(request.source, condition, request.video_id)
        effective, stream = shown_from(condition, request.source)
        built = built_by(result.path) if result.key else None
    except Exception as exc:  # any failure is this question's error row, never a dead lmms-eval run
        _warn(f"vdg: {benchmark_name}/{request.condition.name} video {request.video_id}: {exc}")
        return Visual(None, "", _describe(exc))
    origin = provenance(
        result.source_digest,
        condition.name,
        condition.params,
        TRANSFORM_VERSION,
        built,
        source_stream=stream,
        declared=declared_origin(condition),
    )
    return Visual(result.path, result.key, None, effective, origin)


def _exported_visual(info: Mapping[str, Any]) -> Visual:
    """The video of a question evaluated from an export (``doc["vdg_export"]``): no materialization.

    The row is shown its video only when ``video_file`` resolves inside the export (``confined``) and the file's
    sha256 is the one the export's manifest lists; otherwise the question is an error row naming why.
    """
    name, revision = str(info.get("name", "")), str(info.get("revision", ""))
    origin = dict(info.get("provenance") or {})
    origin["export"] = {"name": name, "revision": revision}
    if info.get("error"):
        error = redact(f"in export {name}: {info['error']}")
        return Visual(None, str(info.get("visual_key") or ""), error, None, origin)
    if not info.get("video_file"):
        return Visual(None, "", f"VideoUnavailable: export {name} row names no video_file", None, origin)
    try:
        path = exported_row_video(info)
    except Exception as exc:  # a refused, missing or altered file: this question's error row
        _warn(f"vdg: export {name!r} (revision {revision}): {_describe(exc)}")
        return Visual(None, "", redact(f"{_describe(exc)} (export {name}, revision {revision})"), None, origin)
    effective = info.get("effective_params")
    return Visual(
        path,
        str(info.get("visual_key") or ""),
        None,
        dict(effective) if isinstance(effective, Mapping) else None,
        origin,
    )


def resolve_visual(benchmark: Benchmark, condition: Condition, doc: Mapping[str, Any]) -> Visual:
    """Materialize (or find in the cache, or in the export the doc comes from) the video this
    question is shown under ``condition`` (``NO_VIDEO`` under a condition that shows none)."""
    if not condition.shows_video:  # as video_request: no video is looked at, from an export or not
        return NO_VIDEO
    if benchmark.frames is not None:
        return frame_visual(benchmark, condition, doc)
    exported = doc.get("vdg_export")
    if isinstance(exported, Mapping):
        return _exported_visual(exported)
    try:
        request = video_request(benchmark, condition, doc)
    except RequestError as exc:
        return Visual(None, "", exc.describe())
    if request is None:
        return NO_VIDEO
    return _resolve(benchmark.name, request)


def frame_visual(benchmark: Benchmark, condition: Condition, doc: Mapping[str, Any]) -> Visual:
    """The frames a task that gives frames shows this question under ``condition`` (``vdg_tasks.perturb.frames``),
    or why there are none."""
    # vdg_tasks.perturb.cache (filelock, ~0.06 s) only when frames are shown, not when lmms-eval imports the hooks
    from vdg_tasks.perturb.cache import video_seed

    try:
        view = benchmark.view(doc)
        bound = bound_params(condition, view)  # a sweep's K; an fps setting needs a duration frames lack: an error
        applied = condition.bound(**dict(bound)) if bound else condition
        given = list(benchmark.frames(view)) if benchmark.frames is not None else []
        shown = apply_to_frames(applied, given, video_seed(condition, str(view["videoID"])))
    except Exception as exc:  # the base's lookup, or frames the condition cannot take: this question's error row
        return Visual(None, "", _describe(exc))
    origin: dict[str, Any] = {"frames": frame_count(given), "from": f"{benchmark.name}'s doc_to_visual"}
    declared = declared_origin(condition)
    if declared is not None:
        origin["declared"] = declared
    return Visual(None, "", None, effective_frame_params(applied, frame_count(given)), origin, tuple(shown))


#: (benchmark, condition, question id) -> what the model class that last asked for the visual of a question a
#: condition shows no video was handed: None (nothing), or why it got the placeholder clip instead
#: (``vdg_tasks.lmms.model_classes``), which ``process_results`` logs as an error. Each ask replaces the entry, so
#: a second model of one process (``lmms-eval --config`` with several) is judged on its own class.
_SHOWN_FOR_NONE: dict[tuple[str, str, str], str | None] = {}


def _question_key(benchmark: Benchmark, condition: Condition, doc: Mapping[str, Any]) -> tuple[str, str, str]:
    return benchmark.name, condition.name, str(benchmark.view(doc).get("question_id", ""))


#: (benchmark, condition, question id) -> what a task that gives frames showed the question (its frames left out:
#: ``process_results`` needs only the outcome, and frames held for every question until then would fill memory),
#: so that its frames are decoded once. Taken out when read.
_FRAMES_SHOWN: dict[tuple[str, str, str], Visual] = {}


def shown_visual(benchmark: Benchmark, condition: Condition, doc: Mapping[str, Any]) -> Visual:
    """``resolve_visual``, except that a question the model class could not be shown without a video
    (``doc_to_visual`` handed it the placeholder) is an error with the reason."""
    shown = _FRAMES_SHOWN.pop(_question_key(benchmark, condition, doc), None) if benchmark.frames else None
    visual = shown if shown is not None else resolve_visual(benchmark, condition, doc)
    if condition.shows_video and shown is None and visual.error is None and visual.path is None and not visual.frames:
        return dataclasses.replace(visual, error=no_video_shown(benchmark, condition))
    if not visual.none_shown:
        return visual
    key = _question_key(benchmark, condition, doc)
    if key not in _SHOWN_FOR_NONE and use_cache_run():
        return Visual(
            None,
            "",
            "NotAsked: the reply came from lmms-eval's request cache (--use_cache), so which model class "
            "answered, and whether it took a request without a visual, is unknown here; rerun without --use_cache",
        )
    refused = _SHOWN_FOR_NONE.get(key)
    if refused is not None:
        return Visual(None, "", f"NoVisualRefused: {refused}; it was shown a placeholder clip, not scored")
    return visual


def no_video_shown(benchmark: Benchmark, condition: Condition) -> str:
    """The error of a question shown no video (no file, no frames) under a condition that shows one."""
    return (
        f"NoVideoShown: {benchmark.name}/{condition.name} shows a video, but this question resolved to no file and "
        "no frames; its answer is not that condition's answer"
    )


def make_doc_to_visual(benchmark: Benchmark, condition: Condition) -> Callable[[dict], list[str]]:
    def doc_to_visual(doc: dict) -> list[str]:
        # Never raises: an exception here would end the user's whole lmms-eval run.
        # vdg_tasks.perturb.cache (filelock, ~0.06 s) only for a placeholder, not when lmms-eval imports the hooks
        from vdg_tasks.perturb.cache import placeholder_video

        try:
            visual = resolve_visual(benchmark, condition, doc)
            if visual.none_shown:
                refused = empty_visual_refusal(calling_model())
                _SHOWN_FOR_NONE[_question_key(benchmark, condition, doc)] = refused
                if refused is None:
                    return []
                _warn(f"vdg: {benchmark.name}/{condition.name}: {refused}; the question is an error row")
                visual = Visual(None, "", refused)
        except Exception as exc:
            _warn(f"vdg: {benchmark.name}/{condition.name}: {_describe(exc)}")
            visual = Visual(None, "", _describe(exc))
        if visual.frames is not None and condition.shows_video and not visual.frames:
            # no frame at all is no video: the placeholder, and process_results logs the question as an error
            visual = Visual(None, "", no_video_shown(benchmark, condition))
        if visual.frames is not None:
            _FRAMES_SHOWN[_question_key(benchmark, condition, doc)] = dataclasses.replace(visual, frames=())
            return list(visual.frames)
        return [str(visual.path if visual.path is not None else placeholder_video())]

    doc_to_visual.__name__ = f"{benchmark.name}__{condition.name}__doc_to_visual"
    return doc_to_visual


def numbered_question(benchmark: Benchmark, doc: Mapping[str, Any], kwargs: Mapping[str, Any] | None) -> str:
    """The ``numbered`` prompt of ``doc``: the benchmark's own, its settings naming numbers, its labels numbered.

    Raises:
        TextUnavailable: its letters cannot be numbered without touching the question (``numbered_prompt``).
    """
    lettered = benchmark.prompt(doc, numbered_kwargs(kwargs))
    try:
        return numbered_prompt(lettered, str(doc.get("question", "")), list(doc.get("options") or []))
    except TextUnavailable as exc:
        raise TextUnavailable(f"question {doc.get('question_id', '?')}: {exc}") from None


def text_change(condition: Condition, doc: Mapping[str, Any], benchmark: Benchmark | None = None) -> TextChange | str:
    """The question as ``condition`` changes it, or the reason it cannot (an error string); with ``benchmark``, a
    ``numbered`` question whose prompt cannot be numbered is such a reason too."""
    try:
        change = apply_text(condition, doc)
        if benchmark is not None and condition.answer_format == "number":
            numbered_question(benchmark, change.doc, None)
        return change
    except TextUnavailable as exc:
        return f"TextUnavailable: {exc}"
    except Exception as exc:
        return f"changing the question failed: {_describe(exc)}"


def make_doc_to_text(benchmark: Benchmark, condition: Condition) -> Callable[..., str]:
    def doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
        # Never raises: a question the condition cannot change is asked unchanged and logged as an error.
        try:
            view = benchmark.view(doc)
            change = text_change(condition, view)
            if isinstance(change, str):
                _warn(f"vdg: {benchmark.name}/{condition.name}: {change}")
                return benchmark.prompt(view, lmms_eval_specific_kwargs)
            if condition.answer_format == "open":
                return open_prompt(benchmark, change.doc, lmms_eval_specific_kwargs)
            if condition.answer_format == "number":  # the benchmark's own layout, its letters then numbered
                try:
                    return numbered_question(benchmark, change.doc, lmms_eval_specific_kwargs)
                except TextUnavailable as exc:
                    _warn(f"vdg: {benchmark.name}/{condition.name}: {exc}")
                    return benchmark.prompt(view, lmms_eval_specific_kwargs)
            return benchmark.prompt(change.doc, lmms_eval_specific_kwargs)
        except Exception as exc:
            _warn(f"vdg: {benchmark.name}/{condition.name}: building the prompt failed: {_describe(exc)}")
            return str(doc.get("question", "")) if isinstance(doc, Mapping) else ""

    doc_to_text.__name__ = f"{benchmark.name}__{condition.name}__doc_to_text"
    return doc_to_text


#: How lmms-eval's API model classes answer a request that failed after their retries, or that was
#: never sent because the token budget (``--max_tokens``) was spent: not answers, so never scored.
NOT_ANSWERED_MARKS = {"[LMMS_EVAL_REQUEST_FAILED": "RequestFailed", "[LMMS_EVAL_BUDGET_EXCEEDED": "BudgetExceeded"}


def request_failure(response: str | None) -> str | None:
    """The reason when ``response`` is not an answer but one of lmms-eval's markers (``NOT_ANSWERED_MARKS``)."""
    text = "" if response is None else str(response).strip()
    for mark, kind in NOT_ANSWERED_MARKS.items():
        if text.startswith(mark):
            return f"{kind}: {text[:500]}"
    return None


def _duration_s(doc: Mapping[str, Any]) -> float | None:
    try:
        value = float(doc["duration_s"])
    except (KeyError, TypeError, ValueError):
        return None
    return value if value >= 0 else None


def _question_set(benchmark: Benchmark) -> str:
    return active_digest(benchmark.report_name)


def build_record(
    benchmark: Benchmark,
    condition: Condition,
    raw: Mapping[str, Any],
    response: str | None,
    visual: Visual,
    native: Mapping[str, Any] | str | None = None,
) -> dict[str, Any]:
    """The logged sample (``vdg_tasks.vocabulary.record``): everything the per-question join needs, nothing it must
    infer. ``native``: the base task's own ``process_results`` output (a ``metric:<key>`` scoring reads its score
    there), or why it failed.
    """
    doc = benchmark.view(raw)
    change = text_change(condition, doc, benchmark)
    original_options = list(doc.get("options") or [])
    options = list(change.doc.get("options") or []) if isinstance(change, TextChange) else original_options
    # The options the question was asked with (abstain adds one; open asks with none, so its question's own);
    # None when the doc has none: the report infers the count (postprocess.reading.answer_options), and the reply is
    # read
    # against every letter the parser knows.
    n_options = len(options) or len(original_options) or None
    record = SampleRecord(
        benchmark=benchmark.report_name,
        condition=condition.name,
        condition_params=condition.params_dict(),
        effective_params=dict(visual.effective_params) if visual.effective_params is not None else None,
        transform_version=TRANSFORM_VERSION,
        question_id=str(doc["question_id"]),
        video_id=str(doc["videoID"]),
        task_type=str(doc.get("task_type", "")),
        duration=str(doc.get("duration", "")),
        domain=str(doc.get("domain", "") or ""),
        sub_category=str(doc.get("sub_category", "") or ""),
        n_options=n_options,
        answer=str(doc["answer"]),
        visual_key=visual.cache_key,
        provenance=dict(visual.provenance) if visual.provenance is not None else None,
        character=str(doc.get("character") or ""),
        idk_letter=idk_letter(original_options),
        duration_s=_duration_s(doc),
        sampling=sampling_label(),
        question_set=_question_set(benchmark),
        status="error",
    )
    if isinstance(change, TextChange):
        record = replace(record, **change.details)
    error = visual.error if visual.error is not None else (change if isinstance(change, str) else None)
    graded = benchmark.graded
    if error is None and not record.answer and condition.answer_format != "open":
        listed = "its options" if options else "its options, and it lists none (no options field, no lettered lines)"
        error = f"NoAnswer: question {record.question_id} has no ground-truth answer" + (
            " as text (none, or a list or mapping)" if graded else f" among {listed}"
        )
    if error is None:
        error = request_failure(response)
    if error is not None:
        return logged(replace(record, status="error", error=error))
    text = "" if response is None else str(response)
    if condition.answer_format == "open":
        question = str(change.doc.get("question", "")) if isinstance(change, TextChange) else ""
        return logged(
            replace(record, status="open", scoring=JUDGE, question=question, response=text[:MAX_RESPONSE_CHARS])
        )
    if graded:
        return logged(graded_record(benchmark.scoring, record, doc, text, native, benchmark.aggregate_one))
    read = parse_number if condition.answer_format == "number" else parse_answer
    parsed = read(response, n_options=n_options or len(LETTERS), options=options or None)
    correct = parsed.letter == record.answer
    scored = replace(
        record,
        pred=parsed.letter,
        parse_status=parsed.status,
        parse_rule=parsed.rule,
        status=parsed.status,
        correct=correct,
        score=float(correct),
    )
    return logged(scored)


def graded_record(
    name: str,
    record: SampleRecord,
    doc: Mapping[str, Any],
    reply: str,
    native: Mapping[str, Any] | str | None,
    aggregate_one: Callable[[Any], Any] | None = None,
) -> SampleRecord:
    """The record of a graded answer (``vdg_tasks.vocabulary.scoring``): for the judge, the question, reply and
    reference answer, ``open`` until judged; for a base metric, its score (``aggregate_one``: the base's aggregation
    over one question, for a ``mean:`` scoring), or an error row naming why there is none."""
    response = reply[:MAX_RESPONSE_CHARS]
    if name == JUDGE:
        question = str(doc.get("question", ""))
        return replace(record, status="open", scoring=JUDGE, question=question, response=response, truth=record.answer)
    how = scoring(name)
    key = how.metric_key
    try:
        if not isinstance(native, Mapping):
            raise ValueError(f"its process_results failed ({native})" if native else "it has no process_results")
        if how.of_one_question:
            score = unit_score(key, _aggregated_alone(key, native, aggregate_one), how.divisor)
        else:
            score = metric_score(key, dict(native))
    except ValueError as exc:
        return replace(record, status="error", scoring=name, response=response, error=f"NoScore: {exc}")
    return replace(record, status="ok", scoring=name, response=response, score=score, correct=counts_as_correct(score))


def _aggregated_alone(key: str, native: Mapping[str, Any], aggregate_one: Callable[[Any], Any] | None) -> Any:
    """The base's aggregation of ``key`` over this one question.

    Raises:
        ValueError: no such key, no aggregation, or the aggregation failed (the message says which).
    """
    if key not in native:
        raise ValueError(f"its process_results gave no {key!r} (it gave {', '.join(map(str, native))})")
    if aggregate_one is None:
        raise ValueError(f"no aggregation of {key!r} to apply")
    try:
        return aggregate_one(native[key])
    except Exception as exc:  # the base's own code: its failure is this question's error row
        raise ValueError(f"its aggregation of {key!r} failed on this question: {_describe(exc)}") from None


def _failed_record(benchmark: Benchmark, condition: Condition, doc: Any, exc: BaseException) -> dict[str, Any]:
    """The record of a question whose record could not be built (a malformed doc): an error row."""
    try:
        doc = benchmark.view(doc)
    except Exception:  # the raw doc's own fields, then
        pass
    get = doc.get if isinstance(doc, Mapping) else (lambda key, default=None: default)
    record = SampleRecord(
        benchmark=benchmark.report_name,
        condition=condition.name,
        condition_params=condition.params_dict(),
        transform_version=TRANSFORM_VERSION,
        question_id=str(get("question_id", "")),
        video_id=str(get("videoID", "")),
        task_type=str(get("task_type", "")),
        duration=str(get("duration", "")),
        domain=str(get("domain", "") or ""),
        sub_category=str(get("sub_category", "") or ""),
        answer=str(get("answer", "")),
        character=str(get("character", "") or ""),
        sampling=sampling_label(),
        status="error",
        error=f"building the record failed: {_describe(exc)}",
    )
    return logged(record)


def metric_value(record: Mapping[str, Any]) -> float | None:
    """vdg's per-question ``accuracy`` metric of a record: its score (1.0 or 0.0 for a letter), None for an error
    or an answer not yet judged."""
    score = record.get("score")
    return None if record["status"] in ("error", "open") or score is None else float(score)


def make_process_results(benchmark: Benchmark, condition: Condition) -> Callable[..., dict[str, Any]]:
    def process_results(doc: dict, results: list[str], **_: Any) -> dict[str, Any]:
        # Never raises: an exception here would end the user's whole lmms-eval run.
        native: dict[str, Any] | str | None = None
        if benchmark.native_results is not None and condition.modality == "video":
            try:
                native = dict(benchmark.native_results(doc, results))
            except Exception as exc:  # the benchmark's own scorer: its failure costs only its own metric
                native = _describe(exc)
                _warn(f"vdg: {benchmark.name} native process_results failed: {native}")
        try:
            visual = shown_visual(benchmark, condition, doc)
            response = results[0] if results else None
            record = build_record(benchmark, condition, doc, response, visual, native)
        except Exception as exc:
            _warn(f"vdg: {benchmark.name}/{condition.name}: {_describe(exc)}")
            record = _failed_record(benchmark, condition, doc, exc)
        out: dict[str, Any] = {RECORD_KEY: record, METRIC_KEY: metric_value(record)}
        if isinstance(native, dict) and record["status"] != "error":
            out.update(native)
        return out

    process_results.__name__ = f"{benchmark.name}__{condition.name}__process_results"
    return process_results


def make_process_docs(benchmark: Benchmark) -> Callable[[Any], Any]:
    def process_docs(dataset: Any) -> Any:
        # The questions of $VDG_QUESTION_SET when one is selected for this benchmark. A set that cannot be
        # read, or keeps none of the questions, raises here, while lmms-eval builds the task and before
        # anything is evaluated: a run on the wrong questions would be worse than none.
        chosen = active(benchmark.report_name)
        if chosen is None:
            return dataset
        ids = [str(benchmark.view(doc)["question_id"]) for doc in dataset]
        keep = restrict_ids(ids, benchmark.report_name, chosen)
        kept = dataset.select([i for i, k in enumerate(keep) if k])
        logger.info(f"vdg: {benchmark.name}: {len(kept)} of {len(ids)} questions, question set {chosen.digest}")
        return kept

    process_docs.__name__ = f"{benchmark.name}__process_docs"
    return process_docs


def call_aggregation(upstream: Callable[..., Any], results: list[Any], args: Any = None) -> Any:
    """``upstream(results)``, as lmms-eval calls an aggregation: with ``args`` when its signature names it."""
    if "args" in inspect.signature(upstream).parameters:
        return upstream(results, args=args)
    return upstream(results)


def make_aggregation(benchmark: Benchmark, metric: str, function: str) -> Callable[..., Any]:
    """lmms-eval's own aggregation of ``metric`` (``function``, a dotted path), returning NaN where it fails."""

    def aggregate(results: list[Any], args: Any = None) -> Any:
        # Never raises: lmms-eval aggregates before it writes any sample, so an exception here loses the run.
        try:
            module, _, name = function.rpartition(".")
            return call_aggregation(getattr(importlib.import_module(module), name), results, args)
        except Exception as exc:
            _warn(f"vdg: {benchmark.name} native aggregation {metric} failed, NaN: {_describe(exc)}")
            return float("nan")

    aggregate.__name__ = aggregation_name(benchmark.name, metric)
    return aggregate


def aggregate_accuracy(scores: list[float | None]) -> float:
    """Accuracy over the questions that were answered (``error`` rows, logged as None, are never scored)."""
    scored = [s for s in scores if s is not None]
    if not scored:
        return float("nan")
    return sum(scored) / len(scored)


def hook_name(benchmark: str, condition: str, hook: str) -> str:
    return f"{benchmark}__{condition}__{hook}"


def aggregation_name(benchmark: str, metric: str) -> str:
    return f"{benchmark}__{metric}__aggregation"


def _generate_hooks() -> dict[str, Callable[..., Any]]:
    hooks: dict[str, Callable[..., Any]] = {}
    for bench in BENCHMARKS.values():
        hooks[f"{bench.name}__process_docs"] = make_process_docs(bench)
        for metric, function in bench.upstream.metrics if bench.upstream else ():
            hooks[aggregation_name(bench.name, metric)] = make_aggregation(bench, metric, function)
        for cond in bench.conditions():
            hooks[hook_name(bench.name, cond.name, "doc_to_visual")] = make_doc_to_visual(bench, cond)
            hooks[hook_name(bench.name, cond.name, "process_results")] = make_process_results(bench, cond)
            if cond.modality == "text":
                hooks[hook_name(bench.name, cond.name, "doc_to_text")] = make_doc_to_text(bench, cond)
    return hooks


globals().update(_generate_hooks())


def _warn_of_conditions_left_out() -> None:
    # A user's module that failed, or a name already taken: that condition has no hooks; the run goes on without it.
    for problem in registry().problems:
        logger.warning(f"vdg: {problem}")


_warn_of_conditions_left_out()


def _warn_if_registration_is_stale() -> None:
    # Registered copies (`vdg register`) do not follow an upgrade of vdg: say so once per process.
    try:
        message = stale_registration_warning()
    except Exception:  # a warning only; never in the way of a run
        return
    if message:
        logger.warning(message)


_warn_if_registration_is_stale()
