"""Compression robustness: accuracy across H.264 CRF levels, answer flips, and the VDG enrichment test.

The CRF levels are the conditions named ``crf<N>`` (``vdg_tasks.vocabulary.conditions.CRF_LEVELS`` declares
18, 23, 28, 33, 38; any ``crf<N>`` present is accepted), ordered by N; ``orig`` is level 0 and the
largest N is the strongest compression. Five tables:

- ``crf``: accuracy at orig and every CRF level per task type, with a Wilson CI and the change
  from orig on the same questions.
- ``crf_flips``: answers that change correctness between orig and each CRF level (C->I, I->C), the two
  accuracies on those questions, and McNemar's paired test of the change (``postprocess.stats.mcnemar_p``, as the
  ``mcnemar`` table: the exact binomial test below 25 discordant questions, else the continuity-corrected
  chi-square; 1 when C->I = I->C; empty when no answer changes). A within-model change is stated with this paired
  test, not with the overlap of the two Wilson intervals of the ``crf`` table.
- ``crf_stability``: share of questions whose prediction is the same at orig and every CRF level.
  It compares predictions, not correctness, across all levels at once, so it has its own table
  (one row per task type) rather than a value repeated on every level row of ``crf_flips``.
- ``crf_enrichment``: Fisher's exact test of whether compression-sensitive questions are more
  often visually grounded (VDG = +1: right on orig, wrong on black) than the others. Both
  "sensitive" (right on orig, wrong at the strongest level) and "VDG = +1" require a right orig
  answer, so over all questions they are associated by construction (every question wrong on orig
  lands in the "not sensitive, VDG <= 0" cell). The headline test is therefore made on the
  questions answered right on orig: sensitive against wrong on black. The paper's test over every
  question stays beside it in the ``*_unconditioned`` columns, for reproduction.
- ``crf_vdg``: per model, the Spearman correlation over task types between a task type's flip
  count summed over the CRF levels (C->I + I->C of every level, from ``crf_flips``) and its VDG
  (the ``vdg`` table's value under the same options). Do the task types that need the video also
  break under compression? Also on the flip *rate* (flips / (n * levels)), since a raw count grows
  with the task type's size. Only task types with at least ``options.min_stratum`` questions (in
  both tables) enter, and a correlation needs ``MIN_TASK_TYPES`` of them (``reason`` says why not).

Question sets (the ``question_rule`` column names each table's). ``crf`` and ``crf_flips`` compare
orig and the CRF levels on one common set. With ``options.question_set="shared"`` it
is one set per benchmark, so that the levels of a model and the models of a benchmark are all
compared on the same questions: with ``missing="exclude"`` a question that any model of the
benchmark has an error for at orig or at one of its CRF levels is dropped from every level and
every model (``n_error``). With ``"per-model"`` (the default) each (model, benchmark) has its own common set (the
questions that model answered at orig and every level). With ``missing="incorrect"`` errors are
scored wrong and all questions count. On the common set ``net / n`` of a flips row equals
``delta`` of the matching ``crf`` row. ``crf_stability`` needs no policy: a prediction is the parsed
letter, or "error" / "unparsed" when there is none (two different values), so a question that fails
at every level is stable. ``crf_enrichment`` always uses a *complete* set (no error at orig, black
or any CRF level), whatever the missing policy, as the paper's section 4.4 does: shared (no error
for any model of the benchmark with black) or per model, by ``options.question_set``. No table
here resamples: the CIs are Wilson intervals and the tests exact (McNemar's with 25 or more discordant questions
the chi-square), so no seed is involved.

Sensitivity. The paper calls a question compression-sensitive when "its correctness changes under
the strongest compression", but its published cells (11 sensitive with VDG = +1, 7 with VDG <= 0
for Qwen2-VL on 545 questions) are reproduced only by *correct on orig, wrong at the strongest
level* (C->I); counting any change (C->I or I->C) gives 11 / 23. We use C->I, which is also the
hypothesis the test asks about (grounded answers that compression breaks), and name it in the
``sensitive_definition`` column.

The questions are joined across conditions once per table in one vectorized pass over the frame
(``_blocks``), scoring errors as ``_paired.paired`` does (an error row is wrong; under ``exclude`` it
drops the question); the tests check the counts against ``paired`` on the reference data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from postprocess.analyses._paired import (
    OVERALL,
    QUESTION_SET_PER_MODEL,
    SCALE_AT_THRESHOLD,
    SCALE_CORRECT,
    correct_scales,
    question_rule,
)
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.analyses.consistency import MIN_TASK_TYPES, correlation_reason, too_small_note
from postprocess.analyses.vdg import conventions, per_question, question_set_cache, vdg_table
from postprocess.reading.frame import graded_rows
from postprocess.stats import fisher, mcnemar_p, spearman, wilson

ORIG = "orig"
BLACK = "black"
_CRF_NAME = re.compile(r"^crf(\d+)$")

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "condition": "orig or a CRF level (crf<N>), in order of N",
    "crf": "the CRF value N (0 for orig)",
    "levels": "the conditions compared for this model, joined by '>'",
    "question_rule": "the questions the rows are computed on (one set for every level and, when shared, every model)",
    "n": "questions compared: those of question_rule (all questions under missing_policy=incorrect)",
    "n_error": "questions excluded because orig or some CRF level has no answer (for any model, when shared)",
    "n_correct": "questions answered right at this level, of the n",
    "acc": "n_correct / n",
    "ci_low": "lower bound of the Wilson score interval of acc (empty when too_small)",
    "ci_high": "upper bound of the Wilson score interval of acc (empty when too_small)",
    "too_small": "n is below min_stratum: descriptive values only, no interval",
    "delta": "acc - acc at orig on the same n questions (0 for orig)",
    "n_unparsed": "answers at this level, of the n, with no readable letter (scored wrong)",
    "ci_level": "confidence level of the CI",
    "missing_policy": "exclude (errors dropped from every level) or incorrect (errors scored wrong)",
    "scale": f"{SCALE_CORRECT!r}, or {SCALE_AT_THRESHOLD!r} for a benchmark with graded questions",
}

FLIPS_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "condition": "the CRF level compared with orig (crf<N>)",
    "crf": "the CRF value N",
    "levels": "the conditions of the common question set, joined by '>'",
    "question_rule": "the questions the rows are computed on (the crf table's set)",
    "n": "questions compared (the same set as the crf table's rows)",
    "n_error": "questions excluded because orig or some CRF level has no answer (for any model, when shared)",
    "c_to_i": "right at orig, wrong at this level",
    "i_to_c": "wrong at orig, right at this level",
    "net": "i_to_c - c_to_i (equals n * delta of the crf table)",
    "stable_pct": "100 * share of the n questions with the same correctness at orig and this level",
    "acc_orig": "accuracy at orig over the n questions (the crf table's orig acc on the same set)",
    "acc_level": "accuracy at this level over the n questions (acc_level - acc_orig = net / n)",
    "p": "McNemar's paired p-value of c_to_i against i_to_c (postprocess.stats.mcnemar_p): 1 when c_to_i = i_to_c, "
    "the exact binomial test when c_to_i + i_to_c < 25, else the continuity-corrected chi-square; empty when no "
    "answer changes",
    "test": "the test behind p: 'exact binomial' or 'chi-square (continuity corrected)' (empty with p)",
    "missing_policy": "exclude or incorrect",
    "scale": f"{SCALE_CORRECT!r}, or {SCALE_AT_THRESHOLD!r} for a benchmark with graded questions",
}

STABILITY_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "levels": "the conditions compared, joined by '>' (orig and every CRF level present)",
    "question_rule": "the questions the rows are computed on: every question (an error is a prediction value)",
    "n": "questions (all of them: no missing policy applies)",
    "n_identical": "questions with the same prediction at every level (a graded answer's prediction is its score); "
    "an error or unparsed answer is a value",
    "identical_pred_pct": "100 * n_identical / n",
}

ENRICHMENT_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "strongest": "the strongest CRF level present (largest N)",
    "levels": "the CRF levels whose errors define the complete set, joined by '>'",
    "question_rule": "the complete set tested: no error at orig, black or any CRF level (whatever missing_policy)",
    "n": "questions in the complete set",
    "n_error": "questions left out because some of those conditions has no answer",
    "sensitive_definition": "which questions count as compression-sensitive",
    "conditioned_on": "the questions the headline test (a, b, c, d, odds_ratio, p_*) is made on",
    "n_orig_correct": "questions of the n answered right at orig: a + b + c + d",
    "n_sensitive": "sensitive questions (a + b); sensitive implies right at orig, so the same in both tests",
    "a": "right at orig: sensitive and wrong on black (VDG = +1)",
    "b": "right at orig: sensitive and right on black (VDG = 0)",
    "c": "right at orig: not sensitive and wrong on black (VDG = +1)",
    "d": "right at orig: not sensitive and right on black (VDG = 0)",
    "odds_ratio": "sample odds ratio a*d / (b*c) among the questions right at orig (inf when b*c = 0; empty "
    "when a margin is 0)",
    "p_greater": "one-sided Fisher exact p-value of a, b, c, d, alternative: odds ratio > 1 (empty when a margin is 0)",
    "p_two_sided": "two-sided Fisher exact p-value of a, b, c, d (scipy's convention; empty when a margin is 0)",
    "vdg_plus_rate_sensitive_pct": "100 * a / (a + b): VDG = +1 among the sensitive (the same in both tests; "
    "empty when no question is sensitive)",
    "vdg_plus_rate_base_pct": "100 * c / (c + d): VDG = +1 among the non-sensitive questions right at orig "
    "(empty when there are none)",
    "a_unconditioned": "the paper's test over all n questions: sensitive and VDG = +1 (equals a)",
    "b_unconditioned": "sensitive and VDG <= 0 over all n questions (equals b)",
    "c_unconditioned": "not sensitive and VDG = +1 over all n questions (equals c)",
    "d_unconditioned": "not sensitive and VDG <= 0 over all n questions: d plus every question wrong at orig",
    "odds_ratio_unconditioned": "a * d_unconditioned / (b * c): the paper's odds ratio, inflated by construction "
    "(both events need a right orig answer); inf when b*c = 0, empty when a margin is 0",
    "p_greater_unconditioned": "one-sided Fisher exact p-value of the unconditioned table (the paper's p)",
    "p_two_sided_unconditioned": "two-sided Fisher exact p-value of the unconditioned table",
    "vdg_plus_rate_base_pct_unconditioned": "100 * c / (c + d_unconditioned): VDG = +1 among every "
    "non-sensitive question (the paper's base rate)",
}

VDG_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "levels": "the CRF levels whose flips are summed, joined by '>'",
    "question_rule": "the question sets: the flips' (crf_flips) and the VDG's (vdg table)",
    "min_stratum": "fewest questions a task type needs (in both tables) to enter the correlations",
    "n_task_types": "task types that entered: a flip count and a VDG, each on at least min_stratum questions",
    "too_small": "task types left out for fewer than min_stratum questions, as 'type (n=k)' joined by '; '",
    "flip_spearman": "Spearman correlation over task types of the flip count (C->I + I->C summed over the "
    "levels) and the task type's VDG",
    "flip_p": "two-sided p-value of flip_spearman (scipy.stats.spearmanr)",
    "flip_rate_spearman": "Spearman correlation of the flip rate (flips / (n * levels)) and the VDG",
    "flip_rate_p": "two-sided p-value of flip_rate_spearman",
    "reason": "why the correlations are empty (too few task types, or a constant side); empty when computed",
    "missing_policy": "exclude or incorrect (the flips' common set and the VDG's question set)",
}

#: The ``question_rule`` of ``crf_stability``: no missing policy applies (an error is a prediction value).
STABILITY_RULE = "every question; an error or unparsed answer is a prediction value"


def crf_levels(conditions: Iterable[str]) -> list[tuple[int, str]]:
    """(N, name) of every ``crf<N>`` condition among ``conditions``, ordered by N.

    Raises ValueError when two names give the same N (``crf18`` and ``crf018``).
    """
    levels: dict[int, str] = {}
    for name in sorted(set(conditions)):
        match = _CRF_NAME.match(str(name))
        if not match:
            continue
        level = int(match.group(1))
        if level in levels:
            raise ValueError(
                f"conditions {levels[level]!r} and {name!r} are both CRF {level}; rename one so each level is unique"
            )
        levels[level] = str(name)
    return sorted(levels.items())


@dataclass(frozen=True)
class _Block:
    """One (model, benchmark): per-question arrays for orig, its CRF levels and black (when run).

    ``correct[c]`` is False for an error row, as ``_paired.paired`` scores it; ``error[c]`` marks
    rows with no answer; ``pred[c]`` codes the prediction (a letter's code, ``-2`` for an error,
    ``-3`` for an unparsed answer), so equal codes mean identical predictions. ``question`` holds
    question codes shared by every block of the frame (one id, one code).
    """

    model: str
    benchmark: str
    names: list[str]
    has_black: bool
    question: np.ndarray
    task: np.ndarray
    task_names: np.ndarray
    correct: dict[str, np.ndarray]
    error: dict[str, np.ndarray]
    unparsed: dict[str, np.ndarray]
    pred: dict[str, np.ndarray]

    def excluded(self, conditions: list[str], missing: str) -> np.ndarray:
        """Questions dropped from every arm: an error in some condition, under ``missing="exclude"``."""
        out = np.zeros(len(self.task), dtype=bool)
        if missing == "exclude":
            for condition in conditions:
                out |= self.error[condition]
        return out


def _codes(column: pd.Series, sort: bool = False) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(column, sort=sort)
    return codes, np.asarray(uniques, dtype=object)


def _position(values: np.ndarray, value: str) -> int:
    """Index of ``value`` in ``values``, or -2 (matches no code) when absent."""
    hits = np.flatnonzero(values == value)
    return int(hits[0]) if len(hits) else -2


@memo_by_frame
def _blocks(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> list[_Block]:
    """``_each_block`` as a list, built once per frame for the CRF tables (``options`` unused)."""
    return list(_each_block(frame))


def _each_block(frame: pd.DataFrame) -> Iterator[_Block]:
    """Each (model, benchmark) with orig and >= 1 CRF level, in sorted order, built in one vectorized pass.

    Raises ValueError when a (condition, question) has two rows, or when a question lacks a row
    for a condition its model has, naming the model, benchmark, condition and question.
    """
    cond_codes, cond_names = _codes(frame["condition"])
    levels = [name for _, name in crf_levels(cond_names)]
    relevant = [ORIG, BLACK, *levels]
    if ORIG not in set(cond_names) or not levels:
        return
    lookup = np.array([relevant.index(c) if c in relevant else -1 for c in cond_names], dtype=np.int64)
    cond = lookup[cond_codes] if len(cond_codes) else cond_codes
    rows = np.flatnonzero(cond >= 0)
    cond = cond[rows]
    model_codes, models = _codes(frame["model"], sort=True)
    bench_codes, benchmarks = _codes(frame["benchmark"], sort=True)
    question_codes, questions = _codes(frame["question_id"])
    task_codes, task_names = _codes(frame["task_type"], sort=True)
    # A graded answer has no letter: its score stands for its prediction (two different scores are two answers).
    graded = graded_rows(frame)
    shown = frame["pred"].astype(object).where(~graded, "score " + frame["score"].astype(str)) if graded.any() else None
    pred_codes, _ = _codes(frame["pred"] if shown is None else shown)
    status_codes, statuses = _codes(frame["status"])
    status = status_codes[rows]
    is_error, is_unparsed = (status == _position(statuses, s) for s in ("error", "unparsed"))
    correct = frame["correct"].to_numpy(dtype=bool, na_value=False)[rows]
    pred = np.where(is_error, -2, np.where(is_unparsed & (pred_codes[rows] < 0), -3, pred_codes[rows]))
    group = model_codes[rows].astype(np.int64) * len(benchmarks) + bench_codes[rows]
    keys, inverse = np.unique(group * max(len(questions), 1) + question_codes[rows], return_inverse=True)
    n_keys, n_cond = len(keys), len(relevant)
    flat = inverse * n_cond + cond
    count = np.bincount(flat, minlength=n_keys * n_cond).reshape(n_keys, n_cond)
    if (count > 1).any():
        key, c = np.argwhere(count > 1)[0]
        _raise_row(frame, rows[np.flatnonzero(flat == key * n_cond + c)[0]], "has more than one row for question")
    matrices = {}
    for name, values in (("correct", correct), ("error", is_error), ("unparsed", is_unparsed)):
        matrices[name] = np.zeros((n_keys, n_cond), dtype=bool)
        matrices[name][inverse, cond] = values
    pred_matrix = np.full((n_keys, n_cond), -1, dtype=np.int64)
    pred_matrix[inverse, cond] = pred
    task = np.empty(n_keys, dtype=np.int64)
    task[inverse] = task_codes[rows]
    question = np.empty(n_keys, dtype=np.int64)
    question[inverse] = question_codes[rows]
    key_group = keys // max(len(questions), 1)
    starts = np.flatnonzero(np.r_[True, key_group[1:] != key_group[:-1]]) if n_keys else np.array([], dtype=int)
    for lo, hi in zip(starts, np.r_[starts[1:], n_keys], strict=True):
        model = str(models[key_group[lo] // len(benchmarks)])
        benchmark = str(benchmarks[key_group[lo] % len(benchmarks)])
        present = count[lo:hi] == 1
        has = present.any(axis=0)
        lacking = has & ~present.all(axis=0)
        if lacking.any():
            c = int(np.flatnonzero(lacking)[0])
            missing = np.flatnonzero(~present[:, c])
            raise ValueError(
                f"model {model!r}, benchmark {benchmark!r}: condition {relevant[c]!r} has no row for question "
                f"{questions[question[lo + missing[0]]]!r} ({len(missing)} questions lack it); every condition "
                "needs every question"
            )
        names = [name for i, name in enumerate(relevant) if i >= 2 and has[i]]
        if not has[0] or not names:
            continue
        columns = {name: i for i, name in enumerate(relevant) if has[i]}
        yield _Block(
            model=model,
            benchmark=benchmark,
            names=names,
            has_black=bool(has[1]),
            question=question[lo:hi],
            task=task[lo:hi],
            task_names=task_names,
            correct={c: matrices["correct"][lo:hi, i] for c, i in columns.items()},
            error={c: matrices["error"][lo:hi, i] for c, i in columns.items()},
            unparsed={c: matrices["unparsed"][lo:hi, i] for c, i in columns.items()},
            pred={c: pred_matrix[lo:hi, i] for c, i in columns.items()},
        )


def _raise_row(frame: pd.DataFrame, row: int, what: str) -> None:
    rec = frame.iloc[row]
    raise ValueError(
        f"model {rec['model']!r}, benchmark {rec['benchmark']!r}: condition {rec['condition']!r} {what} "
        f"{rec['question_id']!r}; de-duplicate the frame (postprocess.reading.lmms_eval_logs.load_frame does)"
    )


def _compared(
    blocks: list[_Block], options: ReportSettings, *, black: bool, missing: str
) -> Iterator[tuple[_Block, list[str], np.ndarray, str]]:
    """Each block compared, its conditions, the questions dropped from every arm, and their ``question_rule``.

    The conditions are orig, black (when ``black``: the enrichment's set, blocks without black left out) and the
    block's CRF levels. Under ``options.question_set="shared"`` a question dropped for one block of a benchmark is
    dropped for every block of it, so the levels of a model and the models of a benchmark share one set.
    """
    chosen = [block for block in blocks if block.has_black or not black]

    def conditions(block: _Block) -> list[str]:
        return [ORIG, *([BLACK] if black else []), *block.names]

    if options.question_set == QUESTION_SET_PER_MODEL:
        for block in chosen:
            compared = conditions(block)
            rule = question_rule(compared, missing, QUESTION_SET_PER_MODEL)
            yield block, compared, block.excluded(compared, missing), rule
        return
    dropped: dict[str, np.ndarray] = {}
    levels: dict[str, set[str]] = {}
    for block in chosen:
        codes = block.question[block.excluded(conditions(block), missing)]
        dropped[block.benchmark] = np.union1d(dropped.get(block.benchmark, codes[:0]), codes)
        levels.setdefault(block.benchmark, set()).update(block.names)
    for block in chosen:
        every = [ORIG, *([BLACK] if black else []), *(name for _, name in crf_levels(levels[block.benchmark]))]
        excluded = np.isin(block.question, dropped[block.benchmark])
        yield block, conditions(block), excluded, question_rule(every, missing)


def _tally(block: _Block, excluded: np.ndarray, columns: dict[str, np.ndarray]) -> list[tuple[str, dict[str, int]]]:
    """Per task type (sorted), then Overall: n_error (excluded), n (the others), and each column's count over n."""
    size = len(block.task_names)
    kept = ~excluded
    counts = {
        "n_error": np.bincount(block.task[excluded], minlength=size),
        "n": np.bincount(block.task[kept], minlength=size),
        **{name: np.bincount(block.task[kept & values], minlength=size) for name, values in columns.items()},
    }
    present = np.flatnonzero(np.bincount(block.task, minlength=size))
    out = [(str(block.task_names[t]), {k: int(v[t]) for k, v in counts.items()}) for t in present]
    out.append((OVERALL, {k: int(v.sum()) for k, v in counts.items()}))
    return out


def crf_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Accuracy at orig and every CRF level per (model, benchmark, task type); columns as in ``COLUMNS``."""
    rows = []
    for block, conditions, excluded, rule in _compared(_blocks(frame), options, black=False, missing=options.missing):
        columns = {f"{kind}_{c}": getattr(block, kind)[c] for c in conditions for kind in ("correct", "unparsed")}
        for task_type, count in _tally(block, excluded, columns):
            n = count["n"]
            for condition in conditions:
                k = count[f"correct_{condition}"]
                ci = wilson(k, n, options.ci_level) if n >= max(options.min_stratum, 1) else None
                rows.append(
                    {
                        "model": block.model,
                        "benchmark": block.benchmark,
                        "task_type": task_type,
                        "condition": condition,
                        "crf": 0 if condition == ORIG else int(condition[3:]),
                        "levels": ">".join(conditions),
                        "n": n,
                        "n_error": count["n_error"],
                        "n_correct": k,
                        "acc": k / n if n else np.nan,
                        "ci_low": ci.low if ci else np.nan,
                        "ci_high": ci.high if ci else np.nan,
                        "too_small": n < options.min_stratum,
                        "delta": (k - count[f"correct_{ORIG}"]) / n if n else np.nan,
                        "n_unparsed": count[f"unparsed_{condition}"],
                        **conventions(COLUMNS, options, rule=rule, later=("scale",)),
                    }
                )
    if not rows:
        return empty(COLUMNS)
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table["scale"] = correct_scales(frame, table["benchmark"])
    return table


def flips_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Correctness flips between orig and each CRF level; columns as in ``FLIPS_COLUMNS``."""
    rows = []
    for block, conditions, excluded, rule in _compared(_blocks(frame), options, black=False, missing=options.missing):
        orig = block.correct[ORIG]
        columns = {"correct_orig": orig}
        for c in block.names:
            columns[f"c_to_i_{c}"] = orig & ~block.correct[c]
            columns[f"i_to_c_{c}"] = ~orig & block.correct[c]
        for task_type, count in _tally(block, excluded, columns):
            n = count["n"]
            for condition in block.names:
                c_to_i, i_to_c = count[f"c_to_i_{condition}"], count[f"i_to_c_{condition}"]
                right = count["correct_orig"]
                rows.append(
                    {
                        "model": block.model,
                        "benchmark": block.benchmark,
                        "task_type": task_type,
                        "condition": condition,
                        "crf": int(condition[3:]),
                        "levels": ">".join(conditions),
                        "n": n,
                        "n_error": count["n_error"],
                        "c_to_i": c_to_i,
                        "i_to_c": i_to_c,
                        "net": i_to_c - c_to_i,
                        "stable_pct": 100 * (n - c_to_i - i_to_c) / n if n else np.nan,
                        "acc_orig": right / n if n else np.nan,
                        "acc_level": (right - c_to_i + i_to_c) / n if n else np.nan,
                        **conventions(FLIPS_COLUMNS, options, rule=rule, later=("scale",)),
                    }
                )
    if not rows:
        return empty(FLIPS_COLUMNS)
    table = pd.DataFrame(rows, columns=list(FLIPS_COLUMNS))
    table["p"], table["test"] = mcnemar_p(table["c_to_i"], table["i_to_c"])
    table["scale"] = correct_scales(frame, table["benchmark"])
    return table


def stability_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Share of questions with one prediction at orig and every CRF level; columns as in ``STABILITY_COLUMNS``.

    A prediction is the parsed letter (a graded answer's: its score), or "error" / "unparsed" when there is none,
    so a question that fails at every level counts as stable. ``options`` is unused (no missing policy applies).
    """
    rows = []
    for block in _blocks(frame):
        conditions = [ORIG, *block.names]
        same = np.ones(len(block.task), dtype=bool)
        for condition in block.names:
            same &= block.pred[condition] == block.pred[ORIG]
        for task_type, count in _tally(block, np.zeros(len(block.task), dtype=bool), {"same": same}):
            n, k = count["n"], count["same"]
            rows.append(
                {
                    "model": block.model,
                    "benchmark": block.benchmark,
                    "task_type": task_type,
                    "levels": ">".join(conditions),
                    **conventions(STABILITY_COLUMNS, options, rule=STABILITY_RULE),
                    "n": n,
                    "n_identical": k,
                    "identical_pred_pct": 100 * k / n if n else np.nan,
                }
            )
    if not rows:
        return empty(STABILITY_COLUMNS)
    return pd.DataFrame(rows, columns=list(STABILITY_COLUMNS))


def _fisher_columns(a: int, b: int, c: int, d: int, suffix: str = "") -> dict[str, float]:
    """odds_ratio, p_greater and p_two_sided (with ``suffix``) of the table ((a, b), (c, d)); empty when a margin
    is 0 (the test is undefined)."""
    names = (f"odds_ratio{suffix}", f"p_greater{suffix}", f"p_two_sided{suffix}")
    if min(a + b, c + d, a + c, b + d) == 0:
        return dict.fromkeys(names, np.nan)
    test = fisher(a, b, c, d)
    return dict(zip(names, (test.odds_ratio, test.p_greater, test.p_two_sided), strict=True))


def enrichment_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Fisher test of VDG = +1 among compression-sensitive questions; columns as in ``ENRICHMENT_COLUMNS``.

    The test always runs on a complete set (``options.missing`` unused; see the module docstring). The headline
    test is on the questions right at orig; the ``*_unconditioned`` columns hold the paper's test on all of them.
    """
    rows = []
    for block, _, excluded, rule in _compared(_blocks(frame), options, black=True, missing="exclude"):
        strongest = block.names[-1]
        kept = ~excluded
        orig = block.correct[ORIG][kept]
        sensitive = orig & ~block.correct[strongest][kept]
        black_wrong = ~block.correct[BLACK][kept]
        # On orig-correct questions VDG = +1 is "wrong on black"; every other question has VDG <= 0.
        a = int((sensitive & black_wrong).sum())
        b = int((sensitive & ~black_wrong).sum())
        c = int((orig & ~sensitive & black_wrong).sum())
        d = int((orig & ~sensitive & ~black_wrong).sum())
        d_all = d + int((~orig).sum())
        rows.append(
            {
                "model": block.model,
                "benchmark": block.benchmark,
                "strongest": strongest,
                "levels": ">".join(block.names),
                **conventions(ENRICHMENT_COLUMNS, options, rule=rule),
                "n": int(kept.sum()),
                "n_error": int(excluded.sum()),
                "sensitive_definition": f"C->I: right at {ORIG}, wrong at {strongest}",
                "conditioned_on": f"right at {ORIG}",
                "n_orig_correct": a + b + c + d,
                "n_sensitive": a + b,
                "a": a,
                "b": b,
                "c": c,
                "d": d,
                **_fisher_columns(a, b, c, d),
                "vdg_plus_rate_sensitive_pct": 100 * a / (a + b) if a + b else np.nan,
                "vdg_plus_rate_base_pct": 100 * c / (c + d) if c + d else np.nan,
                "a_unconditioned": a,
                "b_unconditioned": b,
                "c_unconditioned": c,
                "d_unconditioned": d_all,
                **_fisher_columns(a, b, c, d_all, "_unconditioned"),
                "vdg_plus_rate_base_pct_unconditioned": 100 * c / (c + d_all) if c + d_all else np.nan,
            }
        )
    if not rows:
        return empty(ENRICHMENT_COLUMNS)
    return pd.DataFrame(rows, columns=list(ENRICHMENT_COLUMNS))


def crf_vdg_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Spearman correlation of task types' CRF flip counts with their VDG, per model; ``VDG_COLUMNS``.

    Task types with fewer than ``options.min_stratum`` questions in the flips or the VDG are left out (listed in
    ``too_small``). A correlation is empty when fewer than ``MIN_TASK_TYPES`` task types enter or either side is
    constant (``reason``).
    """
    flips = flips_table(frame, options)
    gaps = vdg_table(frame, options)
    if flips.empty or gaps.empty:
        return empty(VDG_COLUMNS)
    flips = flips[flips["task_type"] != OVERALL]
    gaps = gaps[(gaps["task_type"] != OVERALL) & (gaps["n"] > 0)]
    rows = []
    for (model, benchmark), group in flips.groupby(["model", "benchmark"], sort=True):
        levels = group["condition"].drop_duplicates().tolist()
        per_type = group.groupby("task_type", sort=True).agg(
            flips=("c_to_i", "sum"), back=("i_to_c", "sum"), n=("n", "first")
        )
        per_type["flips"] += per_type.pop("back")
        per_type = per_type[per_type["n"] > 0]
        mine = gaps[(gaps["model"] == model) & (gaps["benchmark"] == benchmark)].set_index("task_type")
        if mine.empty:  # no black for this model: no VDG
            continue
        shared = per_type.index.intersection(mine.index)
        size = np.minimum(per_type.loc[shared, "n"].to_numpy(), mine.loc[shared, "n"].to_numpy())
        entered = shared[size >= options.min_stratum]
        count = per_type.loc[entered, "flips"].to_numpy(dtype=np.float64)
        rate = count / (per_type.loc[entered, "n"].to_numpy(dtype=np.float64) * len(levels))
        v = mine.loc[entered, "vdg"].to_numpy(dtype=np.float64)
        enough = len(entered) >= MIN_TASK_TYPES
        rho_c, p_c = spearman(count, v) if enough else (np.nan, np.nan)
        rho_r, p_r = spearman(rate, v) if enough else (np.nan, np.nan)
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "levels": ">".join(sorted(levels, key=lambda c: int(c[3:]))),
                "min_stratum": options.min_stratum,
                "n_task_types": len(entered),
                "too_small": too_small_note(dict(zip(shared, size, strict=True)), options.min_stratum),
                "flip_spearman": rho_c,
                "flip_p": p_c,
                "flip_rate_spearman": rho_r,
                "flip_rate_p": p_r,
                "reason": correlation_reason(len(entered), options.min_stratum, rho_c, rho_r),
                **conventions(
                    VDG_COLUMNS,
                    options,
                    rule=f"flips: {group['question_rule'].iloc[0]}; VDG: {mine['question_rule'].iloc[0]}",
                ),
            }
        )
    if not rows:
        return empty(VDG_COLUMNS)
    return pd.DataFrame(rows, columns=list(VDG_COLUMNS))


def _crf_needs(*anchors: str):
    def needs(present: frozenset[str]) -> str | None:
        absent = [c for c in anchors if c not in present]
        if not any(_CRF_NAME.match(c) for c in present):
            absent.append("a CRF level (crf<N>)")
        return f"{' and '.join(absent)} not run" if absent else None

    return needs


ANALYSES = (
    Analysis(
        "crf",
        "Accuracy at orig and each CRF compression level per task type, with Wilson CIs and the change from orig.",
        COLUMNS,
        crf_table,
        needs=_crf_needs(ORIG),
        shares=(_blocks,),
    ),
    Analysis(
        "crf_flips",
        "Questions whose correctness flips between orig and each CRF level (C->I, I->C, net, stable share), the "
        "accuracies on those questions and McNemar's paired test of the change.",
        FLIPS_COLUMNS,
        flips_table,
        needs=_crf_needs(ORIG),
        shares=(_blocks,),
    ),
    Analysis(
        "crf_stability",
        "Share of questions whose prediction is identical at orig and every CRF level (errors count as a value).",
        STABILITY_COLUMNS,
        stability_table,
        needs=_crf_needs(ORIG),
        shares=(_blocks,),
    ),
    Analysis(
        "crf_enrichment",
        "Fisher exact test, among questions right at orig: are compression-sensitive (C->I) ones enriched for "
        "VDG = +1? (the paper's test over all questions beside it, *_unconditioned)",
        ENRICHMENT_COLUMNS,
        enrichment_table,
        needs=_crf_needs(ORIG, BLACK),
        shares=(_blocks,),
    ),
    Analysis(
        "crf_vdg",
        "Per model: Spearman correlation over task types (>= min_stratum questions, at least 5) between CRF "
        "answer flips and VDG.",
        VDG_COLUMNS,
        crf_vdg_table,
        needs=_crf_needs(ORIG, BLACK),
        shares=(_blocks, per_question, vdg_table, question_set_cache),
    ),
)
