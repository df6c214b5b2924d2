"""Reference models that never look at the video: chance and constant answers."""

from __future__ import annotations

from lmms_eval.api.model import lmms
from tqdm import tqdm

from model_wrappers.distributed import DataParallel
from model_wrappers.probe import parse_prompt
from vdg_tasks.vocabulary.parse import LETTERS
from vdg_tasks.vocabulary.seeding import rng_for


def count_options(prompt: str) -> int:
    """Number of lettered options ("A. ...", "B) ...") in a prompt, at most eight; 4 when none can be seen."""
    options = parse_prompt(prompt)[1]
    return min(len(options), len(LETTERS)) if options else 4


class _TextOnlyModel(DataParallel, lmms):
    """Answers every request from the prompt (and the question id) alone.

    Under ``accelerate launch`` with several processes each process answers its shard of the
    questions (:class:`model_wrappers.distributed.DataParallel`); an answer depends only on the
    prompt and the question id, never on the rank.
    """

    is_simple = True
    #: lmms-eval model name, for log lines.
    _model_name = "vdg_text_only"

    def __init__(self) -> None:
        super().__init__()
        self._init_processes(self._model_name)

    def answer(self, prompt: str, question_id: str) -> str:
        raise NotImplementedError

    def generate_until(self, requests) -> list[str]:
        self._log_shard(self._model_name, len(requests))
        answers = []
        bar = tqdm(total=len(requests), desc="Model Responding", disable=getattr(self, "_rank", 0) != 0)
        for context, _gen_kwargs, _doc_to_visual, doc_id, task, split in [r.args for r in requests]:
            doc = self.task_dict[task][split][doc_id]
            answers.append(self.answer(context, str(doc.get("question_id", doc_id))))
            bar.update()
        bar.close()
        return answers

    def generate_until_multi_round(self, requests) -> list[str]:
        return self.generate_until(requests)

    def loglikelihood(self, requests):
        raise NotImplementedError(f"{type(self).__name__} only answers generate_until requests")


class VdgChance(_TextOnlyModel):
    """A uniform guess among the prompt's options, seeded from (``seed``, question id).

    The stream is private to (seed, question): it can never replay the stream that generated the
    data (the seed-002 article's 100%-accurate "random" baseline), and it is the same under every
    condition, so a chance model's VDG is exactly 0 question by question.
    """

    _model_name = "vdg_chance"

    def __init__(self, seed: int | str = 0, **kwargs) -> None:
        self.seed = int(seed)
        super().__init__()

    def answer(self, prompt: str, question_id: str) -> str:
        n = count_options(prompt)
        return LETTERS[int(rng_for("vdg_chance", self.seed, question_id).integers(n))]


class VdgConstant(_TextOnlyModel):
    """Always answers ``letter``: the letter-bias baseline."""

    _model_name = "vdg_constant"

    def __init__(self, letter: str = "A", **kwargs) -> None:
        letter = str(letter).strip().upper()
        if letter not in LETTERS:
            raise ValueError(f"vdg_constant: letter must be one of {', '.join(LETTERS)}, got {letter!r}")
        self.letter = letter
        super().__init__()

    def answer(self, prompt: str, question_id: str) -> str:
        return self.letter
