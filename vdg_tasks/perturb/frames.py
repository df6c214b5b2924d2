"""The video conditions applied to a list of frames: for a task whose ``doc_to_visual`` returns decoded frames or
images (its own sampler has already chosen them) rather than a video file vdg could perturb.

The model is shown as many frames as the base gives (so the same number of visual tokens), each of the size and
mode of the frame it stands in for:

- ``identity`` (orig): the frames as they are;
- ``black``: every frame black;
- ``hold`` (single, ordered, shuffled, reversed): the list's key frames (``layout.key_frame_indices``: the centres
  of ``min(k, n)`` equal segments of the list), each shown over one equal segment of it (``layout.segment_bounds``),
  in ``layout.hold_order`` with the video's seed: the frame-list analogue of the video holds, which a model
  sampling the held video uniformly sees the same way;
- ``jpeg`` (the frame tasks' compression ladder, in place of ``crf``): each frame re-encoded as JPEG at the
  condition's quality with Pillow (4:2:0) and decoded back, in its own size and mode (an alpha channel comes back
  opaque);
- ``frames`` (a condition declared through ``vdg_tasks.extend``): its function on each frame as RGB (an image
  converted, then back to its mode; an array of another shape or type is refused), with the frame's index in the list;
- a video re-encoding (``crf``), a file (``container``) or a window (``hold_at``) needs the video stream: not
  offered (``FRAME_TRANSFORMS``).

Frames are PIL images or numpy arrays (height x width [x channels]); one array of stacked frames (frames x height
x width x channels) is taken as its frames and given back stacked; anything else is refused with its type.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vdg_tasks.perturb.video.layout import hold_order, key_frame_indices, segment_bounds
from vdg_tasks.vocabulary.conditions import Condition, TransformContext

#: The condition transforms that apply to a list of frames.
FRAME_TRANSFORMS: frozenset[str] = frozenset({"identity", "black", "hold", "none", "jpeg", "frames", "filter"})


class FramesUnavailable(ValueError):
    """The frames cannot be shown under the condition (none given, not frames, or a transform frames lack)."""


def _black_like(frame: Any) -> Any:
    if isinstance(frame, np.ndarray):
        return np.zeros_like(frame)
    from PIL import Image  # PIL only when frames are shown, not when lmms-eval imports vdg's hooks

    if isinstance(frame, Image.Image):
        return Image.new(frame.mode, frame.size)
    raise FramesUnavailable(f"a visual of type {type(frame).__name__} is not a frame (a PIL image or numpy array)")


def _jpeg(frame: Any, quality: int) -> Any:
    """``frame`` re-encoded as JPEG at ``quality`` and decoded back, in its own size, mode (and array dtype)."""
    from PIL import Image  # as in _black_like

    if isinstance(frame, np.ndarray) and frame.dtype != np.uint8:
        raise FramesUnavailable(f"JPEG takes 8-bit frames; this frame is {frame.dtype}")
    picture = Image.fromarray(frame) if isinstance(frame, np.ndarray) else frame
    encodable = picture if picture.mode in ("RGB", "L") else picture.convert("RGB")
    buffer = io.BytesIO()
    encodable.save(buffer, format="JPEG", quality=int(quality), subsampling="4:2:0")
    decoded = Image.open(buffer)
    decoded.load()
    decoded = decoded if decoded.mode == picture.mode else decoded.convert(picture.mode)
    return np.asarray(decoded, dtype=frame.dtype).reshape(frame.shape) if isinstance(frame, np.ndarray) else decoded


def _declared(condition: Condition, frame: Any, seed: int, index: int) -> Any:
    """``frame`` through a ``frames`` condition's function, as RGB, given back in its own kind and mode."""
    from PIL import Image  # as in _black_like

    apply = condition.apply
    assert apply is not None  # Condition checks a frames transform has one
    picture = frame if isinstance(frame, Image.Image) else None
    rgb = np.array(picture.convert("RGB") if picture is not None else frame)  # a copy: the base's frame stays as given
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise FramesUnavailable(f"condition {condition.name} takes (H, W, 3) uint8 frames; this frame is "
                                f"{rgb.dtype} {rgb.shape}")  # fmt: skip
    if condition.transform == "filter":
        # PyAV's libavfilter (~0.3 s) only when a filter condition changes frames, not when lmms-eval imports the hooks
        from vdg_tasks.perturb.video.filtergraph import filter_rgb

        out = filter_rgb(condition, rgb, seed, index)
    else:
        out = np.asarray(apply(rgb, TransformContext(condition.params, seed, index)))
    same_size = out.shape == rgb.shape or ("size" in condition.changes and out.ndim == 3 and out.shape[2] == 3)
    if out.dtype != np.uint8 or not same_size:
        raise FramesUnavailable(f"condition {condition.name}: frame {index} came back {out.dtype} {out.shape}, "
                                f"not {rgb.shape} uint8")  # fmt: skip
    if picture is None:
        return out
    changed = Image.fromarray(out)
    return changed if picture.mode == "RGB" else changed.convert(picture.mode)


def _check_frames(frames: Sequence[Any]) -> None:
    if not frames:
        raise FramesUnavailable("the task's doc_to_visual gave no frames")
    from PIL import Image  # as in _black_like

    odd = next((f for f in frames if not isinstance(f, np.ndarray | Image.Image)), None)
    if odd is not None:
        raise FramesUnavailable(f"a visual of type {type(odd).__name__} is not a frame (a PIL image or numpy array)")


def held_positions(n_frames: int, k: int, order: str, seed: int) -> np.ndarray:
    """For each of ``n_frames`` output positions, the input frame it shows under a hold of ``k`` key frames."""
    keys = key_frame_indices(n_frames, k)
    shown = keys[hold_order(len(keys), order, seed)]  # type: ignore[arg-type]
    bounds = segment_bounds(n_frames, len(keys))
    return np.repeat(shown, np.diff(bounds))


def _stacked(frames: Sequence[Any]) -> bool:
    return len(frames) == 1 and isinstance(frames[0], np.ndarray) and frames[0].ndim == 4


def frame_count(frames: Sequence[Any]) -> int:
    """How many frames ``frames`` holds (a stacked array: its first axis)."""
    return int(frames[0].shape[0]) if _stacked(frames) else len(frames)


def apply_to_frames(condition: Condition, frames: Sequence[Any], seed: int) -> list[Any]:
    """``frames`` as ``condition`` shows them (module docstring); ``seed``: the video's seed for ``shuffled``.

    Raises:
        FramesUnavailable: no frames, a visual that is not a frame, or a condition frames cannot take.
    """
    if _stacked(frames) and condition.transform != "none":
        return [np.stack(apply_to_frames(condition, list(frames[0]), seed))]
    if condition.transform not in FRAME_TRANSFORMS:
        raise FramesUnavailable(
            f"condition {condition.name} ({condition.transform}) needs a video stream; this task gives frames"
        )
    if condition.transform == "none":
        return []
    _check_frames(frames)
    if condition.transform == "identity":
        return list(frames)
    if condition.transform == "black":
        return [_black_like(f) for f in frames]
    if condition.transform == "jpeg":
        return [_jpeg(f, int(condition.params["quality"])) for f in frames]
    if condition.transform in ("frames", "filter"):
        return [_declared(condition, f, seed, i) for i, f in enumerate(frames)]
    params = condition.params_dict()
    positions = held_positions(len(frames), int(params["k"]), str(params["order"]), seed)
    return [frames[i] for i in positions]


def effective_frame_params(condition: Condition, n_frames: int) -> Mapping[str, Any]:
    """The condition's parameters as applied to a list of ``n_frames`` frames (a hold's ``k`` capped at them)."""
    params = condition.params_dict()
    if condition.transform == "hold":
        params["k"] = min(int(params["k"]), n_frames)
    return params
