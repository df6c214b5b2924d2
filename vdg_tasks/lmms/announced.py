"""lmms-eval's own command, with a line every few seconds while it starts.

``python -m vdg_tasks.lmms.announced ARGS`` runs ``lmms-eval ARGS`` in this process, unchanged. lmms-eval writes
nothing while it imports torch and transformers and while it builds its tasks (15-30 s on two cores, more under
load), so a newcomer's ``make demo`` looks stuck there. This says so at once, then, until lmms-eval draws its first
progress bar, what it is doing whenever it has written nothing for ``QUIET_S`` seconds. After the first bar it says
nothing more: tqdm then reports progress itself, and a line of ours would break its bar.

Written by hand: neither lmms-eval nor tqdm reports before the work they count has started.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TextIO

QUIET_S = 5.0
PHASE_IMPORT = "importing torch, transformers and its models"
PHASE_SETUP = "building the tasks and loading the model"


@dataclass
class Silence:
    """What the watched streams saw: when they were last written, whether a progress bar was drawn."""

    started: float
    last_output: float
    phase: str = PHASE_IMPORT
    bar_drawn: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    def saw(self, text: str, now: float) -> None:
        self.last_output = now
        # tqdm draws and redraws a bar after a carriage return, on a terminal or not; log lines never hold one.
        if "\r" in text:
            self.bar_drawn = True


def due_line(silence: Silence, now: float) -> str | None:
    """The line to print at ``now``, or None while lmms-eval is not quiet for long or its bars have started."""
    if silence.bar_drawn or silence.done.is_set() or now - silence.last_output < QUIET_S:
        return None
    return f"lmms-eval: {silence.phase} ({now - silence.started:.0f} s)\n"


class WatchedStream:
    """A text stream that passes everything through and tells ``silence`` when it is written."""

    def __init__(self, stream: TextIO, silence: Silence) -> None:
        self._stream = stream
        self._silence = silence

    def write(self, text: str) -> int:
        self._silence.saw(text, time.monotonic())
        return self._stream.write(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _announce(silence: Silence, out: TextIO) -> None:
    while not silence.done.wait(0.5):
        now = time.monotonic()
        line = due_line(silence, now)
        if silence.bar_drawn:
            return
        if line is not None:
            out.write(line)
            out.flush()
            silence.last_output = now


def main(argv: list[str] | None = None) -> int:
    """Run lmms-eval's command line with ``argv`` (default: this process's arguments)."""
    now = time.monotonic()
    silence = Silence(started=now, last_output=now)
    real_stdout, real_stderr, real_argv = sys.stdout, sys.stderr, sys.argv
    sys.stdout = WatchedStream(real_stdout, silence)  # type: ignore[assignment]
    sys.stderr = WatchedStream(real_stderr, silence)  # type: ignore[assignment]
    real_stderr.write(f"lmms-eval: starting; until its first progress bar, a line every {QUIET_S:.0f} s of quiet\n")
    real_stderr.flush()
    threading.Thread(target=_announce, args=(silence, real_stderr), daemon=True).start()
    try:
        import lmms_eval.__main__  # noqa: F401  (the slow import is the first silence announced)

        silence.phase = PHASE_SETUP
        from lmms_eval.cli.dispatch import main as lmms_eval_main  # after the announcer started, as the first one

        sys.argv = ["lmms-eval", *(sys.argv[1:] if argv is None else argv)]
        lmms_eval_main()  # lmms-eval's own SystemExit, message and status pass through unchanged
    finally:
        silence.done.set()
        sys.stdout, sys.stderr, sys.argv = real_stdout, real_stderr, real_argv
    return 0


if __name__ == "__main__":
    sys.exit(main())
