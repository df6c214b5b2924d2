"""``vdgsynth``: a tiny synthetic video benchmark whose ladder is known by construction.

Each video is a border ring in one constant colour around a centre rectangle whose colour changes
through ``S`` equal-length scenes (``S`` in {3, 4}), with a soundtrack: one steady tone whose pitch
(``PITCHES``) only the sound gives. Every video gets one question per task type; each visual type
(``TASK_TYPES``) needs exactly one more rung of the vdg ladder than the one before it
(see ``EXPECTED_LADDER``), and ``audio_only`` (``AUDIO_TASK_TYPE``, "what pitch is the tone?") needs the sound
and no picture: every video condition but ``mute`` keeps the sound (``black`` too), ``mute`` removes it, so
``mute`` beside ``black`` separates the two. The questions use the Video-MME record layout, so lmms-eval's
``videomme_doc_to_text`` builds the prompt.

Every random choice is drawn from ``rng_for("vdgsynth", seed, video_id, <purpose>)``: videos are
independent of each other and of how many are generated, and no global stream is touched.

A text shortcut sits inside one visual task type, as in real benchmarks: about a third of the
``single_frame`` questions name the border colour in the question (``text_leak``). Those are answerable
from the text at every rung (their expected rung is ``black``); they are what ``vdg debias`` should
remove within a task type before it touches the rest.

A task type has one question per video, so ``N_VIDEOS`` (30) videos give it the 30 questions the
report needs before it gives a stratum a CI or a test (``postprocess.options.Options.min_stratum``).
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
    "LEAKED_SHARE",
    "expected_rung",
    "make_questions",
    "middle_scenes",
    "text_leak",
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

#: Chance that a video's ``single_frame`` question names its answer (``text_leak``).
LEAKED_SHARE = 1 / 3

LETTERS = ("A", "B", "C", "D")
#: Videos ``generate`` writes by default: one question per task type each, and 30 questions per
#: stratum is the report's default minimum for a CI or a test (``Options.min_stratum``).
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


def video_spec(video_id: str, seed: int = 0, n_frames: int = 128) -> VideoSpec:
    """The seeded colours of ``video_id``."""
    rng = rng_for(BENCHMARK, seed, video_id, "colours")
    n_scenes = int(rng.choice([3, 4]))
    names = list(PALETTE)
    picked = rng.permutation(len(names))[: 1 + n_scenes]
    border = names[picked[0]]
    scenes = tuple(names[j] for j in picked[1:])
    pitches = list(PITCHES)
    pitch = pitches[int(rng_for(BENCHMARK, seed, video_id, "pitch").integers(len(pitches)))]
    return VideoSpec(video_id, border, scenes, n_frames, pitch)


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


def text_leak(video_id: str, seed: int = 0) -> bool:
    """Whether the ``single_frame`` question of ``video_id`` names its answer (quotes the border colour)."""
    return bool(rng_for(BENCHMARK, seed, video_id, "leak").random() < LEAKED_SHARE)


def expected_rung(task_type: str, video_id: str, seed: int = 0) -> str:
    """The lowest ladder rung at which an ideal viewer answers this question: its task type's
    (``EXPECTED_LADDER``), or ``black`` for a question that names its answer (``text_leak``) and for the
    soundtrack's pitch (``audio_only``: every rung keeps the sound; a viewer who listens needs no picture)."""
    if (task_type == "single_frame" and text_leak(video_id, seed)) or task_type == AUDIO_TASK_TYPE:
        return "black"
    return EXPECTED_LADDER[task_type]


def make_questions(spec: VideoSpec, seed: int, video_path: str) -> list[dict]:
    """The five question records of one video: ``TASK_TYPES`` in order (question_id suffix 1..4), then
    ``audio_only`` (suffix 5).

    Each video's four visual questions use every answer letter exactly once (a seeded permutation over
    them), so their letters are exactly balanced overall and random within each task type; the audio
    question's letter is a seeded uniform draw.
    """
    vid = spec.video_id
    palette = list(PALETTE)
    letters = [LETTERS[j] for j in rng_for(BENCHMARK, seed, vid, "letters").permutation(4)]
    absent = [c for c in palette if c != spec.border and c not in spec.scenes]

    def pick(purpose: str, pool: Sequence[str], n: int) -> list[str]:
        r = rng_for(BENCHMARK, seed, vid, purpose)
        return [pool[j] for j in r.permutation(len(pool))[:n]]

    # text_only: the word is in the question.
    words = pick("words", WORDS, 4)
    text_q = f"The narrator of this clip says the word '{words[0]}'. Which word does the narrator say?"
    # single_frame: the border colour (named in the question when it leaks).
    border_d = pick("border", [c for c in palette if c != spec.border], 3)
    border_q = "What colour is the border of the video?"
    if text_leak(vid, seed):
        border_q = f"The border of this clip is painted '{spec.border}'. {border_q}"
    # multi_frame: a scene the middle frame cannot show; distractors never appear.
    excluded = middle_scenes(spec)
    eligible = [c for i, c in enumerate(spec.scenes) if i not in excluded]
    multi_correct = pick("multi_correct", eligible, 1)[0]
    multi_d = pick("multi_distractors", absent, 3)
    # temporal_order: every scene colour is an option, filled up with absent colours.
    fillers = pick("temporal_fillers", absent, 4 - len(spec.scenes))
    temporal_d = list(spec.scenes[1:]) + fillers

    specs = [
        ("text_only", text_q, words[0], words[1:]),
        ("single_frame", border_q, spec.border, border_d),
        (
            "multi_frame",
            "Which of these colours does the centre square show at some point?",
            multi_correct,
            multi_d,
        ),
        ("temporal_order", "Which colour does the centre square show first?", spec.scenes[0], temporal_d),
        (
            AUDIO_TASK_TYPE,
            "What pitch is the tone heard in this clip's soundtrack?",
            spec.pitch,
            pick("pitch_distractors", [p for p in PITCHES if p != spec.pitch], 3),
        ),
    ]
    letters.append(LETTERS[int(rng_for(BENCHMARK, seed, vid, "audio_letter").integers(len(LETTERS)))])
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
    for i in range(n_videos):
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
