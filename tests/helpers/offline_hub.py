"""The hub out of reach for a test: its caches empty folders in tmp, no local copies, not an lmms-eval run."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import datasets.config
import huggingface_hub.constants
import pytest

from vdg_tasks.lmms import dataset_fields


def no_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Yield with HF_HUB_OFFLINE set, the hub's and datasets' caches in ``tmp_path``, ``$VDG_LOCAL_DATA`` unset and
    ``sys.argv`` a test's; the per-process reachability cache cleared before and after."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf-hub"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets")
    monkeypatch.setattr(sys, "argv", ["pytest"])
    dataset_fields._unreachable.cache_clear()
    yield
    dataset_fields._unreachable.cache_clear()
