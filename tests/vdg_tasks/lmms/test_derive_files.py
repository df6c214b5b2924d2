"""The folder `vdg derive` writes for a planned task (vdg_tasks.lmms.derive_files): its files, the template without
what vdg replaces, one tagged leaf per condition."""

from __future__ import annotations

import dataclasses
import re

import pytest

from tests.helpers.derive_base import BASE_TASK, write_base_task
from vdg_tasks.data.benchmarks import task_name
from vdg_tasks.lmms.derive import plan
from vdg_tasks.lmms.derive_files import REPLACED, render, tags
from vdg_tasks.lmms.derive_spec import HOOKS_MODULE, SPEC_FILE, DeriveSpec
from vdg_tasks.lmms.yamlgen import TEMPLATE

CONDITIONS = ("orig", "black", "shuffled")


@pytest.fixture
def spec(tmp_path) -> DeriveSpec:
    from lmms_eval.tasks import TaskManager

    base = write_base_task(tmp_path / "base")
    manager = TaskManager(include_path=str(base), include_defaults=False)
    (planned,) = plan(BASE_TASK, conditions=CONDITIONS, include_path=base, manager=manager)
    return planned


def top_level_keys(yaml_text: str) -> set[str]:
    return set(re.findall(r"^(\w+):", yaml_text, re.M))


def test_the_folder_holds_the_template_a_leaf_per_condition_the_spec_the_hooks_and_a_readme(spec):
    files = render(spec)
    leaves = {f"{task_name(BASE_TASK, c)}.yaml" for c in CONDITIONS}
    assert set(files) == {TEMPLATE, *leaves, SPEC_FILE, f"{HOOKS_MODULE}.py", "README.md"}
    assert DeriveSpec.from_json(files[SPEC_FILE]) == spec
    assert all(f"`{task_name(BASE_TASK, c)}`" in files["README.md"] for c in CONDITIONS)


def test_the_template_leaves_out_what_vdg_replaces_and_each_leaf_names_its_task_and_tags(spec):
    files = render(spec)
    assert not top_level_keys(files[TEMPLATE]) & (REPLACED - {"process_docs", "metric_list", "doc_to_visual"})
    for condition in CONDITIONS:
        text = files[f"{task_name(BASE_TASK, condition)}.yaml"]
        assert re.search(rf"^task: {task_name(BASE_TASK, condition)}$", text, re.M)
        for tag in tags(spec, condition):
            assert re.search(rf"^- {tag}$", text, re.M), (condition, tag)


def test_a_group_member_is_tagged_with_its_group_too(spec):
    member = dataclasses.replace(spec, group="suite")
    assert tags(member, "black") == [*tags(spec, "black"), "suite_vdg", "suite_vdg_ladder", "suite_vdg_black"]
