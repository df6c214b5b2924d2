"""The question transforms behind vdg's text conditions: pure functions doc -> (doc, details).

Each transform returns a new doc (the input is never changed) and the details the samples log
records for the question (``TextChange.details``: who the name was swapped to, which letter means
"abstain", the ground truth an open answer is judged against). A doc that lacks what a transform
needs raises ``TextUnavailable`` naming the question and the field; the hook records it as that
question's error.

Letters that mean "I don't know":

- ``idk_letter``: the benchmark's own "I don't know" option (InfiniBench has one), found by its
  text; logged for every condition.
- ``abstain_letter``: the option the ``abstain`` condition adds *after* the last option, so it
  never takes the letter of an existing option: with InfiniBench's six options (one of them "I
  don't know") it is G, with Video-MME's four it is E. Both are abstentions in the report, counted
  apart.

Nothing here imports lmms-eval; the seed of every random choice is derived from the question id.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vdg_tasks.data.infinibench import parse_srt
from vdg_tasks.vocabulary.conditions import Condition, TransformContext
from vdg_tasks.vocabulary.parse import LETTERS
from vdg_tasks.vocabulary.seeding import rng_for, stable_seed

__all__ = [
    "TextChange",
    "TextUnavailable",
    "apply",
    "idk_letter",
    "option_text",
    "numbered_kwargs",
    "reordered_from",
    "numbered_prompt",
    "replace_name",
    "shuffle_order",
    "truth_text",
]

_LABEL = re.compile(r"^\s*\(?([A-H])[.)]\s*")
_IDK = re.compile(r"^\s*i\s+(?:do\s*n[o']?t|don’t)\s+know\.?\s*$", re.IGNORECASE)


class TextUnavailable(ValueError):
    """A question lacks what a text condition needs (no named character, no subtitles...)."""


@dataclass(frozen=True)
class TextChange:
    """A transformed question and what the samples log records about the change.

    Attributes:
        doc: the doc the prompt is built from.
        details: logged fields (``character``, ``swap_to``, ``swap_gender``, ``abstain_letter``,
            ``truth``, ``subtitle_chars``...); every value JSON-serialisable.
    """

    doc: Mapping[str, Any]
    details: Mapping[str, Any] = field(default_factory=dict)


def _qid(doc: Mapping[str, Any]) -> str:
    return str(doc.get("question_id", "?"))


def option_text(option: str) -> str:
    """An option without its letter label: ``"B. red jacket"`` -> ``"red jacket"``."""
    return _LABEL.sub("", str(option), count=1).strip()


def idk_letter(options: Sequence[str]) -> str:
    """The letter of the benchmark's own "I don't know" option, or "" when it has none."""
    for i, option in enumerate(options):
        if _IDK.match(option_text(option)):
            return LETTERS[i]
    return ""


def truth_text(doc: Mapping[str, Any]) -> str:
    """The ground truth an open answer is judged against: the outfit sequence joined with "; " when
    the doc has one (InfiniBench), else the correct option's text."""
    outfits = doc.get("outfits")
    if outfits:
        return "; ".join(str(o) for o in outfits)
    options = list(doc.get("options") or [])
    answer = str(doc.get("answer", ""))
    if answer in LETTERS and LETTERS.index(answer) < len(options):
        return option_text(options[LETTERS.index(answer)])
    raise TextUnavailable(f"question {_qid(doc)}: answer {answer!r} names none of its {len(options)} options")


def replace_name(text: str, old: str, new: str) -> str:
    """``text`` with every whole-word ``old`` (any case; possessives kept) replaced by ``new`` in the
    same case style (``SHELDON`` -> ``LEONARD``, ``sheldon`` -> ``leonard``)."""

    def swap(match: re.Match[str]) -> str:
        found = match.group(0)
        if found.isupper() and len(found) > 1:
            return new.upper()
        if found.islower():
            return new.lower()
        return new

    return re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", swap, text, flags=re.IGNORECASE)


def _name_swap(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    character = str(doc.get("character") or "")
    cast = dict(doc.get("cast") or {})
    question = str(doc.get("question", ""))
    if not character:
        raise TextUnavailable(f"question {_qid(doc)}: names no character (field 'character' is empty)")
    if not re.search(rf"(?<!\w){re.escape(character)}(?!\w)", question, flags=re.IGNORECASE):
        raise TextUnavailable(f"question {_qid(doc)}: its text does not contain the character name {character!r}")
    others = [name for name in cast if name.lower() != character.lower()]
    if not others:
        show = doc.get("show", "?")
        raise TextUnavailable(
            f"question {_qid(doc)}: no other main character of {show!r} to swap {character!r} with "
            "(add the show's cast to the roster: `vdg infinibench --roster FILE`)"
        )
    swap_to = others[int(rng_for("vdg", condition.name, _qid(doc)).integers(len(others)))]
    own = {name.lower(): str(g).lower() for name, g in cast.items()}
    g_from, g_to = own.get(character.lower(), ""), own.get(swap_to.lower(), "")
    gender = "" if not (g_from and g_to) else ("same" if g_from == g_to else "cross")
    new = {**doc, "question": replace_name(question, character, swap_to)}
    return TextChange(new, {"swap_to": swap_to, "swap_gender": gender})


def _open_ended(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    return TextChange({**doc, "options": []}, {"truth": truth_text(doc)})


def _abstain(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    options = list(doc.get("options") or [])
    if not options:
        raise TextUnavailable(f"question {_qid(doc)}: has no options to add an abstain option to")
    if len(options) >= len(LETTERS):
        raise TextUnavailable(
            f"question {_qid(doc)}: already has {len(options)} options; vdg reads at most {len(LETTERS)}"
        )
    letter = LETTERS[len(options)]
    added = f"{letter}. {condition.params['option']}"
    new = {**doc, "options": [*options, added], "n_options": len(options) + 1}
    return TextChange(new, {"abstain_letter": letter})


def _metadata(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    title = str(doc.get("title") or "")
    if not title:
        raise TextUnavailable(f"question {_qid(doc)}: has no show/episode title (field 'title')")
    return TextChange({**doc, "question": f"This question is about {title}.\n{doc.get('question', '')}"}, {})


def _subtitles(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    path = str(doc.get("subtitles") or "")
    if not path:
        raise TextUnavailable(f"question {_qid(doc)}: has no subtitle file (field 'subtitles')")
    if not Path(path).is_file():
        raise TextUnavailable(f"question {_qid(doc)}: subtitle file {path} does not exist")
    text = parse_srt(path, max_chars=int(condition.params["max_chars"]))
    question = f"The episode's subtitles:\n{text}\n\n{doc.get('question', '')}"
    return TextChange({**doc, "question": question}, {"subtitle_chars": len(text)})


def _answer_index(doc: Mapping[str, Any], options: Sequence[str]) -> int:
    answer = str(doc.get("answer", ""))
    if answer not in LETTERS[: len(options)]:
        raise TextUnavailable(f"question {_qid(doc)}: its answer {answer!r} is none of its {len(options)} options")
    return LETTERS.index(answer)


def shuffle_order(question_id: str, n: int, answer: int) -> list[int]:
    """The permutation ``options_shuffled`` asks a question's ``n`` options in: new position -> original position,
    seeded by the question id, never leaving the answer (original position ``answer``) where it was."""
    rng = rng_for("options_shuffled", question_id, n)
    while True:  # a uniform draw among the permutations that move the answer (at least half of them, n >= 2)
        order = [int(i) for i in rng.permutation(n)]
        if order[answer] != answer:
            return order


def _shuffle_options(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    options = list(doc.get("options") or [])
    if len(options) < 2:
        raise TextUnavailable(f"question {_qid(doc)}: has {len(options)} option(s); a shuffle needs two")
    answer = _answer_index(doc, options)
    order = shuffle_order(_qid(doc), len(options), answer)
    shuffled = [f"{LETTERS[new]}. {option_text(options[old])}" for new, old in enumerate(order)]
    details = {"answer": LETTERS[order.index(answer)], "shuffled_from": "".join(LETTERS[old] for old in order)}
    idk = idk_letter(shuffled)
    return TextChange({**doc, "options": shuffled}, {**details, **({"idk_letter": idk} if idk else {})})


#: An option that already says the answer may be missing, or that means nothing / zero (then "None" would be a
#: right answer or a second copy of a distractor): none_option would not ask what it means to.
_NONE_LIKE = re.compile(
    r"^\s*(none\b.*|neither\b.*|nothing\b.*|no\s+one\b.*|nobody\b.*|zero|0+(\.0+)?|unknown\b.*|not\s+sure\b.*|"
    r"i\s+(do\s*n[o']?t|don’t)\s+know\b.*|not\s+(mentioned|shown|visible|enough|given|stated|determin|clear)\w*\b.*|"
    r"cannot\s+(be\s+)?determine\w*\b.*|can(no|')t\s+(tell|say|be\s+determined)\b.*|insufficient\b.*|n/?a)\.?\s*$",
    re.IGNORECASE,
)


def _none_option(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    options = list(doc.get("options") or [])
    answer = _answer_index(doc, options)
    already = [o for o in options if _NONE_LIKE.match(option_text(o))]
    if already:
        raise TextUnavailable(
            f'question {_qid(doc)}: already has a none / I don\'t know / zero option ({already[0]}): a "None" would '
            "not replace only the right answer"
        )
    changed = [f"{L}. {condition.params['option'] if i == answer else option_text(o)}" for i, (L, o) in
               enumerate(zip(LETTERS, options, strict=False))]  # fmt: skip
    return TextChange({**doc, "options": changed}, {})


def _question_text(doc: Mapping[str, Any]) -> str:
    question = str(doc.get("question") or "").strip()
    if not question:
        raise TextUnavailable(f"question {_qid(doc)}: its question text is in no field vdg can leave out")
    return question


def _no_question(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    _question_text(doc)
    if not doc.get("options"):
        raise TextUnavailable(f"question {_qid(doc)}: has no options to ask without the question")
    return TextChange({**doc, "question": ""}, {})


def _video_only(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    _question_text(doc)
    options = list(doc.get("options") or [])
    if not options:
        raise TextUnavailable(f"question {_qid(doc)}: has no options whose letter to guess")
    letters = LETTERS[: len(options)]
    listed = ", ".join(letters[:-1]) + f" or {letters[-1]}" if len(letters) > 1 else letters[0]
    instruction = str(condition.params["instruction"]).format(letters=listed)
    return TextChange({**doc, "question": instruction, "options": []}, {})


def _numbered(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    # The doc keeps its lettered options: the benchmark's own builder lays them out, ``numbered_prompt`` relabels.
    options = list(doc.get("options") or [])
    if len(options) < 2:
        raise TextUnavailable(f"question {_qid(doc)}: has no options to number")
    numeric = [o for o in options if re.match(r"\s*[-+]?\d", option_text(o))]
    if numeric:  # "3" would be read as option 3: a number names no option unambiguously
        raise TextUnavailable(
            f"question {_qid(doc)}: its options are numbers ({numeric[0]}): numbering them is ambiguous"
        )
    return TextChange(doc, {})


#: A run of option letters in an instruction: "A, B, C, or D", "(A/B/C/D)", "A or B", "A-D".
_LETTER_RUN = re.compile(
    r"(?<![\w'’])[A-H](?:(?:\s*,\s*(?:or\s+|and\s+)?|\s*/\s*|\s+or\s+|\s+and\s+|\s*-\s*)[A-H])+(?![\w'’])"
)
_LETTER_WORD = re.compile(r"\b([Ll]etter)(s?)\b")


def _numbers_for_letters(text: str) -> str:
    """``text`` with its runs of option letters as numbers ("A, B, C, or D" -> "1, 2, 3, or 4") and "letter" as
    "number"."""
    runs = _LETTER_RUN.sub(lambda m: re.sub(r"[A-H]", lambda x: str(LETTERS.index(x.group()) + 1), m.group()), text)
    return _LETTER_WORD.sub(lambda m: ("N" if m.group(1)[0] == "L" else "n") + "umber" + m.group(2), runs)


def numbered_kwargs(kwargs: Any) -> Any:
    """A task's prompt settings (``lmms_eval_specific_kwargs``) with every instruction naming option letters naming
    numbers instead ("Answer with the option's letter" -> "... number", "A, B, C, or D" -> "1, 2, 3, or 4")."""
    if isinstance(kwargs, str):
        return _numbers_for_letters(kwargs)
    if isinstance(kwargs, Mapping):
        return {k: numbered_kwargs(v) for k, v in kwargs.items()}
    if isinstance(kwargs, list | tuple):
        return type(kwargs)(numbered_kwargs(v) for v in kwargs)
    return kwargs


def numbered_prompt(prompt: str, question: str, options: Sequence[str]) -> str:
    """``prompt`` (a benchmark's own, with lettered ``options``) with each option's label numbered in its own style
    ("B. red" -> "2. red", "(B) red" -> "(2) red") and the instructions around them naming numbers; the question
    text and the options' texts are left as they are.

    Raises:
        TextUnavailable: the question is not in the prompt as it is, or an option's label is not found after it (its
            letters could not be numbered without touching the question).
    """
    at = prompt.find(question) if question else 0
    if at < 0:
        raise TextUnavailable(
            "the prompt does not show the question as it is: its letters cannot be told from the question's"
        )
    chars = list(prompt)
    protected = [(at, at + len(question))]
    start = at + len(question)
    for i, option in enumerate(options):
        text = option_text(option)
        label = re.compile(rf"(?<![A-Za-z])\(?(?P<letter>{LETTERS[i]})\)?\s*[.):]?\s*{re.escape(text)}")
        found = label.search(prompt, start) if text else None
        if found is None:
            raise TextUnavailable(f"option {LETTERS[i]} ({text}) is not shown after the question with its letter")
        chars[found.start("letter")] = str(i + 1)
        protected.append((found.start(), found.end()))
        start = found.end()
    relabelled = "".join(chars)
    pieces, last = [], 0
    for begin, end in sorted(protected):
        begin, end = max(begin, last), max(end, last)
        pieces += [_numbers_for_letters(relabelled[last:begin]), relabelled[begin:end]]
        last = end
    return "".join([*pieces, _numbers_for_letters(relabelled[last:])])


def _declared(doc: Mapping[str, Any], condition: Condition) -> TextChange:
    """A question transform declared through ``vdg_tasks.extend``: its function on a deep copy of the doc, seeded by
    the question id. An ``answer`` it changes (options it reordered) is the one scored, and the letter the
    benchmark's own "I don't know" option ends up at is the one logged; the question id must stay."""
    assert condition.apply is not None  # Condition checks a doc transform has one
    context = TransformContext(condition.params, stable_seed("vdg", condition.name, _qid(doc)))
    changed = condition.apply(copy.deepcopy(dict(doc)), context)
    if not isinstance(changed, Mapping):
        raise TextUnavailable(
            f"question {_qid(doc)}: {condition.name}'s transform returned {type(changed).__name__}, not a doc"
        )
    if str(changed.get("question_id", "")) != str(doc.get("question_id", "")):
        raise TextUnavailable(f"question {_qid(doc)}: {condition.name}'s transform changed the question id")
    details: dict[str, Any] = {}
    if changed.get("answer") != doc.get("answer"):
        details["answer"] = str(changed.get("answer") or "")
    before, after = list(doc.get("options") or []), list(changed.get("options") or [])
    order = reordered_from(before, after)
    if order:  # the report reads the answer key in the question's own order through it (as options_shuffled's)
        details["shuffled_from"] = order
    idk = idk_letter(after)
    if idk != idk_letter(before):  # reordered options move the benchmark's own IDK too
        details["idk_letter"] = idk
    return TextChange(dict(changed), details)


def reordered_from(before: Sequence[str], after: Sequence[str]) -> str:
    """The original letter of each option of ``after`` in order ("CADB": A is the original C) when ``after`` is
    ``before``'s options (by their text) in another order; "" when it is the same order, or not a reordering."""
    texts = [option_text(o) for o in before]
    if len(after) != len(texts) or len(texts) > len(LETTERS):
        return ""
    unused = list(range(len(texts)))
    order = []
    for option in after:
        found = next((i for i in unused if texts[i] == option_text(option)), None)
        if found is None:
            return ""
        unused.remove(found)
        order.append(found)
    return "" if order == sorted(order) else "".join(LETTERS[i] for i in order)


_TRANSFORMS = {
    "name_swap": _name_swap,
    "open_ended": _open_ended,
    "abstain": _abstain,
    "metadata": _metadata,
    "subtitles": _subtitles,
    "shuffle_options": _shuffle_options,
    "none_option": _none_option,
    "no_question": _no_question,
    "video_only": _video_only,
    "numbered": _numbered,
    "doc": _declared,
}


def apply(condition: Condition, doc: Mapping[str, Any]) -> TextChange:
    """``condition``'s version of the question ``doc`` (unchanged for video conditions).

    Raises:
        TextUnavailable: the doc lacks what the condition needs (the message names the question).
    """
    if condition.text == "none":
        return TextChange(doc, {})
    return _TRANSFORMS[condition.text](doc, condition)
