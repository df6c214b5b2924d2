"""The one place where conditions are declared.

A condition is what a model is shown instead of (or beside) the original benchmark item.
Task YAMLs, cache keys, logged fields and report columns are all derived from the
declarations below; nothing else in the package lists condition names.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

Modality = Literal["video", "text"]
#: The video transform of a condition (``vdg_tasks.perturb.video.transforms``).
#: ``none``: no visual input at all (``doc_to_visual`` gives an empty list, nothing is built).
Transform = Literal["identity", "black", "hold", "crf", "hold_at", "none", "jpeg"]
#: The question transform of a condition (``vdg_tasks.perturb.text``); ``none`` leaves the question as it is.
TextTransform = Literal[
    "none",
    "name_swap",
    "open_ended",
    "abstain",
    "metadata",
    "subtitles",
    "shuffle_options",
    "none_option",
    "no_question",
    "video_only",
    "numbered",
]
#: What a condition needs a benchmark's docs to carry (``vdg_tasks.data.benchmarks.Benchmark.provides``).
Requirement = Literal["options", "characters", "outfit_windows", "title", "subtitles", "frames"]
AnswerFormat = Literal["letter", "number", "open"]

#: The frame budget the held-key-frame conditions are built for (the most common lmms-eval default).
DEFAULT_KEY_FRAMES = 32
#: Bumped whenever a video transform's output changes for the same input; part of every cache key.
#: 3: held pictures and black coded at a constant QP (was CRF 14, whose first IDR after the skip
#: template came out near lossless: ``single`` was larger than ``ordered``).
#: 4: the video stream decord reads (not the first), the source's colour range kept, MPEG-TS decoded from the
#: start where a seek overshoots, and the source keyed by a digest of all of its bytes.
TRANSFORM_VERSION = 4


@dataclass(frozen=True)
class Condition:
    """One declared condition.

    Attributes:
        name: short identifier used in task names (``<benchmark>_vdg_<name>``), logs and reports.
        modality: whether the video (``video``) or the question text (``text``) is perturbed.
        transform: which transform implements it (see ``vdg_tasks.perturb.video.transforms``).
        params: the transform's parameters; part of the cache key and of every logged sample.
        description: one sentence for READMEs and reports.
        family: tag the condition belongs to besides ``<benchmark>_vdg`` (``ladder``, ``crf``, ``text``).
        text: the question transform (``none`` for video conditions).
        requires: what the benchmark's docs must carry for the condition to apply; a benchmark
            gets a task for every condition whose requirements it provides.
        answer_format: ``letter`` (multiple choice, parsed to a letter), ``number`` (options numbered 1-N, the
            number read and logged as its option's letter) or ``open`` (free text, scored by a judge at report time).
        max_new_tokens: the generation budget when it differs from the benchmark's (open answers).
        protocols: further tags (``<benchmark>_vdg_<protocol>``) grouping conditions run together.
        tagged: False puts the condition's task in no tag (``<benchmark>_vdg``, its family's, a protocol's): it runs
            when named. ``blind``: the classes known not to take an empty visual list get error rows
            (``vdg_tasks.lmms.model_classes``), but one nobody has read yet could end a whole
            ``--tasks <benchmark>_vdg`` run on it.
    """

    name: str
    modality: Modality
    transform: Transform
    description: str
    family: str
    params: Mapping[str, Any] = field(default_factory=dict)
    text: TextTransform = "none"
    requires: frozenset[Requirement] = frozenset()
    answer_format: AnswerFormat = "letter"
    max_new_tokens: int | None = None
    protocols: tuple[str, ...] = ()
    tagged: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "requires", frozenset(self.requires))
        if (self.modality == "text") != (self.text != "none"):
            raise ValueError(
                f"condition {self.name!r}: modality {self.modality!r} does not match text transform {self.text!r}"
            )

    def bound(self, **params: Any) -> Condition:
        """This condition with per-question parameters added (the oracle frames' times): cache keys see them."""
        return dataclasses.replace(self, params={**self.params, **params})

    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def shows_video(self) -> bool:
        """Whether the model is shown a video at all (``blind`` shows none)."""
        return self.transform != "none"


def _ladder(
    name: str,
    transform: Transform,
    description: str,
    protocols: tuple[str, ...] = (),
    tagged: bool = True,
    **params: Any,
) -> Condition:
    return Condition(name, "video", transform, description, "ladder", params, protocols=protocols, tagged=tagged)


def crf(level: int, preset: str = "medium") -> Condition:
    """H.264 re-encode of the source at a constant rate factor (the paper's compression protocol)."""
    return Condition(
        f"crf{level}",
        "video",
        "crf",
        f"The source re-encoded with libx264 at CRF {level} (preset {preset}); same size, rate, duration and audio.",
        "crf",
        {"crf": level, "preset": preset},
    )


CRF_LEVELS = (18, 23, 28, 33, 38)


def jpeg(quality: int) -> Condition:
    """Each of a task's own frames re-encoded as JPEG: the compression ladder of a task that gives frames, in place
    of ``crf`` (there is no video stream to re-encode); family ``crf``, so ``<task>_vdg_crf`` runs either."""
    return Condition(
        f"jpeg{quality}",
        "video",
        "jpeg",
        f"Each of the task's own frames re-encoded as JPEG at quality {quality} (Pillow, 4:2:0), same size and mode: "
        "the compression ladder of a task that gives frames.",
        "crf",
        {"quality": quality},
        requires=frozenset({"frames"}),
    )


#: JPEG qualities of the frame tasks' compression ladder, from light to heavy (as ``CRF_LEVELS``).
JPEG_QUALITIES = (90, 70, 50, 30, 10)

#: The tag of the character-tracking protocol (seed 003's C1-C6, C8, C9; C7 is `vdg sweep`).
TRACKING = "tracking"
#: The option the abstain condition adds, after the question's last option.
ABSTAIN_OPTION = "I cannot determine this from the video."
#: What the none_option condition writes in place of the correct option's text (lmms-eval's ``gt_none_option``).
NONE_OPTION = "None"
#: The question video_only asks in place of the question and options (lmms-eval's ``video_only_abcd``, its letters
#: those of the question's options).
VIDEO_ONLY_INSTRUCTION = (
    "There is no question. Guess which option letter ({letters}) is correct. Answer with the option's letter only."
)
#: The family of the probes lmms-eval ships as hand-written variants of a few benchmarks (``random_choice``,
#: ``gt_none_option``, ``video_only_abcd``), here for every benchmark with options and read per question.
PROBE = "probe"

_DECLARED: tuple[Condition, ...] = (
    _ladder("orig", "identity", "The source video, untouched.", protocols=(TRACKING,)),
    _ladder(
        "black",
        "black",
        "Every pixel black, with the source's duration, size and audio, on the held conditions' timeline.",
        protocols=(TRACKING,),
    ),
    _ladder(
        "blind",
        "none",
        "No visual input at all (the task's doc_to_visual gives an empty list), the question and options "
        "unchanged: the text-only baseline of lmms-eval's no_visual variants (run by name: in no tag).",
        tagged=False,
    ),
    _ladder(
        "single",
        "hold",
        "The middle of K uniformly placed key frames (K = frame count on shorter sources) held for the whole duration.",
        k=DEFAULT_KEY_FRAMES,
        order="single",
    ),
    _ladder(
        "shuffled",
        "hold",
        "The K key frames of `ordered`, each held for duration/K, in a seeded non-identity permutation.",
        k=DEFAULT_KEY_FRAMES,
        order="shuffled",
    ),
    _ladder(
        "ordered",
        "hold",
        "K key frames at segment centres, each held for duration/K, in their original order.",
        k=DEFAULT_KEY_FRAMES,
        order="ordered",
    ),
    _ladder(
        "reversed",
        "hold",
        "The K key frames of `ordered` in reverse order (the last first), each held for duration/K: the "
        "temporal-direction probe.",
        k=DEFAULT_KEY_FRAMES,
        order="reversed",
    ),
    *(crf(level) for level in CRF_LEVELS),
    *(jpeg(quality) for quality in JPEG_QUALITIES),
    Condition(
        "oracle",
        "video",
        "hold_at",
        "One frame from inside each ground-truth outfit window (the midpoint of its longest interval), in time "
        "order, each held for an equal share of the source's duration.",
        "tracking",
        {"pick": "midpoint of each outfit's longest window"},
        requires=frozenset({"outfit_windows"}),
        protocols=(TRACKING,),
    ),
    Condition(
        "nameswap",
        "text",
        "identity",
        "The character the question names replaced by another main character of the show (seeded per question); "
        "video and options unchanged.",
        "text",
        text="name_swap",
        requires=frozenset({"characters"}),
        protocols=(TRACKING,),
    ),
    Condition(
        "open",
        "text",
        "identity",
        "The options removed: the model answers in its own words, scored 0 / 0.5 / 1 by a judge at report time.",
        "text",
        text="open_ended",
        requires=frozenset({"options"}),
        answer_format="open",
        max_new_tokens=512,
        protocols=(TRACKING,),
    ),
    Condition(
        "abstain",
        "text",
        "identity",
        f'An option "{ABSTAIN_OPTION}" added after the last option (its letter is logged as abstain_letter).',
        "text",
        {"option": ABSTAIN_OPTION},
        text="abstain",
        requires=frozenset({"options"}),
        protocols=(TRACKING,),
    ),
    Condition(
        "options_shuffled",
        "text",
        "identity",
        "The options in a permutation seeded by the question id that always moves the correct option to "
        "another letter, the answer moved with its text (logged as shuffled_from): does the model follow an "
        "option's content or its position? (lmms-eval's random_choice, without its per-process hash() seed.)",
        PROBE,
        text="shuffle_options",
        requires=frozenset({"options"}),
    ),
    Condition(
        "none_option",
        "text",
        "identity",
        f"The correct option's text replaced by \"{NONE_OPTION}\", its letter still the answer (lmms-eval's "
        "gt_none_option): does the model see that the right answer is missing, or pick the nearest distractor?",
        PROBE,
        {"option": NONE_OPTION},
        text="none_option",
        requires=frozenset({"options"}),
    ),
    Condition(
        "no_question",
        "text",
        "identity",
        "The video and the lettered options without the question text: the mirror of VDG (question dependency = "
        "correct(orig) - correct(no_question)).",
        PROBE,
        text="no_question",
        requires=frozenset({"options"}),
    ),
    Condition(
        "video_only",
        "text",
        "identity",
        "The video and an instruction to guess the option letter, with neither question nor options (lmms-eval's "
        "video_only_abcd): the answer-key prior the video alone reveals.",
        PROBE,
        {"instruction": VIDEO_ONLY_INSTRUCTION},
        text="video_only",
        requires=frozenset({"options"}),
    ),
    Condition(
        "numbered",
        "text",
        "identity",
        "The options labelled 1-N instead of A-N in the task's own layout, and its instructions and prompt settings "
        "(lmms_eval_specific_kwargs) that name letters naming numbers (lmms-eval's number_option); the number read "
        "from the reply is logged as its option's letter: the format-sensitivity gap per question.",
        PROBE,
        text="numbered",
        requires=frozenset({"options"}),
        answer_format="number",
    ),
    Condition(
        "metadata",
        "text",
        "black",
        "No video content (black frames, as `black`); the show and episode title added before the question: "
        "a contamination check.",
        "text",
        text="metadata",
        requires=frozenset({"title"}),
        protocols=(TRACKING,),
    ),
    Condition(
        "subtitles",
        "text",
        "identity",
        "The source video, with the episode's subtitle text (parsed from its .srt, at most 4,000 characters) "
        "added before the question.",
        "text",
        {"max_chars": 4000},
        text="subtitles",
        requires=frozenset({"subtitles"}),
        protocols=(TRACKING,),
    ),
)

CONDITIONS: Mapping[str, Condition] = MappingProxyType({c.name: c for c in _DECLARED})

#: The diagnostic ladder, from no visual content to the full video.
LADDER: tuple[str, ...] = ("black", "single", "shuffled", "ordered", "orig")

#: Conditions the ladder compares with a rung without being a rung themselves.
LADDER_PROBES: tuple[str, ...] = ("reversed",)

#: The no-vision arms: ``black`` keeps the visual tokens (the VDG's control), ``blind`` gives the model none.
NO_VISION: tuple[str, ...] = ("black", "blind")

#: Ladder deltas: (column name, upper condition, lower condition).
LADDER_DELTAS: tuple[tuple[str, str, str], ...] = (
    ("spatial", "single", "black"),
    ("diversity", "shuffled", "single"),
    ("temporal", "ordered", "shuffled"),
    ("sampling", "orig", "ordered"),
    ("direction", "ordered", "reversed"),
)


#: The conditions that ask vdg's own open-ended question (free text, judged) instead of the benchmark's.
OPEN_ANSWER: frozenset[str] = frozenset(c.name for c in _DECLARED if c.answer_format == "open")


def conditions_for(provides: frozenset[Requirement]) -> list[Condition]:
    """The declared conditions that apply to docs carrying ``provides``, in declaration order."""
    return [c for c in CONDITIONS.values() if c.requires <= provides]


def get_condition(name: str) -> Condition:
    """Return the declared condition called ``name``; an unknown name suggests the nearest ones."""
    try:
        return CONDITIONS[name]
    except KeyError:
        near = difflib.get_close_matches(name, list(CONDITIONS), n=3)
        hint = f" Did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        raise KeyError(f"Unknown condition {name!r}.{hint} Declared: {', '.join(CONDITIONS)}.") from None


def protocol_conditions(protocol: str) -> list[str]:
    """The conditions a protocol tag groups, in declaration order."""
    return [c.name for c in CONDITIONS.values() if protocol in c.protocols and c.tagged]


def families() -> dict[str, list[str]]:
    """Family tag -> the tagged condition names, in declaration order."""
    out: dict[str, list[str]] = {}
    for c in CONDITIONS.values():
        if c.tagged:
            out.setdefault(c.family, []).append(c.name)
    return out
