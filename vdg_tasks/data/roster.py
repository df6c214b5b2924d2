"""Main characters of TV shows, with their genders.

The analyses that ask "did the model confuse the character with another of the same gender?" need
each show's main cast. Four rosters are built in (see ``BUILTIN_ROSTERS``):

- ``bbt`` (The Big Bang Theory): Sheldon, Leonard, Howard, Raj (male); Penny, Bernadette, Amy (female)
- ``friends``: Ross, Chandler, Joey (male); Rachel, Monica, Phoebe (female)
- ``castle``: Castle (Richard Castle), Esposito, Ryan (male); Beckett (Kate Beckett), Lanie, Martha,
  Alexis (female)
- ``synthetic_sitcom`` (vdg's synthetic stand-in): Alice (f), Dev (m), Beth (f), Eli (m), Cora (f),
  Finn (m), in that order.

A user file adds shows or replaces a built-in show's cast. It is JSON (``.json``) or YAML (any other
suffix) holding one mapping ``{show name: {character: gender}}``::

    The Big Bang Theory:        # replaces the built-in "bbt" cast entirely
      Sheldon: male
      Penny: female
    How I Met Your Mother:      # a new show, key "how_i_met_your_mother"
      Ted: male
      Robin: female

Show names are matched through ``show_key`` (aliases and a slug), character names case-insensitively
by ``Roster.gender``. Genders are free strings, stored lowercased and stripped ("male", "female",
"nonbinary", ...); two characters have the same gender when the strings are equal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import yaml

__all__ = ["BUILTIN_ROSTERS", "Roster", "load_roster", "show_key"]


def _frozen(cast: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(cast))


#: Show key -> (character -> gender), in the order the cast is listed.
BUILTIN_ROSTERS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "bbt": _frozen(
            {
                "Sheldon": "male",
                "Leonard": "male",
                "Howard": "male",
                "Raj": "male",
                "Penny": "female",
                "Bernadette": "female",
                "Amy": "female",
            }
        ),
        "friends": _frozen(
            {
                "Ross": "male",
                "Chandler": "male",
                "Joey": "male",
                "Rachel": "female",
                "Monica": "female",
                "Phoebe": "female",
            }
        ),
        "castle": _frozen(
            {
                "Castle": "male",
                "Esposito": "male",
                "Ryan": "male",
                "Beckett": "female",
                "Lanie": "female",
                "Martha": "female",
                "Alexis": "female",
            }
        ),
        "synthetic_sitcom": _frozen(
            {
                "Alice": "female",
                "Dev": "male",
                "Beth": "female",
                "Eli": "male",
                "Cora": "female",
                "Finn": "male",
            }
        ),
    }
)

#: Slugs (see ``_slug``) of known spellings -> show key.
_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "bbt": "bbt",
        "big_bang_theory": "bbt",
        "the_big_bang_theory": "bbt",
        "bigbangtheory": "bbt",
        "thebigbangtheory": "bbt",
        "friends": "friends",
        "castle": "castle",
        "synthetic_sitcom": "synthetic_sitcom",
        "syntheticsitcom": "synthetic_sitcom",
    }
)


def _slug(text: str) -> str:
    """Lowercase; every run of non-alphanumeric characters becomes one ``_``; no ``_`` at the ends."""
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_")


def show_key(show: str) -> str:
    """The roster key of a show name: ``"The Big Bang Theory"``, ``"big_bang_theory"``, ``"BBT"`` -> ``"bbt"``.

    Known shows map to their built-in key (``bbt``, ``friends``, ``castle``, ``synthetic_sitcom``);
    any other name maps to its slug (lowercase, runs of non-alphanumerics -> ``_``, trimmed), e.g.
    ``"How I Met Your Mother"`` -> ``"how_i_met_your_mother"``.

    Raises:
        ValueError: ``show`` is not a string or has no letters or digits.
    """
    if not isinstance(show, str):
        raise ValueError(f"show name must be a string, got {type(show).__name__} {show!r}")
    slug = _slug(show)
    if not slug:
        raise ValueError(f"show name {show!r} has no letters or digits")
    return _ALIASES.get(slug, slug)


@dataclass(frozen=True)
class Roster:
    """Casts of several shows.

    Attributes:
        casts: show key (see ``show_key``) -> (character name -> lowercase gender), in cast order.
    """

    casts: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: BUILTIN_ROSTERS)

    def shows(self) -> tuple[str, ...]:
        """The show keys this roster knows, built-ins first."""
        return tuple(self.casts)

    def cast(self, show: str) -> dict[str, str]:
        """A fresh ordered dict name -> gender of ``show`` (any spelling ``show_key`` accepts); ``{}`` if unknown."""
        return dict(self.casts.get(show_key(show), {}))

    def gender(self, show: str, character: str) -> str | None:
        """The gender of ``character`` (matched case-insensitively) in ``show``; None if either is unknown."""
        wanted = character.strip().casefold()
        for name, gender in self.cast(show).items():
            if name.casefold() == wanted:
                return gender
        return None

    def same_gender(self, show: str, a: str, b: str) -> bool:
        """Whether characters ``a`` and ``b`` of ``show`` have equal gender strings.

        Raises:
            KeyError: either character is not in the show's cast.
        """
        ga, gb = self.gender(show, a), self.gender(show, b)
        missing = [n for n, g in ((a, ga), (b, gb)) if g is None]
        if missing:
            raise KeyError(f"{', '.join(map(repr, missing))} not in the roster of {show!r} ({list(self.cast(show))})")
        return ga == gb


def _read_user_file(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"roster file {path}: not UTF-8 text ({e})") from e
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"roster file {path}: invalid JSON ({e})") from e
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"roster file {path}: invalid YAML ({e})") from e


def _validate(data: object, path: Path) -> dict[str, dict[str, str]]:
    """``{show: {character: gender}}`` from a parsed user file, keyed by ``show_key``; ValueError if malformed."""
    if not isinstance(data, Mapping):
        raise ValueError(
            f"roster file {path}: expected a mapping {{show name: {{character: gender}}}}, got {type(data).__name__}"
        )
    if not data:
        raise ValueError(f"roster file {path}: holds no shows")
    out: dict[str, dict[str, str]] = {}
    origin: dict[str, str] = {}
    for show, cast in data.items():
        if not isinstance(show, str) or not _slug(show):
            raise ValueError(f"roster file {path}: show name {show!r} must be a non-empty string")
        key = show_key(show)
        if key in out:
            raise ValueError(f"roster file {path}: shows {origin[key]!r} and {show!r} are the same show ({key!r})")
        if not isinstance(cast, Mapping):
            raise ValueError(
                f"roster file {path}: show {show!r} must map character names to genders, got {type(cast).__name__}"
            )
        members: dict[str, str] = {}
        seen: dict[str, str] = {}
        for name, gender in cast.items():
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"roster file {path}: show {show!r} has character name {name!r}; expected a string")
            if not isinstance(gender, str) or not gender.strip():
                raise ValueError(
                    f"roster file {path}: show {show!r} character {name!r} has gender {gender!r}; "
                    "expected a string such as 'male', 'female' or 'nonbinary'"
                )
            folded = name.strip().casefold()
            if folded in seen:
                raise ValueError(f"roster file {path}: show {show!r} lists {seen[folded]!r} and {name!r}")
            seen[folded] = name
            members[name.strip()] = gender.strip().lower()
        out[key] = members
        origin[key] = show
    return out


def load_roster(path: str | Path | None = None) -> Roster:
    """The built-in rosters, with the shows of the user file at ``path`` (if any) added or replacing.

    A show in the user file replaces the built-in cast of the same ``show_key`` entirely (it is not
    merged character by character). See the module docstring for the file format.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: the file is not valid JSON/YAML or not ``{show: {character: gender}}``; the message
            names the file and the offending show or character.
    """
    casts: dict[str, Mapping[str, str]] = dict(BUILTIN_ROSTERS)
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"roster file {p} does not exist")
        for key, cast in _validate(_read_user_file(p), p).items():
            casts[key] = _frozen(cast)
    return Roster(MappingProxyType(casts))
