"""Which lmms-eval model class is asking for a question's visual, and whether it can take none.

A condition that shows no video (``blind``) gives ``doc_to_visual`` an empty list. Most of lmms-eval's
video classes then send a text-only request; some index the first visual or assert there is exactly
one, and would end the user's whole run on the first blind question. lmms-eval tells a task nothing
about the model, so ``calling_model`` finds the instance whose ``generate_until`` called the hook (the
``self`` of a calling frame that is an ``lmms_eval.api.model.lmms``); for a class in ``NEEDS_A_VISUAL``
(or a subclass, such as vdg's quantized wrappers) the hook hands it vdg's placeholder clip instead and
logs the question as an ``error`` with the reason, so the run goes on and nothing is scored.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from types import FrameType, MappingProxyType
from typing import NamedTuple


class Refusal(NamedTuple):
    """Why a model class cannot take a request without a visual: what goes wrong, and the line of its
    ``generate_until`` (in lmms-eval 0.7.3) where it does."""

    failure: str
    code: str


#: lmms-eval model classes (module under ``lmms_eval.models``) that cannot take an empty visual list: they
#: raise, or answer without the question, or with a previous request's inputs. Read from their source
#: (a test checks each ``code`` line is still there); a class not listed is handed the empty list. A
#: subclass (``internvl3_5``, vdg's quantized wrappers) is refused with its base.
NEEDS_A_VISUAL: Mapping[str, Refusal] = MappingProxyType(
    {
        "simple.llava_vid": Refusal("IndexError", "if os.path.isdir(visuals[0]):"),
        "simple.internvl2": Refusal("AssertionError on a video task", "assert len(visuals) == 1"),
        "simple.internvl3": Refusal("AssertionError on a video task", "assert len(visuals) == 1"),
        "simple.videollama3": Refusal("an empty conversation (ValueError)", "if len(visuals) > 0:"),
        "simple.video_llava": Refusal("AssertionError", "assert len(visuals) == 1"),
        "simple.longva": Refusal("IndexError", "if type(visual[0]) is PIL.Image.Image:"),
        "simple.vila": Refusal("UnboundLocalError, or a previous request's frames", "* len(images) + qs"),
        "simple.llama_vision": Refusal("ValueError from the processor", "inputs = self.processor(images, prompt"),
        "chat.llava_hf": Refusal("IndexError from the image processor", "self._image_processor(images=visuals"),
        "simple.llava_hf": Refusal("an empty reply, or a previous request's inputs", 'if task_type == "image":'),
        "simple.aria": Refusal("RuntimeError from the image processor", "self._image_processor(images=visuals"),
        "simple.llava_onevision_moviechat": Refusal("IndexError", "if type(visual[0]) is PIL.Image.Image"),
        "simple.moviechat": Refusal("IndexError", "if type(visual[0]) is PIL.Image.Image"),
        "simple.videochat_flash": Refusal("IndexError", "if type(visual[0]) is PIL.Image.Image"),
        "simple.videochat2": Refusal("AssertionError on a video task", "assert len(visuals) == 1"),
        "simple.internvideo2": Refusal("AssertionError on a video task", "assert len(visuals) == 1"),
        "simple.internvideo2_5": Refusal("IndexError", "video_path = visuals[0]"),
        "simple.auroracap": Refusal("IndexError", "if isinstance(visuals[0], dict):"),
        "simple.idefics2": Refusal("IndexError", "if isinstance(visual[0], str):"),
        "simple.cambrians": Refusal("NotImplementedError", "raise NotImplementedError"),
        "simple.cambrians_vsc": Refusal("AssertionError", "assert len(visuals) == 1"),
        "simple.cambrians_vsr": Refusal("AssertionError", "assert len(visuals) == 1"),
        "simple.cambrians_vsc_streaming": Refusal("AssertionError", "assert len(visuals) == 1"),
        "simple.plm": Refusal("NotImplementedError", "Text-only input is not yet supported."),
        "simple.llama_vid": Refusal("UnboundLocalError, or a previous request's video", "images=video,"),
        "simple.reka": Refusal("AssertionError on a video task", "assert len(visual) == 1"),
        "simple.cogvlm2": Refusal("AssertionError", "assert len(visuals) == 1"),
        "simple.minicpm_v": Refusal("AssertionError", "assert len(visuals) == 1"),
        "simple.minimonkey": Refusal("AssertionError", "assert len(visuals) == 1"),
        "simple.video_chatgpt": Refusal("UnboundLocalError, or a previous request's frames", "video_frames, contexts"),
        "simple.qwen2_5_omni": Refusal("a request without the question (no user turn)", "if len(visuals) > 0:"),
        "simple.oryx": Refusal('the reply "Video can not load"', "if type(visuals[0][0]) is str:"),
    }
)

#: How many frames above the hook to look for the calling model (lmms-eval calls ``doc_to_visual`` from
#: ``generate_until`` directly or through a helper or two).
_SEARCH_DEPTH = 8


def _lmms_base() -> type | None:
    module = sys.modules.get("lmms_eval.api.model")  # loaded whenever lmms-eval runs a model; never imported here
    base = getattr(module, "lmms", None)
    return base if isinstance(base, type) else None


def calling_model(frame: FrameType | None = None) -> object | None:
    """The lmms-eval model instance whose method is on the call stack above ``frame`` (default: the caller's
    caller), or None. Never raises."""
    try:
        base = _lmms_base()
        if base is None:
            return None
        current = frame if frame is not None else sys._getframe(2)
        for _ in range(_SEARCH_DEPTH):
            if current is None:
                return None
            candidate = current.f_locals.get("self")
            if isinstance(candidate, base):
                return candidate
            current = current.f_back
    except Exception:
        return None
    return None


def use_cache_run(argv: Sequence[str] | None = None) -> bool:
    """Whether this process is an lmms-eval run with its request cache (``--use_cache``): a cached reply reaches
    ``process_results`` without the model asking ``doc_to_visual`` for anything."""
    return any(arg == "--use_cache" or arg.startswith("--use_cache=") for arg in (sys.argv if argv is None else argv))


def class_key(cls: type) -> str:
    """``simple.llava_vid`` for a class defined in ``lmms_eval.models.simple.llava_vid``; the full module otherwise."""
    return cls.__module__.removeprefix("lmms_eval.models.")


def empty_visual_refusal(model: object | None) -> str | None:
    """Why ``model``'s class cannot take a request without a visual (``NEEDS_A_VISUAL``, searched along its
    MRO), or None when it can or is unknown."""
    if model is None:
        return None
    for cls in type(model).__mro__:
        refusal = NEEDS_A_VISUAL.get(class_key(cls))
        if refusal is not None:
            return (
                f"lmms-eval's {class_key(cls)} cannot take a request without a visual ({refusal.failure} at "
                f"`{refusal.code}` in its generate_until)"
            )
    return None


__all__ = ["NEEDS_A_VISUAL", "Refusal", "calling_model", "class_key", "empty_visual_refusal", "use_cache_run"]
