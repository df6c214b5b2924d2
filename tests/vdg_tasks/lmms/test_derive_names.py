"""`vdg derive` and `vdg write-yamls` write nothing outside their folder, whatever a task's YAML names it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import vdg_tasks.lmms.derive as derive_module
from tests.helpers.derive_base import BASE_TASK, BASE_YAML, write_base_task
from vdg_tasks.cli import main as vdg_main
from vdg_tasks.lmms.derive import DeriveError, derive, plan, write


def snapshot(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def hostile_names(tmp_path: Path) -> list[str]:
    return ["../../x", "../../../x", "a/../../b", str(tmp_path / "abs" / "x"), "/abs/x", "sub/x", ".hidden"]


def _base(tmp_path: Path, name: str) -> Path:
    base = write_base_task(tmp_path / "base")
    (base / f"{BASE_TASK}.yaml").write_text(BASE_YAML.replace(f"task: {BASE_TASK}", f'task: "{name}"', 1))
    return base


@pytest.fixture
def small_index(monkeypatch):
    """lmms-eval's own task index over ``--include_path`` alone (not its hundreds of tasks: seconds)."""
    from lmms_eval.tasks import TaskManager

    def manager(include_path):
        return TaskManager(include_path=str(include_path), include_defaults=False)

    monkeypatch.setattr(derive_module, "task_manager", manager)


@pytest.mark.parametrize("index", range(7))
def test_derive_refuses_a_task_name_that_leaves_out_with_exit_2_and_writes_nothing_outside(
    tmp_path, small_index, capsys, index
):
    name = hostile_names(tmp_path)[index]
    work = tmp_path / "deep" / "er" / "work"  # room to climb: ../../../x stays inside tmp_path
    base = _base(work, name)
    out = work / "out"
    before = snapshot(tmp_path)
    code = vdg_main(["derive", name, "--include_path", str(base), "--out", str(out), "--conditions", "orig,black"])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"cannot derive {name!r}" in err and "cannot be a folder name" in err and f"{BASE_TASK}.yaml" in err
    assert snapshot(tmp_path) == before  # not even --out itself
    assert not Path("/abs/x").exists()


def test_derive_api_refuses_before_writing_and_write_refuses_a_spec_too(tmp_path, small_index):
    base = _base(tmp_path, "a/../../b")
    out = tmp_path / "out"
    with pytest.raises(DeriveError, match=r"cannot derive 'a/\.\./\.\./b': its name .* climbs out"):
        derive("a/../../b", out, ["orig"], include_path=base)
    assert not out.exists()


def test_write_refuses_a_spec_whose_name_leaves_out(tmp_path, small_index):
    base = write_base_task(tmp_path / "base")
    (spec,) = plan(BASE_TASK, conditions=["orig"], include_path=base, video_id="clip", task_type="category")
    out = tmp_path / "a" / "b" / "out"
    before = snapshot(tmp_path)
    for name in hostile_names(tmp_path):
        with pytest.raises(
            DeriveError,
            match=r"cannot be a folder name under --out: it (climbs out|is absolute|holds a"
            r" path separator|starts with a dot)",
        ):
            write(dataclasses.replace(spec, task=name), out)
    assert snapshot(tmp_path) == before


def test_a_plain_task_name_still_derives(tmp_path, small_index):
    base = write_base_task(tmp_path / "base")
    out = tmp_path / "out"
    written = derive(BASE_TASK, out, ["orig"], include_path=base, video_id="clip", task_type="category")
    assert written and all(p.parent == out / BASE_TASK for p in written)


def test_write_yamls_refuses_a_generated_name_that_leaves_out(tmp_path, monkeypatch, capsys):
    import vdg_tasks.lmms.yamlgen as yamlgen

    for rel in ("../../x.yaml", "a/../../b.yaml", str(tmp_path / "abs.yaml")):
        monkeypatch.setattr(yamlgen, "render_all", lambda *a, rel=rel: {Path("ok/fine.yaml"): "x", Path(rel): "y"})
        out = tmp_path / "deep" / "er" / "out"
        before = snapshot(tmp_path)
        assert vdg_main(["write-yamls", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("vdg write-yamls: generated file") and "refused" in err and "Traceback" not in err
        assert snapshot(tmp_path) == before  # nothing written, not even the good file
