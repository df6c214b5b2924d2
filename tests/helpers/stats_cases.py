"""Shared constants for the tests of postprocess.stats (tests/postprocess/stats/)."""

from __future__ import annotations

TIGHT = 1e-12  # float-for-float reimplementations of a library formula
