"""`vdg export`: perturbed splits as a `datasets` dataset, and lmms-eval evaluating straight from it.

A 3-video vdgsynth world (one source corrupted on purpose) is exported for orig, black, shuffled,
crf28 and open. The files, the dataset card, the manifest, the rows and their provenance are checked,
the rows load with `datasets`, and (slow) the same tasks evaluated by the real lmms-eval CLI from vdg's
own tasks and from the export give the same answer for every question.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from vdg_tasks.jobs import export as ex
from vdg_tasks.jobs.export import ExportError, compute_revision, export, export_root, sanitize_name, write_export_tasks
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.perturb.cache import source_identity
from vdg_tasks.synthetic.synth import TASK_TYPES, generate
from vdg_tasks.vocabulary.conditions import TRANSFORM_VERSION

CONDITIONS = ("orig", "black", "shuffled", "crf28", "open")
TASKS = [f"vdgsynth_vdg_{c}" for c in CONDITIONS]
N_VIDEOS = 3
#: Questions per video: the four visual task types and the soundtrack's pitch.
PER_VIDEO = len(TASK_TYPES) + 1
N_QUESTIONS = PER_VIDEO * N_VIDEOS
BROKEN = "s002"
NAME = "synth-x"


def make_world(root: Path) -> dict:
    """Tiny vdgsynth videos (one corrupted), their questions and vdg task YAMLs pointing at them."""
    jsonl = generate(root / "data", n_videos=N_VIDEOS, seed=0, width=96, height=72, seconds=8)
    docs = [json.loads(line) for line in jsonl.read_text().splitlines()]
    broken = Path(next(d["video"] for d in docs if d["videoID"] == BROKEN))
    broken.write_bytes(np.random.default_rng(0).bytes(broken.stat().st_size))
    write_all(root / "tasks", synth_data=str(jsonl))
    return {"root": root, "docs": docs, "tasks": root / "tasks", "videos": root / "data" / "videos"}


def _env(mp: pytest.MonkeyPatch, root: Path, cache: str = "cache") -> None:
    mp.setenv("HF_HOME", str(root / "hf"))
    mp.setenv("VDG_CACHE", str(root / cache))
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("HF_DATASETS_OFFLINE", "1")
    mp.delenv(ex.EXPORTS_ENV, raising=False)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    with pytest.MonkeyPatch.context() as mp:
        _env(mp, root)
        w = make_world(root)
        result = export(TASKS, root / "out", name=NAME, yaml_root=w["tasks"])
        yield {**w, "result": result, "out": root / "out"}


def rows(out: Path, task: str) -> list[dict]:
    return [json.loads(line) for line in (out / "data" / f"{task}.jsonl").read_text().splitlines()]


def front_matter(readme: Path) -> dict:
    text = readme.read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


# -- the folder -----------------------------------------------------------------------------------


def test_result_and_files(world):
    out, result = world["out"], world["result"]
    assert result.out == out and result.name == NAME and result.tasks_dir == out / "tasks"
    assert result.n_rows == len(TASKS) * N_QUESTIONS
    assert result.n_errors == len(TASKS) * PER_VIDEO  # the broken video's questions, under every condition
    assert sorted(p.name for p in (out / "data").iterdir()) == sorted(f"{t}.jsonl" for t in TASKS)
    assert {p.name for p in out.iterdir()} == {"README.md", "export.json", "data", "videos", "tasks"}
    # 2 good sources (orig and open show the same file) + 2 x black, shuffled, crf28.
    videos = sorted((out / "videos").rglob("*.mp4"))
    assert len(videos) == 2 + 3 * 2
    assert all(p.parent.name == p.stem[:2] for p in videos)
    assert not list(out.parent.glob(f".{out.name}.*"))  # no staging folder left
    assert compute_revision(out) == result.revision


def test_export_root_links_the_export(world):
    link = export_root(NAME)
    assert link == world["root"] / "hf" / "vdg_exports" / NAME
    assert link.is_symlink() and link.resolve() == world["out"].resolve()


def test_dataset_card_front_matter_and_text(world):
    out = world["out"]
    meta = front_matter(out / "README.md")
    assert meta["configs"] == [
        {"config_name": t, "data_files": [{"split": "test", "path": f"data/{t}.jsonl"}]} for t in TASKS
    ]
    assert meta["license"] == "mit" and "vdgsynth" in meta["tags"]
    text = (out / "README.md").read_text()
    for needle in (
        "vdgsynth",
        "The K key frames of `ordered`",
        "`crf=28`",
        f"transform version: {TRANSFORM_VERSION}",
        "PyAV",
        "libx264",
        "vdg export --tasks",
        "--include_path",
        "write_export_tasks",
        world["result"].revision,
        "local files (json): questions.jsonl",
    ):
        assert needle in text, needle
    assert str(world["root"]) not in text  # published: no folder of this machine


def test_manifest(world):
    manifest = json.loads((world["out"] / "export.json").read_text())
    assert manifest["name"] == NAME and manifest["revision"] == world["result"].revision
    assert manifest["benchmarks"] == ["vdgsynth"] and manifest["tasks"] == TASKS
    assert manifest["created"].endswith("Z")
    assert manifest["conditions"]["crf28"]["params"] == {"crf": 28, "preset": "medium"}
    assert set(manifest["conditions"]) == set(CONDITIONS)
    assert manifest["transform_version"] == TRANSFORM_VERSION
    assert {"vdg", "pyav", "libx264"} <= set(manifest["built_by"])
    assert manifest["vdg_version"] == manifest["built_by"]["vdg"]
    assert manifest["n_rows"] == dict.fromkeys(TASKS, N_QUESTIONS)
    assert manifest["n_errors"] == len(TASKS) * PER_VIDEO
    # each data file's rows are listed (their canonical sha256, as the revision hashes them): evaluation checks them
    assert set(manifest["rows"]) == {f"data/{t}.jsonl" for t in TASKS}
    for task in TASKS:
        assert manifest["rows"][f"data/{task}.jsonl"] == ex.rows_sha256(rows(world["out"], task))
    assert set(manifest["files"]) == {
        p.relative_to(world["out"]).as_posix() for p in (world["out"] / "videos").rglob("*.mp4")
    }


def test_rows_carry_the_doc_the_video_and_its_provenance(world):
    out, result, docs = world["out"], world["result"], world["docs"]
    cache = world["root"] / "cache"
    for task in TASKS:
        condition = task.rpartition("_vdg_")[2]
        task_rows = rows(out, task)
        assert [r["question_id"] for r in task_rows] == [d["question_id"] for d in docs]
        for row, doc in zip(task_rows, docs, strict=True):
            info = row.pop("vdg_export")
            # every field of the benchmark doc, lists kept; a local path by its file name only (published)
            assert row == {**doc, "video": Path(doc["video"]).name}
            assert (info["name"], info["revision"], info["task"], info["condition"]) == (
                NAME,
                result.revision,
                task,
                condition,
            )
            prov = info["provenance"]
            assert prov["condition"] == condition and prov["transform_version"] == TRANSFORM_VERSION
            if doc["videoID"] == BROKEN:
                assert info["video_file"] == "" and "VideoDecodeError" in info["error"]
                assert info["effective_params"] is None
                continue
            assert info["error"] is None
            video = out / info["video_file"]
            assert video.is_file()
            assert prov["source_digest"] == source_identity(doc["video"])
            assert prov["params"] == {**info["condition_params"], **info["bound_params"]}
            if condition in ("orig", "open"):  # the source itself: no cache key, never built
                assert info["visual_key"] == "" and prov["built_by"] is None
                assert video.stem == source_identity(doc["video"])[:32]
                assert os.path.samefile(video, doc["video"])  # a hard link (same filesystem)
            else:
                key = info["visual_key"]
                assert video.name == f"{key}.mp4" and info["video_file"] == f"videos/{key[:2]}/{key}.mp4"
                assert os.path.samefile(video, cache / key[:2] / f"{key}.mp4")
                assert {"vdg", "pyav", "libx264"} <= set(prov["built_by"])
    shuffled = rows(out, "vdgsynth_vdg_shuffled")[0]["vdg_export"]
    assert shuffled["condition_params"] == {"k": 32, "order": "shuffled"}
    assert shuffled["effective_params"] == {"k": 32, "order": "shuffled"} and shuffled["bound_params"] == {}


def test_loads_with_datasets(world, tmp_path):
    import datasets

    out = world["out"]
    cache = str(tmp_path / "datasets-cache")  # never a table another test's export left in a shared cache
    data = datasets.load_dataset(str(out), name="vdgsynth_vdg_black", split="test", cache_dir=cache)
    assert len(data) == N_QUESTIONS
    assert {"question_id", "videoID", "options", "answer", "vdg_export"} <= set(data.column_names)
    first = data[0]
    assert first["options"] == world["docs"][0]["options"]
    assert first["vdg_export"]["condition"] == "black"
    assert first["vdg_export"]["video_file"].startswith("videos/")
    assert first["vdg_export"]["revision"] == world["result"].revision
    assert len(datasets.load_dataset(str(out), name="vdgsynth_vdg_crf28", split="test", cache_dir=cache)) == N_QUESTIONS


def test_task_yamls_read_the_export(world):
    out = world["out"]
    folder = out / "tasks" / "vdgsynth"
    assert sorted(p.name for p in folder.glob("*.yaml")) == sorted(f"{t}.yaml" for t in TASKS)
    template = (folder / "_default_template_yaml").read_text()
    assert f"dataset_path: {out}\n" in template
    assert f"cache_dir: {export_root(NAME)}\n" in template
    assert "doc_to_text: !function lmms_eval.tasks.videomme.utils.videomme_doc_to_text" in template
    assert "synth_tasks" not in template and "data_files" not in template
    leaf = (folder / "vdgsynth_vdg_black.yaml").read_text()
    assert "dataset_name: vdgsynth_vdg_black\n" in leaf
    assert "doc_to_visual: !function vdg_tasks.hooks.vdgsynth__black__doc_to_visual" in leaf
    assert world["result"].revision in leaf


def _declared_hub(benchmark: str) -> tuple[str, str | None]:
    """The hub dataset id and config vdg declares for ``benchmark`` (the lmms-eval task it copies)."""
    from vdg_tasks.data.benchmarks import BENCHMARKS
    from vdg_tasks.data.upstream import task_config

    upstream = BENCHMARKS[benchmark].upstream
    config = task_config(upstream.folder, upstream.config)
    return config["dataset_path"], config.get("dataset_name")


def test_dataset_card_names_the_hub_dataset_behind_a_function_reference(tmp_path, monkeypatch):
    """videomme's YAMLs name `!function vdg_tasks.sources.videomme__dataset_path`: the card names the dataset."""
    from tests.helpers.standins import videomme

    _env(monkeypatch, tmp_path)
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path / "local"))
    videomme(tmp_path / "local")
    result = export(["videomme_vdg_orig"], tmp_path / "out", name="vm")  # vdg's committed task YAMLs
    hub_id, config = _declared_hub("videomme")
    assert (hub_id, config) == ("lmms-eval/Video-MME", None)  # lmms_eval/tasks/videomme/videomme.yaml
    card = (result.out / "README.md").read_text()
    line = next(line for line in card.splitlines() if line.startswith("- `videomme`:"))
    assert f'Questions from {hub_id}: datasets.load_dataset("{hub_id}", split="test"); ' in line
    assert "read from its local copy ($VDG_LOCAL_DATA, parquet files): test-00000-of-00001.parquet" in line
    manifest_text = (result.out / "export.json").read_text()
    manifest = json.loads(manifest_text)
    for text in (card, manifest["sources"]["videomme"]):
        assert "__function__" not in text and "{'" not in text
    for text in (card, manifest_text):  # published: the local copy's folder stays on this machine
        assert str(tmp_path) not in text


def test_no_published_file_names_a_folder_of_this_machine_or_a_secret(tmp_path, monkeypatch):
    """An export of sources under a folder named like a setting (``hf_token=SECRET_DIR``), one video missing: its
    error row, the rows' source paths, the card and the manifest name files relative to the export or by name
    alone, and hide secret-looking settings (review 6). ``tasks/`` is not published (``push_to_hub``)."""
    root = tmp_path / "hf_token=SECRET_DIR"
    _env(monkeypatch, root)
    jsonl = generate(root / "data", n_videos=2, seed=0, width=96, height=72, seconds=8)
    docs = [json.loads(line) for line in jsonl.read_text().splitlines()]
    Path(docs[0]["video"]).unlink()  # a missing source video: an error row naming its path
    write_all(root / "tasks", synth_data=str(jsonl))
    result = export(["vdgsynth_vdg_orig", "vdgsynth_vdg_black"], root / "out", name="x", yaml_root=root / "tasks")
    assert result.n_errors > 0
    errors = [r["vdg_export"]["error"] for r in rows(result.out, "vdgsynth_vdg_orig") if r["vdg_export"]["error"]]
    assert errors and all("s000.mp4" in e for e in errors), errors
    published = [p for p in result.out.rglob("*") if p.is_file() and "tasks" not in p.relative_to(result.out).parts]
    assert {p.name for p in published} >= {"README.md", "export.json", "vdgsynth_vdg_orig.jsonl"}
    for path in published:
        data = path.read_bytes()
        for needle in (str(tmp_path), str(tmp_path.resolve()), "SECRET", "/tmp/"):
            assert needle.encode() not in data, (path, needle)
    assert compute_revision(result.out) == result.revision


# -- refusals, names, determinism -----------------------------------------------------------------


def test_sanitize_name():
    assert sanitize_name("my export/v1!") == "my-export-v1"
    assert sanitize_name(".hidden") == "hidden"
    assert sanitize_name("ok_name-1.2") == "ok_name-1.2"
    assert sanitize_name("///") == "vdg-export"


def test_refuses_a_foreign_out_or_link_and_leaves_nothing(world, tmp_path, monkeypatch):
    _env(monkeypatch, world["root"])
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    args = (["vdgsynth_vdg_black"],)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match="not a vdg export"):
        export(*args, foreign, yaml_root=world["tasks"])
    with pytest.raises(ExportError, match=f"holds the vdg export '{NAME}', not 'other'"):
        export(*args, world["out"], name="other", yaml_root=world["tasks"])
    occupied = export_root("taken")
    occupied.mkdir(parents=True)
    with pytest.raises(ExportError, match="is a real folder or file"):
        export(*args, tmp_path / "fresh", name="taken", yaml_root=world["tasks"])
    assert (foreign / "notes.txt").read_text() == "mine" and len(list(foreign.iterdir())) == 1
    assert not (tmp_path / "fresh").exists() and not list(tmp_path.glob(".*partial*"))


def test_default_name_is_the_folder_name(world, tmp_path, monkeypatch):
    _env(monkeypatch, world["root"])
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    result = export(["vdgsynth_vdg_black"], tmp_path / "my export!", yaml_root=world["tasks"])
    assert result.name == "my-export"
    assert export_root("my-export").resolve() == (tmp_path / "my export!").resolve()
    assert rows(result.out, "vdgsynth_vdg_black")[0]["vdg_export"]["name"] == "my-export"


def test_exporting_twice_gives_the_same_revision_and_replaces_the_folder(world, tmp_path, monkeypatch):
    _env(monkeypatch, world["root"])
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    first = export(TASKS, tmp_path / "a", name=NAME, yaml_root=world["tasks"])
    assert first.revision == world["result"].revision
    (tmp_path / "a" / "videos" / "stray.mp4").write_bytes(b"x")
    again = export(TASKS, tmp_path / "a", name=NAME, yaml_root=world["tasks"])
    assert again.revision == first.revision
    assert not (tmp_path / "a" / "videos" / "stray.mp4").exists()  # replaced whole
    # A fresh cache re-encodes every video. Held and black encodes are byte-reproducible, so is the revision;
    # CRF re-encodes are not (x264's macroblock-tree rate control, see vdg_tasks.synthetic.synth.encode_video): left
    # out here.
    reproducible = [t for t in TASKS if "_vdg_crf" not in t]
    cached = export(reproducible, tmp_path / "c", name=NAME, yaml_root=world["tasks"])
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "fresh-cache"))
    rebuilt = export(reproducible, tmp_path / "b", name=NAME, yaml_root=world["tasks"])
    assert rebuilt.revision == cached.revision
    assert export_root(NAME).resolve() == (tmp_path / "b").resolve()  # the link follows the latest export


def test_write_export_tasks_after_moving_the_export(world, tmp_path, monkeypatch):
    _env(monkeypatch, world["root"])
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    result = export(
        ["vdgsynth_vdg_black", "vdgsynth_vdg_orig"], tmp_path / "a", name="moving", yaml_root=world["tasks"]
    )
    moved = tmp_path / "elsewhere" / "b"
    moved.parent.mkdir()
    shutil.move(str(result.out), moved)
    written = write_export_tasks(str(moved), tmp_path / "tasks")
    assert {p.name for p in written} == {"_default_template_yaml", "vdgsynth_vdg_black.yaml", "vdgsynth_vdg_orig.yaml"}
    template = _load_yaml(tmp_path / "tasks" / "vdgsynth" / "_default_template_yaml")
    assert template["dataset_path"] == str(moved)
    assert template["dataset_kwargs"] == {"cache_dir": str(export_root("moving")), "video": True}
    assert export_root("moving").resolve() == moved.resolve()
    with pytest.raises(ExportError, match="its rows name that"):
        write_export_tasks(str(moved), tmp_path / "tasks", name="renamed")
    with pytest.raises(ExportError, match="not a vdg export"):
        write_export_tasks(str(tmp_path / "elsewhere"), tmp_path / "tasks")
    with pytest.raises(ExportError, match="has no config for vdgsynth_vdg_crf28"):
        write_export_tasks(str(moved), tmp_path / "tasks", tasks=["vdgsynth_vdg_crf28"])


def _load_yaml(path: Path) -> dict:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    return yaml.load(path.read_text(), Loader=Loader)


def test_write_export_tasks_for_a_hub_repo(world, tmp_path, monkeypatch):
    import huggingface_hub

    _env(monkeypatch, world["root"])
    asked = []

    def fake_download(repo_id, filename, **kwargs):
        asked.append((repo_id, filename, kwargs))
        return str(world["out"] / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    written = write_export_tasks("someone/vdg-synth", tmp_path / "tasks", revision="v1")
    assert asked == [("someone/vdg-synth", "export.json", {"repo_type": "dataset", "revision": "v1"})]
    assert len(written) == len(TASKS) + 1
    template = _load_yaml(tmp_path / "tasks" / "vdgsynth" / "_default_template_yaml")
    assert template["dataset_path"] == "someone/vdg-synth" and template["test_split"] == "test"
    assert template["dataset_kwargs"] == {
        "cache_dir": f"vdg_exports/{NAME}",
        "video": True,
        "create_link": True,
        "revision": "v1",
    }
    leaf = _load_yaml(tmp_path / "tasks" / "vdgsynth" / "vdgsynth_vdg_crf28.yaml")
    assert leaf["dataset_name"] == "vdgsynth_vdg_crf28" and leaf["include"] == "_default_template_yaml"
    assert leaf["metadata"]["export"] == {"name": NAME, "revision": world["result"].revision}
    # Given the tasks and the name, nothing is downloaded.
    asked.clear()
    write_export_tasks("someone/vdg-synth", tmp_path / "tasks2", name=NAME, tasks=["vdgsynth_vdg_black"])
    assert asked == [] and (tmp_path / "tasks2" / "vdgsynth" / "vdgsynth_vdg_black.yaml").is_file()


def test_hub_tasks_of_the_other_benchmarks_use_their_plain_prompt(tmp_path, monkeypatch):
    monkeypatch.delenv(ex.EXPORTS_ENV, raising=False)
    tasks = ["videomme_vdg_black", "infinibench_ga_vdg_oracle", "infinibench_ga_vdg_nameswap"]
    write_export_tasks("someone/x", tmp_path, name="x", tasks=tasks)
    videomme = _load_yaml(tmp_path / "videomme" / "_default_template_yaml")
    assert videomme["dataset_path"] == "someone/x" and "token" not in videomme["dataset_kwargs"]
    assert videomme["doc_to_text"] == "lmms_eval.tasks.videomme.utils.videomme_doc_to_text"
    assert "videomme_perception_score" in [m["metric"] for m in videomme["metric_list"]]
    infinibench = _load_yaml(tmp_path / "infinibench_ga" / "_default_template_yaml")
    assert infinibench["doc_to_text"] == "vdg_tasks.benchmarks.infinibench_prompt"
    nameswap = _load_yaml(tmp_path / "infinibench_ga" / "infinibench_ga_vdg_nameswap.yaml")
    assert nameswap["doc_to_text"] == "vdg_tasks.hooks.infinibench_ga__nameswap__doc_to_text"
    assert nameswap["dataset_name"] == "infinibench_ga_vdg_nameswap"
    assert sorted(p.name for p in (tmp_path / "infinibench_ga").iterdir()) == [
        "_default_template_yaml",
        "infinibench_ga_vdg_nameswap.yaml",
        "infinibench_ga_vdg_oracle.yaml",
    ]


def test_push_to_hub_uploads_the_export_folder(world, monkeypatch):
    import huggingface_hub

    calls = []

    class FakeApi:
        def __init__(self, token=None):
            calls.append(("init", token))

        def create_repo(self, repo_id, **kwargs):
            calls.append(("create_repo", repo_id, kwargs))

        def upload_folder(self, **kwargs):
            calls.append(("upload_folder", kwargs))
            return huggingface_hub.CommitInfo(
                commit_url="https://huggingface.co/datasets/me/x/commit/abc123",
                commit_message="m",
                commit_description="",
                oid="abc123",
            )

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    assert ex.push_to_hub(world["out"], "me/x", private=True, token="t") == "abc123"
    assert calls[0] == ("init", "t")
    assert calls[1] == ("create_repo", "me/x", {"repo_type": "dataset", "private": True, "exist_ok": True})
    upload = calls[2][1]
    assert upload["folder_path"] == str(world["out"]) and upload["repo_id"] == "me/x"
    assert upload["repo_type"] == "dataset" and upload["ignore_patterns"] == ["tasks/**"]
    with pytest.raises(ExportError, match="not a vdg export"):
        ex.push_to_hub(world["root"] / "data", "me/x")


# -- the round trip through lmms-eval -------------------------------------------------------------


def _records(run: Path) -> list[dict]:
    return [
        json.loads(line)["vdg"]
        for path in sorted(run.rglob("*_samples_*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory):
    """Run (a) from vdg's own tasks and the cache, export, then (b) from the export alone: the source
    videos moved away and an empty cache, so nothing can be materialized."""
    from tests.helpers.runs import lmms_eval, offline_env

    root = tmp_path_factory.mktemp("roundtrip")
    w = make_world(root)
    env = {k: v for k, v in offline_env(root).items() if k != ex.EXPORTS_ENV}
    tasks = ",".join(TASKS)
    run_a = lmms_eval(env, root / "runs" / "a", w["tasks"], "vdg_probe", tasks)
    with pytest.MonkeyPatch.context() as mp:
        _env(mp, root)
        result = export(TASKS, root / "export", name=NAME, yaml_root=w["tasks"])
    w["videos"].rename(w["videos"].with_name("videos-moved-away"))
    env_b = {**env, "VDG_CACHE": str(root / "empty-cache")}
    run_b = lmms_eval(env_b, root / "runs" / "b", result.tasks_dir, "vdg_probe", tasks)
    return {"a": run_a, "b": run_b, "result": result}


@pytest.mark.slow
def test_evaluating_from_the_export_gives_the_same_answers(round_trip):
    from postprocess.reading.lmms_eval_logs import load_frame

    cols = ["condition", "question_id", "pred", "status", "correct"]
    a = load_frame([round_trip["a"]])
    b = load_frame([round_trip["b"]])
    assert len(a) == len(b) == len(TASKS) * N_QUESTIONS
    key = ["condition", "question_id"]
    a = a[cols].sort_values(key).reset_index(drop=True).astype(object)
    b = b[cols].sort_values(key).reset_index(drop=True).astype(object)
    assert a.where(a.notna(), None).equals(b.where(b.notna(), None)), a.compare(b)
    assert set(a.status) == {"ok", "open", "error"}


@pytest.mark.slow
def test_a_broken_video_in_the_export_is_an_error_row(round_trip):
    from postprocess.reading.lmms_eval_logs import load_frame

    b = load_frame([round_trip["b"]])
    broken = b.video_id == BROKEN
    assert broken.sum() == len(TASKS) * PER_VIDEO
    assert (b[broken].status == "error").all() and (b[~broken].status != "error").all()
    assert b[broken].error.str.contains("VideoDecodeError").all()


@pytest.mark.slow
def test_records_from_the_export_name_it(round_trip):
    result = round_trip["result"]
    records = _records(round_trip["b"])
    assert len(records) == len(TASKS) * N_QUESTIONS
    for rec in records:
        assert rec.get("provenance", {}).get("export") == {"name": result.name, "revision": result.revision}
    from_cache = {(r["condition"], r["question_id"]): r for r in _records(round_trip["a"])}
    assert all("export" not in (rec.get("provenance") or {}) for rec in from_cache.values())
    # Where the pixels came from reads the same, evaluated from the cache or from the export.
    for rec in records:
        if rec["status"] != "error":
            other = from_cache[(rec["condition"], rec["question_id"])]
            mine = {k: v for k, v in rec["provenance"].items() if k != "export"}
            assert mine == other["provenance"], (rec["condition"], rec["question_id"], mine, other["provenance"])
            assert rec["visual_key"] == other["visual_key"]
