"""Build a tiny, randomly initialised Qwen2-VL model directory, fully offline.

The directory loads with lmms-eval 0.7.3's own ``qwen2_vl`` model class
(``lmms_eval.models.simple.qwen2_vl.Qwen2_VL``; ``--model qwen2_vl`` has no chat
implementation in 0.7.3, so it always resolves to that simple class). About 190k
parameters: outputs are random, the point is to exercise the real plumbing (video
decoding through qwen_vl_utils, the processor, mrope, generate) on the CPU.

Nothing is downloaded: the tokenizer is a byte-level BPE trained here with
``tokenizers`` on a few sentences, the weights come from ``torch.manual_seed``.
"""

from __future__ import annotations

from pathlib import Path

# Model args for lmms-eval's Qwen2_VL.__init__ (pretrained, device, device_map, batch_size,
# use_cache, use_flash_attention_2, max_length, max_pixels, min_pixels, max_num_frames,
# system_prompt, interleave_visuals, reasoning_prompt; any other kwarg fails an assert).
# Prepend ``pretrained=<dir>,``.
TINY_QWEN_MODEL_ARGS = "device=cpu,device_map=cpu,max_num_frames=8,max_pixels=12544"

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

# Qwen2-VL-Instruct's chat template (system prompt as a string or as content parts).
CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}"
    "{% endif %}"
    "{% endfor %}<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_CORPUS = [
    "You are a helpful assistant.",
    "Answer with the option's letter from the given choices directly.",
    "What is happening in this video? Describe the scene in one sentence.",
    "A. The person walks to the left. B. The ball falls down. C. Nothing moves. D. The light turns red.",
    "Question: how many objects appear in the video? Answer: three.",
    "The quick brown fox jumps over the lazy dog 0123456789.",
    "system user assistant video image frame time order first last before after",
]

_SEED = 1234


def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2TokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        min_frequency=1,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    return Qwen2TokenizerFast(
        tokenizer_object=tok,
        unk_token=None,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS[1:],
        chat_template=CHAT_TEMPLATE,
        model_max_length=4096,
    )


def build_tiny_qwen2vl(out_dir: Path) -> Path:
    """Write a tiny Qwen2-VL model + processor into ``out_dir`` and return it.

    Deterministic (fixed seed, tokenizer trained on a fixed corpus); a few seconds on a CPU.
    """
    import torch
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    tokenizer = build_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    vocab_size = len(tokenizer)

    hidden = 64
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": vocab_size,
            "hidden_size": hidden,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,  # head_dim 16 -> mrope sections sum to 8
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            "max_window_layers": 2,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": [2, 3, 3],
            },
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
            "tie_word_embeddings": False,
        },
        vision_config={
            "depth": 1,
            "embed_dim": 32,
            "hidden_size": hidden,  # merger output = text hidden size
            "num_heads": 2,
            "mlp_ratio": 2,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "in_channels": 3,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
        tie_word_embeddings=False,
    )

    torch.manual_seed(_SEED)
    model = Qwen2VLForConditionalGeneration(config).to(torch.float32).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.generation_config.bos_token_id = ids["<|endoftext|>"]
    model.generation_config.do_sample = False
    model.save_pretrained(out_dir)

    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(),
        tokenizer=tokenizer,
        # True = qwen-vl-utils' reference per-frame pixel budget (no effect at these sizes);
        # setting it silences transformers' "does not apply the per-frame pixel cap" warning.
        video_processor=Qwen2VLVideoProcessor(cap_pixels_per_frame=True),
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


if __name__ == "__main__":  # pragma: no cover - manual helper
    import sys

    print(build_tiny_qwen2vl(Path(sys.argv[1] if len(sys.argv) > 1 else "tiny-qwen2vl")))
