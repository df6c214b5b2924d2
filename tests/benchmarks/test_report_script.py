"""benchmarks/report.py runs end to end at a tiny size and prints what the README quotes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_report_benchmark_prints_the_small_ratio_and_both_sizes(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "report.py"), "--workdir", str(tmp_path), "--models", "3",
         "--questions", "80", "--repeats", "1"],
        capture_output=True, text=True, check=True, timeout=600,
    ).stdout  # fmt: skip
    assert re.search(r"^small: vdg report [\d.]+ s vs the bare import [\d.]+ s: ratio [\d.]+", out, re.M)
    assert re.search(r"^full: [\d.]+ s against a bare import of the report's libraries \([\d.]+ s, ", out, re.M)
    rows = {m[1]: int(m[2]) for m in re.finditer(r"^(full|quarter)\s+(\d+)\s", out, re.M)}
    assert rows == {"full": 3 * 12 * 80, "quarter": 3 * 12 * 20}
    assert (tmp_path / "report_full" / "report.md").is_file()
    assert sorted(p.name for p in (tmp_path / "report_full" / "plots").iterdir())
