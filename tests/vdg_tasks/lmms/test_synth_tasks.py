"""vdgsynth tasks run before `vdg synth`: one clear message, not datasets' FileNotFoundError after retries."""

from __future__ import annotations

import importlib
import sys

import pytest

import vdg_tasks.lmms.yamlgen as yamlgen

MODULE = "vdg_tasks.lmms.synth_tasks"


def _import_fresh():
    sys.modules.pop(MODULE, None)
    return importlib.import_module(MODULE)


def test_missing_synth_data_says_run_vdg_synth(tmp_path, monkeypatch):
    monkeypatch.setattr(yamlgen, "YAML_ROOT", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"run `vdg synth` first") as info:
        _import_fresh()
    assert str(tmp_path / "vdgsynth" / yamlgen.SYNTH_DATA) in str(info.value)
    sys.modules.pop(MODULE, None)


def test_generated_synth_data_imports_the_prompt_builder(tmp_path, monkeypatch):
    from lmms_eval.tasks.videomme.utils import videomme_doc_to_text

    questions = tmp_path / "vdgsynth" / yamlgen.SYNTH_DATA
    questions.parent.mkdir(parents=True)
    questions.write_text("")
    monkeypatch.setattr(yamlgen, "YAML_ROOT", tmp_path)
    assert _import_fresh().doc_to_text is videomme_doc_to_text
    sys.modules.pop(MODULE, None)


def test_the_default_vdgsynth_template_uses_the_checking_prompt_builder():
    # the YAMLs name the front door vdg_tasks.synth_tasks (vdg_tasks/synth_tasks.py), which stands for MODULE
    assert yamlgen.template("vdgsynth")["doc_to_text"] == "vdg_tasks.synth_tasks.doc_to_text"
    elsewhere = yamlgen.template("vdgsynth", synth_data="/elsewhere/questions.jsonl")
    assert elsewhere["doc_to_text"] != "vdg_tasks.synth_tasks.doc_to_text"
