"""Issue 24, report inputs and --out: each failure is one line naming the problem and a non-zero exit."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from postprocess.reading.files import LogError
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.report import ReportError, write_report
from tests.helpers.fakelogs import sample, write_run
from vdg_tasks.cli import main


def _run(folder: Path, n_options: int | None = None, answer: str = "A", n: int = 4) -> Path:
    by_task = {}
    for cond in ("orig", "black"):
        rows = []
        for i in range(n):
            s = sample(f"v{i}-q", cond, answer if i % 2 else "A", answer=answer)
            if n_options is not None:
                s["vdg"]["n_options"] = n_options
            rows.append(s)
        by_task[f"vdgsynth_vdg_{cond}"] = rows
    return write_run(folder, "m", by_task)


def _report(capsys, *argv: str) -> tuple[int, str]:
    rc = main(["report", *argv, "--no-plots"])
    err = capsys.readouterr().err.strip()
    return rc, err


@pytest.mark.parametrize(("n_options", "answer"), [(10, "J"), (9, "A")])
def test_more_than_eight_options_is_one_line_naming_the_file_and_line(tmp_path, capsys, n_options, answer):
    run = _run(tmp_path / "run", n_options, answer)
    rc, err = _report(capsys, str(run), "--out", str(tmp_path / "out"))
    first = sorted(run.glob("*_samples_*.jsonl"))[0]  # black, read first: its first record
    assert rc != 0 and len(err.splitlines()) == 1
    assert f"{first}:1: n_options is {n_options}" in err and "2 to 8 options (A-H)" in err


def test_out_under_a_regular_file_is_one_line(tmp_path, capsys):
    run = _run(tmp_path / "run")
    blocker = tmp_path / "afile"
    blocker.write_text("mine")
    rc, err = _report(capsys, str(run), "--out", str(blocker / "sub" / "out"))
    assert rc != 0 and len(err.splitlines()) == 1
    assert f"{blocker} is a file, not a folder" in err
    assert blocker.read_text() == "mine"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only folder")
def test_out_in_a_read_only_folder_is_one_line(tmp_path, capsys):
    run = _run(tmp_path / "run")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        rc, err = _report(capsys, str(run), "--out", str(locked / "out"))
    finally:
        locked.chmod(0o700)
    assert rc != 0 and len(err.splitlines()) == 1 and "not writable" in err


def test_a_refused_mkdir_is_a_report_error(tmp_path, monkeypatch):
    # What a read-only folder gives a non-root user, made here whatever the user (tests may run as root).
    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(ReportError, match=r"cannot create .*\(Permission denied\)"):
        write_report({}, tmp_path / "out", plots=False)


def _bad_byte(path: Path, line: int) -> tuple[int, int]:
    """Put a 0xff byte inside the (unread) doc_hash of ``line``; the (line, column) it sits at."""
    lines = path.read_bytes().split(b"\n")
    at = lines[line - 1].index(b"constant")
    lines[line - 1] = lines[line - 1][:at] + b"\xff" + lines[line - 1][at + 1 :]
    path.write_bytes(b"\n".join(lines))
    return line, at + 1


def test_a_non_utf8_byte_in_a_samples_log_names_the_file_and_line(tmp_path, capsys):
    run = _run(tmp_path / "run")
    log = sorted(run.glob("*_samples_*orig.jsonl"))[0]
    line, column = _bad_byte(log, 3)
    with pytest.raises(LogError, match=rf"{log}:{line}: byte 0xff at column {column} is not UTF-8"):
        load_frame([run])
    rc, err = _report(capsys, str(run), "--out", str(tmp_path / "out"))
    assert rc != 0 and f"{log}:{line}: byte 0xff" in err


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_a_non_utf8_byte_in_a_predictions_file_names_the_file_and_line(tmp_path, suffix):
    records = [
        {"condition": c, "question_id": f"q{i}", "task_type": "T", "ground_truth": "A", "prediction": "A"}
        for c in ("orig", "black")
        for i in range(3)
    ]
    path = tmp_path / f"preds{suffix}"
    if suffix == ".jsonl":
        text = "\n".join(json.dumps(r) for r in records)
    elif suffix == ".json":
        text = "[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]"
    else:
        text = "\n".join([",".join(records[0])] + [",".join(r.values()) for r in records])
    data = text.encode().split(b"\n")
    data[2] = data[2].replace(b"q", b"\xe9", 1)  # a Latin-1 é
    path.write_bytes(b"\n".join(data))
    with pytest.raises(LogError, match=rf"{path}:3: byte 0xe9 at column \d+ is not UTF-8"):
        load_frame(predictions=[("m", path)], benchmark="b")


def _model_run(folder: Path, model: str, model_args: str) -> Path:
    return write_run(
        folder, model, {f"vdgsynth_vdg_{c}": [sample(f"v{i}-q", c, "A") for i in range(3)] for c in ("orig", "black")},
        model_args=model_args,
    )  # fmt: skip


def test_two_models_under_one_label_are_refused_naming_the_files(tmp_path, capsys):
    # Same model_args, different lmms-eval model classes: their settings agree, so only the model tells them apart.
    a = _model_run(tmp_path / "a", "qwen2_vl", "pretrained=/w/Tiny")
    b = _model_run(tmp_path / "b", "llava_vid", "pretrained=/w/Tiny")
    with pytest.raises(LogError, match=r"label 'm' holds answers of two different models: qwen2_vl /w/Tiny \(.*/a/"):
        load_frame([f"m={a}", f"m={b}"])
    rc, err = _report(capsys, f"m={a}", f"m={b}", "--out", str(tmp_path / "out"))
    assert rc != 0 and "llava_vid /w/Tiny" in err and str(b) in err


def test_the_model_behind_each_file_is_recorded(tmp_path):
    from postprocess.reading.frame import input_files
    from postprocess.reading.run_labels import model_source

    a = _model_run(tmp_path / "a", "qwen2_vl", "pretrained=Qwen/Qwen2-VL-2B/,device=cpu")
    results = json.loads(next(a.glob("*_results.json")).read_text())
    frame = load_frame([f"m={a}"])
    expected = f"{results['config']['model']} Qwen/Qwen2-VL-2B"
    assert model_source(results) == expected
    assert {row["file"]: row["model_source"] for row in input_files(frame)} == {
        str(f): expected for f in sorted(a.glob("*_samples_*.jsonl"))
    }


def test_a_predictions_label_naming_two_checkpoints_is_refused(tmp_path):
    records = [
        {"condition": c, "question_id": f"q{i}", "task_type": "T", "ground_truth": "A", "prediction": "A",
         "pretrained": "org/big" if i else "org/small"}
        for c in ("orig", "black") for i in range(2)
    ]  # fmt: skip
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records))
    with pytest.raises(LogError, match=rf"label 'm' holds answers of two different models: org/small \({path}\) "):
        load_frame(predictions=[("m", path)], benchmark="b")
    same = tmp_path / "one.jsonl"
    same.write_text("\n".join(json.dumps({**r, "pretrained": "org/big"}) for r in records))
    other = tmp_path / "two.jsonl"
    other.write_text("\n".join(json.dumps({**r, "pretrained": "org/small", "condition": "single"}) for r in records))
    with pytest.raises(LogError, match=rf"org/big \({same}\) and org/small \({other}\)"):
        load_frame(predictions=[("m", same), ("m", other)], benchmark="b")


def _versioned_run(folder: Path, model: str, versions: list[int | None]) -> Path:
    by_task = {}
    for c in ("orig", "black"):
        rows = [sample(f"v{i}-q", c, "A") for i in range(len(versions))]
        for row, version in zip(rows, versions, strict=True):
            if version is not None:
                row["vdg"]["transform_version"] = version
        by_task[f"vdgsynth_vdg_{c}"] = rows
    return write_run(folder, model, by_task)


def test_runs_of_one_benchmark_built_by_different_transform_versions_are_flagged(tmp_path):
    from postprocess.reading.frame import input_files
    from postprocess.rendering.pages import render_html, render_markdown, transform_version_lines

    old = _versioned_run(tmp_path / "old", "old", [2, 2, None])
    new = _versioned_run(tmp_path / "new", "new", [3, 3, 3])
    frame = load_frame([old, new])
    table = pd.DataFrame(input_files(frame))
    assert set(table["transform_version"]) == {"2", "3"}
    title, lines = transform_version_lines({"sources": table})
    expected = "vdgsynth: version 2: old (black), old (orig); version 3: new (black), new (orig)"
    assert lines == [expected] and "transform versions" in title
    assert f"- {expected}" in render_markdown({"sources": table})
    assert html_escape(expected) in render_html({"sources": table})
    # One version throughout (or none logged): no flag.
    same = load_frame([_versioned_run(tmp_path / "a", "a", [3, 3, 3]), _versioned_run(tmp_path / "b", "b", [3] * 3)])
    assert transform_version_lines({"sources": pd.DataFrame(input_files(same))}) == (title, [])


def test_vdg_report_flags_mixed_transform_versions_and_names_the_model_behind_each_file(tmp_path, capsys):
    old = _versioned_run(tmp_path / "old", "old", [2, 2, 2])
    new = _versioned_run(tmp_path / "new", "new", [3, 3, 3])
    rc, err = _report(capsys, str(old), str(new), "--out", str(tmp_path / "out"), "--resamples", "50")
    assert rc == 0, err
    page = (tmp_path / "out" / "report.md").read_text()
    flag_at = page.index("- vdgsynth: version 2: old (black), old (orig); version 3: new (black), new (orig)")
    assert page.index("## Summary") < flag_at < page.index("## Visual Dependency Gap")  # the first screen
    table = pd.read_csv(tmp_path / "out" / "sources.csv", dtype=str, keep_default_na=False)
    for run in (old, new):
        results = json.loads(next(run.glob("*_results.json")).read_text())
        rows = table[table["file"].str.startswith(str(run))]
        assert len(rows) == 2 and set(rows["model_source"]) == {results["config"]["model"]}
    assert sorted(set(table["transform_version"])) == ["2", "3"]


def html_escape(text: str) -> str:
    import html

    return html.escape(text)
