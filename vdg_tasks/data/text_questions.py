"""A benchmark's questions as text alone, for the text-only answerers of ``vdg shortcuts`` and ``vdg debias``.

One record per doc: benchmark, question_id, video_id, task_type, question, options (their texts, letters
removed) and answer (the 0-based index of the right option): the input of ``postprocess.shortcuts``.
Docs of a benchmark vdg declares are read through its ``view``; any other docs (``--docs``) must carry
those fields under vdg's names (``videoID`` or ``video_id``, options as "A. text" or plain texts, the answer as a
letter or a 0-based index).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vdg_tasks.vocabulary.parse import LETTERS, strip_label


def _answer_index(answer: Any, n_options: int, where: str) -> int:
    text = str(answer).strip()
    if text.isdigit() and int(text) < n_options:
        return int(text)
    if len(text) == 1 and text.upper() in LETTERS[:n_options]:
        return LETTERS.index(text.upper())
    raise ValueError(f"{where}: answer {answer!r} is neither a letter nor a 0-based index of its {n_options} options")


def text_question(benchmark: str, doc: Mapping[str, Any], where: str) -> dict[str, Any]:
    """One doc as a text question (module docstring); ``where`` names it in errors.

    Raises:
        ValueError: a field is missing, fewer than 2 options, an answer that is no option.
    """
    view = doc
    missing = [k for k in ("question_id", "task_type", "question", "options", "answer") if view.get(k) in (None, "")]
    video = view.get("videoID", view.get("video_id"))
    if video in (None, ""):
        missing.append("videoID")
    if missing:
        raise ValueError(f"{where} has no {', '.join(missing)}")
    options = [strip_label(str(o)).strip() for o in view["options"]]
    if len(options) < 2:
        raise ValueError(f"{where}: {len(options)} option(s); a text-only answerer needs at least 2")
    return {
        "benchmark": benchmark,
        "question_id": str(view["question_id"]),
        "video_id": str(video),
        "task_type": str(view["task_type"]),
        "question": str(view["question"]),
        "options": tuple(options),
        "answer": _answer_index(view["answer"], len(options), where),
    }


def text_questions(benchmark: str, docs: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """(every doc with a ground-truth answer as a text question, the ids of those without one), naming the doc (its
    position and id) in errors. A question without an answer (a private test set's) cannot train or test an
    answerer: it is left out and listed, not an error.

    Raises:
        ValueError: a doc lacking another field, fewer than 2 options, an answer that is no option.
    """
    out, unanswered = [], []
    for i, doc in enumerate(docs):
        if doc.get("answer") in (None, ""):
            unanswered.append(str(doc.get("question_id", f"#{i}")))
            continue
        where = f"{benchmark} doc #{i} (question {doc.get('question_id', '?')!r})"
        out.append(text_question(benchmark, doc, where))
    return out, unanswered
