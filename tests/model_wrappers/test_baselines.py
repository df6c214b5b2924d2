"""vdg_chance and vdg_constant, called as lmms-eval calls them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from scipy.stats import binom

from model_wrappers.baselines import VdgChance, VdgConstant, count_options
from vdg_tasks.synthetic.synth import make_questions, video_spec


@pytest.fixture(scope="module")
def docs():
    # The synthetic benchmark's questions (these models never open a video, so none is encoded).
    return [q for i in range(40) for q in make_questions(video_spec(f"s{i:03d}", 0), 0, f"/nowhere/s{i:03d}.mp4")]


def _ask(model, docs):
    from lmms_eval.tasks.videomme.utils import videomme_doc_to_text

    kwargs = {"pre_prompt": "", "post_prompt": "\nAnswer with the option's letter from the given choices directly."}
    model.task_dict = {"t": {"test": docs}}
    requests = [
        SimpleNamespace(args=(videomme_doc_to_text(d, kwargs), {}, None, i, "t", "test")) for i, d in enumerate(docs)
    ]
    return model.generate_until(requests)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_chance_accuracy_is_within_its_binomial_interval_around_a_quarter(docs, seed):
    answers = _ask(VdgChance(seed=seed), docs)
    hits = sum(a == d["answer"] for a, d in zip(answers, docs, strict=True))
    low, high = binom.interval(0.99, len(docs), 0.25)  # scipy: central 99% of Binomial(n, 1/4)
    assert low <= hits <= high, f"seed {seed}: {hits}/{len(docs)} correct"


def test_chance_is_per_question_deterministic_and_seed_dependent(docs):
    a, b, c = _ask(VdgChance(seed=3), docs), _ask(VdgChance(seed=3), docs), _ask(VdgChance(seed=4), docs)
    assert a == b != c
    assert set(a) <= set("ABCD")


def test_chance_with_the_generators_seed_does_not_replay_the_answer_key(docs):
    # The seed-002 bug: a guesser seeded like the data generator scored 100%.
    answers = _ask(VdgChance(seed=0), docs)
    assert sum(a == d["answer"] for a, d in zip(answers, docs, strict=True)) < 0.5 * len(docs)


def test_constant_always_answers_its_letter(docs):
    assert set(_ask(VdgConstant(letter="c"), docs)) == {"C"}
    with pytest.raises(ValueError, match="letter must be one of"):
        VdgConstant(letter="Z")


def test_count_options_reads_the_prompt():
    assert count_options("Q?\nA. x\nB. y\nC. z\nThe best answer is:") == 3
    assert count_options("no options here") == 4


def test_models_are_registered_with_lmms_eval():
    from lmms_eval.models import get_model

    assert get_model("vdg_chance") is VdgChance
    assert get_model("vdg_constant") is VdgConstant
