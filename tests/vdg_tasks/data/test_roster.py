"""Tests for ``vdg_tasks.data.roster``: built-in casts, show aliases, user-file overrides and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vdg_tasks.data.roster import BUILTIN_ROSTERS, Roster, load_roster, show_key


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("The Big Bang Theory", "bbt"),
        ("big_bang_theory", "bbt"),
        ("BBT", "bbt"),
        ("bbt", "bbt"),
        ("Big Bang Theory", "bbt"),
        ("Friends", "friends"),
        ("Castle", "castle"),
        ("Synthetic Sitcom", "synthetic_sitcom"),
        ("synthetic_sitcom", "synthetic_sitcom"),
        ("How I Met Your Mother", "how_i_met_your_mother"),
        ("Grey's Anatomy", "grey_s_anatomy"),
        ("  House, M.D. ", "house_m_d"),
    ],
)
def test_show_key(name: str, key: str) -> None:
    assert show_key(name) == key


@pytest.mark.parametrize("bad", ["", "  ", "!!", None, 3])
def test_show_key_rejects_names_without_letters(bad: object) -> None:
    with pytest.raises(ValueError, match="show name"):
        show_key(bad)  # type: ignore[arg-type]


def test_builtin_casts_in_order() -> None:
    r = load_roster()
    assert r.cast("The Big Bang Theory") == {
        "Sheldon": "male",
        "Leonard": "male",
        "Howard": "male",
        "Raj": "male",
        "Penny": "female",
        "Bernadette": "female",
        "Amy": "female",
    }
    assert list(r.cast("Friends")) == ["Ross", "Chandler", "Joey", "Rachel", "Monica", "Phoebe"]
    assert [g for g in r.cast("friends").values()] == ["male"] * 3 + ["female"] * 3
    assert r.cast("castle") == {
        "Castle": "male",
        "Esposito": "male",
        "Ryan": "male",
        "Beckett": "female",
        "Lanie": "female",
        "Martha": "female",
        "Alexis": "female",
    }
    assert list(r.cast("Synthetic Sitcom").items()) == [
        ("Alice", "female"),
        ("Dev", "male"),
        ("Beth", "female"),
        ("Eli", "male"),
        ("Cora", "female"),
        ("Finn", "male"),
    ]
    assert r.cast("Seinfeld") == {}
    assert r.shows() == ("bbt", "friends", "castle", "synthetic_sitcom")
    assert Roster().cast("bbt") == r.cast("bbt")


def test_cast_is_a_copy() -> None:
    r = load_roster()
    c = r.cast("bbt")
    c["Stuart"] = "male"
    assert "Stuart" not in r.cast("bbt")
    assert "Stuart" not in BUILTIN_ROSTERS["bbt"]


def test_gender_and_same_gender() -> None:
    r = load_roster()
    assert r.gender("BBT", "sheldon") == "male"
    assert r.gender("bbt", "AMY") == "female"
    assert r.gender("bbt", "Stuart") is None
    assert r.gender("Seinfeld", "Jerry") is None
    assert r.same_gender("bbt", "Sheldon", "Raj") is True
    assert r.same_gender("bbt", "Sheldon", "Penny") is False
    assert r.same_gender("castle", "Beckett", "Lanie") is True
    with pytest.raises(KeyError, match="'Stuart'"):
        r.same_gender("bbt", "Sheldon", "Stuart")


def test_user_yaml_replaces_and_adds(tmp_path: Path) -> None:
    f = tmp_path / "roster.yaml"
    f.write_text(
        "The Big Bang Theory:\n  Sheldon: Male\n  Stuart: male\n  Penny: FEMALE \n"
        "How I Met Your Mother:\n  Ted: male\n  Robin: female\n  Sam: nonbinary\n",
        encoding="utf-8",
    )
    r = load_roster(f)
    # replaced wholesale, not merged: Leonard etc. are gone
    assert r.cast("bbt") == {"Sheldon": "male", "Stuart": "male", "Penny": "female"}
    assert r.cast("how_i_met_your_mother") == {"Ted": "male", "Robin": "female", "Sam": "nonbinary"}
    assert r.cast("Friends")["Joey"] == "male"  # untouched built-in
    assert r.same_gender("How I Met Your Mother", "Sam", "Ted") is False
    # the built-ins themselves are unchanged
    assert load_roster().cast("bbt")["Leonard"] == "male"


def test_user_json(tmp_path: Path) -> None:
    f = tmp_path / "roster.json"
    f.write_text(json.dumps({"Castle": {"Castle": "male", "Beckett": "female"}}), encoding="utf-8")
    assert load_roster(str(f)).cast("castle") == {"Castle": "male", "Beckett": "female"}


@pytest.mark.parametrize(
    ("name", "text", "match"),
    [
        ("bad.json", '{"bbt": {"Sheldon": "male",}}', "invalid JSON"),
        ("bad.yaml", "bbt: [unclosed", "invalid YAML"),
        ("list.yaml", "- Sheldon\n- Penny\n", "expected a mapping"),
        ("empty.yaml", "", "expected a mapping"),
        ("nocast.yaml", "bbt: Sheldon\n", "show 'bbt' must map character names"),
        ("gender.yaml", "Friends:\n  Ross: male\n  Joey: 3\n", "show 'Friends' character 'Joey' has gender 3"),
        ("yes.yaml", "Friends:\n  Ross: yes\n", "character 'Ross' has gender True"),
        ("blank.json", '{"Friends": {"Ross": " "}}', "character 'Ross' has gender ' '"),
        ("twice.yaml", "BBT:\n  Amy: female\nThe Big Bang Theory:\n  Raj: male\n", "'BBT' and 'The Big Bang Theory'"),
        ("case.yaml", "bbt:\n  Amy: female\n  amy: female\n", "lists 'Amy' and 'amy'"),
        ("numname.yaml", "bbt:\n  7: male\n", "character name 7"),
    ],
)
def test_bad_user_file(tmp_path: Path, name: str, text: str, match: str) -> None:
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match) as info:
        load_roster(f)
    assert name in str(info.value)


def test_missing_user_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        load_roster(tmp_path / "nope.yaml")
