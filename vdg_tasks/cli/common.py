"""What every command shares: a failure is one line naming the command, and exit status 2."""

from __future__ import annotations

import sys
from importlib import metadata

from vdg_tasks.vocabulary.untrusted import redact


def fail(command: str, exc: BaseException) -> int:
    """Say ``exc`` on stderr as one line naming the command, secret-looking settings redacted; return 2. Never
    raises: a message that cannot be redacted (or even turned into text) is replaced by a plain one."""
    try:
        line = redact(f"vdg {command}: {' '.join(str(exc).split()) or type(exc).__name__}")
    except Exception:  # the failure being reported must still be reported
        unchecked = "its message is not shown: it could not be checked for secrets"
        line = f"vdg {command}: failed ({type(exc).__name__}; {unchecked})"
    print(line, file=sys.stderr)
    return 2


def version() -> str:
    """The installed vdg's version (``unknown`` when vdg runs from a source tree that was never installed)."""
    try:
        return metadata.version("vdg")
    except metadata.PackageNotFoundError:
        return "unknown"
