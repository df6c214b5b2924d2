"""run_all in worker processes gives exactly the tables it gives in one process."""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pandas as pd
import pytest

from postprocess import analyses
from postprocess.analyses import Analysis, run_all, skip_reason
from postprocess.parallel import can_fork, cpus
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.settings import ReportSettings
from tests.helpers.fakelogs import sample, write_run
from tests.helpers.reference_data import reference_frame
from tests.helpers.report_tables import FAST, reference_tables

needs_fork = pytest.mark.skipif(not can_fork(), reason="worker processes are forked")


@needs_fork
def test_two_workers_compute_every_table_exactly_as_one_process_does():
    frame = reference_frame()
    seen: list[str] = []
    alone = reference_tables()
    shared = run_all(frame, FAST, workers=2, on_table=lambda name, table: seen.append(name))
    assert list(shared) == list(alone)
    # Handed over as computed: the pairwise tables (the longest) first, then the others, each in declared order.
    pairwise = [name for name in alone if name in {a.name for a in analyses.ANALYSES if a.min_models > 1}]
    assert len(pairwise) >= 4 and seen == pairwise + [name for name in alone if name not in pairwise]
    for name in alone:
        pd.testing.assert_frame_equal(shared[name], alone[name], obj=name)
        assert shared[name].attrs == alone[name].attrs


@needs_fork
def test_a_worker_skips_an_analysis_raising_value_error_and_re_raises_a_bug(monkeypatch):
    def odd(frame, options):
        raise ValueError("question 001-1 is odd")

    def bug(frame, options):
        raise KeyError("a bug")

    frame = reference_frame()
    keep = analyses.ANALYSES[0]
    monkeypatch.setattr(analyses, "ANALYSES", (keep, Analysis("odd", "always fails", {"x": "x"}, odd)))
    tables = run_all(frame, FAST, names=[keep.name, "odd"], workers=2)
    assert skip_reason(tables["odd"]) == "question 001-1 is odd." and skip_reason(tables[keep.name]) is None
    monkeypatch.setattr(analyses, "ANALYSES", (keep, Analysis("bug", "a bug", {"x": "x"}, bug)))
    with pytest.raises(KeyError, match="a bug"):
        run_all(frame, FAST, names=[keep.name, "bug"], workers=2)


@needs_fork
def test_a_worker_that_dies_costs_time_not_the_report(monkeypatch):
    parent = os.getpid()

    def dies_in_a_worker(frame, options):
        if os.getpid() != parent:
            os._exit(1)  # as if killed for memory
        return pd.DataFrame({"x": [len(frame)]})

    frame = reference_frame()
    keep = analyses.ANALYSES[0]
    expected = reference_tables()[keep.name]  # before the analyses are replaced
    fragile = Analysis("fragile", "dies in workers", {"x": "x"}, dies_in_a_worker)
    monkeypatch.setattr(analyses, "ANALYSES", (keep, fragile))
    tables = run_all(frame, FAST, names=[keep.name, "fragile"], workers=2)
    assert tables["fragile"]["x"].tolist() == [len(frame)]
    pd.testing.assert_frame_equal(tables[keep.name], expected)


@pytest.mark.parametrize("workers", [1, 2] if can_fork() else [1])
def test_tables_computed_first_are_offered_first_and_returned_in_declared_order(workers):
    frame = reference_frame()
    seen: list[str] = []
    plain = reference_tables()
    early = run_all(
        frame, FAST, workers=workers, first=["ladder", "vdg", "nosuch"], on_table=lambda n, t: seen.append(n)
    )
    assert seen[:2] == ["ladder", "vdg"] and sorted(seen) == sorted(plain)
    assert list(early) == list(plain)
    for name in plain:
        pd.testing.assert_frame_equal(early[name], plain[name], obj=name)


@needs_fork
def test_on_computed_runs_in_the_process_that_computed_each_table(tmp_path):
    log = tmp_path / "computed.txt"

    def note(name, table):
        with log.open("a") as f:  # one short appended line per table: safe across processes
            f.write(f"{name} {os.getpid()} {len(table)}\n")

    tables = run_all(reference_frame(), FAST, workers=2, on_computed=note)
    lines = [line.split() for line in log.read_text().splitlines()]
    assert sorted(name for name, _, _ in lines) == sorted(tables)
    assert all(int(rows) == len(tables[name]) for name, _, rows in lines)
    pids = {name: int(pid) for name, pid, _ in lines}
    assert {pids[d.name] for d in analyses.DIGESTS} == {os.getpid()}  # digests are computed here
    assert os.getpid() not in {pid for name, pid in pids.items() if name not in {d.name for d in analyses.DIGESTS}}


def _every_condition_frame(tmp_path) -> pd.DataFrame:
    """3 models x the video conditions x 60 questions in 4 task types, answers drawn per (model, condition)."""
    rng = np.random.default_rng(11)
    answers = rng.choice(list("ABCD"), 60)
    runs = []
    for m in range(3):
        by_task = {}
        for cond in ("orig", "black", "single", "shuffled", "ordered", "crf18", "crf28", "crf38"):
            right = rng.random(60) < (0.35 if cond == "black" else 0.65)
            preds = [a if r else "ABCD"[("ABCD".index(a) + 1) % 4] for a, r in zip(answers, right, strict=True)]
            by_task[f"vdgsynth_vdg_{cond}"] = [
                sample(f"q{i // 3}-{i % 3}", cond, p, answer=a, task_type=f"T{i % 4}")
                for i, (p, a) in enumerate(zip(preds, answers, strict=True))
            ]
        runs.append(write_run(tmp_path / f"m{m}", f"m{m}", by_task))
    return load_frame(runs)


#: A value for each column the multiple-choice analyses are not given (none blank, so reading one would show).
_FILLED = {
    "error": "x",
    "source": "file:1",
    "character": "Ann",
    "swap_to": "Bob",
    "swap_gender": "same",
    "abstain_letter": "E",
    "idk_letter": "E",
    "question": "Who?",
    "response": "A",
    "truth": "A",
    "duration_s": 30.0,
    "judge_score": 1.0,
    "judge": "judge",
    "precision": "bf16",
    "export": "vdg@1",
    "domain": "Knowledge",
    "sub_category": "Humanity",
    "question_set": "abc",
}


@pytest.mark.parametrize("source", ["reference", "every condition", "a question without a video id"])
def test_the_columns_left_out_of_the_multiple_choice_analyses_change_none_of_their_tables(source, tmp_path):
    frame = reference_frame() if source != "every condition" else _every_condition_frame(tmp_path)
    assert set(_FILLED) | {"model_settings"} == set(analyses.UNREAD_BY_CHOICES)
    for column, value in _FILLED.items():  # two values, alternating by row: grouping by one would show
        frame[column] = [value * (1 + i % 2) for i in range(len(frame))]
    if source == "a question without a video id":  # the collective tables are skipped, naming the row's source
        frame.loc[frame.index[7], "video_id"] = ""
    tables = run_all(frame, FAST, workers=1)
    whole = analyses.multiple_choice_frame(frame)
    compared = 0
    for analysis in analyses.ANALYSES:
        if analysis.name in analyses.FULL_FRAME:
            continue
        expected = analyses._guarded(analysis.columns, lambda a=analysis: a.run(whole, FAST))
        pd.testing.assert_frame_equal(tables[analysis.name], expected, obj=analysis.name)
        assert skip_reason(tables[analysis.name]) == skip_reason(expected), analysis.name
        compared += bool(len(expected))
    assert compared >= (20 if source == "every condition" else 12)
    if source == "a question without a video id":
        assert "file:1" in skip_reason(tables["collective"])


def test_a_field_named_by_by_is_kept_and_collective_accuracy_gets_every_column():
    frame = reference_frame()
    frame["domain"] = ["Knowledge", "Sports"] * (len(frame) // 2) + ["Knowledge"] * (len(frame) % 2)
    kept = analyses._choices_columns(frame, ReportSettings(by=("domain",)))
    assert "domain" in kept.columns and not {"source", "question"} & set(kept.columns)
    assert kept.attrs == frame.attrs
    by_domain = ReportSettings(n_resamples=200, stability_resamples=50, group_by="domain")
    tables = run_all(frame, by_domain, names=["collective"], workers=1)
    expected = analyses._guarded(
        analyses.collective.ANALYSES[0].columns,
        lambda: analyses.collective.ANALYSES[0].run(analyses.multiple_choice_frame(frame), by_domain),
    )
    assert not skip_reason(tables["collective"]) and len(tables["collective"])
    pd.testing.assert_frame_equal(tables["collective"], expected)


@pytest.mark.parametrize("source", ["reference", "every condition"])
def test_each_analysis_declares_the_intermediates_it_reads(source, tmp_path, monkeypatch):
    frame = reference_frame() if source == "reference" else _every_condition_frame(tmp_path)
    frame = analyses.multiple_choice_frame(frame)

    class Spy(dict):
        def get(self, key, default=None):
            read.add(key[0])  # memo_by_frame's key: (function, frame, options)
            return super().get(key, default)

    monkeypatch.setattr(analyses.base, "_MEMO", Spy())
    mapped = dataclasses.replace(FAST, tier_map={str(t): "high" for t in frame["task_type"].unique()[:2]})
    shared = 0
    for analysis in analyses.ANALYSES:
        read: set[str] = set()
        for options in (FAST, mapped):  # with a tier map, tier_agreement reads the tiers' intermediates
            analyses.base._MEMO.clear()
            analyses._guarded(analysis.columns, lambda a=analysis, o=options: a.run(frame, o))
        assert read <= {fn.__qualname__ for fn in analysis.shares}, analysis.name
        shared += bool(read)
    assert shared >= 11


def test_analyses_sharing_an_intermediate_are_one_task_in_the_order_of_their_first():
    def table(frame, options):
        return pd.DataFrame({"x": [1]})

    def first(frame, options): ...

    def second(frame, options): ...

    declared = [
        Analysis("a", "", {"x": "x"}, table, shares=(first,)),
        Analysis("b", "", {"x": "x"}, table),
        Analysis("c", "", {"x": "x"}, table, shares=(second,)),
        Analysis("d", "", {"x": "x"}, table, shares=(first, second)),  # joins a's task and c's
        Analysis("e", "", {"x": "x"}, table, shares=(second,)),
    ]
    tasks = analyses._tasks({a.name: a for a in declared})
    assert tasks == [("a", "c", "d", "e"), ("b",)]
    assert analyses._tasks({a.name: a for a in declared[1:3]}) == [("b",), ("c",)]


@needs_fork
def test_a_shared_intermediate_is_computed_once_by_two_workers(tmp_path, monkeypatch):
    log = tmp_path / "computed.txt"

    @analyses.base.memo_by_frame
    def expensive(frame, options):
        with log.open("a") as f:
            f.write(f"{os.getpid()}\n")
        return len(frame)

    def rows(frame, options):
        return pd.DataFrame({"x": [expensive(frame, options)]})

    declared = tuple(Analysis(f"t{i}", "", {"x": "x"}, rows, shares=(expensive,)) for i in range(4))
    loner = Analysis("alone", "", {"x": "x"}, lambda frame, options: pd.DataFrame({"x": [0]}))
    monkeypatch.setattr(analyses, "ANALYSES", (*declared, loner))
    frame = reference_frame()
    tables = run_all(frame, FAST, names=[a.name for a in (*declared, loner)], workers=2)
    assert [tables[a.name]["x"].iloc[0] for a in declared] == [len(frame)] * 4
    assert len(log.read_text().splitlines()) == 1


@needs_fork
@pytest.mark.skipif(cpus() < 2, reason="report.json is written beside the markdown only with a second CPU")
def test_report_json_written_by_a_second_process_is_the_one_written_here_even_when_it_dies(tmp_path, monkeypatch):
    from postprocess import report

    tables = reference_tables()
    written = {}
    parent = os.getpid()
    real = report._write_json

    def dies_in_a_child(*args):
        if os.getpid() != parent:
            os._exit(1)
        real(*args)

    class NoProcess:  # fork refused (out of memory, say)
        def __init__(self, **kwargs):
            pass

        def start(self):
            raise OSError("fork refused")

    class Refusing:
        Process = NoProcess

    fork = report.mp.get_context
    cases = [("here", 10**12, real, fork), ("child", 0, real, fork), ("dying child", 0, dies_in_a_child, fork)]
    for label, rows, write, context in [*cases, ("no child", 0, real, lambda method: Refusing)]:
        monkeypatch.setattr(report, "PARALLEL_TABLE_ROWS", rows)
        monkeypatch.setattr(report, "_write_json", write)
        monkeypatch.setattr(report.mp, "get_context", context)
        written[label] = (
            report.write_report(tables, tmp_path / label.replace(" ", "_"), plots=False).path / "report.json"
        ).read_bytes()
    assert written["child"] == written["here"] == written["dying child"] == written["no child"]
    assert json.loads(written["here"])["tables"]
