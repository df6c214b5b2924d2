"""`vdg materialize`'s engine: task names, planning, outcomes, and stopping its worker processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import numpy as np
import psutil
import pytest

import vdg_tasks.jobs.materialize as mat
from tests.helpers.videos import write_source
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.jobs.materialize import Job, TaskError, expand_tasks, plan, run_jobs, summarize
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate
from vdg_tasks.vocabulary.conditions import CONDITIONS
from vdg_tasks.vocabulary.paths import CacheUnwritable

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def synth_tasks(tmp_path_factory):
    """A vdgsynth benchmark of 2 videos and task YAMLs pointing at it (never the checkout's yaml_tasks/)."""
    root = tmp_path_factory.mktemp("synth")
    jsonl = generate(root / "data", n_videos=2, seed=0)
    write_all(root / "tasks", synth_data=str(jsonl))
    return root / "tasks", jsonl


# -- task names -----------------------------------------------------------------------------------


def test_unknown_benchmark_names_the_known_ones():
    known = "videomme, vdgsynth, infinibench_ga, mvbench, egoschema, egoschema_subset"
    with pytest.raises(ValueError, match=f"'foo_vdg_black': unknown benchmark 'foo'; known: {known}$"):
        expand_tasks(["foo_vdg_black"])
    assert list(dict.fromkeys(b.report_name for b in BENCHMARKS.values())) == known.split(", ")


@pytest.mark.parametrize(
    ("typo", "meant"), [("videome", "videomme"), ("mvbech", "mvbench"), ("mvbench_action_cout", "mvbench_action_count")]
)
def test_a_benchmark_typo_gets_did_you_mean(typo, meant):
    with pytest.raises(TaskError, match=rf"unknown benchmark '{typo}' \(did you mean '{meant}'\?\); known: "):
        expand_tasks([f"{typo}_vdg_black"])


def test_a_group_tag_names_every_sub_task():
    black = expand_tasks(["mvbench_vdg_black"])
    assert len(black) == 20 and black[0] == "mvbench_action_sequence_vdg_black"
    assert expand_tasks(["mvbench_action_count_vdg_reversed"]) == ["mvbench_action_count_vdg_reversed"]
    assert "mvbench_state_change_vdg_reversed" in expand_tasks(["mvbench_vdg_ladder"])
    with pytest.raises(TaskError, match="condition 'nameswap' needs characters"):
        expand_tasks(["mvbench_vdg_nameswap"])


def test_unknown_condition_suggests_the_nearest_and_lists_the_known():
    with pytest.raises(TaskError) as info:
        expand_tasks(["vdgsynth_vdg_orig", "videomme_vdg_blak"])
    message = str(info.value)
    assert message.startswith("'videomme_vdg_blak': unknown condition 'blak' (did you mean 'black'?); known: orig, ")
    assert ", ".join(CONDITIONS) in message and "<benchmark>_vdg_crf" in message and "\n" not in message


def test_a_name_not_of_the_vdg_form_lists_benchmarks_and_conditions():
    with pytest.raises(TaskError, match="'videomme' is not a vdg task or tag .*benchmarks: videomme, vdgsynth"):
        expand_tasks(["videomme"])
    with pytest.raises(TaskError, match="unknown condition 'ladders' \\(did you mean 'ladder'\\?\\)"):
        expand_tasks(["vdgsynth_vdg_ladders"])


def test_tags_and_names_expand_in_declaration_order_without_duplicates():
    crf = [f"videomme_vdg_crf{c}" for c in (18, 23, 28, 33, 38)]
    assert expand_tasks(["videomme_vdg_crf", " videomme_vdg_crf23 ", ""]) == crf
    added = ["downscale112", "downscale224", "downscale448", "blur", "mute"]  # by their family's tag (vdg_tasks.extend)
    rotations = [f"options_rotated{k}" for k in range(1, 8)]  # by their family's tags (circular, circular<N>)
    left_out = ("blind", *added, *rotations)
    tagged = [f"vdgsynth_vdg_{c.name}" for c in BENCHMARKS["vdgsynth"].conditions() if c.name not in left_out]
    assert expand_tasks(["vdgsynth_vdg"]) == tagged  # blind is run by name
    assert expand_tasks(["vdgsynth_vdg_circular4"]) == [f"vdgsynth_vdg_{c}" for c in rotations[:3]]
    assert expand_tasks(["vdgsynth_vdg_circular"]) == [f"vdgsynth_vdg_{c}" for c in rotations]
    assert expand_tasks(["vdgsynth_vdg_detail", "vdgsynth_vdg_audio"]) == [f"vdgsynth_vdg_{c}" for c in added]
    assert expand_tasks(["vdgsynth_vdg_blind"]) == ["vdgsynth_vdg_blind"]
    assert "mvbench_action_count_vdg_blind" in expand_tasks(["mvbench_vdg_blind"])
    assert "vdgsynth_vdg_blind" not in expand_tasks(["vdgsynth_vdg_ladder"])
    tracking = ["orig", "black", "oracle", "nameswap", "open", "abstain", "metadata", "subtitles"]
    assert expand_tasks(["infinibench_ga_vdg_tracking"]) == [f"infinibench_ga_vdg_{c}" for c in tracking]


def test_a_condition_the_benchmark_cannot_carry_names_what_is_missing():
    with pytest.raises(TaskError, match="'videomme_vdg_nameswap': condition 'nameswap' needs characters"):
        expand_tasks(["videomme_vdg_nameswap"])


# -- planning -------------------------------------------------------------------------------------


def test_vdgsynth_before_vdg_synth_says_to_run_it(tmp_path):
    write_all(tmp_path / "tasks")  # the default questions file, data/questions.jsonl, was never generated
    with pytest.raises(TaskError, match="run `vdg synth` first") as info:
        plan(["vdgsynth_vdg_black"], yaml_root=tmp_path / "tasks")
    assert str(tmp_path / "tasks" / "vdgsynth" / "data" / "questions.jsonl") in str(info.value)


_PLAN_DRIVER = """
import json, sys
from pathlib import Path
from vdg_tasks.jobs.materialize import plan
jobs, unavailable = plan(["vdgsynth_vdg"], yaml_root=Path(sys.argv[1]))
print(json.dumps({
    "jobs": sorted([j.condition, j.video_id, j.source] for j in jobs),
    "unavailable": len(unavailable),
    "lmms_eval_tasks_imported": "lmms_eval.tasks" in sys.modules,
}))
"""


def test_plan_reads_a_local_benchmark_without_lmms_evals_task_index(synth_tasks):
    tasks, jsonl = synth_tasks
    proc = subprocess.run(
        [sys.executable, "-c", _PLAN_DRIVER, str(tasks)], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    docs = [json.loads(line) for line in jsonl.read_text().splitlines()]
    videos = sorted({(d["videoID"], d["video"]) for d in docs})
    assert len(videos) == 2
    # blind: nothing to build; the conditions declared through vdg_tasks.extend are not in vdgsynth_vdg
    own = [c.name for c in BENCHMARKS["vdgsynth"].conditions() if c.shows_video and c.in_main_tag]
    assert result["jobs"] == sorted([c, v, s] for c in own for v, s in videos)
    assert result["unavailable"] == 0 and result["lmms_eval_tasks_imported"] is False


def tag_docs(dataset):
    """A ``process_docs`` hook: lmms-eval must apply it, so such a benchmark is loaded through lmms-eval."""
    return dataset.map(lambda doc: {"tagged": f"seen-{doc['videoID']}"})


@pytest.mark.slow
def test_a_benchmark_needing_lmms_eval_indexes_only_its_own_folder(synth_tasks, tmp_path, monkeypatch):
    import shutil

    import lmms_eval.tasks

    tasks, jsonl = synth_tasks
    root = tmp_path / "tasks"
    shutil.copytree(tasks, root)
    template = root / "vdgsynth" / "_default_template_yaml"
    hook = "process_docs: !function tests.vdg_tasks.jobs.test_materialize.tag_docs\n"
    template.write_text(template.read_text() + hook)
    indexed: list[list[str]] = []

    class Spy(lmms_eval.tasks.TaskManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            indexed.append(list(self.all_tasks))

    monkeypatch.setattr(lmms_eval.tasks, "TaskManager", Spy)
    docs = mat.benchmark_docs("vdgsynth", "vdgsynth_vdg_black", root)
    assert len(docs) == len(jsonl.read_text().splitlines())
    assert all(d["tagged"] == f"seen-{d['videoID']}" for d in docs)
    (names,) = indexed
    assert "videomme" not in names and all(n.startswith("vdgsynth_vdg") for n in names), names


def _materialize_offline(tmp_path: Path, local_data: Path | None) -> subprocess.CompletedProcess:
    """``vdg materialize --tasks videomme_vdg_orig`` with no hub access and an empty hub cache."""
    env = {k: v for k, v in os.environ.items() if k != "VDG_LOCAL_DATA"}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env["VDG_CACHE"] = str(tmp_path / "cache")
    if local_data is not None:
        env["VDG_LOCAL_DATA"] = str(local_data)
    command = [sys.executable, "-m", "vdg_tasks.cli", "materialize", "--tasks", "videomme_vdg_orig", "--quiet"]
    return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)


def _vdg_message(stderr: str, prefix: str = "vdg materialize: ", log_lines: int = 3) -> list[str]:
    """stderr from vdg's own message on; before it at most ``log_lines`` log lines, and no traceback anywhere."""
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    assert start <= log_lines and all(" | " in line for line in lines[:start]), stderr[-3000:]
    assert "Traceback" not in stderr and "ImportError" not in stderr and "RetryError" not in stderr, stderr[-3000:]
    return lines[start:]


@pytest.mark.slow
def test_a_hub_benchmark_without_hub_or_local_copy_names_the_dataset_and_the_local_layout(tmp_path):
    from vdg_tasks.lmms.dataset_fields import layout_tree

    proc = _materialize_offline(tmp_path, None)
    assert proc.returncode == 2, proc.stderr[-3000:]
    message = _vdg_message(proc.stderr)
    assert message[0].startswith(
        "vdg materialize: videomme: the dataset lmms-eval/Video-MME was not found. "
        "lmms-eval downloads it from the Hugging Face hub, which failed here ("
    )
    assert message[1].startswith("To read a local copy instead, set VDG_LOCAL_DATA to the folder holding videomme/")
    tree = layout_tree(BENCHMARKS["videomme"].local).splitlines()
    assert message[2:] == tree and tree[0] == "$VDG_LOCAL_DATA/" and tree[-1].startswith("    └── videos/<videoID>.mp4")


@pytest.mark.parametrize(
    "no_hub",
    [
        {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
        {"HF_ENDPOINT": "http://127.0.0.1:9"},  # nothing listens: connection refused
    ],
    ids=["offline", "unreachable"],
)
@pytest.mark.slow
def test_an_lmms_eval_run_without_hub_or_local_copy_stops_with_the_same_message(tmp_path, no_hub):
    from vdg_tasks.lmms.dataset_fields import layout_tree

    env = {k: v for k, v in os.environ.items() if k not in ("VDG_LOCAL_DATA", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    env.update(no_hub, HF_HOME=str(tmp_path / "hf"), VDG_CACHE=str(tmp_path / "cache"))
    command = [sys.executable, "-m", "lmms_eval", "--model", "vdg_probe", "--tasks", "videomme_vdg_black"]
    command += ["--include_path", str(ROOT / "yaml_tasks"), "--output_path", str(tmp_path / "out"), "--log_samples"]
    proc = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr[-3000:]
    message = _vdg_message(proc.stderr, prefix="vdg: ", log_lines=8)  # lmms-eval's few start-up lines
    assert message[0].startswith("vdg: videomme: the dataset ")
    assert " was not found. lmms-eval downloads it from the Hugging Face hub, which failed here (" in message[0]
    assert message[1].startswith("To read a local copy instead, set VDG_LOCAL_DATA to the folder holding videomme/")
    assert message[2:] == layout_tree(BENCHMARKS["videomme"].local).splitlines()
    assert not (tmp_path / "out").exists()


def test_a_cached_hub_dataset_is_left_to_lmms_eval(tmp_path, monkeypatch):
    import huggingface_hub.constants

    from vdg_tasks.data.upstream import task_config
    from vdg_tasks.lmms import dataset_fields as sources

    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    sources._unreachable.cache_clear()
    assert "was not found" in sources.hub_problem("videomme")
    upstream = BENCHMARKS["videomme"].upstream
    repo = task_config(upstream.folder, upstream.config)["dataset_path"]
    (tmp_path / "hub" / f"datasets--{repo.replace('/', '--')}").mkdir(parents=True)  # as huggingface_hub names it
    assert sources.hub_problem("videomme") is None
    assert sources.hub_problem("vdgsynth") is None  # a local benchmark never asks the hub


@pytest.mark.parametrize("off", ["one level above", "one level below"])
@pytest.mark.slow
def test_vdg_local_data_one_level_off_says_which_setting_would_find_the_copy(tmp_path, off):
    from tests.helpers.standins import videomme

    benchmarks = tmp_path / "data" / "benchmarks"
    videomme(benchmarks)  # benchmarks/videomme/{videomme/*.parquet, videos/}
    local = tmp_path / "data" if off == "one level above" else benchmarks / "videomme"
    proc = _materialize_offline(tmp_path, local)
    assert proc.returncode == 2, proc.stderr[-3000:]
    message = _vdg_message(proc.stderr)
    assert f"set VDG_LOCAL_DATA={benchmarks}" in " ".join(message[:2]), message
    assert "$VDG_LOCAL_DATA/" in message and "└── videomme/" in message
    fixed = _materialize_offline(tmp_path, benchmarks)
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert "2 source videos checked, 0 failed" in fixed.stdout


# -- running --------------------------------------------------------------------------------------


def test_summary_counts_source_checks_apart_from_the_cache(tmp_path, cache):
    a = str(write_source(tmp_path / "a.mp4", seed=1))
    b = str(write_source(tmp_path / "b.mp4", seed=2))
    jobs = [Job("vdgsynth", c, vid, src) for vid, src in (("a", a), ("b", b)) for c in ("orig", "black", "single")]
    first = summarize(run_jobs(jobs, workers=2, progress=False))
    assert (first.built, first.cached, first.sources_checked, first.failed) == (4, 0, 2, ())
    unavailable = [mat.Outcome(Job("vdgsynth", "black", "c", ""), None, False, "video path:c.mp4 does not exist")]
    second = summarize(run_jobs(jobs, workers=1, progress=False), unavailable)
    assert (second.built, second.cached, second.sources_checked, len(second.failed)) == (0, 4, 2, 1)
    assert second.line() == (
        "0 videos built, 4 already cached, 2 source videos checked, 1 failed "
        "(those questions are logged as error rows when evaluated)"
    )
    assert second.failure_lines() == ["  vdgsynth/black c: video path:c.mp4 does not exist"]


def test_a_source_shown_under_orig_and_the_text_conditions_is_counted_once(tmp_path):
    sources = {f"v{i}": str(tmp_path / f"v{i}.mp4") for i in range(4)}
    shown_as_is = ("orig", "nameswap", "open", "abstain")
    outcomes = [
        mat.Outcome(Job("vdgsynth", c, vid, src), Path(src), False, None)
        for vid, src in sources.items()
        for c in shown_as_is
    ]
    summary = summarize(outcomes)
    assert summary.sources_checked == len(sources) == 4  # not 4 x 4 jobs
    assert "4 source videos checked" in summary.line()


def test_any_exception_while_building_is_that_jobs_failure(tmp_path, cache, monkeypatch):
    import vdg_tasks.perturb.video

    src = str(write_source(tmp_path / "s.mp4"))
    real = vdg_tasks.perturb.video.render

    def flaky(condition, *args, **kwargs):
        if condition.name == "single":
            raise RuntimeError("libx264 did not reproduce the picture")
        return real(condition, *args, **kwargs)

    monkeypatch.setattr(vdg_tasks.perturb.video, "render", flaky)
    jobs = [Job("vdgsynth", c, "s", src) for c in ("orig", "black", "single", "ordered")]
    outcomes = {o.job.condition: o for o in run_jobs(jobs, workers=1, progress=False)}
    assert outcomes["single"].error == "RuntimeError: libx264 did not reproduce the picture"
    assert outcomes["single"].path is None
    assert [c for c, o in outcomes.items() if o.error is None] == ["orig", "black", "ordered"]
    summary = summarize(outcomes.values())
    assert (summary.built, summary.sources_checked, [o.job.condition for o in summary.failed]) == (2, 1, ["single"])


def test_unwritable_cache_is_one_error_before_any_work_and_orig_needs_no_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")  # $VDG_CACHE below a regular file: unwritable even for root
    monkeypatch.setenv("VDG_CACHE", str(blocker / "cache"))
    src = str(write_source(tmp_path / "s.mp4"))
    with pytest.raises(CacheUnwritable, match="set VDG_CACHE to a writable folder") as info:
        run_jobs([Job("vdgsynth", c, "s", src) for c in ("orig", "black", "single")], progress=False)
    assert info.value.folder == blocker / "cache"
    summary = summarize(run_jobs([Job("vdgsynth", "orig", "s", src)], progress=False))
    assert (summary.sources_checked, summary.failed) == (1, ())


def test_a_run_first_sweeps_leftovers_of_killed_runs(tmp_path, cache):
    dead = subprocess.run([sys.executable, "-c", "print(__import__('os').getpid())"], capture_output=True, text=True)
    stale = cache / "ab" / f"{'a' * 32}.tmp-{int(dead.stdout)}.mp4"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"half a video")
    src = str(write_source(tmp_path / "s.mp4"))
    run_jobs([Job("vdgsynth", "black", "s", src)], progress=False)
    assert not stale.exists() and list(cache.rglob("*.tmp-*")) == []


def test_a_corrupt_source_fails_only_its_own_jobs(tmp_path, cache):
    good = str(write_source(tmp_path / "good.mp4", seed=1))
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(np.random.default_rng(0).integers(0, 256, 20_000, dtype=np.uint8).tobytes())
    conditions = ("orig", "black", "ordered", "crf28")
    jobs = [Job("vdgsynth", c, vid, src) for vid, src in (("bad", str(bad)), ("good", good)) for c in conditions]
    outcomes = run_jobs(jobs, workers=2, progress=False)
    failed = {o.job.condition for o in outcomes if o.error is not None}
    assert failed == set(conditions) and all(o.job.video_id == "bad" for o in outcomes if o.error is not None)
    assert all("bad.mp4" in o.error and o.path is None for o in outcomes if o.error is not None)
    summary = summarize(outcomes)
    assert (summary.built, summary.sources_checked, len(summary.failed)) == (3, 1, 4)
    assert len(list(cache.rglob("*.mp4"))) == 3 and list(cache.rglob("*.tmp-*")) == []


_REAL_RUN = mat._run


def _die_on_video_b(job: Job) -> mat.Outcome:
    """The job function, except that a worker handed video ``b`` dies (once per marker file, or always)."""
    marker = os.environ.get("VDG_TEST_DIE_ONCE")
    if job.video_id == "b":
        if marker is None:
            os._exit(1)
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            pass
        else:
            os._exit(1)
    return _REAL_RUN(job)


@pytest.mark.slow
def test_a_dead_worker_s_jobs_are_retried_in_a_new_pool(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(mat, "_run", _die_on_video_b)  # the workers import it from this module
    monkeypatch.setenv("VDG_TEST_DIE_ONCE", str(tmp_path / "died"))
    a = str(write_source(tmp_path / "a.mp4", seed=1))
    b = str(write_source(tmp_path / "b.mp4", seed=2))
    jobs = [Job("vdgsynth", c, vid, src) for vid, src in (("a", a), ("b", b)) for c in ("black", "single")]
    outcomes = run_jobs(jobs, workers=2, progress=False)
    assert (tmp_path / "died").exists()  # a worker did die
    assert sorted((o.job.video_id, o.job.condition, o.error) for o in outcomes) == [
        (v, c, None) for v in "ab" for c in ("black", "single")
    ]
    assert len(list(cache.rglob("*.mp4"))) == 4 and list(cache.rglob("*.lock")) == []


@pytest.mark.slow
def test_a_job_whose_worker_dies_again_after_the_retry_fails(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(mat, "_run", _die_on_video_b)
    monkeypatch.delenv("VDG_TEST_DIE_ONCE", raising=False)
    videos = {v: str(write_source(tmp_path / f"{v}.mp4", seed=i)) for i, v in enumerate("abcd", start=1)}
    jobs = [Job("vdgsynth", "black", v, src) for v, src in videos.items()]
    outcomes = {o.job.video_id: o for o in run_jobs(jobs, workers=2, progress=False)}
    assert sorted(outcomes) == ["a", "b", "c", "d"] and outcomes["b"].path is None
    assert "a worker process died" in outcomes["b"].error and "retried alone" in outcomes["b"].error
    # the job that kills its worker every time takes no other job down with it
    assert all(outcomes[v].error is None and outcomes[v].path is not None for v in "acd")
    assert list(cache.rglob("*.lock")) == []


def test_vdg_materialize_exits_non_zero_listing_every_failure_until_a_rerun_builds_them(
    synth_tasks, cache, monkeypatch, capsys
):
    import vdg_tasks.lmms.yamlgen
    import vdg_tasks.perturb.video
    from vdg_tasks.cli import main as vdg_main

    tasks, _ = synth_tasks
    monkeypatch.setattr(vdg_tasks.lmms.yamlgen, "YAML_ROOT", tasks)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    args = ["materialize", "--tasks", "vdgsynth_vdg_black,vdgsynth_vdg_single", "--workers", "1", "--quiet"]
    real = vdg_tasks.perturb.video.render

    def broken(condition, *rest, **kwargs):
        if condition.name == "single":
            raise RuntimeError("libx264 did not reproduce the picture")
        return real(condition, *rest, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(vdg_tasks.perturb.video, "render", broken)
        assert vdg_main(args) == 1
    err = capsys.readouterr().err
    listed = [line for line in err.splitlines() if line.startswith("  vdgsynth/single ")]
    assert len(listed) == 2 and all(
        line.endswith("RuntimeError: libx264 did not reproduce the picture") for line in listed
    )
    assert "vdg materialize: 2 failed (listed above)" in err
    assert list(cache.rglob("*.lock")) == []
    assert vdg_main(args) == 0  # fixed: the rerun builds the two and finds the two others cached
    assert "2 videos built, 2 already cached" in capsys.readouterr().out
    assert list(cache.rglob("*.lock")) == []


def test_removing_idle_locks_keeps_the_ones_a_live_build_holds(tmp_path):
    from filelock import FileLock

    held, idle = tmp_path / "ab" / "held.mp4.lock", tmp_path / "cd" / "idle.mp4.lock"
    with FileLock(str(idle)):
        pass  # a finished build's lock: the file stays after release
    with FileLock(str(held)):
        assert mat.remove_idle_locks(tmp_path) == [idle]
        assert held.exists() and not idle.exists()
    assert mat.remove_idle_locks(tmp_path) == [held]
    assert list(tmp_path.rglob("*.lock")) == []


_SHARED_CACHE_DRIVER = """
import json, sys, time
from pathlib import Path
from vdg_tasks.jobs.materialize import Job, run_jobs
go = Path(sys.argv[1])
while not go.exists():  # start together with the other process
    time.sleep(0.01)
jobs = [Job("vdgsynth", c, f"s{i}", src) for i, src in enumerate(sys.argv[3:]) for c in sys.argv[2].split(",")]
outcomes = run_jobs(jobs, workers=1, progress=False)
print(json.dumps([[o.job.condition, o.job.video_id, o.path, o.hit, o.error] for o in outcomes]))
"""


@pytest.mark.slow
def test_processes_sharing_a_cache_build_each_video_once_and_publish_only_whole_files(tmp_path, cache):
    from vdg_tasks.perturb.cache import entry_problem

    sources = [str(write_source(tmp_path / f"s{i}.mp4", n_frames=160, size=(192, 128), seed=i)) for i in range(3)]
    conditions = "black,single,ordered,shuffled,crf28"
    go = tmp_path / "go"
    env = {**os.environ, "VDG_CACHE": str(cache)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SHARED_CACHE_DRIVER, str(go), conditions, *sources],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    time.sleep(1.0)  # both have imported vdg_tasks and are polling
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    n_jobs = len(sources) * len(conditions.split(","))
    assert all(len(r) == n_jobs and all(error is None for *_, error in r) for r in results)
    by_job: dict[tuple[str, str], list[tuple[str, bool]]] = {}
    for r in results:
        for cond, vid, path, hit, _ in r:
            by_job.setdefault((cond, vid), []).append((path, hit))
    for job, seen in by_job.items():
        (path_a, hit_a), (path_b, hit_b) = seen
        assert path_a == path_b, job
        assert [hit_a, hit_b].count(False) == 1, (job, seen)  # built by exactly one process
    published = sorted(cache.rglob("*.mp4"))
    assert len(published) == n_jobs and list(cache.rglob("*.tmp-*")) == []
    for path in published:
        assert entry_problem(path, path.stem) is None  # size and digest as published: never a partial file
        with av.open(str(path)) as container:
            assert sum(1 for _ in container.decode(video=0)) > 0


# -- stopping -------------------------------------------------------------------------------------


def _noisy_source(path: Path, n_frames: int, seed: int) -> str:
    """Random pixels: slow to re-encode at CRF 18, so the workers are busy when the test stops them."""
    rng = np.random.default_rng(seed)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=8)
        stream.width, stream.height, stream.pix_fmt = 320, 240, "yuv420p"
        stream.options = {"preset": "ultrafast", "crf": "30"}
        for _ in range(n_frames):
            frame = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return str(path)


@pytest.fixture(scope="module")
def slow_sources(tmp_path_factory):
    folder = tmp_path_factory.mktemp("noisy")
    return [_noisy_source(folder / f"n{i}.mp4", n_frames=600, seed=i) for i in range(3)]


_RUN_DRIVER = """
import sys
from vdg_tasks.jobs.materialize import Job, run_jobs
jobs = [Job("vdgsynth", "crf18", f"n{i}", src) for i, src in enumerate(sys.argv[1:])]
run_jobs(jobs, workers=2, progress=False)
print("DONE", flush=True)
"""


def _running(procs: list[psutil.Process]) -> list[psutil.Process]:
    alive = []
    for p in procs:
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                alive.append(p)
        except psutil.NoSuchProcess:
            pass
    return alive


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["SIGINT to the process group", "SIGTERM", "SIGKILL"])
def test_stopping_a_run_stops_its_workers_and_leaves_no_temporary_file(stop, slow_sources, cache, tmp_path):
    # Each job re-encodes for many seconds: workers that outlive the run would still be encoding at the deadline.
    env = {**os.environ, "VDG_CACHE": str(cache)}
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as stdout, err.open("w") as stderr:  # files, not pipes: orphans would hold a pipe open
        driver = subprocess.Popen(
            [sys.executable, "-c", _RUN_DRIVER, *slow_sources],
            env=env,
            cwd=ROOT,
            start_new_session=True,  # its own process group, as a terminal's foreground job
            stdout=stdout,
            stderr=stderr,
        )
    try:
        parent = psutil.Process(driver.pid)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until both workers are writing a video
            workers = [p for p in parent.children(recursive=True) if "resource_tracker" not in " ".join(p.cmdline())]
            if len(workers) == 2 and len(list(cache.rglob("*.tmp-*.mp4"))) == 2:
                break
            assert driver.poll() is None, (out.read_text(), err.read_text()[-3000:])
            time.sleep(0.05)
        else:
            pytest.fail("the workers never started encoding")
        family = parent.children(recursive=True)
        stopped = time.monotonic()
        if stop.startswith("SIGINT"):
            os.killpg(driver.pid, signal.SIGINT)  # what Ctrl-C does: every process of the group gets it
        else:
            os.kill(driver.pid, getattr(signal, stop))
        driver.wait(timeout=10)
        while _running(family) and time.monotonic() - stopped < 6:
            time.sleep(0.05)
        assert _running(family) == [], [p.cmdline() for p in _running(family)]
        expected_rc = {"SIGINT": -signal.SIGINT, "SIGTERM": 128 + signal.SIGTERM, "SIGKILL": -signal.SIGKILL}
        assert driver.returncode == expected_rc[stop.split()[0]], err.read_text()[-3000:]
        assert "DONE" not in out.read_text()
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    # The workers removed what they were writing; the pending job was cancelled, not run.
    assert list(cache.rglob("*.tmp-*")) == []
    assert list(cache.rglob("*.mp4")) == []
    run_jobs([Job("vdgsynth", "black", "n0", slow_sources[0])], progress=False)  # the next run
    assert list(cache.rglob("*.tmp-*")) == []


def test_the_manifest_is_written_with_secrets_redacted(tmp_path):
    """A source URL carrying credentials and an error echoing a settings string reach the manifest redacted; the
    rest of each entry is written as it was."""
    from vdg_tasks.jobs.materialize import Job, Outcome, write_manifest

    leaky = Job("videomme", "black", "v1", "https://alice:SECRET1@data.example/v1.mp4")
    plain = Job("videomme", "black", "v2", "/data/v2.mp4")
    outcomes = [
        Outcome(leaky, None, False, "fetch failed with token=SECRET2 (api_key=SECRET3)"),
        Outcome(plain, "/cache/ab.mp4", False, None),
    ]
    written = write_manifest(tmp_path / "manifest.json", outcomes, [], None, ["videomme_vdg_black"])
    text = written.read_text()
    assert "SECRET" not in text
    entries = {entry["video_id"]: entry for entry in json.loads(text)["jobs"]}
    assert entries["v1"]["source"] == "https://<redacted>@data.example/v1.mp4"
    assert entries["v1"]["error"] == "fetch failed with token=<redacted> (api_key=<redacted>)"
    assert entries["v2"]["source"] == "/data/v2.mp4" and entries["v2"]["path"] == "/cache/ab.mp4"
