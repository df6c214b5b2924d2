"""vdg_tasks.cli.tasks: the task side's commands, called in process on the real parser's arguments.

What each command does is tested with its module; here the functions it runs are stand-ins that record
their arguments, so each test checks the command's own part: how its flags become arguments, what it
prints on stdout (for scripts) and stderr (for people), and which failures become one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from vdg_tasks.cli import tasks
from vdg_tasks.cli.parser import build_parser
from vdg_tasks.jobs.sweep import SweepRun
from vdg_tasks.lmms.register import RegisterError, Summary
from vdg_tasks.vocabulary.paths import CacheUnwritable


def parse(*argv: str):
    return build_parser().parse_args(list(argv))


class Recorder:
    """A stand-in that records each call's arguments and returns ``result`` (or raises ``error``)."""

    def __init__(self, result=None, error: BaseException | None = None):
        self.result, self.error, self.calls = result, error, []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        if self.error is not None:
            raise self.error
        return self.result


# --- synth, synth-episodes, infinibench ------------------------------------------------------------------


def test_synth_generates_into_the_folder_with_its_count_and_seed(monkeypatch, tmp_path, capsys):
    import vdg_tasks.synthetic.synth as synth

    generate = Recorder(tmp_path / "d" / "questions.jsonl")
    monkeypatch.setattr(synth, "generate", generate)
    args = parse("synth", "--out", str(tmp_path / "d"), "--videos", "3", "--seed", "7")
    assert args.func is tasks.cmd_synth and tasks.cmd_synth(args) == 0
    assert generate.calls == [((tmp_path / "d",), {"n_videos": 3, "seed": 7, "progress": True})]
    assert capsys.readouterr().out == f"{tmp_path / 'd' / 'questions.jsonl'}\n"


def test_synth_episodes_prepares_the_questions_from_the_generated_episodes(monkeypatch, tmp_path, capsys):
    import vdg_tasks.data.infinibench as infinibench
    import vdg_tasks.synthetic.episodes as episodes

    out, questions = tmp_path / "episodes", tmp_path / "q.jsonl"
    generate = Recorder(out / "annotations.json")
    prepare = Recorder((questions, 12))
    monkeypatch.setattr(episodes, "generate_episodes", generate)
    monkeypatch.setattr(infinibench, "prepare", prepare)
    args = parse("synth-episodes", "--out", str(out), "--questions", str(questions), "--episodes", "2", "--seed", "5")
    assert tasks.cmd_synth_episodes(args) == 0
    assert generate.calls == [((out,), {"n_episodes": 2, "seed": 5, "progress": True})]
    assert prepare.calls == [
        ((out / "annotations.json", out / "videos", questions), {"subtitles_root": out / "subtitles"})
    ]
    captured = capsys.readouterr()
    assert captured.out == f"{questions}\n" and captured.err == "12 questions over 2 synthetic episodes\n"


def test_infinibench_passes_every_path_and_the_split(monkeypatch, tmp_path, capsys):
    import vdg_tasks.data.infinibench as infinibench

    prepare = Recorder((tmp_path / "q.jsonl", 4))
    monkeypatch.setattr(infinibench, "prepare", prepare)
    argv = ["infinibench", "ann.json", "--videos", "v", "--subtitles", "s", "--roster", "r.yaml", "--split", "val"]
    assert tasks.cmd_infinibench(parse(*argv, "--out", str(tmp_path / "q.jsonl"))) == 0
    assert prepare.calls == [
        (
            (Path("ann.json"), Path("v"), tmp_path / "q.jsonl"),
            {"subtitles_root": Path("s"), "roster_file": Path("r.yaml"), "split": "val"},
        )
    ]
    captured = capsys.readouterr()
    assert captured.out == f"{tmp_path / 'q.jsonl'}\n" and captured.err == "4 global-appearance questions prepared\n"


def test_infinibench_without_subtitles_roster_or_split_passes_none(monkeypatch, tmp_path):
    import vdg_tasks.data.infinibench as infinibench

    prepare = Recorder((tmp_path / "q.jsonl", 0))
    monkeypatch.setattr(infinibench, "prepare", prepare)
    assert tasks.cmd_infinibench(parse("infinibench", "a", "--videos", "v", "--out", str(tmp_path / "q.jsonl"))) == 0
    assert prepare.calls[0][1] == {"subtitles_root": None, "roster_file": None, "split": None}


@pytest.mark.parametrize("error", [ValueError("ann.json: no global-appearance questions"), FileNotFoundError("v")])
def test_infinibench_refusals_are_one_line_and_exit_2(monkeypatch, capsys, error):
    import vdg_tasks.data.infinibench as infinibench

    monkeypatch.setattr(infinibench, "prepare", Recorder(error=error))
    assert tasks.cmd_infinibench(parse("infinibench", "ann.json", "--videos", "v")) == 2
    captured = capsys.readouterr()
    assert captured.err == f"vdg infinibench: {error}\n" and captured.out == ""


# --- sweep ----------------------------------------------------------------------------------------------


def test_sweep_hands_every_flag_to_the_sweep_and_prints_the_runs(monkeypatch, tmp_path, capsys):
    import vdg_tasks.jobs.sweep as sweep

    out = tmp_path / "out"
    run = SweepRun("frames:8", "L@8f", out / "frames8", ("lmms-eval", "--model", "m"), {"VDG_SAMPLING": "frames:8"})
    sampling_sweep = Recorder([run])
    monkeypatch.setattr(sweep, "sampling_sweep", sampling_sweep)
    argv = ["sweep", "--model", "m", "--model_args", "a=1", "--tasks", "t1,t2", "--frames", "8"]
    argv += ["--frames-arg", "nf", "--fps-arg", "vf", "--output_path", str(out), "--label", "L"]
    argv += ["--include_path", "inc", "--dry-run"]
    assert tasks.cmd_sweep(parse(*argv)) == 0
    assert sampling_sweep.calls == [
        (
            (),
            {
                "model": "m",
                "model_args": "a=1",
                "tasks": "t1,t2",
                "output_path": out,
                "frames": "8",
                "fps": None,
                "frames_arg": "nf",
                "fps_arg": "vf",
                "label": "L",
                "extra": [],
                "include_path": Path("inc"),
            },
        )
    ]
    captured = capsys.readouterr()
    assert captured.out == "VDG_SAMPLING=frames:8 lmms-eval --model m\n"
    assert captured.err == f"then: vdg report L@8f={out / 'frames8'} --out {out / 'report'}\n"


def test_sweep_without_an_include_path_passes_none_and_a_refusal_exits_2(monkeypatch, tmp_path, capsys):
    import vdg_tasks.jobs.sweep as sweep

    sampling_sweep = Recorder(error=ValueError("give exactly one of --frames or --fps"))
    monkeypatch.setattr(sweep, "sampling_sweep", sampling_sweep)
    assert tasks.cmd_sweep(parse("sweep", "--model", "m", "--tasks", "t", "--output_path", str(tmp_path))) == 2
    assert sampling_sweep.calls[0][1]["include_path"] is None
    assert capsys.readouterr().err == "vdg sweep: give exactly one of --frames or --fps\n"


# --- tasks-path, register, write-yamls ----------------------------------------------------------------------


def test_tasks_path_prints_vdg_s_task_folder(monkeypatch, tmp_path, capsys):
    import vdg_tasks.lmms.yamlgen as yamlgen

    monkeypatch.setattr(yamlgen, "YAML_ROOT", tmp_path / "yaml_tasks")
    assert tasks.cmd_tasks_path(parse("tasks-path")) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'yaml_tasks'}\n"


@pytest.fixture
def register_stubs(monkeypatch, tmp_path):
    """vdg's task folder and lmms-eval's (tmp paths), with recording stand-ins for register's functions."""
    import vdg_tasks.lmms.register as register
    import vdg_tasks.lmms.yamlgen as yamlgen

    stubs = SimpleNamespace(
        yaml_root=tmp_path / "yaml_tasks",
        lmms_dir=tmp_path / "lmms_eval" / "tasks",
        register=Recorder(),
        unregister=Recorder(),
        problems=Recorder([]),
    )
    monkeypatch.setattr(yamlgen, "YAML_ROOT", stubs.yaml_root)
    monkeypatch.setattr(register, "lmms_eval_tasks_dir", lambda: stubs.lmms_dir)
    for name in ("register", "unregister", "problems"):
        monkeypatch.setattr(register, name, getattr(stubs, name))
    return stubs


def test_register_copies_into_lmms_eval_s_folder_and_says_what_it_did(register_stubs, capsys):
    folder = register_stubs.lmms_dir / "vdg"
    register_stubs.register.result = Summary(
        folder, register_stubs.yaml_root, tasks=5, added=2, updated=1, removed=0, kept=2,
        missing_data=["vdgsynth/data"], foreign=["mine.yaml", "notes"],
    )  # fmt: skip
    assert tasks.cmd_register(parse("register")) == 0
    assert register_stubs.register.calls == [((register_stubs.yaml_root, register_stubs.lmms_dir), {"force": False})]
    captured = capsys.readouterr()
    assert captured.out == f"{folder}\n"
    err = captured.err.splitlines()
    assert err[0].startswith(
        f"registered 5 tasks, copied from {register_stubs.yaml_root} (2 added, 1 updated, 0 removed, 2 unchanged): "
    )
    assert err[1:] == [
        f"note: {folder / 'vdgsynth/data'} links to {register_stubs.yaml_root / 'vdgsynth/data'}, not written yet",
        "left what vdg did not place there: mine.yaml, notes",
    ]


def test_register_into_a_given_folder_with_force(register_stubs, tmp_path, capsys):
    register_stubs.register.result = Summary(tmp_path / "t" / "vdg", register_stubs.yaml_root)
    assert tasks.cmd_register(parse("register", "--tasks-dir", str(tmp_path / "t"), "--force")) == 0
    assert register_stubs.register.calls == [((register_stubs.yaml_root, tmp_path / "t"), {"force": True})]
    assert len(capsys.readouterr().err.splitlines()) == 1  # nothing missing, nothing foreign


def test_undo_with_nothing_registered_says_so(register_stubs, capsys):
    register_stubs.unregister.result = Summary(register_stubs.lmms_dir / "vdg", source=None)
    assert tasks.cmd_register(parse("register", "--undo", "--force")) == 0
    assert register_stubs.unregister.calls == [((register_stubs.lmms_dir,), {"force": True})]
    assert capsys.readouterr().err == f"nothing registered in {register_stubs.lmms_dir}\n"
    assert register_stubs.register.calls == []


def test_undo_says_what_it_removed_and_what_it_left(register_stubs, capsys):
    folder = register_stubs.lmms_dir / "vdg"
    register_stubs.unregister.result = Summary(folder, register_stubs.yaml_root, removed=4, foreign=["a", "b"])
    assert tasks.cmd_register(parse("register", "--undo")) == 0
    assert capsys.readouterr().err == f"removed 4 entries from {folder}\nleft what vdg did not place there: a, b\n"


def test_check_lists_what_is_stale_and_exits_1(register_stubs, capsys):
    register_stubs.problems.result = ["vdg/a.yaml differs", "vdg/b.yaml is missing"]
    assert tasks.cmd_register(parse("register", "--check")) == 1
    assert register_stubs.problems.calls == [((register_stubs.yaml_root, register_stubs.lmms_dir), {})]
    captured = capsys.readouterr()
    assert captured.err == "vdg/a.yaml differs\nvdg/b.yaml is missing\n" and captured.out == ""


def test_check_of_an_up_to_date_registration_exits_0(register_stubs, capsys):
    assert tasks.cmd_register(parse("register", "--check")) == 0
    assert (
        capsys.readouterr().out == f"{register_stubs.lmms_dir / 'vdg'} is up to date with {register_stubs.yaml_root}\n"
    )


def test_a_register_error_is_one_line_and_exit_2(register_stubs, capsys):
    register_stubs.register.error = RegisterError("/x/tasks/vdg is not vdg's:\nmove it away")
    assert tasks.cmd_register(parse("register")) == 2
    assert capsys.readouterr().err == "vdg register: /x/tasks/vdg is not vdg's: move it away\n"


@pytest.fixture
def yaml_stubs(monkeypatch, tmp_path):
    import vdg_tasks.lmms.yamlgen as yamlgen

    root = tmp_path / "yaml_tasks"
    (root / "a").mkdir(parents=True)
    (root / "a" / "same.yaml").write_text("same")
    (root / "a" / "changed.yaml").write_text("old")
    monkeypatch.setattr(yamlgen, "YAML_ROOT", root)
    return SimpleNamespace(root=root, yamlgen=yamlgen, monkeypatch=monkeypatch)


def test_write_yamls_check_names_the_files_out_of_date(yaml_stubs, capsys):
    rendered = {Path("a/changed.yaml"): "new", Path("a/same.yaml"): "same", Path("b/new.yaml"): "x"}
    yaml_stubs.monkeypatch.setattr(yaml_stubs.yamlgen, "render_all", lambda: rendered)
    assert tasks.cmd_write_yamls(parse("write-yamls", "--check")) == 1
    assert capsys.readouterr().err == "out of date: a/changed.yaml, b/new.yaml\n"  # changed, and not written


def test_write_yamls_check_of_committed_files_exits_0(yaml_stubs, capsys):
    yaml_stubs.monkeypatch.setattr(yaml_stubs.yamlgen, "render_all", lambda: {Path("a/same.yaml"): "same"})
    assert tasks.cmd_write_yamls(parse("write-yamls", "--check")) == 0
    assert capsys.readouterr().out == "yaml_tasks/ is up to date\n"


def test_write_yamls_prints_every_file_written(yaml_stubs, capsys):
    written = [yaml_stubs.root / "a" / "x.yaml", yaml_stubs.root / "b" / "y.yaml"]
    yaml_stubs.monkeypatch.setattr(yaml_stubs.yamlgen, "write_all", lambda: written)
    assert tasks.cmd_write_yamls(parse("write-yamls")) == 0
    assert capsys.readouterr().out == f"{written[0]}\n{written[1]}\n"


# --- materialize ----------------------------------------------------------------------------------------


@pytest.fixture
def mat(monkeypatch):
    """Stand-ins for the materialize steps: three jobs and one unavailable question, each call recorded."""
    import vdg_tasks.jobs.materialize as materialize

    state = SimpleNamespace(failed=[], calls={})
    stubs = {
        "plan": Recorder((["j0", "j1", "j2"], ["u0"])),
        "run_jobs": Recorder(),
        "write_manifest": Recorder(),
    }
    stubs["run_jobs"].result = ["outcome"]

    def shard_jobs(jobs, index, count):
        state.calls["shard_jobs"] = (jobs, index, count)
        return jobs[index::count]

    def shard_outcomes(unavailable, index, count):
        state.calls["shard_outcomes"] = (unavailable, index, count)
        return unavailable[index::count]

    def summarize(outcomes, unavailable):
        state.calls["summarize"] = (outcomes, unavailable)
        lines = [f"FAILED {job}" for job in state.failed]
        return SimpleNamespace(line=lambda: "3 built", failure_lines=lambda: lines, failed=state.failed)

    for name, fn in {
        **stubs,
        "shard_jobs": shard_jobs,
        "shard_outcomes": shard_outcomes,
        "summarize": summarize,
    }.items():
        monkeypatch.setattr(materialize, name, fn)
    state.stubs = SimpleNamespace(**stubs)
    return state


def test_materialize_plans_the_comma_separated_tasks_and_builds_them(mat, capsys):
    assert tasks.cmd_materialize(parse("materialize", "--tasks", "a_vdg,b_vdg_black", "--workers", "2", "--quiet")) == 0
    assert mat.stubs.plan.calls == [((["a_vdg", "b_vdg_black"],), {})]
    assert mat.stubs.run_jobs.calls == [((["j0", "j1", "j2"],), {"workers": 2, "progress": False})]
    assert mat.calls == {"summarize": (["outcome"], ["u0"])}  # no shard
    assert capsys.readouterr().out == "3 built\n"


def test_materialize_builds_only_its_shard(mat, capsys):
    assert tasks.cmd_materialize(parse("materialize", "--tasks", "t", "--shard", "1/2", "--workers", "1")) == 0
    assert mat.calls["shard_jobs"] == (["j0", "j1", "j2"], 1, 2)
    assert mat.calls["shard_outcomes"] == (["u0"], 1, 2)
    assert mat.stubs.run_jobs.calls == [((["j1"],), {"workers": 1, "progress": True})]  # the stand-in shard_jobs
    assert capsys.readouterr().out == "3 built (shard 1/2)\n"


@pytest.mark.parametrize(
    ("shard", "message"),
    [
        ("x", "--shard 'x': expected I/N with integers, e.g. 0/4 (the first of 4 shards)"),
        ("2/2", "shard 2/2: the shard index I must be in 0..1 (0-based)"),
    ],
)
def test_a_bad_shard_is_refused_before_planning(mat, capsys, shard, message):
    assert tasks.cmd_materialize(parse("materialize", "--tasks", "t", "--shard", shard)) == 2
    assert capsys.readouterr().err == f"vdg materialize: {message}\n" and mat.stubs.plan.calls == []


def test_a_task_error_keeps_its_lines(mat, capsys):
    from vdg_tasks.jobs.materialize import TaskError

    mat.stubs.plan.error = TaskError("videomme: no local copy. Expected layout:\n  videomme/\n    videos/")
    assert tasks.cmd_materialize(parse("materialize", "--tasks", "videomme_vdg")) == 2
    assert (
        capsys.readouterr().err
        == "vdg materialize: videomme: no local copy. Expected layout:\n  videomme/\n    videos/\n"
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ValueError("bad\n  request"), "vdg materialize: bad request\n"),
        (CacheUnwritable("/cache", "/cache/ab", PermissionError(13, "Permission denied")), "is not writable"),
    ],
)
def test_other_refusals_are_one_line_and_exit_2(mat, capsys, error, expected):
    mat.stubs.run_jobs.error = error
    assert tasks.cmd_materialize(parse("materialize", "--tasks", "t")) == 2
    err = capsys.readouterr().err
    assert err.startswith("vdg materialize: ") and expected in err and err.count("\n") == 1


def test_an_interrupt_exits_130_saying_finished_videos_stay(mat, capsys):
    mat.stubs.run_jobs.error = KeyboardInterrupt()
    assert tasks.cmd_materialize(parse("materialize", "--tasks", "t")) == 130
    assert capsys.readouterr().err == "vdg materialize: interrupted; finished videos stay cached, rerun to continue\n"


def test_failures_are_listed_the_manifest_written_and_exit_1(mat, tmp_path, capsys):
    mat.failed = ["j1", "j2"]
    mat.stubs.write_manifest.result = tmp_path / "m.json"
    argv = ["materialize", "--tasks", "a,b", "--manifest", str(tmp_path / "m.json")]
    assert tasks.cmd_materialize(parse(*argv)) == 1
    assert mat.stubs.write_manifest.calls == [((str(tmp_path / "m.json"), ["outcome"], ["u0"], None, ["a", "b"]), {})]
    assert capsys.readouterr().err.splitlines() == [
        "FAILED j1",
        "FAILED j2",
        f"manifest written to {tmp_path / 'm.json'}",
        "vdg materialize: 2 failed (listed above); fix them and rerun (finished videos stay cached)",
    ]


def test_a_manifest_that_cannot_be_written_exits_2(mat, capsys):
    mat.stubs.write_manifest.error = PermissionError("read-only")
    assert tasks.cmd_materialize(parse("materialize", "--tasks", "t", "--manifest", "/ro/m.json")) == 2
    assert capsys.readouterr().err == "vdg materialize: the manifest /ro/m.json cannot be written: read-only\n"


# --- export, export-tasks ---------------------------------------------------------------------------------


@pytest.fixture
def export_stubs(monkeypatch, tmp_path):
    import vdg_tasks.jobs.export as export

    result = SimpleNamespace(
        out=tmp_path / "x", name="x", revision="0123abcd", n_rows=10, n_errors=2, tasks_dir=tmp_path / "x" / "tasks"
    )
    stubs = SimpleNamespace(export=Recorder(result), push_to_hub=Recorder("c0ffee"), result=result)
    monkeypatch.setattr(export, "export", stubs.export)
    monkeypatch.setattr(export, "push_to_hub", stubs.push_to_hub)
    return stubs


def test_export_writes_the_tasks_and_says_how_to_evaluate(export_stubs, tmp_path, capsys):
    argv = ["export", "--tasks", "a_vdg_black,a_vdg_orig", "--out", str(tmp_path / "x"), "--name", "n"]
    assert tasks.cmd_export(parse(*argv, "--workers", "3", "--quiet")) == 0
    assert export_stubs.export.calls == [
        ((["a_vdg_black", "a_vdg_orig"], tmp_path / "x"), {"name": "n", "workers": 3, "progress": False})
    ]
    assert export_stubs.push_to_hub.calls == []
    captured = capsys.readouterr()
    assert captured.out == f"{tmp_path / 'x'}\n"
    assert captured.err == (
        "export x revision 0123abcd: 10 rows, 2 with errors; "
        f"evaluate with lmms-eval --include_path {tmp_path / 'x' / 'tasks'}\n"
    )


def test_export_then_pushes_to_the_hub(export_stubs, tmp_path, capsys):
    argv = ["export", "--tasks", "t", "--out", str(tmp_path / "x"), "--push-to-hub", "me/x", "--private"]
    assert tasks.cmd_export(parse(*argv)) == 0
    assert export_stubs.push_to_hub.calls == [((tmp_path / "x", "me/x"), {"private": True})]
    assert capsys.readouterr().err.splitlines()[-1] == "pushed to https://huggingface.co/datasets/me/x (commit c0ffee)"


def test_a_failed_push_exits_2_and_names_the_export_left_on_disk(export_stubs, tmp_path, capsys):
    export_stubs.push_to_hub.error = ConnectionError("no network")
    assert tasks.cmd_export(parse("export", "--tasks", "t", "--out", str(tmp_path / "x"), "--push-to-hub", "me/x")) == 2
    captured = capsys.readouterr()
    assert captured.out == f"{tmp_path / 'x'}\n"  # written before the push
    assert captured.err.splitlines()[-1] == f"vdg export: pushing {tmp_path / 'x'} to me/x failed: no network"


@pytest.mark.parametrize(
    "error",
    [
        ValueError("the folder x holds the vdg export 'y', not 'x'"),
        CacheUnwritable("/cache", "/cache/ab", PermissionError(13, "Permission denied")),
    ],
)
def test_an_export_refusal_is_one_line_and_exit_2(export_stubs, tmp_path, capsys, error):
    export_stubs.export.error = error
    assert tasks.cmd_export(parse("export", "--tasks", "t", "--out", str(tmp_path / "x"))) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"vdg export: {' '.join(str(error).split())}\n"


def test_export_tasks_passes_the_subset_name_and_revision(monkeypatch, tmp_path, capsys):
    import vdg_tasks.jobs.export as export

    write = Recorder([tmp_path / "t" / "a", tmp_path / "t" / "b", tmp_path / "t" / "c"])
    monkeypatch.setattr(export, "write_export_tasks", write)
    argv = ["export-tasks", "me/x", "--out", str(tmp_path / "t"), "--name", "n", "--revision", "v1", "--tasks", "a,b"]
    assert tasks.cmd_export_tasks(parse(*argv)) == 0
    assert write.calls == [(("me/x", tmp_path / "t"), {"name": "n", "revision": "v1", "tasks": ["a", "b"]})]
    captured = capsys.readouterr()
    assert captured.out == f"{tmp_path / 't'}\n"
    assert captured.err == f"3 files; evaluate with lmms-eval --include_path {tmp_path / 't'}\n"


def test_export_tasks_without_a_subset_writes_every_task(monkeypatch, tmp_path):
    import vdg_tasks.jobs.export as export

    write = Recorder([])
    monkeypatch.setattr(export, "write_export_tasks", write)
    assert tasks.cmd_export_tasks(parse("export-tasks", "folder", "--out", str(tmp_path))) == 0
    assert write.calls[0][1] == {"name": None, "revision": None, "tasks": None}


@pytest.mark.parametrize("error", [ValueError("folder is not a vdg export"), OSError("cannot write")])
def test_an_export_tasks_refusal_is_one_line_and_exit_2(monkeypatch, tmp_path, capsys, error):
    import vdg_tasks.jobs.export as export

    monkeypatch.setattr(export, "write_export_tasks", Recorder(error=error))
    assert tasks.cmd_export_tasks(parse("export-tasks", "folder", "--out", str(tmp_path))) == 2
    assert capsys.readouterr().err == f"vdg export-tasks: {error}\n"


# --- derive -----------------------------------------------------------------------------------------------


def test_derive_passes_the_conditions_and_every_field_flag(monkeypatch, tmp_path, capsys):
    import vdg_tasks.lmms.derive as derive

    out = tmp_path / "out"
    written = [
        out / "t1" / "t1_vdg_orig.yaml",
        out / "t1" / "_default_template_yaml",
        out / "t1" / "t1_vdg_black.yaml",
        out / "t2" / "t2_vdg_orig.yaml",
        out / "t2" / "vdg_derive.json",
    ]
    recorder = Recorder(written)
    monkeypatch.setattr(derive, "derive", recorder)
    argv = ["derive", "base", "--out", str(out), "--conditions", "orig,black", "--include_path", "inc"]
    argv += ["--question-id", "qid", "--options", "option{i}", "--answer", "gt", "--video-id", "clip"]
    argv += ["--task-type", "cat", "--question", "q", "--frame-folder-fps", "2"]
    assert tasks.cmd_derive(parse(*argv)) == 0
    assert recorder.calls == [
        (
            ("base", out),
            {
                "conditions": ["orig", "black"],
                "include_path": "inc",
                "frame_folder_fps": 2.0,
                "question_id": "qid",
                "options": "option{i}",
                "answer": "gt",
                "video_id": "clip",
                "task_type": "cat",
                "question": "q",
            },
        )
    ]
    captured = capsys.readouterr()
    assert captured.out == f"{out / 't1'}\n{out / 't2'}\n"  # each folder once, in order
    # Three .yaml files are tasks; the template and the spec are not.
    assert captured.err == f"3 tasks derived from base; evaluate with lmms-eval --include_path {out} --tasks base_vdg\n"


def test_derive_without_flags_leaves_conditions_and_fields_to_detection(monkeypatch, tmp_path):
    import vdg_tasks.lmms.derive as derive

    recorder = Recorder([])
    monkeypatch.setattr(derive, "derive", recorder)
    assert tasks.cmd_derive(parse("derive", "base", "--out", str(tmp_path))) == 0
    kwargs = recorder.calls[0][1]
    assert kwargs["conditions"] is None and kwargs["include_path"] is None and kwargs["frame_folder_fps"] == 1.0
    assert all(kwargs[f] is None for f in ("question_id", "options", "answer", "video_id", "task_type", "question"))


def test_a_derive_refusal_is_one_line_and_exit_2(monkeypatch, tmp_path, capsys):
    import vdg_tasks.lmms.derive as derive

    monkeypatch.setattr(derive, "derive", Recorder(error=derive.DeriveError("cannot derive x: a group\nof 3")))
    assert tasks.cmd_derive(parse("derive", "x", "--out", str(tmp_path))) == 2
    assert capsys.readouterr().err == "vdg derive: cannot derive x: a group of 3\n"


# --- subset -----------------------------------------------------------------------------------------------

#: Three questions of task type "a", one of "b".
DOCS = [
    {"question_id": "a1", "task_type": "a"},
    {"question_id": "a2", "task_type": "a"},
    {"question_id": "a3", "task_type": "a"},
    {"question_id": "b1", "task_type": "b"},
]


def _check_subset_output(captured, path: Path) -> None:
    written = json.loads(path.read_text())
    assert written["benchmark"] == "bench" and written["per_task_type"] == 2
    # 2 of the 3 "a" questions, and b1, the only "b" one.
    assert len(written["ids"]) == 3 and "b1" in written["ids"] and set(written["ids"]) <= {"a1", "a2", "a3", "b1"}
    assert captured.out == f"{path}\n"
    assert captured.err.splitlines() == [
        "     2  a",
        "     1  b",
        "vdg subset: warning: task type 'b' has only 1 questions (fewer than 2); all of them are in the set",
        f"3 questions of bench, digest {written['digest']}; restrict runs to them with VDG_QUESTION_SET={path}",
    ]


def test_subset_draws_from_a_docs_file_and_warns_of_short_task_types(tmp_path, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    out = tmp_path / "sets" / "set.json"
    argv = ["subset", "bench", "--per-task-type", "2", "--seed", "3", "--out", str(out), "--docs", str(docs)]
    assert tasks.cmd_subset(parse(*argv)) == 0
    _check_subset_output(capsys.readouterr(), out)
    assert json.loads(out.read_text())["seed"] == 3


def test_subset_without_docs_reads_the_benchmark_s_questions(monkeypatch, tmp_path, capsys):
    import vdg_tasks.jobs.materialize as materialize

    load_docs = Recorder(DOCS)
    monkeypatch.setattr(materialize, "load_docs", load_docs)
    out = tmp_path / "set.json"
    assert tasks.cmd_subset(parse("subset", "bench", "--per-task-type", "2", "--out", str(out))) == 0
    assert load_docs.calls == [(("bench",), {})]
    _check_subset_output(capsys.readouterr(), out)


def test_subset_refusals_are_one_line_and_exit_2(tmp_path, capsys):
    missing = tmp_path / "none.jsonl"
    assert tasks.cmd_subset(parse("subset", "b", "--out", str(tmp_path / "o.json"), "--docs", str(missing))) == 2
    assert capsys.readouterr().err == f"vdg subset: --docs {missing}: no such file\n"
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    argv = ["subset", "b", "--per-task-type", "0", "--out", str(tmp_path / "o.json"), "--docs", str(docs)]
    assert tasks.cmd_subset(parse(*argv)) == 2
    assert capsys.readouterr().err == "vdg subset: --per-task-type must be at least 1, got 0\n"
    (tmp_path / "file").write_text("")
    argv = ["subset", "b", "--out", str(tmp_path / "file" / "o.json"), "--docs", str(docs)]
    assert tasks.cmd_subset(parse(*argv)) == 2  # its folder is a file: an OSError
    assert capsys.readouterr().err.startswith("vdg subset: ")
    assert not (tmp_path / "o.json").exists()


# --- coverage --------------------------------------------------------------------------------------------


def test_coverage_prints_the_table_or_writes_it_and_counts_on_stderr(monkeypatch, tmp_path, capsys):
    import vdg_tasks.lmms.coverage as coverage_module

    rows = [
        coverage_module.CoverageRow("a", "a", True, 1, ("orig",), "letter (multiple choice)"),
        coverage_module.CoverageRow("b", "b", False, reason="no options field"),
    ]
    monkeypatch.setattr(coverage_module, "coverage", Recorder(rows))
    assert tasks.cmd_coverage(parse("coverage")) == 0
    out, err = capsys.readouterr()
    assert out == coverage_module.render(rows) and "1 of 2 video task folders derive" in err
    target = tmp_path / "coverage.md"
    assert tasks.cmd_coverage(parse("coverage", "--out", str(target))) == 0
    out, err = capsys.readouterr()
    assert out == "" and target.read_text() == coverage_module.render(rows) and str(target) in err


def test_coverage_names_an_unwritable_table_and_exits_2(monkeypatch, tmp_path, capsys):
    import vdg_tasks.lmms.coverage as coverage_module

    monkeypatch.setattr(coverage_module, "coverage", Recorder([]))
    assert tasks.cmd_coverage(parse("coverage", "--out", str(tmp_path / "no" / "such" / "t.md"))) == 2
    assert "t.md" in capsys.readouterr().err
