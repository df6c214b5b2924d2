"""A generated text-only benchmark with one planted shortcut per task type, and a null type without one.

For checking ``vdg shortcuts`` (and timing it): questions in vdg's doc format (question_id, videoID,
task_type, question, options "A. ...", answer letter), about made-up videos of ``QUESTIONS_PER_VIDEO``
questions each, with 3 to 5 options and the right option at a uniformly drawn position:

- ``overlap``: the right option shares a word with the question; no distractor does;
- ``longest``: the right option is the longest (by two or more words);
- ``number``: every option carries a number, and only the right one the number the question names;
- ``null``: options and answer drawn independently of the question's text.

Every draw is seeded from (seed, task type, question index) (``vdg_tasks.vocabulary.seeding``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vdg_tasks.vocabulary.parse import LETTERS
from vdg_tasks.vocabulary.seeding import rng_for

TASK_TYPES: tuple[str, ...] = ("overlap", "longest", "number", "null")
QUESTIONS_PER_VIDEO = 3
_NOUNS = (
    "kettle lantern bicycle violin harbour meadow tractor compass ladder parcel blanket pigeon carpet mirror "
    "anchor saddle quilt garden bucket candle window button rocket walnut helmet orchard tunnel pencil wagon "
    "feather canyon trumpet marble ribbon bridge cactus barrel engine shovel lemon piano glacier scarf"
).split()
_VERBS = "carry paint fold lift throw clean open mend wrap sort stack push".split()


def _phrase(rng, words: int, avoid: set[str]) -> list[str]:
    pool = [w for w in _NOUNS if w not in avoid]
    return [str(w) for w in rng.choice(pool, size=words, replace=False)]


def _question(task_type: str, index: int, seed: int) -> dict[str, Any]:
    rng = rng_for("shortcut-bench", seed, task_type, index)
    n = int(rng.integers(3, 6))
    right = int(rng.integers(0, n))
    subject = _phrase(rng, 2, set())
    verb = str(rng.choice(_VERBS))
    question = f"Which thing does the person {verb} after the {subject[0]} and the {subject[1]}?"
    used = set(subject)
    options: list[str] = []
    for _ in range(n):
        words = _phrase(rng, int(rng.integers(2, 4)), used)
        used |= set(words)
        options.append(" ".join(words))
    if task_type == "overlap":
        options[right] = f"{subject[int(rng.integers(0, 2))]} {options[right].split()[0]}"
    elif task_type == "longest":
        longest = max(len(o.split()) for o in options)
        options[right] = " ".join(_phrase(rng, longest + 2, used))
    elif task_type == "number":
        named = int(rng.integers(2, 60))
        question = f"How many times does the person {verb} the {subject[0]} after minute {named}?"
        others = [int(x) for x in rng.choice([k for k in range(2, 60) if k != named], size=n, replace=False)]
        options = [f"{named if i == right else others[i]} {options[i].split()[0]}" for i in range(n)]
    video = f"{task_type}-v{index // QUESTIONS_PER_VIDEO:04d}"
    return {
        "question_id": f"{task_type}-{index:05d}",
        "videoID": video,
        "video_id": video,
        "task_type": task_type,
        "duration": "short",
        "question": question,
        "options": [f"{LETTERS[i]}. {text}" for i, text in enumerate(options)],
        "answer": LETTERS[right],
    }


def shortcut_docs(per_task_type: int = 300, seed: int = 0) -> list[dict[str, Any]]:
    """``per_task_type`` questions of each of ``TASK_TYPES``."""
    return [_question(t, i, seed) for t in TASK_TYPES for i in range(per_task_type)]


def write_shortcut_docs(path: str | Path, per_task_type: int = 300, seed: int = 0) -> Path:
    """Write ``shortcut_docs`` as JSON lines; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(d) + "\n" for d in shortcut_docs(per_task_type, seed)), encoding="utf-8")
    return path
