"""``vdg_text_lm``: a Hugging Face causal LM answering the blind prompt, on a tiny local model."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from model_wrappers.text_lm import parse_bool

TASK, SPLIT = "vdgsynth_vdg_blind", "test"
PROMPT = "What colour is the border?\nA. red\nB. green\nC. blue\nD. white\nAnswer with the option's letter."


def test_parse_bool_reads_the_usual_spellings_and_refuses_others():
    assert parse_bool("True", "x") and parse_bool(1, "x") and not parse_bool("no", "x") and parse_bool(True, "x")
    with pytest.raises(ValueError, match="chat_template must be true or false"):
        parse_bool("maybe", "chat_template")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from model_wrappers.text_lm import VdgTextLM
    from tests.helpers.tiny_causal_lm import build_tiny_causal_lm

    folder = build_tiny_causal_lm(tmp_path_factory.mktemp("tiny_lm"))
    lm = VdgTextLM(pretrained=str(folder), device="cpu", max_new_tokens="1", dtype="fp32")
    lm.task_dict = {TASK: {SPLIT: [{"question_id": "q1"}, {"question_id": "q2"}]}}
    return lm


def _request(doc_id: int, visuals: list, context: str = PROMPT) -> SimpleNamespace:
    gen = {"max_new_tokens": 16, "temperature": 0, "do_sample": False, "until": ["\n\n"]}
    return SimpleNamespace(args=(context, gen, lambda doc: visuals, doc_id, TASK, SPLIT))


@pytest.mark.slow  # builds and loads a transformers model (torch): ~5 s
def test_it_answers_the_prompt_through_the_chat_template_greedily(model):
    ids = model.prompt_ids(PROMPT)
    text = model.tokenizer.decode(ids)
    assert text.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n")
    assert text.endswith(f"{PROMPT}<|im_end|>\n<|im_start|>assistant\n")
    first = model.generate_until([_request(0, []), _request(1, [])])
    again = model.generate_until([_request(0, []), _request(1, [])])
    assert first == again and all(a in ("A", "B", "C", "D") for a in first)  # one token, a letter, greedy
    assert (model.vdg_quantization, model.vdg_precision) == ("none", "fp32")


@pytest.mark.slow  # builds and loads a transformers model (torch): ~5 s
def test_a_request_with_visual_input_is_refused(model):
    with pytest.raises(ValueError, match="gives 1 visual input.*_vdg_blind"):
        model.generate_until([_request(0, ["/videos/a.mp4"])])
