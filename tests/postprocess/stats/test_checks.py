"""postprocess.stats.checks: each argument validator returns the value normalised, and every rejection raises a
ValueError naming the argument."""

from __future__ import annotations

import re

import numpy as np
import pytest

from postprocess.stats import checks

# ----------------------------------------------------------------------------------- count


@pytest.mark.parametrize("x", [0, 7, np.int64(7), np.uint8(3)])
def test_a_count_is_returned_as_a_python_int(x):
    out = checks.count(x, "k")
    assert out == int(x) and type(out) is int


@pytest.mark.parametrize("x", [True, np.bool_(False), 2.0, "3", None])
def test_a_count_that_is_no_integer_is_refused_by_name(x):
    with pytest.raises(ValueError, match=r"^k must be a non-negative integer count, got "):
        checks.count(x, "k")


def test_a_negative_count_is_refused_with_its_value():
    with pytest.raises(ValueError, match=r"^n must be a non-negative integer count, got -1\.$"):
        checks.count(np.int32(-1), "n")


# ----------------------------------------------------------------------------------- level


@pytest.mark.parametrize("x", [0.95, np.float64(0.5), 1e-9, 1 - 1e-9])
def test_a_level_strictly_inside_zero_and_one_is_returned_as_a_float(x):
    out = checks.level(x)
    assert out == float(x) and type(out) is float


@pytest.mark.parametrize("x", [0, 1, 0.0, 1.0, -0.1, 1.5, True, "0.9", None, float("nan")])
def test_a_level_outside_the_open_unit_interval_is_refused(x):
    with pytest.raises(ValueError, match=r"^level must be a number strictly between 0 and 1, got "):
        checks.level(x)


def test_the_level_message_names_the_argument_given():
    with pytest.raises(ValueError, match=r"^ci_level must be a number strictly between 0 and 1, got 1\.$"):
        checks.level(1, "ci_level")


# ----------------------------------------------------------------------------------- values


def test_values_convert_integers_and_booleans_to_float64():
    ints = checks.values([1, -1, 0], "x")
    assert ints.dtype == np.float64 and ints.tolist() == [1.0, -1.0, 0.0]
    flags = checks.values(np.array([True, False, True]), "x")
    assert flags.dtype == np.float64 and flags.tolist() == [1.0, 0.0, 1.0]  # True -> 1, False -> 0
    halves = checks.values(np.array([0.5, 1.0], dtype=np.float32), "x")
    assert halves.dtype == np.float64 and halves.tolist() == [0.5, 1.0]


def test_float64_values_are_passed_through_unchanged():
    arr = np.array([0.25, -3.0, 1e300])
    out = checks.values(arr, "x")
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, arr)


def test_values_of_two_dimensions_are_refused_with_their_shape():
    with pytest.raises(ValueError, match=re.escape("a must be one-dimensional, got shape (2, 2).")):
        checks.values([[1, 2], [3, 4]], "a")
    with pytest.raises(ValueError, match=re.escape("a must be one-dimensional, got shape ().")):
        checks.values(3.0, "a")


def test_empty_values_are_refused():
    with pytest.raises(ValueError, match=r"^b is empty: need at least one value\.$"):
        checks.values([], "b")


@pytest.mark.parametrize(("x", "dtype"), [(["a", "b"], "<U1"), ([1 + 2j, 0j], "complex128"), ([None, 1], "object")])
def test_values_that_are_no_real_numbers_are_refused_with_their_dtype(x, dtype):
    with pytest.raises(ValueError, match=re.escape(f"x must hold real numbers or booleans, got dtype {dtype}.")):
        checks.values(x, "x")


@pytest.mark.parametrize(
    ("x", "index", "shown"),
    [
        (np.array([0.0, 1.0, np.nan]), 2, "nan"),  # float64: the pass-through path is checked too
        ([1.0, np.inf, np.nan], 1, "inf"),  # the first bad value is named
        (np.array([-np.inf], dtype=np.float32), 0, "-inf"),
    ],
)
def test_a_value_that_is_not_finite_is_named_by_its_index(x, index, shown):
    with pytest.raises(ValueError, match=re.escape(f"x[{index}] is {shown}: values must be finite")):
        checks.values(x, "x")


# ----------------------------------------------------------------------------------- ids


def test_ids_of_the_right_length_are_returned_as_an_array():
    out = checks.ids(["q1", "q2", "q1"], 3, "clusters")
    assert isinstance(out, np.ndarray) and out.tolist() == ["q1", "q2", "q1"]


def test_ids_of_two_dimensions_are_refused():
    with pytest.raises(ValueError, match=re.escape("clusters must be one-dimensional, got shape (1, 2).")):
        checks.ids([["a", "b"]], 2, "clusters")


def test_ids_of_another_length_than_the_values_are_refused():
    with pytest.raises(ValueError, match=r"^clusters has 2 entries but values has 3: give one id per value\.$"):
        checks.ids(["a", "b"], 3, "clusters")


# ----------------------------------------------------------------------------------- seed, n_resamples, resampler


@pytest.mark.parametrize("x", [0, 12345, np.int64(2**40)])
def test_a_non_negative_integer_seed_is_returned_as_an_int(x):
    out = checks.seed(x)
    assert out == int(x) and type(out) is int


@pytest.mark.parametrize("x", [-1, True, np.bool_(True), 1.0, "1", None])
def test_a_seed_that_is_no_non_negative_int_is_refused_with_the_way_to_derive_one(x):
    with pytest.raises(ValueError, match=r"^seed must be a non-negative int \(derive one with .*stable_seed\), got "):
        checks.seed(x)


@pytest.mark.parametrize("x", [1, 2000, np.int64(5)])
def test_a_positive_resample_count_is_returned_as_an_int(x):
    out = checks.n_resamples(x)
    assert out == int(x) and type(out) is int


@pytest.mark.parametrize("x", [0, -5, True, 10.0, "100"])
def test_a_resample_count_that_is_no_positive_int_is_refused(x):
    with pytest.raises(ValueError, match=r"^n_resamples must be a positive int, got "):
        checks.n_resamples(x)


@pytest.mark.parametrize("x", ["auto", "multinomial", "index"])
def test_the_three_resamplers_are_accepted(x):
    assert checks.resampler(x) == x


@pytest.mark.parametrize("x", ["Auto", "exact", "", None])
def test_another_resampler_is_refused_with_the_choices(x):
    with pytest.raises(ValueError, match=r"^resampler must be 'auto', 'multinomial' or 'index', got "):
        checks.resampler(x)


# ----------------------------------------------------------------------------------- probability


@pytest.mark.parametrize("x", [0, 1, 0.0, 1.0, 0.3, np.float32(0.5)])
def test_a_proportion_in_the_closed_unit_interval_is_returned_as_a_float(x):
    out = checks.probability(x, "p1")
    assert out == float(x) and type(out) is float


@pytest.mark.parametrize("x", [-0.01, 1.01, True, "0.5", None, float("nan")])
def test_a_proportion_outside_the_unit_interval_is_refused_by_name(x):
    with pytest.raises(ValueError, match=r"^p2 must be a proportion in \[0, 1\], got "):
        checks.probability(x, "p2")


# ----------------------------------------------------------------------------------- count_array


def test_integer_and_whole_float_counts_become_int64():
    ints = checks.count_array(np.array([0, 3, 5], dtype=np.int16), "counts")
    assert ints.dtype == np.int64 and ints.tolist() == [0, 3, 5]
    floats = checks.count_array([2.0, 0.0, 7.0], "counts")
    assert floats.dtype == np.int64 and floats.tolist() == [2, 0, 7]


def test_counts_of_two_dimensions_are_refused():
    with pytest.raises(ValueError, match=re.escape("counts must be one-dimensional, got shape (2, 1).")):
        checks.count_array([[1], [2]], "counts")


@pytest.mark.parametrize(("x", "dtype"), [([True, False], "bool"), (["1", "2"], "<U1"), ([1j], "complex128")])
def test_counts_of_another_dtype_are_refused_with_it(x, dtype):
    with pytest.raises(ValueError, match=re.escape(f"counts must hold integer counts, got dtype {dtype}.")):
        checks.count_array(x, "counts")


@pytest.mark.parametrize(("x", "shown"), [([1.0, 1.5], "[1.0, 1.5]"), ([2.0, np.nan], "[2.0, nan]")])
def test_fractional_or_missing_counts_are_refused_with_the_values(x, shown):
    with pytest.raises(ValueError, match=re.escape(f"counts must hold integer counts, got {shown}.")):
        checks.count_array(x, "counts")


def test_negative_counts_are_refused_with_the_values():
    with pytest.raises(ValueError, match=re.escape("counts must hold non-negative counts, got [3, -1].")):
        checks.count_array([3, -1], "counts")
