"""Video probing and the video transforms behind vdg's conditions (no lmms-eval import here)."""

from .probe import VideoDecodeError, VideoInfo, probe, validate
from .transforms import (
    HoldOrder,
    hold_order,
    key_frame_indices,
    render,
    segment_bounds,
    write_black,
    write_crf,
    write_held,
)

__all__ = [
    "HoldOrder",
    "VideoDecodeError",
    "VideoInfo",
    "hold_order",
    "key_frame_indices",
    "probe",
    "render",
    "segment_bounds",
    "validate",
    "write_black",
    "write_crf",
    "write_held",
]
