"""vdg's models under lmms-eval's own data parallelism: ``accelerate launch`` with two CPU processes (gloo).

A 2-process run of a vdgsynth task must give, question by question, exactly what a 1-process run
gives; lmms-eval must write each question once (gathered on the main process); and both processes
must have answered a share of the requests.

The launcher is ``ACCELERATE_USE_CPU=1 accelerate launch --multi_gpu --num_processes 2``: with
``--cpu``, accelerate 1.x starts a single process however large ``--num_processes`` is (its
multi-CPU launch goes through ``mpirun --hostfile``); ``--multi_gpu`` starts the workers with
torchrun, and ``ACCELERATE_USE_CPU=1`` makes each one join the group over gloo on the CPU
(``test_cpu_flag_alone_starts_one_process`` pins that behaviour down).

The fast tests at the end check the wiring in-process with a stand-in for ``accelerate.Accelerator``.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import accelerate
import pandas as pd
import pytest
import torch

from model_wrappers.baselines import VdgChance, VdgConstant
from model_wrappers.probe import VdgProbe
from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.runs import offline_env
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate

BIN = Path(sys.executable).parent
N_VIDEOS = 3
TASKS = "vdgsynth_vdg_orig,vdgsynth_vdg_black"
CONDITIONS = {"orig", "black"}
KEY = ["condition", "question_id"]
COMPARED = ["pred", "status", "correct", "response"]
SHARD_RE = re.compile(r"(vdg_\w+): process (\d+) of (\d+) answers (\d+) requests")
LAUNCH = ("--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_env(root: Path) -> dict[str, str]:
    """:func:`offline_env` plus what two CPU processes need to join over gloo on this machine."""
    return {**offline_env(root), "ACCELERATE_USE_CPU": "1", "MASTER_ADDR": "127.0.0.1", "OMP_NUM_THREADS": "1"}


def run(cmd: list[str], env: dict[str, str], out: Path) -> tuple[Path, str, float]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    # lmms-eval exits 0 even when the evaluation raised: the files are the evidence.
    assert proc.returncode == 0 and sorted(out.glob("*_samples_*.jsonl")), f"run failed:\n{log[-6000:]}"
    return out, log, seconds


def eval_args(tasks_dir: Path, out: Path, model: str, *extra: str) -> list[str]:
    return [
        "--model",
        model,
        *extra,
        "--tasks",
        TASKS,
        "--include_path",
        str(tasks_dir),
        "--log_samples",
        "--output_path",
        str(out),
        "--verbosity",
        "INFO",
    ]


def single(world: dict, name: str, model: str, *extra: str) -> tuple[Path, str, float]:
    out = world["root"] / "runs" / f"{name}-1proc"
    cmd = [str(BIN / "lmms-eval"), *eval_args(world["tasks"], out, model, *extra)]
    return run(cmd, offline_env(world["root"]), out)


def two_processes(world: dict, name: str, model: str, *extra: str) -> tuple[Path, str, float]:
    out = world["root"] / "runs" / f"{name}-2proc"
    cmd = [
        str(BIN / "accelerate"),
        "launch",
        *LAUNCH,
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(free_port()),
        "-m",
        "lmms_eval",
        *eval_args(world["tasks"], out, model, *extra),
    ]
    return run(cmd, launch_env(world["root"]), out)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("accelerate")
    jsonl = generate(root / "data", n_videos=N_VIDEOS, seed=0)
    write_all(root / "tasks", synth_data=str(jsonl))
    docs = [json.loads(line) for line in jsonl.read_text().splitlines()]
    return {"root": root, "tasks": root / "tasks", "qids": {d["question_id"] for d in docs}}


@pytest.fixture(scope="module")
def probe_runs(world):
    # The 1-process run first: it also builds the black videos in the shared cache.
    return {"one": single(world, "probe", "vdg_probe"), "two": two_processes(world, "probe", "vdg_probe")}


@pytest.fixture(scope="module")
def chance_runs(world):
    args = ("vdg_chance", "--model_args", "seed=7")
    return {"one": single(world, "chance", *args), "two": two_processes(world, "chance", *args)}


def per_question(out: Path) -> pd.DataFrame:
    frame = load_frame([out])
    return frame.set_index(KEY)[COMPARED].sort_index()


def assert_same_per_question(runs: dict, qids: set[str]) -> None:
    one, two = per_question(runs["one"][0]), per_question(runs["two"][0])
    assert set(one.index.get_level_values("condition")) == CONDITIONS
    assert len(one) == len(CONDITIONS) * len(qids) and set(one.index.get_level_values("question_id")) == qids
    pd.testing.assert_frame_equal(one, two)


def assert_each_question_logged_once(out: Path, qids: set[str]) -> None:
    files = sorted(out.glob("*_samples_*.jsonl"))
    assert len(files) == len(CONDITIONS)  # one samples log per task, written by the main process only
    for path in files:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        ids = [r["vdg"]["question_id"] for r in rows]
        assert sorted(ids) == sorted(qids), path.name
        assert len({r["doc_id"] for r in rows}) == len(rows), path.name


def assert_both_processes_answered(log: str, model: str, n_requests: int) -> None:
    shards = {int(rank): int(n) for name, rank, world, n in SHARD_RE.findall(log) if name == model and world == "2"}
    assert set(shards) == {0, 1}, log[-4000:]
    assert all(n > 0 for n in shards.values())
    # each process answers its shard; the shorter shard is padded to the longer one
    assert n_requests <= sum(shards.values()) <= n_requests + 2 * len(CONDITIONS)
    assert re.search(r"vdg_\w+: process 1 of 2 \(local 1, DistributedType.MULTI_CPU, backend gloo", log)


@pytest.mark.slow
def test_probe_two_processes_match_one_per_question(world, probe_runs):
    assert_same_per_question(probe_runs, world["qids"])
    two_out, two_log, _ = probe_runs["two"]
    assert_each_question_logged_once(two_out, world["qids"])
    assert_both_processes_answered(two_log, "vdg_probe", len(CONDITIONS) * len(world["qids"]))
    # the 1-process run is unchanged: no accelerator, no shard lines
    assert not SHARD_RE.search(probe_runs["one"][1])
    for label, (_, _, seconds) in probe_runs.items():
        print(f"vdg_probe {label} process(es): {seconds:.1f}s")


@pytest.mark.slow
def test_chance_two_processes_match_one_per_question(world, chance_runs):
    assert_same_per_question(chance_runs, world["qids"])
    two_out, two_log, _ = chance_runs["two"]
    assert_each_question_logged_once(two_out, world["qids"])
    assert_both_processes_answered(two_log, "vdg_chance", len(CONDITIONS) * len(world["qids"]))


@pytest.mark.slow
def test_cpu_flag_alone_starts_one_process(tmp_path):
    """Why the runs above use ``--multi_gpu`` + ``ACCELERATE_USE_CPU=1`` rather than ``--cpu --num_processes 2``.

    (That the ``--multi_gpu`` form does start two gloo processes the tests above check in their logs.)
    """
    script = tmp_path / "world.py"
    script.write_text(
        "import os\n"
        "from accelerate import Accelerator\n"
        "a = Accelerator()\n"
        "print('WORLD', os.environ.get('WORLD_SIZE'), a.num_processes, a.distributed_type, flush=True)\n"
    )
    cmd = [str(BIN / "accelerate"), "launch", "--cpu", "--num_processes", "2", "--num_machines", "1"]
    cmd += ["--mixed_precision", "no", "--dynamo_backend", "no", str(script)]
    proc = subprocess.run(cmd, env=launch_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.findall(r"^WORLD .*$", proc.stdout, re.M) == ["WORLD None 1 DistributedType.NO"], proc.stderr[-3000:]


class FakeAccelerator:
    """What ``DataParallel`` reads of an ``accelerate.Accelerator``: process ``index`` of ``n`` on the CPU."""

    def __init__(self, index: int, n: int) -> None:
        self.process_index = self.local_process_index = index
        self.num_processes = n
        self.device = torch.device("cpu")
        self.distributed_type = "MULTI_CPU" if n > 1 else "NO"
        self.state = SimpleNamespace(backend="gloo" if n > 1 else None)


MODELS = [
    pytest.param(VdgProbe, {}, id="vdg_probe"),
    pytest.param(VdgChance, {"seed": "7"}, id="vdg_chance"),
    pytest.param(VdgConstant, {"letter": "C"}, id="vdg_constant"),
]


@pytest.fixture
def no_launch(monkeypatch):
    for name in ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)

    def forbidden(*args, **kwargs):
        raise AssertionError("a single process must not build an Accelerator")

    monkeypatch.setattr(accelerate, "Accelerator", forbidden)


@pytest.mark.parametrize(("cls", "args"), MODELS)
def test_single_process_is_rank_0_of_1_without_accelerator(no_launch, cls, args):
    model = cls(**args)
    assert (model.rank, model.world_size, model.device) == (0, 1, torch.device("cpu"))
    assert not hasattr(model, "accelerator")


@pytest.mark.parametrize(("cls", "args"), MODELS)
def test_launched_process_takes_rank_world_device_from_accelerate(monkeypatch, cls, args):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setattr(accelerate, "Accelerator", lambda: FakeAccelerator(1, 2))
    model = cls(**args)
    assert (model.rank, model.world_size, model.device) == (1, 2, torch.device("cpu"))
    assert isinstance(model.accelerator, FakeAccelerator)


def test_launch_that_accelerate_does_not_join_is_refused(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setattr(accelerate, "Accelerator", lambda: FakeAccelerator(0, 1))
    with pytest.raises(RuntimeError, match="ACCELERATE_USE_CPU=1"):
        VdgChance()


def test_answers_do_not_depend_on_the_rank(monkeypatch):
    """The same requests get the same answers on rank 0 of 1 and on rank 1 of 2."""
    prompt = "Which colour is the border?\nA. red\nB. blue\nC. green\nD. yellow\nAnswer with the letter."
    docs = [{"question_id": f"s{i:03d}-1"} for i in range(20)]
    requests = [SimpleNamespace(args=(prompt, {}, lambda doc: [], i, "t", "test")) for i in range(len(docs))]

    def answers(world: int) -> list[str]:
        if world > 1:
            monkeypatch.setenv("WORLD_SIZE", str(world))
            monkeypatch.setattr(accelerate, "Accelerator", lambda: FakeAccelerator(world - 1, world))
        else:
            monkeypatch.delenv("WORLD_SIZE", raising=False)
        out = []
        for model in (VdgChance(seed=3), VdgConstant(letter="B"), VdgProbe()):
            model.task_dict = {"t": {"test": docs}}
            out += model.generate_until(requests)
        return out

    assert answers(1) == answers(2)
