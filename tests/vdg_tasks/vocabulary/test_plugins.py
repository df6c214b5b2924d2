"""vdg_tasks.vocabulary.plugins: the modules a user names (entry points, an environment variable), each once, and
a module that fails to import said in one sentence naming it."""

from __future__ import annotations

from vdg_tasks.vocabulary.plugins import import_named, named_modules


def test_shipped_then_the_environment_each_named_once(monkeypatch):
    monkeypatch.setenv("VDG_TEST_MODULES", " mine , theirs,,mine, vdg_own")
    named = named_modules("vdg.no_such_group", "VDG_TEST_MODULES", shipped=("vdg_own",))
    assert named == [("vdg_own", "vdg"), ("mine", "$VDG_TEST_MODULES"), ("theirs", "$VDG_TEST_MODULES")]
    monkeypatch.delenv("VDG_TEST_MODULES")
    assert named_modules("vdg.no_such_group", "VDG_TEST_MODULES") == []


def test_a_module_that_raises_on_import_is_a_sentence_not_an_exception(tmp_path, monkeypatch):
    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('no GPU here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module, problem = import_named("broken_plugin", "$VDG_ANALYSES")
    assert module is None
    assert problem == "module 'broken_plugin' ($VDG_ANALYSES) failed to import: RuntimeError: no GPU here"
    module, problem = import_named("json", "vdg")
    assert problem is None and module is not None and module.__name__ == "json"


def test_a_module_that_exits_on_import_is_a_sentence_too(tmp_path, monkeypatch):
    (tmp_path / "exiting_plugin.py").write_text("raise SystemExit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module, problem = import_named("exiting_plugin", "$VDG_CONDITIONS")
    assert module is None and problem == "module 'exiting_plugin' ($VDG_CONDITIONS) failed to import: SystemExit: 3"
