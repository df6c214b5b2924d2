"""``vdg derive``: vdg's condition tasks for any lmms-eval video task: multiple choice (scored by the letter), without
options (graded: ``vdg_tasks.vocabulary.scoring``), on a video file or on the frames its ``doc_to_visual`` decodes.

``vdg derive BASE_TASK --out DIR`` reads the base task's config as data (``vdg_tasks.data.upstream``),
finds the doc fields holding the question id, options, answer, video id, task type and question
(read from the source of its prompt builder, video lookup and scorer, or given), and writes
``DIR/<base>/``:

- ``_default_template_yaml``: the base config (functions absolute) minus what vdg replaces, with
  vdg's ``process_docs`` (the base's own, then vdg's question-set filter) and metric list, and its dataset
  fields named ``vdg_derived.dataset_path`` (...), looked up when lmms-eval loads the task: the base's dataset or a
  local copy in ``$VDG_LOCAL_DATA``, and vdg's message where the base needs an environment variable that is not
  set or a dataset that is not there (:mod:`vdg_tasks.lmms.derive_data`);
- ``<base>_vdg_<condition>.yaml``: one leaf per condition, tagged ``<base>_vdg`` and
  ``<base>_vdg_<family>`` (and ``<group>_vdg...`` for a group's members);
- ``vdg_derive.json`` (the :class:`DeriveSpec`) and ``vdg_derived.py``, the module the leaves name:
  it holds no logic, only the hooks :func:`hooks_for` builds from the spec with the factories of
  ``vdg_tasks.hooks`` over :func:`derived_benchmark`, and the dataset fields (:func:`dataset_field`);
- ``README.md``.

Deriving executes nothing of the base task: its module is read as text. A task that cannot be
derived (not ``generate_until``, images and no video, no answer field, a corpus-level or grounding metric and no
options, an unknown name) raises :class:`DeriveError` naming the task and the reason.

This module plans (which tasks, fields and conditions); :mod:`vdg_tasks.lmms.derive_files` writes the folder; the
spec and the hooks' run-time side are in :mod:`vdg_tasks.lmms.derive_spec`, the dataset fields' in
:mod:`vdg_tasks.lmms.derive_data`, the reading of the base's source in :mod:`vdg_tasks.lmms.derive_source`.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import json
import os
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from loguru import logger

from vdg_tasks.data.upstream import load_config
from vdg_tasks.lmms.derive_data import BaseUnavailable, dataset_config, dataset_field
from vdg_tasks.lmms.derive_files import check_names, write
from vdg_tasks.lmms.derive_source import (
    KNOWN_FIELDS,
    base_sources,
    closure_text,
    detect_fields,
    doc_keys,
    is_fn,
    names_a_field,
    offline_safe,
    returns_constant,
)
from vdg_tasks.lmms.derive_spec import (
    ALTERNATIVE,
    DEFAULT_FRAME_FOLDER_FPS,
    IN_TEXT,
    LETTERED,
    NUMBERED,
    PROMPT_FIELD,
    PROVIDES,
    DeriveError,
    DeriveSpec,
    Fields,
    answer_letter,
    derived_benchmark,
    field_marker,
    hooks_for,
    native_name,
    read_options,
    refusal,
    write_options,
)
from vdg_tasks.perturb.frames import FRAME_TRANSFORMS
from vdg_tasks.vocabulary.conditions import CONDITIONS, conditions_for, families, get_condition
from vdg_tasks.vocabulary.scoring import JUDGE, LETTER, MEAN_PREFIX, METRIC_PREFIX, PERCENT_SUFFIX

__all__ = [
    "BaseUnavailable",
    "DeriveError",
    "DeriveSpec",
    "Fields",
    "answer_letter",
    "dataset_field",
    "derive",
    "derived_benchmark",
    "detect_fields",
    "hooks_for",
    "plan",
    "read_options",
    "task_manager",
    "write_options",
]

#: In a doc_to_visual (or what it calls): it decodes frames or images instead of returning a video path.
_FRAME_MARKERS = ("VideoReader", "Image.fromarray", "Image.open", ".get_batch(", "cv2.", ".asnumpy(", "torchvision.io")
#: In a doc_to_visual that reads no video: it returns images (an image task).
_IMAGE_MARKERS = (".convert(", "Image.", "PIL")


# --- planning: which tasks, which fields, which conditions --------------------------------------------


def resolve_conditions(names: Sequence[str] | None) -> tuple[str, ...]:
    """Condition names and family tags (``ladder``, ``crf``, ``text``) -> the derived conditions, in
    declaration order; None or empty: every condition derived tasks provide for (a task that gives frames then takes
    the ``jpeg`` ladder in place of ``crf``: ``compression_for_frames``)."""
    offered = [c.name for c in conditions_for(PROVIDES | {"frames"})]
    if not names:
        return tuple(offered)
    chosen: set[str] = set()
    for name in (n.strip() for n in names if n.strip()):
        family = families().get(name)
        if family is not None:
            if not set(family) & set(offered):
                raise DeriveError(f"condition family {name!r} has no condition derived tasks provide for")
            chosen |= set(family) & set(offered)
            continue
        try:
            cond = get_condition(name)
        except KeyError as exc:
            raise DeriveError(str(exc.args[0])) from None
        if cond.name not in offered:
            needs = ", ".join(sorted(cond.requires - PROVIDES))
            raise DeriveError(
                f"condition {name!r} needs {needs}, which derived tasks do not provide "
                f"(they offer {', '.join(offered)})"
            )
        chosen.add(cond.name)
    return tuple(c for c in offered if c in chosen)


def task_manager(include_path: str | os.PathLike[str] | None) -> Any:
    """lmms-eval's ``TaskManager`` over its own tasks and ``include_path``: the task index (seconds to build)."""
    # lmms_eval's TaskManager (~2 s) only when `vdg derive` reads the task index, not on the hooks' import
    from lmms_eval.tasks import TaskManager

    logger.info("vdg derive: reading lmms-eval's task index (its YAMLs: some seconds)...")
    started = time.monotonic()
    logger.disable("lmms_eval")  # its indexing logs one DEBUG line per non-task YAML
    try:
        manager = TaskManager(verbosity="ERROR", include_path=str(include_path) if include_path else None)
    finally:
        logger.enable("lmms_eval")
    logger.info(f"vdg derive: {len(manager.task_index)} tasks indexed in {time.monotonic() - started:.1f} s")
    return manager


def _visual_kwargs(config: Mapping[str, Any]) -> dict[str, Any] | None:
    # As lmms-eval resolves them for a model with no entry of its own: the default entry merged in.
    kwargs = config.get("lmms_eval_specific_kwargs")
    if not isinstance(kwargs, Mapping):
        return None
    default = kwargs.get("default")
    return json.loads(json.dumps({**kwargs, **(default if isinstance(default, Mapping) else {})}, default=str))


_ASKS_FOR_A_LETTER = re.compile(
    r"best option|option'?s? letter|letter of the|multiple.choice|\([A-E]\)|\b[A-E], [A-E],? (or|and) [A-E]\b",
    re.IGNORECASE,
)


def _string_literals(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def asks_for_a_letter(config: Mapping[str, Any]) -> bool:
    """Whether the prompt a task sends asks for an option's letter (a multiple-choice task, not an open-ended
    one): the texts of its prompt builder and of its default ``lmms_eval_specific_kwargs`` (of a prompt kept
    per question kind, the kinds its builder names) say "best option", "the option's letter", "(A)", ..."""
    builder = closure_text(str(config["doc_to_text"])) if is_fn(config.get("doc_to_text")) else ""
    literals = _string_literals(builder)
    kwargs = config.get("lmms_eval_specific_kwargs")
    default = kwargs.get("default") if isinstance(kwargs, Mapping) else None
    for value in (default or {}).values() if isinstance(default, Mapping) else ():
        if isinstance(value, str):
            literals.append(value)
        elif isinstance(value, Mapping):  # TempCompass: post_prompt per question kind, picked by the builder
            literals += [str(v) for k, v in value.items() if k in literals]
    return any(_ASKS_FOR_A_LETTER.search(text) for text in literals)


#: Metrics defined only over a whole corpus of answers (n-gram and caption scores): no per-question value. BLEURT,
#: a learned score of each sentence, is not one.
_CORPUS_METRIC = re.compile(r"bleu(?!rt)|cider|meteor|rouge|spice", re.IGNORECASE)
#: A metric that only writes a submission file: no score at all.
_SUBMISSION = "submission"


def corpus_metrics(config: Mapping[str, Any]) -> list[str]:
    """The metrics of a task config named for, or aggregated by, a corpus-level score (BLEU, CIDEr, ...)."""
    found = []
    for entry in config.get("metric_list") or []:
        name, aggregation = str(entry.get("metric", "")), entry.get("aggregation")
        text = name + (closure_text(str(aggregation)) if is_fn(aggregation) else str(aggregation or ""))
        if _CORPUS_METRIC.search(name) or (name != _SUBMISSION and _CORPUS_METRIC.search(text)):
            found.append(name)
    return found


def only_corpus_metrics(config: Mapping[str, Any]) -> list[str]:
    """The corpus-level metrics of a task config whose every scoring metric is corpus-level (a captioning task);
    empty when it has one per question (FunQA's GPT score, CUVA's BLEURT beside their BLEU)."""
    corpus = corpus_metrics(config)
    scoring = [str(e.get("metric", "")) for e in config.get("metric_list") or [] if e.get("metric") != _SUBMISSION]
    return corpus if corpus and set(scoring) <= set(corpus) else []


def optional_options(config: Mapping[str, Any], options: str | None) -> bool:
    """Whether a task's options field is one its prompt builder reads only when a doc has it (``if "options" in
    doc``) while its prompt asks for no letter: MixEval-X's free-form split shares its multiple-choice split's
    builder."""
    build = config.get("doc_to_text")
    if not options or not is_fn(build) or ALTERNATIVE in options or asks_for_a_letter(config):
        return False
    return re.search(rf"""["']{re.escape(options)}["']\s+in\s+doc\b""", closure_text(str(build))) is not None


def text_fields(builder: str, question: str) -> list[str]:
    """The doc fields a prompt builder reads, the question's first: where options written as lettered lines
    can be."""
    keys = [question.split(ALTERNATIVE)[0], *doc_keys(builder)]
    return list(dict.fromkeys(keys))


def analyse(
    task: str,
    yaml_path: str | os.PathLike[str],
    conditions: tuple[str, ...],
    fields: Mapping[str, str | None] | None = None,
    group: str = "",
    frame_folder_fps: float = DEFAULT_FRAME_FOLDER_FPS,
) -> DeriveSpec:
    """The derive spec of one task config (``fields``: given fields, over the detected ones).

    Raises:
        DeriveError: the task cannot be derived (the message says why and what to give).
    """
    config = load_config(Path(yaml_path))
    output_type = config.get("output_type", "generate_until")
    if output_type != "generate_until":
        raise refusal(
            task,
            f"output_type is {output_type} (scored from log-likelihoods); vdg derives generate_until tasks, "
            "whose answer it reads from the model's reply",
            f"output_type {output_type}",
        )
    visual, build = config.get("doc_to_visual"), config.get("doc_to_text")
    if not is_fn(visual):
        raise refusal(task, "it has no doc_to_visual function (not a video task)", "no doc_to_visual")
    code = closure_text(visual)
    images = [m.strip(".(") for m in _IMAGE_MARKERS if m in code]
    if images and "video" not in code.lower():
        raise refusal(
            task,
            f"not a video task: its doc_to_visual {visual} returns images ({', '.join(images)}) and reads no video",
            "not a video task",
        )
    gives_frames = any(m in code for m in _FRAME_MARKERS)
    if gives_frames:
        logger.warning(
            f"vdg derive: {task}: its doc_to_visual {visual} returns decoded frames or images, not a video file: "
            "the conditions apply to those frames (a JPEG ladder in place of the CRF ladder)"
        )
        conditions = compression_for_frames(conditions)
    if not (is_fn(build) or names_a_field(build)):
        raise refusal(
            task,
            f"its doc_to_text is {build!r}, neither a prompt-building function nor a doc field vdg can give changed "
            "options",
            "doc_to_text is not a function",
        )
    found = detect_fields(config, base_sources(config))
    if optional_options(config, found.options) and not (fields or {}).get("options"):
        logger.warning(
            f"vdg derive: {task}: its prompt builder shows options only when a doc has them, and its prompt asks for "
            "no option's letter: an open task, graded (give --options FIELD if its docs do hold options)"
        )
        found = dataclasses.replace(found, options=None)
    found = dataclasses.replace(found, **{k: v for k, v in (fields or {}).items() if v})
    target = answer_function(config) if found.answer is None else None
    lettered = found.options is None and asks_for_a_letter(config)
    if lettered and (found.answer is not None or target is not None) and (found.question is not None or is_fn(build)):
        # Where no field holds them, the prompt the builder writes can (VITATECS builds them from two captions).
        fields_read = text_fields(closure_text(str(build)), found.question) if found.question else []
        texts = [*fields_read, PROMPT_FIELD] if is_fn(build) else fields_read
        where = ", ".join([*fields_read, "the prompt its doc_to_text writes"] if is_fn(build) else fields_read)
        logger.warning(
            f"vdg derive: {task}: no options field; its prompt asks for an option's letter, so the options are read "
            f"from lettered lines in {where}; a question without them is an error row"
        )
        found = dataclasses.replace(found, options=IN_TEXT + ALTERNATIVE.join(texts))
    results = config.get("process_results")
    offline_results = str(results) if is_fn(results) and offline_safe(results) else None
    how, aggregation = LETTER, None
    if found.options is None:
        corpus = only_corpus_metrics(config)
        if lettered or corpus:
            raise refusal(
                task,
                f"no options field: its functions read none of {', '.join(KNOWN_FIELDS['options'])} (nor numbered "
                "fields like option0, option1) from the doc, and "
                + (
                    "no question field whose lettered lines could hold them"
                    if lettered
                    else f"its prompt asks for no option's letter, and its {', '.join(corpus)} "
                    f"{'is' if len(corpus) == 1 else 'are'} defined only over the whole corpus: no per-question value"
                )
                + "; give --options FIELD (a list, a newline-separated string, FIELD{i} for numbered fields, FIELD{a} "
                "for lettered ones) if its docs hold options, or --options @question if its question text letters them",
                "open-ended, corpus-level metric" if corpus else "no options field",
            )
        how, aggregation = graded_scoring(config, offline_results)
        unjudgeable = unjudgeable_metrics(config) if how == JUDGE else []
        if unjudgeable:
            raise refusal(
                task,
                f"no options field, and its {', '.join(unjudgeable)} (a grounding, tracking or error-rate metric) has "
                "no per-question value in [0, 1] from an offline process_results: a judge comparing words would "
                "score intervals, tracks or transcripts wrongly",
                "grounding or error-rate metric, none per question",
            )
        conditions = tuple(c for c in conditions if not CONDITIONS[c].requires)
    if found.answer is None and target is None:
        known = ", ".join(KNOWN_FIELDS["answer"])
        raise refusal(
            task,
            f"no answer field: none of {known}, and no doc_to_target function that gives one offline (a constant, "
            "as a task scored only by submission has, is none); give --answer FIELD",
            "no answer field",
        )
    if found.task_type is None:
        logger.warning(
            f"vdg derive: {task}: no task-type field found (none of {', '.join(KNOWN_FIELDS['task_type'])}): "
            "every question gets one task type, so the report's per-task-type tables have one row; give "
            "--task-type FIELD if its docs have one"
        )
    if not gives_frames:
        conditions = tuple(c for c in conditions if "frames" not in CONDITIONS[c].requires)
    if not conditions:
        raise refusal(
            task,
            "none of the conditions asked for applies to it (the jpeg ladder is for tasks that give decoded frames, "
            "crf for tasks that give a video file)",
            "no condition applies",
        )
    docs = config.get("process_docs")
    return DeriveSpec(
        task=task,
        yaml_path=str(Path(yaml_path).resolve()),
        fields=found,
        doc_to_visual=str(visual),
        doc_to_text=str(build),
        process_results=offline_results,
        process_docs=str(docs) if is_fn(docs) else None,
        visual_kwargs=_visual_kwargs(config),
        conditions=conditions,
        group=group,
        frame_folder_fps=frame_folder_fps,
        scoring=how,
        frames=gives_frames,
        doc_to_target=target,
        aggregation=aggregation,
        dataset=dataset_config(config, Path(yaml_path).parent),
    )


#: Metrics named for an error (lower is better, unbounded): never a per-question score.
_ERROR_METRIC = re.compile(r"(^|_)(mae|mse|rmse|wer|cer|error|loss)(_|$)", re.IGNORECASE)
#: Metrics of temporal grounding, tracking or localisation (IoU, mAP, recall at IoU, HOTA, F1), and error rates:
#: where the base gives no per-question value, vdg's judge (which compares words) cannot stand in for them.
_UNJUDGEABLE_METRIC = re.compile(r"(^|_)(m?iou|map|r@[\d.]+|hota|f1|precision|recall|wer|cer)(_|@|$)", re.IGNORECASE)


def unjudgeable_metrics(config: Mapping[str, Any]) -> list[str]:
    """The metrics of a task config that a judge comparing words cannot stand in for (``_UNJUDGEABLE_METRIC``)."""
    names = [str(entry.get("metric") or "") for entry in config.get("metric_list") or []]
    return [name for name in names if _UNJUDGEABLE_METRIC.search(name)]


def compression_for_frames(conditions: Sequence[str]) -> tuple[str, ...]:
    """The conditions a task that gives frames gets of ``conditions``: those frames can take
    (``vdg_tasks.perturb.frames``), with the ``jpeg`` ladder in place of ``crf`` when a ``crf`` level was asked for
    and no ``jpeg`` one was."""
    kept = [c for c in conditions if CONDITIONS[c].transform in FRAME_TRANSFORMS]
    wants_crf = any(CONDITIONS[c].transform == "crf" for c in conditions)
    if wants_crf and not any(CONDITIONS[c].transform == "jpeg" for c in kept):
        kept += [c.name for c in CONDITIONS.values() if c.transform == "jpeg"]
    return tuple(c for c in CONDITIONS if c in kept)


#: Metrics named for a mean over questions of a per-question value (mean IoU, mean AP, accuracy).
_MEAN_OVER_QUESTIONS = re.compile(r"(^|_)(m(iou|ap)|acc|accuracy)$", re.IGNORECASE)
#: An aggregation's source that divides a sum by how many there are (or takes a mean).
_MEAN_SHAPED = re.compile(r"/\s*(len\(|\w*(total|count|num)\w*)|\bmean\(", re.IGNORECASE)
#: An aggregation that needs a fixed number of questions (CameraBench's ``assert len(results) == 1900 * 4``).
_FIXED_COUNT = re.compile(r"assert\s+len\(")
#: An aggregation in percent.
_PERCENT = re.compile(r"\*\s*100(\.0)?\b|\b100(\.0)?\s*\*")


def graded_scoring(config: Mapping[str, Any], offline_results: str | None) -> tuple[str, str | None]:
    """How a task without options is scored (``vdg_tasks.vocabulary.scoring``), and the aggregation a ``mean:``
    scoring applies to one question: when its ``process_results`` runs offline, its own first metric averaged per
    question (``aggregation: mean``), neither named for an error (MAE, WER, ...) nor lower-is-better; else its first
    metric named for a mean over questions (mIoU, mAP, accuracy) whose offline aggregation divides by their number and
    needs no fixed number of them; else vdg's judge."""
    if offline_results is None:
        return JUDGE, None
    entries = [e for e in config.get("metric_list") or [] if e.get("metric")]
    for entry in entries:
        name = str(entry["metric"])
        lower_is_better = entry.get("higher_is_better") is False
        if str(entry.get("aggregation", "")) == "mean" and not (_ERROR_METRIC.search(name) or lower_is_better):
            return METRIC_PREFIX + native_name(name), None
    for entry in entries:
        name, aggregation = str(entry["metric"]), entry.get("aggregation")
        if not (_MEAN_OVER_QUESTIONS.search(name) and is_fn(aggregation) and offline_safe(aggregation)):
            continue
        source = closure_text(str(aggregation))
        means = [line for line in source.splitlines() if _MEAN_SHAPED.search(line)]
        if means and not _FIXED_COUNT.search(source):
            # In percent when the line that takes the mean multiplies by 100 (not a * 100 in a log line elsewhere).
            percent = PERCENT_SUFFIX if any(_PERCENT.search(line) for line in means) else ""
            return f"{MEAN_PREFIX}{native_name(name)}{percent}", str(aggregation)
    return JUDGE, None


def answer_function(config: Mapping[str, Any]) -> str | None:
    """The base's ``doc_to_target`` function as the source of the answer (where no doc field holds it): one that
    stays offline and does not return a constant; else None."""
    target = config.get("doc_to_target")
    if not is_fn(target) or not offline_safe(target) or returns_constant(str(target)):
        return None
    return str(target)


def group_members(manager: Any, name: str, seen: frozenset[str] = frozenset()) -> list[str | dict[str, Any]] | None:
    """The tasks of a group or tag, a member group's own tasks in its place (a group's inline configs as dicts);
    None for a task."""
    entry = manager.task_index[name]
    if entry["type"] == "tag":
        listed: Any = list(entry["task"])
    elif entry["type"] == "group":
        listed = load_config(Path(entry["yaml_path"])).get("task") or []
    else:
        return None
    out: list[str | dict[str, Any]] = []
    for member in [listed] if isinstance(listed, str) else list(listed):
        inner = None
        if isinstance(member, str) and member in manager.task_index and member not in seen | {name}:
            inner = group_members(manager, member, seen | {name})
        out += [member] if inner is None else inner
    return out


def plan(
    base_task: str,
    *,
    conditions: Sequence[str] | None = None,
    include_path: str | os.PathLike[str] | None = None,
    manager: Any = None,
    frame_folder_fps: float = DEFAULT_FRAME_FOLDER_FPS,
    **fields: str | None,
) -> list[DeriveSpec]:
    """The specs ``vdg derive base_task`` writes: one, or one per member of a group or tag.

    ``fields``: ``question_id``, ``options``, ``answer``, ``video_id``, ``task_type``, ``question``
    (None: detected). ``manager``: an lmms-eval ``TaskManager`` to reuse (its index takes seconds).

    Raises:
        DeriveError: an unknown name, a task (or a group member) that cannot be derived, a bad condition.
    """
    unknown = sorted(set(fields) - set(KNOWN_FIELDS))
    if unknown:
        raise DeriveError(f"unknown field option(s) {', '.join(unknown)}; known: {', '.join(KNOWN_FIELDS)}")
    numbered = [f for f in str(fields.get("options") or "").split(ALTERNATIVE) if field_marker(f)]
    if any(f.count(NUMBERED) + f.count(LETTERED) > 1 for f in numbered):
        raise DeriveError(
            f"--options {fields['options']}: numbered fields are written FIELD{NUMBERED} (option{NUMBERED}), "
            f"lettered ones FIELD{LETTERED} (choice_{LETTERED}), one marker each"
        )
    if include_path is not None and not Path(include_path).is_dir():
        raise DeriveError(f"--include_path {include_path}: no such folder")
    chosen = resolve_conditions(conditions)
    manager = manager if manager is not None else task_manager(include_path)
    index = manager.task_index
    if base_task not in index:
        near = difflib.get_close_matches(base_task, list(index), n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        where = f" (looked in lmms-eval's tasks and {include_path})" if include_path else ""
        raise refusal(base_task, f"no lmms-eval task, group or tag of that name{where}{hint}")
    members = group_members(manager, base_task)
    if members is None:
        return [analyse(base_task, index[base_task]["yaml_path"], chosen, fields, "", frame_folder_fps)]
    specs, problems = [], []
    for member in members:
        name = member if isinstance(member, str) else str(member.get("task", member))
        entry = index.get(name) if isinstance(member, str) else None
        if entry is None or entry["type"] not in ("task", "python_task"):
            problems.append((name, "a group" if entry else "defined inline in the group"))
            continue
        try:
            specs.append(analyse(name, entry["yaml_path"], chosen, fields, base_task, frame_folder_fps))
        except DeriveError as exc:
            problems.append((name, exc.short))
    if problems:
        derivable = f"; these can be derived one by one: {', '.join(s.task for s in specs)}" if specs else ""
        why = Counter(short for _, short in problems)
        listed = "; ".join(f"{name} ({short})" for name, short in problems)
        raise refusal(
            base_task,
            f"it is a group of {len(members)} tasks and {len(problems)} cannot be derived: "
            f"{listed} (`vdg derive MEMBER` says why){derivable}",
            f"a group of {len(members)}, {len(problems)} refused: "
            + ", ".join(f"{n} {reason}" for reason, n in sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))),
            derivable=specs,
        )
    return specs


def derive(
    base_task: str,
    out_dir: str | os.PathLike[str],
    conditions: Sequence[str] | None = None,
    *,
    include_path: str | os.PathLike[str] | None = None,
    manager: Any = None,
    frame_folder_fps: float = DEFAULT_FRAME_FOLDER_FPS,
    **fields: str | None,
) -> list[Path]:
    """Write the condition variants of ``base_task`` (a task, or every member of a group or tag) under
    ``out_dir``; return the files written. See :func:`plan` for the arguments.

    Raises:
        DeriveError: see :func:`plan`.
    """
    specs = plan(
        base_task,
        conditions=conditions,
        include_path=include_path,
        manager=manager,
        frame_folder_fps=frame_folder_fps,
        **fields,
    )
    for spec in specs:  # every name checked before anything is written
        check_names(spec)
    return [path for spec in specs for path in write(spec, out_dir)]
