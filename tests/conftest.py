"""Session-wide checks of the environment the tests run in, and what keeps the fast tier (`make test-fast`) fast."""

from __future__ import annotations

import re
import subprocess

import pytest


def pytest_sessionstart(session) -> None:
    """Stop before collecting when vdg is registered in this interpreter's lmms-eval.

    Registered tasks are indexed from lmms-eval's own folder, whose names win over the tests'
    ``--include_path`` task folders. Only this interpreter's lmms-eval is looked at (not, e.g., the fresh
    venv test_register builds and registers into).
    """
    from vdg_tasks.lmms.register import registered

    folder = registered()
    if folder is not None:
        pytest.exit(
            f"vdg is registered in {folder}: run `vdg register --undo` before the tests "
            "(registered tasks shadow the tests' task folders)",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


# What makes a test `slow` (pyproject's marker): `make test-fast` (`pytest -m "not slow"`) leaves these out. A test
# not marked slow that starts one of these processes fails, naming the marker, so the fast tier stays fast as tests
# are added. (Encoding and decoding video are caught by the fast tier's time, not here: a few frames are fine.)
_SLOW_PROCESSES = (
    (re.compile(r"(?:^|[\s/])lmms-eval(?:\s|$)|-m\s+lmms_eval\b"), "runs lmms-eval"),
    (re.compile(r"-m\s+venv\b|\bvirtualenv\b"), "builds a virtual environment"),
)


def slow_process(args: object) -> str | None:
    """Why a process started with ``args`` makes a test slow, or None."""
    text = args if isinstance(args, str) else " ".join(str(a) for a in args) if isinstance(args, list | tuple) else ""
    return next((why for pattern, why in _SLOW_PROCESSES if pattern.search(text)), None)


@pytest.fixture(autouse=True)
def _slow_processes_only_in_slow_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("slow") is not None:
        return
    real = subprocess.Popen
    test = request.node.nodeid

    class CheckedPopen(real):  # type: ignore[misc,valid-type]
        def __init__(self, args: object, *rest: object, **kwargs: object) -> None:
            why = slow_process(args)
            if why is not None:
                raise RuntimeError(f"{test} {why}: mark it @pytest.mark.slow (make test-fast leaves slow tests out)")
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", CheckedPopen)
