"""vdg_tasks.lmms.infinibench_tasks: importing it checks that the infinibench_ga questions were prepared.

The module is executed here from its own file (not via ``sys.modules``) against a task folder made in tmp, since
the check runs on import: with the questions file present it loads and exports the InfiniBench prompt; without
it, the import and ``require_questions`` raise a FileNotFoundError saying how to prepare them, and log it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from loguru import logger

import vdg_tasks.lmms.yamlgen as yamlgen
from vdg_tasks.data.benchmarks import infinibench_prompt

MODULE = "vdg_tasks.lmms.infinibench_tasks"


@pytest.fixture
def tasks(tmp_path, monkeypatch) -> Path:
    """A task folder in tmp in place of yaml_tasks/ (no questions prepared yet)."""
    monkeypatch.setattr(yamlgen, "YAML_ROOT", tmp_path / "yaml_tasks")
    return tmp_path / "yaml_tasks"


@pytest.fixture
def errors():
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="ERROR")
    yield messages
    logger.remove(sink)


def load() -> ModuleType:
    """A fresh execution of the module's file, as lmms-eval's import of it runs it."""
    spec = importlib.util.find_spec(MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prepare(tasks: Path) -> Path:
    questions = tasks / "infinibench_ga" / "data" / "questions.jsonl"  # yamlgen.INFINIBENCH_DATA
    questions.parent.mkdir(parents=True)
    questions.write_text('{"question_id": "q1"}\n')
    return questions


def test_with_the_questions_prepared_the_module_loads_and_builds_the_infinibench_prompt(tasks):
    prepare(tasks)
    module = load()
    assert module.doc_to_text is infinibench_prompt
    assert module.__all__ == ["doc_to_text", "require_questions"]
    assert module.require_questions() is None


def test_without_the_questions_the_import_fails_saying_how_to_prepare_them(tasks, errors):
    missing = tasks / "infinibench_ga" / "data" / "questions.jsonl"
    with pytest.raises(FileNotFoundError) as info:
        load()
    message = str(info.value)
    assert message.startswith(f"The infinibench_ga questions have not been prepared ({missing} is missing): run ")
    assert "`vdg infinibench ANNOTATIONS --videos DIR`" in message and "`vdg synth-episodes`" in message
    assert errors == [message]  # logged too: lmms-eval's last line names only the import that failed


def test_questions_removed_after_the_import_are_missed_by_the_next_check(tasks):
    questions = prepare(tasks)
    module = load()
    questions.unlink()
    with pytest.raises(FileNotFoundError, match="have not been prepared"):
        module.require_questions()


def test_a_folder_in_place_of_the_questions_file_is_not_prepared_questions(tasks):
    (tasks / "infinibench_ga" / "data" / "questions.jsonl").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=r"questions\.jsonl is missing"):
        load()
