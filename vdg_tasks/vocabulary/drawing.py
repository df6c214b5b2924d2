"""How the synthetic benchmarks draw what their questions ask about: the palette, the border ring and the centre
box of vdgsynth, and the cast of the synthetic episodes, their outfits and where each stands. The generators
(``vdg_tasks.synthetic``) draw with it; the reference model ``vdg_probe`` (``model_wrappers.probe``) reads
frames with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np

#: Named colours, pairwise far apart in RGB (>= 80) and none dark: the probe's "world knowledge".
PALETTE: Mapping[str, tuple[int, int, int]] = MappingProxyType(
    {
        "red": (220, 30, 30),
        "green": (30, 170, 40),
        "blue": (30, 60, 220),
        "yellow": (240, 225, 30),
        "cyan": (30, 215, 225),
        "magenta": (215, 40, 200),
        "orange": (245, 140, 20),
        "purple": (120, 40, 160),
        "white": (245, 245, 245),
        "gray": (128, 128, 128),
    }
)

#: The background grey of every synthetic frame.
BACKGROUND: tuple[int, int, int] = (70, 70, 70)


def border_px(width: int, height: int) -> int:
    """Thickness of the border ring: one sixth of the short side (20 px at 160x120)."""
    return max(2, round(min(width, height) / 6))


def centre_box(width: int, height: int) -> tuple[int, int, int, int]:
    """The centre rectangle as (x0, y0, x1, y1), half the frame in each dimension, centred."""
    return (width // 4, height // 4, width - width // 4, height - height // 4)


def nearest_colour(rgb: Sequence[float]) -> str:
    """Name of the palette colour nearest (Euclidean RGB) to ``rgb``."""
    names = list(PALETTE)
    table = np.array([PALETTE[n] for n in names], dtype=np.float64)
    d = ((table - np.asarray(rgb, dtype=np.float64)) ** 2).sum(axis=1)
    return names[int(np.argmin(d))]


#: name -> gender, in slot order (slot = screen position, left to right).
CAST: Mapping[str, str] = MappingProxyType(
    {"Alice": "female", "Dev": "male", "Beth": "female", "Eli": "male", "Cora": "female", "Finn": "male"}
)

#: Palette colour -> outfit description (colour word first). Gray and white are never outfits.
OUTFITS: Mapping[str, str] = MappingProxyType(
    {
        "red": "red jacket",
        "green": "green sweater",
        "blue": "blue shirt",
        "yellow": "yellow raincoat",
        "cyan": "cyan hoodie",
        "magenta": "magenta dress",
        "orange": "orange vest",
        "purple": "purple blazer",
    }
)
if not set(OUTFITS) <= set(PALETTE) or {"gray", "white"} & set(OUTFITS):  # pragma: no cover - import-time check
    raise RuntimeError("OUTFITS must use PALETTE colours other than gray and white")

N_SLOTS = len(CAST)


def figure_boxes(width: int, height: int, slot: int) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """(body_box, head_box) of the figure in ``slot``, each as (x0, y0, x1, y1), half-open.

    Slot ``i`` spans ``x`` in ``[i*width//6, (i+1)*width//6)``. The body is the slot's middle half
    horizontally, from 40% to 92% of the height; the head is the middle quarter, 16% to 36%.
    """
    if not 0 <= slot < N_SLOTS:
        raise ValueError(f"slot must be in 0..{N_SLOTS - 1}, got {slot}")
    if width < 2 * N_SLOTS or height < 8:
        raise ValueError(f"frame {width}x{height} too small for {N_SLOTS} figures")
    sx0, sx1 = slot * width // N_SLOTS, (slot + 1) * width // N_SLOTS
    sw = sx1 - sx0
    body = (sx0 + sw // 4, round(0.40 * height), sx1 - sw // 4, round(0.92 * height))
    head = (sx0 + 3 * sw // 8, round(0.16 * height), sx1 - 3 * sw // 8, round(0.36 * height))
    return body, head
