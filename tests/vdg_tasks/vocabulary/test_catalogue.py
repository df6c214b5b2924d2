"""The catalogue of declared benchmarks agrees with their specs, and says which conditions each offers."""

from __future__ import annotations

import pytest

from vdg_tasks.data.benchmarks import BENCHMARKS, members
from vdg_tasks.vocabulary.catalogue import DOCS, GROUPS, offered_conditions
from vdg_tasks.vocabulary.conditions import CONDITIONS


def test_every_spec_takes_what_its_docs_carry_from_the_catalogue():
    assert set(DOCS) == {spec.report_name for spec in BENCHMARKS.values()}
    assert dict(GROUPS) == {spec.name: spec.group for spec in BENCHMARKS.values() if spec.group}
    for spec in BENCHMARKS.values():
        assert spec.provides == DOCS[spec.report_name], spec.name


@pytest.mark.parametrize("name", sorted({*BENCHMARKS, *(s.report_name for s in BENCHMARKS.values())}))
def test_offered_conditions_are_the_conditions_of_the_specs_the_name_covers(name):
    assert offered_conditions(name) == {c.name for spec in members(name) for c in spec.conditions()}


def test_character_conditions_only_where_the_docs_name_characters():
    tracking = {c.name for c in CONDITIONS.values() if "characters" in c.requires}
    assert tracking and "nameswap" in tracking
    assert tracking <= offered_conditions("infinibench_ga")
    assert not tracking & offered_conditions("videomme")
    assert not tracking & offered_conditions("mvbench_action_count")  # a sub-task, by its own name
    assert "orig" in offered_conditions("mvbench") and "black" in offered_conditions("egoschema_subset")
    assert offered_conditions("my_derived_task") is None  # not declared: the report assumes it offers all
