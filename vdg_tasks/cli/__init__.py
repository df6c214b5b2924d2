"""The ``vdg`` command: thin wrappers over the package's functions (``vdg_tasks.cli:main``).

Each command imports what it runs when it runs, so that ``vdg --help`` and ``vdg stats`` start fast.
"""

from vdg_tasks.cli.parser import SUMMARY, build_parser, main

__all__ = ["SUMMARY", "build_parser", "main"]
