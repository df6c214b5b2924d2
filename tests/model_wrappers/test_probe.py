"""Tests for ``model_wrappers.probe.VdgProbe`` on real ``vdgsynth`` videos and perturbed copies.

The perturbed videos (black, held middle frame, K held key frames in order / shuffled, reversed)
are written here with PyAV, independently of ``vdg_tasks.perturb.video``, so these tests check the probe
and the benchmark design, not the transforms.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from lmms_eval.tasks.videomme.utils import videomme_doc_to_text

from model_wrappers.probe import FrameFeatures, VdgProbe, answer_question, heard_pitch, parse_prompt
from vdg_tasks.synthetic.synth import AUDIO_TASK_TYPE, TASK_TYPES, expected_rung, generate
from vdg_tasks.vocabulary.conditions import DEFAULT_KEY_FRAMES, LADDER
from vdg_tasks.vocabulary.seeding import rng_for

PROMPT_KWARGS = {
    "pre_prompt": "",
    "post_prompt": "\nAnswer with the option's letter from the given choices directly.",
}
TASK, SPLIT = "vdgsynth_test", "test"
N_VIDEOS = 5  # s000 has 3 scenes, s001 has 4; the single_frame question of s004 names its answer


class GuardedDoc(dict):
    """A doc whose answer and task type cannot be read: the probe must not look at them."""

    FORBIDDEN = frozenset({"answer", "task_type"})

    def __getitem__(self, key):
        if key in self.FORBIDDEN:
            raise AssertionError(f"the probe read doc[{key!r}]")
        return super().__getitem__(key)

    def get(self, key, default=None):
        if key in self.FORBIDDEN:
            raise AssertionError(f"the probe read doc.get({key!r})")
        return super().get(key, default)


class FakeRequest:
    def __init__(self, *args):
        self.args = args


def _decode(path: str) -> list[np.ndarray]:
    with av.open(path) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]


def _write(path: Path, frames: list[np.ndarray], fps: int = 8, crf: int = 18) -> str:
    h, w, _ = frames[0].shape
    with av.open(str(path), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=Fraction(fps))
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        s.options = {"crf": str(crf), "preset": "veryfast"}
        for i, rgb in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, fps)
            c.mux(s.encode(frame))
        c.mux(s.encode(None))
    return str(path)


def _hold(keys: list[np.ndarray], n: int) -> list[np.ndarray]:
    """``len(keys)`` frames, each held for an equal share of ``n`` frames."""
    k = len(keys)
    return [keys[i * k // n] for i in range(n)]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """Records and, per video, the paths of the original and of each perturbed version."""
    root = tmp_path_factory.mktemp("probe")
    jsonl = generate(root, n_videos=N_VIDEOS, seed=0)
    records = [json.loads(x) for x in jsonl.read_text().splitlines()]
    k = DEFAULT_KEY_FRAMES
    versions: dict[str, dict[str, str]] = {}
    for vid in sorted({r["video_id"] for r in records}):
        src = str(root / "videos" / f"{vid}.mp4")
        frames = _decode(src)
        n = len(frames)
        keys = [frames[int((j + 0.5) * n / k)] for j in range(k)]  # segment centres
        perm = rng_for("test_probe", vid, "shuffle").permutation(k)
        while (perm == np.arange(k)).all():
            perm = np.roll(perm, 1)
        versions[vid] = {
            "orig": src,
            "black": _write(root / f"{vid}_black.mp4", [np.zeros_like(frames[0])] * n),
            "single": _write(root / f"{vid}_single.mp4", [keys[k // 2]] * n),
            "shuffled": _write(root / f"{vid}_shuffled.mp4", _hold([keys[j] for j in perm], n)),
            "ordered": _write(root / f"{vid}_ordered.mp4", _hold(keys, n)),
            "reversed": _write(root / f"{vid}_reversed.mp4", frames[::-1]),
            "crf38": _write(root / f"{vid}_crf38.mp4", frames, crf=38),
        }
    return records, versions


def _run(records, versions, version: str, **model_args) -> dict[str, str]:
    """question_id -> letter the probe answers, shown ``version`` of each video."""
    docs = [GuardedDoc({key: value for key, value in r.items() if key != "answer"}) for r in records]
    probe = VdgProbe(**model_args)
    probe.task_dict = {TASK: {SPLIT: docs}}

    def doc_to_visual(doc):
        return [versions[doc["video_id"]][version]]

    requests = [
        FakeRequest(videomme_doc_to_text(dict(r), PROMPT_KWARGS), {}, doc_to_visual, i, TASK, SPLIT)
        for i, r in enumerate(records)
    ]
    responses = probe.generate_until(requests)
    out = {}
    for r, resp in zip(records, responses, strict=True):
        assert resp.startswith("The answer is ") and resp.endswith(".") and len(resp) == len("The answer is A.")
        out[r["question_id"]] = resp[len("The answer is ")]
    return out


def _prior(record) -> str:
    """The text prior: the option whose text sorts first."""
    return min(record["options"], key=lambda o: o.split(". ", 1)[1])[0]


def _by_type(records, task_type):
    return [r for r in records if r["task_type"] == task_type]


def test_parse_prompt_reads_the_videomme_prompt(bench):
    records, _ = bench
    r = records[2]
    question, options = parse_prompt(videomme_doc_to_text(r, PROMPT_KWARGS))
    assert question == r["question"]
    assert [f"{letter}. {text}" for letter, text in options] == r["options"]


def _deaf(record) -> str:
    """What the probe that does not listen answers: the right letter, but on the soundtrack's pitch the text prior."""
    return _prior(record) if record["task_type"] == AUDIO_TASK_TYPE else record["answer"]


def test_original_videos_are_answered_correctly(bench):
    records, versions = bench
    assert _run(records, versions, "orig", listen="true") == {r["question_id"]: r["answer"] for r in records}
    assert _run(records, versions, "orig") == {r["question_id"]: _deaf(r) for r in records}
    blind = _run(records, versions, "orig", order_blind="true")
    for r in records:
        if r["task_type"] != "temporal_order":
            assert blind[r["question_id"]] == _deaf(r)


def test_crf38_reencode_does_not_change_any_answer(bench):
    records, versions = bench
    assert _run(records, versions, "crf38") == {r["question_id"]: _deaf(r) for r in records}


def test_the_listening_probe_hears_the_pitch_and_nothing_where_the_sound_is_gone(bench):
    records, versions = bench
    audio = _by_type(records, AUDIO_TASK_TYPE)
    assert len(audio) == N_VIDEOS
    heard = _run(records, versions, "orig", listen=True)
    silent = _run(records, versions, "crf38", listen=True)  # this test's re-encodes carry no sound
    for r in audio:
        assert heard[r["question_id"]] == r["answer"]
        assert silent[r["question_id"]] == _prior(r)
    assert sum(_prior(r) != r["answer"] for r in audio) >= 2  # the bench tells hearing from guessing


@pytest.mark.parametrize("hz", [220, 550, 880])
def test_heard_pitch_is_the_tone_s_frequency_and_none_without_sound(tmp_path, hz):
    from vdg_tasks.synthetic.synth import encode_video, tone

    frames = [np.zeros((24, 32, 3), dtype=np.uint8)] * 16
    loud, quiet, none = tmp_path / "tone.mp4", tmp_path / "silence.mp4", tmp_path / "none.mp4"
    encode_video(loud, frames, 32, 24, 8, sound=tone(hz, 2.0))
    encode_video(quiet, frames, 32, 24, 8, sound=np.zeros(32000, dtype=np.float32))
    encode_video(none, frames, 32, 24, 8)
    assert heard_pitch(str(loud)) == pytest.approx(hz, rel=0.01)
    assert heard_pitch(str(quiet)) is None and heard_pitch(str(none)) is None


def test_a_pitch_question_takes_the_option_within_three_percent_else_the_text_prior():
    options = [("A", "440 Hz"), ("B", "220 Hz"), ("C", "660 Hz"), ("D", "880 Hz")]
    question = "What pitch is the tone heard in this clip's soundtrack?"
    assert answer_question(question, options, [], pitch=655.0) == "C"
    assert answer_question(question, options, [], pitch=600.0) == "B"  # nothing within 3%: the prior ("220 Hz")
    assert answer_question(question, options, [], pitch=None) == "B"


def test_black_video_leaves_only_the_text(bench):
    records, versions = bench
    got = _run(records, versions, "black")
    for r in records:
        expected = r["answer"] if r["task_type"] == "text_only" else _prior(r)
        assert got[r["question_id"]] == expected, r


def test_each_task_type_is_solved_from_its_expected_rung_up(bench):
    records, versions = bench
    answers = {rung: _run(records, versions, rung) for rung in LADDER}
    for task_type in TASK_TYPES:
        for r in _by_type(records, task_type):
            first = LADDER.index(expected_rung(task_type, r["video_id"], seed=0))
            assert (first == 0) == (task_type == "text_only"), r  # the rung the question's text says
            for rung in LADDER[first:]:
                assert answers[rung][r["question_id"]] == r["answer"], (rung, r)
    # below the expected rung the probe has nothing to go on
    for r in _by_type(records, "multi_frame"):
        assert answers["single"][r["question_id"]] == _prior(r)
    for r in _by_type(records, "temporal_order"):
        assert answers["single"][r["question_id"]] != r["answer"]  # the middle scene is never first


def test_reversed_frames_fool_the_order_aware_probe_only(bench):
    records, versions = bench
    aware = _run(records, versions, "reversed")
    blind_rev = _run(records, versions, "reversed", order_blind=True)
    blind_orig = _run(records, versions, "orig", order_blind=True)
    for r in records:
        if r["task_type"] == AUDIO_TASK_TYPE:
            continue  # this test's reversed copy has no sound; the deaf probe guesses the pitch either way
        qid = r["question_id"]
        if r["task_type"] == "temporal_order":
            assert aware[qid] != r["answer"]
        else:
            assert aware[qid] == r["answer"]
        assert blind_rev[qid] == blind_orig[qid]


def test_order_blind_answer_ignores_the_order_of_held_key_frames(bench):
    records, versions = bench
    shuffled = _run(records, versions, "shuffled", order_blind=True)
    ordered = _run(records, versions, "ordered", order_blind=True)
    assert shuffled == ordered


def test_order_blind_is_a_function_of_the_frame_multiset():
    opts = [("A", "red"), ("B", "blue"), ("C", "green"), ("D", "white")]
    frames = [FrameFeatures("gray", c, False) for c in ["red", "blue", "blue", "green", "red"]]
    q = "Which colour does the centre square show first?"
    rng = np.random.default_rng(0)
    answers = {answer_question(q, opts, [frames[i] for i in rng.permutation(5)], order_blind=True) for _ in range(20)}
    assert answers == {"B"}  # blue and red tie at 2; blue sorts first
    assert answer_question(q, opts, frames, order_blind=False) == "A"


def test_undecodable_video_falls_back_to_the_text_prior(bench, tmp_path):
    records, versions = bench
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video at all")
    broken = {vid: {"orig": str(bad)} for vid in versions}
    got = _run(records, broken, "orig")
    for r in records:
        assert got[r["question_id"]] == (r["answer"] if r["task_type"] == "text_only" else _prior(r))


def test_model_args_and_unsupported_requests():
    probe = VdgProbe.create_from_arg_string("max_num_frames=16,order_blind=True", {"batch_size": 1, "device": None})
    assert probe.max_num_frames == 16 and probe.order_blind is True
    assert VdgProbe(order_blind="false").order_blind is False
    with pytest.raises(ValueError, match="expected a boolean"):
        VdgProbe(order_blind="maybe")
    with pytest.raises(ValueError, match="max_num_frames must be >= 1"):
        VdgProbe(max_num_frames="0")
    with pytest.raises(NotImplementedError, match="only answers generate_until"):
        probe.loglikelihood([])


def test_a_how_many_question_is_answered_with_the_count_of_distinct_centre_colours_seen():
    from model_wrappers.probe import answer_open

    colours = ["red", "blue", "blue", "green", "red", "white"]
    frames = [FrameFeatures("gray", c, False) for c in colours]
    q = "How many colours does the centre square show?"
    assert answer_open(q, frames) == str(len(set(colours)))
    assert answer_open(q, frames[:3]) == "2"
    dark = [FrameFeatures("black", "black", True)] * 4
    assert answer_open(q, dark) == "I don't know."
