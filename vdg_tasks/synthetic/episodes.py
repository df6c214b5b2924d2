"""Synthetic TV episodes in InfiniBench's "global appearance" layout (no download needed).

InfiniBench's global-appearance task asks *"What is the correct sequence of changing the outfits
for <NAME> in this episode?"* with options that are orderings of outfits. This module builds a
stand-in show, "Synthetic Sitcom", whose answers are known by construction, so the whole vdg
protocol (prompts, video conditions, name swaps, abstention) runs end to end offline.

Construction (every random choice comes from ``rng_for(SHOW_KEY, seed, "episode_<M>", <purpose>)``,
so episodes are independent of each other and of how many are generated):

* **Cast and screen.** Six characters (``CAST``, name -> gender) stand at fixed screen positions:
  slot ``i`` spans ``x`` in ``[i*W/6, (i+1)*W/6)``. A character on screen is a skin-coloured head
  above a body box painted in the colour of its outfit (:func:`figure_boxes`); a character off
  screen leaves its slot as plain background (``BACKGROUND`` plus small seeded noise, like
  ``vdg_tasks.synthetic.synth``). The colours are ``vdg_tasks.vocabulary.drawing.PALETTE`` colours;
  ``OUTFITS`` names the outfit of each (gray and white are never outfits).
* **Timeline.** An episode (24 s at 8 fps by default) is cut into 4 consecutive segments of seeded
  length (each >= 3 s). Each episode draws 4 distinct outfit colours; each character gets its own
  permutation of them (the six permutations are distinct) and wears ``order[j]`` in segment ``j``.
  Within a segment the character is on screen only in one or two sub-intervals (``windows``),
  with >= 0.5 s off screen between any two of its windows, so "changing outfits" is always
  visible as leaving and coming back. Window boundaries are frame boundaries: frame ``f`` (time
  ``f/fps``) shows the character iff ``start_s <= f/fps < end_s``.
* **Short appearances.** In each episode one or two characters get one SHORT window (0.6-0.9 s) for
  one outfit. Sixteen uniformly sampled frames (spacing about 1.6 s at the default size) can miss
  it, so a model with few frames may see only three of the four outfits; every other window is
  long enough (>= 1 s; single windows >= 1.6 s) that 32 uniform frames always see it at the
  default size.
* **Subtitles.** One ``.srt`` per episode, 8-12 seeded lines of small talk ("Alice: Has anyone seen
  my keys?"). They never mention outfits or colours: the subtitles alone cannot answer.
* **Questions.** One per character per episode, in the published InfiniBench generator's record
  layout: six options, five orderings (the true order plus four other characters' orders, seeded)
  and the literal "I don't know" at a seeded position; ``answer_idx`` is 0-based.

What the ``vdg_probe`` name modes imply here (``model_wrappers.probe``):

* ``aware`` tracks the named character's slot: correct whenever its sampled frames see every
  window; a name swap in the question moves its answer to the swapped-in character's order.
* ``gender`` tracks the first character of the named gender (Alice or Dev): a viewer that sees
  outfits but binds names only to gender. Correct for Alice and Dev only; swapping to a
  same-gender name never changes its answer.
* ``blind`` always tracks slot 0 (Alice) whatever the name: correct for Alice only, and a name swap
  never changes its answer. A score that survives the name swap is not grounded in the name.

With dark frames or no frames the probe has no visual signal and abstains (an added "cannot
determine" option) or falls back to its text prior; it never picks the benchmark's own "I don't
know".

Size: ``N_EPISODES`` (15) episodes, 90 questions. The report gives a stratum a CI or a test only
from 30 questions (``postprocess.settings.ReportSettings.min_stratum``), and the name-swap table splits by
whether the swapped-in name has the question's gender: its seeded draw (``vdg_tasks.perturb.text``) gives
30 same-gender and 60 cross-gender swaps here (14 episodes would give 28 same-gender ones).

Usage::

    python -m vdg_tasks.synthetic.episodes OUT_DIR [--n-episodes 15] [--seed 0]
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from vdg_tasks.synthetic.synth import encode_video
from vdg_tasks.vocabulary.drawing import BACKGROUND, CAST, N_SLOTS, OUTFITS, PALETTE, figure_boxes
from vdg_tasks.vocabulary.seeding import rng_for

__all__ = [
    "IDK",
    "N_EPISODES",
    "N_SEGMENTS",
    "QUESTION_TEMPLATE",
    "SHOW",
    "SHOW_KEY",
    "SKIN",
    "CharacterTrack",
    "EpisodeSpec",
    "episode_spec",
    "generate_episodes",
    "make_questions",
    "render_episode",
    "slot_of",
    "subtitles_srt",
]

SHOW = "Synthetic Sitcom"
SHOW_KEY = "synthetic_sitcom"
SEASON = "season_1"
SOURCE = "vdg synthetic"


#: Episodes ``generate_episodes`` writes by default (six questions each; see the module docstring).
N_EPISODES = 15
N_SEGMENTS = 4
N_OPTIONS = 6  # five orderings + "I don't know"
IDK = "I don't know"
QUESTION_TEMPLATE = (
    "Choose the correct option for the following question: "
    "What is the correct sequence of changing the outfits for {name} in this episode?"
)
SKIN: tuple[int, int, int] = (210, 175, 140)
_STATIC_NOISE = 6  # +- amplitude of a per-episode fixed texture
_FRAME_NOISE = 3  # +- amplitude of per-frame noise
MIN_WIDTH, MIN_HEIGHT, MIN_FPS, MIN_SECONDS = 96, 48, 4, 3 * N_SEGMENTS

#: Small talk for the subtitles: no outfit and no colour words.
_LINES: tuple[str, ...] = (
    "Has anyone seen my keys?",
    "I told you the meeting was at noon.",
    "We should order pizza tonight.",
    "Did you water the plants?",
    "The landlord called again.",
    "I can't believe it's Monday already.",
    "Who finished the coffee?",
    "Let's go for a walk after lunch.",
    "My cousin is visiting this weekend.",
    "I think the wifi is down.",
    "You never listen to me!",
    "That's the funniest thing I've heard all week.",
    "Can someone help me move the couch?",
    "I got the job!",
    "Where did you put the remote?",
    "We need to talk about the rent.",
    "The game starts at eight.",
    "I'm going to be late for work.",
    "Is that my sandwich?",
    "Nobody touch the thermostat.",
)


def slot_of(name: str) -> int:
    """Screen slot (0..5, left to right) of cast member ``name``."""
    try:
        return list(CAST).index(name)
    except ValueError:
        raise ValueError(f"{name!r} is not in the cast of {SHOW}: {list(CAST)}") from None


@dataclass(frozen=True)
class CharacterTrack:
    """One character's ground truth in one episode.

    Attributes:
        name: cast name.
        slot: screen slot (``slot_of(name)``).
        order: palette colours of its outfits in the order worn (a permutation of the episode's four).
        windows: per outfit (in ``order``), the ``(start_s, end_s)`` intervals the character is on
            screen wearing it (frame boundaries, rounded to 3 decimals).
        frame_windows: the same intervals as half-open frame ranges ``(first, end)``.
    """

    name: str
    slot: int
    order: tuple[str, ...]
    windows: tuple[tuple[tuple[float, float], ...], ...]
    frame_windows: tuple[tuple[tuple[int, int], ...], ...]


@dataclass(frozen=True)
class EpisodeSpec:
    """Ground truth of one synthetic episode (recomputed from the seed; not written to disk).

    Attributes:
        episode: episode number ``M`` (1-based).
        seconds: duration in seconds.
        fps: frames per second.
        outfits: the episode's four outfit colours (in ``OUTFITS`` order).
        segments: the four consecutive segments as half-open frame ranges ``(first, end)``.
        characters: one track per cast member, in ``CAST`` (slot) order.
    """

    episode: int
    seconds: int
    fps: int
    outfits: tuple[str, ...]
    segments: tuple[tuple[int, int], ...]
    characters: tuple[CharacterTrack, ...]

    @property
    def n_frames(self) -> int:
        """Number of frames (``seconds * fps``)."""
        return self.seconds * self.fps

    def track(self, name: str) -> CharacterTrack:
        """The track of cast member ``name``."""
        return self.characters[slot_of(name)]

    def outfit_at(self, name: str, frame: int) -> str | None:
        """Colour ``name`` wears on screen at ``frame``, or None when off screen."""
        tr = self.track(name)
        for colour, spans in zip(tr.order, tr.frame_windows, strict=True):
            if any(a <= frame < b for a, b in spans):
                return colour
        return None


def _episode_id(episode: int) -> str:
    return f"episode_{episode}"


def _rng(seed: int, episode: int, *purpose: object) -> np.random.Generator:
    return rng_for(SHOW_KEY, seed, _episode_id(episode), *purpose)


def _segments(rng: np.random.Generator, n_frames: int, fps: int) -> tuple[tuple[int, int], ...]:
    min_len = 3 * fps
    extra = n_frames - N_SEGMENTS * min_len
    lengths = min_len + rng.multinomial(extra, [1 / N_SEGMENTS] * N_SEGMENTS)
    ends = np.cumsum(lengths)
    return tuple((int(e - n), int(e)) for e, n in zip(ends, lengths, strict=True))


def _windows_in(
    rng: np.random.Generator, segment: tuple[int, int], fps: int, short: bool
) -> tuple[tuple[int, int], ...]:
    """Frame windows of one character in one segment (one SHORT window if ``short``)."""
    margin = (fps + 3) // 4  # ceil(0.25 s): >= 0.5 s off screen across a segment boundary
    gap = (fps + 1) // 2  # ceil(0.5 s) between two windows in one segment
    lo, hi = segment[0] + margin, segment[1] - margin
    usable = hi - lo
    if short:
        length = int(rng.integers((6 * fps + 9) // 10, 9 * fps // 10 + 1))  # 0.6 .. 0.9 s
        start = lo + int(rng.integers(0, usable - length + 1))
        return ((start, start + length),)
    one_s = fps
    if usable >= 2 * one_s + gap and rng.random() < 0.4:
        total = int(rng.integers(2 * one_s + gap, usable + 1))
        first = int(rng.integers(one_s, total - gap - one_s + 1))
        start = lo + int(rng.integers(0, usable - total + 1))
        return ((start, start + first), (start + first + gap, start + total))
    min_len = min(usable, max((6 * usable + 9) // 10, (16 * fps + 9) // 10))  # >= 1.6 s where it fits
    length = int(rng.integers(min_len, usable + 1))
    start = lo + int(rng.integers(0, usable - length + 1))
    return ((start, start + length),)


def _check_timing(seconds: int, fps: int) -> None:
    if fps < MIN_FPS:
        raise ValueError(f"fps must be >= {MIN_FPS} (a 0.6-0.9 s window needs a whole frame), got {fps}")
    if seconds < MIN_SECONDS:
        raise ValueError(f"seconds must be >= {MIN_SECONDS} ({N_SEGMENTS} segments of >= 3 s), got {seconds}")


def episode_spec(episode: int, seed: int = 0, seconds: int = 24, fps: int = 8) -> EpisodeSpec:
    """The seeded ground truth of episode ``episode`` (1-based)."""
    if episode < 1:
        raise ValueError(f"episode numbers start at 1, got {episode}")
    _check_timing(seconds, fps)
    n_frames = seconds * fps
    colours = list(OUTFITS)
    picked = sorted(_rng(seed, episode, "outfits").choice(len(colours), N_SEGMENTS, replace=False).tolist())
    outfits = tuple(colours[i] for i in picked)
    perms = list(itertools.permutations(range(N_SEGMENTS)))
    chosen = _rng(seed, episode, "orders").choice(len(perms), N_SLOTS, replace=False)
    segments = _segments(_rng(seed, episode, "segments"), n_frames, fps)
    rng_short = _rng(seed, episode, "short")
    n_short = int(rng_short.integers(1, 3))
    short_chars = rng_short.choice(N_SLOTS, n_short, replace=False).tolist()
    short_segment = {int(c): int(rng_short.integers(0, N_SEGMENTS)) for c in short_chars}
    tracks = []
    for slot, name in enumerate(CAST):
        order = tuple(outfits[i] for i in perms[int(chosen[slot])])
        frame_windows = tuple(
            _windows_in(_rng(seed, episode, "windows", name, j), seg, fps, short_segment.get(slot) == j)
            for j, seg in enumerate(segments)
        )
        windows = tuple(tuple((round(a / fps, 3), round(b / fps, 3)) for a, b in spans) for spans in frame_windows)
        tracks.append(CharacterTrack(name, slot, order, windows, frame_windows))
    return EpisodeSpec(episode, seconds, fps, outfits, segments, tuple(tracks))


def render_episode(spec: EpisodeSpec, seed: int, width: int, height: int) -> Iterator[np.ndarray]:
    """Yield the RGB frames (``uint8``, height x width x 3) of ``spec`` in order, one at a time."""
    rng = _rng(seed, spec.episode, "texture")
    static = rng.integers(-_STATIC_NOISE, _STATIC_NOISE + 1, size=(height, width, 1), dtype=np.int16)
    boxes = [figure_boxes(width, height, s) for s in range(N_SLOTS)]
    base = np.empty((height, width, 3), dtype=np.int16)
    base[:] = BACKGROUND
    # per character, per frame: index into spec.outfits, -1 when off screen
    wearing = np.full((N_SLOTS, spec.n_frames), -1, dtype=np.int16)
    for tr in spec.characters:
        for colour, spans in zip(tr.order, tr.frame_windows, strict=True):
            for a, b in spans:
                wearing[tr.slot, a:b] = spec.outfits.index(colour)
    for f in range(spec.n_frames):
        frame = base.copy()
        for slot, ((bx0, by0, bx1, by1), (hx0, hy0, hx1, hy1)) in enumerate(boxes):
            k = int(wearing[slot, f])
            if k >= 0:
                frame[hy0:hy1, hx0:hx1] = SKIN
                frame[by0:by1, bx0:bx1] = PALETTE[spec.outfits[k]]
        noise = rng.integers(-_FRAME_NOISE, _FRAME_NOISE + 1, size=(height, width, 1), dtype=np.int16)
        yield np.clip(frame + static + noise, 0, 255).astype(np.uint8)


def _srt_time(ms: int) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"


def subtitles_srt(spec: EpisodeSpec, seed: int = 0) -> str:
    """The episode's subtitles as SRT text: 8-12 seeded lines of small talk at increasing times."""
    rng = _rng(seed, spec.episode, "subtitles")
    n = int(rng.integers(8, 13))
    slot_ms = spec.seconds * 1000 // n
    names = list(CAST)
    lines = rng.choice(len(_LINES), n, replace=False)
    blocks = []
    for k in range(n):
        start = k * slot_ms + int(rng.integers(0, slot_ms * 3 // 10 + 1))
        end = start + int(rng.integers(slot_ms * 4 // 10, slot_ms * 6 // 10 + 1))
        speaker = names[int(rng.integers(0, len(names)))]
        blocks.append(f"{k + 1}\n{_srt_time(start)} --> {_srt_time(end)}\n{speaker}: {_LINES[int(lines[k])]}\n")
    return "\n".join(blocks) + "\n"


def make_questions(spec: EpisodeSpec, seed: int = 0) -> list[dict]:
    """One global-appearance question record per character (``CAST`` order) of ``spec``."""
    ep = _episode_id(spec.episode)
    records = []
    for tr in spec.characters:
        rng = _rng(seed, spec.episode, "options", tr.name)
        others = [o.order for o in spec.characters if o.name != tr.name]
        distractors = [others[i] for i in sorted(rng.choice(len(others), 4, replace=False).tolist())]
        orderings = [tr.order, *distractors]
        orderings = [orderings[i] for i in rng.permutation(len(orderings))]
        options: list[list[str] | str] = [[OUTFITS[c] for c in o] for o in orderings]
        options.insert(int(rng.integers(0, N_OPTIONS)), IDK)
        answer_idx = options.index([OUTFITS[c] for c in tr.order])
        grounding = {
            OUTFITS[c]: [[float(s), float(e)] for s, e in spans] for c, spans in zip(tr.order, tr.windows, strict=True)
        }
        records.append(
            {
                "question": QUESTION_TEMPLATE.format(name=tr.name),
                "options": options,
                "answer_idx": answer_idx,
                "show": SHOW,
                "season": SEASON,
                "episode": ep,
                "source": SOURCE,
                "character": tr.name,
                "video_path_mp4": f"/{SHOW_KEY}/{SEASON}/{ep}.mp4",
                "video_path_frames": f"/{SHOW_KEY}/{SEASON}/{ep}",
                "video_subtitles": f"/{SHOW_KEY}/{SEASON}/{ep}.srt",
                "temporal_grounding": grounding,
                "question_id": f"{SHOW_KEY}_s1e{spec.episode}_{tr.name.lower()}",
            }
        )
    return records


def generate_episodes(
    out_dir: Path,
    n_episodes: int = N_EPISODES,
    seed: int = 0,
    width: int = 192,
    height: int = 96,
    fps: int = 8,
    seconds: int = 24,
    progress: bool = False,
) -> Path:
    """Write the episodes, their subtitles and the question annotations; return the annotations path (``progress``:
    a tqdm bar per episode on stderr).

    Layout under ``out_dir``: ``videos/synthetic_sitcom/season_1/episode_{M}.mp4`` (H.264 via
    ``vdg_tasks.synthetic.synth.encode_video``, byte-reproducible), ``subtitles/synthetic_sitcom/season_1/
    episode_{M}.srt`` and ``annotations/global_appearance.json`` (a JSON list of all question
    records, episodes in order, characters in ``CAST`` order), for ``M = 1..n_episodes``.
    """
    if n_episodes < 1:
        raise ValueError(f"n_episodes must be >= 1, got {n_episodes}")
    if width % 2 or height % 2 or width < MIN_WIDTH or height < MIN_HEIGHT:
        raise ValueError(
            f"width and height must be even (yuv420p) and at least {MIN_WIDTH}x{MIN_HEIGHT} "
            f"(six figures side by side), got {width}x{height}"
        )
    _check_timing(seconds, fps)
    out_dir = Path(out_dir).resolve()
    records: list[dict] = []
    for m in tqdm(range(1, n_episodes + 1), desc="vdg synth-episodes", unit="episode", disable=not progress):
        spec = episode_spec(m, seed, seconds, fps)
        ep = _episode_id(m)
        video = out_dir / "videos" / SHOW_KEY / SEASON / f"{ep}.mp4"
        encode_video(video, render_episode(spec, seed, width, height), width, height, fps)
        srt = out_dir / "subtitles" / SHOW_KEY / SEASON / f"{ep}.srt"
        srt.parent.mkdir(parents=True, exist_ok=True)
        srt.write_text(subtitles_srt(spec, seed), encoding="utf-8")
        records.extend(make_questions(spec, seed))
    annotations = out_dir / "annotations" / "global_appearance.json"
    annotations.parent.mkdir(parents=True, exist_ok=True)
    annotations.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    return annotations


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--n-episodes", type=int, default=N_EPISODES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(generate_episodes(args.out_dir, n_episodes=args.n_episodes, seed=args.seed))


if __name__ == "__main__":
    main()
