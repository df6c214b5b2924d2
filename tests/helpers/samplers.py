"""The frame samplers of the models vdg targets, called exactly as the models call them."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


def sample_lmms(path: Path, k: int) -> list[np.ndarray]:
    """lmms-eval's ``read_video`` (PyAV; truncating ``np.linspace(..., dtype=int)``)."""
    from lmms_eval.models.model_utils.load_video import read_video

    return list(read_video(str(path), num_frm=k))


def sample_decord(path: Path, k: int) -> list[np.ndarray]:
    """decord ``get_batch(np.linspace(0, len - 1, k).astype(int))`` (llava, internvl loaders)."""
    import decord

    reader = decord.VideoReader(str(path))
    indices = np.linspace(0, len(reader) - 1, k).astype(int)
    return list(reader.get_batch(indices.tolist()).asnumpy())


def sample_qwen(path: Path, k: int) -> list[np.ndarray]:
    """qwen_vl_utils ``fetch_video(nframes=k)`` (decord backend; rounds the positions)."""
    from qwen_vl_utils import vision_process

    # The torchvision reader is broken with torchvision 0.29; FORCE_QWENVL_VIDEO_READER is read at import.
    os.environ["FORCE_QWENVL_VIDEO_READER"] = "decord"
    vision_process.FORCE_QWENVL_VIDEO_READER = "decord"
    vision_process.get_video_reader_backend.cache_clear()
    video = vision_process.fetch_video({"video": str(path), "nframes": k})  # (k, 3, H, W) float tensor
    return [frame.numpy() for frame in video]


SAMPLERS = {"lmms_read_video": sample_lmms, "decord_linspace": sample_decord, "qwen_fetch_video": sample_qwen}


def collapse(values: list[int]) -> list[int]:
    """``values`` with consecutive repeats merged: the order in which distinct pictures are seen."""
    return [v for i, v in enumerate(values) if i == 0 or values[i - 1] != v]
