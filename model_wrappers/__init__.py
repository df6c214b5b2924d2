"""lmms-eval model plugins shipped with vdg, registered through the ``lmms_eval.models`` entry point.

- ``vdg_chance``: a uniform guess per question, seeded from (its seed, the question id).
- ``vdg_constant``: always answers one letter.
- ``vdg_probe``: answers the synthetic benchmark from pixels (right answers known by construction).
- ``vdg_qwen2_vl``, ``vdg_qwen2_5_vl``, ``vdg_llava_onevision``, ``vdg_internvl2``: lmms-eval's own
  classes with ``quantization=nf4|int8|none`` and ``dtype=bf16|fp16|fp32`` (:mod:`model_wrappers.quantized`).
- ``vdg_text_lm``: any Hugging Face causal language model on the ``blind`` tasks: an LVLM's language backbone, for
  the leakage table (:mod:`model_wrappers.text_lm`).

Registration only names class paths: nothing is imported until lmms-eval asks for a model, so a
base class with missing optional dependencies breaks only its own model.
"""

from __future__ import annotations

__all__ = ["manifests"]

_MODELS = {
    "vdg_chance": "model_wrappers.baselines.VdgChance",
    "vdg_constant": "model_wrappers.baselines.VdgConstant",
    "vdg_probe": "model_wrappers.probe.VdgProbe",
    "vdg_qwen2_vl": "model_wrappers.quantized.VdgQwen2VL",
    "vdg_qwen2_5_vl": "model_wrappers.quantized.VdgQwen2_5_VL",
    "vdg_llava_onevision": "model_wrappers.quantized.VdgLlavaOneVision",
    "vdg_internvl2": "model_wrappers.quantized.VdgInternVL2",
    "vdg_text_lm": "model_wrappers.text_lm.VdgTextLM",
}


def manifests():
    """Entry-point payload: one lmms-eval ModelManifest per vdg model."""
    # lmms_eval's registry (~0.3 s) only when lmms-eval reads the entry point, not on import of model_wrappers
    from lmms_eval.models.registry_v2 import ModelManifest

    return [ModelManifest(model_id=name, simple_class_path=path) for name, path in _MODELS.items()]
