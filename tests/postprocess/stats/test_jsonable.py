"""postprocess.stats.jsonable.json_ready: results turned into plain JSON values (NaN and the given missing markers
to null, infinities to text, numpy scalars to Python), recursively through mappings and sequences."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postprocess.stats import json_ready


@pytest.mark.parametrize(
    ("value", "expected", "kind"),
    [
        (np.bool_(True), True, bool),
        (True, True, bool),  # a bool stays a bool, not the int 1
        (np.int64(-3), -3, int),
        (np.uint8(200), 200, int),
        (7, 7, int),
        (np.float32(0.5), 0.5, float),  # 0.5 is exact in float32
        (np.float64(0.1), 0.1, float),
        ("text", "text", str),
    ],
)
def test_scalars_become_the_python_type_of_their_kind(value, expected, kind):
    out = json_ready(value)
    assert out == expected and type(out) is kind


@pytest.mark.parametrize("value", [None, float("nan"), np.float64("nan"), np.float32("nan")])
def test_none_and_nan_become_null(value):
    assert json_ready(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [(math.inf, "inf"), (-math.inf, "-inf"), (np.float64("inf"), "inf"), (np.float32("-inf"), "-inf")],
)
def test_infinities_become_text_with_their_sign(value, expected):
    assert json_ready(value) == expected


def test_missing_markers_become_null_by_identity_only():
    marker = object()
    assert json_ready(marker, missing=(marker,)) is None
    assert json_ready(pd.NA, missing=(pd.NA, pd.NaT)) is None
    assert json_ready(pd.NaT, missing=(pd.NA, pd.NaT)) is None
    # without the marker listed, an unknown object falls back to its text
    assert json_ready(pd.NA) == str(pd.NA)


def test_mappings_and_sequences_are_converted_recursively_with_text_keys():
    marker = object()
    value = {
        1: (np.int64(2), [np.float64("nan"), marker]),
        "arr": np.array([1.5, np.inf]),
        ("a", 2): {"inner": np.bool_(False)},
    }
    out = json_ready(value, missing=(marker,))
    # keys through str(); tuples and arrays become lists; the marker deep inside still becomes None
    assert out == {"1": [2, [None, None]], "arr": [1.5, "inf"], "('a', 2)": {"inner": False}}
    assert type(out["1"][0]) is int and type(out["('a', 2)"]["inner"]) is bool


def test_any_other_object_becomes_its_text():
    assert json_ready(Path("a") / "b.csv") == str(Path("a") / "b.csv")
    assert json_ready({1, 2} - {1}) == "{2}"  # a set is no sequence here: its text


def test_the_result_is_strict_json():
    value = {"p": np.float64("nan"), "ratio": np.inf, "n": np.int32(4), "rows": [np.float32(0.25), None]}
    text = json.dumps(json_ready(value), allow_nan=False)  # raises on any NaN or infinity left
    assert json.loads(text) == {"p": None, "ratio": "inf", "n": 4, "rows": [0.25, None]}
