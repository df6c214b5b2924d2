"""vdg installs into a researcher's lmms-eval environment without replacing its torch, and `make`/CI still install
the exact versions it is tested with (.ci/constraints.txt)."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / ".ci" / "constraints.txt"


def declared() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [Requirement(r) for r in project["dependencies"]]
    requirements += [Requirement(r) for r in project["optional-dependencies"]["test"]]
    return {canonicalize_name(r.name): r for r in requirements}


def pinned() -> dict[str, Version]:
    pins = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            (spec,) = requirement.specifier
            assert spec.operator == "==", f"{CONSTRAINTS.name}: {line!r} is not an exact pin"
            pins[canonicalize_name(requirement.name)] = Version(spec.version)
    return pins


def lmms_eval_floors() -> dict[str, Version]:
    """The lowest version lmms-eval itself accepts of each package it names with ``>=`` (no extra)."""
    floors = {}
    for text in importlib.metadata.requires("lmms-eval") or []:
        requirement = Requirement(text)
        if requirement.marker is not None:
            continue
        for spec in requirement.specifier:
            if spec.operator == ">=":
                floors[canonicalize_name(requirement.name)] = Version(spec.version)
    return floors


@pytest.mark.parametrize("package", ["torch", "torchvision"])
def test_the_torch_packages_admit_lmms_evals_floor_and_any_newer_release(package):
    requirement = declared()[package]
    floor = lmms_eval_floors()[package]
    newer = Version(f"{floor.major + 1}.0")
    assert requirement.specifier.contains(floor), f"{requirement} refuses lmms-eval's floor {floor}"
    assert requirement.specifier.contains(newer), f"{requirement} refuses {newer}: a pin replaces the user's torch"


def test_no_runtime_dependency_but_lmms_eval_is_pinned_exactly():
    exact = sorted(name for name, r in declared().items() if any(s.operator == "==" for s in r.specifier))
    assert exact == ["lmms-eval"], f"exact pins in pyproject.toml: {exact}; declare ranges"


def test_the_constraints_pin_every_declared_package_within_its_range():
    pins = pinned()
    for name, requirement in declared().items():
        assert name in pins, f"{CONSTRAINTS.name} does not pin {name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"{name}=={pins[name]} outside {requirement}"
        )


def test_the_installed_environment_is_the_constrained_one():
    """The environment the tests run in was installed through the constraints (as `make venv` and CI do)."""
    installed = {canonicalize_name(d.metadata["Name"]): Version(d.version) for d in importlib.metadata.distributions()}
    for name in ("torch", "torchvision", "lmms-eval", "decord", "av", "numpy", "pandas"):
        assert installed[name] == pinned()[name], f"{name} {installed[name]} installed, {pinned()[name]} pinned"


def test_make_and_ci_install_through_the_constraints():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^CONSTRAINTS\s*:=\s*\.ci/constraints\.txt$", makefile, re.M)
    install = next(line for line in makefile.splitlines() if "pip install" in line and "-e" in line)
    assert "-c $(CONSTRAINTS)" in install
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
