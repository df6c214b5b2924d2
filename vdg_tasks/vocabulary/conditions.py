"""The one place where conditions are declared, and the registry that adds those declared elsewhere.

A condition is what a model is shown instead of (or beside) the original benchmark item.
Task YAMLs, cache keys, logged fields and report columns are all derived from the
declarations below and from the modules the registry loads; nothing else in the package lists condition names.

The registry (``CONDITIONS``, built on first use): vdg's core declarations below, then the conditions of the modules
``SHIPPED_MODULES`` (vdg's own, written through the public API ``vdg_tasks.extend``, as a user's are), of the modules
the entry points of group ``vdg.conditions`` name, and of the modules ``$VDG_CONDITIONS`` names (comma-separated), in
that order. Each such module declares ``CONDITIONS``, a sequence of conditions made by ``vdg_tasks.extend``. A module
that fails to import, a declaration that is not valid, or a name already taken is left out and said in
``registry().problems``: the ``vdg`` command refuses to run with any, the hooks inside lmms-eval log it as a warning
and go on without that condition.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import inspect
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, get_args

from vdg_tasks.vocabulary.plugins import import_named, named_modules

Modality = Literal["video", "text"]
#: The video transform of a condition (``vdg_tasks.perturb.video.transforms``).
#: ``none``: no visual input at all (``doc_to_visual`` gives an empty list, nothing is built). ``frames`` and
#: ``container``: a function declared through ``vdg_tasks.extend`` (``Condition.apply``), given each frame or the file;
#: ``filter``: an FFmpeg filter chain (``Condition.apply`` gives it for a ``Picture``) run on the frames.
Transform = Literal["identity", "black", "hold", "crf", "hold_at", "none", "jpeg", "frames", "container", "filter"]
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
    "doc",
]
#: What a condition needs a benchmark's docs to carry (``vdg_tasks.data.benchmarks.Benchmark.provides``).
Requirement = Literal["options", "characters", "outfit_windows", "title", "subtitles", "frames", "audio"]
#: What a condition may declare it changes besides what it perturbs; validation of its output follows the declaration.
Change = Literal["size", "duration", "frames"]
CHANGES: tuple[str, ...] = get_args(Change)
AnswerFormat = Literal["letter", "number", "open"]
#: How the report reads a condition (``Condition.measure``): which comparison its table makes. The report names no
#: condition but orig and black; it finds the others by what they declare here. ``difference``: its accuracy change
#: against orig (table ``added_conditions``; ``beside`` adds a second arm). ``rung``: a rung of the diagnostic ladder
#: (``LADDER``); ``compression``: a rung of the compression ladder (``crf``/``jpeg``, family ``crf``; the ``crf`` and
#: ``crf_flips`` tables read the ``crf<level>`` rungs). ``no_vision``: the arm with no visual input at all, read beside
#: ``black`` (table ``no_vision``). The probes (table ``probes``, column ``measure``): ``content_share`` (the share of
#: moved choices that follow the option's text), ``none_rate`` (the share choosing the "None" that replaced the answer),
#: ``question_dependency`` and ``format_gap`` (orig - the condition), ``above_chance`` (accuracy - chance). The
#: character-tracking protocol (``tracking_*`` tables): ``window_frames`` and ``text_context`` (McNemar against orig),
#: ``swap_sensitivity`` (name swap), ``abstention`` (an added "cannot tell" option), ``judged_answer`` (free text scored
#: by the judge), ``title_chance`` (the title without the video, against chance).
Measure = Literal[
    "difference",
    "rung",
    "compression",
    "no_vision",
    "content_share",
    "none_rate",
    "question_dependency",
    "above_chance",
    "format_gap",
    "window_frames",
    "text_context",
    "swap_sensitivity",
    "abstention",
    "judged_answer",
    "title_chance",
]
MEASURES: tuple[str, ...] = get_args(Measure)
#: The measures a condition declared through ``vdg_tasks.extend`` may take: those whose tables read any condition
#: declaring them (the others name roles in vdg's own ladders and protocols).
DECLARABLE_MEASURES: tuple[str, ...] = ("difference", "question_dependency", "format_gap", "above_chance")

#: The frame budget the held-key-frame conditions are built for (the most common lmms-eval default).
DEFAULT_KEY_FRAMES = 32
#: Bumped whenever a video transform's output changes for the same input; part of every cache key.
#: 3: held pictures and black coded at a constant QP (was CRF 14, whose first IDR after the skip
#: template came out near lossless: ``single`` was larger than ``ordered``).
#: 4: the video stream decord reads (not the first), the source's colour range kept, MPEG-TS decoded from the
#: start where a seek overshoots, and the source keyed by a digest of all of its bytes.
TRANSFORM_VERSION = 4


@dataclass(frozen=True)
class TransformContext:
    """What a transform declared through ``vdg_tasks.extend`` is told about the item it changes (``Context`` there).

    Attributes:
        params: the condition's parameters (part of its cache key and of every logged sample).
        seed: a seed for any random choice, derived from the condition's name and the video's (for a text transform,
            the question's) id: the same on every machine and in every process.
        index: the frame's index in the video, or in the task's list of frames (frame transforms; 0 otherwise).
        video_stream: the index of the video stream the models decode (container transforms; None otherwise).
    """

    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    seed: int = 0
    index: int = 0
    video_stream: int | None = None

    def rng(self) -> Any:
        """A numpy Generator seeded by ``seed`` and ``index`` (the same draws for a frame whoever decodes it)."""
        # numpy only for a transform that draws, not on import of the vocabulary
        import numpy as np

        return np.random.default_rng([self.seed, self.index])


@dataclass(frozen=True)
class Picture:
    """The frames a ``filter`` condition's graph runs on (``vdg_tasks.extend.filter_condition``).

    Attributes:
        width: in pixels (the luma plane's).
        height: in pixels.
        pix_fmt: ``yuv420p`` or ``yuv444p`` (a video's frames as they are encoded: 8-bit, the source's range), or
            ``gbrp`` (a task that gives frames: RGB in planes G, B, R, full range).
        chroma_shift: log2 of the chroma planes' subsampling, (horizontal, vertical): ``(1, 1)`` for ``yuv420p``, so a
            distance of ``d`` pixels is ``d / 2`` samples there; ``(0, 0)`` for ``yuv444p`` and ``gbrp``.
        full_range: whether the samples are full range (0-255) rather than limited (16-235).
    """

    width: int
    height: int
    pix_fmt: str
    chroma_shift: tuple[int, int]
    full_range: bool

    @property
    def range_name(self) -> str:
        """FFmpeg's name of the range (``pc`` full, ``tv`` limited), for a filter's ``in_range``/``out_range``."""
        return "pc" if self.full_range else "tv"


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
        in_main_tag: whether ``<benchmark>_vdg`` (the audit run by default) runs it; False: only its family's tag,
            its protocols' and its name do (conditions declared through ``vdg_tasks.extend``).
        apply: the function of a ``frames``, ``container``, ``filter`` or ``doc`` transform (``vdg_tasks.extend``).
        declared_in: the module that declared it through ``vdg_tasks.extend`` ("" for the core declarations here).
        source_digest: sha256 of that module's source and of the module defining ``apply``: part of the cache key, so
            an edit serves no video built before it.
        changes: what its output may change besides its pixels or sound (``Change``); the output is checked for the
            rest (``vdg_tasks.perturb.video.probe.check_output``).
        beside: a condition the report places it beside (``mute`` beside ``black``).
        measure: how the report reads it (``Measure``): ``difference`` against orig unless declared otherwise.
        beside_reading: what the two differences of a ``beside`` comparison mean, said in the report's reading
            column: a ``str.format`` template of ``own`` (orig - this condition) and ``beside`` (orig - the other),
            both on the questions answered under all three ("" says nothing more).
        aliases: other names of it in prediction files of other harnesses (``single_frame`` for ``single``).
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
    in_main_tag: bool = True
    apply: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    declared_in: str = ""
    source_digest: str = ""
    changes: frozenset[Change] = frozenset()
    beside: str | None = None
    measure: Measure = "difference"
    beside_reading: str = ""
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "requires", frozenset(self.requires))
        object.__setattr__(self, "changes", frozenset(self.changes))
        if (self.modality == "text") != (self.text != "none"):
            raise ValueError(
                f"condition {self.name!r}: modality {self.modality!r} does not match text transform {self.text!r}"
            )
        if (self.transform in ("frames", "container", "filter") or self.text == "doc") != (self.apply is not None):
            raise ValueError(
                f"condition {self.name!r}: a frames, container, filter or doc transform, and only one, has apply"
            )

    @property
    def in_audit(self) -> bool:
        """Whether ``<benchmark>_vdg``, the audit run by default, runs it: ``tagged`` and ``in_main_tag``."""
        return self.tagged and self.in_main_tag

    def bound(self, **params: Any) -> Condition:
        """This condition with per-question parameters added (the oracle frames' times): cache keys see them."""
        return dataclasses.replace(self, params={**self.params, **params})

    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def shows_video(self) -> bool:
        """Whether the model is shown a video at all (``blind`` shows none)."""
        return self.transform != "none"

    @property
    def decodes_source(self) -> bool:
        """Whether the video shown is built from the source's decoded pictures (PyAV's), which must then be the ones
        the models' decoder presents under ``orig``: every video condition but ``orig`` (the source itself),
        ``black`` (no picture of it) and no video."""
        return self.transform not in ("identity", "black", "none")


def _ladder(
    name: str,
    transform: Transform,
    description: str,
    protocols: tuple[str, ...] = (),
    tagged: bool = True,
    measure: Measure = "rung",
    aliases: tuple[str, ...] = (),
    **params: Any,
) -> Condition:
    return Condition(
        name, "video", transform, description, "ladder", params, protocols=protocols, tagged=tagged, measure=measure,
        aliases=aliases,
    )  # fmt: skip


def crf(level: int, preset: str = "medium") -> Condition:
    """H.264 re-encode of the source at a constant rate factor (the paper's compression protocol)."""
    return Condition(
        f"crf{level}",
        "video",
        "crf",
        f"The source re-encoded with libx264 at CRF {level} (preset {preset}); same size, rate, duration and audio.",
        "crf",
        {"crf": level, "preset": preset},
        measure="compression",
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
        measure="compression",
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


def _probe(
    name: str,
    text: TextTransform,
    description: str,
    measure: Measure,
    answer_format: AnswerFormat = "letter",
    **params: Any,
) -> Condition:
    """A probe: a question transform on a benchmark with options, in family ``probe``."""
    return Condition(
        name, "text", "identity", description, PROBE, params, text=text, requires=frozenset({"options"}),
        answer_format=answer_format, measure=measure,
    )  # fmt: skip


_DECLARED: tuple[Condition, ...] = (
    _ladder("orig", "identity", "The source video, untouched.", protocols=(TRACKING,), aliases=("original",)),
    _ladder(
        "black",
        "black",
        "Every pixel black, with the source's duration, size and audio, on the held conditions' timeline.",
        protocols=(TRACKING,),
        aliases=("blackscreen", "black_screen"),
    ),
    _ladder(
        "blind",
        "none",
        "No visual input at all (the task's doc_to_visual gives an empty list), the question and options "
        "unchanged: the text-only baseline of lmms-eval's no_visual variants (run by name: in no tag).",
        tagged=False,
        measure="no_vision",
    ),
    _ladder(
        "single",
        "hold",
        "The middle of K uniformly placed key frames (K = frame count on shorter sources) held for the whole duration.",
        k=DEFAULT_KEY_FRAMES,
        order="single",
        aliases=("singleframe", "single_frame"),
    ),
    _ladder(
        "shuffled",
        "hold",
        "The K key frames of `ordered`, each held for duration/K, in a seeded non-identity permutation.",
        k=DEFAULT_KEY_FRAMES,
        order="shuffled",
        aliases=("shuffle",),
    ),
    _ladder(
        "ordered",
        "hold",
        "K key frames at segment centres, each held for duration/K, in their original order.",
        k=DEFAULT_KEY_FRAMES,
        order="ordered",
        aliases=("order",),
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
        measure="window_frames",
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
        measure="swap_sensitivity",
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
        measure="judged_answer",
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
        measure="abstention",
    ),
    _probe(
        "options_shuffled",
        "shuffle_options",
        "The options in a permutation seeded by the question id that always moves the correct option to "
        "another letter, the answer moved with its text (logged as shuffled_from): does the model follow an "
        "option's content or its position? (lmms-eval's random_choice, without its per-process hash() seed.)",
        "content_share",
    ),
    _probe(
        "none_option",
        "none_option",
        f"The correct option's text replaced by \"{NONE_OPTION}\", its letter still the answer (lmms-eval's "
        "gt_none_option): does the model see that the right answer is missing, or pick the nearest distractor?",
        "none_rate",
        option=NONE_OPTION,
    ),
    _probe(
        "no_question",
        "no_question",
        "The video and the lettered options without the question text: the mirror of VDG (question dependency = "
        "correct(orig) - correct(no_question)).",
        "question_dependency",
    ),
    _probe(
        "video_only",
        "video_only",
        "The video and an instruction to guess the option letter, with neither question nor options (lmms-eval's "
        "video_only_abcd): the answer-key prior the video alone reveals.",
        "above_chance",
        instruction=VIDEO_ONLY_INSTRUCTION,
    ),
    _probe(
        "numbered",
        "numbered",
        "The options labelled 1-N instead of A-N in the task's own layout, and its instructions and prompt settings "
        "(lmms_eval_specific_kwargs) that name letters naming numbers (lmms-eval's number_option); the number read "
        "from the reply is logged as its option's letter: the format-sensitivity gap per question.",
        "format_gap",
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
        measure="title_chance",
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
        measure="text_context",
    ),
)

#: vdg's core declarations, before the registry adds the modules' (``CONDITIONS``).
CORE: Mapping[str, Condition] = MappingProxyType({c.name: c for c in _DECLARED})

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
#: Ladder deltas taken in place of one whose rung is missing: (column name, upper, lower, the missing rung). Without
#: ``ordered``, temporal is orig - shuffled.
LADDER_FALLBACKS: tuple[tuple[str, str, str, str], ...] = (("temporal", "orig", "shuffled", "ordered"),)


#: The conditions that ask vdg's own open-ended question (free text, judged) instead of the benchmark's.
OPEN_ANSWER: frozenset[str] = frozenset(c.name for c in _DECLARED if c.answer_format == "open")


# ---------------------------------------------------------------------------------------------
# The registry: the core declarations and those of modules written against vdg_tasks.extend

#: The entry point group naming modules of conditions (``[project.entry-points."vdg.conditions"]``).
ENTRY_POINT_GROUP = "vdg.conditions"
#: Modules of conditions named in the environment (comma-separated), for a module that is not installed: lmms-eval
#: imports vdg's hooks itself, so no command-line flag would reach them.
MODULES_ENV = "VDG_CONDITIONS"
#: vdg's own conditions written only through the public API, loaded as a user's module is.
SHIPPED_MODULES: tuple[str, ...] = ("vdg_tasks.extend.shipped",)
#: A condition name: it is part of task names, file names and report columns.
NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


@dataclass(frozen=True)
class Registry:
    """Every condition in registry order, and what was left out and why (one sentence each)."""

    conditions: Mapping[str, Condition]
    problems: tuple[str, ...]


def condition_modules() -> list[tuple[str, str]]:
    """(module, where it was named) for every module of conditions: shipped, entry points, then ``$VDG_CONDITIONS``."""
    return named_modules(ENTRY_POINT_GROUP, MODULES_ENV, SHIPPED_MODULES)


def source_digest(module: Any, functions: list[Callable[..., Any]]) -> str:
    """sha256 over the contents of the source files of ``module`` and of the modules defining ``functions`` (each
    file's own sha256, sorted: the same code gives the same digest wherever it is installed).

    Raises:
        OSError, TypeError: a module or function without a readable source file.
    """
    files = {inspect.getsourcefile(module) or ""}
    for function in functions:
        try:
            files.add(inspect.getsourcefile(function) or "")
        except TypeError:  # a builtin or C function: no source to follow
            continue
    found = [f for f in files if f]
    if not found:
        raise OSError(f"no source file of module {getattr(module, '__name__', module)!r} to digest")
    contents = sorted(hashlib.sha256(Path(name).read_bytes()).hexdigest() for name in found)
    return hashlib.sha256("".join(contents).encode()).hexdigest()


#: What a module's condition may not name its family or protocol: the tags vdg's own tables read (``ladder``,
#: ``crf``, ``probe``, ``tracking``, ...).
CORE_TAGS: frozenset[str] = frozenset({c.family for c in _DECLARED} | {p for c in _DECLARED for p in c.protocols})
_REQUIREMENTS = frozenset(get_args(Requirement))


def declaration_problem(condition: Any, taken: Mapping[str, Condition], tags: set[str]) -> str | None:
    """Why a module's declaration cannot join the registry (None: it can)."""
    if not isinstance(condition, Condition):
        return f"{condition!r} is not a condition (vdg_tasks.extend makes them)"
    name = condition.name
    if not NAME.fullmatch(name) or "_vdg_" in name or name.startswith("vdg_"):
        return (
            f"condition name {name!r} is not lower-case letters, digits and _ (at most 40, a letter first, no vdg_ "
            "or _vdg_: task names are <benchmark>_vdg_<name>)"
        )
    if name in taken:
        owner = taken[name].declared_in or "vdg's core (vdg_tasks.vocabulary.conditions)"
        return f"condition {name!r} is already declared by {owner}"
    if name in tags:
        return f"condition name {name!r} is a family or protocol tag's"
    for tag in (condition.family, *condition.protocols):
        if not NAME.fullmatch(tag) or tag == name or tag in taken:
            return f"tag {tag!r} of condition {name!r} is not a valid tag name, or is a condition's name"
        if tag in CORE_TAGS:
            return f"tag {tag!r} of condition {name!r} is vdg's core tag, whose tables read only vdg's conditions"
    if condition.answer_format != "letter" or condition.max_new_tokens is not None:
        return f"condition {name!r}: a declared condition keeps the benchmark's answer (no answer_format or max tokens)"
    odd = sorted(set(condition.requires) - _REQUIREMENTS) + sorted(set(condition.changes) - set(CHANGES))
    if odd:
        return f"condition {name!r}: unknown requirement or change {', '.join(map(repr, odd))}"
    try:
        json.dumps(dict(condition.params), sort_keys=True)
    except (TypeError, ValueError) as exc:
        return f"condition {name!r}: its params are not JSON (they are part of its cache key): {exc}"
    if condition.beside is not None and condition.beside not in taken:
        return f"condition {name!r} is to be placed beside {condition.beside!r}, which is not declared"
    if condition.measure not in DECLARABLE_MEASURES:
        return (
            f"condition {name!r}: measure {condition.measure!r} is not one a declared condition may take "
            f"({', '.join(DECLARABLE_MEASURES)})"
        )
    try:
        if not isinstance(condition.beside_reading, str):
            raise TypeError(f"a {type(condition.beside_reading).__name__}, not a str")
        condition.beside_reading.format(own=0.0, beside=0.0)
    except Exception as exc:  # a user's template: whatever it raises is said, not raised
        return f"condition {name!r}: beside_reading is not a template of own and beside ({exc})"
    clashes = {alias for c in taken.values() for alias in c.aliases} & {name, *condition.aliases}
    if clashes:
        return f"condition {name!r}: {', '.join(sorted(clashes))} already stands for a declared condition (an alias)"
    return None


def _module_conditions(module_name: str, where: str, taken: dict[str, Condition]) -> list[str]:
    """Add ``module_name``'s conditions to ``taken``; the problems, one sentence each."""
    hooks_before = _HOOKS in sys.modules
    module, problem = import_named(module_name, where)
    if module is None:
        return [str(problem)]
    if _HOOKS in sys.modules and not hooks_before:  # built from the registry while it was being built: core only
        return [
            f"module {module_name!r} ({where}) imports vdg's hooks ({_HOOKS}) on import, which then lack every "
            "declared condition: a module of conditions imports nothing of vdg but vdg_tasks.extend"
        ]
    declared = getattr(module, "CONDITIONS", None)
    if not isinstance(declared, (list, tuple)):
        return [f"module {module_name!r} ({where}) has no CONDITIONS list of conditions"]
    problems = []
    functions = [c.apply for c in declared if isinstance(c, Condition) and c.apply is not None]
    try:
        digest = source_digest(module, functions)
    except (OSError, TypeError) as exc:
        return [f"module {module_name!r} ({where}): its source cannot be read for the cache key's digest: {exc}"]
    tags = {c.family for c in taken.values()} | {p for c in taken.values() for p in c.protocols}
    for condition in declared:
        problem = declaration_problem(condition, taken, tags)
        if problem is not None:
            problems.append(f"module {module_name!r} ({where}): {problem}; it is left out")
            continue
        joined = dataclasses.replace(condition, declared_in=module_name, source_digest=digest, in_main_tag=False)
        taken[condition.name] = joined
        tags |= {condition.family, *condition.protocols}
    return problems


#: The module of lmms-eval's hooks, generated from the registry on import (a module of conditions must not import it).
_HOOKS = "vdg_tasks.lmms.hooks"
#: True while the registry imports the modules: a module that reads ``CONDITIONS`` on import sees the core ones.
_loading = False
_built: Registry | None = None


def registry() -> Registry:
    """The core declarations and every module's (built once per process; ``reload_registry`` builds it again).

    While it is being built (a module importing vdg's hooks, or reading ``CONDITIONS``, on import) it is the core
    declarations alone, not kept: a module of conditions should import nothing of vdg but ``vdg_tasks.extend``.
    """
    global _loading, _built
    if _built is not None:
        return _built
    if _loading:
        return Registry(CORE, ())
    _loading = True
    try:
        taken = dict(CORE)
        problems: list[str] = []
        for module, where in condition_modules():
            problems += _module_conditions(module, where, taken)
    finally:
        _loading = False
    _built = Registry(MappingProxyType(taken), tuple(problems))
    return _built


def reload_registry() -> Registry:
    """Build the registry again (after ``$VDG_CONDITIONS`` or an installed module changed; a module already imported
    is not imported again)."""
    global _built
    _built = None
    return registry()


class _Registered(Mapping[str, Condition]):
    """``CONDITIONS``: the registry's conditions, looked up on each use (the core ones while it is being built)."""

    def _all(self) -> Mapping[str, Condition]:
        return CORE if _loading else registry().conditions

    def __getitem__(self, name: str) -> Condition:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"CONDITIONS({', '.join(self._all())})"


#: Every registered condition, name -> ``Condition``, in registry order (the core ones first).
CONDITIONS: Mapping[str, Condition] = _Registered()


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


def measured(measure: Measure) -> list[str]:
    """The registered conditions the report reads by ``measure`` (``Condition.measure``), in registry order."""
    return [c.name for c in CONDITIONS.values() if c.measure == measure]


def core_measured(measure: Measure) -> str:
    """The one core condition the report reads by ``measure`` (a role in one of vdg's own protocols).

    Raises:
        LookupError: no core condition, or more than one, declares it.
    """
    found = [c.name for c in CORE.values() if c.measure == measure]
    if len(found) != 1:
        raise LookupError(f"{len(found)} core conditions declare measure {measure!r}, not one")
    return found[0]


def aliases() -> dict[str, str]:
    """Every declared alias (``Condition.aliases``) -> its condition's name."""
    return {alias: c.name for c in CONDITIONS.values() for alias in c.aliases}


#: The family of circular evaluation's rotations (vdg's own ``options_rotated<k>``, ``vdg_tasks.extend.shipped``):
#: each declares its rotation ``k`` in ``params[ROTATION]`` and asks a question with ``N`` options with option ``i``
#: at position ``(i + k) mod N``, the answer moved with it. The report's ``circular`` table reads every registered
#: condition of this family with a positive integer rotation (``circular_rotations``), whoever declares it.
CIRCULAR = "circular"
#: The parameter naming a rotation of family ``CIRCULAR``.
ROTATION = "rotation"


def circular_rotations() -> dict[str, int]:
    """Each registered rotation of family ``CIRCULAR`` (a positive integer ``params[ROTATION]``) -> its ``k``, by
    ``k``; a second condition declaring a ``k`` already taken is left out (the first in registry order reads it)."""
    found: dict[int, str] = {}
    for c in CONDITIONS.values():
        k = c.params.get(ROTATION)
        if c.family == CIRCULAR and isinstance(k, int) and not isinstance(k, bool) and k > 0:
            found.setdefault(k, c.name)
    return {found[k]: k for k in sorted(found)}


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
