"""The leaderboard in OpenVLM.json's layout (VLMEvalKit's Open VLM Leaderboard), written fresh or merged into a
file that already holds other results.

The layout::

    {"time": ..., "results": {MODEL: {"META": {...}, DATASET: {"Overall": ..., <task type>: ..., ...}}}}

Accuracies are percentages (0-100), as in that file. vdg writes into each (model, dataset) entry:

- ``Overall`` and one key per task type: accuracy on the original video (``accuracy`` table, condition orig),
  only in an entry vdg creates (an entry the file already has keeps its own);
- the VDG keys (``OPENVLM_KEYS``): ``VDG`` (Overall VDG, percentage points), ``VDG CI`` ([low, high] of its
  paired CI, or null), ``VDG Black`` (accuracy on the black video over the compared questions), ``VDG Blind``
  (accuracy under the blind condition, null when not run), ``VDG tier`` (the tiers table's Overall tier) and
  ``VDG n`` (questions compared);
- ``VDG keys``: the list of the keys vdg wrote in that entry, so that a later merge replaces exactly those.

Numbers are rounded to ``DECIMALS`` places. ``merge_openvlm`` keeps every key and value it does not own as it was
read: order, the text of each number (``65.30`` stays ``65.30``), strings and nesting; ``time`` and every
``META`` are left alone; a key of an entry that vdg would write but does not own (not listed in ``VDG keys``) is
a collision and the merge is refused.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from postprocess.leaderboard import MergeError
from postprocess.settings import natural_key
from vdg_tasks.vocabulary.conditions import core_measured

#: The arm with no visual input at all (declared with measure ``no_vision``): its accuracy is ``VDG Blind``.
BLIND = core_measured("no_vision")

__all__ = [
    "DECIMALS",
    "MAX_DEPTH",
    "OPENVLM_KEYS",
    "OWNED_KEY",
    "SOURCE_TABLES",
    "OpenVLMMerge",
    "merge_openvlm",
    "openvlm_entries",
    "write_openvlm",
]

#: The keys vdg adds to a dataset entry: name -> meaning.
OPENVLM_KEYS: dict[str, str] = {
    "VDG": "Overall VDG = acc(orig) - acc(black) on the questions both arms answered, in percentage points",
    "VDG CI": "[low, high] of the VDG's paired CI (vdg table), in percentage points; null when it has none",
    "VDG Black": "accuracy on the black video over the VDG's questions, in percent",
    "VDG Blind": "accuracy under the blind condition (accuracy table, Overall), in percent; null when not run",
    "VDG tier": "the Overall tier of the tiers table (high, mid, low, a straddle, too small); null without one",
    "VDG n": "questions the VDG compares",
}
#: The analysis tables the entries are read from (``compute_tables(..., names=...)``).
SOURCE_TABLES: tuple[str, ...] = ("vdg", "accuracy", "tiers")
#: The key listing what vdg wrote in an entry.
OWNED_KEY = "VDG keys"
#: Decimal places of every number vdg writes.
DECIMALS = 2


def _number(value: Any, scale: float = 100.0) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return round(number * scale, DECIMALS) if math.isfinite(number) else None


def _rows(table: pd.DataFrame | None, **match: str) -> pd.DataFrame:
    if table is None or not len(table):
        return pd.DataFrame()
    keep = pd.Series(True, index=table.index)
    for column, value in match.items():
        if column not in table.columns:
            return pd.DataFrame()
        keep &= table[column].astype(str) == value
    return table[keep]


def _vdg_values(tables: Mapping[str, pd.DataFrame], model: str, benchmark: str) -> dict[str, Any]:
    overall = _rows(tables.get("vdg"), model=model, benchmark=benchmark, task_type="Overall")
    blind = _rows(tables.get("accuracy"), model=model, benchmark=benchmark, condition=BLIND, task_type="Overall")
    tier = _rows(tables.get("tiers"), model=model, benchmark=benchmark, task_type="Overall")
    row = overall.iloc[0] if len(overall) else {}
    low, high = _number(row.get("ci_low")), _number(row.get("ci_high"))
    tier_text = tier["tier"].iloc[0] if len(tier) and "tier" in tier.columns else None
    n = row.get("n")
    return {
        "VDG": _number(row.get("vdg")),
        "VDG CI": [low, high] if low is not None and high is not None else None,
        "VDG Black": _number(row.get("acc_black")),
        "VDG Blind": _number(blind["acc"].iloc[0]) if len(blind) and "acc" in blind.columns else None,
        "VDG tier": str(tier_text) if isinstance(tier_text, str) and tier_text else None,
        "VDG n": int(n) if n is not None and _number(n, 1.0) is not None else None,
    }


def _accuracies(tables: Mapping[str, pd.DataFrame], model: str, benchmark: str) -> dict[str, Any]:
    """Overall, then each task type (in the table's order), accuracy at orig in percent."""
    rows = _rows(tables.get("accuracy"), model=model, benchmark=benchmark, condition="orig")
    if not len(rows):
        return {}
    values = {str(t): _number(a) for t, a in zip(rows["task_type"], rows["acc"], strict=True)}
    out = {"Overall": values.pop("Overall")} if "Overall" in values else {}
    return {**out, **values}


def _pairs(tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for name in ("vdg", "accuracy"):
        table = tables.get(name)
        if table is not None and len(table):
            found |= set(zip(table["model"].astype(str), table["benchmark"].astype(str), strict=True))
    return sorted(found, key=lambda p: (natural_key(p[0]), p[1]))


def openvlm_entries(
    tables: Mapping[str, pd.DataFrame], *, datasets: Mapping[str, str] | None = None
) -> dict[str, dict[str, dict[str, Any]]]:
    """vdg label -> OpenVLM dataset name -> the entry vdg writes (``Overall``, task types, ``OPENVLM_KEYS``;
    without ``OWNED_KEY``), from the ``vdg``, ``accuracy`` and ``tiers`` tables.

    ``datasets``: OpenVLM dataset name -> vdg benchmark (a benchmark not named keeps its own name).

    Raises:
        postprocess.leaderboard.MergeError: (``names``) two dataset names given one benchmark, or a benchmark given
            the name another benchmark keeps (their entries would be one).
    """
    pairs = _pairs(tables)
    to_theirs = _reverse(datasets or {}, "dataset")
    _check_distinct({b for _, b in pairs}, to_theirs, "dataset", "benchmark")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for model, benchmark in pairs:
        entry = {**_accuracies(tables, model, benchmark), **_vdg_values(tables, model, benchmark)}
        out.setdefault(model, {})[to_theirs.get(benchmark, benchmark)] = entry
    return out


def _check_distinct(ours: set[str], to_theirs: Mapping[str, str], what: str, vdg_what: str) -> None:
    """Refuse a map giving one of ``ours`` (vdg's labels or benchmarks) the name another of them keeps as its own
    (not mapped): both would be written as one entry, one's data lost. (Two of ``ours`` cannot be given one name:
    the map is keyed by the name.)

    Raises:
        postprocess.leaderboard.MergeError: (``names``) naming both and the name.
    """
    for name in sorted(ours, key=natural_key):
        theirs = to_theirs.get(name, name)
        if theirs != name and theirs in ours and theirs not in to_theirs:
            raise MergeError(
                f"the {what} map gives vdg's {vdg_what} {name!r} the name {theirs!r}, which vdg's {vdg_what} "
                f"{theirs!r} keeps (not mapped): both would be written as {what} {theirs!r}, one overwriting the "
                f"other; map {theirs!r} to another name too, or give {name!r} another",
                "names",
            )


def _reverse(mapping: Mapping[str, str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for theirs, ours in mapping.items():
        if str(ours) in out:
            raise MergeError(f"{what}s {out[str(ours)]!r} and {theirs!r} both name vdg's {ours!r}", "names")
        out[str(ours)] = str(theirs)
    return out


# ------------------------------------------------------------------------------ JSON kept as it was read


class _Number:
    """A number as its text in the file (written back unchanged)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise MergeError(f"the file names key {key!r} twice in one object (it cannot be kept as written)", "theirs")
        out[key] = value
    return out


#: The deepest nesting of arrays and objects a file may have (OpenVLM.json's layout nests 4 or 5 levels; ``_dump``
#: recurses once per level).
MAX_DEPTH = 64


def _depth(value: Any) -> int:
    """How deep arrays and objects nest in ``value`` (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def _load(text: str) -> Any:
    """The file's JSON, every number kept as its text.

    Raises:
        postprocess.leaderboard.MergeError: (``theirs``) arrays or objects nested more than ``MAX_DEPTH`` deep (or
            too deep for the parser itself), or an object naming a key twice; json.JSONDecodeError: not JSON.
    """
    too_deep = MergeError(
        f"arrays or objects nested too deeply (more than {MAX_DEPTH} levels; OpenVLM.json's layout has 5)", "theirs"
    )
    try:
        data = json.loads(
            text, object_pairs_hook=_object, parse_float=_Number, parse_int=_Number, parse_constant=_Number
        )
    except (RecursionError, MemoryError):  # the parser's own limit, far past MAX_DEPTH
        raise too_deep from None
    if _depth(data) > MAX_DEPTH:
        raise too_deep
    return data


def _dump(value: Any, indent: int, level: int = 0) -> str:
    pad, inner = " " * (indent * level), " " * (indent * (level + 1))
    if isinstance(value, _Number):
        return value.text
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_dump(v, indent, level + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(f"{inner}{_dump(v, indent, level + 1)}" for v in value) + "\n" + pad + "]"
    if isinstance(value, float) and not math.isfinite(value):
        return "null"
    return json.dumps(value, ensure_ascii=False)


def write_openvlm(
    tables: Mapping[str, pd.DataFrame],
    *,
    time: str,
    names: Mapping[str, str] | None = None,
    datasets: Mapping[str, str] | None = None,
    indent: int = 4,
) -> str:
    """A fresh OpenVLM.json (its text) holding vdg's entries: ``{"time": time, "results": {MODEL: {"META":
    {"Method": [MODEL, ""]}, DATASET: entry}}}``, models in natural order, each entry listing its keys under
    ``OWNED_KEY``.

    ``names``: OpenVLM model name -> vdg label (``leaderboard.read_name_map``'s ``--map``; a label not named keeps
    its own); ``datasets``: OpenVLM dataset name -> vdg benchmark.

    Raises:
        postprocess.leaderboard.MergeError: (``names``) two OpenVLM names given one vdg label or benchmark, or a
            name given to a label (benchmark) that another label (benchmark) keeps as its own: one model (dataset)
            would overwrite the other.
    """
    to_theirs = _reverse(names or {}, "model")
    entries_of = openvlm_entries(tables, datasets=datasets)
    _check_distinct(set(entries_of), to_theirs, "model", "model")
    results: dict[str, Any] = {}
    for model, entries in entries_of.items():
        theirs = to_theirs.get(model, model)
        results[theirs] = {"META": {"Method": [theirs, ""]}}
        for dataset, entry in entries.items():
            results[theirs][dataset] = {**entry, OWNED_KEY: list(entry)}
    return _dump({"time": time, "results": results}, indent) + "\n"


@dataclass(frozen=True)
class OpenVLMMerge:
    """What ``merge_openvlm`` made: ``text`` (the merged file), ``unmatched_theirs`` (their models with no vdg
    data, in their order) and ``unmatched_ours`` (vdg labels no model of theirs matched: not added)."""

    text: str
    unmatched_theirs: list[str] = field(default_factory=list)
    unmatched_ours: list[str] = field(default_factory=list)


def merge_openvlm(
    existing: str | Path,
    tables: Mapping[str, pd.DataFrame],
    *,
    names: Mapping[str, str] | None = None,
    datasets: Mapping[str, str] | None = None,
    indent: int = 4,
) -> OpenVLMMerge:
    """vdg's entries merged into an OpenVLM.json (its text, or a path to it).

    A model of theirs matches the vdg label it is named by in ``names`` (OpenVLM name -> vdg label), else the
    label equal to its name. For each benchmark of a matched model: into the dataset entry it already has (named
    by ``datasets``, OpenVLM name -> vdg benchmark, else the benchmark's name) vdg adds the ``OPENVLM_KEYS`` and
    ``OWNED_KEY``, after the entry's own keys; a dataset entry it lacks is added whole (``Overall``, task types,
    the VDG keys). Keys an earlier merge wrote (listed in the entry's ``OWNED_KEY``) are replaced. Nothing else
    changes: ``time``, ``META``, every other model, dataset, key and value stay as read, in their order, numbers
    in their own text. vdg models no model of theirs matches are not added (``unmatched_ours``).

    Raises:
        postprocess.leaderboard.MergeError: (``source`` ``theirs``) the text is not JSON in the layout
            (``{"results": {MODEL: {...}}}``), an object names a key twice, an entry vdg writes into is not an
            object or holds a key vdg would write without listing it in ``OWNED_KEY`` (a collision), or its
            ``OWNED_KEY`` is not a list of names, or arrays and objects nest more than ``MAX_DEPTH`` deep;
            (``names``) two of their models reach one vdg label, or the dataset map gives a benchmark the name
            another benchmark keeps (``openvlm_entries``).
    """
    text = Path(existing).read_text(encoding="utf-8") if isinstance(existing, Path) else existing
    try:
        data = _load(text)
    except json.JSONDecodeError as exc:
        raise MergeError(f"not JSON: {exc}", "theirs") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise MergeError('not in OpenVLM.json\'s layout: no "results" object of models', "theirs")
    results: dict[str, Any] = data["results"]
    label_of = {str(k): str(v) for k, v in (names or {}).items()}
    ours = openvlm_entries(tables, datasets=datasets)
    reached: dict[str, str] = {}
    unmatched_theirs: list[str] = []
    for their_model, block in results.items():
        label = label_of.get(their_model, their_model)
        if label not in ours:
            unmatched_theirs.append(their_model)
            continue
        if label in reached:
            raise MergeError(f"models {reached[label]!r} and {their_model!r} both name vdg model {label!r}", "names")
        reached[label] = their_model
        if not isinstance(block, dict):
            raise MergeError(f"results[{their_model!r}] is not an object", "theirs")
        for dataset, entry in ours[label].items():
            where = f"results[{their_model!r}][{dataset!r}]"
            if dataset not in block:
                block[dataset] = {**entry, OWNED_KEY: list(entry)}
                continue
            current = block[dataset]
            if not isinstance(current, dict):
                raise MergeError(f"{where} is not an object: vdg cannot add its keys to it", "theirs")
            owned = current.get(OWNED_KEY, [])
            if not isinstance(owned, list) or not all(isinstance(k, str) for k in owned):
                raise MergeError(f"{where}[{OWNED_KEY!r}] is not a list of key names", "theirs")
            kept = {k: v for k, v in current.items() if k not in owned and k != OWNED_KEY}
            mine = {k: v for k, v in entry.items() if k in OPENVLM_KEYS or k in owned}
            taken = [k for k in mine if k in kept]
            if taken:
                raise MergeError(
                    f"{where} already has {', '.join(map(repr, taken))}, which vdg did not write (not in its "
                    f"{OWNED_KEY!r}): refusing to overwrite it",
                    "theirs",
                )
            block[dataset] = {**kept, **mine, OWNED_KEY: list(mine)}
    unmatched_ours = [m for m in ours if m not in reached]
    return OpenVLMMerge(_dump(data, indent) + "\n", unmatched_theirs, unmatched_ours)
