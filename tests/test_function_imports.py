"""No import inside a function except where it keeps a heavy dependency off a fast path, with a comment saying which.

The first import of each consecutive run of imports inside a function needs a comment: on the line directly
above it, or trailing on its own line (``# pandas (~0.8 s) only for vdg report, not vdg --help``).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("vdg_tasks", "postprocess", "model_wrappers")
IMPORTS = (ast.Import, ast.ImportFrom)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _function_import_runs(tree: ast.AST) -> list[ast.stmt]:
    """The first import of each consecutive run of imports inside a function (at any depth)."""
    firsts: list[ast.stmt] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            previous_was_import = False
            for child in block:
                is_import = isinstance(child, IMPORTS)
                if is_import and in_function and not previous_was_import:
                    firsts.append(child)
                previous_was_import = is_import
        for child in ast.iter_child_nodes(node):
            visit(child, in_function or isinstance(child, FUNCTIONS))

    visit(tree, False)
    return sorted(firsts, key=lambda n: n.lineno)


def _comment_lines(source: str) -> set[int]:
    return {
        tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT
    }


def uncommented_function_imports(source: str, name: str) -> list[str]:
    """``name:line: import ...`` for each run of function-level imports with no comment above or on its line."""
    comments = _comment_lines(source)
    lines = source.splitlines()
    return [
        f"{name}:{node.lineno}: {lines[node.lineno - 1].strip()}"
        for node in _function_import_runs(ast.parse(source, name))
        if node.lineno not in comments and node.lineno - 1 not in comments
    ]


def test_the_checker_reports_only_the_uncommented_import():
    """A control: one commented and one uncommented function-level import, and a top-level one."""
    source = (
        "import os\n"
        "\n"
        "def commented():\n"
        "    # pandas (~0.8 s) only here, not on import\n"
        "    import pandas\n"
        "    import json\n"
        "    return pandas, json\n"
        "\n"
        "def trailing():\n"
        "    import scipy  # scipy (~0.3 s) only here\n"
        "\n"
        "def bare():\n"
        "    x = 1\n"
        "    from collections import OrderedDict\n"
        "    return OrderedDict, x\n"
    )
    assert uncommented_function_imports(source, "m.py") == ["m.py:14: from collections import OrderedDict"]


def test_every_function_level_import_says_why():
    paths = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    assert len(paths) > 70  # the walk found the packages
    found = [
        hit
        for path in paths
        for hit in uncommented_function_imports(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert found == [], (
        "imports inside functions with no comment saying which dependency they keep off which path:\n"
        + "\n".join(found)
    )
