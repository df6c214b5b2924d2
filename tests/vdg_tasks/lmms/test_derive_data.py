"""vdg_tasks.lmms.derive_data: a derived task's dataset fields, looked up when lmms-eval loads it (the base's dataset,
or a local copy in $VDG_LOCAL_DATA), and vdg's message, not the base's KeyError nor lmms-eval's retries, where the
base needs an environment variable that is not set or a dataset that is not there.

The base task's functions live in a tiny module written per test and named by file path, as ``vdg derive`` names a
base's ``utils.py`` outside lmms-eval's own task folder; nothing runs lmms-eval, nothing is downloaded or encoded
(the one lmms-eval run is marked slow).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.offline_hub import no_hub
from vdg_tasks.data.local_copies import LOCAL_DATA_ENV, LocalCopyError, layout_tree, near_miss
from vdg_tasks.data.upstream import Function
from vdg_tasks.lmms.derive_data import (
    DATASET_FIELDS,
    BaseUnavailable,
    dataset_config,
    dataset_field,
    dataset_fields,
    dataset_problem,
    environment_problem,
    environment_warning,
)
from vdg_tasks.lmms.derive_files import render
from vdg_tasks.lmms.derive_spec import HOOKS_MODULE, SPEC_FILE, DeriveSpec, Fields, local_layout, local_video_of
from vdg_tasks.lmms.yamlgen import TEMPLATE

#: A base module whose import reads a variable (as TempCompass reads HF_HOME), and functions that read one when
#: called (as CVRR's doc_to_visual does), or ask first.
UTILS = """\
import os

{top}

def visual(doc):
    {visual}
    return [doc["clip"] + ".mp4"]


def prompt(doc, lmms_eval_specific_kwargs=None):
    return doc["question"]
"""
VARIABLE = "VDG_TEST_BASE_HOME"
HUB_DATASET = {
    "dataset_path": "vdg-test/no-such-dataset",
    "dataset_kwargs": {"token": True, "video": True},
    "dataset_name": "multi-choice",
    "split": "test",
}
FIELDS = Fields("qid", "candidates", "answer", "clip", "category", "question")


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch):
    """No hub, empty hub caches, no local copies, the variable unset, not an lmms-eval run."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv(VARIABLE, raising=False)
    yield from no_hub(tmp_path, monkeypatch)


def base_spec(folder: Path, top: str = "", visual: str = "pass", dataset=None, frames=False) -> DeriveSpec:
    """A spec over a base module ``folder/baseutils.py`` (``top``: its module-level code; ``visual``: the first line
    of its doc_to_visual)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "baseutils.py").write_text(UTILS.format(top=top, visual=visual))
    (folder / "base.yaml").write_text("task: demo_mc\n")
    return DeriveSpec(
        task="demo_mc",
        yaml_path=str(folder / "base.yaml"),
        fields=FIELDS,
        doc_to_visual=f"{folder}/baseutils.visual",
        doc_to_text=f"{folder}/baseutils.prompt",
        process_results=None,
        process_docs=None,
        visual_kwargs=None,
        conditions=("orig", "black"),
        frames=frames,
        dataset=dict(HUB_DATASET if dataset is None else dataset),
    )


def spec_file(spec: DeriveSpec, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SPEC_FILE
    path.write_text(spec.to_json())
    return path


# --- an environment variable the base needs ---------------------------------------------------------------------


def test_a_variable_read_as_the_base_module_is_imported_is_named_with_its_line_and_the_local_copy(tmp_path):
    spec = base_spec(tmp_path / "base", top=f'HOME = os.environ["{VARIABLE}"]')
    message = environment_problem(spec)
    assert message.startswith(f"demo_mc: the base task needs the environment variable {VARIABLE}, which is not set")
    assert f"{tmp_path / 'base' / 'baseutils.py'} reads it (line 3)" in message
    # how to point vdg at a local copy, as the built-in tasks say it: the setting, where it points, the layout
    layout = local_layout(spec)
    assert f"set {LOCAL_DATA_ENV} to the folder holding {layout.folder}/ ({near_miss(layout)})" in message
    assert message.endswith(layout_tree(layout))
    assert "KeyError" not in message


def test_hf_home_is_said_to_be_the_hugging_face_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HOME", raising=False)
    spec = base_spec(tmp_path / "base", top='HF_HOME = os.environ["HF_HOME"]')
    assert "Set HF_HOME to the Hugging Face cache" in environment_problem(spec)


def test_a_variable_set_or_read_with_a_default_or_asked_first_is_no_problem(tmp_path, monkeypatch):
    asked = f'HOME = os.environ["{VARIABLE}"] if "{VARIABLE}" in os.environ else "/x"'
    assert environment_problem(base_spec(tmp_path / "asked", top=asked)) is None
    assert environment_problem(base_spec(tmp_path / "default", top=f'HOME = os.getenv("{VARIABLE}", "/x")')) is None
    monkeypatch.setenv(VARIABLE, str(tmp_path))
    assert environment_problem(base_spec(tmp_path / "set", top=f'HOME = os.environ["{VARIABLE}"]')) is None


def test_a_key_error_of_the_base_s_own_is_no_variable(tmp_path):
    spec = base_spec(tmp_path / "base", top=f'HOME = {{}}["{VARIABLE}"]')
    assert environment_problem(spec) is None  # lmms-eval reports the base's own error


def test_a_variable_a_called_function_reads_is_a_warning_naming_the_function_not_a_stop(tmp_path, monkeypatch):
    spec = base_spec(tmp_path / "base", visual=f'os.path.join(os.environ["{VARIABLE}"], "videos")')
    message = environment_warning(spec)
    assert f"needs the environment variable {VARIABLE}" in message
    assert f"its doc_to_visual {spec.doc_to_visual} may read it" in message
    assert environment_problem(spec) is None  # read from the source: it may be guarded elsewhere, or never run
    guarded = (
        f'def _cache():\n    try:\n        return os.environ["{VARIABLE}"]\n    except KeyError:\n        return "/x"'
    )
    path = spec_file(base_spec(tmp_path / "guarded", top=guarded, visual="_cache()"), tmp_path / "derived")
    assert dataset_field(path, "dataset_path") == HUB_DATASET["dataset_path"]  # the run goes on


def test_the_doc_to_visual_is_not_asked_for_where_the_local_copy_holds_the_videos(tmp_path, monkeypatch):
    spec = base_spec(tmp_path / "base", visual=f'os.environ["{VARIABLE}"]')
    layout = local_layout(spec)
    (tmp_path / "data" / layout.folder / "videos").mkdir(parents=True)
    (tmp_path / "data" / layout.folder / f"{layout.questions[0]}.jsonl").write_text("{}\n")
    assert environment_warning(spec) is not None
    monkeypatch.setenv(LOCAL_DATA_ENV, str(tmp_path / "data"))
    assert environment_warning(spec) is None and environment_problem(spec) is None


def test_a_missing_variable_stops_an_lmms_eval_run_with_status_2_and_the_message(tmp_path, monkeypatch, capsys):
    spec = base_spec(tmp_path / "base", top=f'HOME = os.environ["{VARIABLE}"]')
    path = spec_file(spec, tmp_path / "derived")
    with pytest.raises(BaseUnavailable, match=f"environment variable {VARIABLE}") as raised:
        dataset_field(path, "dataset_path")  # in a test or notebook: an exception with the message
    assert str(raised.value) == environment_problem(spec)
    monkeypatch.setattr(sys, "argv", ["/venv/bin/lmms-eval", "--tasks", "demo_mc_vdg"])
    with pytest.raises(SystemExit) as stop:
        dataset_field(path, "dataset_path")
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"vdg: {environment_problem(spec)}\n"


# --- the dataset ------------------------------------------------------------------------------------------------


def test_a_hub_dataset_neither_cached_nor_reachable_is_named_with_the_reason_and_the_local_copy(tmp_path):
    spec = base_spec(tmp_path / "base")
    message = dataset_problem(spec)
    assert message.startswith("demo_mc: the dataset vdg-test/no-such-dataset (multi-choice) was not found.")
    assert "(ConnectionError: HF_DATASETS_OFFLINE is set and the dataset is not cached)" in message
    layout = local_layout(spec)
    assert layout.folder == "no-such-dataset" and layout.questions == ("multi-choice",)  # as on the hub
    assert f"set {LOCAL_DATA_ENV} to the folder holding no-such-dataset/ ({near_miss(layout)})" in message
    assert message.endswith(layout_tree(layout))
    # a task that gives frames decodes its own videos: the copy holds its questions only
    frames_spec = base_spec(tmp_path / "frames", frames=True)
    frames = dataset_problem(frames_spec)
    assert layout_tree(layout).splitlines()[-1] not in frames  # no videos/ line
    assert f"its doc_to_visual {frames_spec.doc_to_visual} decodes the videos it finds itself" in frames


def test_a_cached_hub_dataset_is_no_problem(tmp_path):
    (tmp_path / "hf-hub" / "datasets--vdg-test--no-such-dataset").mkdir(parents=True)
    assert dataset_problem(base_spec(tmp_path / "base")) is None


def test_a_missing_local_data_file_is_named(tmp_path):
    missing = tmp_path / "base" / "questions.jsonl"
    dataset = {"dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(missing)}}, "split": "test"}
    spec = base_spec(tmp_path / "base", dataset=dataset)
    message = dataset_problem(spec)
    assert message.startswith(f"demo_mc: the dataset file {missing} does not exist")
    assert local_layout(spec).folder == "demo_mc"  # a base reading local files: a copy named for the task
    missing.write_text("{}\n")
    assert dataset_problem(spec) is None


def test_a_missing_dataset_stops_an_lmms_eval_run_and_only_there_is_the_hub_asked(tmp_path, monkeypatch, capsys):
    spec = base_spec(tmp_path / "base")
    path = spec_file(spec, tmp_path / "derived")
    assert dataset_field(path, "dataset_path") == HUB_DATASET["dataset_path"]  # elsewhere: lmms-eval's own load
    monkeypatch.setattr(sys, "argv", ["lmms_eval", "--tasks", "demo_mc_vdg_orig"])
    with pytest.raises(SystemExit) as stop:
        dataset_field(path, "dataset_kwargs")
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"vdg: {dataset_problem(spec)}\n"


# --- the local copy -------------------------------------------------------------------------------------------


def test_a_local_copy_gives_the_questions_and_the_videos(tmp_path, monkeypatch, capsys):
    spec = base_spec(tmp_path / "base")
    layout = local_layout(spec)
    copy = tmp_path / "data" / layout.folder
    (copy / "videos").mkdir(parents=True)
    (copy / f"{layout.questions[0]}.jsonl").write_text("{}\n")
    (copy / "videos" / "c0.mp4").write_bytes(b"")
    monkeypatch.setenv(LOCAL_DATA_ENV, str(tmp_path / "data"))
    fields = dataset_fields(spec)
    assert fields == {
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": [str(copy / f"{layout.questions[0]}.jsonl")]}},
        "dataset_name": None,
    }
    assert dataset_problem(spec) is None  # the hub is not needed
    monkeypatch.setattr(sys, "argv", ["lmms-eval"])
    path = spec_file(spec, tmp_path / "derived")
    assert {f: dataset_field(path, f) for f in DATASET_FIELDS} == fields and capsys.readouterr().err == ""
    assert local_video_of(spec, {"videoID": "c0"}) == copy / "videos" / "c0.mp4"
    assert local_video_of(base_spec(tmp_path / "frames", frames=True), {"videoID": "c0"}) is None


def test_without_videos_in_the_copy_the_base_finds_them(tmp_path, monkeypatch):
    spec = base_spec(tmp_path / "base")
    (tmp_path / "data" / local_layout(spec).folder).mkdir(parents=True)
    monkeypatch.setenv(LOCAL_DATA_ENV, str(tmp_path / "data"))
    assert local_video_of(spec, {"videoID": "c0"}) is None


# --- the derived folder ---------------------------------------------------------------------------------------------


def test_the_dataset_is_kept_with_its_local_files_absolute_and_a_class_task_keeps_its_own(tmp_path):
    (tmp_path / "questions.jsonl").write_text("{}\n")
    config = {"dataset_path": "json", "dataset_kwargs": {"data_files": {"test": "questions.jsonl"}}}
    kept = dataset_config({**config, "test_split": "test"}, tmp_path)
    assert kept["dataset_kwargs"]["data_files"]["test"] == str((tmp_path / "questions.jsonl").resolve())
    assert kept["split"] == "test" and kept["dataset_name"] is None
    assert dataset_config({**config, "validation_split": "val"}, tmp_path)["split"] == "val"
    assert dataset_config({**config, "class": "x"}, tmp_path) is None


def test_the_template_names_the_dataset_fields_first_and_the_hooks_module_gives_them(tmp_path):
    spec = base_spec(tmp_path / "base")
    files = render(spec)
    first = [line.split(":")[0] for line in files[TEMPLATE].splitlines() if not line.startswith(("#", " ", "-"))]
    assert first[:3] == list(DATASET_FIELDS)
    assert all(f"{field}: !function {HOOKS_MODULE}.{field}" in files[TEMPLATE] for field in DATASET_FIELDS)
    folder = tmp_path / "derived"
    folder.mkdir()
    for name in (SPEC_FILE, f"{HOOKS_MODULE}.py"):
        (folder / name).write_text(files[name])
    # as lmms-eval's `!function vdg_derived.dataset_path` loads it: the file, then the name
    loader = importlib.util.spec_from_file_location(HOOKS_MODULE, folder / f"{HOOKS_MODULE}.py")
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    assert [getattr(module, f) for f in DATASET_FIELDS] == [HUB_DATASET[f] for f in DATASET_FIELDS]
    with pytest.raises(AttributeError):
        _ = module.no_such_hook


# --- an lmms-eval run -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_lmms_eval_stops_a_derived_task_with_vdg_s_message_not_the_base_s_error(tmp_path):
    from tests.helpers.runs import BIN, offline_env

    base = base_spec(tmp_path / "base", top=f'HOME = os.environ["{VARIABLE}"]')
    folder = tmp_path / "derived" / base.task
    folder.mkdir(parents=True)
    for name, text in render(base).items():
        (folder / name).write_text(text)
    env = {k: v for k, v in offline_env(tmp_path).items() if k != VARIABLE}

    def run(**extra: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(BIN / "lmms-eval"), "--model", "vdg_constant", "--include_path", str(tmp_path / "derived")]
        cmd += ["--tasks", f"{base.task}_vdg_orig", "--output_path", str(tmp_path / "out")]
        return subprocess.run(cmd, env={**env, **extra}, capture_output=True, text=True, timeout=600)

    unset = run()
    assert unset.returncode == 2 and f"vdg: {environment_problem(base)}\n" in unset.stderr
    assert "KeyError" not in unset.stderr and "Traceback" not in unset.stderr
    no_dataset = run(**{VARIABLE: str(tmp_path)})
    assert no_dataset.returncode == 2
    assert "vdg: demo_mc: the dataset vdg-test/no-such-dataset (multi-choice) was not found." in no_dataset.stderr
    assert "RetryError" not in no_dataset.stderr and "Traceback" not in no_dataset.stderr
    assert json.loads((folder / SPEC_FILE).read_text())["dataset"] == HUB_DATASET


def test_a_local_copy_gives_only_its_splits_files_and_refuses_other_splits(tmp_path, monkeypatch):
    spec = base_spec(tmp_path / "base")  # evaluates split "test"
    layout = local_layout(spec)
    questions = tmp_path / "data" / layout.folder / layout.questions[0]
    questions.mkdir(parents=True)
    for name in ("test-00000-of-00001.parquet", "validation-00000-of-00001.parquet", "train-00000-of-00002.parquet"):
        (questions / name).write_bytes(b"")
    monkeypatch.setenv(LOCAL_DATA_ENV, str(tmp_path / "data"))
    assert dataset_fields(spec)["dataset_kwargs"] == {
        "data_files": {"test": [str(questions / "test-00000-of-00001.parquet")]}
    }
    (questions / "test-00000-of-00001.parquet").unlink()
    with pytest.raises(LocalCopyError, match="split\\(s\\) train, validation, none of split test"):
        dataset_fields(spec)
    for name in ("train-00000-of-00002.parquet", "validation-00000-of-00001.parquet"):
        (questions / name).unlink()
    (questions / "part1.parquet").write_bytes(b"")  # named for no split: the task's questions
    assert dataset_fields(spec)["dataset_kwargs"]["data_files"]["test"] == [str(questions / "part1.parquet")]


def test_a_function_inside_dataset_kwargs_keeps_the_bases_own_fields(tmp_path):
    config = {"dataset_path": "json", "dataset_kwargs": {"data_files": {"test": Function("utils.files")}}}
    assert dataset_config(config, tmp_path) is None
