"""Build a tiny, randomly initialised Qwen2 causal LM directory, fully offline: a stand-in language backbone.

The tokenizer is ``tiny_qwen2vl``'s (a byte-level BPE trained here, Qwen's special tokens and chat template); the
model a 2-layer, 64-wide ``Qwen2ForCausalLM`` from ``torch.manual_seed``. Its output layer can only name the
letters A-D (their rows are +-v and +-u, every other row 0), so its one-token reply is always a letter that
depends on the prompt: run with ``max_new_tokens=1`` it answers every question, right or wrong by chance.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.tiny_qwen2vl import SPECIAL_TOKENS, build_tokenizer

#: Model args of ``vdg_text_lm`` on the CPU; prepend ``pretrained=<dir>,``.
TINY_LM_MODEL_ARGS = "device=cpu,max_new_tokens=1,dtype=fp32"
LETTERS = ("A", "B", "C", "D")
_SEED = 4321


def build_tiny_causal_lm(out_dir: Path, name: str = "Qwen2-7B-Instruct") -> Path:
    """Write a tiny Qwen2 causal LM + tokenizer into ``out_dir / name`` and return that folder (named after the
    backbone it stands in for, so the report labels its run ``vdg_text_lm:<name>``)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    folder = Path(out_dir) / name
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
        tie_word_embeddings=False,
    )
    torch.manual_seed(_SEED)
    model = Qwen2ForCausalLM(config).to(torch.float32).eval()
    with torch.no_grad():
        v, u = torch.randn(2, config.hidden_size) * 10
        head = torch.zeros_like(model.lm_head.weight)
        for letter, row in zip(LETTERS, (v, -v, u, -u), strict=True):
            head[tokenizer.convert_tokens_to_ids(letter)] = row
        model.lm_head.weight.copy_(head)
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.generation_config.do_sample = False
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
