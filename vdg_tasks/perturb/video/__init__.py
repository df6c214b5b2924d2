"""Video probing and the video transforms behind vdg's conditions (no lmms-eval import here)."""

from .layout import (
    HoldOrder,
    effective_k,
    hold_order,
    key_frame_indices,
    output_rate_factor,
    output_segment_bounds,
    segment_bounds,
)
from .probe import (
    DisplayProperties,
    VideoDecodeError,
    VideoInfo,
    display_properties,
    output_mismatches,
    probe,
    validate,
)
from .transforms import frames_at, output_pix_fmt, render, write_black, write_crf, write_held, write_held_at

__all__ = [
    "DisplayProperties",
    "HoldOrder",
    "VideoDecodeError",
    "VideoInfo",
    "display_properties",
    "effective_k",
    "frames_at",
    "hold_order",
    "key_frame_indices",
    "output_mismatches",
    "output_pix_fmt",
    "output_rate_factor",
    "output_segment_bounds",
    "probe",
    "render",
    "segment_bounds",
    "validate",
    "write_black",
    "write_crf",
    "write_held",
    "write_held_at",
]
