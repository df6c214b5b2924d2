"""Compression robustness: accuracy across H.264 CRF levels, answer flips, and the VDG enrichment test.

The CRF levels are the conditions named ``crf<N>`` (``vdg_tasks.conditions.CRF_LEVELS`` declares
18, 23, 28, 33, 38; any ``crf<N>`` present is accepted), ordered by N; ``orig`` is level 0 and the
largest N is the strongest compression. Five tables:

- ``crf``: accuracy at orig and every CRF level per task type, with a Wilson CI and the change
  from orig on the same questions.
- ``crf_flips``: answers that change correctness between orig and each CRF level (C->I, I->C).
- ``crf_stability``: share of questions whose prediction is the same at orig and every CRF level.
  It compares predictions, not correctness, across all levels at once, so it has its own table
  (one row per task type) rather than a value repeated on every level row of ``crf_flips``.
- ``crf_enrichment``: Fisher's exact test of whether compression-sensitive questions are more
  often visually grounded (VDG = +1: right on orig, wrong on black) than the others.
- ``crf_vdg``: per model, the Spearman correlation over task types between a task type's flip
  count summed over the CRF levels (C->I + I->C of every level, from ``crf_flips``) and its VDG
  (the ``vdg`` table's value: orig vs black on its own question set under the policy). Do the task
  types that need the video also break under compression? Also on the flip *rate* (flips / (n *
  levels)), since a raw count grows with the task type's size.

Question sets. ``crf`` and ``crf_flips`` compare orig and all CRF levels present on one common set
per (model, benchmark, task type): with ``missing="exclude"`` a question with an error at orig or
at any CRF level is dropped from every level (``n_error``); with ``"incorrect"`` errors are scored
wrong and all questions count. On that common set ``net / n`` of a flips row equals ``delta`` of
the matching ``crf`` row. ``crf_stability`` needs no policy: a prediction is the parsed letter, or
"error" / "unparsed" when there is none (two different values), so a question that fails at every
level is stable. ``crf_enrichment`` always uses the *complete* set
(no error at orig, black or any CRF level), whatever the policy, as the paper's section 4.4 does.

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

from postprocess.analyses._paired import OVERALL
from postprocess.analyses.base import Analysis, Options, empty, memo_by_frame
from postprocess.analyses.vdg import per_question, vdg_table
from postprocess.stats import fisher, spearman, wilson

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
    "n": "questions compared: answered at orig and every CRF level (all questions under missing_policy=incorrect)",
    "n_error": "questions excluded because orig or some CRF level has no answer",
    "n_correct": "questions answered right at this level, of the n",
    "acc": "n_correct / n",
    "ci_low": "lower bound of the Wilson score interval of acc",
    "ci_high": "upper bound of the Wilson score interval of acc",
    "delta": "acc - acc at orig on the same n questions (0 for orig)",
    "n_unparsed": "answers at this level, of the n, with no readable letter (scored wrong)",
    "ci_level": "confidence level of the CI",
    "missing_policy": "exclude (errors dropped from every level) or incorrect (errors scored wrong)",
}

FLIPS_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "condition": "the CRF level compared with orig (crf<N>)",
    "crf": "the CRF value N",
    "levels": "the conditions of the common question set, joined by '>'",
    "n": "questions compared (the same set as the crf table's rows)",
    "n_error": "questions excluded because orig or some CRF level has no answer",
    "c_to_i": "right at orig, wrong at this level",
    "i_to_c": "wrong at orig, right at this level",
    "net": "i_to_c - c_to_i (equals n * delta of the crf table)",
    "stable_pct": "100 * share of the n questions with the same correctness at orig and this level",
    "missing_policy": "exclude or incorrect",
}

STABILITY_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "levels": "the conditions compared, joined by '>' (orig and every CRF level present)",
    "n": "questions (all of them: no missing policy applies)",
    "n_identical": "questions with the same prediction at every level; an error or unparsed answer is a value",
    "identical_pred_pct": "100 * n_identical / n",
}

ENRICHMENT_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "strongest": "the strongest CRF level present (largest N)",
    "levels": "the CRF levels whose errors define the complete set, joined by '>'",
    "question_set": "which questions are tested (always the complete set, whatever missing_policy)",
    "n": "questions in the complete set: no error at orig, black or any CRF level",
    "n_error": "questions left out because some of those conditions has no answer",
    "sensitive_definition": "which questions count as compression-sensitive",
    "n_sensitive": "sensitive questions (a + b)",
    "a": "sensitive and VDG = +1 (right on orig, wrong on black)",
    "b": "sensitive and VDG <= 0",
    "c": "not sensitive and VDG = +1",
    "d": "not sensitive and VDG <= 0",
    "odds_ratio": "sample odds ratio a*d / (b*c) (inf when b*c = 0; empty when a margin is 0)",
    "p_greater": "one-sided Fisher exact p-value, alternative: odds ratio > 1 (empty when a margin is 0)",
    "p_two_sided": "two-sided Fisher exact p-value (scipy's convention; empty when a margin is 0)",
    "vdg_plus_rate_sensitive_pct": "100 * a / (a + b) (empty when no question is sensitive)",
    "vdg_plus_rate_base_pct": "100 * c / (c + d), among the non-sensitive (empty when all are sensitive)",
}

VDG_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "levels": "the CRF levels whose flips are summed, joined by '>'",
    "n_task_types": "task types with both a flip count and a VDG",
    "flip_spearman": "Spearman correlation over task types of the flip count (C->I + I->C summed over the "
    "levels) and the task type's VDG",
    "flip_p": "two-sided p-value of flip_spearman (scipy.stats.spearmanr)",
    "flip_rate_spearman": "Spearman correlation of the flip rate (flips / (n * levels)) and the VDG",
    "flip_rate_p": "two-sided p-value of flip_rate_spearman",
    "missing_policy": "exclude or incorrect (the flips' common set and the VDG's question set)",
}

COMPLETE_SET = "complete: no error at orig, black or any CRF level"


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
    ``-3`` for an unparsed answer), so equal codes mean identical predictions.
    """

    model: str
    benchmark: str
    names: list[str]
    has_black: bool
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
def _blocks(frame: pd.DataFrame, options: Options = Options()) -> list[_Block]:
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
    pred_codes, _ = _codes(frame["pred"])
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
        f"{rec['question_id']!r}; de-duplicate the frame (postprocess.io.load_frame does)"
    )


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


def crf_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Accuracy at orig and every CRF level per (model, benchmark, task type); columns as in ``COLUMNS``."""
    rows = []
    for block in _blocks(frame):
        conditions = [ORIG, *block.names]
        excluded = block.excluded(conditions, options.missing)
        columns = {f"{kind}_{c}": getattr(block, kind)[c] for c in conditions for kind in ("correct", "unparsed")}
        for task_type, count in _tally(block, excluded, columns):
            n = count["n"]
            for condition in conditions:
                k = count[f"correct_{condition}"]
                ci = wilson(k, n, options.ci_level) if n else None
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
                        "delta": (k - count[f"correct_{ORIG}"]) / n if n else np.nan,
                        "n_unparsed": count[f"unparsed_{condition}"],
                        "ci_level": options.ci_level,
                        "missing_policy": options.missing,
                    }
                )
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def flips_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Correctness flips between orig and each CRF level; columns as in ``FLIPS_COLUMNS``."""
    rows = []
    for block in _blocks(frame):
        conditions = [ORIG, *block.names]
        excluded = block.excluded(conditions, options.missing)
        orig = block.correct[ORIG]
        columns = {}
        for c in block.names:
            columns[f"c_to_i_{c}"] = orig & ~block.correct[c]
            columns[f"i_to_c_{c}"] = ~orig & block.correct[c]
        for task_type, count in _tally(block, excluded, columns):
            n = count["n"]
            for condition in block.names:
                c_to_i, i_to_c = count[f"c_to_i_{condition}"], count[f"i_to_c_{condition}"]
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
                        "missing_policy": options.missing,
                    }
                )
    if not rows:
        return empty(FLIPS_COLUMNS)
    return pd.DataFrame(rows, columns=list(FLIPS_COLUMNS))


def stability_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Share of questions with one prediction at orig and every CRF level; columns as in ``STABILITY_COLUMNS``.

    A prediction is the parsed letter, or "error" / "unparsed" when there is none, so a question
    that fails at every level counts as stable. ``options`` is unused (no missing policy applies).
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
                    "n": n,
                    "n_identical": k,
                    "identical_pred_pct": 100 * k / n if n else np.nan,
                }
            )
    if not rows:
        return empty(STABILITY_COLUMNS)
    return pd.DataFrame(rows, columns=list(STABILITY_COLUMNS))


def enrichment_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Fisher test of VDG = +1 among compression-sensitive questions; columns as in ``ENRICHMENT_COLUMNS``.

    ``options`` is unused: the test always runs on the complete set (see the module docstring).
    """
    rows = []
    for block in _blocks(frame):
        if not block.has_black:
            continue
        strongest = block.names[-1]
        excluded = block.excluded([ORIG, BLACK, *block.names], "exclude")
        kept = ~excluded
        orig = block.correct[ORIG][kept]
        sensitive = orig & ~block.correct[strongest][kept]
        vdg_plus = orig & ~block.correct[BLACK][kept]
        a = int((sensitive & vdg_plus).sum())
        b = int((sensitive & ~vdg_plus).sum())
        c = int((~sensitive & vdg_plus).sum())
        d = int((~sensitive & ~vdg_plus).sum())
        row = {
            "model": block.model,
            "benchmark": block.benchmark,
            "strongest": strongest,
            "levels": ">".join(block.names),
            "question_set": COMPLETE_SET,
            "n": int(kept.sum()),
            "n_error": int(excluded.sum()),
            "sensitive_definition": f"C->I: right at {ORIG}, wrong at {strongest}",
            "n_sensitive": a + b,
            "a": a,
            "b": b,
            "c": c,
            "d": d,
            "odds_ratio": np.nan,
            "p_greater": np.nan,
            "p_two_sided": np.nan,
            "vdg_plus_rate_sensitive_pct": 100 * a / (a + b) if a + b else np.nan,
            "vdg_plus_rate_base_pct": 100 * c / (c + d) if c + d else np.nan,
        }
        if min(a + b, c + d, a + c, b + d) > 0:
            test = fisher(a, b, c, d)
            row["odds_ratio"], row["p_greater"], row["p_two_sided"] = test.odds_ratio, test.p_greater, test.p_two_sided
        rows.append(row)
    if not rows:
        return empty(ENRICHMENT_COLUMNS)
    return pd.DataFrame(rows, columns=list(ENRICHMENT_COLUMNS))


def crf_vdg_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Spearman correlation of task types' CRF flip counts with their VDG, per model; ``VDG_COLUMNS``.

    A correlation is empty when fewer than 3 task types are compared or either side is constant.
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
        vdg = gaps[(gaps["model"] == model) & (gaps["benchmark"] == benchmark)].set_index("task_type")["vdg"]
        if vdg.empty:  # no black for this model: no VDG
            continue
        shared = per_type.index.intersection(vdg.index)
        count = per_type.loc[shared, "flips"].to_numpy(dtype=np.float64)
        rate = count / (per_type.loc[shared, "n"].to_numpy(dtype=np.float64) * len(levels))
        v = vdg.loc[shared].to_numpy(dtype=np.float64)
        rho_c, p_c = spearman(count, v)
        rho_r, p_r = spearman(rate, v)
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "levels": ">".join(sorted(levels, key=lambda c: int(c[3:]))),
                "n_task_types": len(shared),
                "flip_spearman": rho_c,
                "flip_p": p_c,
                "flip_rate_spearman": rho_r,
                "flip_rate_p": p_r,
                "missing_policy": options.missing,
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
        "Questions whose correctness flips between orig and each CRF level (C->I, I->C, net, stable share).",
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
        "Fisher exact test: are compression-sensitive (C->I) questions enriched for VDG = +1?",
        ENRICHMENT_COLUMNS,
        enrichment_table,
        needs=_crf_needs(ORIG, BLACK),
        shares=(_blocks,),
    ),
    Analysis(
        "crf_vdg",
        "Per model: Spearman correlation over task types between CRF answer flips and VDG.",
        VDG_COLUMNS,
        crf_vdg_table,
        needs=_crf_needs(ORIG, BLACK),
        shares=(_blocks, per_question, vdg_table),
    ),
)
