"""Options written inside a question's text: found, and written back in the same layout.

Many lmms-eval tasks keep no options field: the question text ends with lettered lines (MLVU's ``(A) forest``,
TempCompass's ``A. left``, ``A) ...``), sometimes under an ``Options:`` line. ``find_options`` reads the first
run of two or more consecutive lines lettered A, B, C, ... in one style; ``OptionLines.render`` writes other
options (an added abstain option, a changed question) in that same style and place, so a condition changes
the question as the benchmark itself would have written it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from vdg_tasks.vocabulary.parse import LETTERS

#: Label styles, as format strings of the letter: ``A. text``, ``(A) text``, ``A) text``, ``A: text``.
STYLES: tuple[str, ...] = ("{}. ", "({}) ", "{}) ", "{}: ")
_LABEL = {
    style: re.compile(r"^(\s*)" + re.escape(style.format("@")).replace("@", "([A-H])").rstrip(r"\ ") + r"\s*(.*)$")
    for style in STYLES
}


@dataclass(frozen=True)
class OptionLines:
    """A question text split around its lettered option lines.

    Attributes:
        before: the text before the first option line (the question, and an ``Options:`` line if any),
            line breaks kept.
        options: the options' texts, labels removed, in letter order.
        style: the label format (one of ``STYLES``).
        indent: the whitespace before each label.
        after: the text after the last option line (an instruction), its leading line break kept.
    """

    before: str
    options: tuple[str, ...]
    style: str
    indent: str = ""
    after: str = ""

    @property
    def question(self) -> str:
        """The question without its options (a trailing ``Options:`` / ``Choices:`` line dropped)."""
        header = r"(?:^|\n)[ \t]*(?:options|choices)[ \t]*:?[ \t]*$"  # an "Options:" line of its own
        return re.sub(header, "", self.before.rstrip("\n"), flags=re.IGNORECASE).strip()

    def render(self, options: Sequence[str], question: str | None = None) -> str:
        """The text with ``options`` (texts, or lettered as views hold them) in place of the found ones, and
        ``question`` in place of the question when given."""
        before = self.before
        if question is not None and self.question and question != self.question:
            before = before.replace(self.question, question, 1)
        lines = [f"{self.indent}{self.style.format(L)}{_text(o, L)}" for L, o in zip(LETTERS, options, strict=False)]
        return before + "\n".join(lines) + self.after


def _text(option: str, letter: str) -> str:
    """An option's text: a view's own label (``B. `` on option B) removed, any other text kept as it is."""
    text = str(option).strip()
    return text.removeprefix(f"{letter}. ")


def find_options(text: str) -> OptionLines | None:
    """The first run of two or more consecutive lines lettered A, B, C, ... (one style) in ``text``; None if
    there is none."""
    lines = str(text).split("\n")
    for start, line in enumerate(lines):
        for style, pattern in _LABEL.items():
            first = pattern.match(line)
            if not first or first.group(2) != LETTERS[0]:
                continue
            found = []
            for offset, candidate in enumerate(lines[start:]):
                m = pattern.match(candidate)
                if not m or offset >= len(LETTERS) or m.group(2) != LETTERS[offset] or m.group(1) != first.group(1):
                    break
                found.append(m.group(3).strip())
            if len(found) >= 2:
                end = start + len(found)
                before = "\n".join(lines[:start]) + ("\n" if start else "")
                after = ("\n" + "\n".join(lines[end:])) if end < len(lines) else ""
                return OptionLines(before, tuple(found), style, first.group(1), after)
    return None


__all__ = ["STYLES", "OptionLines", "find_options"]
