"""``vdg_probe``: a deterministic, rule-based lmms-eval model for the synthetic benchmarks.

It is the ladder's reference viewer: it answers ``vdgsynth`` questions perfectly on the original
videos and degrades exactly as the ladder predicts on perturbed ones, so the whole pipeline (task
YAMLs, video conditions, logging, analysis) can be checked end to end with no GPU and no weights.
It also answers the synthetic InfiniBench-style episodes of ``vdg_tasks.synthetic.episodes`` ("What is the
correct sequence of changing the outfits for <NAME>?"), with a ``name_mode`` that decides how far
it binds the name in the question to a person on screen.

It sees only what a real model sees: the prompt text (``context``) and the video file(s) returned
by ``doc_to_visual`` (or the decoded frames or images a task returns instead, sampled as a video's frames
are). It never reads ``doc["answer"]``, ``doc["task_type"]`` or a condition name, and never parses the
video path.

Perception: ``max_num_frames`` frames sampled with ``np.linspace(0, n_frames - 1, N).astype(int)``
(the lmms-eval/decord/qwen sampler), decoded with PyAV in one streaming, frame-threaded pass that
keeps per frame only a few RGB medians, each classified to the nearest ``vdg_tasks.vocabulary.drawing.PALETTE``
colour (its "world knowledge"): the border ring, the centre square and, per episode screen slot,
the figure's body box (None where the body is background: nobody there).

Hearing (``listen=True`` only): the dominant frequency of the first audio stream of the video file (the first
``LISTEN_SECONDS`` seconds, mono, by FFT); None when the file has no sound, when it is silent, or when a task gives
frames. Without ``listen`` the probe is deaf: it never opens an audio stream.

Rules, in order (question = the last non-option line before the options):

1. the question mentions "outfit" -> the episode rules (below);
2. a quoted word in the question equal to an option's text -> that option (text prior);
2b. "pitch" and "soundtrack" -> the option naming, in Hz, the frequency heard (within 3%); nothing heard (deaf, no
   sound) -> the text prior;
3. no usable visual signal (decode failed, no frames, or every sampled frame near-black) ->
   the *text prior*: the option whose text sorts first alphabetically;
4. "border" -> the option naming the most common border colour;
5. "at some point" -> the unique option whose colour is among the centre colours seen;
6. "first" -> order-aware: the centre colour of the first sampled frame; ``order_blind=True``:
   the option colour seen most often in the centre (ties alphabetical), a function of the
   multiset of frames only, so shuffling frames cannot change it;
7. anything else, or a rule that finds no (or several) matching options -> the text prior.

Episode rules ("outfit" questions):

* named character: the first ``drawing.CAST`` name (whole word) in the question (open-ended: in
  the first line that mentions outfits and names someone, so subtitle lines and an instruction
  line such as "Describe each of the character's outfits" do not count). Tracked slot:
  ``name_mode=aware`` -> that character's slot; ``gender`` -> the lowest slot of a cast member
  of the same gender; ``blind`` -> slot 0 whatever the name. No name -> slot 0.
* observed sequence: the tracked slot's colours over the sampled lit frames in order, absences
  dropped, consecutive repeats collapsed, then only first occurrences kept. ``order_blind=True``
  keeps only the set (sorted by name): frame order carries no information for it.
* options: each option's palette words in order of appearance; an option containing "don't
  know" is the benchmark's own IDK, one containing "cannot determine" an added abstain option.
* multiple choice: the option whose colour list equals the observation; else the unique option
  containing the observation (>= 2 colours) as a subsequence (``order_blind``: as a subset);
  otherwise (no visual signal, nothing seen, no or several matches) the abstain option if
  present, else the text prior over the non-IDK options. The benchmark's IDK is never chosen.
* open-ended (no options): "The outfits in order: red jacket, blue shirt." (``drawing.OUTFITS``
  descriptions of the observation), or "I don't know." with nothing observed.

Open-ended ``vdgsynth`` questions (no options) get words instead of a letter: a quoted word ->
that word; "border" -> "The border is <colour>."; "at some point" -> "The centre square shows
<c1>, <c2> at some point." (the distinct centre colours seen, sorted); "how many" -> the number of
distinct centre colours seen, as a numeral ("3"); "first" -> "The centre
square shows <colour> first." (order-blind: the most common centre colour); "pitch" -> "The tone is <N> Hz." (the
frequency heard, rounded to 10 Hz); nothing heard or seen, or any other question -> "I don't know."

Response format: multiple choice ``"The answer is X."`` (X a letter, A-H or beyond, or the option's number where
the options are numbered), which lmms-eval's MCQ extractors parse; open-ended, the sentence above.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np
from lmms_eval.api.model import lmms
from loguru import logger as eval_logger
from tqdm import tqdm

from model_wrappers.distributed import DataParallel
from vdg_tasks.vocabulary.drawing import (
    BACKGROUND,
    CAST,
    N_SLOTS,
    OUTFITS,
    PALETTE,
    border_px,
    centre_box,
    figure_boxes,
    nearest_colour,
)

__all__ = [
    "NAME_MODES",
    "FrameFeatures",
    "LISTEN_SECONDS",
    "VdgProbe",
    "answer_episode_question",
    "answer_open",
    "answer_question",
    "heard_pitch",
    "observed_outfits",
    "option_colours",
    "parse_prompt",
    "respond",
    "sample_features",
    "tracked_slot",
]

#: An option line, lettered ("B. red") or numbered ("2. red": the numbered condition, answered by its number).
_OPTION_RE = re.compile(r"^\s*\(?([A-Z]|[1-9])[.)]\s+(.+?)\s*$")
_QUOTED_RE = re.compile(r"['\"\u2018\u201c]([^'\"\u2019\u201d]+)['\"\u2019\u201d]")
_QUOTED_WORD_RE = re.compile(r"['\"\u2018\u201c]([A-Za-z][A-Za-z-]*)['\"\u2019\u201d]")
_COLOUR_RE = re.compile(r"\b(" + "|".join(sorted(PALETTE, key=len, reverse=True)) + r")\b")
_NAME_RE = re.compile(r"\b(" + "|".join(CAST) + r")\b")
_IDK_RE = re.compile(r"don['\u2019]?t know", re.IGNORECASE)
#: A frame is near-black when both its border and centre medians have every channel below this.
NEAR_BLACK = 40
#: A slot's body median within this RGB distance of the background means nobody stands there.
ABSENT_DISTANCE = 40
#: Values of the ``name_mode`` model arg.
NAME_MODES: tuple[str, ...] = ("aware", "gender", "blind")
_IDK_REPLY = "I don't know."
#: Seconds of sound the listening probe reads from the start of the audio stream.
LISTEN_SECONDS = 4.0
#: Below this RMS (of full scale) the sound counts as silence: nothing heard.
SILENCE_RMS = 0.01
_HZ_RE = re.compile(r"(\d+(?:\.\d+)?)\s*Hz\b", re.IGNORECASE)


def _as_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "y", "on"}:
        return True
    if text in {"0", "false", "no", "n", "off", ""}:
        return False
    raise ValueError(f"vdg_probe: expected a boolean (true/false), got {value!r}")


def _name_mode(value: object) -> str:
    mode = str(value).strip().lower()
    if mode not in NAME_MODES:
        raise ValueError(f"vdg_probe: name_mode must be one of {', '.join(NAME_MODES)}; got {value!r}")
    return mode


@dataclass(frozen=True)
class FrameFeatures:
    """What the probe keeps of one sampled frame.

    Attributes:
        border: nearest palette name of the border ring's median colour.
        centre: nearest palette name of the centre square's median colour.
        dark: whether both medians are near-black (no visual signal).
        slots: per episode screen slot (``vdg_tasks.vocabulary.drawing.figure_boxes``), the nearest palette
            name of the body box's median colour, None where it is background or the frame is
            dark; empty when the frame is too small to hold the six figures.
    """

    border: str
    centre: str
    dark: bool
    slots: tuple[str | None, ...] = ()


def _slot_colours(rgb: np.ndarray) -> tuple[str | None, ...]:
    h, w, _ = rgb.shape
    background = np.asarray(BACKGROUND, dtype=np.float64)
    out: list[str | None] = []
    for slot in range(N_SLOTS):
        (x0, y0, x1, y1), _head = figure_boxes(w, h, slot)
        body = np.median(rgb[y0:y1, x0:x1].reshape(-1, 3), axis=0)
        absent = float(np.linalg.norm(body - background)) <= ABSENT_DISTANCE
        out.append(None if absent else nearest_colour(body))
    return tuple(out)


def _features(rgb: np.ndarray) -> FrameFeatures:
    h, w, _ = rgb.shape
    t = max(1, border_px(w, h) // 2)  # the outer half of the ring, away from the inner edge
    ring = np.concatenate(
        [
            rgb[:t].reshape(-1, 3),
            rgb[-t:].reshape(-1, 3),
            rgb[:, :t].reshape(-1, 3),
            rgb[:, -t:].reshape(-1, 3),
        ]
    )
    x0, y0, x1, y1 = centre_box(w, h)
    dx, dy = (x1 - x0) // 4, (y1 - y0) // 4
    centre = rgb[y0 + dy : y1 - dy, x0 + dx : x1 - dx].reshape(-1, 3)
    b, c = np.median(ring, axis=0), np.median(centre, axis=0)
    dark = bool(b.max() < NEAR_BLACK and c.max() < NEAR_BLACK)
    if w >= 4 * N_SLOTS and h >= 8:
        slots = (None,) * N_SLOTS if dark else _slot_colours(rgb)
    else:
        slots = ()
    return FrameFeatures(nearest_colour(b), nearest_colour(c), dark, slots)


def _count_frames(path: str) -> int:
    with av.open(path) as container:
        stream = container.streams.video[0]
        if stream.frames:
            return int(stream.frames)
        return sum(1 for p in container.demux(stream) if p.size)


def _picture_features(pictures: Sequence[object], n: int) -> list[FrameFeatures]:
    """The features of ``n`` of the given frames (PIL images or arrays), taken as a video's frames would be."""
    rgb = []
    for picture in pictures:
        try:
            convert = getattr(picture, "convert", None)
            rgb.append(np.asarray(convert("RGB") if convert else picture)[..., :3])
        except Exception as exc:  # a real model that cannot read a picture answers from the rest
            eval_logger.warning(f"vdg_probe could not read a frame: {exc!r}")
    if not rgb:
        return []
    picks = np.linspace(0, len(rgb) - 1, min(n, len(rgb))).astype(int)
    return [_features(np.ascontiguousarray(rgb[i], dtype=np.uint8)) for i in picks]


def sample_features(path: str, n: int) -> list[FrameFeatures]:
    """Features of ``n`` frames at ``np.linspace(0, n_frames - 1, n).astype(int)``, in sample order.

    One streaming decode that stops after the last sampled frame; a frame sampled twice (short
    videos) is repeated. Raises whatever PyAV raises on an unreadable file.
    """
    total = _count_frames(path)
    if total <= 0:
        return []
    wanted = Counter(np.linspace(0, total - 1, n).astype(int).tolist())
    last = max(wanted)
    out: list[FrameFeatures] = []
    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_type = "FRAME"
        for i, frame in enumerate(container.decode(stream)):
            if i in wanted:
                out.extend([_features(frame.to_ndarray(format="rgb24"))] * wanted[i])
            if i >= last:
                break
    return out


def heard_pitch(path: str) -> float | None:
    """The dominant frequency (Hz) of the first ``LISTEN_SECONDS`` of ``path``'s first audio stream; None when the
    file has no audio stream or is silent there."""
    with av.open(path) as container:
        if not container.streams.audio:
            return None
        stream = container.streams.audio[0]
        rate = stream.codec_context.sample_rate or 16000
        mono = av.AudioResampler(format="flt", layout="mono", rate=rate)  # any layout and sample format, as floats
        chunks: list[np.ndarray] = []
        kept = 0
        for frame in container.decode(stream):
            for out in mono.resample(frame):
                chunks.append(out.to_ndarray().astype(np.float64).ravel())
                kept += out.samples
            if kept >= LISTEN_SECONDS * rate:
                break
    if not chunks or not rate:
        return None
    signal = np.concatenate(chunks)[: int(LISTEN_SECONDS * rate)]
    if np.sqrt(np.mean(signal**2)) < SILENCE_RMS:
        return None
    spectrum = np.abs(np.fft.rfft(signal * np.hanning(len(signal))))
    return float(np.fft.rfftfreq(len(signal), 1 / rate)[int(np.argmax(spectrum[1:])) + 1])


def _asks_pitch(question: str) -> bool:
    """A question on the pitch of a sound (not a football pitch): it names the pitch and the soundtrack."""
    q = question.lower()
    return bool(re.search(r"\bpitch\b", q)) and "soundtrack" in q


def _option_for_pitch(pitch: float, options: Sequence[tuple[str, str]]) -> str | None:
    """The one option naming a frequency within 3% of ``pitch``."""
    named = [(letter, _HZ_RE.search(text)) for letter, text in options]
    hits = [letter for letter, m in named if m and abs(float(m[1]) - pitch) <= 0.03 * pitch]
    return hits[0] if len(hits) == 1 else None


def parse_prompt(context: str) -> tuple[str, list[tuple[str, str]]]:
    """(question, [(label, option text), ...]) from a Video-MME style prompt.

    The options are the first run of consecutive ``"X. text"`` lines (``X`` a letter, or a number where the options
    are numbered); the question is the last non-empty line before them that is not an ``Options:`` header.
    """
    lines = context.splitlines()
    start = None
    options: list[tuple[str, str]] = []
    # numbered lines are options only where no line is lettered (a numbered list in an instruction is not)
    lettered = any((m := _OPTION_RE.match(line)) and m.group(1).isalpha() for line in lines)
    for i, line in enumerate(lines):
        m = _OPTION_RE.match(line)
        if m and lettered and not m.group(1).isalpha():
            m = None
        if m:
            if start is None:
                start = i
            options.append((m.group(1), m.group(2)))
        elif start is not None:
            break
    if start is None:
        return context.strip(), []
    before = [ln.strip() for ln in lines[:start] if ln.strip() and ln.strip().lower() != "options:"]
    return (before[-1] if before else ""), options


def _text_prior(options: Sequence[tuple[str, str]]) -> str:
    return min(options, key=lambda o: (o[1].lower(), o[0]))[0]


def _option_for(colour: str, options: Sequence[tuple[str, str]]) -> str | None:
    hits = [letter for letter, text in options if text.strip().lower() == colour]
    return hits[0] if len(hits) == 1 else None


def _mentions_outfit(question: str) -> bool:
    return "outfit" in question.lower()


def _is_idk(text: str) -> bool:
    return bool(_IDK_RE.search(text))


def _is_abstain(text: str) -> bool:
    return "cannot determine" in text.lower()


def option_colours(text: str) -> list[str]:
    """Palette colour words of ``text`` in order of appearance ("red jacket; blue shirt" -> [red, blue])."""
    return _COLOUR_RE.findall(text.lower())


def tracked_slot(question: str, name_mode: str = "aware") -> int:
    """Screen slot the probe watches for ``question`` under ``name_mode`` (see the module docstring)."""
    mode = _name_mode(name_mode)
    m = _NAME_RE.search(question)
    if mode == "blind" or m is None:
        return 0
    name = m.group(1)
    if mode == "aware":
        return list(CAST).index(name)
    return next(i for i, other in enumerate(CAST) if CAST[other] == CAST[name])


def observed_outfits(frames: Sequence[FrameFeatures], slot: int, order_blind: bool = False) -> list[str]:
    """Colours seen in ``slot`` over the lit ``frames``: in order, each once (sorted if ``order_blind``)."""
    seen: list[str] = []
    for f in frames:
        if f.dark or slot >= len(f.slots):
            continue
        colour = f.slots[slot]
        if colour is not None and colour not in seen:
            seen.append(colour)
    return sorted(seen) if order_blind else seen


def _is_subsequence(short: Sequence[str], long: Sequence[str]) -> bool:
    it = iter(long)
    return all(c in it for c in short)


def answer_episode_question(
    question: str,
    options: Sequence[tuple[str, str]],
    frames: Sequence[FrameFeatures],
    name_mode: str = "aware",
    order_blind: bool = False,
) -> str:
    """The letter the probe picks for an "outfit" multiple-choice question (episode rules)."""
    if not options:
        raise ValueError("answer_episode_question needs options; use answer_open for open-ended questions")
    observed = observed_outfits(frames, tracked_slot(question, name_mode), order_blind)
    candidates = [
        (letter, option_colours(text)) for letter, text in options if not (_is_idk(text) or _is_abstain(text))
    ]
    if observed:
        if order_blind:
            exact = [letter for letter, cols in candidates if sorted(set(cols)) == observed]
            partial = [letter for letter, cols in candidates if set(observed) <= set(cols)]
        else:
            exact = [letter for letter, cols in candidates if cols == observed]
            partial = [letter for letter, cols in candidates if _is_subsequence(observed, cols)]
        if len(exact) == 1:
            return exact[0]
        if not exact and len(observed) >= 2 and len(partial) == 1:
            return partial[0]
    abstain = [letter for letter, text in options if _is_abstain(text)]
    if abstain:
        return abstain[0]
    usable = [o for o in options if not _is_idk(o[1])]
    return _text_prior(usable or options)


def answer_question(
    question: str,
    options: Sequence[tuple[str, str]],
    frames: Sequence[FrameFeatures],
    order_blind: bool = False,
    name_mode: str = "aware",
    pitch: float | None = None,
) -> str:
    """The letter the probe picks, by the rules in the module docstring ("A" if no options parse); ``pitch``: the
    frequency heard (None: nothing heard)."""
    if not options:
        return "A"
    if _mentions_outfit(question):
        return answer_episode_question(question, options, frames, name_mode=name_mode, order_blind=order_blind)
    texts = {text.strip().lower(): letter for letter, text in options}
    for quoted in _QUOTED_RE.findall(question):
        if quoted.strip().lower() in texts:
            return texts[quoted.strip().lower()]
    prior = _text_prior(options)
    if _asks_pitch(question):
        return (_option_for_pitch(pitch, options) if pitch is not None else None) or prior
    lit = [f for f in frames if not f.dark]
    if not lit:
        return prior
    q = question.lower()
    if "border" in q:
        borders = Counter(f.border for f in lit)
        colour = _most_common(borders)
        return _option_for(colour, options) or prior
    if "at some point" in q:
        seen = {f.centre for f in lit}
        hits = [letter for letter, text in options if text.strip().lower() in seen]
        return hits[0] if len(hits) == 1 else prior
    if re.search(r"\bfirst\b", q):
        if not order_blind:
            return _option_for(lit[0].centre, options) or prior
        counts = Counter(f.centre for f in lit if f.centre in texts)
        if not counts:
            return prior
        colour = _most_common(counts)
        return texts[colour]
    return prior


def _most_common(counts: Counter[str]) -> str:
    """The most frequent value; ties go to the alphabetically first."""
    return min(counts, key=lambda c: (-counts[c], c))


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def _question_line(text: str) -> str:
    """The question of an open-ended prompt: the last line with a question mark, else the whole text."""
    asked = [ln for ln in _lines(text) if "?" in ln]
    return asked[-1] if asked else text.strip()


def answer_open(
    question: str,
    frames: Sequence[FrameFeatures],
    order_blind: bool = False,
    name_mode: str = "aware",
    pitch: float | None = None,
) -> str:
    """The probe's reply to an open-ended question (no options), by the rules in the module docstring."""
    outfit_lines = [ln for ln in _lines(question) if _mentions_outfit(ln)]
    if outfit_lines:
        # the name comes from the first outfit line naming a cast member (an instruction line such as
        # "Describe each of the character's outfits" names nobody; subtitle lines never say "outfit")
        named = next((ln for ln in outfit_lines if _NAME_RE.search(ln)), outfit_lines[0])
        observed = observed_outfits(frames, tracked_slot(named, name_mode), order_blind)
        if not observed:
            return _IDK_REPLY
        return "The outfits in order: " + ", ".join(OUTFITS.get(c, f"{c} outfit") for c in observed) + "."
    q_line = _question_line(question)
    quoted = _QUOTED_WORD_RE.search(q_line)
    if quoted:
        return quoted.group(1)
    if _asks_pitch(q_line):
        return _IDK_REPLY if pitch is None else f"The tone is {round(pitch, -1):.0f} Hz."
    lit = [f for f in frames if not f.dark]
    if not lit:
        return _IDK_REPLY
    q = q_line.lower()
    if "border" in q:
        borders = Counter(f.border for f in lit)
        return f"The border is {_most_common(borders)}."
    if "at some point" in q:
        return f"The centre square shows {', '.join(sorted({f.centre for f in lit}))} at some point."
    if re.search(r"\bhow many\b", q):
        return str(len({f.centre for f in lit}))
    if re.search(r"\bfirst\b", q):
        if order_blind:
            counts = Counter(f.centre for f in lit)
            colour = _most_common(counts)
        else:
            colour = lit[0].centre
        return f"The centre square shows {colour} first."
    return _IDK_REPLY


def respond(
    context: str,
    frames: Sequence[FrameFeatures],
    order_blind: bool = False,
    name_mode: str = "aware",
    by_position: bool = False,
    pitch: float | None = None,
) -> str:
    """The probe's full response to a prompt: ``"The answer is X."`` with options (``by_position``: always the first
    option's letter, whatever the options say), else :func:`answer_open`; ``pitch``: the frequency heard."""
    question, options = parse_prompt(context)
    if not options:
        return answer_open(context, frames, order_blind=order_blind, name_mode=name_mode, pitch=pitch)
    if by_position:
        return f"The answer is {options[0][0]}."
    letter = answer_question(question, options, frames, order_blind=order_blind, name_mode=name_mode, pitch=pitch)
    return f"The answer is {letter}."


class VdgProbe(DataParallel, lmms):
    """Rule-based reference model for ``vdgsynth`` and the synthetic episodes (see the module docstring).

    Args (strings from ``--model_args``):
        max_num_frames: frames sampled uniformly over the whole video (default 32).
        order_blind: answer from the multiset of frames only (default false).
        name_mode: how "outfit" questions bind the name to a person on screen: ``aware`` (the
            named character), ``gender`` (the first character of the named gender) or ``blind``
            (always the leftmost slot); default ``aware``.
        options_by: ``content`` (default: the option whose text matches what it sees) or ``position`` (always the
            first option's letter): under ``options_shuffled`` the one follows an option's text, the other its
            letter.
        listen: hear the video file's sound (default false: deaf), for questions on the pitch of its tone.

    Under ``accelerate launch`` with several processes it takes its rank, world size, accelerator
    and device from accelerate (:class:`model_wrappers.distributed.DataParallel`); lmms-eval
    shards the questions, and the answers do not depend on the rank.
    """

    is_simple = True

    def __init__(
        self,
        max_num_frames: int | str = 32,
        order_blind: bool | str = False,
        name_mode: str = "aware",
        options_by: str = "content",
        listen: bool | str = False,
        **kwargs,
    ) -> None:
        super().__init__()
        self.max_num_frames = int(max_num_frames)
        if self.max_num_frames < 1:
            raise ValueError(f"vdg_probe: max_num_frames must be >= 1, got {max_num_frames!r}")
        self.order_blind = _as_bool(order_blind)
        self.name_mode = _name_mode(name_mode)
        if options_by not in ("content", "position"):
            raise ValueError(f"vdg_probe: options_by must be content or position, got {options_by!r}")
        self.by_position = options_by == "position"
        self.listen = _as_bool(listen)
        # (path, size, mtime_ns) -> features, or the pitch heard: the questions of a video decode it once
        self._cache: dict[tuple[str, int, int], list[FrameFeatures]] = {}
        self._heard: dict[tuple[str, int, int], float | None] = {}
        ignored = {k: v for k, v in kwargs.items() if k not in {"batch_size", "device"}}
        if ignored:
            eval_logger.warning(f"vdg_probe ignores model_args {sorted(ignored)}")
        self._init_processes("vdg_probe")

    def _frames(self, visuals: object) -> list[FrameFeatures]:
        if not isinstance(visuals, (list, tuple)):
            visuals = [visuals]
        frames: list[FrameFeatures] = []
        pictures = [v for v in visuals if not isinstance(v, (str, Path))]
        if pictures:  # a task that gives decoded frames or images: sampled as a video's frames are
            return _picture_features(pictures, self.max_num_frames)
        for visual in visuals:
            try:
                st = Path(visual).stat()
                key = (str(visual), st.st_size, st.st_mtime_ns)
                if key not in self._cache:
                    self._cache[key] = sample_features(str(visual), self.max_num_frames)
                frames.extend(self._cache[key])
            except Exception as exc:  # a real model that cannot decode answers from the text
                eval_logger.warning(f"vdg_probe could not decode {visual}: {exc!r}; answering from text")
        return frames

    def _pitch(self, visuals: object) -> float | None:
        """The frequency heard in the first video file of ``visuals`` (None: deaf, no file, no sound)."""
        if not self.listen:
            return None
        given = visuals if isinstance(visuals, (list, tuple)) else [visuals]
        files = [v for v in given if isinstance(v, (str, Path))]
        if not files:
            return None
        try:
            st = Path(files[0]).stat()
            key = (str(files[0]), st.st_size, st.st_mtime_ns)
            if key not in self._heard:
                self._heard[key] = heard_pitch(str(files[0]))
            return self._heard[key]
        except Exception as exc:  # a real model that cannot decode the sound answers without it
            eval_logger.warning(f"vdg_probe could not hear {files[0]}: {exc!r}")
            return None

    def generate_until(self, requests) -> list[str]:
        self._log_shard("vdg_probe", len(requests))
        responses = []
        bar = tqdm(total=len(requests), desc="Model Responding", disable=getattr(self, "_rank", 0) != 0)
        for context, _gen_kwargs, doc_to_visual, doc_id, task, split in [r.args for r in requests]:
            doc = self.task_dict[task][split][doc_id]
            visuals = doc_to_visual(doc)
            frames = self._frames(visuals)
            response = respond(
                context,
                frames,
                order_blind=self.order_blind,
                name_mode=self.name_mode,
                by_position=self.by_position,
                pitch=self._pitch(visuals),
            )
            responses.append(response)
            self.cache_hook.add_partial("generate_until", (context, _gen_kwargs), response)
            bar.update()
        bar.close()
        return responses

    def generate_until_multi_round(self, requests) -> list[str]:
        return self.generate_until(requests)

    def loglikelihood(self, requests):
        raise NotImplementedError(
            "vdg_probe only answers generate_until requests (multiple choice by letter or a short "
            "open-ended reply); use it with generation tasks such as vdgsynth_vdg_*."
        )
