"""The fast tier (`make test-fast`, `pytest -m "not slow"`): a test that starts lmms-eval or builds a venv is slow."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import slow_process


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ([".venv/bin/lmms-eval", "--model", "vdg_probe", "--tasks", "vdgsynth_vdg"], "runs lmms-eval"),
        ("lmms-eval --model vdg_chance --tasks videomme_vdg_orig", "runs lmms-eval"),
        ([sys.executable, "-m", "lmms_eval", "--tasks", "list"], "runs lmms-eval"),
        ([sys.executable, "-m", "venv", "/tmp/fresh"], "builds a virtual environment"),
        (["virtualenv", "/tmp/fresh"], "builds a virtual environment"),
        ([".venv/bin/vdg", "report", "a=runs/a", "--out", "report"], None),
        (["ffprobe", "-show_streams", "lmms-eval-output.mp4"], None),
        ([sys.executable, "-c", "import lmms_eval_tools"], None),
        ("", None),
    ],
)
def test_what_makes_a_process_slow(args: object, why: str | None) -> None:
    assert slow_process(args) == why


def test_a_fast_test_cannot_start_lmms_eval() -> None:
    with pytest.raises(RuntimeError, match=r"runs lmms-eval: mark it @pytest.mark.slow"):
        subprocess.run(["/nonexistent/lmms-eval", "--tasks", "list"], check=False)


def test_a_fast_test_can_start_other_processes() -> None:
    code = "print('lmms-eval' + ' is named, not run')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "lmms-eval is named, not run"
