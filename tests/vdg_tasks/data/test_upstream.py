"""vdg_tasks.data.upstream: lmms-eval's task configs read as data.

``load_config`` on YAMLs written here (the ``include`` chain and which keys win, ``!function`` names made
absolute inside lmms-eval's task folder, path-qualified beside a ``utils.py`` elsewhere, left alone otherwise),
``lmms_eval_tasks_dir`` (found, and not installed), ``Function``, and ``task_config`` on lmms-eval's own
Video-MME and MVBench configs, whose values are copied here from the installed YAML files.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import vdg_tasks.data.upstream as upstream
from vdg_tasks.data.upstream import Function, lmms_eval_tasks_dir, load_config, task_config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_lmms_eval_s_task_folder_is_the_tasks_folder_beside_its_package():
    import lmms_eval

    assert lmms_eval_tasks_dir() == Path(lmms_eval.__file__).parent / "tasks"
    assert (lmms_eval_tasks_dir() / "videomme" / "videomme.yaml").is_file()


def test_without_lmms_eval_the_task_folder_cannot_be_found(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match="lmms-eval is not installed"):
        lmms_eval_tasks_dir()


# -- load_config ----------------------------------------------------------------------------------------------


def test_a_yaml_without_includes_is_read_as_it_is(tmp_path):
    path = write(tmp_path / "task.yaml", "task: t\ngeneration_kwargs:\n  max_new_tokens: 16\n")
    assert load_config(path) == {"task": "t", "generation_kwargs": {"max_new_tokens": 16}}


def test_an_empty_yaml_is_an_empty_config(tmp_path):
    assert load_config(write(tmp_path / "empty.yaml", "")) == {}


def test_includes_are_merged_in_order_and_the_including_file_wins(tmp_path):
    write(tmp_path / "base_a", "a: from-a\nshared: from-a\nonly_a: 1\n")
    write(tmp_path / "base_b", "shared: from-b\nb: from-b\n")
    leaf = write(tmp_path / "leaf.yaml", "include: [base_a, base_b]\nb: from-leaf\n")
    # base_b overrides base_a's "shared"; the leaf overrides base_b's "b"; "include" itself is gone
    assert load_config(leaf) == {"a": "from-a", "shared": "from-b", "only_a": 1, "b": "from-leaf"}


def test_an_include_chain_is_followed_through_every_level_and_an_absolute_include_is_kept(tmp_path):
    grand = write(tmp_path / "elsewhere" / "grand", "depth: 0\ngrand: yes\n")
    write(tmp_path / "sub" / "parent", f"include: {grand}\ndepth: 1\n")
    leaf = write(tmp_path / "sub" / "leaf.yaml", "include: parent\ndepth: 2\n")
    assert load_config(leaf) == {"depth": 2, "grand": True}


def test_a_function_beside_a_utils_module_outside_lmms_eval_is_qualified_by_its_path(tmp_path):
    write(tmp_path / "mine" / "utils.py", "def fn(doc): ...\n")
    path = write(tmp_path / "mine" / "task.yaml", "process_results: !function utils.fn\n")
    value = load_config(path)["process_results"]
    assert isinstance(value, Function) and value == str(tmp_path / "mine" / "utils.fn")


def test_a_function_with_no_module_beside_the_yaml_is_left_as_written(tmp_path):
    path = write(
        tmp_path / "task.yaml", "a: !function utils.fn\nb: !function vdg_tasks.hooks.x__y__z\nc: !function fn\n"
    )
    config = load_config(path)
    assert config == {"a": "utils.fn", "b": "vdg_tasks.hooks.x__y__z", "c": "fn"}
    assert all(isinstance(v, Function) for v in config.values())


def test_a_function_inside_lmms_eval_s_task_folder_becomes_an_absolute_module_path(tmp_path, monkeypatch):
    tasks = tmp_path / "tasks"
    monkeypatch.setattr(upstream, "lmms_eval_tasks_dir", lambda: tasks)
    write(tasks / "bench" / "utils.py", "")
    write(tasks / "bench" / "nested" / "utils.py", "")
    write(tasks / "bench" / "_template", "doc_to_text: !function utils.to_text\n")
    leaf = write(tasks / "bench" / "nested" / "leaf.yaml", "include: ../_template\nagg: !function utils.agg\n")
    # each name is relative to the folder of the YAML that writes it: the template's, and the leaf's
    assert load_config(leaf) == {
        "doc_to_text": "lmms_eval.tasks.bench.utils.to_text",
        "agg": "lmms_eval.tasks.bench.nested.utils.agg",
    }


# -- task_config on lmms-eval's own configs -------------------------------------------------------------------


def test_video_mme_s_config_names_its_dataset_and_absolute_functions():
    config = task_config("videomme", "videomme.yaml")
    # values from lmms_eval/tasks/videomme/videomme.yaml
    assert config["dataset_path"] == "lmms-eval/Video-MME" and config["test_split"] == "test"
    assert config["dataset_kwargs"] == {"token": True, "cache_dir": "videomme", "video": True}
    assert config["doc_to_text"] == "lmms_eval.tasks.videomme.utils.videomme_doc_to_text"
    (metric,) = config["metric_list"]
    assert metric["aggregation"] == "lmms_eval.tasks.videomme.utils.videomme_aggregate_results"


def test_an_mvbench_sub_task_merges_its_template_under_its_own_keys():
    config = task_config("mvbench", "mvbench_action_count.yaml")
    # the leaf (mvbench_action_count.yaml) gives the task, dataset_name and split; _default_template_yaml the rest
    assert (config["task"], config["dataset_name"], config["test_split"]) == (
        "mvbench_action_count",
        "action_count",
        "train",
    )
    assert config["dataset_path"] == "OpenGVLab/MVBench" and "include" not in config
    assert config["process_results"] == "lmms_eval.tasks.mvbench.utils.mvbench_process_results"


def test_a_missing_upstream_config_raises():
    with pytest.raises(FileNotFoundError):
        task_config("videomme", "no_such_config.yaml")
