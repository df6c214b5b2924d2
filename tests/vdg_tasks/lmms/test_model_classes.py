"""Which lmms-eval model class asks for a visual, and which cannot take none: the table is checked against the
installed lmms-eval source, the caller is found on the stack, and a refused class gets a placeholder and an error
row while any other gets the empty list and a scored row."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from lmms_eval.api.model import lmms

import vdg_tasks.lmms.hooks as hooks
from tests.helpers.docs import SQUARE_DOC
from vdg_tasks.lmms.model_classes import (
    NEEDS_A_VISUAL,
    calling_model,
    class_key,
    empty_visual_refusal,
    use_cache_run,
)
from vdg_tasks.perturb.cache import placeholder_video

DOC = {**SQUARE_DOC, "video": "/nowhere/v1.mp4"}


def _model_class(module: str, name: str = "Model", base: type = lmms) -> type:
    """A stand-in lmms-eval class that says it lives in ``module`` and calls the hook as lmms-eval's classes do."""

    def generate_until(self, doc_to_visual, doc):
        return self._visuals(doc_to_visual, doc)

    def _visuals(self, doc_to_visual, doc):  # one helper frame between generate_until and the hook
        return doc_to_visual(doc)

    def unused(self, requests):
        raise NotImplementedError

    methods = {"generate_until": generate_until, "_visuals": _visuals}
    methods |= {"loglikelihood": unused, "generate_until_multi_round": unused}
    return type(name, (base,), {"__module__": module, **methods})


def _instance(cls: type) -> object:
    return object.__new__(cls)  # lmms.__init__ sets up accelerate state the stand-in does not need


@pytest.mark.parametrize("key", sorted(NEEDS_A_VISUAL))
def test_each_refused_class_still_has_the_line_that_fails_in_the_installed_lmms_eval(key):
    spec = importlib.util.find_spec("lmms_eval.models")
    source = Path(spec.submodule_search_locations[0], *key.split(".")).with_suffix(".py")
    assert source.is_file(), source
    assert NEEDS_A_VISUAL[key].code in source.read_text(), (key, NEEDS_A_VISUAL[key])


def test_the_calling_model_is_found_through_helper_frames_and_none_outside_a_model():
    cls = _model_class("lmms_eval.models.simple.qwen2_vl")
    model = _instance(cls)
    assert model.generate_until(lambda doc: calling_model(), DOC) is model
    assert calling_model() is None


def test_a_listed_class_and_its_subclasses_are_refused_and_others_are_not():
    llava_vid = _model_class("lmms_eval.models.simple.llava_vid", "LlavaVid")
    quantized = _model_class("model_wrappers.quantized", "QuantizedLlavaVid", base=llava_vid)
    assert class_key(llava_vid) == "simple.llava_vid"
    for cls in (llava_vid, quantized):
        refusal = empty_visual_refusal(_instance(cls))
        assert refusal is not None and "simple.llava_vid" in refusal and "visuals[0]" in refusal
    assert empty_visual_refusal(_instance(_model_class("lmms_eval.models.simple.qwen2_vl"))) is None
    assert empty_visual_refusal(_instance(_model_class("lmms_eval.models.chat.qwen2_5_vl"))) is None
    assert empty_visual_refusal(None) is None


def test_a_refused_class_gets_the_placeholder_and_an_error_row_and_the_run_goes_on():
    refused = _instance(_model_class("lmms_eval.models.simple.internvl2", "InternVL2"))
    accepted = _instance(_model_class("lmms_eval.models.simple.qwen2_vl", "Qwen2_VL"))
    doc = {**DOC, "question_id": "v1-refused"}
    assert refused.generate_until(hooks.vdgsynth__blind__doc_to_visual, doc) == [str(placeholder_video())]
    record = hooks.vdgsynth__blind__process_results(doc, ["C"])["vdg"]
    assert record["status"] == "error" and record["correct"] is None
    assert (
        record["error"].startswith("NoVisualRefused: lmms-eval's simple.internvl2") and "placeholder" in record["error"]
    )

    # the same question asked by a class that takes no visual: nothing shown, the answer scored
    other = {**DOC, "question_id": "v1-accepted"}
    assert accepted.generate_until(hooks.vdgsynth__blind__doc_to_visual, other) == []
    out = hooks.vdgsynth__blind__process_results(other, ["C"])
    assert (out["vdg"]["status"], out["vdg"]["correct"], out[hooks.METRIC_KEY]) == ("ok", True, 1.0)


def test_a_condition_that_shows_a_video_is_not_affected_by_the_class(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    hooks._resolve.cache_clear()
    refused = _instance(_model_class("lmms_eval.models.simple.llava_vid", "LlavaVid"))
    doc = {**DOC, "question_id": "v1-orig", "video": str(tmp_path / "missing.mp4")}
    assert refused.generate_until(hooks.vdgsynth__orig__doc_to_visual, doc) == [str(placeholder_video())]
    record = hooks.vdgsynth__orig__process_results(doc, ["C"])["vdg"]
    assert record["status"] == "error" and "NoVisualRefused" not in record["error"]


def test_a_second_model_in_one_process_is_judged_on_its_own_class():
    # lmms-eval --config with several models runs them one after another in one process
    refused = _instance(_model_class("lmms_eval.models.simple.llava_vid", "LlavaVid"))
    accepted = _instance(_model_class("lmms_eval.models.simple.qwen2_vl", "Qwen2_VL"))
    doc = {**DOC, "question_id": "v1-two-models"}
    refused.generate_until(hooks.vdgsynth__blind__doc_to_visual, doc)
    assert hooks.vdgsynth__blind__process_results(doc, ["C"])["vdg"]["status"] == "error"
    assert accepted.generate_until(hooks.vdgsynth__blind__doc_to_visual, doc) == []
    assert hooks.vdgsynth__blind__process_results(doc, ["C"])["vdg"]["status"] == "ok"


def test_a_cached_reply_under_use_cache_is_an_error_because_no_class_was_seen(monkeypatch):
    doc = {**DOC, "question_id": "v1-cached"}
    monkeypatch.setattr("sys.argv", ["lmms-eval", "--model", "llava_vid", "--use_cache", "/tmp/c"])
    record = hooks.vdgsynth__blind__process_results(doc, ["C"])["vdg"]
    assert record["status"] == "error" and record["error"].startswith("NotAsked: the reply came from lmms-eval's")
    monkeypatch.setattr("sys.argv", ["lmms-eval", "--model", "llava_vid"])  # a model that never asks: as before
    assert hooks.vdgsynth__blind__process_results(doc, ["C"])["vdg"]["status"] == "ok"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [(["x", "--use_cache", "d"], True), (["x", "--use_cache=d"], True), (["x", "--use_cached"], False), (["x"], False)],
)
def test_use_cache_run(argv, expected):
    assert use_cache_run(argv) is expected
