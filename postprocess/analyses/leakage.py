"""Multi-modal leakage: the blind LVLM against its own language backbone on the same prompts (MMStar's ML).

A model scoring above chance with no visual input (``blind``) does so either because the question text carries
the answer, or because multimodal training put the benchmark into the model. MMStar (Chen et al. 2024, "Are We on
the Right Way for Evaluating Large Vision-Language Models?") separates the two with the model's own language
backbone: multi-modal leakage ML = max(0, S_wv - S_t), S_wv the LVLM without the visual input, S_t its base LLM on
the same text. Here the backbone is a run of ``vdg_text_lm`` (``model_wrappers.text_lm``: any Hugging Face causal
LM) on the same ``<benchmark>_vdg_blind`` tasks, so both arms answer the very prompt the LVLM gets without its video.

Pairs (``ReportSettings.backbones``, ``vdg report --backbone LVLM=BACKBONE``, or the naming rule ``pairs``
documents) are compared question by question. Per (pair, benchmark, task type) and Overall, on the questions every
arm answered (the LVLM's orig when it ran it, its blind, the backbone's blind):

- ``leakage`` = acc_blind - acc_backbone, the mean per-question paired difference, with the paired CI of every
  vdg table (``vdg.ci_or_none``: ``--ci-method``, clustering by video); ``leakage_mmstar`` = max(0, leakage),
  MMStar's convention (no CI: a clipped estimate has none that means the same);
- ``text_prior`` = acc_backbone - chance (chance per question 1 / its options), with the CI of the mean of
  per-question ``score_backbone - 1 / options`` (``ci_or_none``, a mean, not a paired difference).

The backbone's arm is named ``BACKBONE_ARM`` in the ``arms`` column. The questions are paired with
``paired_contrast.paired_cells`` on a frame of the pairs alone (each pair under the LVLM's label), so
``question_set=shared`` shares a benchmark's question set across the pairs, as the vdg table does across models.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from postprocess.analyses._paired import (
    PAIRED_COLUMNS,
    QUESTION_SET_PER_MODEL,
    SCALE_CORRECT,
    SCALE_GRADED,
    by_model_benchmark,
    question_rule,
)
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.analyses.paired_contrast import Cell, Contrast, paired_cells
from postprocess.analyses.vdg import CI_COLUMNS, ci_or_none, conventions
from postprocess.reading.answer_options import option_counts
from postprocess.reading.frame import QUANTIZED_MARK
from vdg_tasks.vocabulary.conditions import core_measured

#: The arm with no visual input at all (declared with measure ``no_vision``): both sides of a pair answer it.
BLIND = core_measured("no_vision")
#: The name of the backbone's arm (its own blind answers) in the ``arms`` column; not a condition.
BACKBONE_ARM = "backbone"
#: lmms-eval's name of vdg's language-model class: a run of it is a backbone run for the naming rule.
TEXT_LM_MODEL = "vdg_text_lm"
#: ``pairing`` values.
BY_OPTION = "--backbone"
BY_RULE = "naming rule"

#: The naming rule's table: an LVLM checkpoint's name (the last part of its ``pretrained=``) -> the name of the
#: language model its LLM was initialised from (docs/api-models.md gives the sources and the caveats).
KNOWN_BACKBONES: dict[str, str] = {
    "Qwen2-VL-2B-Instruct": "Qwen2-1.5B-Instruct",
    "Qwen2-VL-7B-Instruct": "Qwen2-7B-Instruct",
    "Qwen2-VL-72B-Instruct": "Qwen2-72B-Instruct",
    "Qwen2.5-VL-3B-Instruct": "Qwen2.5-3B-Instruct",
    "Qwen2.5-VL-7B-Instruct": "Qwen2.5-7B-Instruct",
    "Qwen2.5-VL-32B-Instruct": "Qwen2.5-32B-Instruct",
    "Qwen2.5-VL-72B-Instruct": "Qwen2.5-72B-Instruct",
    "llava-onevision-qwen2-0.5b-ov": "Qwen2-0.5B-Instruct",
    "llava-onevision-qwen2-7b-ov": "Qwen2-7B-Instruct",
    "llava-onevision-qwen2-72b-ov": "Qwen2-72B-Instruct",
    "llava-onevision-qwen2-0.5b-ov-hf": "Qwen2-0.5B-Instruct",
    "llava-onevision-qwen2-7b-ov-hf": "Qwen2-7B-Instruct",
    "llava-onevision-qwen2-72b-ov-hf": "Qwen2-72B-Instruct",
    "LLaVA-Video-7B-Qwen2": "Qwen2-7B-Instruct",
    "InternVL2-1B": "Qwen2-0.5B-Instruct",
    "InternVL2-2B": "internlm2-chat-1_8b",
    "InternVL2-4B": "Phi-3-mini-128k-instruct",
    "InternVL2-8B": "internlm2_5-7b-chat",
    "InternVL2-26B": "internlm2-chat-20b",
}

COLUMNS: dict[str, str] = {
    "model": "the LVLM's label",
    "backbone": f"the label of its language backbone's run ({TEXT_LM_MODEL} on the same {BLIND} tasks)",
    "pairing": f"how the pair was made: {BY_OPTION!r} (named on the command line) or {BY_RULE!r} (the LVLM's "
    "checkpoint name maps to the backbone's in the documented table)",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "arms": f"the arms every one of the n questions was answered under, joined by ',': orig (when the LVLM ran it), "
    f"{BLIND} (the LVLM with no visual input) and {BACKBONE_ARM} (the backbone on the same prompts)",
    "n": "questions answered under every arm in arms (and in the shared question set)",
    "acc_orig": "the LVLM's accuracy with the video over the n questions (empty when it did not run orig)",
    "acc_blind": "the LVLM's accuracy with no visual input over the n questions",
    "acc_backbone": "the backbone's accuracy over the n questions",
    "chance": "mean of 1 / options over the n questions (empty when a question's option count is unknown)",
    "leakage": "acc_blind - acc_backbone (mean per-question paired difference): what the LVLM answers without "
    "the video that its own language backbone does not",
    "ci_low": "lower bound of the paired CI of leakage (empty when too_small)",
    "ci_high": "upper bound of the paired CI of leakage (empty when too_small)",
    "leakage_mmstar": "max(0, leakage): MMStar's multi-modal leakage convention (no CI)",
    "text_prior": "acc_backbone - chance: what the question text gives a language model that never saw the video",
    "text_prior_ci_low": "lower bound of the CI of text_prior (the mean of per-question backbone score - 1 / "
    "options; empty when too_small or chance is empty)",
    "text_prior_ci_high": "upper bound of the CI of text_prior",
    "n_blind_only": "of the n questions, those the LVLM answered right without the video and the backbone wrong",
    "n_backbone_only": "of the n questions, those the backbone answered right and the LVLM without the video wrong",
    "n_error": "questions excluded because an arm has no answer",
    "n_not_shared": "questions every arm answered but left out because another pair with the same arms has an error "
    "on them (question_set=shared); 0 under per-model or missing_policy=incorrect",
    "too_small": "n is below min_stratum: descriptive values only, no CI",
    "ci_level": "confidence level of the CI",
    **CI_COLUMNS,
    "missing_policy": "exclude or incorrect",
    "question_rule": "which questions the rows share: the arms, question_set and missing_policy",
    "scale": f"{SCALE_CORRECT!r}, or {SCALE_GRADED!r} when a question of the row is graded (accuracies are then mean "
    "scores)",
}


@dataclass(frozen=True)
class Pair:
    """An LVLM's label, its backbone run's label, and how they were paired (``BY_OPTION`` or ``BY_RULE``)."""

    model: str
    backbone: str
    pairing: str


def checkpoint_name(label: str) -> tuple[str, str, str]:
    """(model class, checkpoint name, precision mark) of a model label ``class:checkpoint[†mark]``
    (``postprocess.reading.run_labels.model_label``); the class is '' for a label without ':'."""
    text, _, mark = str(label).partition(QUANTIZED_MARK)
    model_class, sep, name = text.partition(":")
    return (model_class, name, mark) if sep else ("", text, mark)


def _rule_pairs(labels: list[str], named: set[str]) -> list[Pair]:
    """The naming rule: a ``vdg_text_lm:<name>`` run is the backbone of every other label whose checkpoint name
    ``KNOWN_BACKBONES`` maps to ``<name>`` (case-insensitive), the one with the same precision mark where several
    runs of that backbone are present; an LVLM that still has several candidates is left to ``--backbone``."""
    backbones = [label for label in labels if checkpoint_name(label)[0] == TEXT_LM_MODEL]
    known = {k.casefold(): v.casefold() for k, v in KNOWN_BACKBONES.items()}
    out = []
    for label in labels:
        model_class, name, mark = checkpoint_name(label)
        if label in named or model_class == TEXT_LM_MODEL or name.casefold() not in known:
            continue
        found = [b for b in backbones if checkpoint_name(b)[1].casefold() == known[name.casefold()]]
        if len(found) > 1:
            found = [b for b in found if checkpoint_name(b)[2] == mark]
        if len(found) == 1:
            out.append(Pair(label, found[0], BY_RULE))
    return out


def pairs(labels: Iterable[str], backbones: Mapping[str, str] = {}) -> list[Pair]:  # noqa: B006 - read only
    """The (LVLM, backbone) pairs among the model ``labels``: each of ``backbones`` (LVLM label -> backbone label,
    ``--backbone``), then the naming rule (``_rule_pairs``) for the LVLMs not named there; sorted by LVLM.

    Raises:
        ValueError: a label of ``backbones`` that is not among ``labels`` (the message lists them).
    """
    present = sorted({str(label) for label in labels})
    for model, backbone in backbones.items():
        absent = [label for label in (model, backbone) if label not in present]
        if absent:
            raise ValueError(
                f"--backbone {model}={backbone}: no model labelled {', '.join(map(repr, absent))} in the report "
                f"(models: {', '.join(present) or 'none'})"
            )
    named = [Pair(model, backbone, BY_OPTION) for model, backbone in backbones.items()]
    return sorted(named + _rule_pairs(present, set(backbones)), key=lambda p: p.model)


def _pair_frame(frame: pd.DataFrame, found: list[Pair]) -> tuple[pd.DataFrame, dict[str, Pair]]:
    """The rows the pairs compare, each pair under its LVLM's label: the LVLM's orig and blind, the backbone's blind
    as arm ``BACKBONE_ARM``; a column ``n_options`` (each row's count, ``option_counts``) beside ``PAIRED_COLUMNS``."""
    columns = [c for c in PAIRED_COLUMNS if c in frame.columns]
    involved = frame["model"].isin({p.model for p in found} | {p.backbone for p in found})
    rows = frame.loc[involved & frame["condition"].isin(["orig", BLIND])]
    counts = option_counts(rows)
    parts = []
    for pair in found:
        own = (rows["model"] == pair.model).to_numpy()
        theirs = ((rows["model"] == pair.backbone) & (rows["condition"] == BLIND)).to_numpy()
        parts.append(rows.loc[own, columns].assign(n_options=counts[own]))
        parts.append(
            rows.loc[theirs, columns].assign(model=pair.model, condition=BACKBONE_ARM, n_options=counts[theirs])
        )
    joined = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=[*columns, "n_options"])
    return joined, {p.model: p for p in found}


def _chance_of(joined: pd.DataFrame, model: str, benchmark: str, question_ids: np.ndarray) -> np.ndarray:
    """1 / options of each question (NaN where the count is unknown), read from the backbone's rows of a pair."""
    arm = joined[
        (joined["model"] == model) & (joined["benchmark"] == benchmark) & (joined["condition"] == BACKBONE_ARM)
    ]
    counts = pd.to_numeric(arm["n_options"], errors="coerce").astype(float)
    per_question = pd.Series(counts.to_numpy(), index=arm["question_id"].astype(str).to_numpy())
    per_question = per_question[~per_question.index.duplicated()]
    return 1.0 / per_question.reindex([str(q) for q in question_ids]).to_numpy(dtype=float)


def _rule(arms: list[str], options: ReportSettings) -> str:
    scope = "pair" if options.question_set == QUESTION_SET_PER_MODEL else options.question_set
    return question_rule(arms, options.missing, scope)


def _row(cell: Cell, pair: Pair, benchmark: str, arms: list[str], chance: np.ndarray, options: ReportSettings):
    kept, table = cell.kept, cell.arms
    backbone = table.score[BACKBONE_ARM][kept]
    values = backbone - chance[kept]
    known = bool(cell.n) and not np.isnan(values).any()
    prior_ci = (
        ci_or_none(
            values,
            options,
            ("leakage", benchmark, cell.task_type, "text_prior"),
            table.question_ids[kept],
            table.videos[kept],
            difference=False,
        )
        if known
        else None
    )
    right_blind, right_backbone = table.correct[BLIND][kept], table.correct[BACKBONE_ARM][kept]
    return {
        "model": pair.model,
        "backbone": pair.backbone,
        "pairing": pair.pairing,
        "benchmark": benchmark,
        "task_type": cell.task_type,
        "arms": ",".join(arms),
        "n": cell.n,
        "acc_orig": cell.accuracy("orig") if "orig" in arms else np.nan,
        "acc_blind": cell.accuracy(BLIND),
        "acc_backbone": cell.accuracy(BACKBONE_ARM),
        "chance": float(chance[kept].mean()) if known else np.nan,
        "leakage": cell.diff,
        "ci_low": cell.ci_low,
        "ci_high": cell.ci_high,
        "leakage_mmstar": max(0.0, cell.diff) if cell.n else np.nan,
        "text_prior": float(values.mean()) if known else np.nan,
        "text_prior_ci_low": prior_ci.low if prior_ci else np.nan,
        "text_prior_ci_high": prior_ci.high if prior_ci else np.nan,
        "n_blind_only": int((right_blind & ~right_backbone).sum()),
        "n_backbone_only": int((right_backbone & ~right_blind).sum()),
        "n_error": cell.n_error,
        "n_not_shared": cell.n_not_shared,
        "too_small": cell.too_small(options),
        **conventions(COLUMNS, options, rule=_rule(arms, options), scale=cell.scale, cis=[cell.ci, prior_ci]),
    }


@memo_by_frame
def leakage_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Leakage and text prior per (LVLM, backbone, benchmark, task type); columns as in ``COLUMNS``.

    Raises:
        ValueError: a ``--backbone`` label absent from the report, or a named pair with no benchmark where both ran
            the blind tasks.
    """
    found = pairs(frame["model"].astype(str).unique(), options.backbones)
    if not found:
        return empty(COLUMNS)
    joined, by_model = _pair_frame(frame, found)
    contrast = Contrast("leakage", BLIND, BACKBONE_ARM, ("leakage",))
    rows, compared = [], set()
    for (model, benchmark), group in by_model_benchmark(joined):
        present = set(group["condition"].unique())
        if not {BLIND, BACKBONE_ARM} <= present:
            continue
        arms = [arm for arm in ("orig", BLIND, BACKBONE_ARM) if arm in present]
        pair = by_model[str(model)]
        compared.add(pair.model)
        for cell in paired_cells(joined, group, str(benchmark), arms, [contrast], options, "leakage"):
            chance = _chance_of(joined, pair.model, str(benchmark), cell.arms.question_ids)
            rows.append(_row(cell, pair, str(benchmark), arms, chance, options))
    unmatched = [p for p in found if p.pairing == BY_OPTION and p.model not in compared]
    if unmatched:
        raise ValueError(
            "; ".join(
                f"--backbone {p.model}={p.backbone}: no benchmark where both ran {BLIND} (the backbone is a "
                f"{TEXT_LM_MODEL} run of the <benchmark>_vdg_{BLIND} tasks)"
                for p in unmatched
            )
        )
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def backbone_labels(table: pd.DataFrame | None) -> set[str]:
    """The labels that serve as a backbone in a leakage table (their runs are not LVLMs lacking orig and black)."""
    if table is None or not len(table) or "backbone" not in table.columns:
        return set()
    return set(table["backbone"].astype(str))


ANALYSES = (
    Analysis(
        "leakage",
        "Multi-modal leakage (MMStar): per LVLM and its language backbone, accuracy with no visual input against the "
        "backbone's on the same prompts (blind - backbone, with its paired CI and MMStar's max(0, .)), and the "
        "backbone's text prior over chance, per task type, on the questions every arm answered.",
        COLUMNS,
        leakage_table,
        shares=(leakage_table,),  # memoized: the run reads it through memo_by_frame
    ),
)
