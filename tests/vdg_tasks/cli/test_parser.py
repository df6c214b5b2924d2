"""The `vdg` command's parser (vdg_tasks.cli.parser): every command and option documented, the task side's
quick commands answer."""

from __future__ import annotations

import pytest

from vdg_tasks.cli import main


def test_existing_subcommands_still_work(capsys):
    from vdg_tasks.lmms.yamlgen import YAML_ROOT

    assert main(["tasks-path"]) == 0 and capsys.readouterr().out.strip() == str(YAML_ROOT)
    assert main(["write-yamls", "--check"]) == 0


def _all_parsers(parser):
    import argparse

    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _all_parsers(sub)


def test_every_option_of_every_command_has_help_with_its_default():
    from vdg_tasks.cli import build_parser

    parsers = list(_all_parsers(build_parser()))
    assert len(parsers) > 10
    for parser in parsers:
        assert parser.description, parser.prog
        text = " ".join(parser.format_help().split())
        for action in parser._actions:
            assert action.help, (parser.prog, action.dest)
            has_default = isinstance(action.default, (int, float, str)) and not isinstance(action.default, bool)
            if action.option_strings and has_default and action.default != "==SUPPRESS==":
                assert f"default: {action.default}" in text or "default" in action.help, (parser.prog, action.dest)


def test_top_level_help_says_what_vdg_does_in_one_line(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "watching the video or guessing from the text" in " ".join(text.split())
