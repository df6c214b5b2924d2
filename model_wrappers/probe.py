"""``vdg_probe``: a deterministic, rule-based lmms-eval model for the synthetic benchmark.

It is the ladder's reference viewer: it answers ``vdgsynth`` questions perfectly on the original
videos and degrades exactly as the ladder predicts on perturbed ones, so the whole pipeline (task
YAMLs, video conditions, logging, analysis) can be checked end to end with no GPU and no weights.

It sees only what a real model sees: the prompt text (``context``) and the video file(s) returned
by ``doc_to_visual``. It never reads ``doc["answer"]``, ``doc["task_type"]`` or a condition name,
and never parses the video path.

Perception: ``max_num_frames`` frames sampled with ``np.linspace(0, n_frames - 1, N).astype(int)``
(the lmms-eval/decord/qwen sampler), decoded with PyAV in one streaming, frame-threaded pass that
keeps per frame only two RGB medians (the border ring and the centre square), each classified to
the nearest ``vdg_tasks.synth.PALETTE`` colour (its "world knowledge").

Rules, in order (question = the last non-option line before the options):

1. a quoted word in the question equal to an option's text -> that option (text prior);
2. no usable visual signal (decode failed, no frames, or every sampled frame near-black) ->
   the *text prior*: the option whose text sorts first alphabetically;
3. "border" -> the option naming the most common border colour;
4. "at some point" -> the unique option whose colour is among the centre colours seen;
5. "first" -> order-aware: the centre colour of the first sampled frame; ``order_blind=True``:
   the option colour seen most often in the centre (ties alphabetical), a function of the
   multiset of frames only, so shuffling frames cannot change it;
6. anything else, or a rule that finds no (or several) matching options -> the text prior.

Response format: ``"The answer is X."`` (X a letter), which lmms-eval's MCQ extractors parse.
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

from vdg_tasks.synth import border_px, centre_box, nearest_colour

__all__ = ["FrameFeatures", "VdgProbe", "answer_question", "parse_prompt", "sample_features"]

_OPTION_RE = re.compile(r"^\s*\(?([A-Z])[.)]\s+(.+?)\s*$")
_QUOTED_RE = re.compile(r"['\"\u2018\u201c]([^'\"\u2019\u201d]+)['\"\u2019\u201d]")
#: A frame is near-black when both its border and centre medians have every channel below this.
NEAR_BLACK = 40


def _as_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "y", "on"}:
        return True
    if text in {"0", "false", "no", "n", "off", ""}:
        return False
    raise ValueError(f"vdg_probe: expected a boolean (true/false), got {value!r}")


@dataclass(frozen=True)
class FrameFeatures:
    """What the probe keeps of one sampled frame.

    Attributes:
        border: nearest palette name of the border ring's median colour.
        centre: nearest palette name of the centre square's median colour.
        dark: whether both medians are near-black (no visual signal).
    """

    border: str
    centre: str
    dark: bool


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
    return FrameFeatures(nearest_colour(b), nearest_colour(c), dark)


def _count_frames(path: str) -> int:
    with av.open(path) as container:
        stream = container.streams.video[0]
        if stream.frames:
            return int(stream.frames)
        return sum(1 for p in container.demux(stream) if p.size)


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


def parse_prompt(context: str) -> tuple[str, list[tuple[str, str]]]:
    """(question, [(letter, option text), ...]) from a Video-MME style prompt.

    The options are the first run of consecutive ``"X. text"`` lines; the question is the last
    non-empty line before them that is not an ``Options:`` header.
    """
    lines = context.splitlines()
    start = None
    options: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        m = _OPTION_RE.match(line)
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


def answer_question(
    question: str,
    options: Sequence[tuple[str, str]],
    frames: Sequence[FrameFeatures],
    order_blind: bool = False,
) -> str:
    """The letter the probe picks, by the rules in the module docstring ("A" if no options parse)."""
    if not options:
        return "A"
    texts = {text.strip().lower(): letter for letter, text in options}
    for quoted in _QUOTED_RE.findall(question):
        if quoted.strip().lower() in texts:
            return texts[quoted.strip().lower()]
    prior = _text_prior(options)
    lit = [f for f in frames if not f.dark]
    if not lit:
        return prior
    q = question.lower()
    if "border" in q:
        borders = Counter(f.border for f in lit)
        colour = min(borders, key=lambda c: (-borders[c], c))
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
        colour = min(counts, key=lambda c: (-counts[c], c))
        return texts[colour]
    return prior


class VdgProbe(lmms):
    """Rule-based reference model for ``vdgsynth`` (see the module docstring).

    Args (strings from ``--model_args``):
        max_num_frames: frames sampled uniformly over the whole video (default 32).
        order_blind: answer "first" questions from the multiset of frames only (default false).
    """

    is_simple = True

    def __init__(self, max_num_frames: int | str = 32, order_blind: bool | str = False, **kwargs) -> None:
        super().__init__()
        self.max_num_frames = int(max_num_frames)
        if self.max_num_frames < 1:
            raise ValueError(f"vdg_probe: max_num_frames must be >= 1, got {max_num_frames!r}")
        self.order_blind = _as_bool(order_blind)
        # (path, size, mtime_ns) -> features: the 4 questions of a video decode it once
        self._cache: dict[tuple[str, int, int], list[FrameFeatures]] = {}
        ignored = {k: v for k, v in kwargs.items() if k not in {"batch_size", "device"}}
        if ignored:
            eval_logger.warning(f"vdg_probe ignores model_args {sorted(ignored)}")

    def _frames(self, visuals: object) -> list[FrameFeatures]:
        if not isinstance(visuals, (list, tuple)):
            visuals = [visuals]
        frames: list[FrameFeatures] = []
        for visual in visuals:
            if not isinstance(visual, (str, Path)):
                continue
            try:
                st = Path(visual).stat()
                key = (str(visual), st.st_size, st.st_mtime_ns)
                if key not in self._cache:
                    self._cache[key] = sample_features(str(visual), self.max_num_frames)
                frames.extend(self._cache[key])
            except Exception as exc:  # a real model that cannot decode answers from the text
                eval_logger.warning(f"vdg_probe could not decode {visual}: {exc!r}; answering from text")
        return frames

    def generate_until(self, requests) -> list[str]:
        responses = []
        for context, _gen_kwargs, doc_to_visual, doc_id, task, split in [r.args for r in requests]:
            doc = self.task_dict[task][split][doc_id]
            frames = self._frames(doc_to_visual(doc))
            question, options = parse_prompt(context)
            letter = answer_question(question, options, frames, order_blind=self.order_blind)
            response = f"The answer is {letter}."
            responses.append(response)
            self.cache_hook.add_partial("generate_until", (context, _gen_kwargs), response)
        return responses

    def generate_until_multi_round(self, requests) -> list[str]:
        return self.generate_until(requests)

    def loglikelihood(self, requests):
        raise NotImplementedError(
            "vdg_probe only answers generate_until requests (multiple choice by letter); "
            "use it with generation tasks such as vdgsynth_vdg_*."
        )
