"""``vdgsynth``: a tiny synthetic video benchmark whose ladder is known by construction.

Each video is a border ring in one constant colour around a centre rectangle whose colour changes
through ``S`` equal-length scenes (``S`` in {3, 4}), with a soundtrack: one steady tone whose pitch
(``PITCHES``) only the sound gives. Every video gets one question per task type; each visual type
(``TASK_TYPES``) needs exactly one more rung of the vdg ladder than the one before it
(see ``EXPECTED_LADDER``), and ``audio_only`` (``AUDIO_TASK_TYPE``, "what pitch is the tone?") needs the sound
and no picture: every video condition but ``mute`` keeps the sound (``black`` too), ``mute`` removes it, so
``mute`` beside ``black`` separates the two. The questions use the Video-MME record layout, so lmms-eval's
``videomme_doc_to_text`` builds the prompt.

Every random choice is drawn from ``rng_for("vdgsynth", seed, <stable ids>, <purpose>)``, never from ``hash()`` or a
shared stream, and each video's from its own id, so the first ``n`` videos of a larger benchmark are the benchmark
of ``n``. A video's colours are one uniform permutation of ``PALETTE`` whose positions are the roles (its border,
its scenes, the ``temporal_order`` filler of a 3-scene video, the ``multi_frame`` distractors, the colours none of
its other questions show); its ``multi_frame`` answer is its first or its last scene, at even odds; its pitch and
the pitch question's three distractors are a uniform draw of four of ``PITCHES``; its four visual questions take
the four answer letters in a uniform order, its ``audio_only`` question a uniform letter.

So every option text of a task type other than ``text_only`` is, by symmetry, right with probability exactly one
in four whenever a question shows it, and every answer letter is equally likely, question by question and
independently across videos: the text says nothing about the answer, and what a cross-validated text-only answerer
learns from one fold tells it nothing about another. (An earlier design balanced them exactly, every colour right
in exactly a quarter of the questions showing it; cross-validation then scored *below* chance, since the right
options of the questions a fold holds out were exactly those its training folds saw right less often.)
``vdg shortcuts`` reads the types' accuracies against the family of task types (Holm, Bonferroni intervals).

Only ``text_only`` carries a text shortcut, by construction (the question quotes its answer): it is what
``vdg shortcuts`` finds and ``vdg debias`` removes. No other question's own text says anything about its answer
(read together, one video's questions still do: the ``multi_frame`` answer is a scene, and the ``temporal_order``
options name every scene).

A task type has one question per video, so ``N_VIDEOS`` (30) videos give it the 30 questions the
report needs before it gives a stratum a CI or a test (``postprocess.settings.ReportSettings.min_stratum``).
More questions per video would only repeat its one border, its one first scene, ...: answers that
stand or fall together, counted as independent questions, would narrow every question-level CI.

Usage::

    python -m vdg_tasks.synthetic.synth OUT_DIR [--n-videos 30] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType

import av
import numpy as np
from tqdm import tqdm

from vdg_tasks.vocabulary.conditions import DEFAULT_KEY_FRAMES, LADDER
from vdg_tasks.vocabulary.drawing import BACKGROUND, PALETTE, border_px, centre_box
from vdg_tasks.vocabulary.seeding import rng_for

__all__ = [
    "AUDIO_TASK_TYPE",
    "BENCHMARK",
    "EXPECTED_LADDER",
    "PITCHES",
    "N_VIDEOS",
    "TASK_TYPES",
    "VideoSpec",
    "WORDS",
    "generate",
    "expected_rung",
    "make_questions",
    "middle_scenes",
    "render_frames",
    "rgb_to_yuv420p",
    "video_spec",
]

BENCHMARK = "vdgsynth"


#: Words the text-only question quotes from.
WORDS: tuple[str, ...] = (
    "falcon",
    "harbor",
    "lantern",
    "meadow",
    "pebble",
    "quartz",
    "saddle",
    "thistle",
    "velvet",
    "walnut",
    "willow",
    "ember",
)

#: Task types in ladder order: each needs one more rung than the one before.
TASK_TYPES: tuple[str, ...] = ("text_only", "single_frame", "multi_frame", "temporal_order")

#: Task type -> the lowest ladder rung at which an ideal viewer can answer it (below it: chance).
#: ``text_only`` is answerable from the question alone (``black``); ``single_frame`` from any one
#: frame (``single``); ``multi_frame`` needs a scene the middle frame does not show, i.e. several
#: distinct frames in any order (``shuffled``); ``temporal_order`` needs their order (``ordered``).
EXPECTED_LADDER: Mapping[str, str] = MappingProxyType(
    {
        "text_only": "black",
        "single_frame": "single",
        "multi_frame": "shuffled",
        "temporal_order": "ordered",
    }
)
#: The task type whose answer is only in the sound: the pitch of the soundtrack's tone (outside the ladder).
AUDIO_TASK_TYPE = "audio_only"
#: The pitches a soundtrack's tone takes, as its options name them, in hertz (a video's one is drawn from them). An
#: option does not start with its number: `numbered` refuses options that are numbers (which number would name it?).
PITCHES: Mapping[str, int] = MappingProxyType({f"about {hz} Hz": hz for hz in (220, 330, 440, 550, 660, 880)})
#: The soundtrack's sample rate and the tone's amplitude (of full scale).
AUDIO_RATE = 16000
_TONE_AMPLITUDE = 0.3
if tuple(EXPECTED_LADDER[t] for t in TASK_TYPES) != LADDER[:4]:  # pragma: no cover - import-time check
    raise RuntimeError(f"EXPECTED_LADDER no longer follows conditions.LADDER {LADDER}; update synth.py.")

LETTERS = ("A", "B", "C", "D")
#: Videos ``generate`` writes by default: one question per task type each, and 30 questions per
#: stratum is the report's default minimum for a CI or a test (``ReportSettings.min_stratum``).
N_VIDEOS = 30
_STATIC_NOISE = 6  # +- amplitude of a per-video fixed texture
_FRAME_NOISE = 3  # +- amplitude of per-frame noise


@dataclass(frozen=True)
class VideoSpec:
    """Ground truth of one synthetic video (not written to the jsonl; recomputed from the seed).

    Attributes:
        video_id: ``s000``, ``s001``, ...
        border: palette name of the constant border ring.
        scenes: palette names of the centre rectangle, one per scene, in time order; distinct, none
            equal to ``border``.
        n_frames: number of frames (``fps * seconds``).
        pitch: the soundtrack's tone, a name of ``PITCHES``.
    """

    video_id: str
    border: str
    scenes: tuple[str, ...]
    n_frames: int
    pitch: str

    def scene_of(self, frame: int) -> int:
        """Index of the scene that frame ``frame`` belongs to (scenes have equal length +-1)."""
        if not 0 <= frame < self.n_frames:
            raise ValueError(f"frame {frame} outside 0..{self.n_frames - 1} of video {self.video_id}")
        return frame * len(self.scenes) // self.n_frames


def middle_scenes(spec: VideoSpec, k: int = DEFAULT_KEY_FRAMES) -> frozenset[int]:
    """Scenes any "middle key frame" can fall in: frames within 2 key-frame spacings of the centre.

    ``single`` holds the middle of ``k`` key frames; whether that is key frame ``k//2`` or
    ``(k-1)//2``, and at a segment centre or edge, it lies in this window.
    """
    n = spec.n_frames
    half = 2 * n / k
    lo = max(0, int(np.floor(n / 2 - half)))
    hi = min(n - 1, int(np.ceil(n / 2 + half)))
    return frozenset(spec.scene_of(f) for f in range(lo, hi + 1))


def _video_id(i: int) -> str:
    return f"s{i:03d}"


@dataclass(frozen=True)
class _Colours:
    """One video's colours: its ``VideoSpec`` part and the options its questions show besides the answer."""

    border: str
    scenes: tuple[str, ...]
    temporal_filler: tuple[str, ...]  # the 4th temporal_order option of a 3-scene video
    multi_answer: str
    multi_distractors: tuple[str, ...]
    border_distractors: tuple[str, ...]


# roles of the colour square's columns
_BORDER, _FIRST, _LAST, _MIDDLE, _MIDDLE2, _MULTI_D, _UNSHOWN = 0, 1, 2, 3, 4, (5, 6, 7), (8, 9)


def _colours(video_id: str, seed: int) -> _Colours:
    rng = rng_for(BENCHMARK, seed, video_id, "colours")
    names = list(PALETTE)
    row = tuple(names[j] for j in rng.permutation(len(names)))  # the colours of the roles, by column
    multi_answer = row[_FIRST] if rng.random() < 0.5 else row[_LAST]
    four = bool(rng_for(BENCHMARK, seed, video_id, "scene_count").random() < 0.5)
    middle = (row[_MIDDLE], row[_MIDDLE2]) if four else (row[_MIDDLE],)
    return _Colours(
        border=row[_BORDER],
        scenes=(row[_FIRST], *middle, row[_LAST]),
        temporal_filler=() if four else (row[_MIDDLE2],),
        multi_answer=multi_answer,
        multi_distractors=tuple(row[j] for j in _MULTI_D),
        border_distractors=(*(row[j] for j in _UNSHOWN), row[_MIDDLE]),
    )


def _pitches(video_id: str, seed: int) -> tuple[str, ...]:
    """The video's pitch, then the three distractors of its pitch question."""
    names = list(PITCHES)
    return tuple(names[j] for j in rng_for(BENCHMARK, seed, video_id, "pitches").permutation(len(names))[:4])


def _letters(video_id: str, seed: int) -> tuple[str, ...]:
    """The answer letters of the video's ``TASK_TYPES`` questions (each letter once), then of its audio one."""
    rng = rng_for(BENCHMARK, seed, video_id, "letters")
    visual = rng.permutation(len(LETTERS))[: len(TASK_TYPES)]
    return tuple(LETTERS[j] for j in (*visual, int(rng.integers(len(LETTERS)))))


def video_spec(video_id: str, seed: int = 0, n_frames: int = 128) -> VideoSpec:
    """The seeded colours and pitch of ``video_id`` (drawn from its id: see the module docstring)."""
    colours = _colours(video_id, seed)
    return VideoSpec(video_id, colours.border, colours.scenes, n_frames, _pitches(video_id, seed)[0])


def render_frames(spec: VideoSpec, seed: int, width: int, height: int) -> Iterator[np.ndarray]:
    """Yield the RGB frames (``uint8``, height x width x 3) of ``spec`` in order."""
    rng = rng_for(BENCHMARK, seed, spec.video_id, "texture")
    static = rng.integers(-_STATIC_NOISE, _STATIC_NOISE + 1, size=(height, width, 1), dtype=np.int16)
    b = border_px(width, height)
    x0, y0, x1, y1 = centre_box(width, height)
    base = np.empty((height, width, 3), dtype=np.int16)
    base[:] = BACKGROUND
    border_rgb = np.array(PALETTE[spec.border], dtype=np.int16)
    base[:b], base[-b:], base[:, :b], base[:, -b:] = border_rgb, border_rgb, border_rgb, border_rgb
    for f in range(spec.n_frames):
        frame = base.copy()
        frame[y0:y1, x0:x1] = PALETTE[spec.scenes[spec.scene_of(f)]]
        noise = rng.integers(-_FRAME_NOISE, _FRAME_NOISE + 1, size=(height, width, 1), dtype=np.int16)
        yield np.clip(frame + static + noise, 0, 255).astype(np.uint8)


def rgb_to_yuv420p(rgb: np.ndarray) -> np.ndarray:
    """BT.601 limited-range planar YUV 4:2:0 (PyAV's ``yuv420p`` ndarray layout, (h*3/2) x w).

    Converted here in numpy, so the encoder's input does not depend on the libswscale build.
    """
    h, w, _ = rgb.shape
    r, g, b = (rgb[..., i].astype(np.float64) for i in range(3))
    y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
    cb = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
    cr = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255

    def sub(c: np.ndarray) -> np.ndarray:
        return c.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))

    out = np.concatenate([y.ravel(), sub(cb).ravel(), sub(cr).ravel()]).reshape(h * 3 // 2, w)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def tone(hz: float, seconds: float, rate: int = AUDIO_RATE) -> np.ndarray:
    """A steady sine tone: ``float32`` samples in [-1, 1] (amplitude ``_TONE_AMPLITUDE``)."""
    t = np.arange(int(round(seconds * rate))) / rate
    return (_TONE_AMPLITUDE * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def encode_video(
    path: Path,
    frames: Iterable[np.ndarray],
    width: int,
    height: int,
    fps: int,
    crf: int = 18,
    sound: np.ndarray | None = None,
) -> None:
    """H.264 in an mp4 (with ``sound``, mono ``AUDIO_RATE`` samples, as AAC), byte-reproducible for equal input on
    one PyAV build.

    x264's output depends on its thread count (auto = the machine's cores), so one thread; and
    with macroblock-tree rate control on, identical input gave different bytes from run to run
    (PyAV 15.1, x264 core 165), so ``mbtree=0``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    with av.open(str(tmp), mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=Fraction(fps))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": str(crf), "preset": "veryfast", "x264-params": "mbtree=0"}
        stream.codec_context.thread_count = 1
        audio = None
        if sound is not None:
            audio = container.add_stream("aac", rate=AUDIO_RATE, layout="mono")
            audio.codec_context.thread_count = 1
        for i, rgb in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(rgb_to_yuv420p(rgb), format="yuv420p")
            frame.pts, frame.time_base = i, Fraction(1, fps)
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
        if audio is not None and sound is not None:
            for start in range(0, len(sound), 1024):
                chunk = av.AudioFrame.from_ndarray(sound[None, start : start + 1024], format="fltp", layout="mono")
                chunk.sample_rate, chunk.pts, chunk.time_base = AUDIO_RATE, start, Fraction(1, AUDIO_RATE)
                container.mux(audio.encode(chunk))
            container.mux(audio.encode(None))
    tmp.replace(path)


def _mc(rng: np.random.Generator, correct: str, distractors: Sequence[str], letter: str) -> tuple[list[str], str]:
    """Options with ``correct`` at ``letter`` and the (shuffled) distractors elsewhere."""
    if len(distractors) != 3 or correct in distractors:
        raise ValueError(f"need 3 distractors different from {correct!r}, got {list(distractors)}")
    others = [distractors[j] for j in rng.permutation(3)]
    pos = LETTERS.index(letter)
    texts = others[:pos] + [correct] + others[pos:]
    return [f"{L}. {t}" for L, t in zip(LETTERS, texts, strict=True)], letter


def expected_rung(task_type: str, video_id: str, seed: int = 0) -> str:
    """The lowest ladder rung at which an ideal viewer answers this question: its task type's
    (``EXPECTED_LADDER``), or ``black`` for the soundtrack's pitch (``audio_only``: every rung keeps the sound; a
    viewer who listens needs no picture). ``video_id`` and ``seed`` name the question (every question of a type
    has its type's rung)."""
    if task_type == AUDIO_TASK_TYPE:
        return "black"
    return EXPECTED_LADDER[task_type]


def make_questions(spec: VideoSpec, seed: int, video_path: str) -> list[dict]:
    """The five question records of one video: ``TASK_TYPES`` in order (question_id suffix 1..4), then
    ``audio_only`` (suffix 5).

    The options besides the answer and the answer letters are the video's own draws (see the module docstring):
    its four visual questions use every answer letter once, and every option text of a task type but
    ``text_only`` is right with probability one in four whenever a question shows it.

    Raises:
        ValueError: ``spec`` is not ``video_spec(spec.video_id, seed)`` (the questions would not match the video).
    """
    vid = spec.video_id
    colours = _colours(vid, seed)
    pitches = _pitches(vid, seed)
    if (spec.border, spec.scenes, spec.pitch) != (colours.border, colours.scenes, pitches[0]):
        raise ValueError(f"spec of {vid} is not video_spec({vid!r}, seed={seed}): its questions would not match it")
    letters = _letters(vid, seed)

    # text_only: the word is in the question.
    words = [WORDS[j] for j in rng_for(BENCHMARK, seed, vid, "words").permutation(len(WORDS))[:4]]
    text_q = f"The narrator of this clip says the word '{words[0]}'. Which word does the narrator say?"
    # single_frame: the border colour.
    border_q = "What colour is the border of the video?"
    # multi_frame: a scene the middle frame cannot show (the first or the last); distractors never appear.
    if spec.scenes.index(colours.multi_answer) in middle_scenes(spec):  # pragma: no cover - n_frames >= 2 key frames
        raise ValueError(f"{vid}: at {spec.n_frames} frames the middle key frame can show the multi_frame answer")
    # temporal_order: every scene colour is an option, filled up with an absent colour.
    temporal_d = [*spec.scenes[1:], *colours.temporal_filler]

    specs = [
        ("text_only", text_q, words[0], words[1:]),
        ("single_frame", border_q, spec.border, colours.border_distractors),
        (
            "multi_frame",
            "Which of these colours does the centre square show at some point?",
            colours.multi_answer,
            colours.multi_distractors,
        ),
        ("temporal_order", "Which colour does the centre square show first?", spec.scenes[0], temporal_d),
        (AUDIO_TASK_TYPE, "What pitch is the tone heard in this clip's soundtrack?", spec.pitch, pitches[1:]),
    ]
    records = []
    for i, ((task_type, question, correct, distractors), letter) in enumerate(
        zip(specs, letters, strict=True), start=1
    ):
        options, answer = _mc(rng_for(BENCHMARK, seed, vid, "order", task_type), correct, distractors, letter)
        records.append(
            {
                "question_id": f"{vid}-{i}",
                "videoID": vid,
                "video_id": vid,
                "video": video_path,
                "duration": "short",
                "task_type": task_type,
                "question": question,
                "options": options,
                "answer": answer,
            }
        )
    return records


def generate(
    out_dir: Path,
    n_videos: int = N_VIDEOS,
    seed: int = 0,
    width: int = 160,
    height: int = 120,
    fps: int = 8,
    seconds: int = 16,
    progress: bool = False,
) -> Path:
    """Write ``out_dir/videos/<video_id>.mp4`` and ``out_dir/questions.jsonl``; return the jsonl path.

    Videos are H.264 (libx264, CRF 18, preset veryfast, yuv420p) with an AAC soundtrack (the tone),
    byte-reproducible. Record fields follow lmms-eval's Video-MME docs: question_id, videoID, video_id,
    video (absolute mp4 path), duration, task_type, question, options (``["A. red", ...]``), answer (``"A"``..``"D"``).
    """
    n_frames = fps * seconds
    if n_frames < 2 * DEFAULT_KEY_FRAMES:
        raise ValueError(
            f"fps*seconds = {n_frames} frames; vdgsynth needs >= {2 * DEFAULT_KEY_FRAMES} "
            f"(twice the {DEFAULT_KEY_FRAMES} key frames the hold conditions use). Raise fps or seconds."
        )
    if n_videos < 1:
        raise ValueError(f"n_videos must be >= 1, got {n_videos}")
    if width % 2 or height % 2 or min(width, height) < 24:
        raise ValueError(f"width and height must be even and >= 24 for yuv420p, got {width}x{height}")
    out_dir = Path(out_dir).resolve()
    records: list[dict] = []
    for i in tqdm(range(n_videos), desc="vdg synth", unit="video", disable=not progress):
        vid = _video_id(i)
        spec = video_spec(vid, seed, n_frames)
        path = out_dir / "videos" / f"{vid}.mp4"
        sound = tone(PITCHES[spec.pitch], seconds)
        encode_video(path, render_frames(spec, seed, width, height), width, height, fps, sound=sound)
        records.extend(make_questions(spec, seed, str(path)))
    jsonl = out_dir / "questions.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return jsonl


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--n-videos", type=int, default=N_VIDEOS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(generate(args.out_dir, n_videos=args.n_videos, seed=args.seed))


if __name__ == "__main__":
    main()
