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
