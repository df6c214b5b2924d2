"""`lmms_eval` (the spelling many papers use) is lmms-eval's own CLI, unchanged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_lmms_eval_script_runs_and_prints_what_lmms_eval_prints() -> None:
    bin_dir = Path(sys.executable).parent
    underscore = subprocess.run([bin_dir / "lmms_eval", "--help"], capture_output=True, text=True, timeout=120)
    hyphen = subprocess.run([bin_dir / "lmms-eval", "--help"], capture_output=True, text=True, timeout=120)
    assert underscore.returncode == 0 and hyphen.returncode == 0
    assert underscore.stdout == hyphen.stdout and "lmms-eval" in underscore.stdout
