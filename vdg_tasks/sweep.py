"""Frame-budget sweeps (the character-tracking protocol's C7): one lmms-eval run per budget.

Each budget runs the same tasks with the model's frame argument set (``max_num_frames=N`` for
most lmms-eval video models) and writes its own output folder, labelled ``<label>@<N>f`` for the
report; the report reads the budget back from each run's settings (``frames`` column) and lays
accuracy and name-swap sensitivity out per budget.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SweepRun", "frame_sweep", "parse_frames"]


@dataclass(frozen=True)
class SweepRun:
    """One budget of a sweep: the frames, the report label, the output folder and the lmms-eval command."""

    frames: int
    label: str
    output: Path
    command: tuple[str, ...]


def parse_frames(text: str) -> list[int]:
    """``"8,16,32"`` -> [8, 16, 32]; ValueError for anything but distinct positive integers."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"--frames expects comma-separated positive integers such as 8,16,32,64, got {text!r}")
    frames = [int(p) for p in parts]
    if len(set(frames)) != len(frames):
        raise ValueError(f"--frames lists a budget twice: {text!r}")
    return frames


def _lmms_eval() -> list[str]:
    found = shutil.which("lmms-eval")
    return [found] if found else [sys.executable, "-m", "lmms_eval"]


def frame_sweep(
    model: str,
    model_args: str,
    tasks: str,
    frames: str,
    output_path: Path,
    frames_arg: str = "max_num_frames",
    label: str | None = None,
    extra: list[str] | None = None,
    include_path: Path | None = None,
) -> list[SweepRun]:
    """The lmms-eval runs of a frame sweep (nothing is run here).

    Raises:
        ValueError: bad ``frames``, or ``model_args`` already setting ``frames_arg``.
    """
    from vdg_tasks.yamlgen import YAML_ROOT

    budgets = parse_frames(frames)
    args = [a.strip() for a in model_args.split(",") if a.strip()]
    if any(a.split("=", 1)[0].strip() == frames_arg for a in args):
        raise ValueError(f"--model_args already sets {frames_arg}; the sweep sets it per budget")
    rest = [a for a in (extra or []) if a != "--"]
    runs = []
    for n in budgets:
        out = Path(output_path) / f"frames{n}"
        command = (
            *_lmms_eval(),
            "--model",
            model,
            "--model_args",
            ",".join([*args, f"{frames_arg}={n}"]),
            "--tasks",
            tasks,
            "--include_path",
            str(include_path or YAML_ROOT),
            "--log_samples",
            "--output_path",
            str(out),
            *rest,
        )
        runs.append(SweepRun(n, f"{label or model}@{n}f", out, command))
    return runs
