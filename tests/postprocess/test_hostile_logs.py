"""Hardening III, items 10 and 11: a logged score that is no probability, and compressed logs.

Each hostile log is written here; every refusal names the file and line (or the file, where there is no line)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from postprocess.reading.files import LogError, read_log_bytes, samples_logs
from postprocess.reading.lmms_eval_logs import load_frame, read_samples
from postprocess.reading.prediction_files import read_predictions
from tests.helpers.fakelogs import sample, write_run
from vdg_tasks.cli import main

_BLACK = "vdgsynth_vdg_black"


def _run(folder: Path, score=None, scoring: str | None = "letter", at: int = 1) -> Path:
    """orig: q0, q1 right; black: q0 wrong, q1 right; record ``at`` of black given ``score`` (None: the consistent
    1.0 / 0.0 of its letter, as vdg's hook writes it)."""
    by_task = {}
    for cond in ("orig", "black"):
        rows = []
        for i in range(4):
            s = sample(f"v{i}-q", cond, "A" if cond == "orig" or i % 2 else "B")
            s["vdg"].update(score=float(s["vdg"]["correct"]), scoring=scoring)
            rows.append(s)
        by_task[f"vdgsynth_vdg_{cond}"] = rows
    if score is not None:
        by_task[_BLACK][at]["vdg"]["score"] = score
    return write_run(folder, "m", by_task)


def _black(run: Path) -> Path:
    return next(run.glob(f"*_samples_{_BLACK}.jsonl"))


# ------------------------------------------------------------------------------------------- item 10: scores


@pytest.mark.parametrize(
    ("score", "says"),
    [
        (5.0, r"score is 5\.0, outside \[0, 1\]"),
        (-3.0, r"score is -3\.0, outside \[0, 1\]"),
        (1.0000001, r"score is 1\.0000001, outside \[0, 1\]"),
        (100, r"score is 100, outside \[0, 1\]"),  # a mean: metric in percent
        (10**400, r"score is 1000.*, outside \[0, 1\]"),  # beyond a float
        ("0.7", r"score is '0\.7', not a number \(a number in quotes is text\)"),
        (True, r"score is True, a boolean, not a number"),
        ([1], r"score is \[1\], not a number"),
        ({"v": 1}, r"score is \{'v': 1\}, not a number"),
    ],
)
def test_a_score_that_is_no_probability_names_the_file_and_line(tmp_path, score, says):
    run = _run(tmp_path / "m", score)
    with pytest.raises(LogError, match=rf"_samples_{_BLACK}\.jsonl:2: {says}; a score is a number in \[0, 1\]"):
        load_frame([run])


@pytest.mark.parametrize("token", ["Infinity", "-Infinity", "NaN"])
def test_an_infinite_or_nan_score_names_the_file_and_line(tmp_path, token):
    # Python's json writes these tokens (json.dumps(float("inf"))); the record's other fields stay valid.
    run = _run(tmp_path / "m", score=0.25, scoring="metric:iou", at=2)
    log = _black(run)
    lines = log.read_text().splitlines()
    lines[2] = lines[2].replace('"score": 0.25', f'"score": {token}')
    log.write_text("\n".join(lines) + "\n")
    shown = {"Infinity": "inf", "-Infinity": "-inf", "NaN": "nan"}[token]
    with pytest.raises(LogError, match=rf"{log.name}:3: score is {shown}, (outside \[0, 1\]|not a number \(NaN\))"):
        read_samples(log)


@pytest.mark.parametrize(
    ("score", "correct", "scoring", "rule"),
    [
        (1.0, False, "letter", "its score is its correct flag"),
        (0.5, True, "letter", "its score is its correct flag"),
        (0.0, True, None, "its score is its correct flag"),  # no scoring: a letter's
        (0.2, True, "metric:iou", r"correct means score >= 0\.5"),
        (0.9, False, "mean:map", r"correct means score >= 0\.5"),
    ],
)
def test_a_score_that_contradicts_correct_names_the_file_and_line(tmp_path, score, correct, scoring, rule):
    # summary.csv reads score, accuracy.csv reads correct: they must not tell two stories about one answer.
    run = _run(tmp_path / "m", scoring=scoring)
    log = _black(run)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    rows[3]["vdg"].update(score=score, correct=correct)
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(
        LogError, match=rf"{log.name}:4: score is {score} but correct is {str(correct).lower()}; {rule}"
    ):
        load_frame([run])


def test_valid_scores_and_missing_ones_still_read(tmp_path):
    run = _run(tmp_path / "m", scoring="metric:iou")
    log = _black(run)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    rows[0]["vdg"].update(score=0.25, correct=False)  # graded, below CORRECT_AT
    rows[1]["vdg"].update(score=1, correct=True)  # an integer is a number
    rows[2]["vdg"]["score"] = None  # not scored: correct stands for it
    del rows[3]["vdg"]["score"]
    rows.append(sample("v9-q", "black", None, error="NoScore: no metric"))
    rows[-1]["vdg"]["score"] = None
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    frame = read_samples(log)
    assert frame["score"].tolist()[:2] == [0.25, 1.0]
    assert frame["score"].iloc[2:].isna().all()


@pytest.mark.parametrize(("score", "says"), [(5.0, "5.0, outside [0, 1]"), ("0.7", "'0.7', not a number")])
def test_vdg_report_on_a_bad_score_exits_non_zero_naming_file_and_line_and_writes_no_table(
    tmp_path, capsys, score, says
):
    run = _run(tmp_path / "m", score)
    out = tmp_path / "out"
    rc = main(["report", str(run), "--out", str(out), "--no-plots"])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and len(err.splitlines()) == 1
    assert f"{_black(run)}:2: score is {says}" in err
    assert not list(out.rglob("*.csv")) and not (out / "report.md").exists()


# ------------------------------------------------------------------------------------- item 11: compressed logs


def _gzip(path: Path, target: Path | None = None, keep: bool = False) -> Path:
    target = target or path.with_name(path.name + ".gz")
    target.write_bytes(gzip.compress(path.read_bytes()))
    if not keep and target != path:
        path.unlink()
    return target


def test_a_compressed_log_reads_as_the_plain_one(tmp_path):
    plain = load_frame([_run(tmp_path / "plain")])
    run = _run(tmp_path / "packed")
    packed = _gzip(_black(run))
    frame = load_frame([run])
    assert frame.drop(columns="source").equals(plain.drop(columns="source"))
    assert {s for s in frame["source"] if s.startswith(str(packed))} == {f"{packed}:{n}" for n in range(1, 5)}


def test_a_gzip_file_named_jsonl_is_read_by_its_bytes(tmp_path):
    run = _run(tmp_path / "m")
    log = _black(run)
    _gzip(log, target=log)  # the same name, gzip inside
    assert read_log_bytes(log).startswith(b"{")
    assert len(load_frame([run])) == 8


def test_a_run_folder_of_only_compressed_logs_is_found(tmp_path):
    run = _run(tmp_path / "m")
    packed = [_gzip(p) for p in sorted(run.glob("*_samples_*.jsonl"))]
    assert samples_logs(run) == sorted(packed)
    assert len(load_frame([run])) == 8


def test_one_log_both_plain_and_compressed_is_read_once(tmp_path):
    run = _run(tmp_path / "m")
    _gzip(_black(run), keep=True)  # gzip -k
    assert len(samples_logs(run)) == 2 and all(p.suffix == ".jsonl" for p in samples_logs(run))
    assert len(load_frame([run])) == 8


def test_one_log_both_plain_and_compressed_with_different_lines_is_refused_naming_both(tmp_path):
    run = _run(tmp_path / "m")
    log = _black(run)
    packed = _gzip(log, keep=True)
    log.write_text(log.read_text().replace('"pred": "B"', '"pred": "A"', 1))
    with pytest.raises(LogError, match=rf"{log.name} and .*{packed.name}: one samples log both plain and compressed"):
        load_frame([run])


def test_a_truncated_gzip_log_names_the_file(tmp_path):
    run = _run(tmp_path / "m")
    packed = _gzip(_black(run))
    packed.write_bytes(packed.read_bytes()[:-12])
    with pytest.raises(LogError, match=rf"{packed.name}: gzip-compressed, but it ends before its end-of-stream marker"):
        load_frame([run])


def test_a_damaged_gzip_log_names_the_file(tmp_path):
    run = _run(tmp_path / "m")
    packed = _gzip(_black(run))
    data = bytearray(packed.read_bytes())
    data[-5] ^= 0xFF  # the length in the trailer no longer matches
    packed.write_bytes(bytes(data))
    with pytest.raises(LogError, match=rf"{packed.name}: gzip-compressed, but damaged"):
        load_frame([run])


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        (b'{"vdg": {"benchmark": "vdgsynth"}}\n{"vdg": \xff}\n', r":2: byte 0xff at column 9 is not UTF-8"),
        (b'{"vdg": {"benchmark": "vdgsynth"}}\n{"vdg": {"benchmark": }}\n', r":2: not valid JSON"),
    ],
)
def test_bad_text_inside_a_compressed_log_names_the_file_and_line(tmp_path, payload, says):
    run = _run(tmp_path / "m")
    packed = _black(run).with_name(_black(run).name + ".gz")
    _black(run).unlink()
    packed.write_bytes(gzip.compress(payload))
    with pytest.raises(LogError, match=rf"{packed.name}{says}"):
        load_frame([run])


def test_a_compressed_log_without_its_results_file_names_the_compressed_file(tmp_path):
    run = _run(tmp_path / "m")
    packed = _gzip(_black(run))
    next(run.glob("*_results.json")).unlink()
    with pytest.raises(LogError, match=rf"{packed.name}: no .*_results\.json beside it"):
        load_frame([packed])


@pytest.mark.parametrize("name", ["preds.jsonl.gz", "preds.csv.gz", "preds.json.gz", "preds.jsonl"])
def test_a_compressed_predictions_file_reads_as_the_plain_one(tmp_path, name):
    records = [
        {"condition": c, "question_id": f"q{i}", "task_type": "T", "ground_truth": "A", "prediction": p}
        for c, p in (("orig", "A"), ("black", "B"))
        for i in range(3)
    ]
    suffix = name.removesuffix(".gz").rsplit(".", 1)[1]
    if suffix == "csv":
        text = "condition,question_id,task_type,ground_truth,prediction\n" + "".join(
            ",".join(r.values()) + "\n" for r in records
        )
    elif suffix == "json":
        text = json.dumps(records)
    else:
        text = "".join(json.dumps(r) + "\n" for r in records)
    plain = tmp_path / f"plain.{suffix}"
    plain.write_text(text)
    packed = tmp_path / name
    packed.write_bytes(gzip.compress(text.encode()))  # preds.jsonl: gzip under a plain name
    want = read_predictions(plain, "m", "vdgsynth")
    got = read_predictions(packed, "m", "vdgsynth")
    assert got.drop(columns="source").equals(want.drop(columns="source"))
    assert got["source"].iloc[0].startswith(str(packed))


def test_a_scoring_that_is_not_text_does_not_break_the_check(tmp_path):
    run = _run(tmp_path / "m")
    log = _black(run)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    rows[0]["vdg"]["scoring"] = ["metric:iou"]  # read as graded (not a letter's name): 0.0 < 0.5, correct false
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert len(read_samples(log)) == 4


def test_vdg_report_reads_a_folder_of_compressed_logs(tmp_path, capsys):
    run = _run(tmp_path / "m")
    for log in sorted(run.glob("*_samples_*.jsonl")):
        _gzip(log)
    assert main(["report", str(run), "--out", str(tmp_path / "out"), "--no-plots"]) == 0


def test_vdg_report_reads_a_gzip_file_named_jsonl(tmp_path, capsys):
    run = _run(tmp_path / "m")
    log = _black(run)
    _gzip(log, target=log)
    assert main(["report", str(run), "--out", str(tmp_path / "out"), "--no-plots"]) == 0


def test_vdg_report_reads_a_compressed_log_beside_plain_ones(tmp_path, capsys):
    run = _run(tmp_path / "m")
    packed = _gzip(_black(run))
    out = tmp_path / "out"
    assert main(["report", str(run), "--out", str(out), "--no-plots"]) == 0
    sources = (out / "sources.csv").read_text()
    assert str(packed) in sources and "vdgsynth_vdg_orig.jsonl," in sources


# ------------------------------------------------------------------------------------------------ gzip bombs


def test_a_gzip_log_decompressing_past_the_cap_is_refused_naming_the_file(tmp_path, monkeypatch):
    """A few kB of gzip that expand past VDG_MAX_LOG_BYTES are refused, not read into memory; the cap is the only
    difference between the refused and the accepted read."""
    bomb = tmp_path / "bomb_samples_x_vdg_orig.jsonl.gz"
    bomb.write_bytes(gzip.compress(b" " * 200_000))
    assert len(bomb.read_bytes()) < 2_000  # spaces compress about 1000:1
    monkeypatch.setenv("VDG_MAX_LOG_BYTES", "100000")
    with pytest.raises(LogError, match=rf"^{re.escape(str(bomb))}: decompresses to more than 100000 bytes"):
        read_log_bytes(bomb)
    monkeypatch.setenv("VDG_MAX_LOG_BYTES", "200000")
    assert read_log_bytes(bomb) == b" " * 200_000


def test_the_cap_counts_every_gzip_member(tmp_path, monkeypatch):
    two = tmp_path / "two_samples_x_vdg_orig.jsonl.gz"
    two.write_bytes(gzip.compress(b"a" * 600) + gzip.compress(b"b" * 600))
    monkeypatch.setenv("VDG_MAX_LOG_BYTES", "1000")
    with pytest.raises(LogError, match="decompresses to more than 1000 bytes"):
        read_log_bytes(two)
    monkeypatch.setenv("VDG_MAX_LOG_BYTES", "1200")
    assert read_log_bytes(two) == b"a" * 600 + b"b" * 600


def test_a_bad_cap_setting_is_refused(tmp_path, monkeypatch):
    log = tmp_path / "x_samples_t.jsonl.gz"
    log.write_bytes(gzip.compress(b"{}\n"))
    monkeypatch.setenv("VDG_MAX_LOG_BYTES", "lots")
    with pytest.raises(ValueError, match=r"VDG_MAX_LOG_BYTES='lots' is not a positive number of bytes"):
        read_log_bytes(log)


def test_a_folder_named_like_a_log_is_not_a_log(tmp_path):
    run = _run(tmp_path / "m")
    (run / "odd_samples_folder.jsonl").mkdir()
    assert all(p.is_file() for p in samples_logs(run))
    assert run / "odd_samples_folder.jsonl" not in samples_logs(run)


def test_peeking_at_a_compressed_log_reads_its_first_line_only(tmp_path):
    """`vdg report` peeks at each log's first record (vdg's or a base task's); a gzip log whose tail is damaged is
    still told by its head, and the reader later names the damage."""
    from vdg_tasks.vocabulary.record import holds_vdg_records

    head = json.dumps({"doc_id": 0, "vdg": {"condition": "orig"}}).encode() + b"\n"
    packed = gzip.compress(head + b'{"doc_id": 1}\n' * 1000)
    log = tmp_path / "x_samples_t.jsonl.gz"
    log.write_bytes(packed[: len(packed) // 2])  # cut: the stream ends early
    assert holds_vdg_records(log) is True
    for not_an_object in (b"5\n", b"null\n", b'"vdg"\n', b"[1]\n"):
        odd = tmp_path / "z_samples_t.jsonl"
        odd.write_bytes(not_an_object)
        assert holds_vdg_records(odd) is True  # not for the peek to judge: the reader names the line
    base = tmp_path / "y_samples_t.jsonl.gz"
    base.write_bytes(gzip.compress(b'{"doc_id": 0, "resps": []}\n'))
    assert holds_vdg_records(base) is False
    with pytest.raises(LogError, match="ends before its end-of-stream marker"):
        read_log_bytes(log)
