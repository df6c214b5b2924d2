"""lmms-eval's own task configs, read as data (never evaluated).

``!function utils.fn`` in a task YAML names ``utils.py`` beside that YAML; read from here it becomes
the absolute ``lmms_eval.tasks.<folder>.utils.fn`` (``Function``), so a vdg task that copies a setting
can live in any folder.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import yaml


class Function(str):
    """A ``!function dotted.path`` value."""


def lmms_eval_tasks_dir() -> Path:
    spec = importlib.util.find_spec("lmms_eval")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("lmms-eval is not installed")
    return Path(spec.origin).parent / "tasks"


def _module_of(path: Path) -> str | None:
    """``lmms_eval.tasks.<...>`` for a YAML inside lmms-eval's task folder, else None."""
    try:
        rel = path.resolve().parent.relative_to(lmms_eval_tasks_dir().resolve())
    except ValueError:
        return None
    return ".".join(("lmms_eval", "tasks", *rel.parts))


def load_config(path: Path) -> dict[str, Any]:
    """A task YAML with its ``include`` chain merged (later keys win, as lmms-eval merges them).

    Function names relative to the YAML's folder (``utils.fn``, a ``utils.py`` beside it) become
    absolute when the YAML lies in lmms-eval's task folder, or a file path-qualified name otherwise.
    """
    path = Path(path)
    module = _module_of(path)

    class Loader(yaml.SafeLoader):
        pass

    def function(loader: yaml.SafeLoader, node: yaml.Node) -> Function:
        name = str(loader.construct_scalar(node))
        mod, _, _ = name.rpartition(".")
        if (path.parent / f"{mod}.py").is_file():
            return Function(f"{module}.{name}" if module else str(path.parent / name))
        return Function(name)

    Loader.add_constructor("!function", function)
    config = yaml.load(path.read_text(), Loader=Loader) or {}
    includes = config.pop("include", None)
    if not includes:
        return config
    merged: dict[str, Any] = {}
    for include in [includes] if isinstance(includes, str) else list(includes):
        base = Path(include) if Path(include).is_absolute() else path.parent / include
        merged.update(load_config(base))
    merged.update(config)
    return merged


def task_config(folder: str, config: str) -> dict[str, Any]:
    """``lmms_eval/tasks/<folder>/<config>`` as data."""
    return load_config(lmms_eval_tasks_dir() / folder / config)
