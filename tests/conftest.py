"""Session-wide checks of the environment the tests run in, and what keeps the fast tier (`make test-fast`) fast."""

from __future__ import annotations

import itertools
import os
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
# not marked slow that starts one of these processes (itself or through a fixture it sets up) fails, naming the
# marker, so the fast tier stays fast as tests are added. Caught: lmms-eval as the command (or `-m lmms_eval`, its
# `__main__.py`, or in a shell command line) and venv builds; not caught: grandchildren of another command,
# os.system. Encoding and decoding video are caught by the fast tier's time, not here: a few frames are fine.
_SHELL_LMMS_EVAL = re.compile(
    r"(?:^|[;&|(]\s*)(?:\S*/)?lmms-eval(?=$|[\s;&|)])|-m\s*lmms_eval\b|lmms_eval/__main__\.py"
)
_SHELL_VENV = re.compile(r"-m\s*venv\b|(?:^|[;&|(]\s*)(?:\S*/)?virtualenv(?=$|\s)|(?:^|[;&|(]\s*)uv\s+venv\b")


def _text(arg: object) -> str:
    if isinstance(arg, bytes):
        return arg.decode(errors="replace")
    return os.fspath(arg) if isinstance(arg, os.PathLike) else str(arg)


def _runs_module(words: list[str], module: str) -> bool:
    """``-m module`` or ``-mmodule`` among a command's words."""
    pairs = itertools.pairwise(words)
    return f"-m{module}" in words or any(flag == "-m" and word == module for flag, word in pairs)


def slow_process(args: object) -> str | None:
    """Why a process started with ``args`` (a ``subprocess.Popen`` argument) makes a test slow, or None."""
    single = isinstance(args, str | bytes | os.PathLike)
    words = [_text(args)] if single else [_text(a) for a in args]  # type: ignore[attr-defined]
    if not words:
        return None
    # command lines given to a shell: the single string, or what follows -c
    shell_lines = [words[0]] if single else [w for flag, w in itertools.pairwise(words) if flag == "-c"]
    command = "" if single else os.path.basename(words[0])
    if (
        command == "lmms-eval"
        or _runs_module(words, "lmms_eval")
        or any(w.endswith("lmms_eval/__main__.py") for w in words)
        or any(map(_SHELL_LMMS_EVAL.search, shell_lines))
    ):
        return "runs lmms-eval"
    if (
        command == "virtualenv"
        or _runs_module(words, "venv")
        or words[:2] == ["uv", "venv"]
        or any(map(_SHELL_VENV.search, shell_lines))
    ):
        return "builds a virtual environment"
    return None


#: The test being run (its setup, call and teardown, with the fixtures it sets up), for the check below.
_running: list[pytest.Item] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # noqa: ANN201 (a hook wrapper)
    _running.append(item)
    try:
        yield
    finally:
        _running.remove(item)


def pytest_configure(config: pytest.Config) -> None:
    """Every process the session starts goes through the check (the class itself, so that a module holding
    ``from subprocess import Popen`` is checked too)."""
    real_init = subprocess.Popen.__init__

    def checked_init(self: subprocess.Popen, args: object, *rest: object, **kwargs: object) -> None:
        test = _running[-1] if _running else None
        if test is not None and test.get_closest_marker("slow") is None:
            why = slow_process(args)
            if why is not None:
                raise RuntimeError(
                    f"{test.nodeid} {why}: mark it @pytest.mark.slow (make test-fast leaves slow tests out)"
                )
        real_init(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = checked_init  # type: ignore[method-assign]
