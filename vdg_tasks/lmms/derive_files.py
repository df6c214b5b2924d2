"""The folder ``vdg derive`` writes for one planned task (:class:`DeriveSpec`): the template, one leaf per condition,
the spec, the hooks module and the README (see :mod:`vdg_tasks.lmms.derive`, which plans what is written)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vdg_tasks.data.benchmarks import task_name
from vdg_tasks.data.upstream import Function, load_config
from vdg_tasks.lmms.derive_source import (
    is_fn,
    offline_safe,
)
from vdg_tasks.lmms.derive_spec import (
    HOOKS_MODULE,
    SPEC_FILE,
    DeriveSpec,
    Fields,
    native_name,
    refusal,
)
from vdg_tasks.lmms.yamlgen import TEMPLATE, YamlFunction, condition_metadata, condition_task, dump_yaml, vdg_metrics
from vdg_tasks.vocabulary.conditions import CONDITIONS
from vdg_tasks.vocabulary.scoring import JUDGE, scoring
from vdg_tasks.vocabulary.untrusted import UntrustedPath, path_component

#: Base config keys vdg replaces (or that name the base task itself). ``doc_to_messages`` builds a chat model's
#: request from the doc itself (the original video, the original question): dropped, lmms-eval builds the request
#: from vdg's ``doc_to_visual`` and ``doc_to_text`` instead, so every condition's change reaches chat models too.
REPLACED = frozenset(
    {"task", "tag", "group", "group_alias", "task_alias", "include", "doc_to_messages"}
    | {"doc_to_visual", "process_results", "process_docs", "metric_list", "metadata"}
)
_LOCAL_BUILDERS = frozenset({"csv", "json", "parquet", "text", "pandas", "arrow"})


def _yaml_value(value: Any) -> Any:
    if isinstance(value, Function):
        return YamlFunction(str(value))
    if isinstance(value, Mapping):
        return {k: _yaml_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_yaml_value(v) for v in value]
    return value


def _local_paths(config: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """Relative local data files made absolute (the derived folder is elsewhere), as lmms-eval resolves them."""
    kwargs = config.get("dataset_kwargs")
    if config.get("dataset_path") not in _LOCAL_BUILDERS or not isinstance(kwargs, Mapping):
        return config

    def absolute(value: Any) -> Any:
        if isinstance(value, str) and value and not os.path.isabs(value) and (base_dir / value).is_file():
            return str((base_dir / value).resolve())
        if isinstance(value, Mapping):
            return {k: absolute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [absolute(v) for v in value]
        return value

    return {**config, "dataset_kwargs": {**kwargs, "data_files": absolute(kwargs.get("data_files"))}}


def _metrics(spec: DeriveSpec, config: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """vdg's accuracy, then the base's own metrics that are safe offline; notes on what was dropped."""
    kept, notes = vdg_metrics(), []
    for entry in config.get("metric_list") or []:
        name, aggregation = str(entry.get("metric")), entry.get("aggregation")
        if spec.process_results is None:
            notes.append(f"`{name}` dropped: the base's process_results is absent or reaches the network")
        elif is_fn(aggregation) and not offline_safe(aggregation):
            notes.append(f"`{name}` dropped: its aggregation {aggregation} uploads, submits or reaches the network")
        else:
            renamed = native_name(name)
            kept.append(_yaml_value({**entry, "metric": renamed}))
            notes.append(f"`{renamed}` kept (the base's `{name}`, on the answered video-condition questions)")
    return kept, notes


def template(spec: DeriveSpec) -> tuple[dict[str, Any], list[str]]:
    """The shared part of the derived tasks (``_default_template_yaml``) and the metric notes."""
    config = load_config(Path(spec.yaml_path))
    config = _local_paths(config, Path(spec.yaml_path).parent)
    doc = {k: _yaml_value(v) for k, v in config.items() if k not in REPLACED}
    doc["output_type"] = "generate_until"
    doc["process_docs"] = YamlFunction(f"{HOOKS_MODULE}.process_docs")
    doc["metric_list"], notes = _metrics(spec, config)
    return doc, notes


def tags(spec: DeriveSpec, condition: str) -> list[str]:
    """``<task>_vdg`` and ``<task>_vdg_<family>``; a member's also ``<group>_vdg``, ``<group>_vdg_<family>``
    and ``<group>_vdg_<condition>``; an untagged condition (``Condition.tagged``) only the last."""
    cond = CONDITIONS[condition]

    def own(prefix: str) -> list[str]:
        return ([f"{prefix}_vdg"] if cond.in_audit else []) + ([f"{prefix}_vdg_{cond.family}"] if cond.tagged else [])

    return own(spec.task) + ([*own(spec.group), task_name(spec.group, condition)] if spec.group else [])


def leaf(spec: DeriveSpec, condition: str, base: Mapping[str, Any]) -> dict[str, Any]:
    """One derived task's YAML (``base``: the template, for the generation settings an open answer overrides)."""
    cond = CONDITIONS[condition]
    return condition_task(
        cond,
        TEMPLATE,
        task_name(spec.task, condition),
        tags(spec, condition),
        lambda kind: f"{HOOKS_MODULE}.{condition}__{kind}",
        lambda: base.get("generation_kwargs") or {},
        {**condition_metadata(cond), "derived_from": spec.task},
    )


_HOOKS_SOURCE = '''"""Hooks of the vdg tasks in this folder: generated by `vdg derive`, do not edit.

lmms-eval loads this file for every `!function vdg_derived.<hook>`; the hooks are vdg's own
(vdg_tasks.hooks), built by vdg_tasks.derive.hooks_for from vdg_derive.json beside this file.
"""

from pathlib import Path

import vdg_tasks.derive

globals().update(vdg_tasks.derive.hooks_for(Path(__file__).with_name("vdg_derive.json")))
'''


def _field_lines(fields: Fields, graded: bool = False, target: str | None = None) -> list[str]:
    meaning = {
        "answer": f"none: what its doc_to_target `{target}` returns",
        "question_id": "none: a digest of the whole doc (with the video id)"
        if graded
        else "none: a digest of the question and its options (with the video id)",
        "video_id": "none: the question id",
        "task_type": "none: empty",
        "question": "none: the open condition asks the instruction alone",
    }
    lines = []
    for name, value in dataclasses.asdict(fields).items():
        shown = f"`{value}`" if value else meaning.get(name, "none")
        lines.append(f"- {name}: {shown}")
    return lines


JUDGE_FLAG = " --judge offline|api"


def scoring_sentence(name: str) -> str:
    """How a derived task's replies are scored, in words (its README), from the scoring's declaration."""
    how = scoring(name)
    return f"`{name}`: {how.to_unit}" + ("; VDG is then on a graded score" if how.graded else "")


def readme(spec: DeriveSpec, notes: list[str]) -> str:
    conditions = [CONDITIONS[c] for c in spec.conditions]
    group = f" (a member of `{spec.group}`; tags `{spec.group}_vdg...` run every member)" if spec.group else ""
    lines = [
        f"# {spec.task} x vdg conditions",
        "",
        f"Derived by `vdg derive` from lmms-eval's `{spec.task}`{group}: its dataset, prompt builder and video "
        f"lookup ({spec.yaml_path}); vdg's hooks change the video or the question.",
        "",
        "Doc fields (answers given as a letter, a 0-based index or an option's text are scored as letters):"
        if not spec.graded
        else "Doc fields (the answer is the reference the reply is scored against):",
        "",
        *_field_lines(spec.fields, graded=spec.graded, target=spec.doc_to_target),
        "",
        f"Scoring: {scoring_sentence(spec.scoring)}.",
        "",
        "Metrics: `accuracy` (vdg's mean score, over answered questions), then the base's own:",
        "",
        *([f"- {n}" for n in notes] or ["- none"]),
        "",
        f"Tags: `{spec.task}_vdg` (every condition but those run by name or by their family's tag: "
        + (", ".join(f"`{task_name(spec.task, c.name)}`" for c in conditions if not c.in_audit) or "none")
        + "), "
        + ", ".join(sorted({f"`{spec.task}_vdg_{c.family}`" for c in conditions if c.tagged}))
        + ".",
        "",
        "| task | condition | shown to the model |",
        "|---|---|---|",
        *(f"| `{task_name(spec.task, c.name)}` | `{c.name}` | {c.description} |" for c in conditions),
        "",
        f"Run: `lmms-eval --model MODEL --include_path <this folder's parent> --tasks {spec.task}_vdg --log_samples "
        f"--output_path RUN`, then `vdg report RUN --out REPORT{JUDGE_FLAG if spec.scoring == JUDGE else ''}`.",
        "",
        "Generated by `vdg derive`; rerun it instead of editing these files (the hooks read vdg_derive.json).",
        "",
    ]
    return "\n".join(lines)


def class_groups(spec: DeriveSpec, is_class_task: bool) -> dict[str, list[str]]:
    """Group name -> its derived tasks, for a Python class task: lmms-eval indexes a config with ``class`` as a
    ``python_task`` and registers no tag of it, so its ``<task>_vdg`` and ``<task>_vdg_<family>`` are groups.
    (A class task's group-wide tags, ``<group>_vdg...``, are not written: each member's folder would hold its own.)"""
    if not is_class_task:
        return {}
    groups: dict[str, list[str]] = {}
    for condition in spec.conditions:
        for name in tags(spec, condition):
            if name.startswith(f"{spec.task}_vdg"):
                groups.setdefault(name, []).append(task_name(spec.task, condition))
    return groups


def render(spec: DeriveSpec) -> dict[str, str]:
    """File name -> text of the derived folder of ``spec``."""
    base, notes = template(spec)
    header = f"# Generated by `vdg derive {spec.group or spec.task}`; do not edit.\n"
    files = {TEMPLATE: header + dump_yaml(base)}
    groups = class_groups(spec, "class" in base)
    for condition in spec.conditions:
        config = leaf(spec, condition, base)
        if groups:
            config.pop("tag", None)
        files[f"{task_name(spec.task, condition)}.yaml"] = header + dump_yaml(config)
    for name, members in groups.items():
        files[f"{name}.yaml"] = header + dump_yaml({"group": name, "task": members})
    files[SPEC_FILE] = spec.to_json()
    files[f"{HOOKS_MODULE}.py"] = _HOOKS_SOURCE
    files["README.md"] = readme(spec, notes)
    return files


def check_names(spec: DeriveSpec) -> None:
    """Refuse a spec whose task name (from the base task's YAML) cannot be one folder name under ``--out``: a name
    like ``../../x`` or ``/abs/x`` would write outside it.

    Raises:
        DeriveError: naming the task, its YAML and the reason.
    """
    try:
        path_component(spec.task, "task name")
    except UntrustedPath as exc:
        raise refusal(
            repr(spec.task),
            f"its name (task: in {spec.yaml_path}) cannot be a folder name under --out: {exc.reason}",
            f"task name {exc.reason}",
        ) from None


def write(spec: DeriveSpec, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``out_dir/<task>/``, removing leaves of conditions no longer derived; return the files written.

    Raises:
        DeriveError: the task's name cannot be a folder name (:func:`check_names`), or a file name it makes
            would leave the folder; nothing is written then.
    """
    check_names(spec)
    files = render(spec)
    folder = Path(out_dir) / spec.task
    for name in files:
        try:
            path_component(name, "derived file name")
        except UntrustedPath as exc:
            raise refusal(repr(spec.task), f"the file name {name!r} it makes is refused: {exc.reason}") from None
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(f"{spec.task}_vdg_*.yaml"):
        if stale.name not in files:
            stale.unlink()
    written = []
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
        written.append(folder / name)
    return written
