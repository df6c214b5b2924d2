"""Tests for ``vdg_tasks.synthetic.synth``: determinism, record schema, answer-key balance, ladder design."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import av
import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, chisquare
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

import vdg_tasks.synthetic.synth as synth
from postprocess.settings import ReportSettings
from vdg_tasks.synthetic.synth import (
    AUDIO_RATE,
    AUDIO_TASK_TYPE,
    EXPECTED_LADDER,
    PALETTE,
    PITCHES,
    TASK_TYPES,
    WORDS,
    expected_rung,
    generate,
    make_questions,
    middle_scenes,
    video_spec,
)
from vdg_tasks.vocabulary.conditions import DEFAULT_KEY_FRAMES, LADDER

FIELDS = [
    "question_id",
    "videoID",
    "video_id",
    "video",
    "duration",
    "task_type",
    "question",
    "options",
    "answer",
]
N_VIDEOS = 12
#: Questions per video: the visual task types, then the soundtrack's pitch.
PER_VIDEO = len(TASK_TYPES) + 1


def _read(jsonl: Path) -> list[dict]:
    return [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]


def _frames(path: str) -> list[np.ndarray]:
    with av.open(path) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]


def _text(opt: str) -> str:
    return opt.split(". ", 1)[1]


@pytest.fixture(scope="module")
def gen0(tmp_path_factory) -> tuple[Path, list[dict]]:
    """The benchmark of seed 0 as ``generate`` writes it: its videos encoded (slow tests only)."""
    jsonl = generate(tmp_path_factory.mktemp("synth_a"), n_videos=N_VIDEOS, seed=0)
    return jsonl, _read(jsonl)


@pytest.fixture(scope="module")
def records0() -> list[dict]:
    """The questions of seed 0 without encoding a video (``generate`` writes these, with its own video paths:
    test_a_video_does_not_depend_on_how_many_are_generated)."""
    return _many_records([0], N_VIDEOS)


def _many_records(seeds=range(40), n_videos: int = N_VIDEOS) -> list[dict]:
    """Question records for many seeds without encoding any video (the questions need only the spec)."""
    out = []
    for seed in seeds:
        for i in range(n_videos):
            spec = video_spec(f"s{i:03d}", seed)
            out.extend(make_questions(spec, seed, f"/x/s{i:03d}.mp4"))
    return out


@pytest.mark.slow
def test_same_seed_is_byte_identical_and_other_seed_differs(gen0, tmp_path):
    jsonl_a, _ = gen0
    root_a = jsonl_a.parent
    # the second copy in a process whose str hashes differ: nothing may be seeded from hash()
    code = "from pathlib import Path; from vdg_tasks.synthetic.synth import generate; "
    code += f"print(generate(Path({str(tmp_path / 'b')!r}), n_videos={N_VIDEOS}, seed=0))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    jsonl_b = Path(done.stdout.strip().splitlines()[-1])
    text_a = jsonl_a.read_text(encoding="utf-8").replace(str(root_a), "<ROOT>")
    text_b = jsonl_b.read_text(encoding="utf-8").replace(str(jsonl_b.parent), "<ROOT>")
    assert text_a == text_b
    for vid in ("s000", "s007"):
        assert (root_a / "videos" / f"{vid}.mp4").read_bytes() == (
            jsonl_b.parent / "videos" / f"{vid}.mp4"
        ).read_bytes()
        fa, fb = (
            _frames(str(root_a / "videos" / f"{vid}.mp4")),
            _frames(str(jsonl_b.parent / "videos" / f"{vid}.mp4")),
        )
        assert len(fa) == len(fb) == 128
        assert all(np.array_equal(x, y) for x, y in zip(fa, fb, strict=True))

    jsonl_c = generate(tmp_path / "c", n_videos=2, seed=1)
    text_c = jsonl_c.read_text(encoding="utf-8").replace(str(jsonl_c.parent), "<ROOT>")
    assert text_c.splitlines() != text_a.splitlines()[:8]
    fc = _frames(str(jsonl_c.parent / "videos" / "s000.mp4"))
    fa = _frames(str(root_a / "videos" / "s000.mp4"))
    assert not all(np.array_equal(x, y) for x, y in zip(fa, fc, strict=True))


@pytest.mark.slow  # encodes the videos
def test_a_video_does_not_depend_on_how_many_are_generated(gen0, records0, tmp_path):
    jsonl_a, recs = gen0
    small = _read(generate(tmp_path / "small", n_videos=2, seed=0))
    for r in small:
        r["video"] = r["video"].replace(str(tmp_path / "small"), str(jsonl_a.parent))
    assert small == recs[: 2 * PER_VIDEO]
    assert all(Path(r["video"]).is_absolute() and Path(r["video"]).is_file() for r in recs)
    assert [{**r, "video": Path(r["video"]).name} for r in recs] == [
        {**r, "video": Path(r["video"]).name} for r in records0
    ]  # the records the fast tests read are generate's


def test_records_have_exactly_the_videomme_fields(records0):
    recs = records0
    assert len(recs) == PER_VIDEO * N_VIDEOS
    for r in recs:
        assert list(r) == FIELDS
        assert r["videoID"] == r["video_id"] == Path(r["video"]).stem
        assert r["duration"] == "short"
        assert [o[:3] for o in r["options"]] == ["A. ", "B. ", "C. ", "D. "]
        assert r["answer"] in "ABCD" and len(r["answer"]) == 1
        assert len({_text(o) for o in r["options"]}) == 4
    ids = [r["question_id"] for r in recs]
    assert ids == [f"s{i:03d}-{q}" for i in range(N_VIDEOS) for q in range(1, PER_VIDEO + 1)]
    assert [r["task_type"] for r in recs] == [*TASK_TYPES, AUDIO_TASK_TYPE] * N_VIDEOS


def test_every_answer_is_the_designed_option(records0):
    recs = records0
    for r in recs:
        spec = video_spec(r["video_id"], 0)
        correct = _text(r["options"]["ABCD".index(r["answer"])])
        texts = {_text(o) for o in r["options"]}
        appearing = {spec.border, *spec.scenes}
        if r["task_type"] == "text_only":
            assert f"'{correct}'" in r["question"] and texts <= set(WORDS)
        elif r["task_type"] == "single_frame":
            assert correct == spec.border and texts <= set(PALETTE)
        elif r["task_type"] == "multi_frame":
            assert correct in spec.scenes
            assert not (texts - {correct}) & appearing, "multi_frame distractors must never appear"
        elif r["task_type"] == AUDIO_TASK_TYPE:
            assert correct == spec.pitch and texts <= set(PITCHES)
        else:
            assert correct == spec.scenes[0]
            assert set(spec.scenes) <= texts and not (texts - set(spec.scenes)) & appearing


def test_scenes_are_distinct_and_never_the_border():
    for seed in range(20):
        for i in range(N_VIDEOS):
            spec = video_spec(f"s{i:03d}", seed)
            assert len(spec.scenes) in (3, 4)
            assert len(set(spec.scenes)) == len(spec.scenes)
            assert spec.border not in spec.scenes
            assert all(max(PALETTE[c]) >= 120 for c in (spec.border, *spec.scenes)), "no near-black colours"


def test_multi_frame_answer_is_never_the_middle_frame_scene():
    n, k = 128, DEFAULT_KEY_FRAMES
    # every plausible "middle key frame": key frames k//2 and (k-1)//2, at segment starts and centres
    middles = {int(j * n / k) for j in (k // 2, (k - 1) // 2)} | {
        int((j + 0.5) * n / k) for j in (k // 2, (k - 1) // 2)
    }
    middles |= {n // 2, (n - 1) // 2}
    for seed in range(10):
        for i in range(N_VIDEOS):
            spec = video_spec(f"s{i:03d}", seed)
            multi = make_questions(spec, seed, "/x.mp4")[2]
            correct = _text(multi["options"]["ABCD".index(multi["answer"])])
            assert all(spec.scenes[spec.scene_of(m)] != correct for m in middles), (seed, spec)
            assert spec.scenes.index(correct) not in middle_scenes(spec)


def test_answer_letters_are_balanced(records0):
    recs = records0
    counts = Counter(r["answer"] for r in recs)
    assert max(counts.values()) / len(recs) <= 0.40
    # by construction each video's visual questions use every letter once
    for i in range(N_VIDEOS):
        assert sorted(r["answer"] for r in recs[PER_VIDEO * i : PER_VIDEO * i + 4]) == list("ABCD")


def _option_counts(records: list[dict]) -> dict[str, tuple[Counter, Counter]]:
    """Per task type: (questions showing each option text, questions it is the right option of), counted here."""
    out: dict[str, tuple[Counter, Counter]] = {}
    for r in records:
        shown, right = out.setdefault(r["task_type"], (Counter(), Counter()))
        for option in r["options"]:
            letter, text = option.split(". ", 1)
            shown[text] += 1
            right[text] += letter == r["answer"]
    return out


def test_every_option_text_but_text_only_s_is_right_in_a_quarter_of_the_questions_that_show_it():
    """No option text predicts whether it is right: over many benchmarks, each colour and pitch is right in a
    quarter of the questions that show it (an exact binomial test each, at 0.001 Bonferroni-adjusted over the texts:
    at these counts a text the design favoured by 8 points fails, sampling noise does not)."""
    counts = _option_counts(_many_records(range(200)))
    tests = [(t, text, right[text], n) for t, (shown, right) in counts.items() if t != "text_only" for text, n in
             shown.items()]  # fmt: skip
    for task_type, (shown, _) in counts.items():
        if task_type != "text_only":
            assert set(shown) == set(PITCHES if task_type == AUDIO_TASK_TYPE else PALETTE), task_type
    for task_type, text, k, n in tests:
        assert n >= 800, (task_type, text, n)
        assert binomtest(k, n, 0.25).pvalue > 0.001 / len(tests), (task_type, text, k, n)


def test_every_task_type_uses_every_answer_letter_equally_often():
    """Each task type's answer letters are uniform over many benchmarks (a chi-square test each, Bonferroni over the
    types; each video's visual questions use every letter once: test_answer_letters_are_balanced)."""
    records = _many_records(range(40))
    types = [*TASK_TYPES, AUDIO_TASK_TYPE]
    for task_type in types:
        counts = Counter(r["answer"] for r in records if r["task_type"] == task_type)
        assert set(counts) == set("ABCD"), (task_type, counts)
        assert chisquare([counts[letter] for letter in "ABCD"]).pvalue > 0.01 / len(types), (task_type, counts)


def test_vdg_shortcuts_finds_text_only_and_nothing_else(tmp_path):
    """``vdg shortcuts`` on the default benchmark: the text gives text_only's answers away; for every other type,
    chance lies within the interval simultaneous over the benchmark's task types, and no type is called above
    chance after Holm. The table's tests are recomputed here with scipy and statsmodels."""
    from vdg_tasks.cli import main

    docs = tmp_path / "questions.jsonl"
    docs.write_text("".join(json.dumps(r) + "\n" for r in _many_records([0], synth.N_VIDEOS)), encoding="utf-8")
    assert main(["shortcuts", "vdgsynth", "--docs", str(docs), "--out", str(tmp_path / "out")]) == 0
    scores = pd.read_csv(tmp_path / "out" / "shortcuts.csv")
    types = pd.read_csv(tmp_path / "out" / "shortcut_types.csv", keep_default_na=False)
    assert set(scores["answerer"]) == {"linear", "forest", "combined"}
    assert (scores["chance"] == 0.25).all()
    for answerer, rows in types[types["task_type"] != "Overall"].groupby("answerer"):
        counts = scores[scores["answerer"] == answerer].groupby("task_type")["picked"].agg(["sum", "count"])
        rows = rows.set_index("task_type").loc[counts.index]
        p = [binomtest(int(k), int(n), 0.25, alternative="greater").pvalue for k, n in counts.to_numpy()]
        p_holm = multipletests(p, method="holm")[1]
        low, high = proportion_confint(counts["sum"], counts["count"], alpha=0.05 / len(counts), method="wilson")
        np.testing.assert_allclose(rows["p_holm"].astype(float), p_holm, rtol=1e-9)
        np.testing.assert_allclose(rows["ci_low_adjusted"].astype(float), low, rtol=1e-9)
        np.testing.assert_allclose(rows["ci_high_adjusted"].astype(float), high, rtol=1e-9)
        for task_type, (k, n), ph, lo, hi in zip(counts.index, counts.to_numpy(), p_holm, low, high, strict=True):
            if task_type == "text_only":  # the question quotes its answer
                assert ph < 0.05, (answerer, k, n)
                if answerer != "linear":
                    assert k >= 0.9 * n, (answerer, k, n)  # found (nearly) every time
            else:
                assert ph >= 0.05 and lo <= 0.25 <= hi, (task_type, answerer, k, n, lo, hi)


def test_no_constant_letter_or_text_heuristic_beats_chance_per_task_type():
    recs = _many_records(range(50))  # 600 questions per task type
    for task_type in [*TASK_TYPES, AUDIO_TASK_TYPE]:
        sub = [r for r in recs if r["task_type"] == task_type]
        n = len(sub)
        # 0.25 +- 4.5 binomial sd (sd = 0.0177 at n=600): a lopsided key fails, sampling noise never does
        bound = 0.25 + 4.5 * (0.25 * 0.75 / n) ** 0.5
        best_letter = max(Counter(r["answer"] for r in sub).values()) / n
        assert best_letter <= bound, (task_type, best_letter)
        if task_type == "text_only":
            continue  # answerable from text by design
        # the probe's text prior (alphabetically first option) must be a chance guess too
        first = sum(min(r["options"], key=_text)[0] == r["answer"] for r in sub) / n
        assert first <= bound, (task_type, first)


def test_expected_ladder_follows_the_declared_ladder():
    assert tuple(EXPECTED_LADDER) == TASK_TYPES
    assert [LADDER.index(EXPECTED_LADDER[t]) for t in TASK_TYPES] == [0, 1, 2, 3]


@pytest.mark.slow  # decodes the encoded sound
def test_the_soundtrack_is_the_pitch_question_s_answer_and_nothing_else_names_it(gen0):
    """The tone's frequency, measured here from the decoded AAC, is the option the pitch question keys."""
    _, recs = gen0
    for r in [r for r in recs if r["task_type"] == AUDIO_TASK_TYPE][:4]:
        with av.open(r["video"]) as container:
            stream = container.streams.audio[0]
            assert stream.sample_rate == AUDIO_RATE
            samples = np.concatenate([f.to_ndarray().ravel() for f in container.decode(stream)])
        spectrum = np.abs(np.fft.rfft(samples[AUDIO_RATE : 3 * AUDIO_RATE]))
        peak = np.fft.rfftfreq(2 * AUDIO_RATE, 1 / AUDIO_RATE)[int(np.argmax(spectrum))]
        right = _text(r["options"]["ABCD".index(r["answer"])])
        assert peak == pytest.approx(PITCHES[right], abs=2)
        assert not any(_text(o) in q["question"] for q in recs for o in r["options"])


def test_too_short_a_video_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"fps\*seconds = 32 frames; vdgsynth needs >= 64"):
        generate(tmp_path, n_videos=1, fps=4, seconds=8)


def test_the_default_size_gives_every_task_type_the_questions_a_ci_needs(monkeypatch, tmp_path):
    """``ReportSettings.min_stratum`` questions per task type, so ``make demo`` shows every CI and test."""
    calls: list[dict] = []
    monkeypatch.setattr(synth, "generate", lambda out_dir, **kwargs: calls.append(kwargs) or out_dir)
    synth.main([str(tmp_path)])
    n_videos = calls[0]["n_videos"]
    assert inspect.signature(generate).parameters["n_videos"].default == n_videos
    records = _many_records(seeds=[0], n_videos=n_videos)
    per_type = Counter(r["task_type"] for r in records)
    assert set(per_type) == {*TASK_TYPES, AUDIO_TASK_TYPE}
    assert min(per_type.values()) >= ReportSettings().min_stratum
    assert len({r["question_id"] for r in records}) == len(records)


def test_vdg_synth_uses_the_generators_default_size():
    from vdg_tasks.cli import build_parser

    default = inspect.signature(generate).parameters["n_videos"].default
    assert build_parser().parse_args(["synth"]).videos == default


def test_only_text_only_questions_name_their_answer():
    for seed in range(8):  # 240 videos
        for r in _many_records([seed]):
            right = _text(r["options"]["ABCD".index(r["answer"])])
            assert (f"'{right}'" in r["question"]) == (r["task_type"] == "text_only"), r
            assert right.casefold() not in r["question"].casefold() or r["task_type"] == "text_only", r
            assert expected_rung(r["task_type"], r["video_id"], seed) == (
                "black" if r["task_type"] == AUDIO_TASK_TYPE else EXPECTED_LADDER[r["task_type"]]
            )


def test_any_video_id_gets_a_video_and_questions_need_their_own_spec():
    """Ids of other groups (the e2e tests' ``f000``) or without a number get colours too; a spec drawn with another
    seed than the questions' is refused rather than asked about with the wrong options."""
    for vid in ("f000", "k002", "clip"):
        spec = video_spec(vid, 0)
        assert (
            spec == video_spec(vid, 0) and spec.border not in spec.scenes and len(set(spec.scenes)) == len(spec.scenes)
        )
        assert len(make_questions(spec, 0, "/x.mp4")) == PER_VIDEO
    other = video_spec("s000", 1)
    assert other != video_spec("s000", 0)
    with pytest.raises(ValueError, match=r"spec of s000 is not video_spec\('s000', seed=0\)"):
        make_questions(other, 0, "/x.mp4")
