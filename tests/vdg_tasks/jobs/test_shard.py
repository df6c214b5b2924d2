"""`vdg materialize --shard I/N` and `--manifest`: a deterministic split of the jobs, and what a run did."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import vdg_tasks.jobs.materialize as mat
import vdg_tasks.perturb.video
from tests.helpers.videos import write_source
from vdg_tasks.jobs.materialize import (
    Job,
    Outcome,
    job_shard,
    parse_shard,
    run_jobs,
    shard_jobs,
    shard_outcomes,
    summarize,
    write_manifest,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _jobs() -> list[Job]:
    """A plan-like job list: two benchmarks, several conditions, per-question (bound) oracle jobs."""
    jobs = [
        Job(bench, cond, f"v{i:03d}", f"/data/{bench}/v{i:03d}.mp4")
        for bench in ("videomme", "vdgsynth")
        for cond in ("orig", "black", "single", "ordered", "crf23")
        for i in range(40)
    ]
    jobs += [
        Job("infinibench_ga", "oracle", f"e{i}", f"/data/ib/e{i}.mp4", (("times", (1.5 * q, 7.25 + q)),))
        for i in range(10)
        for q in range(3)
    ]
    return jobs


# -- sharding -------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_together_are_the_jobs_without_overlap(count):
    jobs = _jobs()
    assert len(set(jobs)) == len(jobs)
    shards = [shard_jobs(jobs, i, count) for i in range(count)]
    together = Counter(j for shard in shards for j in shard)
    assert together == Counter(jobs)  # every job exactly once
    for shard in shards:
        assert shard == [j for j in jobs if j in set(shard)]  # the given order is kept
        assert abs(len(shard) - len(jobs) / count) < 0.25 * len(jobs) / count + 5  # about 1/N each


@pytest.mark.parametrize("count", [2, 3])
def test_a_jobs_shard_depends_on_the_job_alone(count):
    jobs = _jobs()
    shuffled = random.Random(1).sample(jobs, len(jobs))
    subset = jobs[::5] + [Job("videomme", "black", "new", "/data/new.mp4")]
    for i in range(count):
        mine = set(shard_jobs(jobs, i, count))
        assert set(shard_jobs(shuffled, i, count)) == mine
        assert set(shard_jobs(subset, i, count)) - {subset[-1]} == mine & set(subset)


def test_the_split_is_the_same_in_another_process():
    # No salted hash(): a job is assigned the same shard whatever PYTHONHASHSEED (on every machine).
    jobs = _jobs()
    driver = (
        "import json, sys\n"
        "from tests.vdg_tasks.jobs.test_shard import _jobs\n"
        "from vdg_tasks.jobs.materialize import job_shard\n"
        "print(json.dumps([job_shard(j, 3) for j in _jobs()]))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    proc = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [job_shard(j, 3) for j in jobs]


def test_bound_parameters_are_part_of_the_identity():
    a = Job("infinibench_ga", "oracle", "e1", "/x.mp4", (("times", (1.0, 2.0)),))
    others = [Job("infinibench_ga", "oracle", "e1", "/x.mp4", (("times", (1.0, float(t))),)) for t in range(3, 40)]
    assert len({job_shard(j, 2) for j in [a, *others]}) == 2


def test_unavailable_sources_are_reported_by_exactly_one_shard():
    missing = [
        Outcome(Job("videomme", c, f"m{i}", ""), None, False, "gone") for c in ("black", "ordered") for i in range(30)
    ]
    for count in (2, 3):
        parts = [shard_outcomes(missing, i, count) for i in range(count)]
        assert Counter(o for part in parts for o in part) == Counter(missing)
        assert all(parts)


@pytest.mark.parametrize(("text", "expected"), [("0/1", (0, 1)), ("0/2", (0, 2)), (" 1/2 ", (1, 2)), ("6/7", (6, 7))])
def test_parse_shard(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2/2", r"shard index I must be in 0\.\.1"),
        ("-1/2", r"shard index I must be in 0\.\.1"),
        ("0/0", "number of shards N must be at least 1"),
        ("1/-3", "number of shards N must be at least 1"),
        ("1", "expected I/N with integers"),
        ("a/b", "expected I/N with integers"),
        ("1/2/3", "expected I/N with integers"),
        ("", "expected I/N with integers"),
    ],
)
def test_parse_shard_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_shard(text)


def test_shard_jobs_checks_its_arguments():
    with pytest.raises(ValueError, match="0..2"):
        shard_jobs(_jobs(), 3, 3)
    with pytest.raises(ValueError, match="at least 1"):
        shard_jobs(_jobs(), 0, 0)


def test_default_workers_is_the_usable_cores():
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert mat.default_workers() == expected >= 1


# -- manifest -------------------------------------------------------------------------------------


def test_manifest_lists_failures_first_with_counts(tmp_path):
    def outcome(cond: str, vid: str, path: str | None, hit: bool, error: str | None = None) -> Outcome:
        return Outcome(Job("vdgsynth", cond, vid, f"/src/{vid}.mp4"), path, hit, error)

    outcomes = [
        outcome("black", "b", "/cache/ab/1.mp4", False),
        outcome("orig", "b", "/src/b.mp4", True),
        outcome("single", "b", "/cache/cd/2.mp4", True),
        outcome("single", "a", None, False, "VideoDecodeError: /src/a.mp4: truncated"),
        outcome("black", "c", "/cache/ef/3.mp4", False),
    ]
    oracle = Outcome(
        Job("vdgsynth", "oracle", "q", "/src/q.mp4", (("times", (1.0, 2.5)),)), "/cache/q.mp4", False, None
    )
    unavailable = [Outcome(Job("vdgsynth", "black", "z", ""), None, False, "video path:z.mp4 does not exist")]
    target = tmp_path / "out" / "manifest.json"
    target.parent.mkdir()
    target.write_text("old")  # replaced, not appended to
    path = write_manifest(target, [*outcomes, oracle], unavailable, (1, 4), ["vdgsynth_vdg_black", "vdgsynth_vdg"])
    assert path == target
    manifest = json.loads(target.read_text())
    assert manifest["tasks"] == ["vdgsynth_vdg_black", "vdgsynth_vdg"]
    assert manifest["shard"] == {"index": 1, "count": 4}
    assert manifest["counts"] == {"built": 3, "cached": 1, "sources_checked": 1, "failed": 2}
    assert manifest["counts"] == summarize([*outcomes, oracle], unavailable).counts()
    entries = manifest["jobs"]
    assert [(e["condition"], e["video_id"]) for e in entries] == [
        ("black", "z"),  # failures first (sorted), then the rest (sorted)
        ("single", "a"),
        ("black", "b"),
        ("black", "c"),
        ("oracle", "q"),
        ("orig", "b"),
        ("single", "b"),
    ]
    assert entries[1] == {
        "benchmark": "vdgsynth",
        "condition": "single",
        "video_id": "a",
        "source": "/src/a.mp4",
        "path": None,
        "hit": False,
        "error": "VideoDecodeError: /src/a.mp4: truncated",
    }
    assert entries[0]["source"] == "" and entries[0]["error"] == "video path:z.mp4 does not exist"
    assert entries[2]["path"] == "/cache/ab/1.mp4" and entries[2]["hit"] is False and entries[2]["error"] is None
    assert entries[4]["params"] == {"times": [1.0, 2.5]}
    assert os.listdir(target.parent) == ["manifest.json"]  # no temporary file left beside it


def test_unsharded_manifest_has_a_null_shard(tmp_path):
    manifest = json.loads(write_manifest(tmp_path / "m.json", [], [], None, ["vdgsynth_vdg_black"]).read_text())
    assert manifest == {
        "tasks": ["vdgsynth_vdg_black"],
        "shard": None,
        "counts": {"built": 0, "cached": 0, "sources_checked": 0, "failed": 0},
        "jobs": [],
    }


# -- resuming -------------------------------------------------------------------------------------


def test_a_second_run_builds_nothing(tmp_path, cache, monkeypatch):
    sources = [str(write_source(tmp_path / f"s{i}.mp4", seed=i)) for i in range(2)]
    jobs = [Job("vdgsynth", c, f"s{i}", src) for i, src in enumerate(sources) for c in ("orig", "black", "ordered")]
    first = run_jobs(jobs, workers=2, progress=False)
    assert summarize(first).counts() == {"built": 4, "cached": 0, "sources_checked": 2, "failed": 0}
    published = {p: p.stat().st_mtime_ns for p in cache.rglob("*.mp4")}
    assert len(published) == 4

    def no_encoding(*args, **kwargs):
        raise AssertionError("a second run rendered a video")

    monkeypatch.setattr(vdg_tasks.perturb.video, "render", no_encoding)
    second = run_jobs(jobs, workers=1, progress=False)
    assert all(o.hit and o.error is None for o in second)
    assert summarize(second).counts() == {"built": 0, "cached": 4, "sources_checked": 2, "failed": 0}
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*.mp4")} == published
    assert {o.job: o.path for o in second} == {o.job: o.path for o in first}
