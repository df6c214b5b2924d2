"""The benchmarks vdg declares, by the names their tasks, logs and reports use, and what their docs carry.

Both sides read it: ``vdg_tasks.data.benchmarks`` gives each benchmark's spec (how to reach its data) the
``provides`` declared here, and the report says whether a benchmark offers the conditions a table needs
(``offered_conditions``). A condition applies to a benchmark whose docs provide what the condition requires.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vdg_tasks.vocabulary.conditions import Requirement, conditions_for

#: MVBench's sub-tasks, as lmms-eval 0.7.3 names them (``mvbench_<sub_task>``; a test checks the list).
MVBENCH_SUB_TASKS: tuple[str, ...] = (
    "action_sequence",
    "moving_count",
    "action_prediction",
    "episodic_reasoning",
    "action_antonym",
    "action_count",
    "scene_transition",
    "object_shuffle",
    "object_existence",
    "fine_grained_pose",
    "unexpected_action",
    "moving_direction",
    "state_change",
    "object_interaction",
    "character_order",
    "action_localization",
    "counterfactual_inference",
    "fine_grained_action",
    "moving_attribute",
    "egocentric_navigation",
)

#: What the docs of a multiple-choice benchmark carry.
OPTIONS_ONLY: frozenset[Requirement] = frozenset({"options"})

#: Benchmark (the name its logs and reports use) -> what its docs carry (``audio``: its videos have sound: Video-MME's
#: YouTube videos, InfiniBench's episodes and vdgsynth's soundtracks do).
DOCS: Mapping[str, frozenset[Requirement]] = MappingProxyType(
    {
        "videomme": frozenset({"options", "audio"}),
        "vdgsynth": frozenset({"options", "audio"}),
        "infinibench_ga": frozenset({"options", "characters", "outfit_windows", "title", "subtitles", "audio"}),
        "mvbench": OPTIONS_ONLY,
        "egoschema": OPTIONS_ONLY,
        "egoschema_subset": OPTIONS_ONLY,
    }
)

#: A sub-task's own name (``mvbench_action_count``) -> the benchmark it belongs to.
GROUPS: Mapping[str, str] = MappingProxyType({f"mvbench_{sub}": "mvbench" for sub in MVBENCH_SUB_TASKS})


def offered_conditions(benchmark: str) -> frozenset[str] | None:
    """The conditions a benchmark vdg declares offers (by its name or a sub-task's); None for any other."""
    provides = DOCS.get(GROUPS.get(benchmark, benchmark))
    if provides is None:
        return None
    return frozenset(c.name for c in conditions_for(provides))
