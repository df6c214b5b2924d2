"""Data parallelism of vdg's models (model_wrappers.distributed): the launched world size from the environment or
an initialised process group, and what ``DataParallel`` takes from accelerate, with fake accelerators and no
real process group.
"""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace

import pytest
import torch
from loguru import logger

from model_wrappers.distributed import DataParallel, launched_world_size

WORLD_SIZE_VARIABLES = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")


class FakeAccelerator:
    """What ``DataParallel`` reads of an ``accelerate.Accelerator``."""

    def __init__(self, index: int, n: int, *, local: int | None = None, device: torch.device | None = None) -> None:
        self.process_index = index
        self.local_process_index = index if local is None else local
        self.num_processes = n
        self.device = torch.device("cpu") if device is None else device
        self.distributed_type = "MULTI_CPU" if n > 1 else "NO"
        self.state = SimpleNamespace(backend="gloo" if n > 1 else None)


class Model(DataParallel):
    """An lmms-like model: ``lmms.__init__`` sets rank 0 of 1, then the mixin's set-up runs."""

    def __init__(self) -> None:
        self._rank, self._world_size = 0, 1
        self._init_processes("fake")


@pytest.fixture
def single_process(monkeypatch):
    """No launch variables and no process group."""
    for name in WORLD_SIZE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(torch.distributed, "is_initialized", lambda: False)


@pytest.fixture
def fake_accelerate(monkeypatch):
    """Install a stand-in ``accelerate`` module whose ``Accelerator()`` returns what the test sets (the real one
    takes seconds to import and would join a process group)."""
    module = types.ModuleType("accelerate")
    built: list[FakeAccelerator] = []

    def install(accelerator: FakeAccelerator) -> list[FakeAccelerator]:
        def make() -> FakeAccelerator:
            built.append(accelerator)
            return accelerator

        module.Accelerator = make  # type: ignore[attr-defined]
        return built

    def forbidden():
        raise AssertionError("a single process must not build an Accelerator")

    module.Accelerator = forbidden  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "accelerate", module)
    return install


@pytest.fixture
def info_messages():
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="INFO")
    yield messages
    logger.remove(sink)


def test_outside_a_launch_the_world_is_one_process(single_process):
    assert launched_world_size() == 1


@pytest.mark.parametrize("name", WORLD_SIZE_VARIABLES)
def test_each_launcher_variable_gives_the_world_size(monkeypatch, single_process, name):
    monkeypatch.setenv(name, "3")
    assert launched_world_size() == 3


def test_torchrun_world_size_wins_over_the_mpi_variables(monkeypatch, single_process):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("PMI_SIZE", "5")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "7")
    assert launched_world_size() == 2


def test_empty_or_blank_variables_are_skipped_and_values_are_stripped(monkeypatch, single_process):
    monkeypatch.setenv("WORLD_SIZE", "")
    monkeypatch.setenv("PMI_SIZE", "   ")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", " 4\n")
    assert launched_world_size() == 4


def test_a_world_size_that_is_not_a_number_is_an_error(monkeypatch, single_process):
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(ValueError, match="invalid literal for int"):
        launched_world_size()


def test_an_initialised_process_group_wins_over_the_environment(monkeypatch, single_process):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setattr(torch.distributed, "is_available", lambda: True)
    monkeypatch.setattr(torch.distributed, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.distributed, "get_world_size", lambda: 8)
    assert launched_world_size() == 8


def test_without_torch_distributed_only_the_environment_counts(monkeypatch, single_process):
    def never(*args):
        raise AssertionError("is_initialized must not be asked when torch.distributed is unavailable")

    monkeypatch.setenv("WORLD_SIZE", "6")
    monkeypatch.setattr(torch.distributed, "is_available", lambda: False)
    monkeypatch.setattr(torch.distributed, "is_initialized", never)
    assert launched_world_size() == 6


def test_a_single_process_stays_rank_0_of_1_on_the_cpu_without_accelerate(single_process, fake_accelerate):
    model = Model()
    assert (model._rank, model._world_size, model.device) == (0, 1, torch.device("cpu"))
    assert not hasattr(model, "accelerator")


def test_a_world_size_of_one_in_the_environment_is_a_single_process(monkeypatch, single_process, fake_accelerate):
    monkeypatch.setenv("WORLD_SIZE", "1")
    model = Model()
    assert (model._rank, model._world_size) == (0, 1) and not hasattr(model, "accelerator")


def test_a_launched_process_takes_global_rank_world_and_device_from_accelerate(
    monkeypatch, single_process, fake_accelerate
):
    monkeypatch.setenv("WORLD_SIZE", "4")
    accelerator = FakeAccelerator(3, 4, local=1, device=torch.device("cuda", 1))
    built = fake_accelerate(accelerator)
    model = Model()
    assert built == [accelerator]
    assert model.accelerator is accelerator
    # The global index (lmms-eval shards by RANK), not the local one.
    assert (model._rank, model._world_size, model.device) == (3, 4, torch.device("cuda", 1))


def test_the_device_of_one_model_does_not_leak_into_another(monkeypatch, single_process, fake_accelerate):
    monkeypatch.setenv("WORLD_SIZE", "2")
    fake_accelerate(FakeAccelerator(1, 2, device=torch.device("cuda", 1)))
    Model()
    monkeypatch.delenv("WORLD_SIZE")
    assert Model().device == torch.device("cpu")


@pytest.mark.parametrize(("world", "seen"), [(2, 1), (4, 2), (2, 3)])
def test_a_launch_that_accelerate_does_not_join_is_refused(monkeypatch, single_process, fake_accelerate, world, seen):
    monkeypatch.setenv("WORLD_SIZE", str(world))
    fake_accelerate(FakeAccelerator(0, seen))
    expected = f"^fake: launched as one of {world} processes, but accelerate sees {seen} .*ACCELERATE_USE_CPU=1"
    with pytest.raises(RuntimeError, match=expected):
        Model()


def test_a_launched_process_logs_its_place(monkeypatch, single_process, fake_accelerate, info_messages):
    monkeypatch.setenv("WORLD_SIZE", "2")
    fake_accelerate(FakeAccelerator(1, 2, local=0))
    Model()
    assert info_messages == ["fake: process 1 of 2 (local 0, MULTI_CPU, backend gloo, device cpu)"]


def test_the_shard_is_logged_only_under_several_processes(monkeypatch, single_process, fake_accelerate, info_messages):
    Model()._log_shard("fake", 10)
    assert info_messages == []
    monkeypatch.setenv("WORLD_SIZE", "2")
    fake_accelerate(FakeAccelerator(1, 2))
    model = Model()
    info_messages.clear()
    model._log_shard("fake", 7)
    assert info_messages == ["fake: process 1 of 2 answers 7 requests"]
