"""The README's notebook example runs, as written, against the published reference predictions.

The example is the first ```python block after the line ``<!-- notebook example -->`` in README.md.
It runs in a scratch folder holding ``tests/data`` (a link to this repository's), so its relative
paths resolve and whatever it writes stays out of the checkout.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.reference_data import REFERENCE

README = Path(__file__).resolve().parents[2] / "README.md"
MARKER = "<!-- notebook example -->"
_BLOCK = re.compile(r"```python\n(?P<code>.*?)\n```", re.DOTALL)


def notebook_example(readme: Path = README) -> str:
    """The code of the first ```python block after ``MARKER`` in ``readme``."""
    text = readme.read_text()
    at = text.find(MARKER)
    if at < 0:
        pytest.fail(f"{readme.name} has no notebook example: put the line {MARKER!r} right before a ```python block")
    block = _BLOCK.search(text, at + len(MARKER))
    if block is None:
        pytest.fail(f"{readme.name}: no ```python block follows {MARKER!r}")
    return block.group("code")


def run_example(code: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    (folder / "tests").mkdir()
    (folder / "tests" / "data").symlink_to(REFERENCE.parent, target_is_directory=True)
    monkeypatch.chdir(folder)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    exec(compile(code, "README.md (notebook example)", "exec"), namespace)
    return namespace


def test_readme_notebook_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = notebook_example()
    assert len(code.strip().splitlines()) <= 8, "the notebook example is meant to be a few lines"
    run_example(code, tmp_path, monkeypatch)
