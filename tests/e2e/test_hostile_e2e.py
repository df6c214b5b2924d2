"""Hostile sources through one real lmms-eval run: no bad video costs another question its answer.

Good vdgsynth questions and one question per hostile source (see ``make_hostile_sources``: empty,
random bytes, truncated with and without index, 1 to 63 frames, odd size, rotated, VFR, audio,
10-bit, 4:4:4, VP9, HEVC) run through every condition in a single ``lmms-eval`` run of
``vdg_probe``. Every question has exactly one row per condition; every good question is scored;
each damaged source is an ``error`` row with its reason under every condition; each messy but
valid source is answered under every condition, and the held videos it got pass the sampler check.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.runs import lmms_eval, offline_env, synth_with_sources
from tests.helpers.samplers import collapse, sample_decord
from tests.helpers.videos import make_hostile_sources, read_index
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.perturb.cache import materialize, video_seed
from vdg_tasks.perturb.video import effective_k, hold_order, key_frame_indices, probe
from vdg_tasks.vocabulary.conditions import CIRCULAR, CONDITIONS, DEFAULT_KEY_FRAMES

pytestmark = pytest.mark.slow

DAMAGED = ("empty", "random_bytes", "truncated_index", "truncated_no_index")
#: Valid sources decord (what the models read orig with) presents other pictures of than PyAV decodes on random
#: access: every condition built from their decoded pictures is an error row naming the disagreement.
MISREAD = ("hevc", "spliced_ts")
#: Every condition of vdgsynth but circular evaluation's rotations (their own tag: they change only the options'
#: order, and test_circular_e2e runs them).
SYNTH_CONDITIONS = [c.name for c in BENCHMARKS["vdgsynth"].conditions() if c.family != CIRCULAR]
#: The tags that run them all: the core audit, blind, and the conditions written through the public API.
EVERY_TASK = "vdgsynth_vdg,vdgsynth_vdg_blind,vdgsynth_vdg_detail,vdgsynth_vdg_audio"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile_e2e")
    hostile = make_hostile_sources(root / "hostile")
    good = synth_with_sources(root, hostile, "hostile", n_videos=3)
    env = offline_env(root)
    out = lmms_eval(env, root / "runs", root / "tasks", "vdg_probe", EVERY_TASK)
    return {"root": root, "good": good, "hostile": hostile, "out": out, "frame": load_frame([f"probe={out}"])}


def test_every_question_has_exactly_one_row_per_condition(world):
    frame = world["frame"]
    asked = {q["question_id"] for q in world["good"]} | {f"hostile-{n}" for n in world["hostile"]}
    assert set(frame.condition) == set(SYNTH_CONDITIONS)
    for condition, rows in frame.groupby("condition"):
        assert sorted(rows.question_id) == sorted(asked), condition


def test_good_questions_are_all_scored(world):
    frame = world["frame"]
    good = frame[~frame.question_id.str.startswith("hostile-")]
    assert len(good) == len(world["good"]) * len(SYNTH_CONDITIONS)
    assert (good.status != "error").all(), good[good.status == "error"][["question_id", "condition", "error"]]


def test_damaged_sources_are_error_rows_naming_the_file_under_every_condition_showing_a_video(world):
    frame = world["frame"].set_index(["question_id", "condition"])
    for name in DAMAGED:
        for condition in SYNTH_CONDITIONS:
            row = frame.loc[(f"hostile-{name}", condition)]
            if not CONDITIONS[condition].shows_video:  # blind never opens the file: answered
                assert row.status in ("ok", "unparsed"), (name, condition, row.error)
                continue
            assert row.status == "error", (name, condition)
            assert world["hostile"][name].name in row.error, (name, condition, row.error)
            assert pd.isna(row.correct)


def test_messy_valid_sources_are_answered_under_every_condition_their_decoders_agree_on(world):
    frame = world["frame"].set_index(["question_id", "condition"])
    for name in set(world["hostile"]) - set(DAMAGED):
        for condition in SYNTH_CONDITIONS:
            row = frame.loc[(f"hostile-{name}", condition)]
            if name in MISREAD and CONDITIONS[condition].decodes_source:
                assert row.status == "error" and "the source's decoders disagree" in row.error, (name, condition)
                assert world["hostile"][name].name in row.error and pd.isna(row.correct)
                continue
            expected = ("open",) if CONDITIONS[condition].answer_format == "open" else ("ok", "unparsed")
            assert row.status in expected, (name, condition, row.error)


def _indices(frames: list[np.ndarray]) -> list[int]:
    return [read_index(f) for f in frames]


@pytest.mark.parametrize("order", ["ordered", "shuffled", "single"])
def test_held_videos_of_messy_sources_pass_the_sampler_check(world, order, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(world["root"] / "cache"))
    condition = CONDITIONS[order]
    # rotated: decord applies the display matrix, so the barcode is read turned; its shape is checked elsewhere.
    for name in sorted(set(world["hostile"]) - set(DAMAGED) - set(MISREAD) - {"rotated"}):
        source = world["hostile"][name]
        built = materialize(source, condition, f"hostile-{name}")
        assert built.hit, f"{name}: the lmms-eval run should have built {order} already"
        n = probe(source).n_frames
        k = effective_k(n, DEFAULT_KEY_FRAMES)
        keys = key_frame_indices(n, DEFAULT_KEY_FRAMES)
        shown = keys[hold_order(k, order, video_seed(condition, f"hostile-{name}"))]
        seen = collapse(_indices(sample_decord(built.path, DEFAULT_KEY_FRAMES)))
        assert seen == collapse([int(i) for i in shown]), (name, order)


def test_the_printed_metric_is_the_accuracy_of_the_scored_answers(world):
    frame = world["frame"]
    (results,) = sorted(world["out"].rglob("*_results.json"))
    data = json.loads(results.read_text())["results"]
    for condition in ("orig", "black", "crf28"):
        metrics = data[f"vdgsynth_vdg_{condition}"]
        rows = frame[(frame.condition == condition) & (frame.status != "error")]
        # The logged record is not a metric (lmms-eval lists its key with an empty value).
        assert not isinstance(metrics.get("vdg,none"), float)
        assert metrics["accuracy,none"] == pytest.approx(rows.correct.astype(bool).mean())
