"""How many processes the report may use (light: no pandas, so any module may ask)."""

from __future__ import annotations

import multiprocessing as mp
import os


def cpus() -> int:
    """CPUs this process may run on (its affinity where the platform says, else the CPU count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def can_fork() -> bool:
    """Whether worker processes can be forked (they then share the parent's frame without copying it)."""
    return "fork" in mp.get_all_start_methods()
