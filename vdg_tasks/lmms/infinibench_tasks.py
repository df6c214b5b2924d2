"""The prompt builder of the infinibench_ga tasks that read the default prepared questions.

lmms-eval imports this module while it builds an ``infinibench_ga_vdg_*`` task, before it loads the
dataset. Importing it checks that the questions were prepared (``vdg infinibench`` from a local
copy of the benchmark, or ``vdg synth-episodes``): without them lmms-eval would retry a relative
``data/questions.jsonl`` for a minute and fail with a path that says nothing about either.
"""

from __future__ import annotations

from loguru import logger

from vdg_tasks.data.benchmarks import infinibench_prompt as doc_to_text
from vdg_tasks.lmms.yamlgen import INFINIBENCH_DATA, YAML_ROOT

__all__ = ["doc_to_text", "require_questions"]


def require_questions() -> None:
    """Raise a FileNotFoundError saying how to prepare the questions when the default file is missing."""
    questions = YAML_ROOT / "infinibench_ga" / INFINIBENCH_DATA
    if not questions.is_file():
        message = (
            f"The infinibench_ga questions have not been prepared ({questions} is missing): run "
            "`vdg infinibench ANNOTATIONS --videos DIR` on a local copy of InfiniBench, or `vdg synth-episodes` "
            "for the synthetic episodes."
        )
        logger.error(message)  # lmms-eval's last line names only the import that failed
        raise FileNotFoundError(message)


require_questions()
