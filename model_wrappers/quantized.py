"""lmms-eval's own video model classes, loaded in 4-bit (NF4) or 8-bit (LLM.int8) through bitsandbytes.

lmms-eval 0.7.3's ``qwen2_vl``, ``qwen2_5_vl``, ``llava_onevision`` and ``internvl2`` take no
quantization argument. The ``vdg_*`` models here are those very classes (their prompting, video
reading and generation are inherited untouched) with two extra ``--model_args``:

- ``quantization=nf4|int8|none`` (default ``none``): nf4 is transformers'
  ``BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=<dtype>,
  bnb_4bit_use_double_quant=True)``, int8 is ``BitsAndBytesConfig(load_in_8bit=True)``;
- ``dtype=bf16|fp16|fp32`` (default: whatever the base class loads with): the ``torch_dtype`` of the
  load, and nf4's compute dtype. Without it nf4 computes in the base's dtype (for ``torch_dtype="auto"``
  the one the checkpoint's config names). ``vdg_llava_onevision`` takes fp16|bf16 only (LLaVA's
  loader knows no other).

How: while the base ``__init__`` runs, the loader it calls (found by reading its source; see
:data:`SPECS`) is wrapped so that its keyword arguments gain ``quantization_config`` (and the
``torch_dtype``); the wrapper is removed when ``__init__`` returns or raises. The device map is the
base class's own. ``quantization=none`` without ``dtype`` leaves the call exactly as the base makes it.

The instance tells a report what it ran: ``vdg_quantization`` ("nf4", "int8", "none"),
``vdg_dtype`` (the loaded model's dtype: "bf16", "fp16", "fp32"), ``vdg_compute_dtype`` (nf4's
compute dtype, else None) and ``vdg_precision`` ("nf4", "int8", else ``vdg_dtype``).

Classes are built on first access (module ``__getattr__``), so a base class whose optional
dependencies are missing fails only when that model is asked for. Another base class is one
:data:`SPECS` line (plus its ``_MODELS`` line in ``model_wrappers/__init__.py``), or ad hoc
``quantizable(Base, "TheModelClassItLoads", name="vdg_x")``.

On the CPU, bitsandbytes' AVX512 4-bit kernel cannot take layers narrower than its block size;
:func:`guard_cpu_4bit` sends those few to its generic kernel (only tiny test models have them).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from loguru import logger as eval_logger

# VdgQwen2VL, VdgQwen2_5_VL, VdgLlavaOneVision and VdgInternVL2 are built on access (see __getattr__),
# so they stay out of __all__: a star import must not import every base class.
__all__ = [
    "DTYPES",
    "QUANTIZATIONS",
    "SPECS",
    "QuantSpec",
    "bnb_config",
    "parse_dtype",
    "parse_quantization",
    "patched_loader",
    "quantizable",
    "dtype_name",
    "guard_cpu_4bit",
    "name_to_class",
]

QUANTIZATIONS = ("nf4", "int8", "none")
DTYPES = ("bf16", "fp16", "fp32")

_TORCH_DTYPE_NAMES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
_DTYPE_KEYS = ("torch_dtype", "dtype")  # transformers 5 reads both; keep whichever the base passes
_MISSING = object()


def parse_quantization(value: Any) -> str:
    """``nf4``/``int8``/``none`` (case-insensitive; None means ``none``); anything else is a ValueError."""
    text = "none" if value is None else str(value).strip().lower()
    if text not in QUANTIZATIONS:
        raise ValueError(f"quantization must be one of {'|'.join(QUANTIZATIONS)}, got {value!r}")
    return text


def parse_dtype(value: Any, accepted: tuple[str, ...] = DTYPES) -> str | None:
    """``bf16``/``fp16``/``fp32`` (case-insensitive) or None (the base class's own dtype)."""
    if value is None:
        return None
    text = str(value).strip().lower()
    if text not in accepted:
        raise ValueError(f"dtype must be one of {'|'.join(accepted)}, got {value!r}")
    return text


def _torch_dtype(name: str):
    # torch (~3.4 s) only when a model is loaded, not on import of model_wrappers
    import torch

    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]


def dtype_name(value: Any) -> str | None:
    """``bf16``/``fp16``/``fp32`` for a torch dtype or its spelling ("bfloat16", "torch.float16"), else None."""
    text = str(value).removeprefix("torch.")
    return _TORCH_DTYPE_NAMES.get(text, text if text in DTYPES else None)


def bnb_config(quantization: str, compute_dtype: str | None = "bf16"):
    """transformers' ``BitsAndBytesConfig`` for ``nf4`` or ``int8`` (None for ``none``)."""
    # transformers (~1.2 s) only when a quantized model is loaded, not on import of model_wrappers
    from transformers import BitsAndBytesConfig

    if quantization == "nf4":
        return BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_compute_dtype=_torch_dtype(compute_dtype or "bf16"),
            bnb_4bit_use_double_quant=True,
        )
    if quantization == "int8":
        return BitsAndBytesConfig(load_in_8bit=True)
    return None


def _config_dtype(pretrained: Any, trust_remote_code: bool) -> str | None:
    """The dtype a checkpoint's config names (what ``torch_dtype="auto"`` loads), if it names one."""
    try:
        # transformers (~1.2 s) only when a model is loaded, not on import of model_wrappers
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(pretrained, trust_remote_code=trust_remote_code)
    except Exception as exc:  # noqa: BLE001 - the load itself will say what is wrong with the checkpoint
        eval_logger.debug(f"vdg quantization: cannot read the config of {pretrained!r}: {exc}")
        return None
    configs = [config]
    with contextlib.suppress(Exception):
        configs.append(config.get_text_config())
    for cfg in configs:
        for attr in ("dtype", "torch_dtype"):
            name = dtype_name(getattr(cfg, attr, None))
            if name:
                return name
    return None


def guard_cpu_4bit(model: Any) -> int:
    """Keep bitsandbytes' packed AVX512-bf16 CPU kernel away from 4-bit layers it cannot take.

    bitsandbytes 0.50 repacks a CPU ``Linear4bit``'s weight on its first forward when the CPU has
    AVX512-bf16, assuming ``in_features`` is a multiple of the quantization block size (64) and
    ``out_features`` a multiple of 32; other layers fail there ("shape '[96, 0]' is invalid"). Such
    layers (none in the released checkpoints; the tiny test model's 32-wide vision tower) are sent
    down bitsandbytes' generic CPU path instead. Returns how many layers were changed.
    """
    try:
        # bitsandbytes (torch, ~8 s) only when a 4-bit model is loaded, not on import of model_wrappers
        from bitsandbytes.nn import Linear4bit
    except ImportError:
        return 0
    changed = 0
    for module in model.modules() if hasattr(model, "modules") else ():
        state = getattr(getattr(module, "weight", None), "quant_state", None)
        if not isinstance(module, Linear4bit) or state is None or module.weight.device.type != "cpu":
            continue
        if module.in_features % (state.blocksize or 64) or module.out_features % 32:
            if getattr(module, "support_avx512bf16_for_cpu", False):
                module.support_avx512bf16_for_cpu = False
                changed += 1
    return changed


@contextlib.contextmanager
def patched_loader(owner: Any, name: str, transform: Callable[[tuple, dict], dict]) -> Iterator[None]:
    """Route the keyword arguments of ``owner.<name>`` through ``transform(args, kwargs)`` inside the block.

    ``owner`` is a class (``name`` is then a classmethod such as ``from_pretrained``, inherited or
    not) or a module (``name`` a function in it, looked up by the base class's code at call time).
    The attribute is restored on exit, also when the block raises.
    """
    own = vars(owner).get(name, _MISSING)
    if own is _MISSING and not hasattr(owner, name):
        raise AttributeError(f"{getattr(owner, '__name__', owner)!r} has no {name!r} to wrap")

    if isinstance(owner, type):

        def wrapper(cls, *args, **kwargs):
            impl = own.__get__(None, cls) if own is not _MISSING else getattr(super(owner, cls), name)
            return impl(*args, **transform(args, kwargs))

        replacement: Any = classmethod(wrapper)
    else:
        original = getattr(owner, name)

        def replacement(*args, **kwargs):
            return original(*args, **transform(args, kwargs))

    setattr(owner, name, replacement)
    try:
        yield
    finally:
        if own is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, own)


@dataclass(frozen=True)
class QuantSpec:
    """Where a base class loads its weights, and how that loader spells dtypes.

    - ``class_name``: the vdg class's name (``model_wrappers.quantized.<class_name>``).
    - ``module``/``cls``: the lmms-eval base class.
    - ``loader``: a name in the base class's module: a model class (its ``from_pretrained`` is
      wrapped) or a loader function (the module attribute is wrapped).
    - ``dtypes``: the dtypes the loader accepts, each as the loader wants it (None: a torch dtype).
    - ``default_dtype``: the dtype the loader uses when the base passes none.
    """

    class_name: str
    module: str
    cls: str
    loader: str
    dtypes: Mapping[str, Any] | None = None
    default_dtype: str | None = None

    def load_base(self) -> type:
        return getattr(importlib.import_module(self.module), self.cls)


def quantizable(
    base: type,
    loader: str,
    *,
    name: str | None = None,
    dtypes: Mapping[str, Any] | None = None,
    default_dtype: str | None = None,
) -> type:
    """A subclass of lmms-eval model class ``base`` that takes ``quantization=`` and ``dtype=``.

    ``loader`` names what ``base.__init__`` calls to load the weights, in ``base``'s module: a
    model class (its ``from_pretrained`` is wrapped) or a loader function (the module attribute is
    wrapped). ``dtypes`` maps each accepted dtype to the loader's spelling of it (default: all of
    :data:`DTYPES` as torch dtypes); ``default_dtype`` is the loader's dtype when the base passes none.
    """
    accepted = tuple(dtypes) if dtypes is not None else DTYPES
    base_module = importlib.import_module(base.__module__)
    model_name = name or f"vdg_{base.__name__.lower()}"

    def spell(dtype: str) -> Any:
        return dtypes[dtype] if dtypes is not None else _torch_dtype(dtype)

    class Quantized(base):
        def __init__(self, *args: Any, quantization: Any = "none", dtype: Any = None, **kwargs: Any) -> None:
            quant = parse_quantization(quantization)
            requested = parse_dtype(dtype, accepted)
            target = getattr(base_module, loader, _MISSING)
            if target is _MISSING:
                raise ImportError(
                    f"{model_name}: {base.__module__} has no {loader!r} (an optional dependency of "
                    f"{base.__name__} is not installed)"
                )
            owner, attr = (target, "from_pretrained") if isinstance(target, type) else (base_module, loader)
            seen: dict[str, Any] = {"calls": 0, "compute": None}

            def transform(call_args: tuple, call_kwargs: dict) -> dict:
                out = dict(call_kwargs)
                key = next((k for k in _DTYPE_KEYS if k in out), "torch_dtype")
                if requested is not None:
                    out[key] = spell(requested)
                if quant == "nf4":
                    compute = requested or dtype_name(out.get(key)) or default_dtype
                    if compute is None and call_args:  # torch_dtype="auto": the checkpoint's own dtype
                        compute = _config_dtype(call_args[0], bool(out.get("trust_remote_code")))
                    seen["compute"] = compute or "fp32"
                if quant != "none":
                    if "quantization_config" in out:
                        eval_logger.warning(f"{model_name}: replacing the base class's quantization_config")
                    out["quantization_config"] = bnb_config(quant, seen["compute"])
                seen["calls"] += 1
                return out

            changes = quant != "none" or requested is not None
            eval_logger.info(
                f"{model_name}: loading {base.__name__} with quantization={quant}, "
                f"dtype={requested or 'the base class default'}"
            )
            with patched_loader(owner, attr, transform) if changes else contextlib.nullcontext():
                super().__init__(*args, **kwargs)
            if changes and not seen["calls"]:
                raise RuntimeError(f"{model_name}: {base.__name__}.__init__ never called {loader}; nothing was changed")

            model = getattr(self, "_model", None)
            if quant == "nf4" and (n_guarded := guard_cpu_4bit(model)):
                eval_logger.debug(f"{model_name}: {n_guarded} CPU 4-bit layers use bitsandbytes' generic kernel")
            loaded = dtype_name(getattr(model, "dtype", None))
            self.vdg_quantization = quant
            self.vdg_dtype = loaded or requested or default_dtype or "auto"
            self.vdg_compute_dtype = seen["compute"]
            self.vdg_precision = quant if quant != "none" else self.vdg_dtype
            detail = (
                f" (compute {self.vdg_compute_dtype}, unquantized weights {self.vdg_dtype})" if quant == "nf4" else ""
            )
            eval_logger.info(f"{model_name}: loaded {base.__name__} at precision {self.vdg_precision}{detail}")

    Quantized.__name__ = Quantized.__qualname__ = name_to_class(model_name)
    Quantized.__module__ = __name__
    Quantized.__doc__ = (
        f"lmms-eval's ``{base.__module__}.{base.__name__}`` with ``quantization=nf4|int8|none`` and "
        f"``dtype={'|'.join(accepted)}`` (see :mod:`model_wrappers.quantized`)."
    )
    return Quantized


# Per base class: which loader its __init__ calls (read from lmms-eval 0.7.3's source).
SPECS: dict[str, QuantSpec] = {
    # Qwen2VLForConditionalGeneration.from_pretrained(pretrained, torch_dtype="auto", device_map=...)
    "vdg_qwen2_vl": QuantSpec(
        "VdgQwen2VL", "lmms_eval.models.simple.qwen2_vl", "Qwen2_VL", "Qwen2VLForConditionalGeneration"
    ),
    # Qwen2_5_VLForConditionalGeneration.from_pretrained(pretrained, torch_dtype="bfloat16", device_map=...)
    "vdg_qwen2_5_vl": QuantSpec(
        "VdgQwen2_5_VL", "lmms_eval.models.simple.qwen2_5_vl", "Qwen2_5_VL", "Qwen2_5_VLForConditionalGeneration"
    ),
    # LLaVA-NeXT's llava.model.builder.load_pretrained_model(pretrained, None, name, device_map=..., ...):
    # its **kwargs reach LlavaQwenForCausalLM.from_pretrained; its torch_dtype is "float16" (the
    # default) or "bfloat16" (anything else stops in pdb). Not defined when LLaVA is not installed.
    "vdg_llava_onevision": QuantSpec(
        "VdgLlavaOneVision",
        "lmms_eval.models.simple.llava_onevision",
        "Llava_OneVision",
        "load_pretrained_model",
        dtypes={"fp16": "float16", "bf16": "bfloat16"},
        default_dtype="fp16",
    ),
    # AutoModel.from_pretrained(path, torch_dtype=torch.bfloat16, low_cpu_mem_usage=True, trust_remote_code=True, ...)
    "vdg_internvl2": QuantSpec("VdgInternVL2", "lmms_eval.models.simple.internvl2", "InternVL2", "AutoModel"),
}


def name_to_class(model_name: str) -> str:
    """``vdg_qwen2_5_vl`` -> ``VdgQwen2_5_VL``: the :data:`SPECS` class name, else the name in CamelCase."""
    spec = SPECS.get(model_name)
    return spec.class_name if spec else "".join(p[:1].upper() + p[1:] for p in model_name.split("_"))


def __getattr__(attr: str) -> type:
    """Build ``VdgQwen2VL`` & co. on first access (importing only that base class's module)."""
    model_name = next((m for m, spec in SPECS.items() if spec.class_name == attr), None)
    if model_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
    spec = SPECS[model_name]
    cls = quantizable(
        spec.load_base(), spec.loader, name=model_name, dtypes=spec.dtypes, default_dtype=spec.default_dtype
    )
    globals()[attr] = cls
    return cls


def __dir__() -> list[str]:
    return sorted(set(globals()) | {spec.class_name for spec in SPECS.values()})
