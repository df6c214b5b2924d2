"""Tests for ``vdg_probe`` on the synthetic episodes (``vdg_tasks.synthetic.episodes``) and open-ended prompts.

Prompts are built the way lmms-eval renders multiple choice ("X. red jacket; blue shirt; ..."),
the probe decodes the real generated mp4s, and what it should see is computed here from the
records' ``temporal_grounding`` and the uniform sampler, independently of the probe.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from model_wrappers.probe import (
    FrameFeatures,
    VdgProbe,
    answer_episode_question,
    answer_open,
    answer_question,
    option_colours,
    parse_prompt,
    respond,
    sample_features,
    tracked_slot,
)
from vdg_tasks.synthetic.episodes import generate_episodes
from vdg_tasks.synthetic.synth import PITCHES, generate, video_spec
from vdg_tasks.vocabulary.drawing import CAST

LETTERS = "ABCDEFGH"
POST = "Answer with the option's letter from the given choices directly."
IDK = "I don't know"
ABSTAIN = "I cannot determine this from the video."  # vdg's abstain condition adds this option
N_FRAMES = 32
#: The open-ended instruction vdg's infinibench_ga benchmark appends (it names no character).
OPEN_INSTRUCTION = (
    "Describe each of the character's outfits in the order they appear in the episode, separated by commas."
)
SUBTITLES = "Subtitles:\nFinn: Has anyone seen my keys?\nCora: Who finished the coffee?"
FPS, SECONDS = 8, 24  # generate_episodes defaults


class FakeRequest:
    def __init__(self, *args):
        self.args = args


@pytest.fixture(scope="module")
def episodes(tmp_path_factory) -> tuple[Path, list[dict]]:
    root = tmp_path_factory.mktemp("probe_episodes")
    annotations = generate_episodes(root, n_episodes=4, seed=0)
    return root, json.loads(annotations.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def features(episodes) -> dict[tuple[str, int], list[FrameFeatures]]:
    """(episode, n sampled frames) -> the probe's frame features of that episode's mp4."""
    root, records = episodes
    out = {}
    for ep in sorted({r["episode"] for r in records}):
        for n in (16, N_FRAMES):
            out[ep, n] = sample_features(str(root / "videos" / "synthetic_sitcom" / "season_1" / f"{ep}.mp4"), n)
    return out


def _text(option: list[str] | str) -> str:
    return option if isinstance(option, str) else "; ".join(option)


def _prompt(question: str, options: list[list[str] | str]) -> str:
    lines = [f"{LETTERS[i]}. {_text(o)}" for i, o in enumerate(options)]
    return "\n".join([question, *lines, POST])


def _letter(response: str) -> str:
    assert response.startswith("The answer is ") and response.endswith(".") and len(response) == 16, response
    return response[len("The answer is ")]


def _seen(record: dict, n: int) -> list[str]:
    """Outfit descriptions of ``record``'s character that ``n`` uniform frames see, in order worn."""
    times = np.linspace(0, SECONDS * FPS - 1, n).astype(int) / FPS
    return [
        outfit
        for outfit, spans in record["temporal_grounding"].items()
        if any(s <= t < e for t in times for s, e in spans)
    ]


def _sees_all(record: dict, n: int) -> bool:
    return len(_seen(record, n)) == len(record["temporal_grounding"])


def _by_character(records: list[dict], episode: str) -> dict[str, dict]:
    return {r["character"]: r for r in records if r["episode"] == episode}


def _with_name(question: str, old: str, new: str) -> str:
    assert question.count(f" {old} ") == 1
    return question.replace(f" {old} ", f" {new} ")


def _ask(record: dict, frames, name_mode: str = "aware", name: str | None = None, options=None) -> str:
    question = record["question"] if name is None else _with_name(record["question"], record["character"], name)
    return _letter(respond(_prompt(question, options or record["options"]), frames, name_mode=name_mode))


def test_prompt_parses_into_colour_lists(episodes):
    _, records = episodes
    r = records[0]
    question, options = parse_prompt(_prompt(r["question"], r["options"]))
    assert question == r["question"]
    assert [text for _, text in options] == [_text(o) for o in r["options"]]
    for (_, text), option in zip(options, r["options"], strict=True):
        expected = [] if option == IDK else [outfit.split()[0] for outfit in option]
        assert option_colours(text) == expected


def test_aware_answers_whenever_the_frames_see_every_window(episodes, features):
    _, records = episodes
    checked = 0
    for n in (16, N_FRAMES):
        for r in records:
            if _sees_all(r, n):
                frames = features[r["episode"], n]
                assert _ask(r, frames) == LETTERS[r["answer_idx"]], (n, r["question_id"])
                with_subtitles = f"{SUBTITLES}\n{_prompt(r['question'], r['options'])}"
                assert _letter(respond(with_subtitles, frames)) == LETTERS[r["answer_idx"]]
                checked += 1
    assert checked > len(records)  # all of them at 32 frames, most at 16


def test_the_benchmark_idk_is_never_chosen(episodes, features):
    _, records = episodes
    for r in records:
        idk = LETTERS[r["options"].index(IDK)]
        for n in (16, N_FRAMES):
            for mode in ("aware", "gender", "blind"):
                for name in CAST:
                    assert _ask(r, features[r["episode"], n], mode, name) != idk


def test_name_swaps_move_aware_only(episodes, features):
    _, records = episodes
    moved = changed = 0
    for r in records:
        frames = features[r["episode"], N_FRAMES]
        cast = _by_character(records, r["episode"])
        base = {mode: _ask(r, frames, mode) for mode in ("aware", "gender", "blind")}
        for other in CAST:
            if other == r["character"]:
                continue
            truth_other = cast[other]["options"][cast[other]["answer_idx"]]
            aware = _ask(r, frames, "aware", other)
            if truth_other in r["options"] and _sees_all(cast[other], N_FRAMES):
                assert aware == LETTERS[r["options"].index(truth_other)] != base["aware"]
                moved += 1
            assert _ask(r, frames, "blind", other) == base["blind"]
            gender = _ask(r, frames, "gender", other)
            if CAST[other] == CAST[r["character"]]:
                assert gender == base["gender"]
            else:
                # gender mode watches the first cast member of the named gender: the two watched
                # characters differ, and where both orders are options (and fully seen) so do the letters
                expected = [_watched_letter(r, cast, name) for name in (r["character"], other)]
                if expected[1] is not None:
                    assert gender == expected[1]
                if None not in expected:
                    assert base["gender"] == expected[0] != gender
                    changed += 1
    assert moved > 0 and changed > 0


def _watched_letter(record: dict, cast: dict[str, dict], name: str) -> str | None:
    """Letter of the order worn by the first cast member of ``name``'s gender, if an option and fully seen."""
    watched = cast[next(n for n in CAST if CAST[n] == CAST[name])]
    truth = watched["options"][watched["answer_idx"]]
    if truth in record["options"] and _sees_all(watched, N_FRAMES):
        return LETTERS[record["options"].index(truth)]
    return None


def test_gender_and_blind_modes_know_whom_they_watch(episodes, features):
    _, records = episodes
    for r in records:
        frames = features[r["episode"], N_FRAMES]
        correct = LETTERS[r["answer_idx"]]
        if r["character"] in ("Alice", "Dev"):
            assert _ask(r, frames, "gender") == correct
        if r["character"] == "Alice":
            assert _ask(r, frames, "blind") == correct
    assert [tracked_slot("the outfits for Eli today", m) for m in ("aware", "gender", "blind")] == [3, 1, 0]
    assert [tracked_slot("the outfits for Cora today", m) for m in ("aware", "gender", "blind")] == [4, 0, 0]
    assert tracked_slot("the outfits for Devon and Finn", "aware") == 5  # whole words only
    assert tracked_slot("whose outfits?", "aware") == 0
    with pytest.raises(ValueError, match="name_mode"):
        tracked_slot("outfits for Eli", "psychic")


def test_no_visual_signal_abstains_or_falls_back_to_a_non_idk_option(episodes, tmp_path):
    _, records = episodes
    dark = FrameFeatures("purple", "purple", True, (None,) * 6)
    black_mp4 = tmp_path / "black.mp4"
    with av.open(str(black_mp4), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=Fraction(FPS))
        s.width, s.height, s.pix_fmt = 192, 96, "yuv420p"
        for i in range(64):
            frame = av.VideoFrame.from_ndarray(np.zeros((96, 192, 3), dtype=np.uint8), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, FPS)
            c.mux(s.encode(frame))
        c.mux(s.encode(None))
    decoded_black = sample_features(str(black_mp4), N_FRAMES)
    assert decoded_black and all(f.dark for f in decoded_black)
    for r in records:
        prior = min((_text(o), LETTERS[i]) for i, o in enumerate(r["options"]) if o != IDK)[1]
        with_abstain = [*r["options"], ABSTAIN]
        for frames in ([], [dark] * N_FRAMES, decoded_black):
            for mode in ("aware", "gender", "blind"):
                assert _ask(r, frames, mode) == prior
                assert _ask(r, frames, mode, options=with_abstain) == LETTERS[len(r["options"])]


def test_three_to_eight_options(episodes, features):
    _, records = episodes
    for r in records:
        if not _sees_all(r, N_FRAMES):
            continue
        frames = features[r["episode"], N_FRAMES]
        truth = r["options"][r["answer_idx"]]
        wrong = [o for o in r["options"] if o not in (truth, IDK)]
        extra = [list(reversed(truth))]  # a sixth ordering nobody wears
        small = [wrong[0], IDK, truth]  # 3 options
        big = [wrong[0], IDK, *wrong[1:], ABSTAIN, *extra, truth]  # 8 options, truth at H
        assert len(big) == 8
        for options in (small, big):
            assert _ask(r, frames, options=options) == LETTERS[options.index(truth)]


def test_a_missed_outfit_is_recovered_only_by_a_unique_subsequence(episodes, features):
    _, records = episodes
    partial = [r for r in records if 2 <= len(_seen(r, 16)) < len(r["temporal_grounding"])]
    assert partial  # 16 frames miss a short appearance somewhere
    for r in partial:
        seen = _seen(r, 16)
        orderings = [o for o in r["options"] if o != IDK]

        def contains(order, seen=seen):
            it = iter(order)
            return all(x in it for x in seen)

        matches = [o for o in orderings if contains(o)]
        got = _ask(r, features[r["episode"], 16], options=[*r["options"], ABSTAIN])
        if len(matches) == 1:
            assert got == LETTERS[r["options"].index(matches[0])]
        else:
            assert got == LETTERS[len(r["options"])]


def test_order_blind_cannot_order_outfits(episodes, features):
    _, records = episodes
    for r in records[:6]:
        frames = features[r["episode"], N_FRAMES]
        options = [*r["options"], ABSTAIN]
        q, opts = parse_prompt(_prompt(r["question"], options))
        assert answer_question(q, opts, frames, order_blind=True) == LETTERS[len(r["options"])]


def test_open_ended_outfit_reply(episodes, features):
    _, records = episodes
    for r in records:
        for n in (16, N_FRAMES):
            frames = features[r["episode"], n]
            seen = _seen(r, n)
            expected = "The outfits in order: " + ", ".join(seen) + "." if seen else "I don't know."
            assert respond(f"{r['question']}\n{OPEN_INSTRUCTION}", frames) == expected
            assert answer_open(r["question"], frames) == expected
            # subtitle lines before the question name other characters but never mention outfits
            with_subtitles = f"{SUBTITLES}\n{r['question']}\n{OPEN_INSTRUCTION}"
            assert respond(with_subtitles, frames) == expected
        assert respond(r["question"], []) == "I don't know."


def test_answer_episode_question_is_pure():
    red, blue, green = "red jacket", "blue shirt", "green sweater"
    options = [("A", f"{blue}; {red}; {green}"), ("B", IDK), ("C", f"{red}; {blue}; {green}")]
    frames = [FrameFeatures("gray", "gray", False, (c, None, None, "green", None, None)) for c in ("red", None, "blue")]
    q = "What is the correct sequence of changing the outfits for Alice in this episode?"
    assert answer_episode_question(q, options, frames) == "C"  # red, blue: a subsequence of C only
    assert answer_episode_question(q.replace("Alice", "Eli"), options, frames) == "A"  # Eli saw only green
    assert answer_episode_question(q.replace("Alice", "Eli"), options, frames, name_mode="blind") == "C"
    assert FrameFeatures("gray", "red", False).slots == ()


@pytest.fixture(scope="module")
def synth_bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("probe_synth_open")
    jsonl = generate(root, n_videos=2, seed=0)
    records = [json.loads(x) for x in jsonl.read_text().splitlines()]
    feats = {vid: sample_features(str(root / "videos" / f"{vid}.mp4"), N_FRAMES) for vid in ("s000", "s001")}
    return records, feats


def test_open_ended_vdgsynth_replies(synth_bench):
    records, feats = synth_bench
    for r in records:
        spec = video_spec(r["video_id"], 0)
        frames = feats[r["video_id"]]
        answer_text = r["options"]["ABCD".index(r["answer"])].split(". ", 1)[1]
        expected = {
            "text_only": answer_text,
            "single_frame": f"The border is {spec.border}.",
            "multi_frame": f"The centre square shows {', '.join(sorted(spec.scenes))} at some point.",
            "temporal_order": f"The centre square shows {spec.scenes[0]} first.",
            "audio_only": "I don't know.",  # deaf: nothing heard
        }[r["task_type"]]
        assert respond(r["question"] + "\nAnswer in a few words.", frames) == expected
        if r["task_type"] == "audio_only":
            hz = PITCHES[answer_text]
            assert respond(r["question"], frames, pitch=hz * 1.01) == f"The tone is {round(hz * 1.01, -1):.0f} Hz."
        dark = respond(r["question"], [FrameFeatures("gray", "gray", True)] * 4)
        assert dark == (answer_text if r["task_type"] == "text_only" else "I don't know.")
        # multiple choice keeps the letter reply (the pitch: heard)
        pitch = PITCHES[answer_text] if r["task_type"] == "audio_only" else None
        asked = r["question"] + "\n" + "\n".join(r["options"]) + "\n" + POST
        assert _letter(respond(asked, frames, pitch=pitch)) == r["answer"]


def test_model_arg_and_generate_until(episodes):
    root, records = episodes
    with pytest.raises(ValueError, match="name_mode"):
        VdgProbe(name_mode="telepathic")
    probe = VdgProbe.create_from_arg_string("name_mode=gender,max_num_frames=32", {"batch_size": 1, "device": None})
    assert probe.name_mode == "gender" and VdgProbe().name_mode == "aware"
    docs = [{k: v for k, v in r.items() if k != "answer_idx"} for r in records[:6]]
    probe.task_dict = {"eps": {"test": docs}}

    def doc_to_visual(doc):
        return [str(root / "videos" / "synthetic_sitcom" / "season_1" / f"{doc['episode']}.mp4")]

    requests = [
        FakeRequest(_prompt(d["question"], d["options"]), {}, doc_to_visual, i, "eps", "test")
        for i, d in enumerate(docs)
    ]
    requests.append(FakeRequest(docs[0]["question"], {}, doc_to_visual, 0, "eps", "test"))
    responses = probe.generate_until(requests)
    for r, response in zip(records[:6], responses, strict=False):
        if r["character"] in ("Alice", "Dev"):
            assert _letter(response) == LETTERS[r["answer_idx"]]
    assert responses[-1] == "The outfits in order: " + ", ".join(_seen(records[0], N_FRAMES)) + "."
