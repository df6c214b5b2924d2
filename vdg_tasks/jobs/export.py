"""``vdg export``: perturbed splits as a Hugging Face ``datasets`` dataset, and lmms-eval tasks that read it.

An export is a folder::

    OUT/
      README.md              dataset card: YAML front matter (one config per task, split "test"), then prose
      export.json            manifest: name, revision, tasks, conditions, versions, row and error counts,
                             ``files``: the sha256 of every video, and ``rows``: that of each data file's rows
                             (canonical form, below), which evaluation checks before showing a video
      data/<task>.jsonl      one row per question: the benchmark's doc + ``vdg_export`` (below)
      videos/<ab>/<key>.mp4  every distinct video the rows show (hard links when possible, else copies)
      tasks/<benchmark>/     lmms-eval task YAMLs (``<benchmark>_vdg_<condition>``) reading this folder

Each row's ``vdg_export`` field: ``name``, ``revision``, ``task``, ``condition``, ``video_file`` (relative
to the export root, ``""`` when the video could not be built), ``error`` (None, or why there is no
video: the evaluation logs that question as an error row), ``visual_key`` (the vdg cache key, ``""``
for conditions that show the source itself), ``condition_params`` (as declared), ``bound_params``
(per-question parameters, e.g. the oracle frames' times), ``effective_params`` (as applied to this
source, as the hooks log them; None on error) and ``provenance``
(``vdg_tasks.perturb.provenance.provenance``, as the hooks log it: source digest, condition, the condition's
parameters with the question's own, transform version, the versions that built the video as its
cache sidecar records them; ``built_by`` is None when the source itself is shown, or for a cache
entry written before sidecars recorded it).

Videos are named by content: a perturbed video by its cache key, a source shown as it is by the
first 32 hex digits of its ``source_identity`` (the sha256 of its whole content).

Revision. A deterministic content id, the first 16 hex digits of the sha256 of the lines
``<relative path>\\t<sha256>\\n``, sorted by path, over ``data/*.jsonl`` and ``videos/**``. A video's
sha256 is that of its bytes. A data file's is that of its rows in canonical form (each row with
``vdg_export.revision`` set to ``""``, dumped as ``json.dumps(row, sort_keys=True, ensure_ascii=False,
separators=(",", ":"))``, one per line), so the id can be recomputed from a published export
(:func:`compute_revision`) although the rows carry it. README.md, export.json and tasks/ are not part
of it (they hold a timestamp; tasks/ holds local paths). What is published (``--push-to-hub``: the rows,
README.md, export.json) names files relative to the export, or by name alone for anything outside it (a source
video's path in a doc, a path in an error message, the questions file), and every secret-looking setting in
vdg's own fields is redacted (``vdg_tasks.data.export_folder.published``). The export's name is in every row,
hence in the id.

Trust. Evaluation treats the rows as input from outside: a row is shown its video only when
``video_file`` resolves inside ``export_root(name)`` (no absolute path, no ``..``, no symlink out; ``name``
one safe path component), every data file's rows are the ones ``export.json`` lists under ``rows``, and the
file's sha256 is the one it lists under ``files``; bound to its row (``exported_row_video``), ``video_file``
must also be the file the export writes for the row's own video (:func:`video_file` of ``row_video_key``);
otherwise the question is an error row naming why (``vdg_tasks.data.export_folder``, ``vdg_tasks.lmms.hooks``).

Evaluation. The hooks find a row's video under ``export_root(name)``: ``$VDG_EXPORTS/<name>``, else
``$HF_HOME/vdg_exports/<name>``. :func:`export` links that path to the export folder (a symbolic
link), so a local export evaluates at once with ``lmms-eval --include_path OUT/tasks``. A published
export evaluates from the hub with tasks written by :func:`write_export_tasks` for the repo id:
lmms-eval snapshot-downloads the repo and links the same path to the snapshot.

This module is the export run, its rows and revision, and the task YAMLs; the dataset card is
:mod:`vdg_tasks.jobs.export_card`, the folder's fixed names, manifest and link :mod:`vdg_tasks.data.export_folder`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from vdg_tasks.data.benchmarks import BENCHMARKS, VIDEOMME_DOC_TO_TEXT, parse_task_name
from vdg_tasks.data.export_folder import (
    EXPORTS_ENV,
    FILES,
    MANIFEST,
    REVISION_HEX,
    ROW_KEY,
    ROWS,
    SPLIT,
    ExportError,
    check_link,
    describe,
    export_root,
    link,
    published,
    read_manifest,
    row_video_key,
    rows_sha256,
    video_file,
)
from vdg_tasks.data.question_sets import active
from vdg_tasks.jobs.export_card import card, source_dataset
from vdg_tasks.jobs.materialize import TaskError, benchmark_docs, expand_tasks, plan, run_jobs
from vdg_tasks.lmms.yamlgen import TEMPLATE, YamlFunction, dump_yaml, leaf, template
from vdg_tasks.perturb.cache import built_by, pid_alive, source_identity
from vdg_tasks.perturb.provenance import builder_versions, provenance
from vdg_tasks.perturb.video_request import RequestError, VideoRequest, bound_params, shown_from, video_request
from vdg_tasks.vocabulary.conditions import CONDITIONS, TRANSFORM_VERSION, Condition
from vdg_tasks.vocabulary.untrusted import UntrustedPath, path_component

__all__ = [
    "EXPORTS_ENV",
    "ExportError",
    "ExportResult",
    "compute_revision",
    "export",
    "export_root",
    "push_to_hub",
    "rows_sha256",
    "sanitize_name",
    "write_export_tasks",
]

#: doc_to_text builders that check vdg's default local data on import -> the plain builder they wrap.
_PLAIN_PROMPTS: Mapping[str, str] = {
    "vdg_tasks.synth_tasks.doc_to_text": VIDEOMME_DOC_TO_TEXT,
    "vdg_tasks.infinibench_tasks.doc_to_text": "vdg_tasks.benchmarks.infinibench_prompt",
}
_GENERATED = "# Generated by vdg export (vdg_tasks/export.py); rewrite with write_export_tasks, do not edit.\n"
_DATASET_KEYS = ("dataset_path", "dataset_name", "dataset_kwargs", "training_split", "validation_split", "test_split")
_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]+")
_KEY_BAD = re.compile(r"[^A-Za-z0-9_-]+")
_PARTIAL = re.compile(r"^\.(?P<name>.+)\.(?:partial|old)-(?P<pid>\d+)$")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export` wrote.

    Attributes:
        out: the export folder.
        name: the export's name (rows, manifest, ``export_root(name)``).
        revision: the content id (module docstring).
        n_rows: rows over all tasks.
        n_errors: rows whose video could not be built (evaluated as error rows).
        tasks_dir: the lmms-eval ``--include_path`` that evaluates from the export (``out/tasks``).
    """

    out: Path
    name: str
    revision: str
    n_rows: int
    n_errors: int
    tasks_dir: Path


def sanitize_name(text: str) -> str:
    """An export name: runs of characters outside ``[A-Za-z0-9_.-]`` become ``-``; no leading dot or dash."""
    name = _NAME_BAD.sub("-", str(text)).strip(".-")
    return name or "vdg-export"


def _component(text: str, what: str) -> str:
    """``text`` when it is safe as one file or folder name (``path_component``), else ExportError naming it."""
    try:
        return path_component(text, what)
    except UntrustedPath as exc:
        raise ExportError(str(exc)) from None


# -- rows -----------------------------------------------------------------------------------------


def _jsonable(value: Any, where: str) -> Any:
    """``value`` as plain JSON types (nested lists and dicts kept); non-finite floats become None."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    tolist = getattr(value, "tolist", None)  # numpy scalars and arrays
    if callable(tolist):
        return _jsonable(tolist(), where)
    raise ExportError(f"field {where}: a {type(value).__name__} cannot be written as JSON")


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _revision(entries: Iterable[tuple[str, str]]) -> str:
    h = hashlib.sha256()
    for rel, digest in sorted(entries):
        h.update(f"{rel}\t{digest}\n".encode())
    return h.hexdigest()[:REVISION_HEX]


def _video_entries(root: Path) -> list[tuple[str, str]]:
    videos = root / "videos"
    if not videos.is_dir():
        return []
    return [(p.relative_to(root).as_posix(), _file_sha256(p)) for p in sorted(videos.rglob("*")) if p.is_file()]


def compute_revision(out: Path) -> str:
    """Recompute an export folder's revision from its data files and videos (module docstring)."""
    out = Path(out)
    entries = _video_entries(out)
    for path in sorted((out / "data").glob("*.jsonl")):
        with open(path, encoding="utf-8") as f:
            rows = (json.loads(line) for line in f if line.strip())
            entries.append((path.relative_to(out).as_posix(), rows_sha256(rows)))
    return _revision(entries)


@dataclass(frozen=True)
class _Shown:
    """What one question is shown under one condition, as the export records it."""

    file_key: str  # name of the file under videos/ ("" when there is none)
    source_file: Path | None  # the file to copy (the cache entry or the source)
    visual_key: str
    error: str | None
    effective_params: dict[str, Any] | None
    source_digest: str
    built_by: dict[str, str] | None
    source_stream: int | None = None  # the source's video stream shown (``VideoInfo.stream_index``)


def _source_key(path: Path) -> str:
    return _KEY_BAD.sub("_", source_identity(path)[:32])


class _Resolver:
    """Maps (condition, doc) to what the export shows, from the materialization outcomes."""

    def __init__(self, outcomes: Iterable[Any]):
        self._outcomes = {(o.job.condition, o.job.source, o.job.video_id, o.job.bound): o for o in outcomes}
        self._done: dict[tuple[Any, ...], _Shown] = {}

    def shown(self, benchmark: str, condition: Condition, doc: Mapping[str, Any]) -> _Shown:
        try:
            request = video_request(BENCHMARKS[benchmark], condition, doc)
        except RequestError as exc:
            return _Shown("", None, "", exc.describe(), None, "", None)
        except KeyError as exc:  # not a benchmark of vdg's
            return _Shown("", None, "", describe(exc), None, "", None)
        if request is None:  # the condition shows no video: the row names none
            return _Shown("", None, "", None, None, "", None)
        if request.key not in self._done:
            self._done[request.key] = self._resolve(request)
        return self._done[request.key]

    def _resolve(self, request: VideoRequest) -> _Shown:
        try:
            digest = source_identity(request.source)
        except OSError:
            digest = ""
        outcome = self._outcomes.get(request.key)
        if outcome is None:
            return _Shown(
                "", None, "", "RuntimeError: vdg export planned no video for this question", None, digest, None
            )
        if outcome.error is not None or outcome.path is None:
            return _Shown("", None, "", outcome.error or "materialization failed", None, digest, None)
        path = Path(outcome.path)
        try:
            effective, stream = shown_from(request.applied, request.source)
            effective = _jsonable(effective, "effective_params")
            if request.condition.transform == "identity":
                return _Shown(_source_key(path), path, "", None, effective, digest, None, stream)
        except Exception as exc:  # as the hooks: a source whose parameters cannot be applied is an error row
            return _Shown("", None, "", describe(exc), None, digest, None)
        key = path.stem
        return _Shown(_KEY_BAD.sub("_", key), path, key, None, effective, digest, built_by(path), stream)


def _question_sets(benchmarks: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The question set ``$VDG_QUESTION_SET`` restricts each exported benchmark to (none: not listed)."""
    out = {}
    for bench in benchmarks:
        chosen = active(BENCHMARKS[bench].report_name)
        if chosen is not None:
            out[bench] = {
                "file": Path(str(chosen.source)).name,  # published: the file's name, never where it lay
                "digest": chosen.digest,
                "n_questions": len(chosen),
                "description": chosen.description,
            }
    return out


def _row(
    doc: Mapping[str, Any],
    name: str,
    task: str,
    condition: Condition,
    shown: _Shown,
    bound: Mapping[str, Any],
    roots: Sequence[Path] = (),
) -> dict[str, Any]:
    """One published row: the benchmark's doc (a field that is an absolute path, such as a source video's, by its
    file name) and ``vdg_export``, every string of which names files relative to the export (``roots``: the export,
    its staging folder, its link) or by name, with secret-looking settings redacted (``published``)."""
    declared = condition.params_dict()
    applied = {**declared, **bound}  # as the hooks' provenance: the condition's parameters with the question's own
    row: dict[str, Any] = published(_jsonable(dict(doc), "doc"), roots, whole=True)
    info = {
        "name": name,
        "revision": "",
        "task": task,
        "condition": condition.name,
        "video_file": video_file(shown.file_key) if shown.error is None else "",
        "error": shown.error,
        "visual_key": shown.visual_key,
        "condition_params": _jsonable(declared, "condition_params"),
        "bound_params": _jsonable(dict(bound), "bound_params"),
        "effective_params": shown.effective_params,
        "provenance": _jsonable(
            provenance(
                shown.source_digest,
                condition.name,
                applied,
                TRANSFORM_VERSION,
                shown.built_by,
                source_stream=shown.source_stream,
            ),
            "provenance",
        ),
    }
    info = published(info, roots)
    if info["video_file"] and info["video_file"] != video_file(row_video_key(info)):  # what evaluation will check
        raise ExportError(
            f"internal: row of {task} names {info['video_file']}, not the file of its video "
            f"({video_file(row_video_key(info))}); please report this"
        )
    row[ROW_KEY] = info
    return row


def _doc_bound(condition: Condition, doc: Mapping[str, Any]) -> dict[str, Any]:
    try:
        return dict(bound_params(condition, doc))
    except Exception:
        return {}


# -- files ----------------------------------------------------------------------------------------


def _place(src: Path, dst: Path) -> None:
    """``dst`` as a hard link to ``src`` when the filesystem allows it, else a streamed copy."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _write_rows(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def _check_out(out: Path, name: str) -> None:
    """Refuse an ``out`` that holds anything but a previous export called ``name``."""
    if out.is_symlink():
        raise ExportError(f"{out} is a symbolic link; export into a real folder")
    if not out.exists():
        return
    if not out.is_dir():
        raise ExportError(f"{out} exists and is not a folder")
    if not any(out.iterdir()):
        return
    manifest = read_manifest(out)
    if manifest is None:
        raise ExportError(f"{out} is not empty and is not a vdg export; choose another --out or remove it")
    if manifest.get("name") != name:
        raise ExportError(
            f"{out} holds the vdg export {manifest.get('name')!r}, not {name!r}; remove it or choose another --out"
        )


def _sweep_leftovers(out: Path) -> None:
    """Remove ``.<out.name>.partial-<pid>`` / ``.old-<pid>`` folders of exports whose process is gone."""
    if not out.parent.is_dir():
        return
    for path in out.parent.glob(f".{out.name}.*-*"):
        match = _PARTIAL.match(path.name)
        if match and match["name"] == out.name and path.is_dir() and not pid_alive(int(match["pid"])):
            shutil.rmtree(path, ignore_errors=True)


def _publish(staging: Path, out: Path) -> None:
    """Move ``staging`` to ``out``, replacing a previous export there whole."""
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        if any(out.iterdir()):
            os.replace(out, old)
        else:
            out.rmdir()
    os.replace(staging, out)
    shutil.rmtree(old, ignore_errors=True)


# -- task YAMLs -----------------------------------------------------------------------------------


def _render_tasks(
    tasks: Sequence[str], dataset_path: str, dataset_kwargs: Mapping[str, Any], export: Mapping[str, str]
) -> dict[Path, str]:
    """Relative path -> text of the task YAMLs that evaluate ``tasks`` from an export."""
    by_bench: dict[str, list[str]] = {}
    for task in tasks:
        bench, cond = parse_task_name(task)
        by_bench.setdefault(bench, []).append(cond)
    files: dict[Path, str] = {}
    for task in tasks:  # each becomes a file name: one safe component (a manifest from elsewhere names them)
        _component(task, "task name")
    for bench, conds in by_bench.items():
        base = {k: v for k, v in template(bench).items() if k not in _DATASET_KEYS}
        prompt = str(base.get("doc_to_text", ""))
        if prompt in _PLAIN_PROMPTS:
            base["doc_to_text"] = YamlFunction(_PLAIN_PROMPTS[prompt])
        base = {"dataset_path": dataset_path, "dataset_kwargs": dict(dataset_kwargs), "test_split": SPLIT, **base}
        files[Path(bench) / TEMPLATE] = _GENERATED + dump_yaml(base)
        for cond in conds:
            doc = leaf(bench, cond, base)
            metadata = {**doc.pop("metadata"), "export": dict(export)}
            doc.update(dataset_name=doc["task"], metadata=metadata)
            files[Path(bench) / f"{doc['task']}.yaml"] = _GENERATED + dump_yaml(doc)
    return files


def _write_tasks(files: Mapping[Path, str], out_tasks: Path) -> list[Path]:
    """Write ``files`` under ``out_tasks``, first removing files an earlier run generated in those folders."""
    out_tasks = Path(out_tasks)
    for folder in {out_tasks / rel.parent for rel in files}:
        if folder.is_dir():
            for old in folder.iterdir():
                if old.is_file() and old.read_text(errors="replace").startswith(_GENERATED):
                    old.unlink()
    written = []
    for rel, text in files.items():
        path = out_tasks / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _local_kwargs(name: str) -> dict[str, Any]:
    # lmms-eval downloads nothing when cache_dir exists: the link export() made.
    return {"cache_dir": str(export_root(name)), "video": True}


def write_export_tasks(
    export_dir_or_repo: str | os.PathLike[str],
    out_tasks: Path,
    name: str | None = None,
    revision: str | None = None,
    tasks: Sequence[str] | None = None,
) -> list[Path]:
    """(Re)write the lmms-eval task folder that evaluates an export; return the files written.

    ``export_dir_or_repo`` is an export folder (``dataset_path`` is its absolute path, and
    ``export_root(name)`` is linked to it: call this after moving an export) or a Hugging Face dataset
    repo id (``dataset_path`` is the id; lmms-eval snapshot-downloads ``revision`` of it and links
    ``$HF_HOME/vdg_exports/<name>`` to the snapshot, or ``$VDG_EXPORTS/<name>`` when that is set now).
    The tasks are ``tasks``, else the export's manifest's (read from the hub for a repo id).
    ``name`` defaults to the manifest's; for a folder it must be the one its rows carry.

    Raises:
        ExportError: a folder that is not an export, a name other than its rows', or tasks it lacks.
    """
    local = Path(export_dir_or_repo).expanduser()
    if local.is_dir():
        folder = local.absolute()
        manifest = read_manifest(folder)
        if manifest is None:
            raise ExportError(f"{folder} is not a vdg export (no readable {MANIFEST})")
        name = _component(name or str(manifest["name"]), "export name")
        if name != manifest["name"]:
            raise ExportError(f"{folder} is the export {manifest['name']!r}: its rows name that, not {name!r}")
        unknown = sorted(set(tasks or ()) - set(manifest["tasks"]))
        if unknown:
            raise ExportError(
                f"{folder} has no config for {', '.join(unknown)}; it holds {', '.join(manifest['tasks'])}"
            )
        link(export_root(name), folder)
        files = _render_tasks(
            tasks or manifest["tasks"],
            str(folder),
            _local_kwargs(name),
            {"name": name, "revision": str(manifest["revision"])},
        )
        return _write_tasks(files, out_tasks)
    return _write_hub_tasks(str(export_dir_or_repo), Path(out_tasks), name, revision, tasks)


# -- the Hugging Face Hub (needs the network: not exercised by the tests beyond mocks) ----------------------------


def _hub_manifest(repo_id: str, revision: str | None) -> dict[str, Any]:
    # huggingface_hub only when a hub repo's manifest is read (kept off local exports)
    from huggingface_hub import hf_hub_download

    path = hf_hub_download(repo_id, MANIFEST, repo_type="dataset", revision=revision)
    manifest: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return manifest


def _write_hub_tasks(
    repo_id: str, out_tasks: Path, name: str | None, revision: str | None, tasks: Sequence[str] | None
) -> list[Path]:
    manifest = _hub_manifest(repo_id, revision) if tasks is None or name is None else {}
    name = _component(name or str(manifest["name"]), "export name")
    kwargs: dict[str, Any] = {
        "cache_dir": str(export_root(name)) if os.environ.get(EXPORTS_ENV) else f"vdg_exports/{name}",
        "video": True,
        "create_link": True,
    }
    if revision:
        kwargs["revision"] = revision
    export_id = {"name": name, "revision": str(manifest.get("revision", ""))}
    return _write_tasks(_render_tasks(tasks or manifest["tasks"], repo_id, kwargs, export_id), out_tasks)


def push_to_hub(out: Path, repo_id: str, private: bool = False, token: str | None = None) -> str:
    """Upload an export folder (without its machine-specific ``tasks/``) to a Hub dataset repo; return the commit id.

    Evaluate it with tasks from ``write_export_tasks(repo_id, ...)``.
    """
    # huggingface_hub only when pushing (kept off the local export and compute_revision)
    from huggingface_hub import HfApi

    out = Path(out)
    manifest = read_manifest(out)
    if manifest is None:
        raise ExportError(f"{out} is not a vdg export (no readable {MANIFEST})")
    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(
        repo_id=repo_id,
        folder_path=str(out),
        repo_type="dataset",
        ignore_patterns=["tasks/**"],
        commit_message=f"vdg export {manifest['name']} (revision {manifest['revision']})",
    )
    return str(info.oid)


# -- export ---------------------------------------------------------------------------------------


def export(
    tasks: Sequence[str],
    out: Path,
    name: str | None = None,
    workers: int = 1,
    yaml_root: Path | None = None,
    progress: bool = False,
) -> ExportResult:
    """Export every question of ``tasks`` (names or vdg tags), with its condition's video, to the folder ``out``.

    Videos are materialized through the vdg cache (built on a miss, ``workers`` processes). The
    export is assembled in ``.<out.name>.partial-<pid>`` beside ``out`` and renamed into place, replacing
    a previous export of the same name there; ``export_root(name)`` is then linked to ``out``. A question
    whose video cannot be built is kept, with the reason (``vdg_export.error``).

    Raises:
        TaskError: an unknown task name or a benchmark without its data (``vdg_tasks.jobs.materialize``).
        ExportError: ``out`` holds something else, or ``export_root(name)`` is a real folder elsewhere.
        CacheUnwritable: the vdg cache cannot be written.
    """
    names = expand_tasks(tasks)
    if not names:
        raise TaskError("no tasks to export")
    out = Path(os.path.abspath(Path(out).expanduser()))
    name = sanitize_name(name if name is not None else out.name)
    _check_out(out, name)
    check_link(export_root(name), out)

    jobs, _unavailable = plan(names, yaml_root)
    outcomes = run_jobs(jobs, workers=workers, progress=progress)
    builders = builder_versions()
    resolver = _Resolver(outcomes)

    out.parent.mkdir(parents=True, exist_ok=True)
    _sweep_leftovers(out)
    staging = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    roots = (out, staging, export_root(name))  # a path under one is published relative to the export
    try:
        rows: dict[str, list[dict[str, Any]]] = {}
        videos: dict[str, Path] = {}
        sources: dict[str, str] = {}
        by_bench: dict[str, list[str]] = {}
        for task in names:
            by_bench.setdefault(parse_task_name(task)[0], []).append(task)
        for bench, bench_tasks in by_bench.items():
            docs = benchmark_docs(bench, bench_tasks[0], yaml_root)
            sources[bench] = source_dataset(bench, bench_tasks[0], yaml_root)
            for task in bench_tasks:
                condition = CONDITIONS[parse_task_name(task)[1]]
                rows[task] = []
                for doc in docs:
                    shown = resolver.shown(bench, condition, doc)
                    if shown.error is None and shown.source_file is not None:
                        videos.setdefault(shown.file_key, shown.source_file)
                    bound = _doc_bound(condition, doc)
                    rows[task].append(_row(doc, name, task, condition, shown, bound, roots))

        entries = []
        for key, src in tqdm(sorted(videos.items()), desc="export videos", unit="video", disable=not progress):
            dst = staging / video_file(key)
            _place(src, dst)
            entries.append((video_file(key), _file_sha256(dst)))
        video_digests = dict(sorted(entries))
        row_digests = {f"data/{task}.jsonl": rows_sha256(task_rows) for task, task_rows in rows.items()}
        revision = _revision([*entries, *row_digests.items()])
        for task, task_rows in rows.items():
            for row in task_rows:
                row[ROW_KEY]["revision"] = revision
            _write_rows(staging / "data" / f"{task}.jsonl", task_rows)

        n_errors = {task: sum(r[ROW_KEY]["error"] is not None for r in task_rows) for task, task_rows in rows.items()}
        used = dict.fromkeys(parse_task_name(t)[1] for t in names)
        manifest = {
            "name": name,
            "revision": revision,
            "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            "benchmarks": list(by_bench),
            "tasks": names,
            "conditions": {
                c: {
                    "description": CONDITIONS[c].description,
                    "modality": CONDITIONS[c].modality,
                    "transform": CONDITIONS[c].transform,
                    "params": CONDITIONS[c].params_dict(),
                }
                for c in used
            },
            "transform_version": TRANSFORM_VERSION,
            "built_by": builders,
            "vdg_version": builders.get("vdg", "unknown"),
            "n_rows": {task: len(task_rows) for task, task_rows in rows.items()},
            "n_errors": sum(n_errors.values()),
            "n_errors_per_task": n_errors,
            "n_videos": len(videos),
            "sources": sources,
            "question_sets": _question_sets(by_bench),
            "split": SPLIT,
            "revision_definition": f"sha256[:{REVISION_HEX}] over sorted '<path>\\t<sha256>' lines of data/*.jsonl "
            "(canonical rows, vdg_export.revision blank) and videos/** (bytes)",
            "command": " ".join(["vdg", "export", "--tasks", ",".join(names), "--out", out.name, "--name", name]),
        }
        # Published (--push-to-hub): paths relative to the export or bare file names, and no secret-looking setting;
        # the sha256 of each video and data file (evaluation checks them) are hex, kept as they are.
        manifest = {**published(_jsonable(manifest, "manifest"), roots), FILES: video_digests, ROWS: row_digests}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        (staging / "README.md").write_text(card(manifest, out, roots), encoding="utf-8")
        files = _render_tasks(names, str(out), _local_kwargs(name), {"name": name, "revision": revision})
        _write_tasks(files, staging / "tasks")
        _check_out(out, name)  # nothing else appeared there meanwhile
        _publish(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    link(export_root(name), out)
    n_rows = sum(len(r) for r in rows.values())
    return ExportResult(out, name, revision, n_rows, sum(n_errors.values()), out / "tasks")
