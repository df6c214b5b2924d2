"""vdg_qwen2_vl & co.: argument checks, the from_pretrained injection, its undoing, registration.

No weights are loaded: each test replaces the loader a base class calls with a recorder that
keeps the keyword arguments it receives and stops ``__init__`` there (or returns a stand-in).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from lmms_eval.api.model import lmms
from loguru import logger
from transformers import AutoModel, BitsAndBytesConfig

from model_wrappers import quantized
from model_wrappers.quantized import QuantSpec, parse_dtype, parse_quantization, quantizable

REPO = Path(__file__).resolve().parents[2]
QWEN_ARGS = {"device": "cpu", "device_map": "cpu"}


class _Stop(Exception):
    """Raised by a recorder to end the base ``__init__`` right after the load call."""


def _recorder(calls: list[dict], result=None):
    def from_pretrained(cls, *args, **kwargs):
        calls.append({"cls": cls, "args": args, "kwargs": kwargs})
        if result is None:
            raise _Stop
        return result

    return from_pretrained


@pytest.fixture
def qwen_calls(monkeypatch):
    """Qwen2VLForConditionalGeneration.from_pretrained replaced by a recorder (restored by monkeypatch)."""
    from transformers import Qwen2VLForConditionalGeneration

    calls: list[dict] = []
    recorder = classmethod(_recorder(calls))
    monkeypatch.setattr(Qwen2VLForConditionalGeneration, "from_pretrained", recorder)
    return calls, Qwen2VLForConditionalGeneration, recorder


def _load(cls, calls, **kwargs) -> dict:
    with pytest.raises(_Stop):
        cls(**kwargs)
    assert len(calls) == 1
    return calls.pop()["kwargs"]


# --- argument validation ---------------------------------------------------------------------


def test_parse_quantization_and_dtype():
    assert [parse_quantization(v) for v in ("nf4", "INT8", " none ", None)] == ["nf4", "int8", "none", "none"]
    assert [parse_dtype(v) for v in ("bf16", "FP16", "fp32", None)] == ["bf16", "fp16", "fp32", None]
    for bad in ("int4", "4bit", "fp8", "", "true"):
        with pytest.raises(ValueError, match=r"quantization must be one of nf4\|int8\|none"):
            parse_quantization(bad)
    for bad in ("bfloat16", "auto", "int8"):
        with pytest.raises(ValueError, match=r"dtype must be one of bf16\|fp16\|fp32"):
            parse_dtype(bad)
    with pytest.raises(ValueError, match=r"dtype must be one of fp16\|bf16, got 'fp32'"):
        parse_dtype("fp32", ("fp16", "bf16"))


def test_bad_values_fail_before_anything_loads(qwen_calls):
    calls, _, _ = qwen_calls
    with pytest.raises(ValueError, match=re.escape("quantization must be one of nf4|int8|none, got 'int4'")):
        quantized.VdgQwen2VL(pretrained="unused", quantization="int4", **QWEN_ARGS)
    with pytest.raises(ValueError, match=re.escape("dtype must be one of bf16|fp16|fp32, got 'half'")):
        quantized.VdgQwen2VL(pretrained="unused", quantization="nf4", dtype="half", **QWEN_ARGS)
    assert calls == []


# --- the from_pretrained injection, on lmms-eval's own classes --------------------------------------


def test_qwen2_vl_nf4_gets_a_4bit_config_and_the_requested_dtype(qwen_calls):
    calls, _, _ = qwen_calls
    kwargs = _load(quantized.VdgQwen2VL, calls, pretrained="p", quantization="nf4", dtype="bf16", **QWEN_ARGS)
    cfg = kwargs.pop("quantization_config")
    assert isinstance(cfg, BitsAndBytesConfig)
    assert cfg.load_in_4bit and not cfg.load_in_8bit
    assert cfg.bnb_4bit_quant_type == "nf4"
    assert cfg.bnb_4bit_compute_dtype == torch.bfloat16
    assert cfg.bnb_4bit_use_double_quant is True
    # the base class's own device map; torch_dtype replaced, no other change
    assert kwargs == {"torch_dtype": torch.bfloat16, "device_map": "cpu"}


def test_qwen2_vl_int8_keeps_the_base_dtype(qwen_calls):
    calls, _, _ = qwen_calls
    kwargs = _load(quantized.VdgQwen2VL, calls, pretrained="p", quantization="int8", **QWEN_ARGS)
    cfg = kwargs.pop("quantization_config")
    assert isinstance(cfg, BitsAndBytesConfig)
    assert cfg.load_in_8bit and not cfg.load_in_4bit
    assert kwargs == {"torch_dtype": "auto", "device_map": "cpu"}


def test_none_leaves_the_call_exactly_as_the_base_makes_it(qwen_calls):
    from lmms_eval.models.simple.qwen2_vl import Qwen2_VL

    calls, _, _ = qwen_calls
    with pytest.raises(_Stop):
        Qwen2_VL(pretrained="p", **QWEN_ARGS)
    base_call = calls.pop()
    for extra in ({}, {"quantization": "none"}, {"quantization": None}):
        with pytest.raises(_Stop):
            quantized.VdgQwen2VL(pretrained="p", **QWEN_ARGS, **extra)
        call = calls.pop()
        assert call["args"] == base_call["args"] == ("p",)
        assert call["kwargs"] == base_call["kwargs"] == {"torch_dtype": "auto", "device_map": "cpu"}
    # dtype alone only changes torch_dtype
    kwargs = _load(quantized.VdgQwen2VL, calls, pretrained="p", dtype="fp16", **QWEN_ARGS)
    assert kwargs == {"torch_dtype": torch.float16, "device_map": "cpu"}


def test_nf4_compute_dtype_follows_the_checkpoint_when_the_base_loads_auto(qwen_calls, tmp_path):
    calls, _, _ = qwen_calls
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen2_vl", "dtype": "float16"}))
    kwargs = _load(quantized.VdgQwen2VL, calls, pretrained=str(tmp_path), quantization="nf4", **QWEN_ARGS)
    assert kwargs["torch_dtype"] == "auto"
    assert kwargs["quantization_config"].bnb_4bit_compute_dtype == torch.float16


def test_qwen2_5_vl_and_internvl2(monkeypatch):
    from transformers import Qwen2_5_VLForConditionalGeneration

    calls: list[dict] = []
    monkeypatch.setattr(Qwen2_5_VLForConditionalGeneration, "from_pretrained", classmethod(_recorder(calls)))
    kwargs = _load(quantized.VdgQwen2_5_VL, calls, pretrained="p", quantization="nf4", **QWEN_ARGS)
    # the base loads "bfloat16": nf4 computes in it
    assert kwargs.pop("quantization_config").bnb_4bit_compute_dtype == torch.bfloat16
    assert kwargs == {"torch_dtype": "bfloat16", "device_map": "cpu"}

    # InternVL2 loads through AutoModel (trust_remote_code); patched on AutoModel, restored after.
    original = vars(AutoModel)["from_pretrained"]
    monkeypatch.setattr(AutoModel, "from_pretrained", classmethod(_recorder(calls)))
    kwargs = _load(quantized.VdgInternVL2, calls, pretrained="p", quantization="int8", dtype="fp16")
    assert kwargs.pop("quantization_config").load_in_8bit
    assert kwargs["torch_dtype"] == torch.float16 and kwargs["trust_remote_code"] is True
    monkeypatch.undo()
    assert vars(AutoModel)["from_pretrained"] is original


def test_llava_onevision_goes_through_llavas_loader(monkeypatch):
    import lmms_eval.models.simple.llava_onevision as llava_module

    if not hasattr(llava_module, "load_pretrained_model"):  # LLaVA-NeXT not installed: a clear ImportError
        with pytest.raises(ImportError, match="load_pretrained_model"):
            quantized.VdgLlavaOneVision(pretrained="p", quantization="nf4")
    calls: list[dict] = []

    def recorder(*args, **kwargs):
        calls.append({"args": args, "kwargs": kwargs})
        raise _Stop

    monkeypatch.setattr(llava_module, "load_pretrained_model", recorder, raising=False)
    monkeypatch.setattr(llava_module, "get_model_name_from_path", lambda p: "llava_qwen", raising=False)
    monkeypatch.setattr(llava_module, "AutoConfig", type("C", (), {"from_pretrained": staticmethod(lambda p: {})}))
    kwargs = _load(quantized.VdgLlavaOneVision, calls, pretrained="p", quantization="nf4", device_map="auto")
    cfg = kwargs.pop("quantization_config")
    assert cfg.load_in_4bit and cfg.bnb_4bit_compute_dtype == torch.float16  # LLaVA's builder default
    assert "torch_dtype" not in kwargs and kwargs["device_map"] == "auto"
    kwargs = _load(quantized.VdgLlavaOneVision, calls, pretrained="p", quantization="nf4", dtype="bf16")
    assert (
        kwargs["torch_dtype"] == "bfloat16" and kwargs["quantization_config"].bnb_4bit_compute_dtype == torch.bfloat16
    )
    with pytest.raises(ValueError, match=r"dtype must be one of fp16\|bf16"):  # the builder knows no float32
        quantized.VdgLlavaOneVision(pretrained="p", dtype="fp32")
    assert llava_module.load_pretrained_model is recorder


# --- the patch is undone ---------------------------------------------------------------------------


def test_patch_is_undone_when_init_raises(qwen_calls, monkeypatch):
    calls, model_cls, recorder = qwen_calls
    # the loader raises
    _load(quantized.VdgQwen2VL, calls, pretrained="p", quantization="nf4", dtype="bf16", **QWEN_ARGS)
    assert vars(model_cls)["from_pretrained"] is recorder
    # the base __init__ raises before loading (an unknown kwarg trips its assert)
    with pytest.raises(AssertionError, match="Unexpected kwargs"):
        quantized.VdgQwen2VL(pretrained="p", quantization="nf4", bogus=1, **QWEN_ARGS)
    assert vars(model_cls)["from_pretrained"] is recorder and calls == []

    # while __init__ runs the base sees the wrapper, and afterwards the loader is back
    seen_inside = []

    def spy(cls, *args, **kwargs):
        seen_inside.append(vars(model_cls)["from_pretrained"])
        raise _Stop

    spy_cm = classmethod(spy)
    monkeypatch.setattr(model_cls, "from_pretrained", spy_cm)
    with pytest.raises(_Stop):
        quantized.VdgQwen2VL(pretrained="p", quantization="int8", **QWEN_ARGS)
    assert len(seen_inside) == 1 and seen_inside[0] is not spy_cm
    assert vars(model_cls)["from_pretrained"] is spy_cm


def test_an_inherited_from_pretrained_is_removed_again(monkeypatch):
    from transformers import Qwen2VLForConditionalGeneration

    assert "from_pretrained" not in vars(Qwen2VLForConditionalGeneration)  # inherited from PreTrainedModel
    with pytest.raises(ValueError, match="quantization must be one of"):
        quantized.VdgQwen2VL(pretrained="p", quantization="fp4", **QWEN_ARGS)
    with pytest.raises((OSError, ValueError)):  # a real load of a path that does not exist
        quantized.VdgQwen2VL(pretrained=str(REPO / "no-such-model"), quantization="nf4", **QWEN_ARGS)
    assert "from_pretrained" not in vars(Qwen2VLForConditionalGeneration)


# --- a toy base class: the whole __init__, the attributes a report reads, the log line ------------


class _ToyModel:
    dtype = torch.bfloat16


class ToyLoader:
    calls: list[dict] = []

    @classmethod
    def from_pretrained(cls, path, **kwargs):
        cls.calls.append(kwargs)
        return _ToyModel()


class ToyBase(lmms):
    def __init__(self, pretrained: str = "toy", device_map: str = "cpu", **kwargs) -> None:
        super().__init__()
        assert kwargs == {}, kwargs
        self._model = ToyLoader.from_pretrained(pretrained, torch_dtype=torch.bfloat16, device_map=device_map)

    def loglikelihood(self, requests):
        raise NotImplementedError

    def generate_until(self, requests):
        return ["A" for _ in requests]

    def generate_until_multi_round(self, requests):
        raise NotImplementedError


@pytest.fixture
def log_lines():
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="INFO")
    yield lines
    logger.remove(sink)


def test_factory_on_any_base_class(log_lines):
    Toy = quantizable(ToyBase, "ToyLoader", name="vdg_toy")
    original = vars(ToyLoader)["from_pretrained"]
    assert Toy.__name__ == "VdgToy" and issubclass(Toy, ToyBase) and Toy.__module__ == "model_wrappers.quantized"
    ToyLoader.calls.clear()

    m = Toy(quantization="nf4")
    assert (m.vdg_quantization, m.vdg_precision, m.vdg_compute_dtype, m.vdg_dtype) == ("nf4", "nf4", "bf16", "bf16")
    assert m.generate_until([1, 2]) == ["A", "A"]  # the base's behaviour, inherited
    m = Toy(quantization="int8", dtype="fp16", device_map="cuda:0")
    assert (m.vdg_precision, m.vdg_compute_dtype) == ("int8", None)
    m = Toy()
    assert (m.vdg_quantization, m.vdg_precision, m.vdg_compute_dtype) == ("none", "bf16", None)

    nf4, int8, plain = ToyLoader.calls
    assert nf4["quantization_config"].bnb_4bit_compute_dtype == torch.bfloat16
    assert int8["torch_dtype"] == torch.float16 and int8["device_map"] == "cuda:0"
    assert plain == {"torch_dtype": torch.bfloat16, "device_map": "cpu"}
    assert vars(ToyLoader)["from_pretrained"] is original
    assert any("precision nf4" in line for line in log_lines), log_lines
    assert any("precision int8" in line for line in log_lines)
    assert any("vdg_toy: loaded ToyBase at precision bf16" in line for line in log_lines)


def test_a_base_that_never_calls_its_loader_is_an_error():
    class Silent(ToyBase):
        def __init__(self, **kwargs):
            lmms.__init__(self)

    Silent.__module__ = __name__
    globals()["Silent"] = Silent  # the factory resolves the loader name in the base's module
    try:
        with pytest.raises(RuntimeError, match="never called ToyLoader"):
            quantizable(Silent, "ToyLoader", name="vdg_silent")(quantization="nf4")
        assert quantizable(Silent, "ToyLoader", name="vdg_silent")().vdg_precision == "auto"
    finally:
        del globals()["Silent"]


# --- registration --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "cls_name", "base"),
    [
        ("vdg_qwen2_vl", "VdgQwen2VL", "lmms_eval.models.simple.qwen2_vl.Qwen2_VL"),
        ("vdg_qwen2_5_vl", "VdgQwen2_5_VL", "lmms_eval.models.simple.qwen2_5_vl.Qwen2_5_VL"),
        ("vdg_llava_onevision", "VdgLlavaOneVision", "lmms_eval.models.simple.llava_onevision.Llava_OneVision"),
        ("vdg_internvl2", "VdgInternVL2", "lmms_eval.models.simple.internvl2.InternVL2"),
    ],
)
def test_registered_with_lmms_eval(name, cls_name, base):
    from lmms_eval.models import get_model

    cls = get_model(name)
    assert cls is getattr(quantized, cls_name)
    parent = cls.__mro__[1]
    assert f"{parent.__module__}.{parent.__name__}" == base
    assert cls.is_simple


def test_a_base_that_cannot_be_imported_breaks_only_its_own_model(monkeypatch):
    spec = QuantSpec("VdgMissing", "vdg_no_such_module", "Missing", "Loader")
    monkeypatch.setitem(quantized.SPECS, "vdg_missing", spec)
    with pytest.raises(ModuleNotFoundError, match="vdg_no_such_module"):
        quantized.VdgMissing  # noqa: B018
    assert quantized.VdgQwen2VL.__name__ == "VdgQwen2VL"
    with pytest.raises(AttributeError):
        quantized.VdgNothing  # noqa: B018
