"""The `vdg` command's parser (vdg_tasks.cli.parser): every command and option documented, the task side's
quick commands answer."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

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


def test_version_is_the_projects(capsys):
    declared = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"vdg {declared}"


@pytest.mark.parametrize(
    ("word", "said"),
    [("reprot", "did you mean 'report'"), ("shortcut", "did you mean 'shortcuts'"), ("xyzzy", "`vdg --help` lists")],
)
def test_a_word_that_is_no_command_is_one_line_with_the_closest(capsys, word, said):
    assert main([word, "--out", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no command {word!r}" in err and said in err


@pytest.mark.parametrize("command", ["report", "leaderboard"])
def test_a_report_without_runs_or_predictions_is_one_line(capsys, tmp_path, command):
    assert main([command, "--out", str(tmp_path / "out"), "--missing", "incorrect"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing to read" in err and "--predictions MODEL=FILE" in err
    assert not (tmp_path / "out").exists()
    with pytest.raises(SystemExit):  # its help is still the help
        main([command, "--help"])


def test_developer_commands_are_listed_apart_and_still_run(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    users, developers = capsys.readouterr().out.split("developer commands:")
    for name in ("write-yamls", "schema"):
        assert name not in users and name in developers
    assert "report" in users and "shortcuts" in users
    assert main(["schema", "--check"]) == 0
