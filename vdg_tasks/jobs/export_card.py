"""The dataset card (``README.md``) of an export, and where each benchmark's questions were read from
(the manifest's ``sources``): text only, from the manifest that :func:`vdg_tasks.jobs.export.export` builds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from vdg_tasks.data.benchmarks import BENCHMARKS, Upstream, parse_task_name
from vdg_tasks.data.export_folder import REVISION_HEX, SPLIT, published
from vdg_tasks.data.local_copies import LOCAL_DATA_ENV, LocalLayout, dataset_fields
from vdg_tasks.data.upstream import task_config
from vdg_tasks.jobs.materialize import local_data_files, vdg_task_config
from vdg_tasks.lmms.yamlgen import YAML_ROOT

__all__ = ["LICENSES", "card", "source_dataset"]

#: Source benchmark -> license id for the dataset card ("other": the source benchmark's terms apply).
LICENSES: Mapping[str, str] = {"vdgsynth": "mit"}


def _function_name(value: Any) -> str | None:
    """The dotted name of a ``!function`` value as ``vdg_tasks.jobs.materialize`` reads task YAMLs, else None."""
    name = value.get("__function__") if isinstance(value, Mapping) else None
    return str(name) if name is not None else None


def _hub_dataset(config: Mapping[str, Any]) -> str:
    """A hub dataset as a person loads it: ``ID (config NAME): load_dataset("ID", "NAME", split="SPLIT")``."""
    path, name = str(config["dataset_path"]), config.get("dataset_name")
    split = str(config.get("test_split") or config.get("validation_split") or SPLIT)
    args = ", ".join([json.dumps(path), *([json.dumps(str(name))] if name else []), f"split={json.dumps(split)}"])
    return path + (f" (config {name})" if name else "") + f": datasets.load_dataset({args})"


def _declared_source(upstream: Upstream, local: LocalLayout | None) -> str:
    """The hub dataset of a benchmark whose task YAMLs name ``vdg_tasks.sources`` values, read from its
    declaration: the dataset of the lmms-eval task it copies (``Benchmark.upstream``), and the files of the
    local copy the questions were read from when ``$VDG_LOCAL_DATA`` holds one (``Benchmark.local``)."""
    config = task_config(upstream.folder, upstream.config)
    hub = _hub_dataset(config)
    fields = dataset_fields(config, local)
    if fields["dataset_path"] == config["dataset_path"]:
        return hub
    files = fields["dataset_kwargs"].get("data_files") or {}
    paths = ", ".join(Path(p).name for ps in files.values() for p in ps)  # published: names, not where they lay
    return f"{hub}; read from its local copy (${LOCAL_DATA_ENV}, {fields['dataset_path']} files): {paths}"


def source_dataset(benchmark: str, task: str, yaml_root: Path | None) -> str:
    """Where the benchmark's questions were read, as a person would load them: the hub dataset id and
    config (``datasets.load_dataset(...)``), or local data files by name (never the folder they lay in: the
    text is published with the export)."""
    try:
        config, folder = vdg_task_config(Path(yaml_root) if yaml_root is not None else YAML_ROOT, benchmark, task)
    except Exception:
        return "unknown"
    files = local_data_files(config, folder)
    if files is not None:
        paths = ", ".join(Path(p).name for ps in files.values() for p in ps)  # published: names, not where they lay
        return f"local files ({config.get('dataset_path')}): {paths}"
    functions = [f for f in (_function_name(config.get(k)) for k in ("dataset_path", "dataset_name")) if f]
    spec = BENCHMARKS.get(benchmark)
    # vdg's own YAMLs name values of vdg_tasks.sources (hub or local copy, chosen when lmms-eval loads the task).
    declared = {f"vdg_tasks.sources.{benchmark}__{field}" for field in ("dataset_path", "dataset_name")}
    if functions and spec is not None and spec.upstream is not None and set(functions) <= declared:
        try:
            return _declared_source(spec.upstream, spec.local)
        except Exception as exc:
            # the exception's name alone: its message names local folders, and this text is published
            return f"unknown ({benchmark}'s declared source cannot be read: {type(exc).__name__})"
    if functions:
        return f"unknown (computed when lmms-eval loads the task, by {' and '.join(functions)})"
    if not isinstance(config.get("dataset_path"), str):
        return "unknown"
    return _hub_dataset(config)


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"`{k}={json.dumps(v)}`" for k, v in params.items()) or "none"


def card(manifest: Mapping[str, Any], out: Path, roots: Iterable[Path] = ()) -> str:
    """The dataset card of the export ``manifest`` describes, written at ``out``: published with it, so it names
    files relative to the export (``out`` and ``roots``, its staging folder and link, by its name only), any other
    absolute path by its file name, and every secret-looking setting is redacted (``published``)."""
    tasks: list[str] = list(manifest["tasks"])
    benchmarks: list[str] = list(manifest["benchmarks"])
    licenses = {LICENSES.get(b, "other") for b in benchmarks}
    front = {
        "configs": [{"config_name": t, "data_files": [{"split": SPLIT, "path": f"data/{t}.jsonl"}]} for t in tasks],
        "license": licenses.pop() if len(licenses) == 1 else "other",
        "tags": ["vdg", "video", "video-question-answering", "robustness", *benchmarks],
        "task_categories": ["video-text-to-text"],
        "pretty_name": f"vdg export {manifest['name']}",
    }
    built = manifest["built_by"]
    name, revision = manifest["name"], manifest["revision"]
    lines = [
        "---",
        yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip("\n"),
        "---",
        "",
        f"# {name}: {', '.join(benchmarks)} under vdg conditions",
        "",
        "Each config is one vdg task (`<benchmark>_vdg_<condition>`): every question of the benchmark, with the "
        "video a model is shown under that condition. vdg asks whether a video benchmark's score measures "
        "watching the video or guessing from the text.",
        "",
        "## Source",
        "",
    ]
    for bench in benchmarks:
        lines.append(f"- `{bench}`: {BENCHMARKS[bench].description} Questions from {manifest['sources'][bench]}.")
    if "other" in {LICENSES.get(b, "other") for b in benchmarks}:
        lines += ["", "License: the source benchmark's terms apply to its questions and videos."]
    chosen = manifest.get("question_sets") or {}
    if chosen:
        lines += ["", "## Question set", ""]
        for bench, info in chosen.items():
            how = f" {info['description']}." if info.get("description") else ""
            lines.append(
                f"- `{bench}`: {info['n_questions']} questions of the set `{Path(str(info['file'])).name}` (digest "
                f"`{info['digest']}`, `VDG_QUESTION_SET` when exported).{how}"
            )
    lines += [
        "",
        "## Conditions",
        "",
        "| config | condition | shown to the model | parameters | rows | errors |",
        "|---|---|---|---|---|---|",
    ]
    for task in tasks:
        cond = manifest["conditions"][parse_task_name(task)[1]]
        lines.append(
            f"| `{task}` | `{parse_task_name(task)[1]}` | {cond['description']} | {_params_text(cond['params'])} | "
            f"{manifest['n_rows'][task]} | {manifest['n_errors_per_task'][task]} |"
        )
    lines += [
        "",
        'A row whose video could not be built has `vdg_export.video_file == ""` and the reason in '
        "`vdg_export.error`; evaluating it logs an error row (never scored).",
        "",
        "## Versions",
        "",
        f"- transform version: {manifest['transform_version']}",
        f"- vdg {built.get('vdg', '?')}, PyAV {built.get('pyav', '?')}, libavcodec {built.get('libavcodec', '?')}, "
        f"libx264 {built.get('libx264', '?')} (this export; each row's `vdg_export.provenance.built_by` names "
        "what built its video)",
        f"- revision: `{revision}`: the first {REVISION_HEX} hex digits of the sha256 over the sorted lines "
        "`<path>\\t<sha256>` of `data/*.jsonl` (rows in canonical JSON with `vdg_export.revision` blank) and "
        "`videos/**` (bytes); recompute with `vdg_tasks.export.compute_revision(folder)`.",
        "",
        "## Rows",
        "",
        "Every field of the benchmark's doc, plus `vdg_export`: `name`, `revision`, `task`, `condition`, "
        "`video_file` (relative to the export root), `error`, `visual_key` (vdg cache key; empty when the source "
        "is shown as it is), `condition_params`, `bound_params`, `effective_params`, `provenance` (source digest, "
        "condition, the condition's parameters with the question's own, transform version, `built_by`: the "
        "versions that built the video, null when the source is shown as it is).",
        "",
        "## How it was made",
        "",
        "```",
        f"vdg export --tasks {','.join(tasks)} --out {out.name} --name {name}",
        "```",
        "",
        "## Evaluate from it",
        "",
        "The task YAMLs in `tasks/` read this folder where it was written; vdg's hooks find the videos under "
        f"`$VDG_EXPORTS/{name}` or else `$HF_HOME/vdg_exports/{name}`, which `vdg export` links here:",
        "",
        "```",
        f"lmms-eval --model MODEL --include_path {out.name}/tasks --tasks {','.join(tasks)} --log_samples "
        "--output_path runs/MODEL",
        "```",
        "",
        "After moving the folder, or for a copy on the Hugging Face Hub, (re)write the tasks first:",
        "",
        "```",
        'python -c "from pathlib import Path; from vdg_tasks.export import write_export_tasks; '
        f"write_export_tasks('FOLDER_OR_REPO_ID', Path('tasks'), '{name}')\"",
        "lmms-eval --model MODEL --include_path tasks --tasks ... --log_samples --output_path runs/MODEL",
        "```",
        "",
        "For a repo id, lmms-eval downloads the repo and links it at that same path. Each logged record names "
        "the export (`provenance.export`: name and revision).",
        "",
        f'The rows load with `datasets`: `load_dataset(FOLDER_OR_REPO_ID, name="{tasks[0]}", split="{SPLIT}")`.',
        "",
    ]
    return str(published("\n".join(lines), [out, *roots]))
