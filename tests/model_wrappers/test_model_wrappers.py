"""model_wrappers' registration: one lmms-eval manifest per vdg model, naming a class path that exists, and
nothing imported until lmms-eval asks for a model."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from model_wrappers import _MODELS, manifests

REPO = Path(__file__).resolve().parents[2]


def test_registration_keeps_the_other_models_and_imports_nothing():
    assert {"vdg_chance", "vdg_constant", "vdg_probe"} <= set(_MODELS)
    assert {m.model_id for m in manifests()} == set(_MODELS)
    code = (
        "import sys, model_wrappers; model_wrappers.manifests();"
        "bad = [m for m in sys.modules if m == 'model_wrappers.quantized' or m.startswith('lmms_eval.models.simple')];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=120)


@pytest.mark.slow  # imports every model module (torch, lmms-eval's model classes): ~5 s
def test_every_manifest_names_a_class_of_its_module_under_the_models_name():
    for manifest in manifests():
        module_name, _, class_name = manifest.simple_class_path.rpartition(".")
        assert module_name.startswith("model_wrappers."), manifest
        cls = getattr(importlib.import_module(module_name), class_name)
        assert isinstance(cls, type), manifest.simple_class_path
        assert manifest.model_id.startswith("vdg_")
