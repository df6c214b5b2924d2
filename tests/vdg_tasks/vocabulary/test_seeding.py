"""Seeds from stable ids (vdg_tasks.vocabulary.seeding): the documented recipe, its range, and that neither the
process's hash salt nor the order of draws changes what a given id gets.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vdg_tasks.vocabulary.seeding import rng_for, stable_seed

ROOT = Path(__file__).resolve().parents[3]


def recipe(*parts: object) -> int:
    """The docstring's recipe, written another way: the first 16 hex digits of the SHA-256, halved (63 bits)."""
    text = "\x1f".join(str(p) for p in parts)
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:16], 16) // 2


def test_no_parts_hash_the_empty_string():
    # SHA-256("") = e3b0c44298fc1c14 9afbf4c8... (FIPS 180-2 test vector); the seed is its first 8 bytes, halved.
    assert stable_seed() == 0xE3B0C44298FC1C14 >> 1


def test_one_part_hashes_its_text():
    # SHA-256("abc") = ba7816bf8f01cfea 414140de... (FIPS 180-2 test vector).
    assert stable_seed("abc") == 0xBA7816BF8F01CFEA >> 1


@pytest.mark.parametrize(
    "parts",
    [("video", "v1"), ("bootstrap", "model-a", "videomme", "black"), ("é", "视频"), ("",), ("", "")],
    ids=["two", "four", "non-ascii", "empty", "two-empty"],
)
def test_seed_is_the_first_eight_sha256_bytes_of_the_unit_separated_parts_halved(parts):
    assert stable_seed(*parts) == recipe(*parts)


def test_non_string_parts_enter_as_their_str():
    assert stable_seed(1, 2.5, None, ("a", 1)) == stable_seed("1", "2.5", "None", "('a', 1)")
    assert stable_seed(7) == recipe("7")


def test_the_separator_keeps_different_splits_apart():
    assert stable_seed("ab", "c") != stable_seed("a", "bc")
    assert stable_seed("a", "") != stable_seed("a")
    assert stable_seed("a", "b") != stable_seed("b", "a")


def test_seeds_are_non_negative_63_bit_ints():
    seeds = [stable_seed("q", i) for i in range(2000)]
    assert all(isinstance(s, int) and 0 <= s < 2**63 for s in seeds)
    assert len(set(seeds)) == len(seeds)
    # A 63-bit value, not one that happens to be small: with 2000 uniform seeds the top bit of 63 is set in some.
    assert max(seeds) >= 2**62


def test_seeds_do_not_depend_on_the_hash_salt_of_the_process():
    code = (
        "import json; from vdg_tasks.vocabulary.seeding import rng_for, stable_seed; "
        "draws = rng_for('video', 'v1').integers(1000, size=5).tolist(); "
        "print(json.dumps([hash('video'), stable_seed('video', 'v1', 3), draws]))"
    )
    results = []
    for salt in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": salt}
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        results.append(json.loads(proc.stdout))
    (hash0, seed0, draws0), (hash1, seed1, draws1) = results
    assert hash0 != hash1  # the salts did differ: Python's str hash changed
    assert seed0 == seed1 == stable_seed("video", "v1", 3) == recipe("video", "v1", 3)
    assert draws0 == draws1 == rng_for("video", "v1").integers(1000, size=5).tolist()


def test_rng_for_is_numpy_default_rng_seeded_with_the_recipe():
    expected = np.random.default_rng(recipe("shuffle", "v1")).random(8)
    np.testing.assert_array_equal(rng_for("shuffle", "v1").random(8), expected)


def test_generators_for_different_ids_are_independent_of_each_other_and_of_draw_order():
    expected_b = np.random.default_rng(recipe("b")).random(4)
    a = rng_for("a")
    a.random(1000)  # drawing from one id's generator ...
    np.testing.assert_array_equal(rng_for("b").random(4), expected_b)  # ... leaves another id's stream as it was
    assert not np.array_equal(rng_for("a").random(4), expected_b)
