"""Modules a user names to extend vdg: one way for every kind (conditions, analyses).

A kind has an entry point group (``[project.entry-points."vdg.conditions"]``) and an environment variable naming
modules that are not installed (comma-separated: lmms-eval imports vdg's hooks itself, so no command-line flag
reaches them). ``named_modules`` lists them, vdg's own first; ``import_named`` imports one and says, in one
sentence, why it could not. Each kind's registry reads its declarations from the modules and says what it left out.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from collections.abc import Sequence
from types import ModuleType


def named_modules(group: str, env: str, shipped: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(module, where it was named) for every module of a kind: ``shipped`` (vdg's own), the entry points of
    ``group`` (by name), then ``$env``; each once, where first named."""
    named = [(m, "vdg") for m in shipped]
    for point in sorted(importlib.metadata.entry_points(group=group), key=lambda p: p.name):
        named.append((point.value.split(":")[0].strip(), f"entry point {point.name!r} ({group})"))
    for module in os.environ.get(env, "").split(","):
        if module.strip():
            named.append((module.strip(), f"${env}"))
    seen: set[str] = set()
    return [(m, where) for m, where in named if not (m in seen or seen.add(m))]


def import_named(module_name: str, where: str) -> tuple[ModuleType | None, str | None]:
    """(the module, None), or (None, why it failed to import) naming it and where it was named."""
    try:
        return importlib.import_module(module_name), None
    except (Exception, SystemExit) as exc:  # a user's module: whatever it raises is said, not ours to crash on
        return None, f"module {module_name!r} ({where}) failed to import: {type(exc).__name__}: {exc}"
