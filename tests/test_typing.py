"""mypy on the public Python API, so `make test` (what CI runs) type-checks it too.

The scope is ``[tool.mypy]`` in pyproject.toml: ``postprocess/__init__.py``, ``postprocess/api.py``,
``vdg_tasks/__init__.py`` and ``tests/helpers/api_types.py`` (what a caller sees through the lazy
re-exports), strict; the modules they re-export are followed for their signatures only.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_public_api_type_checks() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is not installed in this environment: pip install -e '.[test]' (or `make test`)")
    run = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert run.returncode == 0, f"mypy found errors in the public API:\n{run.stdout}{run.stderr}"
