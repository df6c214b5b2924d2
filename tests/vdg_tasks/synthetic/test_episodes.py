"""Tests for ``vdg_tasks.synthetic.episodes``: the synthetic InfiniBench-style "global appearance" episodes.

Expected values are computed here from the records and the specs' seconds (not from the module's
helpers): which frames show whom, where the figures stand, what 16 uniform frames can see.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import av
import numpy as np
import pytest

import vdg_tasks.synthetic.episodes as episodes
from postprocess.settings import ReportSettings
from vdg_tasks.data.infinibench import load_questions
from vdg_tasks.perturb import text
from vdg_tasks.synthetic.episodes import (
    CAST,
    OUTFITS,
    SHOW,
    SHOW_KEY,
    EpisodeSpec,
    episode_spec,
    generate_episodes,
    make_questions,
    slot_of,
)
from vdg_tasks.vocabulary.conditions import get_condition
from vdg_tasks.vocabulary.drawing import PALETTE

N_EPISODES = 4
WIDTH, HEIGHT, FPS, SECONDS = 192, 96, 8, 24
BACKGROUND = np.array([70, 70, 70], dtype=np.float64)
SRT_TIME = r"(\d\d):(\d\d):(\d\d),(\d\d\d)"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def gen(tmp_path_factory) -> tuple[Path, list[dict]]:
    root = tmp_path_factory.mktemp("episodes_a")
    annotations = generate_episodes(root, n_episodes=N_EPISODES, seed=0)
    return root, json.loads(annotations.read_text(encoding="utf-8"))


def _specs(seed: int = 0) -> list[EpisodeSpec]:
    return [episode_spec(m, seed) for m in range(1, N_EPISODES + 1)]


def _frames_in(window: tuple[float, float], fps: int, n_frames: int) -> list[int]:
    start, end = window
    return [f for f in range(n_frames) if start <= f / fps < end]


def _palette_nearest(rgb: np.ndarray) -> str:
    return min(PALETTE, key=lambda c: float(np.sum((np.array(PALETTE[c], dtype=np.float64) - rgb) ** 2)))


def test_generation_is_byte_reproducible(gen, tmp_path):
    root, _ = gen
    again = generate_episodes(tmp_path / "b", n_episodes=N_EPISODES, seed=0)
    assert again == (tmp_path / "b" / "annotations" / "global_appearance.json").resolve()
    first, second = _tree(root), _tree(tmp_path / "b")
    expected = {f"videos/{SHOW_KEY}/season_1/episode_{m}.mp4" for m in range(1, N_EPISODES + 1)}
    expected |= {f"subtitles/{SHOW_KEY}/season_1/episode_{m}.srt" for m in range(1, N_EPISODES + 1)}
    expected |= {"annotations/global_appearance.json"}
    assert set(first) == expected
    assert first == second
    # a spec is the same in a process whose str hashes differ, and the seed matters
    code = "from vdg_tasks.synthetic.episodes import episode_spec; print(repr(episode_spec(2, 0)))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert other.stdout.strip() == repr(episode_spec(2, 0))
    assert any(episode_spec(m, 0) != episode_spec(m, 1) for m in range(1, 4))


def test_cast_and_outfits():
    assert list(CAST.items()) == [
        ("Alice", "female"),
        ("Dev", "male"),
        ("Beth", "female"),
        ("Eli", "male"),
        ("Cora", "female"),
        ("Finn", "male"),
    ]
    assert [slot_of(n) for n in CAST] == list(range(6))
    with pytest.raises(ValueError, match="not in the cast"):
        slot_of("Zed")
    assert set(OUTFITS) <= set(PALETTE) and not {"gray", "white"} & set(OUTFITS)
    assert len(OUTFITS) == 8
    for colour, description in OUTFITS.items():
        assert description.split()[0] == colour
    assert len(set(OUTFITS.values())) == len(OUTFITS)


def test_spec_timeline_constraints():
    n_short = Counter()
    for spec in _specs():
        assert (spec.seconds, spec.fps, spec.n_frames) == (SECONDS, FPS, SECONDS * FPS)
        assert len(spec.outfits) == 4 == len(set(spec.outfits)) and set(spec.outfits) <= set(OUTFITS)
        seg = spec.segments
        assert seg[0][0] == 0 and seg[-1][1] == spec.n_frames
        assert all(a[1] == b[0] for a, b in zip(seg, seg[1:], strict=False))
        assert all((e - s) / FPS >= 3 for s, e in seg)
        assert [t.name for t in spec.characters] == list(CAST)
        orders = [t.order for t in spec.characters]
        assert len(set(orders)) == 6
        for tr in spec.characters:
            assert sorted(tr.order) == sorted(spec.outfits)
            assert len(tr.windows) == 4
            flat = []
            for j, spans in enumerate(tr.windows):
                s0, s1 = seg[j][0] / FPS, seg[j][1] / FPS
                assert spans
                for start, end in spans:
                    assert s0 <= start < end <= s1, (spec.episode, tr.name, j)
                    assert _frames_in((start, end), FPS, spec.n_frames), "every window shows >= 1 frame"
                    flat.append((start, end))
            assert flat == sorted(flat)
            gaps = [b[0] - a[1] for a, b in zip(flat, flat[1:], strict=False)]
            assert min(gaps) >= 0.5, (spec.episode, tr.name, gaps)
            lengths = [end - start for start, end in flat]
            short = [x for x in lengths if x < 1.0]
            assert all(0.6 <= x <= 0.9 for x in short)
            n_short[spec.episode] += len(short)
            # the frame windows say the same as the seconds
            for spans, fspans in zip(tr.windows, tr.frame_windows, strict=True):
                for (start, end), (a, b) in zip(spans, fspans, strict=True):
                    assert _frames_in((start, end), FPS, spec.n_frames) == list(range(a, b))
    assert all(1 <= n_short[m] <= 2 for m in range(1, N_EPISODES + 1)), n_short


def test_sixteen_uniform_frames_can_miss_an_outfit():
    missed = []
    for spec in _specs():
        times = np.linspace(0, spec.n_frames - 1, 16).astype(int) / spec.fps
        for tr in spec.characters:
            for colour, spans in zip(tr.order, tr.windows, strict=True):
                if not any(start <= t < end for t in times for start, end in spans):
                    missed.append((spec.episode, tr.name, colour))
    assert missed


def test_question_records(gen):
    _, records = gen
    specs = {spec.episode: spec for spec in _specs()}
    assert len(records) == N_EPISODES * len(CAST)
    assert len({r["question_id"] for r in records}) == len(records)
    idk_positions = Counter()
    for i, r in enumerate(records):
        m, name = i // len(CAST) + 1, list(CAST)[i % len(CAST)]
        spec = specs[m]
        assert r["character"] == name and r["episode"] == f"episode_{m}"
        assert r["question"] == (
            "Choose the correct option for the following question: "
            f"What is the correct sequence of changing the outfits for {name} in this episode?"
        )
        assert (r["show"], r["season"], r["source"]) == (SHOW, "season_1", "vdg synthetic")
        assert r["video_path_mp4"] == f"/synthetic_sitcom/season_1/episode_{m}.mp4"
        assert r["video_path_frames"] == f"/synthetic_sitcom/season_1/episode_{m}"
        assert r["video_subtitles"] == f"/synthetic_sitcom/season_1/episode_{m}.srt"
        assert r["question_id"] == f"synthetic_sitcom_s1e{m}_{name.lower()}"
        opts = r["options"]
        assert len(opts) == 6 and opts.count("I don't know") == 1
        idk_positions[opts.index("I don't know")] += 1
        orderings = [tuple(o) for o in opts if o != "I don't know"]
        assert len(orderings) == 5 == len(set(orderings))
        episode_outfits = sorted(OUTFITS[c] for c in spec.outfits)
        assert all(sorted(o) == episode_outfits for o in orderings)
        truth = [OUTFITS[c] for c in spec.track(name).order]
        assert opts[r["answer_idx"]] == truth
        # the distractors are other characters' true orders
        others = {tuple(OUTFITS[c] for c in t.order) for t in spec.characters if t.name != name}
        assert set(orderings) - {tuple(truth)} <= others
        grounding = r["temporal_grounding"]
        assert list(grounding) == truth
        for colour, spans in zip(spec.track(name).order, spec.track(name).windows, strict=True):
            assert grounding[OUTFITS[colour]] == [[s, e] for s, e in spans]
            assert all(round(x, 3) == x for s in grounding[OUTFITS[colour]] for x in s)
    assert len(idk_positions) > 1, idk_positions


def _parse_srt(text: str) -> list[tuple[int, float, float, str]]:
    blocks = [b for b in text.strip().split("\n\n") if b.strip()]
    out = []
    for block in blocks:
        index, times, line = block.split("\n")
        m = re.fullmatch(f"{SRT_TIME} --> {SRT_TIME}", times)
        assert m, times
        g = [int(x) for x in m.groups()]
        start = g[0] * 3600 + g[1] * 60 + g[2] + g[3] / 1000
        end = g[4] * 3600 + g[5] * 60 + g[6] + g[7] / 1000
        out.append((int(index), start, end, line))
    return out


def test_subtitles_parse_and_never_mention_colours(gen):
    root, _ = gen
    colour_words = re.compile(r"\b(" + "|".join(PALETTE) + r"|outfits?)\b", re.IGNORECASE)
    for m in range(1, N_EPISODES + 1):
        text = (root / "subtitles" / SHOW_KEY / "season_1" / f"episode_{m}.srt").read_text(encoding="utf-8")
        cues = _parse_srt(text)
        assert 8 <= len(cues) <= 12
        assert [c[0] for c in cues] == list(range(1, len(cues) + 1))
        prev_end = 0.0
        for _, start, end, line in cues:
            assert prev_end <= start < end <= SECONDS
            prev_end = end
            speaker, said = line.split(": ", 1)
            assert speaker in CAST and said
            assert not colour_words.search(line), line


def _decode(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]


def _inner_body(rgb: np.ndarray, slot: int) -> np.ndarray:
    """Median colour of the inside of slot ``slot``'s body (middle half of the slot, 40-92% height)."""
    h, w, _ = rgb.shape
    sw = w / 6
    x0, x1 = int(slot * sw + 0.3 * sw), int(slot * sw + 0.7 * sw)
    y0, y1 = int(0.45 * h), int(0.88 * h)
    return np.median(rgb[y0:y1, x0:x1].reshape(-1, 3), axis=0)


def _inner_head(rgb: np.ndarray, slot: int) -> np.ndarray:
    h, w, _ = rgb.shape
    sw = w / 6
    x0, x1 = int(slot * sw + 0.42 * sw), int(slot * sw + 0.58 * sw)
    return np.median(rgb[int(0.2 * h) : int(0.33 * h), x0:x1].reshape(-1, 3), axis=0)


@pytest.mark.parametrize("episode", [1, 3])
def test_decoded_video_shows_the_spec(gen, episode):
    root, records = gen
    frames = _decode(root / "videos" / SHOW_KEY / "season_1" / f"episode_{episode}.mp4")
    assert len(frames) == SECONDS * FPS and frames[0].shape == (HEIGHT, WIDTH, 3)
    for slot, r in enumerate(r for r in records if r["episode"] == f"episode_{episode}"):
        on_screen: dict[int, str] = {}
        for description, spans in r["temporal_grounding"].items():
            colour = description.split()[0]
            for span in spans:
                shown = _frames_in(tuple(span), FPS, len(frames))
                centre = shown[len(shown) // 2]
                assert _palette_nearest(_inner_body(frames[centre], slot)) == colour
                assert np.abs(_inner_head(frames[centre], slot) - (210, 175, 140)).max() < 20
                on_screen.update(dict.fromkeys(shown, colour))
        for f, rgb in enumerate(frames):
            body = _inner_body(rgb, slot)
            if f in on_screen:
                assert np.linalg.norm(body - PALETTE[on_screen[f]]) < 30, (r["character"], f)
            else:
                assert np.linalg.norm(body - BACKGROUND) < 15, (r["character"], f)
                assert np.linalg.norm(_inner_head(rgb, slot) - BACKGROUND) < 15, (r["character"], f)


def test_arguments_are_validated(tmp_path):
    with pytest.raises(ValueError, match="n_episodes"):
        generate_episodes(tmp_path, n_episodes=0)
    with pytest.raises(ValueError, match="even"):
        generate_episodes(tmp_path, width=193)
    with pytest.raises(ValueError, match="at least"):
        generate_episodes(tmp_path, width=64, height=32)
    with pytest.raises(ValueError, match="fps"):
        generate_episodes(tmp_path, fps=2)
    with pytest.raises(ValueError, match="seconds"):
        generate_episodes(tmp_path, seconds=10)
    with pytest.raises(ValueError, match="episode numbers start at 1"):
        episode_spec(0)
    assert not any(tmp_path.iterdir())


def test_the_default_size_gives_every_tracking_stratum_the_questions_a_ci_needs(monkeypatch, tmp_path):
    """``ReportSettings.min_stratum`` questions in all, and in each name-swap split (same and cross gender)."""
    calls: list[dict] = []
    monkeypatch.setattr(episodes, "generate_episodes", lambda out_dir, **kwargs: calls.append(kwargs) or out_dir)
    episodes.main([str(tmp_path)])
    n_episodes = calls[0]["n_episodes"]
    assert inspect.signature(generate_episodes).parameters["n_episodes"].default == n_episodes
    records = [r for m in range(1, n_episodes + 1) for r in make_questions(episode_spec(m))]
    annotations = tmp_path / "global_appearance.json"
    annotations.write_text(json.dumps(records), encoding="utf-8")
    docs = load_questions(annotations, tmp_path / "videos")  # the docs the tasks read; no video needed
    assert len({d["question_id"] for d in docs}) == len(docs)
    swap = get_condition("nameswap")
    splits = Counter(
        "same" if CAST[text.apply(swap, d).details["swap_to"]] == CAST[d["character"]] else "cross" for d in docs
    )
    min_n = ReportSettings().min_stratum
    assert len(docs) >= min_n
    assert splits["same"] >= min_n and splits["cross"] >= min_n, splits


def test_vdg_synth_episodes_uses_the_generators_default_size():
    from vdg_tasks.cli import build_parser

    default = inspect.signature(generate_episodes).parameters["n_episodes"].default
    assert build_parser().parse_args(["synth-episodes"]).episodes == default
