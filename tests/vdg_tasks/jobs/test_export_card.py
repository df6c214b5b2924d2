"""vdg_tasks.jobs.export_card: the dataset card (README.md) of an export, written from a small manifest, and
where each benchmark's questions were read from (``source_dataset``), read from task YAMLs written in the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.jobs.export_card import LICENSES, card, source_dataset

TASKS = ["vdgsynth_vdg_orig", "vdgsynth_vdg_crf28"]
MANIFEST = {
    "name": "synth-x",
    "revision": "0123456789abcdef",
    "tasks": TASKS,
    "benchmarks": ["vdgsynth"],
    "sources": {"vdgsynth": "local files (json): /data/questions.jsonl"},
    "conditions": {
        "orig": {"description": "The video as it is.", "params": {}},
        "crf28": {"description": "Re-encoded at CRF 28.", "params": {"crf": 28, "preset": "medium"}},
    },
    "n_rows": {"vdgsynth_vdg_orig": 12, "vdgsynth_vdg_crf28": 11},
    "n_errors_per_task": {"vdgsynth_vdg_orig": 0, "vdgsynth_vdg_crf28": 4},
    "transform_version": 3,
    "built_by": {"vdg": "0.9", "pyav": "12.0", "libavcodec": "60.31", "libx264": "164"},
}
OUT = Path("/exports/out-folder")


def front_matter(text: str) -> dict:
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


# --- the card ------------------------------------------------------------------------------------------


def test_front_matter_lists_one_config_per_task_and_the_benchmark_license():
    meta = front_matter(card(MANIFEST, OUT))
    assert meta == {
        "configs": [
            {
                "config_name": "vdgsynth_vdg_orig",
                "data_files": [{"split": "test", "path": "data/vdgsynth_vdg_orig.jsonl"}],
            },
            {
                "config_name": "vdgsynth_vdg_crf28",
                "data_files": [{"split": "test", "path": "data/vdgsynth_vdg_crf28.jsonl"}],
            },
        ],
        "license": "mit",  # LICENSES: vdgsynth is vdg's own
        "tags": ["vdg", "video", "video-question-answering", "robustness", "vdgsynth"],
        "task_categories": ["video-text-to-text"],
        "pretty_name": "vdg export synth-x",
    }


def test_the_title_and_the_source_of_each_benchmark():
    lines = card(MANIFEST, OUT).splitlines()
    assert "# synth-x: vdgsynth under vdg conditions" in lines
    source = (
        # published: an absolute path (a manifest from elsewhere may hold one) by its file name only
        f"- `vdgsynth`: {BENCHMARKS['vdgsynth'].description} Questions from local files (json): questions.jsonl."
    )
    assert source in lines
    assert not any(line.startswith("License:") for line in lines)  # vdg's own benchmark: its license is given


def test_one_table_row_per_task_with_its_parameters_rows_and_errors():
    lines = card(MANIFEST, OUT).splitlines()
    header = lines.index("| config | condition | shown to the model | parameters | rows | errors |")
    assert lines[header + 1] == "|---|---|---|---|---|---|"
    assert lines[header + 2] == "| `vdgsynth_vdg_orig` | `orig` | The video as it is. | none | 12 | 0 |"
    assert lines[header + 3] == (
        '| `vdgsynth_vdg_crf28` | `crf28` | Re-encoded at CRF 28. | `crf=28`, `preset="medium"` | 11 | 4 |'
    )
    assert lines[header + 4] == ""


def test_parameters_are_written_as_json_values():
    manifest = {
        **MANIFEST,
        "tasks": ["vdgsynth_vdg_shuffled"],
        "conditions": {"shuffled": {"description": "d", "params": {"k": 32, "order": "shuffled", "keep": [1, None]}}},
        "n_rows": {"vdgsynth_vdg_shuffled": 1},
        "n_errors_per_task": {"vdgsynth_vdg_shuffled": 0},
    }
    row = next(line for line in card(manifest, OUT).splitlines() if line.startswith("| `vdgsynth_vdg_shuffled`"))
    assert '| `k=32`, `order="shuffled"`, `keep=[1, null]` |' in row


def test_versions_name_what_built_the_export_and_the_revision():
    text = card(MANIFEST, OUT)
    assert "- transform version: 3\n" in text
    assert "- vdg 0.9, PyAV 12.0, libavcodec 60.31, libx264 164 (this export;" in text
    assert "- revision: `0123456789abcdef`: the first 16 hex digits of the sha256" in text


def test_a_version_the_manifest_lacks_is_a_question_mark():
    text = card({**MANIFEST, "built_by": {"vdg": "0.9"}}, OUT)
    assert "- vdg 0.9, PyAV ?, libavcodec ?, libx264 ? (this export;" in text


def test_the_commands_name_the_tasks_the_folder_and_the_export():
    text = card(MANIFEST, OUT)
    lines = text.splitlines()
    assert "vdg export --tasks vdgsynth_vdg_orig,vdgsynth_vdg_crf28 --out out-folder --name synth-x" in lines
    assert (
        "lmms-eval --model MODEL --include_path out-folder/tasks --tasks vdgsynth_vdg_orig,vdgsynth_vdg_crf28 "
        "--log_samples --output_path runs/MODEL"
    ) in lines
    assert "`$VDG_EXPORTS/synth-x` or else `$HF_HOME/vdg_exports/synth-x`" in text
    assert "write_export_tasks('FOLDER_OR_REPO_ID', Path('tasks'), 'synth-x')\"" in text
    assert (
        lines[-1]
        == 'The rows load with `datasets`: `load_dataset(FOLDER_OR_REPO_ID, name="vdgsynth_vdg_orig", split="test")`.'
    )
    assert text.endswith(".\n")


@pytest.mark.parametrize(
    ("benchmarks", "expected_license"),
    [
        (["videomme"], "other"),  # not in LICENSES: the source benchmark's terms
        (["vdgsynth", "videomme"], "other"),  # mixed: other
    ],
)
def test_a_benchmark_under_its_own_terms_makes_the_license_other_and_says_so(benchmarks, expected_license):
    assert "videomme" not in LICENSES
    manifest = {
        **MANIFEST,
        "tasks": ["videomme_vdg_orig"],
        "benchmarks": benchmarks,
        "sources": dict.fromkeys(benchmarks, "somewhere"),
        "n_rows": {"videomme_vdg_orig": 1},
        "n_errors_per_task": {"videomme_vdg_orig": 0},
    }
    text = card(manifest, OUT)
    meta = front_matter(text)
    assert meta["license"] == expected_license and meta["tags"][4:] == benchmarks
    assert "License: the source benchmark's terms apply to its questions and videos." in text.splitlines()
    assert f"# synth-x: {', '.join(benchmarks)} under vdg conditions" in text


# --- where the questions were read ------------------------------------------------------------------------


def _declared_hub(benchmark: str) -> tuple[str, str | None]:
    """The hub dataset id and config vdg declares for ``benchmark`` (the lmms-eval task it copies)."""
    from vdg_tasks.data.benchmarks import BENCHMARKS
    from vdg_tasks.data.upstream import task_config

    upstream = BENCHMARKS[benchmark].upstream
    config = task_config(upstream.folder, upstream.config)
    return config["dataset_path"], config.get("dataset_name")


def test_source_without_a_local_copy_is_the_hub_dataset_and_config(monkeypatch):
    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)
    hub_id, config = _declared_hub("mvbench_action_count")
    assert (hub_id, config) == ("OpenGVLab/MVBench", "action_count")  # lmms_eval/tasks/mvbench
    assert source_dataset("mvbench_action_count", "mvbench_action_count_vdg_orig", None) == (
        f'{hub_id} (config {config}): datasets.load_dataset("{hub_id}", "{config}", split="train")'
    )
    hub_id, _ = _declared_hub("videomme")
    assert hub_id == "lmms-eval/Video-MME"  # lmms_eval/tasks/videomme/videomme.yaml
    assert source_dataset("videomme", "videomme_vdg_black", None) == (
        'lmms-eval/Video-MME: datasets.load_dataset("lmms-eval/Video-MME", split="test")'
    )


def write_task(root: Path, benchmark: str, task: str, text: str) -> Path:
    folder = root / benchmark
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{task}.yaml").write_text(text)
    return folder


def test_local_data_files_are_named_by_file_name_alone(tmp_path):
    text = (
        "dataset_path: json\ndataset_kwargs:\n  data_files:\n    test: [q.jsonl, /abs/more.jsonl]\n    extra: x.jsonl\n"
    )
    folder = write_task(tmp_path, "mybench", "mybench_vdg_orig", text)
    # Published with the export (README.md, export.json): no folder they lay in, relative or absolute.
    assert folder.is_dir()
    expected = "local files (json): q.jsonl, more.jsonl, x.jsonl"
    assert source_dataset("mybench", "mybench_vdg_orig", tmp_path) == expected


def test_a_single_data_file_is_the_test_split(tmp_path):
    write_task(tmp_path, "mybench", "t_vdg_orig", "dataset_path: csv\ndataset_kwargs:\n  data_files: q.csv\n")
    assert source_dataset("mybench", "t_vdg_orig", str(tmp_path)) == "local files (csv): q.csv"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("dataset_path: org/ds\n", 'org/ds: datasets.load_dataset("org/ds", split="test")'),  # the default split
        (
            "dataset_path: org/ds\ndataset_name: cfg\nvalidation_split: val\n",
            'org/ds (config cfg): datasets.load_dataset("org/ds", "cfg", split="val")',
        ),
        (
            "dataset_path: org/ds\ntest_split: eval\nvalidation_split: val\n",  # the test split first
            'org/ds: datasets.load_dataset("org/ds", split="eval")',
        ),
    ],
)
def test_a_hub_dataset_is_named_as_a_person_loads_it(tmp_path, config, expected):
    write_task(tmp_path, "mybench", "mybench_vdg_orig", config)
    assert source_dataset("mybench", "mybench_vdg_orig", tmp_path) == expected


def test_the_included_template_supplies_the_dataset(tmp_path):
    folder = write_task(tmp_path, "mybench", "mybench_vdg_black", "include: _default_template_yaml\ndataset_name: c\n")
    (folder / "_default_template_yaml").write_text("dataset_path: org/ds\ndataset_name: base\ntest_split: t\n")
    assert source_dataset("mybench", "mybench_vdg_black", tmp_path) == (
        'org/ds (config c): datasets.load_dataset("org/ds", "c", split="t")'  # the leaf's dataset_name wins
    )


@pytest.mark.parametrize(
    "config",
    [
        None,  # no task file
        "task: mybench_vdg_orig\n",  # no dataset_path
        "dataset_path: [a, b]\n",  # a dataset_path that is no name
    ],
)
def test_an_unknown_source(tmp_path, config):
    if config is not None:
        write_task(tmp_path, "mybench", "mybench_vdg_orig", config)
    assert source_dataset("mybench", "mybench_vdg_orig", tmp_path) == "unknown"


def test_a_dataset_computed_by_functions_names_them(tmp_path):
    text = "dataset_path: !function my.module.path\ndataset_name: !function my.module.name\n"
    write_task(tmp_path, "mybench", "mybench_vdg_orig", text)
    assert source_dataset("mybench", "mybench_vdg_orig", tmp_path) == (
        "unknown (computed when lmms-eval loads the task, by my.module.path and my.module.name)"
    )


def test_a_declared_source_of_an_unknown_benchmark_is_only_named(tmp_path):
    write_task(
        tmp_path, "mybench", "mybench_vdg_orig", "dataset_path: !function vdg_tasks.sources.mybench__dataset_path\n"
    )
    assert source_dataset("mybench", "mybench_vdg_orig", tmp_path) == (
        "unknown (computed when lmms-eval loads the task, by vdg_tasks.sources.mybench__dataset_path)"
    )


VIDEOMME_DECLARED = (
    "dataset_path: !function vdg_tasks.sources.videomme__dataset_path\n"
    "dataset_name: !function vdg_tasks.sources.videomme__dataset_name\n"
)
# lmms_eval/tasks/videomme/videomme.yaml: dataset_path lmms-eval/Video-MME, no dataset_name, test_split test.
VIDEOMME_HUB = 'lmms-eval/Video-MME: datasets.load_dataset("lmms-eval/Video-MME", split="test")'


def test_a_declared_source_is_the_dataset_of_the_lmms_eval_task_it_copies(tmp_path, monkeypatch):
    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)
    write_task(tmp_path, "videomme", "videomme_vdg_orig", VIDEOMME_DECLARED)
    assert source_dataset("videomme", "videomme_vdg_orig", tmp_path) == VIDEOMME_HUB


def test_a_declared_source_read_from_a_local_copy_says_so_and_names_its_files(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path / "local"))
    (tmp_path / "local" / "videomme").mkdir(parents=True)
    questions = tmp_path / "local" / "videomme" / "videomme.jsonl"  # Video-MME's layout: videomme[.jsonl]
    questions.write_text("{}\n")
    write_task(tmp_path / "tasks", "videomme", "videomme_vdg_orig", VIDEOMME_DECLARED)
    assert source_dataset("videomme", "videomme_vdg_orig", tmp_path / "tasks") == (
        f"{VIDEOMME_HUB}; read from its local copy ($VDG_LOCAL_DATA, json files): {questions.name}"
    )


def test_a_declared_source_that_cannot_be_read_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path / "local"))
    (tmp_path / "local" / "videomme").mkdir(parents=True)  # a local copy without question files
    write_task(tmp_path / "tasks", "videomme", "videomme_vdg_orig", VIDEOMME_DECLARED)
    text = source_dataset("videomme", "videomme_vdg_orig", tmp_path / "tasks")
    assert text == "unknown (videomme's declared source cannot be read: LocalCopyError)"
    assert str(tmp_path) not in text  # published: the message's folder stays on this machine


def test_a_declared_function_beside_a_foreign_one_is_not_read_as_declared(tmp_path, monkeypatch):
    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)
    text = "dataset_path: !function vdg_tasks.sources.videomme__dataset_path\ndataset_name: !function other.name\n"
    write_task(tmp_path, "videomme", "videomme_vdg_orig", text)
    assert source_dataset("videomme", "videomme_vdg_orig", tmp_path) == (
        "unknown (computed when lmms-eval loads the task, by vdg_tasks.sources.videomme__dataset_path and other.name)"
    )
