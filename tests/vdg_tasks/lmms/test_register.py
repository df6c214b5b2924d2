"""`vdg register`: vdg's tasks in lmms-eval's own task folder, found with no --include_path.

Unit tests run against a fake lmms-eval task folder; lmms-eval's TaskManager then indexes it as it
indexes its own; the end-to-end test installs vdg non-editable into a fresh venv and runs lmms-eval there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vdg_tasks.cli import main as vdg_main
from vdg_tasks.lmms import register as reg
from vdg_tasks.lmms.yamlgen import YAML_ROOT

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A copy of yaml_tasks/ to add files to and remove files from."""
    root = tmp_path / "yaml_tasks"
    shutil.copytree(YAML_ROOT, root, ignore=shutil.ignore_patterns("data", "__pycache__"))
    return root


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    """A stand-in for <lmms_eval>/tasks, with one task of its own."""
    folder = tmp_path / "lmms_eval" / "tasks"
    (folder / "mmmu").mkdir(parents=True)
    (folder / "mmmu" / "mmmu_val.yaml").write_text("task: mmmu_val\ndataset_path: lmms-lab/MMMU\n")
    (folder / "__init__.py").write_text("")
    return folder


def snapshot(folder: Path) -> dict[str, str]:
    """Every path under ``folder``: its link target, ``dir`` or the file's text."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        out[rel] = f"-> {os.readlink(path)}" if path.is_symlink() else "dir" if path.is_dir() else path.read_text()
    return out


def leaves(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.yaml")}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_register_copies_every_task_file_into_real_folders(source, tasks_dir):
    before = snapshot(tasks_dir)
    done = reg.register(source, tasks_dir)
    folder = tasks_dir / "vdg"
    assert done.folder == folder and done.source == source.resolve()
    assert done.tasks == len(leaves(source)) > 0
    assert leaves(folder) == leaves(source)
    entries = json.loads((folder / reg.MANIFEST).read_text())["entries"]
    for bench in (p for p in source.iterdir() if p.is_dir()):
        mirror = folder / bench.name
        assert mirror.is_dir() and not mirror.is_symlink()  # lmms-eval's os.walk does not enter linked folders
        names = [p.name for p in bench.iterdir() if p.is_file() and p.name != "__init__.py"]
        assert {"README.md", *(p.name for p in bench.glob("*.yaml"))} <= set(names)
        assert any(n.startswith("_") and n.endswith("_yaml") for n in names)  # templates
        for name in names:
            copy = mirror / name
            assert copy.is_file() and not copy.is_symlink(), name
            assert copy.read_bytes() == (bench / name).read_bytes()
            assert entries[f"{bench.name}/{name}"] == {"kind": "copy", "sha256": sha256(copy)}
    # the relative data_files root of the local benchmarks, linked before `vdg synth` writes it
    assert os.readlink(folder / "vdgsynth" / "data") == str(source.resolve() / "vdgsynth" / "data")
    assert entries["vdgsynth/data"] == {"kind": "link", "target": str(source.resolve() / "vdgsynth" / "data")}
    assert "vdgsynth/data" in done.missing_data
    assert not (folder / "__init__.py").exists() and not (folder / "videomme" / "data").exists()
    manifest = json.loads((folder / reg.MANIFEST).read_text())
    assert manifest["made_by"] == "vdg register" and manifest["digest"] == reg.digest(reg.plan(source))
    assert not [p for p in folder.rglob("*") if p.name.endswith(".vdg-tmp")]
    assert {k: v for k, v in snapshot(tasks_dir).items() if not k.startswith("vdg")} == before


def test_copies_do_not_follow_the_source_until_registered_again(source, tasks_dir):
    reg.register(source, tasks_dir)
    leaf = source / "videomme" / "videomme_vdg_black.yaml"
    copy = tasks_dir / "vdg" / "videomme" / "videomme_vdg_black.yaml"
    original = copy.read_text()
    leaf.write_text(original + "# changed upstream\n")
    assert copy.read_text() == original
    assert reg.problems(source, tasks_dir) == [f"{copy}: out of date (differs from {leaf}); run `vdg register`"]
    done = reg.register(source, tasks_dir)
    assert (done.added, done.updated, done.removed) == (0, 1, 0)
    assert copy.read_text() == leaf.read_text() and reg.problems(source, tasks_dir) == []


def test_register_twice_gives_the_same_folder(source, tasks_dir):
    first = reg.register(source, tasks_dir)
    once = snapshot(tasks_dir)
    stamps = {p: p.stat().st_mtime_ns for p in (tasks_dir / "vdg").rglob("*.yaml")}
    second = reg.register(source, tasks_dir)
    assert snapshot(tasks_dir) == once
    assert {p: p.stat().st_mtime_ns for p in (tasks_dir / "vdg").rglob("*.yaml")} == stamps  # nothing rewritten
    assert (second.added, second.updated, second.removed, second.kept) == (0, 0, 0, first.added)
    assert reg.problems(source, tasks_dir) == []


def test_rerun_adds_new_files_and_drops_removed_ones(source, tasks_dir):
    reg.register(source, tasks_dir)
    new = source / "newbench"
    new.mkdir()
    (new / "_default_template_yaml").write_text("dataset_path: json\ndataset_kwargs:\n  data_files: ./local/q.jsonl\n")
    (new / "newbench_vdg_orig.yaml").write_text("include: _default_template_yaml\ntask: newbench_vdg_orig\n")
    (source / "vdgsynth" / "vdgsynth_vdg_crf38.yaml").unlink()
    shutil.rmtree(source / "videomme")
    folder = tasks_dir / "vdg"
    stale = reg.problems(source, tasks_dir)
    gone = folder / "vdgsynth" / "vdgsynth_vdg_crf38.yaml"
    assert f"{gone}: extra, no longer in {source}; run `vdg register`" in stale
    assert any(line.startswith(f"{folder / 'newbench' / 'newbench_vdg_orig.yaml'}: missing") for line in stale)
    assert any(line.startswith(f"{folder / 'newbench' / 'local'}: data link missing") for line in stale)

    done = reg.register(source, tasks_dir)
    assert leaves(folder) == leaves(source)
    assert os.readlink(folder / "newbench" / "local") == str(new.resolve() / "local")
    assert not (folder / "videomme").exists() and not (folder / "vdgsynth" / "vdgsynth_vdg_crf38.yaml").exists()
    assert done.added == 4 and done.removed > 14 and done.updated == 0
    assert reg.problems(source, tasks_dir) == []


def test_check_reports_missing_copies_and_data_links_pointing_elsewhere(source, tasks_dir, tmp_path):
    reg.register(source, tasks_dir)
    folder = tasks_dir / "vdg"
    (folder / "vdgsynth" / "vdgsynth_vdg_open.yaml").unlink()
    link = folder / "vdgsynth" / "data"
    link.unlink()
    link.symlink_to(tmp_path / "gone" / "data")  # e.g. registered from another install, since removed
    stale = reg.problems(source, tasks_dir)
    assert len(stale) == 2
    assert stale[0].startswith(f"{link}: links to {tmp_path / 'gone' / 'data'} (dangling), not {source / 'vdgsynth'}")
    assert stale[1].startswith(f"{folder / 'vdgsynth' / 'vdgsynth_vdg_open.yaml'}: missing")
    done = reg.register(source, tasks_dir)
    assert (done.added, done.updated) == (1, 1) and reg.problems(source, tasks_dir) == []


def test_undo_removes_exactly_what_register_placed(source, tasks_dir):
    before = snapshot(tasks_dir)
    reg.register(source, tasks_dir)
    done = reg.unregister(tasks_dir)
    assert snapshot(tasks_dir) == before and done.removed > 0 and done.foreign == []
    assert reg.unregister(tasks_dir).source is None  # nothing left to undo

    reg.register(source, tasks_dir)
    mine = tasks_dir / "vdg" / "vdgsynth" / "notes.txt"
    mine.write_text("mine")
    done = reg.unregister(tasks_dir)
    assert done.foreign == ["vdgsynth", "vdgsynth/notes.txt"]
    assert mine.read_text() == "mine"
    assert snapshot(tasks_dir / "vdg") == {"vdgsynth": "dir", "vdgsynth/notes.txt": "mine"}


def test_a_folder_vdg_did_not_make_is_never_touched(source, tasks_dir):
    theirs = tasks_dir / "vdg" / "theirs.yaml"
    theirs.parent.mkdir()
    theirs.write_text("task: theirs\n")
    for call in (lambda: reg.register(source, tasks_dir), lambda: reg.unregister(tasks_dir)):
        with pytest.raises(reg.RegisterError, match=re.escape(str(tasks_dir / "vdg"))):
            call()
    assert theirs.read_text() == "task: theirs\n"


def test_an_edited_copy_is_refused_unless_forced(source, tasks_dir):
    reg.register(source, tasks_dir)
    folder = tasks_dir / "vdg"
    edited = folder / "vdgsynth" / "vdgsynth_vdg_orig.yaml"
    edited.write_text(edited.read_text() + "# mine\n")
    assert reg.problems(source, tasks_dir) == [
        f"{edited}: changed since `vdg register` (differs from {source / 'vdgsynth' / 'vdgsynth_vdg_orig.yaml'}); "
        "run `vdg register --force` to replace it"
    ]
    (source / "videomme" / "videomme_vdg_black.yaml").write_text("task: videomme_vdg_black\n")  # a pending update
    once = snapshot(tasks_dir)
    for call in (lambda: reg.register(source, tasks_dir), lambda: reg.unregister(tasks_dir)):
        with pytest.raises(reg.RegisterError, match=re.escape("changed since `vdg register` wrote them")) as err:
            call()
        assert str(edited) in str(err.value) and "--force" in str(err.value)
        assert snapshot(tasks_dir) == once  # refused before writing anything

    done = reg.register(source, tasks_dir, force=True)
    assert done.updated == 2 and reg.problems(source, tasks_dir) == []
    edited.write_text("task: mine\n")
    assert reg.unregister(tasks_dir, force=True).removed > 0 and not folder.exists()


def test_an_edited_copy_no_longer_generated_is_refused_unless_forced(source, tasks_dir):
    reg.register(source, tasks_dir)
    (source / "vdgsynth" / "vdgsynth_vdg_crf38.yaml").unlink()
    copy = tasks_dir / "vdg" / "vdgsynth" / "vdgsynth_vdg_crf38.yaml"
    copy.write_text("task: mine\n")
    assert reg.problems(source, tasks_dir) == [
        f"{copy}: extra, no longer in {source}; run `vdg register --force` to replace it"
    ]
    with pytest.raises(reg.RegisterError, match=re.escape(str(copy))):
        reg.register(source, tasks_dir)
    assert copy.read_text() == "task: mine\n"
    assert reg.register(source, tasks_dir, force=True).removed == 1 and not copy.exists()


def test_a_file_vdg_did_not_place_is_never_replaced(source, tasks_dir):
    reg.register(source, tasks_dir)
    new = source / "vdgsynth" / "vdgsynth_vdg_new.yaml"
    new.write_text("include: _default_template_yaml\ntask: vdgsynth_vdg_new\n")
    theirs = tasks_dir / "vdg" / "vdgsynth" / "vdgsynth_vdg_new.yaml"
    theirs.write_text("task: theirs\n")
    for force in (False, True):
        with pytest.raises(reg.RegisterError, match="in the way") as err:
            reg.register(source, tasks_dir, force=force)
        assert str(theirs) in str(err.value)
    assert theirs.read_text() == "task: theirs\n"
    done = reg.unregister(tasks_dir)
    assert theirs.read_text() == "task: theirs\n" and "vdgsynth/vdgsynth_vdg_new.yaml" in done.foreign


def test_a_registration_by_the_linking_vdg_register_becomes_copies(source, tasks_dir):
    """Manifest version 1 listed a link target per file (null for a folder)."""
    folder = tasks_dir / "vdg"
    entries = {}
    for rel, entry in reg.plan(source).items():
        if entry["kind"] == "dir":
            (folder / rel).mkdir(parents=True)
            entries[rel] = None
        else:
            target = entry.get("target", str(source.resolve() / rel))
            os.symlink(target, folder / rel)
            entries[rel] = target
    doc = {"made_by": "vdg register", "source": str(source.resolve()), "entries": entries}
    (folder / reg.MANIFEST).write_text(json.dumps(doc))
    assert reg.stale_registration_warning(source, tasks_dir)
    stale = reg.problems(source, tasks_dir)
    assert stale and all("a link made by an older `vdg register`" in line for line in stale)

    done = reg.register(source, tasks_dir)
    assert done.updated == len(stale) and done.added == 0
    assert reg.problems(source, tasks_dir) == [] and reg.stale_registration_warning(source, tasks_dir) is None
    assert not (folder / "vdgsynth" / "vdgsynth_vdg_orig.yaml").is_symlink()


def test_an_unwritable_task_folder_is_a_clear_error(source, tasks_dir, monkeypatch, capsys):
    monkeypatch.setattr(reg, "_writable", lambda path: False)
    with pytest.raises(reg.RegisterError, match=re.escape(f"{tasks_dir} is not writable")):
        reg.register(source, tasks_dir)
    assert vdg_main(["register", "--tasks-dir", str(tasks_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vdg register: ") and str(tasks_dir) in err
    assert not (tasks_dir / "vdg").exists()


def test_a_failing_write_names_the_folder_and_undoes_cleanly(source, tasks_dir, monkeypatch):
    written = []

    def fail_after_ten(src: Path, path: Path) -> str:
        if len(written) == 10:
            raise PermissionError(13, "Permission denied")
        written.append(path)
        return real(src, path)

    real = reg._write_copy
    monkeypatch.setattr(reg, "_write_copy", fail_after_ten)
    with pytest.raises(reg.RegisterError, match=re.escape(f"cannot write {tasks_dir / 'vdg'}")):
        reg.register(source, tasks_dir)
    monkeypatch.undo()
    assert len(written) == 10 and all(p.is_file() for p in written)
    reg.unregister(tasks_dir)  # the manifest written first covers a half-done run
    assert not (tasks_dir / "vdg").exists()


def test_a_half_done_update_still_undoes_cleanly(source, tasks_dir, monkeypatch):
    reg.register(source, tasks_dir)
    for leaf in (source / "videomme").glob("*.yaml"):
        leaf.write_text(leaf.read_text() + "# v2\n")
    calls = []

    def fail_after_three(src: Path, path: Path) -> str:
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        calls.append(path)
        return real(src, path)

    real = reg._write_copy
    monkeypatch.setattr(reg, "_write_copy", fail_after_three)
    with pytest.raises(reg.RegisterError, match="No space left"):
        reg.register(source, tasks_dir)
    monkeypatch.undo()
    assert reg.unregister(tasks_dir).foreign == [] and not (tasks_dir / "vdg").exists()  # old and new both vdg's


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes through permission bits")
def test_a_read_only_task_folder_is_refused(source, tasks_dir):
    tasks_dir.chmod(0o555)
    try:
        with pytest.raises(reg.RegisterError, match=re.escape(f"{tasks_dir} is not writable")):
            reg.register(source, tasks_dir)
    finally:
        tasks_dir.chmod(0o755)


def test_cli_register_check_force_and_undo(tasks_dir, capsys):
    assert vdg_main(["register", "--check", "--tasks-dir", str(tasks_dir)]) == 1
    assert "not registered" in capsys.readouterr().err
    assert vdg_main(["register", "--tasks-dir", str(tasks_dir)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(tasks_dir / "vdg")
    assert f"copied from {YAML_ROOT}" in err and "--undo" in err
    assert vdg_main(["register", "--check", "--tasks-dir", str(tasks_dir)]) == 0
    assert "up to date" in capsys.readouterr().out

    edited = tasks_dir / "vdg" / "vdgsynth" / "vdgsynth_vdg_orig.yaml"
    edited.write_text("task: mine\n")
    assert vdg_main(["register", "--check", "--tasks-dir", str(tasks_dir)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [line for line in err.splitlines() if line.startswith(str(edited))] and err
    assert vdg_main(["register", "--undo", "--tasks-dir", str(tasks_dir)]) == 2
    assert "--force" in capsys.readouterr().err and edited.exists()
    assert vdg_main(["register", "--force", "--tasks-dir", str(tasks_dir)]) == 0
    assert "1 updated" in capsys.readouterr().err
    assert vdg_main(["register", "--undo", "--tasks-dir", str(tasks_dir)]) == 0
    assert not (tasks_dir / "vdg").exists()


def test_the_stale_registration_warning(source, tasks_dir):
    assert reg.stale_registration_warning(source, tasks_dir) is None  # not registered
    reg.register(source, tasks_dir)
    assert reg.stale_registration_warning(source, tasks_dir) is None
    (source / "vdgsynth" / "vdgsynth_vdg_black.yaml").write_text("task: vdgsynth_vdg_black\n")
    warning = reg.stale_registration_warning(source, tasks_dir)
    assert warning == (
        f"vdg's tasks registered in {tasks_dir / 'vdg'} are out of date with {source.resolve()}: run `vdg register`"
    )
    reg.register(source, tasks_dir)
    assert reg.stale_registration_warning(source, tasks_dir) is None
    (source / "newbench").mkdir()
    (source / "newbench" / "newbench_vdg_orig.yaml").write_text("task: newbench_vdg_orig\n")  # a file added
    assert reg.stale_registration_warning(source, tasks_dir) == warning
    (tasks_dir / "vdg" / reg.MANIFEST).write_text("not json")
    assert reg.stale_registration_warning(source, tasks_dir) is None  # never raises


def test_the_stale_registration_warning_defaults_to_this_environment(monkeypatch, tasks_dir):
    assert reg.default_yaml_root() == YAML_ROOT
    monkeypatch.setattr(reg, "lmms_eval_tasks_dir", lambda: tasks_dir)
    assert reg.stale_registration_warning() is None and reg.registered() is None
    reg.register(YAML_ROOT, tasks_dir)
    assert reg.registered() == tasks_dir / "vdg" and reg.stale_registration_warning() is None


def test_the_test_session_refuses_a_registered_lmms_eval(monkeypatch, tasks_dir, source):
    from tests import conftest

    monkeypatch.setattr(reg, "lmms_eval_tasks_dir", lambda: tasks_dir)
    conftest.pytest_sessionstart(None)  # not registered: nothing to say
    reg.register(source, tasks_dir)
    with pytest.raises(pytest.exit.Exception) as exc:
        conftest.pytest_sessionstart(None)
    assert exc.value.msg == (
        f"vdg is registered in {tasks_dir / 'vdg'}: run `vdg register --undo` before the tests "
        "(registered tasks shadow the tests' task folders)"
    )
    assert exc.value.returncode == pytest.ExitCode.USAGE_ERROR


def test_the_default_task_folder_is_lmms_evals_own():
    import lmms_eval

    assert reg.lmms_eval_tasks_dir() == Path(lmms_eval.__file__).resolve().parent / "tasks"


# -- lmms-eval's own indexing ----------------------------------------------------------------------------------------


def _write_questions(source: Path) -> Path:
    path = source / "vdgsynth" / "data" / "questions.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps({"question_id": "s000-1", "question": "q?", "answer": "A"}) + "\n")
    return path


@pytest.mark.slow
def test_lmms_eval_indexes_and_loads_the_registered_tasks(source, tasks_dir):
    from lmms_eval.tasks import TaskManager
    from lmms_eval.utils import load_yaml_config

    reg.register(source, tasks_dir)
    questions = _write_questions(source)  # after registering, as `vdg synth` may be
    manager = TaskManager("ERROR", include_path=str(tasks_dir), include_defaults=False)
    folder = tasks_dir / "vdg"
    assert {"mmmu_val", "vdgsynth_vdg_black", "infinibench_ga_vdg_nameswap"} <= set(manager.all_subtasks)
    assert manager.task_index["vdgsynth_vdg_black"]["yaml_path"] == str(folder / "vdgsynth" / "vdgsynth_vdg_black.yaml")
    assert "vdgsynth_vdg_ladder" in manager.all_tags
    config = manager._get_config("videomme_vdg_black")  # full mode: include and !function resolved
    assert config["task"] == "videomme_vdg_black" and config["metadata"]["condition"] == "black"
    assert callable(config["doc_to_visual"]) and callable(config["process_results"])
    # simple mode for vdgsynth: importing its prompt builder wants `vdg synth`'s data in the package itself
    config = load_yaml_config(manager.task_index["vdgsynth_vdg_black"]["yaml_path"], mode="simple")
    assert config["task"] == "vdgsynth_vdg_black" and config["test_split"] == "test"  # from the included template
    data_file = config["dataset_kwargs"]["data_files"]["test"]
    assert data_file == str(folder / "vdgsynth" / "data" / "questions.jsonl")
    assert os.path.samefile(data_file, questions)


@pytest.mark.slow
def test_registered_tasks_and_the_include_path_together(source, tasks_dir):
    """lmms-eval indexes its own folder, then --include_path; a name in both keeps its own folder's entry."""
    from lmms_eval.tasks import TaskManager

    reg.register(source, tasks_dir)
    manager = TaskManager("ERROR", include_path=[str(tasks_dir), str(source)], include_defaults=False)
    alone = TaskManager("ERROR", include_path=str(source), include_defaults=False)
    assert set(alone.all_tasks) <= set(manager.all_tasks)
    assert manager.task_index["vdgsynth_vdg_orig"]["yaml_path"].startswith(str(tasks_dir / "vdg"))
    for tag in alone.all_tags:
        assert sorted(manager.task_index[tag]["task"]) == sorted(alone.task_index[tag]["task"]), tag
    assert manager._get_config("videomme_vdg_orig") == alone._get_config("videomme_vdg_orig")


@pytest.mark.slow
def test_a_dangling_data_link_and_orphan_copies_leave_lmms_eval_indexing(source, tasks_dir):
    """lmms-eval's os.walk lists a dangling link as a file, opens only ``*.yaml``, and enters no linked folder."""
    from lmms_eval.tasks import TaskManager
    from lmms_eval.utils import load_yaml_config

    reg.register(source, tasks_dir)
    _write_questions(source)
    alive = TaskManager("ERROR", include_path=str(tasks_dir), include_defaults=False)
    shutil.rmtree(source)  # what `pip uninstall vdg` before `vdg register --undo` does to the links' targets
    link = tasks_dir / "vdg" / "vdgsynth" / "data"
    assert link.is_symlink() and not link.exists()
    manager = TaskManager("ERROR", include_path=str(tasks_dir), include_defaults=False)
    assert manager.all_tasks == alive.all_tasks and {"mmmu_val", "vdgsynth_vdg_black"} <= set(manager.all_tasks)
    config = load_yaml_config(manager.task_index["vdgsynth_vdg_black"]["yaml_path"], mode="simple")
    assert config["dataset_kwargs"]["data_files"]["test"] == "data/questions.jsonl"  # left relative: no such file

    # what copies avoid: a dangling link named *.yaml stops the index of every task
    (tasks_dir / "mmmu" / "gone.yaml").symlink_to(source / "gone.yaml")
    with pytest.raises(FileNotFoundError):
        TaskManager("ERROR", include_path=str(tasks_dir), include_defaults=False)


# -- a fresh, non-editable install ------------------------------------------------------------------------------------

_NOT_COPIED = {".venv", ".git", "__pycache__", "build", "dist", "demo_out", "out", ".pytest_cache", ".ruff_cache"}


def _copy_ignore(folder: str, names: list[str]) -> set[str]:
    """What a wheel build of the repository does not need: environments, caches, generated data."""
    skip = {n for n in names if n in _NOT_COPIED or n.endswith(".egg-info")}
    if Path(folder).parent.name == "yaml_tasks" and "data" in names:
        skip.add("data")
    return skip


def run(cmd: list[str], env: dict[str, str], timeout: int = 900) -> subprocess.CompletedProcess:
    # Not from this checkout: `python -m` would put it first on sys.path, shadowing the installed vdg_tasks.
    cwd = Path(env["HF_HOME"]).parent
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """vdg installed (not editable) in a new venv from a copy of this repository, synth data written, registered."""
    from tests.helpers.runs import offline_env

    root = tmp_path_factory.mktemp("register")
    src = root / "src"
    shutil.copytree(REPO, src, ignore=_copy_ignore)  # a wheel build writes build/ and *.egg-info beside the sources
    venv = root / "venv"
    env = offline_env(root)
    run([sys.executable, "-m", "venv", str(venv)], env)
    bin_ = venv / "bin"
    # the tested versions, as `make venv` installs them (pyproject.toml declares ranges)
    constraints = src / ".ci" / "constraints.txt"
    run([str(bin_ / "python"), "-m", "pip", "install", "-q", "-c", str(constraints), str(src)], env, timeout=1800)
    run([str(bin_ / "vdg"), "synth", "--videos", "2"], env)
    tasks = Path(run([str(bin_ / "python"), "-c", "import lmms_eval; print(lmms_eval.__file__)"], env).stdout.strip())
    return {"root": root, "src": src, "bin": bin_, "env": env, "tasks_dir": tasks.parent / "tasks"}


def _samples(out: Path, task: str) -> list[dict]:
    files = sorted(out.rglob(f"*_samples_{task}.jsonl"))
    assert files, f"no samples for {task} under {out}"
    return [json.loads(line) for line in files[0].read_text().splitlines()]


def _lmms_eval(fresh, out: Path, tasks: str, *extra: str, console: bool = False) -> subprocess.CompletedProcess:
    head = [str(fresh["bin"] / "lmms-eval")] if console else [str(fresh["bin"] / "python"), "-m", "lmms_eval"]
    args = ["--model", "vdg_probe", "--tasks", tasks, *extra, "--limit", "3", "--log_samples"]
    return run([*head, *args, "--output_path", str(out), "--verbosity", "WARNING"], fresh["env"])


@pytest.mark.slow
def test_a_fresh_install_registers_and_lmms_eval_runs_without_include_path(fresh):
    proc = run([str(fresh["bin"] / "vdg"), "register"], fresh["env"])
    folder = fresh["tasks_dir"] / "vdg"
    assert proc.stdout.strip() == str(folder)
    installed = Path(run([str(fresh["bin"] / "vdg"), "tasks-path"], fresh["env"]).stdout.strip())
    assert "site-packages" in installed.parts and installed != YAML_ROOT  # the installed copy, not this checkout
    questions = "vdgsynth/data/questions.jsonl"
    assert os.path.samefile(folder / questions, installed / questions)
    run([str(fresh["bin"] / "vdg"), "register", "--check"], fresh["env"])

    out = fresh["root"] / "runs" / "module"
    _lmms_eval(fresh, out, "vdgsynth_vdg_black,vdgsynth_vdg_orig")
    for condition in ("black", "orig"):
        rows = _samples(out, f"vdgsynth_vdg_{condition}")
        assert len(rows) == 3 and all(r["vdg"]["condition"] == condition for r in rows)


@pytest.mark.slow
def test_the_console_script_with_the_include_path_as_well(fresh):
    run([str(fresh["bin"] / "vdg"), "register"], fresh["env"])
    listing = run([str(fresh["bin"] / "lmms-eval"), "tasks", "subtasks"], fresh["env"]).stdout
    assert "lmms_eval/tasks/vdg/vdgsynth/vdgsynth_vdg_single.yaml" in listing  # lmms-eval's own, shortened

    tasks_path = run([str(fresh["bin"] / "vdg"), "tasks-path"], fresh["env"]).stdout.strip()
    out = fresh["root"] / "runs" / "console"
    _lmms_eval(fresh, out, "vdgsynth_vdg_single", "--include_path", tasks_path, console=True)
    rows = _samples(out, "vdgsynth_vdg_single")
    assert len(rows) == 3 and all(r["vdg"]["condition"] == "single" for r in rows)


@pytest.mark.slow
def test_a_reinstall_keeps_the_registration_and_the_data(fresh):
    run([str(fresh["bin"] / "vdg"), "register"], fresh["env"])
    pip = [str(fresh["bin"] / "python"), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps"]
    run([*pip, str(fresh["src"])], fresh["env"], timeout=1800)
    # same paths: every link still resolves, and `vdg synth`'s data (not pip's files) stays
    run([str(fresh["bin"] / "vdg"), "register", "--check"], fresh["env"])
    assert (fresh["tasks_dir"] / "vdg" / "vdgsynth" / "data" / "questions.jsonl").is_file()


@pytest.mark.slow
def test_undo_takes_the_tasks_out_of_lmms_eval(fresh):
    run([str(fresh["bin"] / "vdg"), "register"], fresh["env"])
    run([str(fresh["bin"] / "vdg"), "register", "--undo"], fresh["env"])
    assert not (fresh["tasks_dir"] / "vdg").exists()
    listing = run([str(fresh["bin"] / "lmms-eval"), "tasks", "list"], fresh["env"]).stdout
    assert "mmmu_val" in listing and "vdgsynth_vdg_black" not in listing
    cmd = [str(fresh["bin"] / "vdg"), "register", "--check"]
    proc = subprocess.run(cmd, env=fresh["env"], cwd=fresh["root"], capture_output=True, text=True)
    assert proc.returncode == 1 and "not registered" in proc.stderr


@pytest.mark.slow
def test_uninstalling_vdg_before_undo_leaves_lmms_eval_working(fresh):
    """Last in this module: it uninstalls vdg from the shared venv."""
    run([str(fresh["bin"] / "vdg"), "register"], fresh["env"])
    folder = fresh["tasks_dir"] / "vdg"
    run([str(fresh["bin"] / "python"), "-m", "pip", "uninstall", "-y", "vdg"], fresh["env"])
    leftover = fresh["tasks_dir"].parent.parent / "yaml_tasks"  # `vdg synth`'s data, not pip's to remove
    shutil.rmtree(leftover, ignore_errors=True)
    link = folder / "vdgsynth" / "data"
    assert link.is_symlink() and not link.exists() and (folder / "vdgsynth" / "vdgsynth_vdg_black.yaml").is_file()

    proc = run([str(fresh["bin"] / "python"), "-m", "lmms_eval", "--tasks", "list"], fresh["env"])
    listing = proc.stdout + proc.stderr
    assert " - videomme\n" in listing and " - vdgsynth_vdg_black\n" in listing  # orphan copies still index
    probe = (
        "from lmms_eval.tasks import TaskManager\n"
        "m = TaskManager('ERROR')\n"
        "assert 'videomme' in m.all_tasks\n"
        "m._get_config('mmmu_val')\n"
        "try:\n"
        "    m._get_config('vdgsynth_vdg_black')\n"
        "except ImportError as exc:\n"
        "    print('vdg task:', exc)\n"
    )
    out = run([str(fresh["bin"] / "python"), "-c", probe], fresh["env"]).stdout
    assert "vdg task: Failed to import function" in out and "vdg_tasks.hooks" in out  # only a vdg task fails

    shutil.rmtree(folder)  # what the README says to do once vdg is gone
    listing = run([str(fresh["bin"] / "lmms-eval"), "tasks", "list"], fresh["env"]).stdout
    assert "videomme" in listing and "vdgsynth_vdg_black" not in listing
