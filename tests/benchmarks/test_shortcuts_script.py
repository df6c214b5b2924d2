"""benchmarks/shortcuts.py runs end to end at a tiny size and prints its ratio and peak memory."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_shortcuts_benchmark_prints_the_ratio_and_the_peak(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "shortcuts.py"), "--workdir", str(tmp_path),
         "--per-task-type", "30", "--repeats", "1"],
        capture_output=True, text=True, check=True, timeout=600,
    ).stdout  # fmt: skip
    assert re.search(r"^questions: 120 \(30 per task type, 4 task types\)$", out, re.M)
    assert re.search(r"^vdg shortcuts [\d.]+ s vs import sklearn.*: ratio [\d.]+ \(target <= 10", out, re.M)
    assert re.search(r"^peak RSS of vdg shortcuts: \d+ MiB$", out, re.M)
    assert (tmp_path / "out" / "shortcuts.csv").is_file()
