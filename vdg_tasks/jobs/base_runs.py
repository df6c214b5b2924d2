"""The standard run as ``orig``: a plain lmms-eval run of a benchmark's base task, read as vdg's orig condition.

A user has usually run the standard task already (``lmms-eval --tasks videomme --log_samples``). Its samples
log holds the model's replies to the same prompts vdg's ``orig`` task asks (vdg's orig prompt is the base
task's), so ``vdg report`` can take it as orig instead of a second GPU pass. lmms-eval 0.7.3 saves no doc with a
sample and a constant ``doc_hash``, so each line is matched to its question by the question id the base task's
own metric record carries where it has one (Video-MME's ``videomme_perception_score``), else by ``doc_id``, the
position in the base task's docs loaded exactly as lmms-eval loads them (its ``TaskManager``, the task's
``eval_docs``). A file whose line count differs from the docs, or a line whose logged ``target`` is not its
question's answer, is refused: the docs are not the ones the run was made on.

Each line becomes the record vdg's own orig hook would have logged (``vdg_tasks.lmms.hooks.build_record``: the
reply re-parsed with vdg's parser), written one line per line of the base log into a samples log of the
benchmark's ``orig`` task, beside a copy of the run's results file that names the base log
(``BASE_RUN_KEY``): the report reads it as any other run and says where orig came from.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vdg_tasks.data.benchmarks import BENCHMARKS, Benchmark, task_name
from vdg_tasks.data.upstream import Function, lmms_eval_tasks_dir, load_config
from vdg_tasks.lmms.derive_spec import SPEC_FILE, DeriveSpec, answer_letter, derived_benchmark, native_name
from vdg_tasks.lmms.hooks import Visual, build_record, metric_value
from vdg_tasks.vocabulary.conditions import CONDITIONS
from vdg_tasks.vocabulary.record import (
    BASE_RUN_KEY,
    METRIC_KEY,
    RECORD_KEY,
    SAMPLES_FILE,
    LogTooLarge,
    holds_vdg_records,
    log_bytes,
)

#: The functions that make two task configs the same task (a copy of a built-in under another name, a stand-in).
_IDENTITY = ("doc_to_visual", "doc_to_text", "process_results")
#: Shown to the model: the base run's video, not looked at again (it need not exist where the report runs).
_NOT_LOOKED_AT = Visual(None, "", None)


class BaseRunError(ValueError):
    """A base-task samples log that cannot stand in for orig (the message names the file and line)."""


@dataclass(frozen=True)
class BaseTask:
    """An lmms-eval task whose plain run can stand for a vdg benchmark's orig."""

    task: str
    benchmark: Benchmark


def logged_task(samples: Path) -> str:
    """The task an lmms-eval samples log is of (``<stamp>_samples_<task>.jsonl``); "" for another name."""
    match = SAMPLES_FILE.match(samples.name)
    return match["task"] if match else ""


def _identity(config: Mapping[str, Any]) -> tuple[str, ...] | None:
    functions = tuple(str(config.get(key, "")) for key in _IDENTITY)
    return functions if all(isinstance(config.get(key), Function) for key in _IDENTITY) else None


@functools.cache
def _builtin_bases() -> dict[str, Benchmark]:
    """lmms-eval task name -> the built-in benchmark whose vdg tasks copy it."""
    bases: dict[str, Benchmark] = {}
    for benchmark in BENCHMARKS.values():
        if benchmark.upstream is not None:
            config = load_config(lmms_eval_tasks_dir() / benchmark.upstream.folder / benchmark.upstream.config)
            bases[str(config.get("task", ""))] = benchmark
    return bases


def derived_bases(folders: Iterable[Path]) -> dict[str, Benchmark]:
    """Base task -> its derived benchmark, for every ``vdg derive`` output folder in ``folders``."""
    found: dict[str, Benchmark] = {}
    for folder in folders:
        specs = sorted(Path(folder).glob(f"*/{SPEC_FILE}"))
        if not specs:
            raise BaseRunError(f"--derived {folder}: no */{SPEC_FILE} (the folder `vdg derive TASK --out` writes)")
        for path in specs:
            spec = DeriveSpec.from_json(path.read_text(encoding="utf-8"))
            found[spec.task] = derived_benchmark(spec)
    return found


def base_task(task: str, derived: Mapping[str, Benchmark], manager: Any) -> BaseTask | None:
    """The benchmark whose orig a run of lmms-eval task ``task`` stands for: a built-in's base task, a derived
    task's base, or a task with the same prompt builder, video lookup and scorer as a built-in's base (a copy
    under another name); None for any other task."""
    if task in derived:
        return BaseTask(task, derived[task])
    builtin = _builtin_bases()
    if task in builtin:
        return BaseTask(task, builtin[task])
    entry = manager.task_index.get(task) if manager is not None else None
    if not entry or entry.get("type") != "task":
        return None
    same = _identity(load_config(Path(entry["yaml_path"])))
    for name, benchmark in builtin.items():
        if same is not None and same == _identity(load_config(Path(manager.task_index[name]["yaml_path"]))):
            return BaseTask(task, benchmark)
    return None


def base_docs(task: str, manager: Any) -> list[dict[str, Any]]:
    """The docs of lmms-eval task ``task`` in ``doc_id`` order, loaded as lmms-eval loads them for a run."""
    # lmms_eval's task loading (datasets; seconds) only when a base run is read
    from lmms_eval.tasks import get_task_dict

    def tasks_in(value: Any) -> Iterable[Any]:
        if isinstance(value, Mapping):
            for inner in value.values():
                yield from tasks_in(inner)
        elif hasattr(value, "eval_docs"):
            yield value

    found = [t for t in tasks_in(get_task_dict([task], manager)) if getattr(t.config, "task", None) == task]
    if len(found) != 1:
        raise BaseRunError(f"lmms-eval task {task}: its docs could not be loaded ({len(found)} tasks of that name)")
    return [dict(doc) for doc in found[0].eval_docs]


def _question_id_logged(line: Mapping[str, Any]) -> str | None:
    """The question id a base task's own metric record carries (``videomme_perception_score``), if any."""
    for value in line.values():
        if isinstance(value, Mapping) and value.get("question_id") not in (None, ""):
            return str(value["question_id"])
    return None


def _reply(line: Mapping[str, Any]) -> str | None:
    value = line.get("filtered_resps", line.get("resps"))
    while isinstance(value, list) and value:
        value = value[0]
    return None if value is None or isinstance(value, list) else str(value)


#: The fields lmms-eval itself writes on a samples-log line; the others are the task's per-question metrics.
_LOG_FIELDS = frozenset(
    {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "doc_hash", "prompt_hash", "target_hash",
     "input", "metadata", "filter"}
)  # fmt: skip


def _target_is_answer(target: Any, view: Mapping[str, Any], graded: bool) -> bool:
    """Whether a line's logged ``target`` is the answer of the question it is matched to: the same letter, or for a
    graded question the same reference text (a structured one, which the record refuses anyway, is not compared)."""
    if not graded:
        return answer_letter(target, view["options"]) == view["answer"]
    return not view["answer"] or str(target).strip() == view["answer"]


def orig_lines(samples: Path, base: BaseTask, docs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One vdg orig sample per line of the base task's samples log ``samples``.

    Raises:
        BaseRunError: the log and the docs differ in count, a line names no doc, or its target is not the
            doc's answer (each naming the file and line).
    """
    benchmark, condition = base.benchmark, CONDITIONS["orig"]
    views = [benchmark.view(doc) for doc in docs]
    by_id = {str(view["question_id"]): i for i, view in enumerate(views)}
    try:
        raw = log_bytes(samples).decode("utf-8").splitlines()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, LogTooLarge) as exc:
        raise BaseRunError(f"{samples}: cannot be read as a samples log ({exc})") from None
    numbered = [(n, line) for n, line in enumerate(raw, start=1) if line.strip()]
    if len(numbered) != len(docs):
        raise BaseRunError(
            f"{samples}: {len(numbered)} samples, but lmms-eval's {base.task} has {len(docs)} docs here: the run "
            "was made on other docs (another dataset version, --limit, a question set) and cannot be matched"
        )
    out = []
    matched: dict[int, str] = {}
    for number, text in numbered:
        where = f"{samples}:{number}"
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BaseRunError(f"{where}: not JSON ({exc.msg})") from None
        logged_id = _question_id_logged(line)
        try:  # the base's own question id where vdg's view has it, else the position
            index = by_id[logged_id] if logged_id in by_id else int(line["doc_id"])
            doc, view = docs[index], views[index]
        except (KeyError, ValueError, TypeError, IndexError):
            raise BaseRunError(
                f"{where}: doc_id {line.get('doc_id')!r} (question id {logged_id!r}) is no doc of lmms-eval's "
                f"{base.task} here"
            ) from None
        if index in matched:
            raise BaseRunError(
                f"{where}: question {view['question_id']} is matched a second time (first at {matched[index]})"
            )
        matched[index] = where
        target = line.get("target")
        if not _target_is_answer(target, view, graded=benchmark.graded):
            raise BaseRunError(
                f"{where}: the logged target {target!r} is not the answer {view['answer']!r} of question "
                f"{view['question_id']}: the run was made on other docs"
            )
        # the base's own per-question metrics, logged on the line: a graded task's score (``metric:<key>``)
        native = {native_name(str(k)): v for k, v in line.items() if k not in _LOG_FIELDS}
        record = build_record(benchmark, condition, doc, _reply(line), _NOT_LOOKED_AT, native)
        record |= {"question_set": "", "sampling": "", "provenance": {"base_run": where, "task": base.task}}
        kept = {k: v for k, v in line.items() if k not in (RECORD_KEY, METRIC_KEY)}
        out.append({**kept, RECORD_KEY: record, METRIC_KEY: metric_value(record)})
    return out


def convert(
    samples: Path, results: Mapping[str, Any], base: BaseTask, docs: Sequence[Mapping[str, Any]], out_dir: Path
) -> Path:
    """Write ``samples`` as the benchmark's orig samples log under ``out_dir``, beside a copy of its run's
    ``results`` (lmms-eval's results file, read) naming the base log; return the new samples log."""
    match = SAMPLES_FILE.match(samples.name)
    if match is None:
        raise BaseRunError(f"{samples}: not an lmms-eval samples file (<stamp>_samples_<task>.jsonl)")
    lines = orig_lines(samples, base, docs)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{match['stamp']}_samples_{task_name(base.benchmark.name, 'orig')}.jsonl"
    target.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    named = {BASE_RUN_KEY: {"samples": str(samples), "task": base.task, "benchmark": base.benchmark.report_name}}
    (out_dir / f"{match['stamp']}_results.json").write_text(json.dumps({**results, **named}, indent=1))
    return target


def as_orig(
    logs: Sequence[tuple[str | None, Path]],
    results_of: Callable[[Path], Mapping[str, Any]],
    work_dir: Path,
    include_path: str | None = None,
    derived: Sequence[Path] = (),
    manager: Any = None,
) -> tuple[list[tuple[str | None, Path]], list[str]]:
    """``logs`` (label, samples log) with each plain run of a base task vdg knows converted into an orig log under
    ``work_dir`` (``results_of``: a samples log's results file, read); and one line per converted log saying so.
    Logs of vdg's tasks, and of tasks vdg does not know, are passed on as they are (the reader names the latter).
    """
    bases = derived_bases(derived) if derived else {}
    out: list[tuple[str | None, Path]] = []
    notes: list[str] = []
    for number, (label, samples) in enumerate(logs):
        base = None
        if not holds_vdg_records(samples):
            if manager is None:
                from vdg_tasks.lmms.derive import task_manager  # lmms-eval's task index (seconds) only now

                manager = task_manager(include_path)
            base = base_task(logged_task(samples), bases, manager)
        if base is None:
            out.append((label, samples))
            continue
        docs = base_docs(base.task, manager)
        out.append((label, convert(samples, results_of(samples), base, docs, work_dir / f"{number:04d}")))
        notes.append(
            f"orig of {base.benchmark.report_name} from {samples} (a plain run of lmms-eval's {base.task}: "
            "the base task's prompt, replies re-parsed by vdg)"
        )
    return out, notes


__all__ = [
    "BaseRunError",
    "BaseTask",
    "as_orig",
    "base_docs",
    "base_task",
    "convert",
    "derived_bases",
    "logged_task",
    "orig_lines",
]
