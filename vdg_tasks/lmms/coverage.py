"""Which of the installed lmms-eval's video tasks ``vdg derive`` covers: the table of ``docs/coverage.md``.

A *video task folder* is a folder under ``lmms_eval/tasks/`` with a ``utils.py`` (at any depth) defining a
function whose name holds ``visual`` and whose body speaks of video (``video``, or a video file
extension). Each folder is tried as a new user would: its group (a group YAML directly in the folder, else any
group in it, first by name), else its tasks one by one (lmms-eval's probe variants last) until one
derives; the row says whether ``vdg derive`` plans it, how many tasks it derives with which conditions
and scoring, or the reason the first one tried is refused.
``vdg coverage --out docs/coverage.md`` writes the table; a test fails when the committed one is stale.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from loguru import logger

from vdg_tasks.data.upstream import lmms_eval_tasks_dir
from vdg_tasks.lmms.derive import DeriveError, DeriveSpec, plan, task_manager
from vdg_tasks.lmms.derive_spec import is_in_text

_VIDEO = re.compile(r"video|\.mp4|\.mkv|\.webm|\.avi", re.IGNORECASE)


@dataclass(frozen=True)
class CoverageRow:
    """One video task folder.

    Attributes:
        folder: the folder's name under ``lmms_eval/tasks/``.
        tried: the group or task tried (``""`` when the folder holds none lmms-eval indexes).
        derives: ``vdg derive <tried>`` plans it.
        n_tasks: tasks derived (a group's members; 0 when refused).
        conditions: the conditions each derived task gets (empty when refused).
        scoring: how its answers are scored (empty when refused).
        reason: why it is refused (empty when it derives); for a group derived in part, why its other members are.
        partly: a group refused as a whole whose other members derive one by one (``n_tasks`` of them).
        specs: the derived tasks' specs (``vdg derive`` writes one folder each).
    """

    folder: str
    tried: str
    derives: bool
    n_tasks: int = 0
    conditions: tuple[str, ...] = ()
    scoring: str = ""
    reason: str = ""
    partly: bool = False
    specs: tuple[DeriveSpec, ...] = field(default=(), compare=False, repr=False)


def _builds_a_video_visual(utils: Path) -> bool:
    source = utils.read_text(errors="replace")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(
        isinstance(node, ast.FunctionDef)
        and "visual" in node.name
        and _VIDEO.search(ast.get_source_segment(source, node) or "") is not None
        for node in ast.walk(tree)
    )


def video_task_folders(tasks_dir: Path) -> list[Path]:
    """The video task folders under ``tasks_dir``, by name."""
    return [
        folder
        for folder in sorted(p for p in tasks_dir.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
        if any(_builds_a_video_visual(utils) for utils in sorted(folder.rglob("utils.py")))
    ]


#: Name parts of lmms-eval's probe variants of a benchmark (``videomme_no_visual``, ...): tried last.
PROBE_VARIANTS = ("no_visual", "random_choice", "gt_none_option", "number_option", "video_only", "oe_mcq", "mcq_oe")


def candidates(folder: Path, index: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What a new user would try for ``folder``, in order: a group whose YAML lies in the folder, else a group
    beside a ``utils.py`` that builds a video visual (MixEval-X's ``video2text``, not its ``audio2text``), else any
    group in it; with no group, its tasks by name (lmms-eval's probe variants last). Empty when lmms-eval indexes
    nothing there."""
    inside = {
        name: entry
        for name, entry in index.items()
        if entry.get("yaml_path") and Path(str(entry["yaml_path"])).is_relative_to(folder)
    }
    groups = sorted(name for name, entry in inside.items() if entry["type"] == "group")
    top = [name for name in groups if Path(inside[name]["yaml_path"]).parent == folder]
    beside_video = [
        name
        for name in groups
        if (utils := Path(inside[name]["yaml_path"]).parent / "utils.py").is_file() and _builds_a_video_visual(utils)
    ]
    if top or beside_video or groups:
        return [(top or beside_video or groups)[0]]
    return sorted(
        (name for name, entry in inside.items() if entry["type"] in ("task", "python_task")),
        key=lambda name: (any(part in name for part in PROBE_VARIANTS), name),
    )


def _row(folder: Path, index: Mapping[str, Mapping[str, Any]], manager: Any) -> CoverageRow:
    names = candidates(folder, index)
    if not names:
        return CoverageRow(folder.name, "", False, reason="no task lmms-eval indexes")
    refused: DeriveError | None = None
    for name in names:
        try:
            specs = plan(name, manager=manager)
        except DeriveError as exc:
            if exc.derivable:  # the members `vdg derive` names as derivable one by one
                members = exc.derivable
                conditions = tuple(dict.fromkeys(c for spec in members for c in spec.conditions))
                return CoverageRow(
                    folder.name,
                    name,
                    True,
                    len(members),
                    conditions,
                    scoring_cell(members),
                    exc.short,
                    partly=True,
                    specs=members,
                )
            refused = refused or exc
            continue
        except Exception as exc:  # one folder's unreadable config is that folder's row, not the end of the table
            refused = refused or DeriveError(str(exc), f"its config could not be read ({type(exc).__name__}: {exc})")
            continue
        conditions = tuple(dict.fromkeys(c for spec in specs for c in spec.conditions))
        return CoverageRow(folder.name, name, True, len(specs), conditions, scoring_cell(specs), specs=tuple(specs))
    assert refused is not None
    return CoverageRow(folder.name, names[0], False, reason=refused.short)


def scoring_cell(specs: Sequence[DeriveSpec]) -> str:
    """How a folder's derived tasks are scored: each distinct scoring, a letter's saying where its options are."""
    cells = []
    for spec in specs:
        if spec.frames:
            cells.append(f"{spec.scoring}, on the task's own frames")
        elif spec.graded:
            cells.append(f"{spec.scoring} (graded)")
        elif is_in_text(spec.fields.options):
            cells.append("letter (options read from the question text)")
        else:
            cells.append("letter (multiple choice)")
    return "; ".join(dict.fromkeys(cells))


def coverage(manager: Any = None, tasks_dir: Path | None = None) -> list[CoverageRow]:
    """One row per video task folder of the installed lmms-eval (``manager``: a ``TaskManager`` to reuse)."""
    manager = manager if manager is not None else task_manager(None)
    tasks_dir = tasks_dir if tasks_dir is not None else lmms_eval_tasks_dir()
    logger.disable("vdg_tasks.lmms.derive")  # its per-task warnings are for one user deriving one task
    try:
        return [_row(folder, manager.task_index, manager) for folder in video_task_folders(tasks_dir)]
    finally:
        logger.enable("vdg_tasks.lmms.derive")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _derives(row: CoverageRow) -> str:
    return "in part" if row.partly else "yes" if row.derives else "no"


def _common(rows: Sequence[CoverageRow]) -> tuple[str, ...]:
    counted = Counter(row.conditions for row in rows if row.derives)
    return counted.most_common(1)[0][0] if counted else ()


def render(rows: Iterable[CoverageRow], lmms_eval_version: str | None = None) -> str:
    """``docs/coverage.md``: the count, the common condition list, and one table row per folder."""
    rows = list(rows)
    lmms_eval_version = lmms_eval_version or version("lmms_eval")
    derived = [row for row in rows if row.derives]
    partly = sum(row.partly for row in derived)
    in_part = (
        f" ({partly} of them in part: a group some of whose members are refused, its others derived one by one)"
        if partly
        else ""
    )
    common = _common(rows)
    lines = [
        "# Coverage: lmms-eval's video tasks under `vdg derive`",
        "",
        "Generated by `vdg coverage --out docs/coverage.md` (a test fails when this file is stale); do not edit.",
        "",
        f"lmms-eval {lmms_eval_version}: **{len(derived)} of {len(rows)}** video task folders derive{in_part}. A "
        "video task folder is one with a `utils.py` defining a function whose name holds `visual` and whose body "
        "speaks of video. Each is tried on its group (a group YAML in the folder, else one beside a video `utils.py`, "
        "else any group in it), else on its tasks one by one (lmms-eval's probe variants last) until one derives, "
        "as `vdg derive NAME` would be; a group refused as a whole counts `in part` when `vdg derive` names members "
        "that derive one by one (the tasks column counts those; why not, the others). A refused folder shows the "
        "first one tried.",
        "",
        f"Conditions of a derived task (`all` below): {', '.join(f'`{c}`' for c in common) or 'none'}.",
        "",
        "| folder | tried | derives | tasks | conditions | scoring | why not |",
        "|---|---|---|---:|---|---|---|",
    ]
    for row in rows:
        if row.conditions == common:
            conditions = "all" if row.derives else ""
        else:
            conditions = ", ".join(row.conditions)
        lines.append(
            f"| {row.folder} | {row.tried and f'`{row.tried}`'} | {_derives(row)} | "
            f"{row.n_tasks or ''} | {conditions} | {row.scoring} | {_cell(row.reason)} |"
        )
    return "\n".join(lines) + "\n"


__all__ = ["PROBE_VARIANTS", "CoverageRow", "candidates", "coverage", "render", "video_task_folders"]
