"""lmms-eval itself indexes every derived task and tag from the README's --include_path."""

import pytest

from vdg_tasks.benchmarks import BENCHMARKS, task_name
from vdg_tasks.conditions import CONDITIONS, families
from vdg_tasks.yamlgen import YAML_ROOT


@pytest.mark.slow
def test_lmms_eval_lists_every_task_and_tag():
    from lmms_eval.tasks import TaskManager

    manager = TaskManager("ERROR", include_path=str(YAML_ROOT))  # built-ins included: no name may collide
    for bench in BENCHMARKS:
        for cond in CONDITIONS:
            name = task_name(bench, cond)
            assert name in manager.all_subtasks, name
            assert manager.task_index[name]["yaml_path"].startswith(str(YAML_ROOT)), name
        assert f"{bench}_vdg" in manager.all_tags
        for family in families():
            assert f"{bench}_vdg_{family}" in manager.all_tags
