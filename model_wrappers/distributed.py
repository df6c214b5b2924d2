"""Data parallelism for vdg's lmms-eval models: one process per GPU (or CPU worker) under ``accelerate launch``.

lmms-eval shards a task's documents across processes itself (``build_all_requests(rank=...,
world_size=...)``), pads the shorter shards, and gathers the logged samples and metrics on the
main process. What it asks of a model is what its own simple models (``qwen2_vl``) set up in
``__init__``: ``rank``, ``world_size``, an ``accelerator`` and a ``device`` that the evaluator's
collectives can put a tensor on (``torch.tensor([n], device=lm.device)`` before
``all_gather_into_tensor``; with NCCL that must be the process's GPU). :class:`DataParallel` gives
vdg's models exactly that, from accelerate's state, when the process was launched as one of
several (``WORLD_SIZE`` > 1, or an already initialised process group); a single process is left
as it was: rank 0 of 1, no accelerator, CPU device.

The models are rule based and seeded per question, so an answer never depends on the rank.
"""

from __future__ import annotations

import os

import torch
from loguru import logger as eval_logger

__all__ = ["DataParallel", "launched_world_size"]

#: Environment variables that carry the number of processes of a launch (torchrun/accelerate, then MPI).
_WORLD_SIZE_ENV = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")


def launched_world_size() -> int:
    """Number of processes this one was launched among (1 outside a distributed launch)."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_world_size()
    for name in _WORLD_SIZE_ENV:
        value = os.environ.get(name, "").strip()
        if value:
            return int(value)
    return 1


class DataParallel:
    """Mixin for an lmms model: rank, world size, accelerator and device from ``accelerate``.

    Call :meth:`_init_processes` at the end of ``__init__`` (after ``lmms.__init__``, which sets
    rank 0 of 1).
    """

    _device: torch.device = torch.device("cpu")

    @property
    def device(self) -> torch.device:
        """The device of the evaluator's collectives: the process's accelerator device, else the CPU."""
        return self._device

    def _init_processes(self, name: str) -> None:
        world = launched_world_size()
        if world <= 1:
            return
        # accelerate (~3 s) only for a multi-process run, not for one process
        from accelerate import Accelerator

        accelerator = Accelerator()  # lmms-eval's CLI has already built the shared state; this joins it
        if accelerator.num_processes != world:
            raise RuntimeError(
                f"{name}: launched as one of {world} processes, but accelerate sees {accelerator.num_processes} "
                f"({accelerator.distributed_type}); on a machine without GPUs set ACCELERATE_USE_CPU=1 so that "
                "accelerate joins the processes over gloo (see docs/scale.md)"
            )
        self.accelerator = accelerator
        self._rank = accelerator.process_index  # global: lmms-eval shards by RANK, not LOCAL_RANK
        self._world_size = accelerator.num_processes
        self._device = accelerator.device
        eval_logger.info(
            f"{name}: process {self._rank} of {self._world_size} "
            f"(local {accelerator.local_process_index}, {accelerator.distributed_type}, "
            f"backend {accelerator.state.backend}, device {self._device})"
        )

    def _log_shard(self, name: str, n_requests: int) -> None:
        """Under several processes, say how many requests this one answers (evidence of the sharding)."""
        if self._world_size > 1:
            eval_logger.info(f"{name}: process {self._rank} of {self._world_size} answers {n_requests} requests")
