"""The lmms-eval adapter: logged records, errors instead of crashes."""

from __future__ import annotations

import json

import av
import pytest

import vdg_tasks.lmms.hooks as hooks
import vdg_tasks.perturb.video_request as shown
from tests.helpers.videos import write_source
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.perturb.cache import placeholder_video
from vdg_tasks.vocabulary.conditions import CONDITIONS


@pytest.fixture()
def doc(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    hooks._resolve.cache_clear()
    src = write_source(tmp_path / "v1.mp4")
    return {
        "question_id": "v1-2",
        "videoID": "v1",
        "video": str(src),
        "task_type": "multi_frame",
        "duration": "short",
        "options": ["A. red", "B. green", "C. blue", "D. white"],
        "answer": "C",
    }


def test_hooks_exist_for_every_benchmark_and_the_conditions_it_provides_for():
    for bench in BENCHMARKS.values():
        own = {c.name for c in bench.conditions()}
        for cond in CONDITIONS.values():
            names = [f"{bench.name}__{cond.name}__{h}" for h in ("doc_to_visual", "process_results")]
            assert all(callable(getattr(hooks, n, None)) for n in names) == (cond.name in own)
            assert hasattr(hooks, f"{bench.name}__{cond.name}__doc_to_text") == (
                cond.name in own and cond.modality == "text"
            )
    assert {"open", "abstain"} <= {c.name for c in BENCHMARKS["videomme"].conditions()}
    assert "nameswap" not in {c.name for c in BENCHMARKS["videomme"].conditions()}


def test_record_has_everything_the_join_needs(doc):
    out = hooks.vdgsynth__shuffled__process_results(doc, ["The answer is C."])
    rec = out["vdg"]
    assert rec["benchmark"] == "vdgsynth" and rec["condition"] == "shuffled"
    assert rec["condition_params"] == {"k": 32, "order": "shuffled"}
    assert (rec["question_id"], rec["video_id"], rec["task_type"], rec["duration"]) == (
        "v1-2",
        "v1",
        "multi_frame",
        "short",
    )
    assert (rec["pred"], rec["status"], rec["correct"], rec["error"]) == ("C", "ok", True, None)
    assert rec["effective_params"] == {"k": 32, "order": "shuffled"}
    assert rec["visual_key"]
    assert out[hooks.METRIC_KEY] == 1.0


def test_a_source_shorter_than_k_logs_the_effective_k(doc, tmp_path):
    doc["video"] = str(write_source(tmp_path / "short.mp4", n_frames=10))
    rec = hooks.vdgsynth__ordered__process_results(doc, ["C"])["vdg"]
    assert rec["status"] == "ok"
    assert rec["condition_params"]["k"] == 32 and rec["effective_params"]["k"] == 10


def test_unparsed_answer_is_scored_wrong_and_counted(doc):
    rec = hooks.vdgsynth__orig__process_results(doc, ["I cannot tell."])["vdg"]
    assert (rec["pred"], rec["status"], rec["correct"]) == (None, "unparsed", False)


def test_missing_video_is_an_error_row_and_the_model_gets_a_placeholder(doc, tmp_path):
    doc["video"] = str(tmp_path / "gone.mp4")
    visual = hooks.vdgsynth__black__doc_to_visual(doc)
    assert visual == [str(placeholder_video())]
    out = hooks.vdgsynth__black__process_results(doc, ["C"])
    rec = out["vdg"]
    assert rec["status"] == "error" and rec["correct"] is None and rec["pred"] is None
    assert "gone.mp4" in rec["error"]
    assert out[hooks.METRIC_KEY] is None


def test_corrupt_video_is_an_error_row(doc, tmp_path):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00" * 4096)
    doc["video"] = str(bad)
    rec = hooks.vdgsynth__orig__process_results(doc, ["C"])["vdg"]
    assert rec["status"] == "error" and "bad.mp4" in rec["error"]


def test_doc_to_visual_returns_the_materialized_file(doc):
    (path,) = hooks.vdgsynth__single__doc_to_visual(doc)
    assert path != doc["video"] and path.endswith(".mp4")
    (orig,) = hooks.vdgsynth__orig__doc_to_visual(doc)
    assert orig == doc["video"]


def test_videomme_missing_video_does_not_exit(doc, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    rec = hooks.videomme__orig__process_results({**doc, "videoID": "nonexistent"}, ["C"])["vdg"]
    assert rec["status"] == "error" and "does not exist" in rec["error"]
    assert "videomme_perception_score" not in hooks.videomme__orig__process_results({**doc, "videoID": "x"}, ["C"])


def test_aggregate_accuracy_skips_errors():
    assert hooks.aggregate_accuracy([1.0, 0.0, None, 1.0]) == pytest.approx(2 / 3)
    assert hooks.aggregate_accuracy([None]) != hooks.aggregate_accuracy([None])  # nan: nothing was scored


def test_any_exception_while_building_the_video_is_that_questions_error_row(doc, monkeypatch):
    import vdg_tasks.perturb.cache

    def explode(*args, **kwargs):
        raise RuntimeError("encoder exploded")

    monkeypatch.setattr(vdg_tasks.perturb.cache, "materialize", explode)
    assert hooks.vdgsynth__crf23__doc_to_visual(doc) == [str(placeholder_video())]
    rec = hooks.vdgsynth__crf23__process_results(doc, ["C"])["vdg"]
    assert (rec["status"], rec["correct"]) == ("error", None)
    assert rec["error"] == "RuntimeError: encoder exploded"


@pytest.mark.parametrize("broken", [{}, {"question_id": "q"}, {"videoID": "v", "video": 3}, None])
def test_hooks_never_raise_on_a_malformed_doc(broken):
    assert hooks.vdgsynth__single__doc_to_visual(broken) == [str(placeholder_video())]
    out = hooks.vdgsynth__single__process_results(broken, ["C"])
    assert out["vdg"]["status"] == "error" and out[hooks.METRIC_KEY] is None
    assert out["vdg"]["condition"] == "single"


def test_a_failing_native_scorer_costs_only_its_own_metric(doc, monkeypatch, tmp_path):
    import dataclasses

    def explode(doc, results):
        raise KeyError("duration")

    bench = dataclasses.replace(BENCHMARKS["vdgsynth"], native_results=explode)
    out = hooks.make_process_results(bench, CONDITIONS["orig"])(doc, ["C"])
    assert out["vdg"]["status"] == "ok" and out[hooks.METRIC_KEY] == 1.0


def test_every_sample_says_where_its_pixels_came_from(doc):
    from vdg_tasks.perturb.cache import source_identity
    from vdg_tasks.perturb.provenance import builder_versions

    black = hooks.vdgsynth__black__process_results(doc, ["C"])["vdg"]["provenance"]
    assert black["source_digest"] == source_identity(doc["video"]) and black["condition"] == "black"
    assert black["transform_version"] == hooks.TRANSFORM_VERSION and black["params"] == {}
    assert black["built_by"] == builder_versions() and black["built_by"]["libx264"].startswith("core ")
    orig = hooks.vdgsynth__orig__process_results(doc, ["C"])["vdg"]["provenance"]
    assert orig["source_digest"] == black["source_digest"] and orig["built_by"] is None  # the source itself
    held = hooks.vdgsynth__single__process_results(doc, ["C"])["vdg"]["provenance"]
    assert held["params"] == dict(CONDITIONS["single"].params)
    with av.open(doc["video"]) as container:  # one video stream: its index among all the file's streams
        (only,) = container.streams.video
        index = only.index  # read while open: a closed container's stream reports garbage
    assert black["source_stream"] == orig["source_stream"] == held["source_stream"] == index


def test_a_question_from_an_export_is_shown_the_exported_video(doc, tmp_path, monkeypatch):
    import hashlib

    from vdg_tasks.data import export_folder

    monkeypatch.setenv("VDG_EXPORTS", str(tmp_path / "exports"))
    key = "ab" + "0" * 30
    root = tmp_path / "exports" / "synth-x"
    video = root / export_folder.video_file(key)
    video.parent.mkdir(parents=True)
    video.write_bytes(placeholder_video().read_bytes())
    manifest = {"name": "synth-x", export_folder.FILES: {export_folder.video_file(key): hashlib.sha256(
        video.read_bytes()).hexdigest()}, export_folder.ROWS: {}}  # fmt: skip
    (root / export_folder.MANIFEST).write_text(json.dumps(manifest))
    info = {"name": "synth-x", "revision": "r1", "video_file": export_folder.video_file(key), "visual_key": key,
            "effective_params": {"k": 32}, "provenance": {"source_digest": "d", "condition": "black"}}  # fmt: skip
    exported = {**doc, "video": str(tmp_path / "nowhere.mp4"), "vdg_export": info}
    assert hooks.vdgsynth__black__doc_to_visual(exported) == [str(video)]
    record = hooks.vdgsynth__black__process_results(exported, ["C"])["vdg"]
    assert record["status"] == "ok" and record["visual_key"] == key and record["effective_params"] == {"k": 32}
    assert record["provenance"]["export"] == {"name": "synth-x", "revision": "r1"}
    missing = {**exported, "vdg_export": {**info, "video_file": "videos/ab/gone.mp4"}}
    record = hooks.vdgsynth__black__process_results(missing, ["C"])["vdg"]
    assert record["status"] == "error" and "export synth-x, revision r1" in record["error"]
    failed = {**exported, "vdg_export": {**info, "error": "VideoDecodeError: corrupt"}}
    assert (
        "in export synth-x: VideoDecodeError" in hooks.vdgsynth__black__process_results(failed, ["C"])["vdg"]["error"]
    )


def test_a_failed_api_request_is_an_error_row_never_a_wrong_answer(doc):
    failed = "[LMMS_EVAL_REQUEST_FAILED after 3 retries] Error code: 500 - upstream timeout"
    out = hooks.vdgsynth__black__process_results(doc, [failed])
    record = out["vdg"]
    assert record["status"] == "error" and record["correct"] is None and out["accuracy"] is None
    assert record["error"].startswith("RequestFailed: [LMMS_EVAL_REQUEST_FAILED after 3 retries]")
    opened = hooks.vdgsynth__open__process_results(doc, [failed])["vdg"]
    assert opened["status"] == "error"  # not an open answer to judge either
    assert hooks.vdgsynth__black__process_results(doc, ["The request failed? No: C."])["vdg"]["status"] == "ok"


def test_an_answer_lmms_eval_never_requested_for_lack_of_budget_is_an_error_row(doc):
    record = hooks.vdgsynth__black__process_results(doc, ["[LMMS_EVAL_BUDGET_EXCEEDED]"])["vdg"]
    assert record["status"] == "error" and record["error"] == "BudgetExceeded: [LMMS_EVAL_BUDGET_EXCEEDED]"


# -- the sampling setting of a sweep ------------------------------------------------------------


def test_held_conditions_follow_the_sweeps_frame_setting(doc, monkeypatch):
    from vdg_tasks.perturb.video import effective_k, probe

    n = probe(doc["video"]).n_frames
    monkeypatch.setenv("VDG_SAMPLING", "frames:8")
    rec = hooks.vdgsynth__reversed__process_results(doc, ["C"])["vdg"]
    assert rec["sampling"] == "frames:8"
    assert rec["effective_params"] == {"k": effective_k(n, 8), "order": "reversed"}
    assert rec["provenance"]["params"]["k"] == 8
    black = hooks.vdgsynth__black__process_results(doc, ["C"])["vdg"]  # not a held condition: unchanged
    assert black["sampling"] == "frames:8" and black["provenance"]["params"] == {}
    monkeypatch.delenv("VDG_SAMPLING")
    assert hooks.vdgsynth__reversed__process_results(doc, ["C"])["vdg"]["effective_params"]["k"] == effective_k(n, 32)


def test_an_fps_setting_holds_rate_times_duration_key_frames(doc, monkeypatch):
    from vdg_tasks.perturb.video import probe

    info = probe(doc["video"])
    monkeypatch.setenv("VDG_SAMPLING", "fps:2")
    rec = hooks.vdgsynth__ordered__process_results(doc, ["C"])["vdg"]
    assert rec["sampling"] == "fps:2"
    assert rec["provenance"]["params"]["k"] == max(1, round(2 * info.duration))


@pytest.mark.parametrize("bad", ["frames:0", "frames:2.5", "fps:-1", "fps:x", "seconds:3"])
def test_a_malformed_sampling_setting_is_the_questions_error_not_a_crash(doc, monkeypatch, bad):
    monkeypatch.setenv("VDG_SAMPLING", bad)
    with pytest.raises(ValueError, match="VDG_SAMPLING"):
        shown.sampling_setting()
    rec = hooks.vdgsynth__shuffled__process_results(doc, ["C"])["vdg"]
    assert rec["status"] == "error" and "VDG_SAMPLING" in rec["error"] and rec["sampling"] == ""
    assert hooks.vdgsynth__orig__process_results(doc, ["C"])["vdg"]["status"] == "ok"


def test_the_record_keeps_video_mme_s_domain_and_sub_category_for_stratification(doc):
    rec = hooks.vdgsynth__orig__process_results({**doc, "domain": "Sports", "sub_category": "Football"}, ["C"])["vdg"]
    assert (rec["domain"], rec["sub_category"], rec["duration"]) == ("Sports", "Football", "short")
    assert hooks.vdgsynth__orig__process_results(doc, ["C"])["vdg"]["domain"] == ""


def test_native_aggregation_is_wrapped_nan_and_a_logged_reason_instead_of_an_escaped_error(caplog):
    import math

    from lmms_eval.tasks.videomme.utils import videomme_aggregate_results
    from lmms_eval.utils import load_yaml_config
    from loguru import logger

    from vdg_tasks.lmms.yamlgen import YAML_ROOT

    # The aggregation exactly as lmms-eval builds it from the generated YAML of a videomme condition.
    config = load_yaml_config(str(YAML_ROOT / "videomme" / "videomme_vdg_orig.yaml"))
    (native,) = [m for m in config["metric_list"] if m["metric"] == "videomme_perception_score"]
    wrapped = native["aggregation"]
    assert wrapped is hooks.videomme__videomme_perception_score__aggregation
    assert wrapped is not videomme_aggregate_results

    row = {"duration": "short", "category": "Knowledge", "sub_category": "Humanity & History", "answer": "A"}
    good = [
        {**row, "task_category": "Temporal Perception", "pred_answer": "A"},
        {**row, "task_category": "Object Reasoning", "pred_answer": "B"},
    ]
    assert wrapped(good) == videomme_aggregate_results(good)

    bad = [*good, {**row, "task_category": "Character Tracking", "pred_answer": "A"}]
    with pytest.raises(KeyError):
        videomme_aggregate_results(bad)
    sink = logger.add(caplog.handler, level="WARNING", format="{message}")
    try:
        assert math.isnan(wrapped(bad))
    finally:
        logger.remove(sink)
    assert "videomme_perception_score" in caplog.text and "KeyError" in caplog.text


def test_a_letter_s_score_is_its_correct_flag(doc):
    right = hooks.vdgsynth__orig__process_results(doc, ["The answer is C."])["vdg"]
    wrong = hooks.vdgsynth__orig__process_results(doc, ["The answer is A."])["vdg"]
    assert (right["score"], right["scoring"], wrong["score"], wrong["correct"]) == (1.0, "letter", 0.0, False)


def _graded(scoring: str, native=None, aggregate_one=None):
    import dataclasses

    bench = dataclasses.replace(
        BENCHMARKS["vdgsynth"],
        scoring=scoring,
        provides=frozenset(),
        native_results=native,
        aggregate_one=aggregate_one,
    )
    return lambda doc, reply, condition="orig": hooks.make_process_results(bench, CONDITIONS[condition])(doc, [reply])


def test_a_judged_answer_is_logged_with_its_reference_for_the_judge_and_no_score_yet(doc):
    open_doc = {**doc, "options": [], "answer": "red", "question": "What colour is the border?"}
    out = _graded("judge")(open_doc, "The border is red.")
    rec = out["vdg"]
    assert (rec["status"], rec["scoring"], rec["truth"], rec["response"]) == (
        "open",
        "judge",
        "red",
        "The border is red.",
    )
    assert rec["question"] == "What colour is the border?" and rec["score"] is None and rec["correct"] is None
    assert out[hooks.METRIC_KEY] is None  # not scored until judged


def test_a_base_metric_s_per_question_value_is_the_score(doc):
    def mra(doc, results):
        return {"mra": 0.3 if results[0] == "4" else 0.9, "count_log": {doc["question_id"]: results[0]}}

    graded = _graded("metric:mra", mra)
    low, high = graded({**doc, "answer": "5"}, "4"), graded({**doc, "answer": "5"}, "5")
    assert (low["vdg"]["status"], low["vdg"]["score"], low["vdg"]["correct"]) == ("ok", 0.3, False)
    assert (high["vdg"]["score"], high["vdg"]["correct"], high[hooks.METRIC_KEY]) == (0.9, True, 0.9)
    assert low["mra"] == 0.3 and low["count_log"] == {"v1-2": "4"}  # the base's own metrics are kept beside it
    assert low["vdg"]["pred"] is None and low["vdg"]["response"] == "4"


@pytest.mark.parametrize(
    ("native", "reason"),
    [
        (lambda doc, results: {"mra": 70.0}, "NoScore: its 'mra' is 70.0, outside [0, 1]"),
        (lambda doc, results: {"acc": 1.0}, "NoScore: its process_results gave no 'mra' (it gave acc)"),
        (lambda doc, results: 1 / 0, "NoScore: its process_results failed (ZeroDivisionError"),
        (None, "NoScore: it has no process_results"),
    ],
)
def test_a_base_metric_that_gives_no_unit_score_is_an_error_row_naming_why(doc, native, reason):
    out = _graded("metric:mra", native)({**doc, "answer": "5"}, "5")
    assert out["vdg"]["status"] == "error" and out["vdg"]["error"].startswith(reason)
    assert out[hooks.METRIC_KEY] is None


def _interval_iou(a, b):
    overlap = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    return overlap / (max(a[1], b[1]) - min(a[0], b[0]))


def test_a_mean_over_questions_is_scored_by_the_base_aggregation_of_the_question_alone(doc):
    # as Charades-STA: process_results keeps the reply and the interval, the aggregation computes a mean IoU in percent
    def keep(doc, results):
        return {"miou": {"gt": [2.0, 6.0], "pred": [float(t) for t in results[0].split("-")]}}

    def mean_iou_percent(records, args=None):
        ious = [_interval_iou(r["gt"], r["pred"]) for r in records]
        return 100 * sum(ious) / len(ious)

    graded = _graded("mean:miou/100", keep, lambda value: mean_iou_percent([value]))
    out = graded({**doc, "answer": "[2.0, 6.0]"}, "4-10")
    assert (out["vdg"]["status"], out["vdg"]["scoring"]) == ("ok", "mean:miou/100")
    assert out["vdg"]["score"] == pytest.approx(2 / 8) and out["vdg"]["correct"] is False
    assert out["miou"] == {"gt": [2.0, 6.0], "pred": [4.0, 10.0]}  # the base's own record, for its own aggregation
    whole = graded({**doc, "answer": "[2.0, 6.0]"}, "2-6")["vdg"]
    assert (whole["score"], whole["correct"]) == (1.0, True)


@pytest.mark.parametrize(
    ("aggregate_one", "reason"),
    [
        (lambda value: 1 / 0, "NoScore: its aggregation of 'miou' failed on this question: ZeroDivisionError"),
        (lambda value: 250.0, "NoScore: its 'miou' is 250.0 (/ 100), outside [0, 1]"),
        (None, "NoScore: no aggregation of 'miou' to apply"),
    ],
)
def test_a_mean_over_questions_that_gives_no_unit_score_is_an_error_row_naming_why(doc, aggregate_one, reason):
    out = _graded("mean:miou/100", lambda doc, results: {"miou": results[0]}, aggregate_one)(
        {**doc, "answer": "x"}, "1"
    )
    assert out["vdg"]["status"] == "error" and out["vdg"]["error"].startswith(reason)
    assert out[hooks.METRIC_KEY] is None


def test_a_graded_question_without_a_reference_answer_is_an_error_row(doc):
    rec = _graded("judge")({**doc, "options": [], "answer": ""}, "red")["vdg"]
    assert rec["status"] == "error" and rec["error"].startswith("NoAnswer: question v1-2 has no ground-truth answer as")


def _frames_benchmark(n: int):
    import dataclasses

    import numpy as np
    from PIL import Image

    pictures = [Image.fromarray(np.full((6, 8, 3), i, dtype=np.uint8)) for i in range(n)]
    return dataclasses.replace(BENCHMARKS["vdgsynth"], frames=lambda view: list(pictures))


def test_a_task_that_gives_frames_is_shown_them_changed_and_follows_a_sweep_s_frame_setting(doc, monkeypatch):
    import numpy as np

    bench = _frames_benchmark(64)
    shown = hooks.make_doc_to_visual(bench, CONDITIONS["ordered"])(doc)
    assert len(shown) == 64 and len({int(np.asarray(f)[0, 0, 0]) for f in shown}) == 32
    monkeypatch.setenv("VDG_SAMPLING", "frames:8")
    shown = hooks.make_doc_to_visual(bench, CONDITIONS["ordered"])(doc)
    assert len(shown) == 64 and len({int(np.asarray(f)[0, 0, 0]) for f in shown}) == 8
    rec = hooks.make_process_results(bench, CONDITIONS["ordered"])(doc, ["The answer is C."])["vdg"]
    assert rec["status"] == "ok" and rec["effective_params"]["k"] == 8 and rec["provenance"]["frames"] == 64
    monkeypatch.setenv("VDG_SAMPLING", "fps:1")  # K would follow a duration a list of frames does not have
    rec = hooks.make_process_results(bench, CONDITIONS["ordered"])(doc, ["The answer is C."])["vdg"]
    assert rec["status"] == "error" and "VDG_SAMPLING=fps:1" in rec["error"]


def test_frames_a_condition_cannot_take_are_an_error_row_never_a_dead_run(doc):
    rec = hooks.make_process_results(_frames_benchmark(4), CONDITIONS["crf28"])(doc, ["The answer is C."])["vdg"]
    assert rec["status"] == "error" and "needs a video stream" in rec["error"]
    assert hooks.make_doc_to_visual(_frames_benchmark(4), CONDITIONS["blind"])(doc) == []


def test_a_question_s_frames_are_decoded_once_for_the_model_and_its_record(doc):
    import dataclasses

    calls = []
    bench = _frames_benchmark(16)
    counted = dataclasses.replace(bench, frames=lambda view: calls.append(1) or bench.frames(view))
    hooks.make_doc_to_visual(counted, CONDITIONS["shuffled"])(doc)
    rec = hooks.make_process_results(counted, CONDITIONS["shuffled"])(doc, ["The answer is C."])["vdg"]
    assert len(calls) == 1 and rec["status"] == "ok" and rec["provenance"]["frames"] == 16
    hooks.make_process_results(counted, CONDITIONS["shuffled"])(doc, ["The answer is C."])  # asked again: decoded
    assert len(calls) == 2
