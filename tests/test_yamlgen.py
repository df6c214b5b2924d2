"""The committed yaml_tasks/ are exactly what the declarations generate."""

import yaml

from vdg_tasks.benchmarks import BENCHMARKS, parse_task_name, task_name
from vdg_tasks.conditions import CONDITIONS
from vdg_tasks.yamlgen import YAML_ROOT, render_all


def test_committed_yamls_equal_generated():
    generated = render_all()
    for rel, text in generated.items():
        path = YAML_ROOT / rel
        assert path.is_file(), f"{rel} is not committed; run `vdg write-yamls`"
        assert path.read_text() == text, f"{rel} differs from what `vdg write-yamls` generates"
    on_disk = {p.relative_to(YAML_ROOT) for b in BENCHMARKS for p in (YAML_ROOT / b).glob("*") if p.is_file()}
    assert on_disk == set(generated), "stale files in yaml_tasks/"


def test_every_condition_has_a_task_per_benchmark_with_hooks_that_exist():
    import vdg_tasks.hooks as hooks

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    for bench in BENCHMARKS:
        for cond in (c.name for c in BENCHMARKS[bench].conditions()):
            leaf = yaml.load((YAML_ROOT / bench / f"{task_name(bench, cond)}.yaml").read_text(), Loader=Loader)
            assert leaf["task"] == task_name(bench, cond)
            assert parse_task_name(leaf["task"]) == (bench, cond)
            assert f"{bench}_vdg" in leaf["tag"]
            assert leaf["metadata"]["params"] == CONDITIONS[cond].params_dict()
            hook_names = ("doc_to_visual", "process_results")
            if CONDITIONS[cond].modality == "text":
                hook_names += ("doc_to_text",)
            for hook in hook_names:
                module, _, fn = leaf[hook].rpartition(".")
                assert module == "vdg_tasks.hooks" and callable(getattr(hooks, fn))


def test_videomme_template_reuses_lmms_eval_prompt_and_dataset():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))
    template = yaml.load((YAML_ROOT / "videomme" / "_default_template_yaml").read_text(), Loader=Loader)
    assert template["doc_to_text"] == "!function lmms_eval.tasks.videomme.utils.videomme_doc_to_text"
    import importlib.util
    from pathlib import Path

    upstream_path = Path(importlib.util.find_spec("lmms_eval").origin).parent / "tasks/videomme/videomme.yaml"
    upstream = yaml.load(upstream_path.read_text(), Loader=Loader)
    for key in ("dataset_path", "dataset_kwargs", "test_split", "generation_kwargs", "lmms_eval_specific_kwargs"):
        assert template[key] == upstream[key], key
