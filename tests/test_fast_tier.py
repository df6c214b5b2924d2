"""The fast tier (`make test-fast`, `pytest -m "not slow"`): a test that starts lmms-eval or builds a venv is slow."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
        ([sys.executable, "-mlmms_eval", "--tasks", "list"], "runs lmms-eval"),
        (["accelerate", "launch", "--num_processes", "2", "/venv/lib/lmms_eval/__main__.py"], "runs lmms-eval"),
        (["sh", "-c", "(cd runs && lmms-eval --model vdg_probe)"], "runs lmms-eval"),
        ("cd runs && /venv/bin/lmms-eval --tasks list", "runs lmms-eval"),
        ([Path("/venv/bin/lmms-eval"), "--tasks", "list"], "runs lmms-eval"),
        ([b"/venv/bin/lmms-eval", b"--tasks"], "runs lmms-eval"),
        (["uv", "venv", "/tmp/fresh"], "builds a virtual environment"),
        (["pip", "show", "lmms-eval"], None),
        (["pip", "download", "virtualenv"], None),
        (["git", "commit", "-m", "lmms_eval fix"], None),
        (["/opt/virtualenv/bin/python", "-c", "print(1)"], None),
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


def test_a_fixture_a_fast_test_sets_up_is_checked_too(started_in_a_fixture: Exception | None) -> None:
    assert isinstance(started_in_a_fixture, RuntimeError)
    assert "test_a_fixture_a_fast_test_sets_up_is_checked_too runs lmms-eval" in str(started_in_a_fixture)


@pytest.fixture(scope="module")
def started_in_a_fixture() -> Exception | None:
    try:
        subprocess.run(["/nonexistent/lmms-eval", "--tasks", "list"], check=False)
    except RuntimeError as exc:
        return exc
    return None


def test_a_popen_imported_by_name_is_checked() -> None:
    from subprocess import Popen

    with pytest.raises(RuntimeError, match="runs lmms-eval"):
        Popen(["/nonexistent/lmms-eval"])
