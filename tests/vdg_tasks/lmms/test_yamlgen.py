"""The committed yaml_tasks/ are exactly what the declarations generate."""

import yaml

from vdg_tasks.data.benchmarks import BENCHMARKS, parse_task_name, task_name
from vdg_tasks.lmms.yamlgen import YAML_ROOT, render_all
from vdg_tasks.vocabulary.conditions import CONDITIONS


def test_committed_yamls_equal_generated():
    generated = render_all()
    for rel, text in generated.items():
        path = YAML_ROOT / rel
        assert path.is_file(), f"{rel} is not committed; run `vdg write-yamls`"
        assert path.read_text() == text, f"{rel} differs from what `vdg write-yamls` generates"
    folders = {spec.report_name for spec in BENCHMARKS.values()}
    on_disk = {p.relative_to(YAML_ROOT) for b in folders for p in (YAML_ROOT / b).glob("*") if p.is_file()}
    assert on_disk == set(generated), "stale files in yaml_tasks/"


def test_every_condition_has_a_task_per_benchmark_with_hooks_that_exist():
    import vdg_tasks.lmms.hooks as hooks

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    for bench, spec in BENCHMARKS.items():
        for cond in (c.name for c in spec.conditions()):
            path = YAML_ROOT / spec.report_name / f"{task_name(bench, cond)}.yaml"
            leaf = yaml.load(path.read_text(), Loader=Loader)
            assert leaf["task"] == task_name(bench, cond)
            assert parse_task_name(leaf["task"]) == (bench, cond)
            # every condition is in the <benchmark>_vdg tag but one run by name (blind), in none of the benchmark's,
            # and those declared through vdg_tasks.extend, in their family's tag only
            declared = CONDITIONS[cond]
            assert (f"{spec.report_name}_vdg" in leaf.get("tag", [])) == (declared.tagged and declared.in_main_tag)
            assert (f"{spec.report_name}_vdg_{declared.family}" in leaf.get("tag", [])) == declared.tagged
            assert declared.in_main_tag == (declared.declared_in == "")
            assert leaf["metadata"]["params"] == CONDITIONS[cond].params_dict()
            hook_names = ("doc_to_visual", "process_results")
            if CONDITIONS[cond].modality == "text":
                hook_names += ("doc_to_text",)
            for hook in hook_names:
                module, _, fn = leaf[hook].rpartition(".")
                assert module == "vdg_tasks.hooks" and callable(getattr(hooks, fn))


def test_videomme_template_reuses_lmms_eval_prompt_and_dataset(monkeypatch):
    import vdg_tasks.lmms.dataset_fields as sources

    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))
    template = yaml.load((YAML_ROOT / "videomme" / "_default_template_yaml").read_text(), Loader=Loader)
    assert template["doc_to_text"] == "!function lmms_eval.tasks.videomme.utils.videomme_doc_to_text"
    import importlib.util
    from pathlib import Path

    upstream_path = Path(importlib.util.find_spec("lmms_eval").origin).parent / "tasks/videomme/videomme.yaml"
    upstream = yaml.load(upstream_path.read_text(), Loader=Loader)
    for key in ("test_split", "generation_kwargs", "lmms_eval_specific_kwargs"):
        assert template[key] == upstream[key], key
    # The dataset fields are looked up when lmms-eval loads the task: the hub's, with no local copy set.
    for key in ("dataset_path", "dataset_kwargs"):
        assert template[key] == f"!function vdg_tasks.sources.videomme__{key}"
        assert getattr(sources, f"videomme__{key}") == upstream[key], key


def test_mvbench_sub_tasks_are_lmms_eval_s():
    import importlib.util
    from pathlib import Path

    from lmms_eval.tasks.mvbench.utils import DATA_LIST

    from vdg_tasks.data.benchmarks import MVBENCH_SUB_TASKS

    folder = Path(importlib.util.find_spec("lmms_eval").origin).parent / "tasks/mvbench"
    shipped = {p.stem.removeprefix("mvbench_") for p in folder.glob("mvbench_*.yaml")}
    assert set(MVBENCH_SUB_TASKS) == set(DATA_LIST) == shipped
    assert len(MVBENCH_SUB_TASKS) == 20


def test_every_source_file_a_generated_file_names_exists():
    """The files the generated YAMLs and READMEs tell a reader to edit or read are files of this tree."""
    import re

    repo = YAML_ROOT.parent
    named = {m for text in render_all().values() for m in re.findall(r"vdg_tasks/[\w/]+\.py", text)}
    assert named, "the generated files name no source file"
    missing = sorted(n for n in named if not (repo / n).is_file())
    assert not missing, f"generated files name {missing}, which do not exist"
