"""`vdg sweep`: one lmms-eval command per frame budget or frame rate, with VDG_SAMPLING in its environment."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from vdg_tasks.cli import main
from vdg_tasks.jobs.sweep import SAMPLING_ENV, format_fps, frame_sweep, parse_fps, parse_frames, sampling_sweep
from vdg_tasks.lmms.yamlgen import YAML_ROOT


def _arg(command: tuple[str, ...], flag: str) -> str:
    return command[command.index(flag) + 1]


# ---------------------------------------------------------------------------------------- parsing


def test_parse_frames_and_fps():
    assert parse_frames("8, 16,32,64") == [8, 16, 32, 64]
    assert parse_fps("0.5,1,2,24") == [0.5, 1.0, 2.0, 24.0]
    assert parse_fps(" .25 , 1e1 ") == [0.25, 10.0]
    assert [format_fps(f) for f in (0.5, 1.0, 24.0, 0.25, 12.5)] == ["0.5", "1", "24", "0.25", "12.5"]


@pytest.mark.parametrize("text", ["", " , ", "0", "1,0", "-1", "0.5,-2", "abc", "1,x", "nan", "inf", "1,-inf"])
def test_parse_fps_rejects_non_positive_and_non_numbers(text):
    with pytest.raises(ValueError, match="--fps expects comma-separated positive numbers"):
        parse_fps(text)


@pytest.mark.parametrize("text", ["1,1", "0.5,1,0.50", "2,2.0"])
def test_parse_fps_rejects_duplicates(text):
    with pytest.raises(ValueError, match="twice"):
        parse_fps(text)


@pytest.mark.parametrize("text", ["", "0", "-8", "8.5", "8,x"])
def test_parse_frames_rejects_bad_budgets(text):
    with pytest.raises(ValueError, match="--frames expects"):
        parse_frames(text)
    with pytest.raises(ValueError, match="twice"):
        parse_frames("8,16,8")


# ----------------------------------------------------------------------------------------- runs


def test_frames_sweep_commands_env_labels_and_folders(tmp_path):
    runs = sampling_sweep("qwen2_vl", "pretrained=Q, max_pixels=100", "t_orig,t_black", tmp_path, frames="8,16,32,64")
    assert [r.setting for r in runs] == ["frames:8", "frames:16", "frames:32", "frames:64"]
    assert [r.label for r in runs] == ["qwen2_vl@8f", "qwen2_vl@16f", "qwen2_vl@32f", "qwen2_vl@64f"]
    assert [r.output for r in runs] == [tmp_path / f"frames{n}" for n in (8, 16, 32, 64)]
    assert [r.env for r in runs] == [{SAMPLING_ENV: f"frames:{n}"} for n in (8, 16, 32, 64)]
    assert [(r.axis, r.value, r.frames, r.fps) for r in runs][1] == ("frames", 16, 16, None)
    command = runs[1].command
    assert _arg(command, "--model") == "qwen2_vl"
    assert _arg(command, "--model_args") == "pretrained=Q,max_pixels=100,max_num_frames=16"
    assert _arg(command, "--tasks") == "t_orig,t_black"
    assert _arg(command, "--include_path") == str(YAML_ROOT)
    assert _arg(command, "--output_path") == str(tmp_path / "frames16")
    assert "--log_samples" in command


def test_fps_sweep_sets_the_fps_argument_and_labels(tmp_path):
    runs = sampling_sweep(
        "llava_vid", "", "t", tmp_path, fps="0.5,1,2", fps_arg="video_fps", label="llava", extra=["--", "--limit", "3"]
    )
    assert [r.setting for r in runs] == ["fps:0.5", "fps:1", "fps:2"]
    assert [r.label for r in runs] == ["llava@0.5fps", "llava@1fps", "llava@2fps"]
    assert [r.output.name for r in runs] == ["fps0.5", "fps1", "fps2"]
    assert runs[0].env == {"VDG_SAMPLING": "fps:0.5"}
    assert (runs[0].axis, runs[0].value, runs[0].frames, runs[0].fps) == ("fps", 0.5, None, 0.5)
    assert _arg(runs[0].command, "--model_args") == "video_fps=0.5"
    assert runs[0].command[-2:] == ("--limit", "3") and "--" not in runs[0].command
    default = sampling_sweep("qwen2_vl", "pretrained=Q", "t", tmp_path, fps="1")
    assert _arg(default[0].command, "--model_args") == "pretrained=Q,fps=1"


def test_frame_sweep_keeps_its_signature(tmp_path):
    runs = frame_sweep("m", "", "t", "8,16", tmp_path, frames_arg="nframes", label="x", include_path=tmp_path)
    assert [(r.label, r.frames, r.setting) for r in runs] == [("x@8f", 8, "frames:8"), ("x@16f", 16, "frames:16")]
    assert _arg(runs[0].command, "--model_args") == "nframes=8"
    assert _arg(runs[0].command, "--include_path") == str(tmp_path)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of --frames"),
        ({"frames": "8", "fps": "1"}, "exactly one of --frames"),
        ({"fps": "0"}, "--fps expects"),
        ({"fps": "1,-1"}, "--fps expects"),
        ({"fps": "1,1"}, "twice"),
        ({"fps": "1", "model_args": "fps=2"}, "already sets fps"),
        ({"frames": "8", "model_args": "a=1, max_num_frames = 4"}, "already sets max_num_frames"),
    ],
)
def test_sweep_refuses(tmp_path, kwargs, message):
    model_args = kwargs.pop("model_args", "")
    with pytest.raises(ValueError, match=message):
        sampling_sweep("m", model_args, "t", tmp_path, **kwargs)


# ------------------------------------------------------------------------------------------ CLI


def test_cli_dry_run_prints_each_command_with_its_sampling(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("a dry run ran lmms-eval"))
    out = tmp_path / "sweep"
    code = main(["sweep", "--model", "qwen2_vl", "--model_args", "pretrained=Q", "--tasks", "t", "--fps", "0.5,2",
                 "--output_path", str(out), "--label", "q", "--dry-run", "--", "--limit", "2"])  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 2
    words = shlex.split(lines[0])
    assert words[0] == "VDG_SAMPLING=fps:0.5"
    assert _arg(tuple(words), "--model_args") == "pretrained=Q,fps=0.5"
    assert _arg(tuple(words), "--output_path") == str(out / "fps0.5") and words[-2:] == ["--limit", "2"]
    assert shlex.split(lines[1])[0] == "VDG_SAMPLING=fps:2"
    assert f"q@0.5fps={out / 'fps0.5'}" in captured.err and f"q@2fps={out / 'fps2'}" in captured.err
    assert not out.exists()


def test_cli_runs_each_setting_with_its_environment(tmp_path, capsys, monkeypatch):
    calls = []

    def call(command, env=None):
        calls.append((command, env))
        return 0

    monkeypatch.setattr(subprocess, "call", call)
    monkeypatch.setenv("VDG_TEST_MARKER", "kept")
    out = tmp_path / "sweep"
    assert main(["sweep", "--model", "m", "--tasks", "t", "--frames", "8,16", "--output_path", str(out)]) == 0
    assert [env[SAMPLING_ENV] for _, env in calls] == ["frames:8", "frames:16"]
    assert all(env["VDG_TEST_MARKER"] == "kept" and env["PATH"] == os.environ["PATH"] for _, env in calls)
    assert [_arg(tuple(c), "--model_args") for c, _ in calls] == ["max_num_frames=8", "max_num_frames=16"]
    assert SAMPLING_ENV not in os.environ
    assert "report with: vdg report m@8f=" in capsys.readouterr().err


def test_cli_stops_at_the_first_failing_setting(tmp_path, capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "call", lambda command, env=None: calls.append(command) or 3)
    assert main(["sweep", "--model", "m", "--tasks", "t", "--fps", "1,2", "--output_path", str(tmp_path)]) == 3
    assert len(calls) == 1
    assert "lmms-eval exited 3 at fps:1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ([], "exactly one of --frames"),
        (["--frames", "8", "--fps", "1"], "exactly one of --frames"),
        (["--fps", "0"], "--fps expects"),
        (["--fps=-0.5,1"], "--fps expects"),
        (["--fps", "1,2,1"], "twice"),
        (["--frames", "8,8"], "twice"),
    ],
)
def test_cli_refuses_bad_settings(tmp_path, capsys, monkeypatch, flags, message):
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("ran lmms-eval"))
    code = main(["sweep", "--model", "m", "--tasks", "t", *flags, "--output_path", str(tmp_path / "o"), "--dry-run"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("vdg sweep: ") and message in err
    assert not Path(tmp_path / "o").exists()
