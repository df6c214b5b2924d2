"""``vdg_text_lm``: any Hugging Face causal language model, answering vdg's ``blind`` tasks as an LVLM's backbone.

The leakage table (``postprocess.analyses.leakage``) compares an LVLM with no visual input against the language
model it was built on (MMStar's multi-modal leakage). This class runs that language model through lmms-eval on the
same ``<benchmark>_vdg_blind`` tasks, so it reads the very prompt the LVLM gets without its video:

- ``pretrained=``: a Hugging Face causal LM (hub id or folder; ``AutoModelForCausalLM`` and ``AutoTokenizer``).
- The prompt is the task's ``doc_to_text``, given as one user message through the tokenizer's chat template when
  it has one (``chat_template=False`` gives the raw text), after ``system_prompt=`` when one is given (else the
  template's own default, as Qwen2's "You are a helpful assistant.").
- Greedy decoding always; the task's ``max_new_tokens`` (``max_new_tokens=`` overrides it) and its ``until``
  strings (the reply is cut at the first).
- ``quantization=nf4|int8|none`` and ``dtype=bf16|fp16|fp32`` as vdg's other wrappers
  (``model_wrappers.quantized``); ``device=`` (default cuda when there is one, else cpu), ``device_map=``,
  ``trust_remote_code=``, ``max_length=`` (prompt tokens kept, from the end; default: all).

A request that carries visual input (the task is not a blind one) is refused: a text model's answer to an orig
task would be read as that model's orig. The report labels the run ``vdg_text_lm:<checkpoint name>``, the name the
leakage table's naming rule matches.
"""

from __future__ import annotations

from typing import Any

from lmms_eval.api.model import lmms
from loguru import logger as eval_logger
from tqdm import tqdm

from model_wrappers.distributed import DataParallel
from model_wrappers.quantized import bnb_config, dtype_name, guard_cpu_4bit, parse_dtype, parse_quantization

__all__ = ["VdgTextLM", "parse_bool"]

MODEL_NAME = "vdg_text_lm"
#: ``max_new_tokens`` when neither the task nor the model args give one.
DEFAULT_MAX_NEW_TOKENS = 16


def parse_bool(value: Any, name: str) -> bool:
    """A model arg read as a boolean: true/false, 1/0, yes/no (any case)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(f"{MODEL_NAME}: {name} must be true or false, got {value!r}")


def _visual_count(visuals: Any) -> int:
    if visuals is None:
        return 0
    if isinstance(visuals, (list, tuple)):
        return sum(_visual_count(v) for v in visuals)
    return 1


class VdgTextLM(DataParallel, lmms):
    """A Hugging Face causal LM answering from the prompt alone (see the module docstring for its model args)."""

    is_simple = True

    def __init__(
        self,
        pretrained: str,
        device: str | None = None,
        device_map: str | None = None,
        dtype: str | None = None,
        quantization: str = "none",
        chat_template: Any = True,
        system_prompt: str | None = None,
        max_new_tokens: int | str | None = None,
        max_length: int | str | None = None,
        trust_remote_code: Any = False,
        batch_size: int | str = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        # torch and transformers (several seconds) only when lmms-eval builds this model
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if kwargs:
            eval_logger.warning(f"{MODEL_NAME}: ignoring unknown model args {sorted(kwargs)}")
        quant = parse_quantization(quantization)
        requested = parse_dtype(dtype)
        remote = parse_bool(trust_remote_code, "trust_remote_code")
        self.use_chat_template = parse_bool(chat_template, "chat_template")
        self.system_prompt = self._resolve_system_prompt(system_prompt) if system_prompt else None
        self.max_new_tokens = int(max_new_tokens) if max_new_tokens not in (None, "") else None
        self.max_length = int(max_length) if max_length not in (None, "") else None
        if int(batch_size) != 1:
            eval_logger.info(f"{MODEL_NAME}: batch_size={batch_size} read as 1 (requests are answered one by one)")
        self._init_processes(MODEL_NAME)
        target = (
            str(self._device) if self._world_size > 1 else (device or ("cuda" if torch.cuda.is_available() else "cpu"))
        )

        load: dict[str, Any] = {"trust_remote_code": remote}
        load["dtype"] = (
            {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[requested] if requested else "auto"
        )
        compute = None
        if quant != "none":
            compute = (requested or "bf16") if quant == "nf4" else None
            load["quantization_config"] = bnb_config(quant, compute)
        if device_map or quant != "none":
            load["device_map"] = device_map or target
        eval_logger.info(f"{MODEL_NAME}: loading {pretrained} with quantization={quant}, dtype={requested or 'auto'}")
        self.tokenizer = AutoTokenizer.from_pretrained(pretrained, trust_remote_code=remote)
        model = AutoModelForCausalLM.from_pretrained(pretrained, **load)
        if "device_map" not in load:
            model = model.to(target)
        if quant == "nf4":
            guard_cpu_4bit(model)
        self.model = model.eval()
        self._input_device = next(model.parameters()).device
        self.has_chat_template = bool(getattr(self.tokenizer, "chat_template", None))
        if self.use_chat_template and not self.has_chat_template:
            eval_logger.info(f"{MODEL_NAME}: {pretrained} has no chat template: the prompt is given as raw text")
        self.vdg_quantization = quant
        self.vdg_dtype = dtype_name(getattr(model, "dtype", None)) or requested or "auto"
        self.vdg_compute_dtype = compute
        self.vdg_precision = quant if quant != "none" else self.vdg_dtype

    def prompt_ids(self, context: str) -> list[int]:
        """The token ids the model reads for ``context``: through the chat template when it has one (and
        ``chat_template`` is on), else the raw text; the last ``max_length`` kept when that is set."""
        if self.use_chat_template and self.has_chat_template:
            messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
            messages.append({"role": "user", "content": context})
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        else:
            text = f"{self.system_prompt}\n\n{context}" if self.system_prompt else context
            ids = self.tokenizer(text)["input_ids"]
        return list(ids[-self.max_length :] if self.max_length else ids)

    def answer(self, context: str, gen_kwargs: dict[str, Any]) -> str:
        # torch (already imported by __init__) for the no-grad generate call
        import torch

        until = gen_kwargs.get("until") or []
        until = [until] if isinstance(until, str) else list(until)
        new_tokens = self.max_new_tokens or int(gen_kwargs.get("max_new_tokens") or DEFAULT_MAX_NEW_TOKENS)
        ids = torch.tensor([self.prompt_ids(context)], device=self._input_device)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with torch.no_grad():
            out = self.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=new_tokens,
                do_sample=False,
                num_beams=1,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=pad,
            )
        text = self.tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
        for stop in until:
            if stop:
                text = text.split(stop, 1)[0]
        return text

    def generate_until(self, requests) -> list[str]:
        self._log_shard(MODEL_NAME, len(requests))
        answers = []
        bar = tqdm(total=len(requests), desc="Model Responding", disable=self._rank != 0)
        for context, gen_kwargs, doc_to_visual, doc_id, task, split in [r.args for r in requests]:
            doc = self.task_dict[task][split][doc_id]
            n_visual = _visual_count(doc_to_visual(doc)) if doc_to_visual is not None else 0
            if n_visual:
                raise ValueError(
                    f"{MODEL_NAME}: task {task} gives {n_visual} visual input(s) for doc {doc_id}; a language model "
                    "answers text only: run it on the <benchmark>_vdg_blind tasks"
                )
            answers.append(self.answer(context, dict(gen_kwargs or {})))
            bar.update()
        bar.close()
        return answers

    def generate_until_multi_round(self, requests) -> list[str]:
        return self.generate_until(requests)

    def loglikelihood(self, requests):
        raise NotImplementedError(f"{MODEL_NAME} only answers generate_until requests")
