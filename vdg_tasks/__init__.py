"""vdg's task side as a Python API: the declared conditions, and one condition's video for one source.

::

    from vdg_tasks import get_condition, materialize_video

    black = get_condition("black")
    video = materialize_video("clip.mp4", black, video_id="clip")  # video.path: the file to show a model

Public names (``__all__``):

- ``CONDITIONS`` (name -> ``Condition``, in declaration order), ``get_condition(name)`` (an unknown
  name suggests the nearest ones), ``Condition``.
- ``materialize_video(source, condition, video_id)``: ``vdg_tasks.perturb.cache.materialize``, the cached
  file of ``condition`` for one source video, built on a miss; returns a ``Materialized`` (``path``,
  ``key``, ``hit``). It is not called ``materialize`` here because ``vdg_tasks.jobs.materialize`` is the
  submodule behind ``vdg materialize``, and importing it would replace the attribute.

Your own conditions are declared through ``vdg_tasks.extend`` (docs/conditions.md); ``CONDITIONS`` holds them too.

Every name is imported on first use (PEP 562): lmms-eval imports ``vdg_tasks.hooks`` and the other
submodules on every task load, and each such import runs this file first, so it imports nothing.
"""

from __future__ import annotations

# typing itself costs ~15 ms to import: the constant below is what type checkers read as TYPE_CHECKING.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vdg_tasks.perturb.cache import Materialized
    from vdg_tasks.perturb.cache import materialize as materialize_video
    from vdg_tasks.vocabulary.conditions import CONDITIONS, Condition, get_condition

#: Public name -> (the module defining it, its name there).
_ORIGIN = {
    "CONDITIONS": ("vdg_tasks.vocabulary.conditions", "CONDITIONS"),
    "Condition": ("vdg_tasks.vocabulary.conditions", "Condition"),
    "get_condition": ("vdg_tasks.vocabulary.conditions", "get_condition"),
    "materialize_video": ("vdg_tasks.perturb.cache", "materialize"),
    "Materialized": ("vdg_tasks.perturb.cache", "Materialized"),
}

__all__ = ["CONDITIONS", "Condition", "Materialized", "get_condition", "materialize_video"]


def __getattr__(name: str) -> Any:
    origin = _ORIGIN.get(name)
    if origin is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = origin
    # importlib only on first use of a lazy name: `import vdg_tasks` loads nothing else (tests/postprocess/test_api.py)
    import importlib

    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
