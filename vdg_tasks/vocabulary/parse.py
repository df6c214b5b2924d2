"""Read the option letter a video-LLM chose out of its free-text reply.

Models do not answer "C". They answer "The answer is (C).", "C. The man is cooking",
"**C**", or "Looking at option A, that seems wrong. The answer is C." A naive
``"A" in response`` scores that last reply as A and silently costs the model accuracy it
earned; an over-eager fallback reads the article in "A man opens the door" as an answer.
:func:`parse_answer` is therefore strict-then-lenient: the first rule below that yields a
verdict decides, and a reply no rule can read is reported ``unparsed`` (letter ``None``) so
the caller counts and warns about it instead of scoring a guess.

Rules, in the order they are tried (``rule`` names the one that decided):

1. ``answer_is`` -- an explicit statement, keyword case-insensitive: "the answer is (C)",
   "Answer: C", "**Answer:** (D) red", "The correct option is C", "best answer would be
   C.", "answer is option C", "C is the correct answer", ``\\boxed{C}``. When several
   appear, the **last** one wins (models restate and revise; the final statement is the
   answer). The letter after the keyword may be uppercase; a lowercase letter is read only
   in brackets ("answer is (c)") or bare for b-h ("answer: c"); a bare lowercase "a" is
   read unless a noun follows it ("the answer is a man ..." is the article). A hedge
   ("the answer is A or B", "A/B") is unparsed.
2. ``bare_letter`` -- the whole reply is one letter, any case, optionally wrapped in
   punctuation or markdown: "C", "c", "(C)", "C.", "C)", "**C**", "[C]". A one-letter reply
   cannot be the article, so lowercase counts.
3. ``leading_letter`` -- the reply starts with a letter followed by ``.``, ``:`` or ``)``
   ("C. a red car", "c) ...", "C: ..."), a bracketed letter ("(C) a red car"), a bold
   letter ("**C** a red car"), "C - ...", or, when ``options`` are given, the letter, a space
   and that same option's text ("C red car"). Markdown (``*``, ``#``, ``>``) before it is
   skipped. "A man opens the door" is none of these. Not read when the reply goes on to
   label two or more other options ("A. red car B. blue car C. ..." is an echo of the
   list, not a choice) or rules the letter out ("(B) isn't it").
4. ``parenthesized`` -- "(C)" or "[C]" (uppercase) anywhere, when exactly one distinct
   in-range letter appears that way.
5. ``option_mention`` -- "option C", "choice C", "answer C" without a verb or colon, when
   every such mention names the same in-range letter. This is the weak form of rule 1: it
   comes after rules 1-4, so "Looking at option A ... The answer is C." reads C; a reply
   that only says "Looking at option A, that seems wrong." still reads A (ruled-out forms
   such as "option A is wrong" do not count, see below).
6. ``option_text`` -- only when ``options`` are given: the reply equals one option's text
   (case-insensitive, punctuation ignored, option labels such as "A." stripped), or
   contains exactly one option's text as whole words (a text contained in a longer matched
   option text does not count separately).
7. ``standalone_letter`` -- last resort: uppercase in-range letters standing alone (not in
   "A-frame", "A's", "U.S.A.", "e.g.", "A.M."), excluding the article: an "A" followed by a
   lowercase word is the article unless that word cannot follow an article ("A or B",
   "A is wrong", "A because ..."). Read only when exactly one distinct letter remains; "A or
   B" or "A, B" is ambiguous and unparsed rather than guessed (not the last letter: a
   reply that names two letters without saying which it chose is counted, not scored).

Rules 4, 5 and 7 drop letters the reply rules out: "A is wrong", "option B seems
incorrect", "(C) isn't it". So "A is wrong, so B" reads B.

Letters are bounded by ``n_options``: with 4 options only A-D are answers. An explicit
choice of an out-of-range letter by rules 1-3 ("The answer is E" with 4 options, "E.
...") makes the reply unparsed at once (the model chose something that is not an option;
searching on would find some other letter it merely mentioned). Rules 4-7 ignore
out-of-range letters.

Before the rules run the text is NFKC-normalised (full-width "（Ｃ）" becomes "(C)"), and
when it contains ``</think>`` only the part after the last ``</think>`` is read, so a
reasoning model's scratchpad cannot outvote its final answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["LETTERS", "NUMBER_RULES", "RULES", "ParsedAnswer", "parse_answer", "parse_number"]

#: Option letters in order; ``LETTERS[:n_options]`` are the valid answers.
LETTERS = "ABCDEFGH"

#: Rule names in the order :func:`parse_answer` tries them.
RULES: tuple[str, ...] = (
    "answer_is",
    "bare_letter",
    "leading_letter",
    "parenthesized",
    "option_mention",
    "option_text",
    "standalone_letter",
)

#: The rules of :func:`parse_number` (options numbered 1-N: the ``numbered`` condition).
NUMBER_RULES: tuple[str, ...] = (
    "number_answer_is",
    "bare_number",
    "leading_number",
    "option_text",
    "standalone_number",
)

Status = Literal["ok", "unparsed"]


@dataclass(frozen=True)
class ParsedAnswer:
    """The verdict on one reply.

    Attributes:
        letter: the chosen option, one of ``LETTERS[:n_options]``; ``None`` when unparsed.
        status: ``"ok"`` when ``letter`` is set, ``"unparsed"`` when it is ``None``.
        rule: the name (from :data:`RULES`) of the rule that read the letter; ``None`` when
            unparsed.
    """

    letter: str | None
    status: Status
    rule: str | None


_UNPARSED = ParsedAnswer(None, "unparsed", None)

# A letter that is not the start of a longer token: not "Cat", "A's", "A-frame", "e.g.".
_NOT_WORD_AFTER = r"(?![\w'’-]|\.\w)"
_NOT_WORD_BEFORE = r"(?<![\w'’.\-\\])"

# Rule 1: keyword + verb/colon + optional "option"/"letter" + letter token.
_ANSWER_IS = re.compile(
    r"(?i:\b(?:answer|option|choice))[*_]*"
    r"(?i:\s+(?:is|was|would\s+be|should\s+be|will\s+be|must\s+be)\b"
    r"(?:\s+(?:clearly|likely|probably|most\s+likely|definitely))?:?|\s*[:=])"
    r"[\s*_`]*"
    r"(?i:(?:option|choice|letter)\b[\s*_`]*)?"
    r"(?P<open>[(\[]?)(?P<letter>[A-Ha-h])[*_`]*(?P<close>[)\]]?)" + _NOT_WORD_AFTER
)
_REVERSED = re.compile(
    _NOT_WORD_BEFORE + r"[(\[]?(?P<letter>[A-H])[)\]]?[*_]*"
    r"\s+(?i:is\s+(?:the\s+)?(?:correct|right|best)\b)"
)
_BOXED = re.compile(r"\\boxed\{\s*(?:\\text\{\s*)?[(\[]?(?P<letter>[A-Ha-h])[)\]]?\s*\}")
# "A or B", "A/B", "(A) or (C)" right after a rule-1 letter: a hedge.
_HEDGE = re.compile(r"[*_`]*\s*(?:/|\s(?i:or)\s)\s*[(\[]?[A-Ha-h][)\]]?" + _NOT_WORD_AFTER)

# Rule 2.
_BARE = re.compile(r"[\s*_`\"'“”‘’(\[{<]*(?P<letter>[A-Ha-h])[\s*_`\"'“”‘’)\]}>.:,;!]*")

# Rule 3 (matched after leading markdown is skipped).
_LEADING = re.compile(
    "|".join(
        [
            r"[(\[](?P<b>[A-Ha-h])[)\]]",  # (C) ...  [c] ...
            r"(?P<p>[A-H])[*_]*\s*[.:)]" + _NOT_WORD_AFTER,  # C. ...  C) ...  C: ...  **C.** ...
            r"(?P<q>[a-h])[.:)]" + _NOT_WORD_AFTER,  # c. ...  c) ...  (not "e.g.")
            r"(?P<s>[A-H])[*_]+" + _NOT_WORD_AFTER,  # **C** ...
            r"(?P<d>[A-H])\s+[-–—]\s",  # C - ...
        ]
    )
)
_LEADING_WORD = re.compile(r"(?P<letter>[A-H])\s+(?P<rest>\S.*)", re.DOTALL)
_LEADING_SKIP = " \t\r\n*_#>`"

# Rule 4.
_PAREN = re.compile(r"[(\[](?P<letter>[A-H])[)\]]")

# Rule 5.
_MENTION = re.compile(r"(?i:\b(?:answer|option|choice))[*_]*\s+[(\[]?(?P<letter>[A-H])[)\]]?" + _NOT_WORD_AFTER)

# Rule 7.
_STANDALONE = re.compile(_NOT_WORD_BEFORE + r"(?P<letter>[A-H])" + _NOT_WORD_AFTER)

# The article test: "A"/"a" followed by a lowercase word that could be its noun phrase.
_NEXT_WORD = re.compile(r"[ \t]+(?P<word>[a-z][a-z'’-]*)")
#: Words that cannot follow the article "a", so "A <word>" is a letter.
_NOT_AFTER_ARTICLE = frozenset(
    "or and nor but is was are were be seems seemed looks appears because since as would could "
    "should might may can will has had does did vs versus then than not also too if so fits matches "
    "describes shows".split()
)

# Rules 4, 5, 7: a letter the reply rules out ("A is wrong", "(B) isn't it") is no candidate.
_REJECTED = re.compile(
    r"[)\]*_]*\s+(?i:(?:is|seems|looks|appears)\s+(?:(?:also|clearly|definitely|obviously)\s+)?"
    r"(?:wrong|incorrect|false|unlikely|not\b)|isn['’]t\b)"
)
# Rule 3 veto: the reply lists options ("A. red car B. blue car C. ...") rather than choosing.
_LABEL = re.compile(_NOT_WORD_BEFORE + r"(?:\((?P<b>[A-H])\)|(?P<p>[A-H])[.):])\s")

_OPTION_LABEL = re.compile(r"\s*[(\[]?[A-Ha-h][)\].:](?:\s+|$)")
_NON_ALNUM = re.compile(r"[\W_]+")


def _is_article(text: str, end: int) -> bool:
    """Whether the "A"/"a" ending just before ``end`` reads as the English article."""
    m = _NEXT_WORD.match(text, end)
    return m is not None and m.group("word") not in _NOT_AFTER_ARTICLE


def _candidates(pattern: re.Pattern[str], text: str, skip_article: bool = False) -> list[str]:
    """Letters ``pattern`` finds, minus those ruled out and (optionally) the article "A"."""
    letters = []
    for m in pattern.finditer(text):
        letter = m.group("letter")
        if _REJECTED.match(text, m.end()):
            continue
        if skip_article and letter == "A" and _is_article(text, m.end()):
            continue
        letters.append(letter)
    return letters


def _is_listing(text: str, letter: str) -> bool:
    """Whether the reply labels two or more other options besides ``letter``."""
    labels = {m.group("b") or m.group("p") for m in _LABEL.finditer(text)}
    return len(labels - {letter.upper()}) >= 2


def _norm(s: str) -> str:
    return " ".join(_NON_ALNUM.sub(" ", s.lower()).split())


def _verdict(letter: str, valid: str, rule: str) -> ParsedAnswer:
    letter = letter.upper()
    if letter not in valid:
        return _UNPARSED
    return ParsedAnswer(letter, "ok", rule)


def _unique(letters: list[str], valid: str) -> str | None:
    found = {x for x in letters if x in valid}
    return found.pop() if len(found) == 1 else None


def _answer_is(text: str) -> tuple[int, str] | None:
    """Position and letter of the last rule-1 statement; letter "" for a hedge."""
    best: tuple[int, str] | None = None
    for m in _ANSWER_IS.finditer(text):
        letter = m.group("letter")
        if letter.islower():
            bracketed = bool(m.group("open") or m.group("close"))
            if not bracketed and letter == "a" and _is_article(text, m.end()):
                continue
        if _HEDGE.match(text, m.end()):
            letter = ""
        best = (m.start(), letter)
    for pattern in (_REVERSED, _BOXED):
        for m in pattern.finditer(text):
            if best is None or m.start() > best[0]:
                best = (m.start(), m.group("letter"))
    return best


def _leading(text: str, valid: str, options: list[str] | None) -> ParsedAnswer | None:
    body = text.lstrip(_LEADING_SKIP)
    m = _LEADING.match(body)
    if m is not None:
        letter = next(g for g in m.group("b", "p", "q", "s", "d") if g is not None)
        if _is_listing(body, letter) or _REJECTED.match(body, m.end()):
            return None
        return _verdict(letter, valid, "leading_letter")
    if options is not None:
        m = _LEADING_WORD.match(body)
        if m is not None:
            idx = LETTERS.index(m.group("letter"))
            if idx < len(options) and options[idx] and f"{_norm(m.group('rest'))} ".startswith(f"{options[idx]} "):
                return ParsedAnswer(m.group("letter"), "ok", "leading_letter")
    return None


def _option_text(text: str, options: list[str]) -> str | None:
    reply = _norm(text)
    if not reply:
        return None
    exact = [LETTERS[i] for i, o in enumerate(options) if o and o == reply]
    if exact:
        return exact[0] if len(exact) == 1 else None
    padded = f" {reply} "
    hits = [(LETTERS[i], o) for i, o in enumerate(options) if o and f" {o} " in padded]
    # "red" inside a matched "red car" is not a second answer.
    hits = [(x, o) for x, o in hits if not any(o != p and f" {o} " in f" {p} " for _, p in hits)]
    return hits[0][0] if len(hits) == 1 else None


def _check_args(n_options: int, options: Sequence[str] | None) -> list[str] | None:
    if isinstance(n_options, bool) or not isinstance(n_options, int) or not 2 <= n_options <= len(LETTERS):
        raise ValueError(
            f"n_options={n_options!r} is not supported: pass the number of answer options, an int "
            f"from 2 to {len(LETTERS)} (letters {LETTERS[:2]}..{LETTERS})."
        )
    if options is None:
        return None
    if isinstance(options, str):
        raise TypeError("options must be a sequence of option strings, not one string.")
    if len(options) != n_options:
        raise ValueError(
            f"{len(options)} options were given but n_options={n_options}: pass "
            f"n_options=len(options) so the answer letters and the option texts agree."
        )
    return [_norm(strip_label(str(o))) for o in options]


def strip_label(option: str) -> str:
    """ "A. red car" -> "red car"; "A man" and "a.m. train" keep their first word."""
    m = _OPTION_LABEL.match(option)
    return option[m.end() :] if m else option


def parse_answer(text: str | None, n_options: int = 4, options: Sequence[str] | None = None) -> ParsedAnswer:
    """Read which option letter a reply chose; see the module docstring for the rules.

    Args:
        text: the model's reply. ``None`` or blank is unparsed.
        n_options: how many options the question had (2-8); only ``LETTERS[:n_options]`` are
            answers.
        options: the option texts, in letter order, with or without labels ("A. red car" or
            "red car"); enables the ``option_text`` rule and the "C red car" form of
            ``leading_letter``. Must have ``n_options`` entries.

    Returns:
        A :class:`ParsedAnswer`; ``status == "unparsed"`` and ``letter is None`` when no rule
        can tell. Never raises for any string ``text``.

    Raises:
        ValueError: ``n_options`` outside 2-8, or ``len(options) != n_options``.
        TypeError: ``text`` is neither a string nor ``None``, or ``options`` is a string.
    """
    norm_options = _check_args(n_options, options)
    if text is None:
        return _UNPARSED
    if not isinstance(text, str):
        raise TypeError(f"text must be the model's reply as a str (or None), got {type(text).__name__}.")
    valid = LETTERS[:n_options]
    text = unicodedata.normalize("NFKC", text)
    _, think_end, after = text.rpartition("</think>")
    if think_end:
        text = after
    if not text.strip():
        return _UNPARSED

    # 1. explicit statement; the last one wins.
    found = _answer_is(text)
    if found is not None:
        return _verdict(found[1], valid, "answer_is") if found[1] else _UNPARSED
    # 2. the whole reply is a letter.
    m = _BARE.fullmatch(text)
    if m is not None:
        return _verdict(m.group("letter"), valid, "bare_letter")
    # 3. a letter at the very start.
    lead = _leading(text, valid, norm_options)
    if lead is not None:
        return lead
    # 4. "(C)" anywhere, unambiguous.
    letter = _unique(_candidates(_PAREN, text), valid)
    if letter is not None:
        return ParsedAnswer(letter, "ok", "parenthesized")
    # 5. "option C" mentions, all agreeing.
    letter = _unique(_candidates(_MENTION, text, skip_article=True), valid)
    if letter is not None:
        return ParsedAnswer(letter, "ok", "option_mention")
    # 6. the text of exactly one option.
    if norm_options is not None:
        letter = _option_text(text, norm_options)
        if letter is not None:
            return ParsedAnswer(letter, "ok", "option_text")
    # 7. the one standalone capital letter that is not the article.
    letter = _unique(_candidates(_STANDALONE, text, skip_article=True), valid)
    if letter is not None:
        return ParsedAnswer(letter, "ok", "standalone_letter")
    return _UNPARSED


_NUMBER = r"(?P<n>[1-8])(?![\w]|[.,]\d)"
_NUMBER_ANSWER_IS = re.compile(
    r"(?i:\b(?:(?:answer|option|choice)\s*(?:is|would\s+be)?\s*:?|(?:i\s+)?(?:pick|choose|select)s?)\s*"
    r"(?:option\s*|number\s*)?)[*_]*[(\[]?" + _NUMBER
)
_BARE_NUMBER = re.compile(r"[\s*_`\"'(\[]*" + _NUMBER + r"[\s*_`\"')\].:,;!]*")
_LEADING_NUMBER = re.compile(r"[\s*_#>`]*[(\[]?" + _NUMBER + r"(?:[)\].:]|\s+-)(?:\s|$)")
#: Words that may follow a number naming a choice ("3 is right"); any other word makes it a count ("3 people").
_AFTER_A_CHOICE = frozenset({"is", "seems", "looks", "fits", "matches", "because", "since", "as", "best", "would"})
_NUMBER_LABEL = re.compile(r"^\s*[(\[]?\d[)\].:]\s*")
_STANDALONE_NUMBER = re.compile(r"(?<![\w.,$%-])" + _NUMBER + r"(?![%$])")


def _number_verdict(number: str, n_options: int, rule: str) -> ParsedAnswer:
    index = int(number) - 1
    return ParsedAnswer(LETTERS[index], "ok", rule) if 0 <= index < n_options else _UNPARSED


def parse_number(text: str | None, n_options: int = 4, options: Sequence[str] | None = None) -> ParsedAnswer:
    """Read which option a reply chose when the options were numbered 1-N (the ``numbered`` condition), as the
    letter of that option (1 -> A), so that the letter tables read it as any other reply. Rules, in order
    (``NUMBER_RULES``): an explicit statement ("the answer is 2", "Option: (3)"; the last wins), the whole reply a
    number ("2", "(2).", "**2**"), a number at the start ("2. red car", "(2) red"; not the first of a numbered list),
    the text of one option (as ``parse_answer``'s ``option_text``), the reply's only number standing alone ("I think 3
    is right"; not "3 people, so 2"). A chosen number out of range is unparsed; arguments as
    :func:`parse_answer`'s."""
    unnumbered = (
        None if options is None or isinstance(options, str) else [_NUMBER_LABEL.sub("", str(o)) for o in options]
    )
    norm_options = _check_args(n_options, unnumbered if unnumbered is not None else options)
    if text is None:
        return _UNPARSED
    if not isinstance(text, str):
        raise TypeError(f"text must be the model's reply as a str (or None), got {type(text).__name__}.")
    text = unicodedata.normalize("NFKC", text).rpartition("</think>")[2]
    if not text.strip():
        return _UNPARSED
    stated = list(_NUMBER_ANSWER_IS.finditer(text))
    if stated:
        return _number_verdict(stated[-1].group("n"), n_options, "number_answer_is")
    m = _BARE_NUMBER.fullmatch(text)
    if m is not None:
        return _number_verdict(m.group("n"), n_options, "bare_number")
    m = _LEADING_NUMBER.match(text)
    # not the first item of a numbered list of reasons ("1. He opens the door. 2. He walks ...")
    if m is not None and not re.search(r"(?m)^\s*[(\[]?[2-9][)\].:]\s", text[m.end() :]):
        return _number_verdict(m.group("n"), n_options, "leading_number")
    if norm_options is not None:
        letter = _option_text(text, norm_options)
        if letter is not None:
            return ParsedAnswer(letter, "ok", "option_text")
    # A lone number only where the reply holds no other digits: "3 people", "at 3:45" and "2 cats and 2 dogs" are not
    # choices.
    if len(re.findall(r"\d+", text)) != 1:
        return _UNPARSED
    found = [m for m in _STANDALONE_NUMBER.finditer(text)]
    if len(found) != 1:
        return _UNPARSED
    after = re.match(r"\s+([a-z]+)", text[found[0].end() :])
    if after is not None and after.group(1) not in _AFTER_A_CHOICE:  # "3 people": a count, not option 3
        return _UNPARSED
    return _number_verdict(found[0].group("n"), n_options, "standalone_number")
