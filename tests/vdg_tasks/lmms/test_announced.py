"""`python -m vdg_tasks.lmms.announced`: lmms-eval's command with a line while it is quiet at start-up."""

from __future__ import annotations

import io
import re
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from vdg_tasks.lmms import announced

ROOT = Path(__file__).resolve().parents[3]


def test_a_line_is_due_only_after_quiet_s_of_silence_and_never_after_a_bar():
    silence = announced.Silence(started=100.0, last_output=100.0)
    assert announced.due_line(silence, 100.0 + announced.QUIET_S - 0.01) is None
    line = announced.due_line(silence, 112.4)
    assert line == f"lmms-eval: {announced.PHASE_IMPORT} (12 s)\n"
    silence.saw("2026-12-08 | WARNING | a log line\n", now=112.5)
    assert announced.due_line(silence, 112.5 + announced.QUIET_S - 0.01) is None
    assert not silence.bar_drawn
    silence.saw("\r 10%|#         | 15/150", now=113.0)
    assert silence.bar_drawn
    assert announced.due_line(silence, 500.0) is None


def test_the_watched_stream_passes_text_and_attributes_through():
    target = io.StringIO()
    silence = announced.Silence(started=0.0, last_output=0.0)
    stream = announced.WatchedStream(target, silence)
    assert stream.write("abc\n") == 4
    stream.flush()
    assert target.getvalue() == "abc\n"
    assert silence.last_output > 0.0
    assert stream.isatty() is target.isatty()


def _fake_lmms_eval(monkeypatch, body):
    """lmms-eval's two modules the command imports, with `body` as its command line."""
    main_module = types.ModuleType("lmms_eval.__main__")
    dispatch = types.ModuleType("lmms_eval.cli.dispatch")
    dispatch.main = body
    monkeypatch.setitem(sys.modules, "lmms_eval.__main__", main_module)
    monkeypatch.setitem(sys.modules, "lmms_eval.cli.dispatch", dispatch)


def test_quiet_start_up_is_announced_then_the_bar_and_exit_status_pass_through(monkeypatch, capsys):
    monkeypatch.setattr(announced, "QUIET_S", 0.2)
    seen_argv = []
    after_bar = threading.Event()

    def lmms_eval_main():
        seen_argv.append(list(sys.argv))
        time.sleep(1.5)  # quiet: the announcer speaks (it checks twice a second)
        sys.stderr.write("\rModel Responding:   0%|          | 0/3")
        time.sleep(1.5)  # quiet again, but a bar is drawn: nothing more from the announcer
        after_bar.set()
        sys.exit(3)

    _fake_lmms_eval(monkeypatch, lmms_eval_main)
    with pytest.raises(SystemExit) as exit_:
        announced.main(["--model", "vdg_chance", "--tasks", "vdgsynth_vdg_blind"])
    assert exit_.value.code == 3
    assert seen_argv == [["lmms-eval", "--model", "vdg_chance", "--tasks", "vdgsynth_vdg_blind"]]
    assert after_bar.is_set()
    assert sys.argv[0] != "lmms-eval"  # restored: vdg reads it to tell an lmms-eval run (dataset_fields.lmms_eval_run)
    err = capsys.readouterr().err
    assert err.startswith("lmms-eval: starting;")
    before_bar, bar, after = err.partition("\rModel Responding")
    assert bar and "lmms-eval:" not in after
    lines = re.findall(r"lmms-eval: (.+) \((\d+) s\)\n", before_bar)
    assert lines and {phase for phase, _ in lines} == {announced.PHASE_SETUP}


def test_the_demo_runs_every_lmms_eval_through_the_announcer():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^LMMS_EVAL\s*:=\s*\$\(PY\) -m vdg_tasks\.lmms\.announced$", makefile, re.M)
    recipe_lines = [line.strip() for line in makefile.splitlines() if line.startswith("\t")]
    assert sum(line.startswith("$(LMMS_EVAL) ") for line in recipe_lines) == 6
    assert not [line for line in recipe_lines if re.search(r"\$\(BIN\)/lmms[-_]eval\b", line)]
