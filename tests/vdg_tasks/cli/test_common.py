"""vdg_tasks.cli.common: how every command fails: one line on stderr naming the command, exit status 2."""

from __future__ import annotations

import pytest

from vdg_tasks.cli.common import fail


def test_a_failure_is_one_line_naming_the_command_and_exit_2(capsys):
    assert fail("export", ValueError("the folder out holds another export")) == 2
    captured = capsys.readouterr()
    assert captured.err == "vdg export: the folder out holds another export\n" and captured.out == ""


def test_a_multi_line_message_is_folded_to_one_line(capsys):
    assert fail("derive", ValueError("cannot derive x:\n  no options field\t(give --options)  ")) == 2
    assert capsys.readouterr().err == "vdg derive: cannot derive x: no options field (give --options)\n"


@pytest.mark.parametrize("exc", [RuntimeError(), KeyboardInterrupt(), ValueError("  \n ")])
def test_an_exception_without_a_message_is_named_by_its_type(capsys, exc):
    assert fail("materialize", exc) == 2
    assert capsys.readouterr().err == f"vdg materialize: {type(exc).__name__}\n"


def test_an_exception_s_own_str_is_used(capsys):
    # KeyError's str quotes the key: the message is what the exception says, not its args.
    assert fail("subset", KeyError("task_type")) == 2
    assert capsys.readouterr().err == "vdg subset: 'task_type'\n"
