"""How many processes the report may use (light: no pandas, so any module may ask)."""

from __future__ import annotations

import multiprocessing as mp
import os
import sys


def cpus() -> int:
    """CPUs this process may run on (its affinity where the platform says, else the CPU count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def can_fork() -> bool:
    """Whether worker processes are forked (they then share the parent's frame without copying it): on Linux.
    macOS offers fork too, but forking a process that has loaded numpy's system BLAS is unsafe there."""
    return sys.platform.startswith("linux") and "fork" in mp.get_all_start_methods()
