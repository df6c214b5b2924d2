from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import postprocess.reading.files
import postprocess.reading.lmms_eval_logs
import postprocess.reading.options_file
from postprocess.reading.files import LogError
from postprocess.reading.lmms_eval_logs import load_frame, read_samples
from tests.helpers.fakelogs import sample, two_conditions, write_run


def test_rows_carry_status_and_correctness(tmp_path):
    frame = load_frame([two_conditions(tmp_path)])
    assert len(frame) == 4
    row = frame[(frame.condition == "orig") & (frame.question_id == "q2-1")].iloc[0]
    assert row.status == "unparsed" and not row.correct
    assert set(frame.columns) >= {"model", "benchmark", "condition", "question_id", "status", "correct", "source"}
    assert frame.source.iloc[0].endswith(":1")


def test_refuses_runs_whose_settings_differ(tmp_path):
    a = write_run(tmp_path / "a", "m", {"vdgsynth_vdg_orig": [sample("q1-1", "orig", "A")]}, "max_num_frames=32")
    b = write_run(tmp_path / "b", "m", {"vdgsynth_vdg_black": [sample("q1-1", "black", "A")]}, "max_num_frames=16")
    with pytest.raises(LogError, match="different settings.*max_num_frames=32.*max_num_frames=16"):
        load_frame([a, b])


def test_device_placement_is_not_a_setting(tmp_path):
    a = write_run(tmp_path / "a", "m", {"vdgsynth_vdg_orig": [sample("q1-1", "orig", "A")]}, "k=1,device=cuda:0")
    b = write_run(tmp_path / "b", "m", {"vdgsynth_vdg_black": [sample("q1-1", "black", "A")]}, "k=1,device=cuda:1")
    assert len(load_frame([a, b])) == 2


def test_refuses_question_sets_that_differ(tmp_path):
    with pytest.raises(LogError, match="condition 'black' lacks 1 of 2 questions .*q2-1"):
        load_frame([two_conditions(tmp_path, black_ids=("q1-1",))])


def test_bad_json_line_names_file_and_line(tmp_path):
    run = two_conditions(tmp_path)
    f = next(run.glob("*_samples_vdgsynth_vdg_black.jsonl"))
    f.write_text(f.read_text() + "{not json\n")
    with pytest.raises(LogError, match=r"samples_vdgsynth_vdg_black\.jsonl:3: not valid JSON"):
        load_frame([run])


def test_samples_without_vdg_record_are_refused(tmp_path):
    run = write_run(tmp_path / "r", "m", {"videomme": [{"doc_id": 0, "videomme_perception_score": {}}]})
    with pytest.raises(LogError, match="no 'vdg' record"):
        load_frame([run])


def test_missing_results_json_is_named(tmp_path):
    run = two_conditions(tmp_path)
    next(run.glob("*_results.json")).unlink()
    with pytest.raises(LogError, match="no 20261130_120000_results.json beside it"):
        load_frame([run])


def test_retried_question_valid_record_supersedes_error(tmp_path):
    first = write_run(
        tmp_path / "1",
        "m",
        {
            "vdgsynth_vdg_orig": [sample("q1-1", "orig", None, error="VideoDecodeError: boom")],
            "vdgsynth_vdg_black": [sample("q1-1", "black", "A")],
        },
        stamp="20261130_100000",
    )
    retry = write_run(
        tmp_path / "2", "m", {"vdgsynth_vdg_orig": [sample("q1-1", "orig", "A")]}, stamp="20261130_110000"
    )
    frame = load_frame([first, retry])
    assert list(frame[frame.condition == "orig"].status) == ["ok"]


def test_two_different_valid_answers_are_an_error_naming_both_sources(tmp_path):
    first = write_run(tmp_path / "1", "m", {"vdgsynth_vdg_orig": [sample("q1-1", "orig", "A")]}, stamp="20261130_1")
    second = write_run(tmp_path / "2", "m", {"vdgsynth_vdg_orig": [sample("q1-1", "orig", "B")]}, stamp="20261130_2")
    with pytest.raises(LogError, match=r"two different answers: 'A' at .*1/20261130_1_samples.*'B' at .*2/20261130_2"):
        load_frame([first, second])


def _exported_run(folder, model, export):
    records = [sample(f"v{i}-1", "black", "A") for i in range(3)]
    for record in records:
        record["vdg"]["provenance"] = {"source_digest": "d", "export": export}
    return write_run(folder, model, {"vdgsynth_vdg_black": records})


def test_runs_from_different_exports_of_a_benchmark_are_refused_unless_asked(tmp_path):
    a = _exported_run(tmp_path / "a", "m1", {"name": "synth", "revision": "r1"})
    b = _exported_run(tmp_path / "b", "m2", {"name": "synth", "revision": "r2"})
    same = _exported_run(tmp_path / "c", "m3", {"name": "synth", "revision": "r1"})
    assert set(load_frame([a, same]).export) == {"synth@r1"}
    with pytest.raises(LogError, match=r"vdgsynth: runs were evaluated from different exports, synth@r1 .* synth@r2"):
        load_frame([a, b])
    assert set(load_frame([a, b], mixed_exports=True).export) == {"synth@r1", "synth@r2"}


def test_many_logs_read_in_parallel_give_the_frame_read_one_by_one(tmp_path, monkeypatch):
    runs = [two_conditions(tmp_path, model=f"m{i}") for i in range(8)]  # 16 samples logs: read in parallel
    parallel = load_frame(runs)
    monkeypatch.setattr(postprocess.reading.lmms_eval_logs, "_PARALLEL_FILES", 10**6)
    serial = load_frame(runs)
    pd.testing.assert_frame_equal(parallel, serial)
    assert parallel.attrs == serial.attrs and len(parallel) == 32


@pytest.mark.skipif(not postprocess.reading.files.ARROW_TEXT, reason="text columns are arrow-backed (pandas 3)")
def test_text_columns_of_many_logs_are_one_arrow_chunk_each(tmp_path):
    """What the analyses group by is one array, not one chunk per samples log (each arrow kernel then runs once)."""
    frame = load_frame([two_conditions(tmp_path, model=f"m{i}") for i in range(3)])  # 6 samples logs
    pa_columns = {c: frame[c].array.__arrow_array__() for c in ("benchmark", "condition", "question_id", "task_type")}
    assert {c: a.num_chunks for c, a in pa_columns.items()} == dict.fromkeys(pa_columns, 1)
    assert sorted(frame["question_id"].unique()) == ["q1-1", "q2-1"] and len(frame) == 12


def test_records_lacking_optional_fields_read_as_blank(tmp_path):
    records = [sample("q1-1", "orig", "A"), sample("q2-1", "orig", "B")]
    records[0]["vdg"].update(character="Ann", duration_s=12.5, n_options=5)
    del records[1]["vdg"]["video_id"]
    run = write_run(tmp_path / "r", "m", {"vdgsynth_vdg_orig": records})
    log = next(run.glob("*_samples_*.jsonl"))
    log.write_text("\n" + log.read_text())  # a blank first line: the records are on lines 2 and 3
    frame = read_samples(log)
    assert list(frame.character) == ["Ann", ""] and list(frame.video_id) == ["q1", ""]
    assert frame.duration_s.iloc[0] == 12.5 and np.isnan(frame.duration_s.iloc[1])
    assert list(frame.n_options) == [5, 4]  # the record's own, else vdgsynth's declared count
    assert list(frame.source) == [f"{log}:2", f"{log}:3"]


@pytest.mark.parametrize(
    ("layout", "expected_lines"),
    [
        (lambda a, b, c: f"{a}\n{b}\n{c}", [1, 2, 3]),  # no final newline
        (lambda a, b, c: f"{a}\n\n{b}\n{c}\n\n", [1, 3, 4]),  # blank lines, two at the end
        (lambda a, b, c: f"  \n{a}\n\t{b}\n \n{c}\n", [2, 3, 5]),  # whitespace-only lines, an indented record
        (lambda a, b, c: f"{a}\r\n{b}\r{c}\r\n", [1, 2, 3]),  # CRLF and a lone CR end lines
    ],
)
def test_source_lines_count_every_line_whatever_the_layout(tmp_path, layout, expected_lines):
    run = write_run(tmp_path / "r", "m", {"vdgsynth_vdg_orig": [sample(f"q{i}-1", "orig", "A") for i in range(3)]})
    log = next(run.glob("*_samples_*.jsonl"))
    log.write_text(layout(*log.read_text().splitlines()), newline="")
    frame = read_samples(log)
    assert list(frame.question_id) == ["q0-1", "q1-1", "q2-1"]
    assert list(frame.source) == [f"{log}:{n}" for n in expected_lines]


@pytest.mark.parametrize("split", [False, True])
def test_two_records_on_one_line_are_an_error_naming_the_line(tmp_path, split):
    run = write_run(tmp_path / "r", "m", {"vdgsynth_vdg_orig": [sample(f"q{i}-1", "orig", "A") for i in range(3)]})
    log = next(run.glob("*_samples_*.jsonl"))
    first, second, third = log.read_text().splitlines()
    if split:  # one record over two lines, two on the next: as many records as lines, every line {...}-like
        at = first.index(', "vdg"')
        log.write_text(f"{first[:at]}\n{first[at:]}\n{second} {third}\n")
        where = f"{log}:1"
    else:  # two on one line and a blank line: as many records as non-blank lines
        log.write_text(f"{first}\n\n{second} {third}\n")
        where = f"{log}:3"
    with pytest.raises(LogError, match=rf"{where}: not valid JSON"):
        read_samples(log)


def test_a_benchmark_or_condition_that_is_not_text_is_read_as_its_text(tmp_path):
    records = [sample(f"q{i}-1", "orig", "A") for i in range(2)]
    records[1]["vdg"]["condition"] = ["orig"]
    run = write_run(tmp_path / "r", "m", {"vdgsynth_vdg_orig": records})
    log = next(run.glob("*_samples_*.jsonl"))
    assert list(read_samples(log).condition) == ["orig", "['orig']"]


def test_a_line_nested_beyond_the_decoders_limits_still_gives_its_record(tmp_path):
    records = [sample(f"q{i}-1", "orig", "A") for i in range(2)]
    run = write_run(tmp_path / "r", "m", {"vdgsynth_vdg_orig": records})
    log = next(run.glob("*_samples_*.jsonl"))
    first, second = log.read_text().splitlines()
    deep = "[" * 100_000 + "]" * 100_000  # a doc field nested beyond msgspec's and the json module's depth
    log.write_text(first + "\n" + second.replace('"doc_hash": "constant"', f'"doc_hash": {deep}') + "\n")
    assert list(read_samples(log).question_id) == ["q0-1", "q1-1"]
    log.write_text(first + "\n" + "[" * 100_000 + "\n")
    with pytest.raises(LogError, match=rf"{log}:2: nested too deeply"):
        read_samples(log)


def test_each_samples_log_lists_its_own_conditions_and_option_count_origins(tmp_path):
    from postprocess.reading.frame import input_files

    def with_options(record, n):
        if n is not None:
            record["vdg"]["n_options"] = n
        return record

    # black: records 1-3 carry n_options, the others do not (mybench declares no count: inferred); orig: none do.
    black = [
        with_options(sample(f"q-{i}", "black", "A", benchmark="mybench"), 4 if i <= 3 else None) for i in range(1, 6)
    ]
    black.insert(1, with_options(sample("q-9", "black", "B", benchmark="mybench"), None))  # an inferred one early
    orig = [sample(f"q-{i}", "orig", "A", benchmark="mybench") for i in [*range(1, 6), 9]]
    run = write_run(tmp_path / "m", "m", {"mybench_vdg_black": black, "mybench_vdg_orig": orig})
    listed = {Path(s["file"]).name: s for s in input_files(load_frame([run]))}
    black_info = listed["20261130_120000_samples_mybench_vdg_black.jsonl"]
    orig_info = listed["20261130_120000_samples_mybench_vdg_orig.jsonl"]
    assert (black_info["conditions"], orig_info["conditions"]) == ("black", "orig")
    assert black_info["model"] == orig_info["model"] == "m" and black_info["n_records"] == 6
    # in the order each origin first appears in the file, with its record count
    inferred = postprocess.reading.files.INFERRED_COUNT
    assert black_info["n_options_source"] == f"n_options field (3 records); {inferred} (3 records)"
    assert orig_info["n_options_source"] == inferred


def _messy_records() -> list[dict]:
    """Records as real logs hold them: lmms-eval's own fields around the vdg record (a doc with its own 'vdg'
    key, long responses), optional fields on some records only, nulls, a field of mixed types, non-ASCII text."""
    records = []
    for i in range(6):
        record = sample(f"q{i}-1", "orig", "ABCD"[i % 4], answer="ABCD"[(i * 3) % 4], task_type=f"Tâche {i % 2}")
        record["arguments"] = [["Question?\nA. a\nB. b", {"max_new_tokens": 16}]]
        record["resps"] = [["The answer is (A). " * 40]]
        record["doc"] = {"vdg": {"benchmark": "not this one"}, "videoID": f"v{i}"}
        records.append(record)
    records[1]["vdg"]["n_options"] = 5
    records[2]["vdg"]["n_options"] = 4.0  # a float among ints (and absences): read as pandas reads it
    records[3]["vdg"]["character"] = "Zoë"
    records[4]["vdg"]["duration_s"] = None
    records[5]["vdg"]["domain"] = "  Knowledge "
    del records[0]["vdg"]["video_id"]
    return records


def test_messy_log_reads_alike_through_the_fast_decoder_and_line_by_line(tmp_path, monkeypatch):
    run = write_run(tmp_path / "r", "m", {"vdgsynth_vdg_orig": _messy_records()})
    log = next(run.glob("*_samples_*.jsonl"))
    log.write_bytes(log.read_bytes().replace(b"\n", b"\r\n", 2))  # CRLF on the first lines, as some tools write
    fast = read_samples(log)

    class Refusing:
        def decode_lines(self, data):
            raise postprocess.reading.lmms_eval_logs.msgspec.DecodeError("forced")

        def decode(self, line):
            raise postprocess.reading.lmms_eval_logs.msgspec.DecodeError("forced")

    monkeypatch.setattr(postprocess.reading.lmms_eval_logs, "_LINE_DECODER", Refusing())
    line_by_line = read_samples(log)
    pd.testing.assert_frame_equal(fast, line_by_line, check_exact=True)
    assert fast.attrs == line_by_line.attrs
    assert list(fast.n_options) == [4, 5, 4, 4, 4, 4] and fast.character.iloc[3] == "Zoë"
    assert list(fast.video_id)[:2] == ["", "q1"] and fast.domain.iloc[5] == "Knowledge"
    assert list(fast.task_type) == ["Tâche 0", "Tâche 1"] * 3


def test_a_line_the_fast_decoder_refuses_is_read_by_the_json_module(tmp_path):
    records = _messy_records()
    run = write_run(tmp_path / "r", "m", {"vdgsynth_vdg_orig": records})
    log = next(run.glob("*_samples_*.jsonl"))
    lines = log.read_text().splitlines()
    lines[2] = lines[2].replace('"doc_hash": "constant"', '"doc_hash": NaN')  # Python's json writes NaN
    log.write_text("\n".join(lines) + "\n")
    frame = read_samples(log)
    assert list(frame.question_id) == [f"q{i}-1" for i in range(6)]
    assert list(frame.source)[2] == f"{log}:3"


@pytest.mark.parametrize("with_a_nan_line", [False, True])
def test_integers_beyond_64_bits_are_read_exactly_whichever_decoder_reads_the_file(tmp_path, with_a_nan_line):
    records = [sample("x", "orig", "A") for _ in range(3)]
    for i, record in enumerate(records):
        record["vdg"]["question_id"] = 10**20 + i  # would collapse to one id, 1e+20, read as floats
    if with_a_nan_line:  # one line the fast decoder refuses: the file is read line by line
        records[1]["doc_hash"] = float("nan")
    run = write_run(tmp_path / "r", "m", {"vdgsynth_vdg_orig": records})
    frame = read_samples(next(run.glob("*_samples_*.jsonl")))
    assert list(frame.question_id) == [str(10**20 + i) for i in range(3)]


@pytest.mark.parametrize(
    "counts",
    [[4, 5, 3], [4, True, 5], [4, "5", 3], [4, 2**70, 3], [4.0, 5, 3]],
    ids=["ints", "a_boolean", "a_string", "beyond_int64", "a_float"],
)
def test_option_counts_of_a_log_are_those_the_general_rule_gives(tmp_path, counts):
    # A log whose every record gives an integer count takes them as they are; any other goes through pandas'
    # coercion (declared_counts). Both must give what declared_counts gives for the same records.
    records = [sample(f"q{i}-1", "orig", "A", benchmark="mybench") for i in range(len(counts))]
    for record, n in zip(records, counts, strict=True):
        record["vdg"]["n_options"] = n
    run = write_run(tmp_path / "r", "m", {"mybench_vdg_orig": records})
    log = postprocess.reading.lmms_eval_logs._read_log(next(run.glob("*_samples_*.jsonl")))
    expected, origin = postprocess.reading.files.declared_counts(
        pd.DataFrame({"n_options": pd.Series(counts)}), pd.Series(["mybench"] * len(counts))
    )
    pd.testing.assert_series_equal(log.n_options, expected, check_exact=True)
    codes, names = pd.factorize(origin)
    assert log.origins == [(str(name), int(n)) for name, n in zip(names, np.bincount(codes), strict=True)]


def test_each_record_source_is_its_file_and_line(tmp_path):
    records = [sample(f"q{i}-1", "orig", "A") for i in range(4)]
    run = write_run(tmp_path / "r ü", "m", {"vdgsynth_vdg_orig": records})
    log = next(run.glob("*_samples_*.jsonl"))
    log.write_text(log.read_text().replace("\n", "\n\n", 1))  # a blank line: the later records move down one
    assert list(read_samples(log).source) == [f"{log}:{n}" for n in (1, 3, 4, 5)]


def test_reading_a_log_leaves_no_reference_cycles(tmp_path):
    # The reader processes run without the cycle collector (_read_all_samples): whatever a read drops must be
    # freed by reference counting, on the one-call path and on the line-by-line one alike.
    import gc

    tidy = write_run(tmp_path / "tidy", "m", {"vdgsynth_vdg_orig": _messy_records()})
    records = _messy_records()
    records[2]["doc_hash"] = float("nan")  # a line the fast decoder refuses: read line by line
    line_by_line = write_run(tmp_path / "nan", "m", {"vdgsynth_vdg_orig": records})
    logs = [next(run.glob("*_samples_*.jsonl")) for run in (tidy, line_by_line)]
    gc.collect()
    gc.disable()
    try:
        for log in logs:
            postprocess.reading.lmms_eval_logs._read_log(log)
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.parametrize("value", ["false", "True", 1, None])
def test_a_scored_record_whose_correct_is_not_a_boolean_names_the_file_and_line(tmp_path, value):
    black = [sample("q1-1", "black", "B"), sample("q2-1", "black", "A")]
    black[1]["vdg"]["correct"] = value  # answer A, pred A: a string "false" must not read as right
    run = write_run(
        tmp_path / "m",
        "m",
        {"vdgsynth_vdg_orig": [sample("q1-1", "orig", "A"), sample("q2-1", "orig", "A")], "vdgsynth_vdg_black": black},
    )
    with pytest.raises(LogError, match=rf"vdgsynth_vdg_black.*:2: correct is {value!r}, not true or false"):
        load_frame([run])


def test_a_log_without_scores_and_one_with_them_agree_on_the_same_letter(tmp_path):
    from tests.helpers.fakelogs import sample, write_run

    old = sample("q1-1", "orig", "A")
    new = sample("q1-1", "orig", "A")
    new["vdg"].update(score=1.0, scoring="letter")
    write_run(tmp_path / "run", "m", {"vdgsynth_vdg_orig": [old]}, stamp="20261101_000000")
    write_run(tmp_path / "run", "m", {"vdgsynth_vdg_orig": [new]}, stamp="20261201_000000")
    frame = load_frame([tmp_path / "run"])
    assert len(frame) == 1 and frame["score"].tolist() == [1.0] and frame["scoring"].tolist() == ["letter"]
