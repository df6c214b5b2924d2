"""lmms-eval model plugins shipped with vdg, registered through the ``lmms_eval.models`` entry point.

- ``vdg_chance``: a uniform guess per question, seeded from (its seed, the question id).
- ``vdg_constant``: always answers one letter.
- ``vdg_probe``: answers the synthetic benchmark from pixels (right answers known by construction).
"""

from __future__ import annotations

__all__ = ["manifests"]

_MODELS = {
    "vdg_chance": "model_wrappers.baselines.VdgChance",
    "vdg_constant": "model_wrappers.baselines.VdgConstant",
    "vdg_probe": "model_wrappers.probe.VdgProbe",
}


def manifests():
    """Entry-point payload: one lmms-eval ModelManifest per vdg model."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return [ModelManifest(model_id=name, simple_class_path=path) for name, path in _MODELS.items()]
