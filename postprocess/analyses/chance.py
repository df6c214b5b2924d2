"""Is a model's accuracy above chance, per condition and task type? Above all: without the video?

One table, ``above_chance``: one row per (model, benchmark, condition, task type) and Overall.

- Question set per (model, benchmark, condition): the answered questions (``ok`` and ``unparsed``,
  an unparsed answer scored wrong), plus the ``error`` questions under ``missing=incorrect``
  (scored wrong), as the ``letters`` table counts them.
- Chance is per question: 1 / its option count (``postprocess.reading.answer_options``: an ``--options-file``, the
  record's own, the benchmark's declared count, else inferred per task type; ``n_options_rule`` names
  which rules gave the row's counts, so a reader knows when chance rests on an inference). Under the
  null of guessing, the number right is a sum of independent Bernoulli(1 / k_i): a Poisson-binomial
  with mean ``sum 1 / k_i`` (``expected_correct``).
- Test: one-sided (accuracy > chance), exact. The null distribution is the convolution of one
  binomial per distinct option count (``Binomial(n_k, 1 / k)``), so the p-value is the exact
  Poisson-binomial tail P(X >= n_correct). When every question has the same k it is the plain
  binomial tail and equals ``scipy.stats.binomtest(n_correct, n, 1 / k, alternative="greater")``.
- Strata below ``ReportSettings.min_stratum`` questions keep n, acc and chance but get no interval and no
  test (``too_small``) and stay out of the Holm family.
- Holm family: every tested row of one (model, benchmark, condition): its task types and its Overall
  row, Overall counted once when it holds the same questions as the one task type (a benchmark with
  one task type). ``above_chance`` is ``p_holm < alpha``. ``above_chance_black`` repeats, on every row of a (model,
  benchmark, task type), whether that task type is above chance under ``black`` (no video): the
  task types a model answers from the question and options alone.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import OVERALL, cell_index, condition_sort_key
from postprocess.analyses.base import Analysis, ReportSettings, empty, letter_rows
from postprocess.analyses.vdg import conventions
from postprocess.reading.answer_options import option_counts, rule_codes, rules_label
from postprocess.stats import binom_pmf, binom_sf, holm, wilson

BLACK = "black"
EXACT_BINOMIAL = "exact binomial (one-sided, greater)"
EXACT_POISSON_BINOMIAL = "exact Poisson-binomial (one-sided, greater)"

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "condition name",
    "task_type": "task type, or Overall",
    "n": "questions counted: answered (ok + unparsed), plus errors under missing_policy=incorrect",
    "n_correct": "questions answered right",
    "acc": "n_correct / n",
    "ci_low": "lower bound of the Wilson score interval of acc (empty when too_small)",
    "ci_high": "upper bound of the Wilson score interval of acc (empty when too_small)",
    "n_options": "options per question: k when all n questions have k, else 'min-max'",
    "n_options_rule": "the rules that gave the n questions their option counts (postprocess.reading.answer_options, "
    "in precedence "
    "order, joined by '; '): options file, record, benchmark declares, inferred per task type",
    "expected_correct": "questions a uniform guesser gets right on average: the sum of 1 / (the question's options)",
    "chance": "expected_correct / n",
    "p_chance": "one-sided exact p-value of n_correct under guessing: P(X >= n_correct), X the Poisson-binomial "
    "sum of Bernoulli(1 / options) over the n questions (the binomial tail, as scipy.stats.binomtest with "
    "alternative='greater', when all have the same options); empty when too_small",
    "p_holm": "p_chance Holm-adjusted over its family: every tested row (task types and Overall) of the same "
    "model, benchmark and condition; an Overall holding the same questions as the one task type counts once",
    "n_family": "number of p-values in the Holm family",
    "above_chance": "p_holm < alpha",
    "above_chance_black": "the same model, benchmark and task type is above chance under black (no video); "
    "empty when black was not run",
    "too_small": "n is below min_stratum: descriptive values only, no interval and no test",
    "n_error": "questions with no answer (excluded under exclude; in n, scored wrong, under incorrect)",
    "test": "the exact test used: binomial (one option count) or Poisson-binomial (mixed counts)",
    "alpha": "significance level of above_chance",
    "ci_level": "confidence level of the CI",
    "missing_policy": "exclude or incorrect",
}


def poisson_binomial_sf(k: int, option_counts_: np.ndarray) -> tuple[float, str]:
    """(P(X >= k), test name) for X the number right of a uniform guesser on questions with these option counts.

    One option count: the binomial tail (scipy.stats.binom.sf). Several: the exact pmf, the
    convolution of one binomial pmf per distinct count, summed from k up.
    """
    counts = np.asarray(option_counts_, dtype=np.int64)
    n = counts.size
    if k <= 0:
        return 1.0, EXACT_BINOMIAL if np.unique(counts).size <= 1 else EXACT_POISSON_BINOMIAL
    values, sizes = np.unique(counts, return_counts=True)
    if values.size == 1:
        return float(binom_sf(k - 1, n, 1.0 / values[0])), EXACT_BINOMIAL
    pmf = np.ones(1)
    for value, size in zip(values, sizes, strict=True):
        pmf = np.convolve(pmf, binom_pmf(np.arange(size + 1), size, 1.0 / value))
    return float(min(pmf[k:].sum(), 1.0)), EXACT_POISSON_BINOMIAL


def _options_label(counts: np.ndarray) -> str:
    lo, hi = int(counts.min()), int(counts.max())
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _adjust_family(rows: list[dict], family: list[int], one_task_type: bool, alpha: float) -> None:
    """Holm over the tested rows of one (model, benchmark, condition), in place. With one task type its row
    and Overall hold the same questions: one p-value, entered once, its adjusted value given to both."""
    if not family:
        return
    entered = family[:-1] if one_task_type and len(family) == 2 else family
    adjusted = dict(zip(entered, holm([rows[i]["p_chance"] for i in entered]), strict=True))
    for i in family:
        p = float(adjusted.get(i, adjusted[entered[-1]]))
        rows[i]["p_holm"] = p
        rows[i]["n_family"] = len(entered)
        rows[i]["above_chance"] = bool(p < alpha)


def chance_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Accuracy against chance per (model, benchmark, condition, task type); columns as in ``COLUMNS``."""
    frame = letter_rows(frame)  # a graded answer has no letter and no options
    if frame.empty:
        return empty(COLUMNS)
    status = frame["status"].to_numpy(dtype=object)
    is_error = status == "error"
    counted = ~is_error if options.missing == "exclude" else np.ones(len(frame), dtype=bool)
    correct = frame["correct"].fillna(False).to_numpy(dtype=bool) & counted
    n_opts = option_counts(frame).to_numpy(dtype=np.int64)
    rules = rule_codes(frame)
    task_codes, task_names = pd.factorize(frame["task_type"], sort=True)  # sorted names: codes sort alike
    group, key_table = cell_index(frame)
    order = np.argsort(group, kind="stable")  # each group's rows, in frame order, without a mask per group
    bounds = np.searchsorted(group[order], np.arange(len(key_table) + 1))
    rows = []
    for g, (model, benchmark, condition) in enumerate(key_table.itertuples(index=False, name=None)):
        cell = order[bounds[g] : bounds[g + 1]]
        codes = task_codes[cell]
        parts = [(str(task_names[t]), cell[codes == t]) for t in np.unique(codes[codes >= 0])] + [(OVERALL, cell)]
        family = []
        for task_type, part in parts:
            used = part[counted[part]]
            n, k = len(used), int(correct[used].sum())
            row = {
                "model": model,
                "benchmark": benchmark,
                "condition": condition,
                "task_type": task_type,
                "n": n,
                "n_correct": k,
                "acc": k / n if n else np.nan,
                "ci_low": np.nan,
                "ci_high": np.nan,
                "n_options": "",
                "n_options_rule": "",
                "expected_correct": np.nan,
                "chance": np.nan,
                "p_chance": np.nan,
                "p_holm": np.nan,
                "n_family": 0,
                "above_chance": pd.NA,
                "above_chance_black": pd.NA,
                "too_small": n < options.min_stratum,
                "n_error": int(is_error[part].sum()),
                "test": "",
                "alpha": options.alpha,
                **conventions(COLUMNS, options),
            }
            if n:
                ks = n_opts[used]
                row["n_options"] = _options_label(ks)
                row["n_options_rule"] = rules_label(rules[used])
                row["expected_correct"] = float((1.0 / ks).sum())
                row["chance"] = row["expected_correct"] / n
            if n and not row["too_small"]:
                ci = wilson(k, n, options.ci_level)
                row["ci_low"], row["ci_high"] = ci.low, ci.high
                row["p_chance"], row["test"] = poisson_binomial_sf(k, ks)
                family.append(len(rows))
            rows.append(row)
        one_task_type = len(parts) == 2 and len(parts[0][1]) == len(cell)
        _adjust_family(rows, family, one_task_type=one_task_type, alpha=options.alpha)
    if not rows:
        return empty(COLUMNS)
    rows.sort(key=lambda row: (row["model"], row["benchmark"], condition_sort_key(str(row["condition"]))))
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    black = table[table["condition"] == BLACK].set_index(["model", "benchmark", "task_type"])["above_chance"]
    index = pd.MultiIndex.from_frame(table[["model", "benchmark", "task_type"]])
    table["above_chance_black"] = black.reindex(index).astype("boolean").to_numpy()
    table["above_chance"] = table["above_chance"].astype("boolean")
    return table


ANALYSES = (
    Analysis(
        "above_chance",
        "Accuracy against chance per condition and task type (exact one-sided test, chance from each question's "
        "option count, Holm-adjusted), and which task types are answered above chance without the video.",
        COLUMNS,
        chance_table,
        shares=(cell_index,),
    ),
)
