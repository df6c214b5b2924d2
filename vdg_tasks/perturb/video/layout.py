"""Where the held conditions' key frames come from and where they go (pure functions, no decoding).

Vocabulary: a source has ``n_frames`` frames; a held condition asks for ``k`` key frames. It shows
``effective_k(n_frames, k) = min(k, n_frames)`` of them, taken at the centres of equal source
segments (:func:`key_frame_indices`). The output has ``r * n_frames`` frames at ``r`` times the
source's rate (the same duration), ``r = output_rate_factor(n_frames, k)``, so that it has at
least ``2k`` frames; :func:`output_segment_bounds` splits them into one segment per shown key frame.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = [
    "HoldOrder",
    "effective_k",
    "hold_order",
    "key_frame_indices",
    "output_rate_factor",
    "output_segment_bounds",
    "segment_bounds",
]

HoldOrder = Literal["ordered", "shuffled", "single", "reversed"]
HOLD_ORDERS: tuple[str, ...] = ("ordered", "shuffled", "single", "reversed")


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got k={k}.")


def _check_n_frames(n_frames: int) -> None:
    if n_frames < 1:
        raise ValueError(f"A video needs at least 1 frame, got n_frames={n_frames}.")


def effective_k(n_frames: int, k: int) -> int:
    """How many key frames a held condition asking for ``k`` shows from ``n_frames`` frames: ``min(k, n_frames)``.

    Raises:
        ValueError: ``k < 1`` or ``n_frames < 1``.
    """
    n_frames, k = int(n_frames), int(k)
    _check_k(k)
    _check_n_frames(n_frames)
    return min(k, n_frames)


def output_rate_factor(n_frames: int, k: int) -> int:
    """The integer ``r`` by which a held (or black) output multiplies the source's frame rate and count.

    The smallest ``r >= 1`` with ``r * n_frames >= 2k``: with at least ``2k`` output frames, a uniform
    sampler drawing ``k`` frames lands exactly one draw in each held segment (see
    :func:`segment_bounds`), and samplers that refuse to draw more frames than a video has
    (qwen_vl_utils) can draw ``k``. The duration is unchanged: ``r * n_frames`` frames at ``r * fps``.

    Raises:
        ValueError: ``k < 1`` or ``n_frames < 1``.
    """
    n_frames, k = int(n_frames), int(k)
    _check_k(k)
    _check_n_frames(n_frames)
    return max(1, -(-2 * k // n_frames))


def _sampler_positions(n_frames: int, k: int) -> np.ndarray:
    """Positions of a uniform sampler's K draws, ``np.linspace(0, n_frames - 1, k)``."""
    return np.linspace(0.0, n_frames - 1.0, k)


def segment_bounds(n_frames: int, k: int) -> np.ndarray:
    """``k + 1`` frame indices; segment ``i`` is frames ``[b[i], b[i+1])``.

    Boundaries start from the equal-duration split ``round(i * n_frames / k)`` and are moved (by at
    most a frame or two) so that a uniform sampler drawing ``k`` frames at
    ``np.linspace(0, n_frames - 1, k)`` lands exactly one draw in each segment, whether it truncates
    the positions (lmms-eval, decord: ``astype(int)``) or rounds them (qwen_vl_utils), including
    float32 round-off. This is guaranteed when ``n_frames >= 2 * k``; with ``k <= n_frames < 2k``
    segments are still non-empty but a sampler may straddle one (held outputs therefore raise their
    frame count, see :func:`output_rate_factor`).

    Raises:
        ValueError: ``k < 1`` or ``n_frames < k``.
    """
    n_frames, k = int(n_frames), int(k)
    _check_k(k)
    if n_frames < k:
        raise ValueError(
            f"Cannot split {n_frames} frames into k={k} segments: a video needs at least k frames "
            f"(use effective_k(n_frames, k) segments)."
        )
    bounds = np.empty(k + 1, dtype=np.int64)
    bounds[0], bounds[k] = 0, n_frames
    x = _sampler_positions(n_frames, k)
    eps = 1e-6 * n_frames + 1e-9  # float32 linspace (torch) is off by a few ulp of n_frames
    for i in range(1, k):
        ideal = int(np.floor(i * n_frames / k + 0.5))
        lo = int(np.floor(x[i - 1] + 0.5 + eps)) + 1  # after every rounding of draw i-1
        hi = int(np.floor(x[i] - eps))  # at or before every truncation of draw i
        b = max(min(ideal, hi), lo)
        bounds[i] = min(max(b, bounds[i - 1] + 1), n_frames - (k - i))
    return bounds


def key_frame_indices(n_frames: int, k: int) -> np.ndarray:
    """The ``effective_k(n_frames, k)`` source frames a held condition shows: the centres of equal segments.

    With ``n_frames <= k`` that is every frame, ``arange(n_frames)``.

    Raises:
        ValueError: ``k < 1`` or ``n_frames < 1``.
    """
    b = segment_bounds(n_frames, effective_k(n_frames, k))
    return (b[:-1] + b[1:] - 1) // 2


def output_segment_bounds(n_frames: int, k: int) -> np.ndarray:
    """``effective_k(n_frames, k) + 1`` indices splitting the ``r * n_frames`` output frames into held segments.

    ``r = output_rate_factor(n_frames, k)``. With ``n_frames >= k`` this is
    ``segment_bounds(r * n_frames, k)``: a uniform sampler drawing ``k`` frames lands one draw in each
    segment. With ``n_frames < k`` every source frame is a key frame, held for ``r`` output frames;
    the draws of a sampler drawing ``k`` frames are closer together than ``r``, so each segment
    gets at least one draw (and, the draws being ascending, the segments are seen in order).

    Raises:
        ValueError: ``k < 1`` or ``n_frames < 1``.
    """
    k_eff = effective_k(n_frames, k)
    r = output_rate_factor(n_frames, k)
    if k_eff == int(k):
        return segment_bounds(r * int(n_frames), k_eff)
    return np.arange(k_eff + 1, dtype=np.int64) * r


def hold_order(k: int, order: HoldOrder, seed: int) -> np.ndarray:
    """For each of the ``k`` output segments, which key frame (``0..k-1``) it shows.

    ``ordered``: ``arange(k)``; ``reversed``: ``arange(k)[::-1]`` (the last key frame first);
    ``single``: every segment shows key frame ``k // 2``; ``shuffled``:
    ``np.random.default_rng(seed).permutation(k)``, drawn again from the same generator until it is
    not the identity (so the result depends only on ``k`` and ``seed``). With ``k = 1`` (a one-frame
    source) no permutation differs from the identity: ``shuffled`` is ``[0]``, the one frame, like
    ``ordered`` and ``single``.

    Raises:
        ValueError: unknown ``order`` or ``k < 1``.
    """
    k = int(k)
    _check_k(k)
    if order == "ordered":
        return np.arange(k)
    if order == "reversed":
        return np.arange(k)[::-1].copy()
    if order == "single":
        return np.full(k, k // 2)
    if order == "shuffled":
        if k == 1:
            return np.zeros(1, dtype=np.int64)
        rng = np.random.default_rng(seed)
        identity = np.arange(k)
        while True:
            perm = rng.permutation(k)
            if not np.array_equal(perm, identity):
                return perm
    raise ValueError(f"Unknown hold order {order!r}; expected one of {', '.join(HOLD_ORDERS)}.")
