"""The coverage table: which folders count as video tasks, what is tried for each, and the committed
docs/coverage.md regenerated from the installed lmms-eval (stale when they differ)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vdg_tasks.data.upstream import load_config
from vdg_tasks.lmms.coverage import CoverageRow, candidates, coverage, render, video_task_folders
from vdg_tasks.lmms.derive import write
from vdg_tasks.lmms.derive_spec import SPEC_FILE, hooks_for

ROOT = Path(__file__).resolve().parents[3]


def _utils(folder: Path, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "utils.py").write_text(body)


def test_a_video_task_folder_has_a_visual_function_that_speaks_of_video(tmp_path):
    _utils(tmp_path / "vid", "def vid_doc_to_visual(doc):\n    return [doc['name'] + '.mp4']\n")
    _utils(tmp_path / "nested" / "sub", "def doc_to_visual(doc):\n    return [load_video(doc)]\n")
    _utils(tmp_path / "images", "def doc_to_visual(doc):\n    return [doc['image'].convert('RGB')]\n")
    _utils(tmp_path / "elsewhere", "def doc_to_text(doc):\n    return 'a video question'\n")
    _utils(tmp_path / "broken", "def doc_to_visual(doc:\n    return ['x.mp4']\n")
    _utils(tmp_path / "_private", "def doc_to_visual(doc):\n    return ['x.mp4']\n")
    assert [p.name for p in video_task_folders(tmp_path)] == ["nested", "vid"]


def test_the_folders_group_is_tried_else_its_tasks_with_probe_variants_last(tmp_path):
    folder = tmp_path / "bench"
    index = {
        "bench_no_visual": {"type": "task", "yaml_path": str(folder / "bench_no_visual.yaml")},
        "bench_a": {"type": "task", "yaml_path": str(folder / "bench_a.yaml")},
        "bench_random_choice": {"type": "task", "yaml_path": str(folder / "probe" / "rc.yaml")},
        "bench_z": {"type": "python_task", "yaml_path": str(folder / "z.yaml")},
        "other": {"type": "task", "yaml_path": str(tmp_path / "other" / "other.yaml")},
        "a_tag": {"type": "tag", "task": ["bench_a"]},
    }
    assert candidates(folder, index) == ["bench_a", "bench_z", "bench_no_visual", "bench_random_choice"]
    index["bench_sub"] = {"type": "group", "yaml_path": str(folder / "sub" / "group.yaml")}
    assert candidates(folder, index) == ["bench_sub"]
    index["bench"] = {"type": "group", "yaml_path": str(folder / "bench.yaml")}
    assert candidates(folder, index) == ["bench"]
    assert candidates(tmp_path / "empty", index) == []


def test_render_counts_the_derived_folders_and_shows_the_common_conditions_once():
    rows = [
        CoverageRow("a", "a", True, 2, ("orig", "black"), "letter (multiple choice)"),
        CoverageRow("b", "b_x", True, 1, ("orig",), "letter (multiple choice)"),
        CoverageRow("c", "c", False, reason="no options | field"),
        CoverageRow("d", "", False, reason="no task lmms-eval indexes"),
        CoverageRow("e", "e", True, 1, ("orig", "black"), "letter (multiple choice)"),
    ]
    text = render(rows, lmms_eval_version="9.9")
    assert "lmms-eval 9.9: **3 of 5** video task folders derive" in text
    assert "Conditions of a derived task (`all` below): `orig`, `black`." in text
    table = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| folder")]
    assert table[0] == "| a | `a` | yes | 2 | all | letter (multiple choice) |  |"
    assert table[1] == "| b | `b_x` | yes | 1 | orig | letter (multiple choice) |  |"
    assert table[2] == "| c | `c` | no |  |  |  | no options \\| field |"
    assert table[3] == "| d |  | no |  |  |  | no task lmms-eval indexes |"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        # Importing lmms-eval's task modules reads HF_HOME; nothing may be downloaded.
        hf_home = tmp_path_factory.mktemp("hf")
        for name, value in {"HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}.items():
            patch.setenv(name, value)
        yield coverage()


@pytest.mark.slow
def test_the_committed_coverage_table_is_the_one_the_installed_lmms_eval_gives(installed):
    rows = installed
    committed = (ROOT / "docs" / "coverage.md").read_text()
    assert render(rows) == committed, "docs/coverage.md is stale: run vdg coverage --out docs/coverage.md"
    # the README quotes the count
    derived = sum(row.derives for row in rows)
    assert f"{derived} of {len(rows)}" in (ROOT / "README.md").read_text()
    # every derived row's tasks were planned from real lmms-eval configs: the known ones are there
    by_folder = {row.folder: row for row in rows}
    assert by_folder["videomme"].derives and by_folder["mvbench"].n_tasks == 20
    assert by_folder["mix_evals"].tried == "mix_evals_video2text"  # the group beside the video utils.py
    assert by_folder["ovobench"].partly and by_folder["ovobench"].n_tasks == 2


@pytest.mark.slow
def test_every_derived_task_of_the_table_loads_in_lmms_eval_and_its_hooks_resolve(installed, tmp_path, monkeypatch):
    from lmms_eval.tasks import TaskManager
    from lmms_eval.utils import load_yaml_config

    for name, value in {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}.items():
        monkeypatch.setenv(name, value)
    specs = [spec for row in installed if row.derives for spec in row.specs]
    assert len({row.folder for row in installed if row.specs}) == sum(row.derives for row in installed)
    for spec in specs:
        write(spec, tmp_path / "derived")
    index = TaskManager(include_path=str(tmp_path / "derived"), include_defaults=False).task_index
    unloadable: list[str] = []
    for spec in specs:
        folder = tmp_path / "derived" / spec.task
        hooks = hooks_for(folder / SPEC_FILE)
        for condition in spec.conditions:
            assert f"{spec.task}_vdg_{condition}" in index, (spec.task, condition)
            assert callable(hooks[f"{condition}__process_results"]) and callable(hooks[f"{condition}__doc_to_visual"])
        leaf = folder / f"{spec.task}_vdg_{spec.conditions[0]}.yaml"
        try:
            load_yaml_config(spec.yaml_path, mode="full")
        except Exception as exc:  # the base itself cannot load here (librosa not installed, an API key read at
            unloadable.append(f"{spec.task} ({type(exc).__name__})")  # import): neither can its copy
            with pytest.raises(Exception):  # noqa: B017 (whatever the base raised, wrapped by the loader or not)
                load_yaml_config(str(leaf), mode="full")
            continue
        config = load_yaml_config(str(leaf), mode="full")
        for key in ("doc_to_visual", "process_results", "process_docs"):
            assert callable(config[key]), (spec.task, key)
        # the base's own prompt: its builder, or the doc field it names (TimeScope's `input`)
        assert callable(config["doc_to_text"]) or config["doc_to_text"] == spec.doc_to_text
        assert callable(config.get("class")) == ("class" in load_config(Path(spec.yaml_path)))
    assert len(unloadable) <= len(specs) // 5, unloadable  # optional packages of lmms-eval: most load
    print(f"{len(specs) - len(unloadable)} of {len(specs)} derived tasks loaded; the bases of {unloadable} do not here")


def test_a_folder_whose_config_cannot_be_read_is_a_row_not_the_end_of_the_table(tmp_path, monkeypatch):
    from types import SimpleNamespace

    import vdg_tasks.lmms.coverage as coverage_module

    _utils(tmp_path / "broken", "def doc_to_visual(doc):\n    return [doc['x'] + '.mp4']\n")
    _utils(tmp_path / "fine", "def doc_to_visual(doc):\n    return [doc['x'] + '.mp4']\n")
    index = {name: {"type": "task", "yaml_path": str(tmp_path / name / f"{name}.yaml")} for name in ("broken", "fine")}

    def plan(name, manager):
        if name == "broken":
            raise KeyError("task")
        return []

    monkeypatch.setattr(coverage_module, "plan", plan)
    rows = coverage(SimpleNamespace(task_index=index), tmp_path)
    assert [(r.folder, r.derives) for r in rows] == [("broken", False), ("fine", True)]
    assert rows[0].reason == "its config could not be read (KeyError: 'task')"
