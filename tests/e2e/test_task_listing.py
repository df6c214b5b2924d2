"""lmms-eval itself indexes every derived task and tag from the README's --include_path."""

import pytest

from vdg_tasks.data.benchmarks import BENCHMARKS, task_name
from vdg_tasks.lmms.yamlgen import YAML_ROOT, tags


@pytest.mark.slow
def test_lmms_eval_lists_every_task_and_tag():
    from lmms_eval.tasks import TaskManager

    manager = TaskManager("ERROR", include_path=str(YAML_ROOT))  # built-ins included: no name may collide
    for bench in BENCHMARKS.values():
        for cond in bench.conditions():
            name = task_name(bench.name, cond.name)
            assert name in manager.all_subtasks, name
            assert manager.task_index[name]["yaml_path"].startswith(str(YAML_ROOT)), name
            for tag in tags(bench.name, cond):
                assert tag in manager.all_tags, tag
    named = ["videomme_vdg_open", "videomme_vdg_abstain", "vdgsynth_vdg_open", "vdgsynth_vdg_abstain"]
    named += [f"infinibench_ga_vdg_{c}" for c in ("orig", "black", "oracle", "nameswap", "open", "metadata")]
    named += ["infinibench_ga_vdg_abstain", "infinibench_ga_vdg_subtitles"]
    assert set(named) <= set(manager.all_subtasks)
    assert "infinibench_ga_vdg_tracking" in manager.all_tags
    # MVBench: one task per sub-task and condition, a tag per condition over the sub-tasks; EgoSchema and its subset
    assert {"mvbench_vdg", "mvbench_vdg_black", "mvbench_vdg_reversed", "mvbench_vdg_ladder"} <= set(manager.all_tags)
    assert {"mvbench_episodic_reasoning_vdg_black", "mvbench_action_count_vdg_abstain"} <= set(manager.all_subtasks)
    egoschema = {"egoschema_vdg_black", "egoschema_subset_vdg_orig", "egoschema_subset_vdg_open"}
    assert egoschema <= set(manager.all_subtasks)
