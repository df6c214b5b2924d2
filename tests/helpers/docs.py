"""A question doc in the layout vdg's hooks read (Video-MME's fields), for hook tests."""

from __future__ import annotations

#: One multi_frame question of a vdgsynth-style benchmark; its video is added by each test.
SQUARE_DOC = {
    "question_id": "v1-2",
    "videoID": "v1",
    "task_type": "multi_frame",
    "duration": "short",
    "question": "What colour is the square first?",
    "options": ["A. red", "B. green", "C. blue", "D. white"],
    "answer": "C",
}


def videomme_docs(videos: range | tuple[int, ...], task_types: tuple[str, ...], answer_step: int) -> list[dict]:
    """Video-MME-shaped docs: per video ``v``, question ``q`` (1-based) of each task type, answer letter
    ``ABCD[(v * answer_step + q) % 4]``, four lettered options."""
    letters = "ABCD"
    return [
        {
            "video_id": f"{v:03d}",
            "videoID": f"vid{v}",
            "question_id": f"{v:03d}-{q}",
            "duration": "short",
            "domain": "Knowledge",
            "sub_category": "Humanity & History",
            "task_type": task_types[q - 1],
            "question": f"Question {q} about video {v}?",
            "options": [f"{L}. option {L.lower()}" for L in letters],
            "answer": letters[(v * answer_step + q) % 4],
        }
        for v in videos
        for q in range(1, len(task_types) + 1)
    ]
