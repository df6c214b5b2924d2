"""Modules of conditions written by a test into a folder on ``sys.path`` and named in ``$VDG_CONDITIONS``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vdg_tasks.vocabulary.conditions import Registry, reload_registry

#: A module declaring one frame condition; ``.format(name=..., family=...)``.
INVERT = """
from vdg_tasks.extend import frame_condition

def invert(frame, context):
    return 255 - frame

CONDITIONS = [frame_condition({name!r}, invert, description="Inverted.", family={family!r})]
"""


def condition_modules(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Callable[[str, str], Path], Callable[..., Registry]]]:
    """``write(name, body)`` writes a module into ``folder``; ``load(*names)`` names them in $VDG_CONDITIONS and
    rebuilds the registry. Afterwards the registry is rebuilt without them and the modules are forgotten."""
    monkeypatch.syspath_prepend(str(folder))
    written: list[str] = []

    def write(name: str, body: str) -> Path:
        path = folder / f"{name}.py"
        path.write_text(body)
        written.append(name)
        return path

    def load(*names: str) -> Registry:
        monkeypatch.setenv("VDG_CONDITIONS", ",".join(names))
        for name in names:
            sys.modules.pop(name, None)
        return reload_registry()

    yield write, load
    monkeypatch.delenv("VDG_CONDITIONS", raising=False)
    for name in written:
        sys.modules.pop(name, None)
    reload_registry()
