"""Session-wide checks of the environment the tests run in."""

from __future__ import annotations

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
