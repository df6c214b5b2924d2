"""What every command shares: a failure is one line naming the command, and exit status 2."""

from __future__ import annotations

import sys


def fail(command: str, exc: BaseException) -> int:
    message = " ".join(str(exc).split()) or type(exc).__name__
    print(f"vdg {command}: {message}", file=sys.stderr)
    return 2
