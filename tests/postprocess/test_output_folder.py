"""--out never holds a mix of two runs: the report is written beside it and moved into place whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.report import ReportError, compute_tables, partial_dir, write_report
from tests.helpers.prediction_files import five_option_records, write_records

FAST = ReportSettings(n_resamples=50, stability_resamples=10)


def _tables(tmp_path, model="m"):
    path = write_records(tmp_path / f"{model}.json", five_option_records(model, n_questions=20))
    return run_all(load_frame(predictions=[(model, path)], benchmark="egoschema"), FAST)


def _snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_write_report_returns_the_markdown_and_the_folder(tmp_path):
    out = tmp_path / "deep" / "out"
    written = write_report(_tables(tmp_path), out, plots=False)
    assert written.path == out.absolute() and written.markdown == (out / "report.md").read_text() == written
    assert [p.name for p in tmp_path.joinpath("deep").iterdir()] == ["out"]  # no temporary folder left


def test_a_failed_write_leaves_the_previous_report_untouched(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_report(_tables(tmp_path, "first"), out, plots=False)
    before = _snapshot(out)

    def fail(*args, **kwargs):
        raise OSError("disk full")

    import postprocess.report

    monkeypatch.setattr(postprocess.report, "write_plots", fail)
    with pytest.raises(OSError, match="disk full") as info:
        write_report(_tables(tmp_path, "second"), out, plots=True)
    assert _snapshot(out) == before
    note = " ".join(info.value.__notes__)
    assert "the report files written so far are in" in note and f"{out} is untouched" in note


def test_a_new_report_replaces_the_previous_one_whole(tmp_path):
    out = tmp_path / "out"
    write_report(_tables(tmp_path, "first"), out, plots=False)
    (out / "stale_table.csv").write_text("x\n1\n")  # a table the next run does not write
    tables = _tables(tmp_path, "second")
    write_report(tables, out, plots=False)
    assert not (out / "stale_table.csv").exists()
    assert {p.name for p in out.iterdir()} == {f"{n}.csv" for n in tables} | {"report.md", "report.html", "report.json"}
    rows = json.loads((out / "report.json").read_text())["summary"]
    assert [r["model"] for r in rows] == ["second"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.json", "out", "second.json"]


def test_a_folder_with_other_files_is_refused_before_anything_is_computed(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    frame = load_frame(
        predictions=[("m", write_records(tmp_path / "m.json", five_option_records("m", n_questions=10)))],
        benchmark="egoschema",
    )
    with pytest.raises(ReportError, match=r"mine: holds files that are not part of a vdg report \(notes\.txt\)"):
        compute_tables(frame, FAST, out)
    with pytest.raises(ReportError, match="choose a new or empty folder"):
        write_report({}, out)
    assert [p.name for p in out.iterdir()] == ["notes.txt"] and not partial_dir(out).exists()
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(ReportError, match="exists and is not a folder"):
        write_report({}, afile)


def test_kept_csvs_are_moved_into_the_report_and_a_replaced_table_is_written_anew(tmp_path):
    path = write_records(tmp_path / "m.json", five_option_records("m", n_questions=20))
    out = tmp_path / "out"
    tables = compute_tables(load_frame(predictions=[("m", path)], benchmark="egoschema"), FAST, out)
    staged = {p.name: (p.stat().st_ino, p.read_bytes()) for p in partial_dir(out).iterdir()}
    assert set(staged) == {f"{name}.csv" for name in tables}
    tables["vdg"] = tables["vdg"].head(1)  # no longer the table compute_tables kept
    write_report(tables, out, plots=False, kept=True)
    for name in tables:
        csv = out / f"{name}.csv"
        if name == "vdg":
            assert csv.read_text() == tables["vdg"].to_csv(index=False) != staged["vdg.csv"][1].decode()
            assert csv.stat().st_ino != staged["vdg.csv"][0]
        else:  # the very file compute_tables wrote, moved
            assert (csv.stat().st_ino, csv.read_bytes()) == staged[f"{name}.csv"], name
    assert not partial_dir(out).exists()


def test_without_kept_every_csv_is_written_from_the_tables_given(tmp_path):
    path = write_records(tmp_path / "m.json", five_option_records("m", n_questions=20))
    out = tmp_path / "out"
    tables = compute_tables(load_frame(predictions=[("m", path)], benchmark="egoschema"), FAST, out)
    inodes = {p.name: p.stat().st_ino for p in partial_dir(out).iterdir()}
    write_report(tables, out, plots=False)
    assert all((out / name).stat().st_ino != inode for name, inode in inodes.items())
    assert all((out / f"{name}.csv").read_text() == table.to_csv(index=False) for name, table in tables.items())


def _tiny_tables() -> dict[str, pd.DataFrame]:
    return {"t": pd.DataFrame({"a": [1, 2]})}


def test_a_png_the_report_did_not_show_in_plots_is_refused_and_the_rule_explained(tmp_path):
    import postprocess.report as report

    out = tmp_path / "rep"
    write_report(_tiny_tables(), out, plots=False)
    (out / "plots").mkdir()
    (out / "plots" / "mine.png").write_bytes(b"\x89PNG user's own")
    (out / "plots" / "notes.txt").write_text("keep me")
    with pytest.raises(
        ReportError, match=r"plots/mine\.png, plots/notes\.txt\): a report folder holds .*only the PNGs"
    ):
        write_report(_tiny_tables(), out, plots=False)
    assert (out / "plots" / "mine.png").read_bytes() == b"\x89PNG user's own"
    # A PNG the previous report.md shows is the report's own: replaced.
    (out / "plots" / "notes.txt").unlink()
    md = out / "report.md"
    md.write_text(md.read_text() + "\n![mine](plots/mine.png)\n")
    assert report._foreign_entries(out) == []
    write_report(_tiny_tables(), out, plots=False)
    assert not (out / "plots").exists()


def _leftover(out: Path, pid: int) -> Path:
    path = out.with_name(f".{out.name}.{pid}-0123abcd.new")
    path.mkdir(parents=True)
    (path / "t.csv").write_text("a\n1\n")
    return path


def test_the_next_run_sweeps_leftovers_of_dead_processes_only(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "rep"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone, alive = _leftover(out, int(dead.stdout)), _leftover(out, os.getpid())
    other = _leftover(tmp_path / "another", int(dead.stdout))  # another --out's: not this one's to sweep
    write_report(_tiny_tables(), out, plots=False)
    assert not gone.exists() and alive.exists() and other.exists()


def test_a_sigterm_while_publishing_removes_the_new_folder(tmp_path):
    import signal
    import subprocess
    import sys
    import textwrap

    out = tmp_path / "rep"
    script = textwrap.dedent(
        f"""
        import os, signal, sys, time
        import pandas as pd
        import postprocess.report as report
        def slow(tables, folder, *args):
            (folder / "t.csv").write_text("a")
            print(folder, flush=True)
            time.sleep(60)
        report._write_files = slow
        report.write_report({{"t": pd.DataFrame({{"a": [1]}})}}, {str(out)!r}, plots=False)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=Path.cwd())
    fresh = Path(proc.stdout.readline().strip())
    assert fresh.is_dir() and fresh.name.endswith(".new")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == -signal.SIGTERM  # the default action still follows
    assert not fresh.exists() and not out.exists()


def test_handlers_are_those_of_before_once_written(tmp_path):
    import signal

    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    write_report(_tiny_tables(), tmp_path / "rep", plots=False)
    assert {s: signal.getsignal(s) for s in before} == before
