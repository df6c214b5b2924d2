"""tests/ mirrors the packages: every module with logic has a test file named after it.

Module ``a/b/c.py`` is tested in ``tests/a/b/test_c.py`` (a leading underscore dropped: ``_paired.py`` ->
``test_paired.py``); a package whose ``__init__.py`` holds logic, ``a/b/__init__.py``, in ``tests/a/b/test_b.py``.
A module has logic when it defines a function or class other than the lazy-export hooks ``__getattr__`` and
``__dir__``. Front doors (old dotted paths kept for files made before, which replace themselves in
``sys.modules``) have none, and are checked below to stand for the module they name.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("vdg_tasks", "postprocess", "model_wrappers")
LAZY_EXPORT_HOOKS = frozenset({"__getattr__", "__dir__"})
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def has_logic(source: str) -> bool:
    """Whether a module's source defines a function or class other than the lazy-export hooks."""
    return any(
        isinstance(node, DEFINITIONS) and node.name not in LAZY_EXPORT_HOOKS for node in ast.walk(ast.parse(source))
    )


def mirrored_test(module: Path) -> Path:
    """The test file of a module (a path relative to the repository root)."""
    if module.name == "__init__.py":
        return Path("tests") / module.parent / f"test_{module.parent.name}.py"
    return Path("tests") / module.parent / f"test_{module.stem.lstrip('_')}.py"


def modules_without_tests(root: Path) -> list[str]:
    """``module -> expected test file`` for every module with logic under ``root``'s packages that has none."""
    missing = []
    for package in PACKAGES:
        for module in sorted((root / package).rglob("*.py")):
            relative = module.relative_to(root)
            if has_logic(module.read_text(encoding="utf-8")) and not (root / mirrored_test(relative)).is_file():
                missing.append(f"{relative} -> {mirrored_test(relative)}")
    return missing


def test_the_mirror_rule_names_the_expected_files():
    assert mirrored_test(Path("postprocess/stats/checks.py")) == Path("tests/postprocess/stats/test_checks.py")
    assert mirrored_test(Path("postprocess/analyses/_paired.py")) == Path("tests/postprocess/analyses/test_paired.py")
    assert mirrored_test(Path("postprocess/analyses/__init__.py")) == Path(
        "tests/postprocess/analyses/test_analyses.py"
    )


def test_lazy_exports_and_front_doors_are_not_logic_but_a_method_is():
    assert not has_logic("import sys\nfrom x import y\nsys.modules[__name__] = y\n")
    assert not has_logic("def __getattr__(name):\n    return 1\n\ndef __dir__():\n    return []\n")
    assert has_logic("X = 1\nclass A:\n    pass\n")
    assert has_logic("def __getattr__(name):\n    def inner():\n        pass\n    return inner\n")


def test_the_finder_sees_a_module_without_its_test_file(tmp_path):
    """A control: a package with one tested module, one untested one, and a front door."""
    (tmp_path / "postprocess" / "sub").mkdir(parents=True)
    (tmp_path / "postprocess" / "sub" / "tested.py").write_text("def f():\n    pass\n")
    (tmp_path / "postprocess" / "sub" / "untested.py").write_text("class C:\n    pass\n")
    (tmp_path / "postprocess" / "door.py").write_text("import sys\nsys.modules[__name__] = sys\n")
    (tmp_path / "tests" / "postprocess" / "sub").mkdir(parents=True)
    (tmp_path / "tests" / "postprocess" / "sub" / "test_tested.py").write_text("")
    assert modules_without_tests(tmp_path) == ["postprocess/sub/untested.py -> tests/postprocess/sub/test_untested.py"]


def test_every_module_with_logic_has_a_test_file_named_after_it():
    assert modules_without_tests(ROOT) == []


def front_doors() -> list[tuple[str, str]]:
    """(front door, the module it stands for) for every vdg_tasks module that replaces itself in sys.modules."""
    doors = []
    for module in sorted((ROOT / "vdg_tasks").glob("*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        targets = [
            f"{node.module}.{alias.name}"
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("vdg_tasks.")
            for alias in node.names
        ]
        replaces_itself = "sys.modules[__name__]" in module.read_text(encoding="utf-8")
        if replaces_itself:
            assert len(targets) == 1, f"{module.name}: a front door imports exactly the module it stands for"
            doors.append((f"vdg_tasks.{module.stem}", targets[0]))
    return doors


def test_the_front_doors_files_made_before_name_are_all_there():
    # the dotted paths generated YAMLs, derive folders, registrations and export cards name
    names = {door for door, _ in front_doors()}
    assert {
        "vdg_tasks.hooks",
        "vdg_tasks.sources",
        "vdg_tasks.synth_tasks",
        "vdg_tasks.infinibench_tasks",
        "vdg_tasks.derive",
        "vdg_tasks.export",
        "vdg_tasks.benchmarks",
    } <= names


@pytest.mark.parametrize(("door", "target"), front_doors())
def test_a_front_door_is_the_module_it_stands_for(door, target, monkeypatch):
    # a stand-in for the target: the real ones may need generated data to import (synth_tasks)
    stand_in = types.ModuleType(target)
    monkeypatch.setitem(sys.modules, target, stand_in)
    # ``from vdg_tasks.lmms import hooks`` reads the package's attribute once the real module was imported
    parent, _, leaf = target.rpartition(".")
    monkeypatch.setattr(importlib.import_module(parent), leaf, stand_in, raising=False)
    package = importlib.import_module("vdg_tasks")
    monkeypatch.setattr(package, door.rpartition(".")[2], None, raising=False)  # restored (or removed) after
    before = sys.modules.pop(door, None)
    try:
        assert importlib.import_module(door) is stand_in
        assert sys.modules[door] is stand_in
    finally:  # the door as it was: imported (the real module) or not yet
        sys.modules.pop(door, None)
        if before is not None:
            sys.modules[door] = before


#: The most lines one module of vdg may have: a longer one holds more than one job.
MAX_MODULE_LINES = 800


def test_no_module_is_over_the_line_cap():
    modules = [p for package in ("vdg_tasks", "postprocess", "model_wrappers") for p in (ROOT / package).rglob("*.py")]
    assert len(modules) > 100
    long = {
        str(p.relative_to(ROOT)): n
        for p in modules
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by job): {long}"
