"""Small generated sources whose frames carry their own index as a barcode."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from tests.helpers.videos import make_hostile_sources, write_indexed_source


@pytest.fixture(scope="session")
def hostile(tmp_path_factory) -> dict[str, Path]:
    """:func:`make_hostile_sources`, made once per session."""
    return make_hostile_sources(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="session")
def source_k8(tmp_path_factory) -> Path:
    """160x120, 10 fps, 80 frames (8 s): for K = 8."""
    return write_indexed_source(tmp_path_factory.mktemp("src") / "k8.mp4", 80, fps=10)


@pytest.fixture(scope="session")
def source_k32(tmp_path_factory) -> Path:
    """160x120, 24000/1001 fps, 70 frames (>= 2K for K = 32)."""
    return write_indexed_source(tmp_path_factory.mktemp("src") / "k32.mp4", 70, fps=Fraction(24000, 1001), gop=20)
