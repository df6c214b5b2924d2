"""The prompt builder of the vdgsynth tasks that read the default generated data.

lmms-eval imports this module while it builds a ``vdgsynth_vdg_*`` task, before it loads the
dataset. Importing it checks that ``vdg synth`` has written the benchmark: without it lmms-eval
would retry loading a relative ``data/questions.jsonl`` from the current folder for a minute and
then fail with a path that says nothing about ``vdg synth``.
"""

from __future__ import annotations

from lmms_eval.tasks.videomme.utils import videomme_doc_to_text as doc_to_text
from loguru import logger

from vdg_tasks.lmms.yamlgen import SYNTH_DATA, YAML_ROOT

__all__ = ["doc_to_text", "require_synth_data"]


def require_synth_data() -> None:
    """Raise a FileNotFoundError that says to run ``vdg synth`` when the default vdgsynth data is missing."""
    questions = YAML_ROOT / "vdgsynth" / SYNTH_DATA
    if not questions.is_file():
        message = f"The vdgsynth benchmark has not been generated ({questions} is missing): run `vdg synth` first."
        logger.error(message)  # lmms-eval's last line names only the import that failed
        raise FileNotFoundError(message)


require_synth_data()
