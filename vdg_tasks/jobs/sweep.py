"""Sampling sweeps: one lmms-eval run per frame budget (``--frames``) or frame rate (``--fps``).

Each setting runs the same tasks with one model argument set: the frames per video
(``max_num_frames=N`` for most lmms-eval video models) or the frames per second (``fps=F`` for
qwen2_vl / qwen2_5_vl, ``video_fps=F`` for llava_vid). Each writes its own output folder
(``frames<N>``, ``fps<F>``), labelled ``<label>@<N>f`` / ``<label>@<F>fps`` for the report, and
runs with ``VDG_SAMPLING=frames:<N>`` / ``VDG_SAMPLING=fps:<F>`` in its environment: the task hooks
hold the held conditions (single, shuffled, ordered) to the same sampling (K = N key frames, or
K = round(F x duration) per video) and log the string as each record's ``sampling``. The report
lays accuracy and VDG out per setting (``postprocess.analyses.sampling``); the character-tracking
``frame_budget`` table reads the budget back from each run's settings (``frames`` column).
"""

from __future__ import annotations

import math
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from vdg_tasks.lmms import yamlgen  # the module: YAML_ROOT is read when used (tests point it elsewhere)
from vdg_tasks.perturb.video_request import SAMPLING_ENV

__all__ = [
    "SAMPLING_ENV",
    "SweepRun",
    "format_fps",
    "frame_sweep",
    "parse_fps",
    "parse_frames",
    "sampling_sweep",
]


@dataclass(frozen=True)
class SweepRun:
    """One setting of a sweep.

    Attributes:
        setting: ``frames:<N>`` or ``fps:<F>``, the value of ``VDG_SAMPLING`` for this run.
        label: the model label in the report, ``<label>@<N>f`` or ``<label>@<F>fps``.
        output: the run's output folder, ``OUT/frames<N>`` or ``OUT/fps<F>``.
        command: the lmms-eval command.
        env: the variables this run adds to the environment (``{"VDG_SAMPLING": setting}``).
    """

    setting: str
    label: str
    output: Path
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def axis(self) -> str:
        """``frames`` or ``fps``."""
        return self.setting.partition(":")[0]

    @property
    def value(self) -> int | float:
        """The frames per video (int) or frames per second (float) of this setting."""
        text = self.setting.partition(":")[2]
        return int(text) if self.axis == "frames" else float(text)

    @property
    def frames(self) -> int | None:
        """The frame budget of a frames sweep; None in an fps sweep."""
        return int(self.value) if self.axis == "frames" else None

    @property
    def fps(self) -> float | None:
        """The frame rate of an fps sweep; None in a frames sweep."""
        return float(self.value) if self.axis == "fps" else None


def parse_frames(text: str) -> list[int]:
    """``"8,16,32"`` -> [8, 16, 32]; ValueError for anything but distinct positive integers."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"--frames expects comma-separated positive integers such as 8,16,32,64, got {text!r}")
    frames = [int(p) for p in parts]
    if len(set(frames)) != len(frames):
        raise ValueError(f"--frames lists a budget twice: {text!r}")
    return frames


def parse_fps(text: str) -> list[float]:
    """``"0.5,1,2"`` -> [0.5, 1.0, 2.0]; ValueError for anything but distinct positive finite numbers."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    rates = []
    for part in parts:
        try:
            rate = float(part)
        except ValueError:
            rate = math.nan
        if not (math.isfinite(rate) and rate > 0):
            rates = []
            break
        rates.append(rate)
    if not rates:
        raise ValueError(f"--fps expects comma-separated positive numbers such as 0.5,1,2, got {text!r}")
    if len(set(rates)) != len(rates):
        raise ValueError(f"--fps lists a rate twice: {text!r}")
    return rates


def format_fps(rate: float) -> str:
    """A frame rate as written in settings, labels and folders: 0.5 -> "0.5", 2.0 -> "2" (round-trips)."""
    text = repr(float(rate))
    return text[:-2] if text.endswith(".0") else text


def _lmms_eval() -> list[str]:
    found = shutil.which("lmms-eval")
    return [found] if found else [sys.executable, "-m", "lmms_eval"]


def sampling_sweep(
    model: str,
    model_args: str,
    tasks: str,
    output_path: Path,
    *,
    frames: str | None = None,
    fps: str | None = None,
    frames_arg: str = "max_num_frames",
    fps_arg: str = "fps",
    label: str | None = None,
    extra: list[str] | None = None,
    include_path: Path | None = None,
) -> list[SweepRun]:
    """The lmms-eval runs of a frames sweep (``frames="8,16,32"``) or an fps sweep (``fps="0.5,1,2"``).

    Nothing is run here. Each run sets ``frames_arg`` (or ``fps_arg``) in ``--model_args`` and
    ``VDG_SAMPLING`` in ``SweepRun.env``.

    Raises:
        ValueError: not exactly one of ``frames`` and ``fps``, bad values, or ``model_args``
            already setting the swept argument.
    """
    if (frames is None) == (fps is None):
        raise ValueError("give exactly one of --frames (frames per video) and --fps (frames per second)")
    if frames is not None:
        arg = frames_arg
        settings = [(f"frames:{n}", f"frames{n}", f"{n}f", str(n)) for n in parse_frames(frames)]
    else:
        arg = fps_arg
        settings = [
            (f"fps:{text}", f"fps{text}", f"{text}fps", text) for text in (format_fps(f) for f in parse_fps(fps or ""))
        ]
    args = [a.strip() for a in model_args.split(",") if a.strip()]
    if any(a.split("=", 1)[0].strip() == arg for a in args):
        raise ValueError(f"--model_args already sets {arg}; the sweep sets it per setting")
    rest = [a for a in (extra or []) if a != "--"]
    runs = []
    for setting, folder, suffix, value in settings:
        out = Path(output_path) / folder
        command = (
            *_lmms_eval(),
            "--model",
            model,
            "--model_args",
            ",".join([*args, f"{arg}={value}"]),
            "--tasks",
            tasks,
            "--include_path",
            str(include_path or yamlgen.YAML_ROOT),
            "--log_samples",
            "--output_path",
            str(out),
            *rest,
        )
        runs.append(SweepRun(setting, f"{label or model}@{suffix}", out, command, {SAMPLING_ENV: setting}))
    return runs


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
    """The lmms-eval runs of a frame sweep: ``sampling_sweep`` with ``frames`` (nothing is run here).

    Raises:
        ValueError: bad ``frames``, or ``model_args`` already setting ``frames_arg``.
    """
    return sampling_sweep(
        model,
        model_args,
        tasks,
        output_path,
        frames=frames,
        frames_arg=frames_arg,
        label=label,
        extra=extra,
        include_path=include_path,
    )
