"""Answer-letter bias: which letters a model picks, against the answer key and against uniform.

Without the video (``black``) a model still beats chance when it favours the letters the answer
key favours. ``expected_from_letters`` is what a question-blind answerer with the model's letter
counts would score (its reply to one question given to another with as many options);
``letter_share`` is the part of the above-chance accuracy that this alone accounts for.

Conventions (each named in a column):

- Each question has its own option count (``postprocess.reading.answer_options``: an ``--options-file``, else the
  record's ``n_options`` or ``options``, else the benchmark's declared count, else the largest letter
  of its task type's key and replies; ``n_options_rule`` names the rules a row's counts came from). A
  letter beyond it is not an answer (``postprocess.reading.lmms_eval_logs`` makes it ``unparsed``).
- Chance and the chi-square null are per question: a question-blind answerer picks uniformly among
  *that question's* options, so letter L is expected ``sum over questions with more than L options
  of 1 / n_options`` times. When every question has k options this is the usual uniform-over-k test.
- Question set per (model, benchmark, condition): the answered questions (``ok`` and
  ``unparsed``), plus the ``error`` questions under ``missing=incorrect`` (scored wrong, no letter).
  The ground-truth counts are over that set; the predicted counts over its answers with a letter.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import cell_index, condition_sort_key
from postprocess.analyses.base import Analysis, ReportSettings, empty, letter_rows
from postprocess.analyses.vdg import conventions
from postprocess.reading.answer_options import RULES, option_counts, rule_codes, rules_label
from postprocess.stats import chi2_counts
from vdg_tasks.vocabulary.parse import LETTERS

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "condition name",
    "n_options": "options per question (postprocess.reading.answer_options: the options file, else the record's, else "
    "the "
    "benchmark's declared count, else inferred per task type); the largest among the n questions when they differ",
    "n_options_rule": "the rules that gave the n questions their option counts (in precedence order, joined by "
    "'; '): options file, record, benchmark declares, inferred per task type",
    "n": "questions counted: answered (ok + unparsed), plus errors under missing_policy=incorrect",
    "n_letter": "answers with a readable letter (the predicted-letter counts sum to this)",
    "n_unparsed": "answers with no readable letter (in n, scored wrong, no letter)",
    "n_error": "questions with no answer (excluded under exclude; in n, scored wrong, under incorrect)",
    **{f"pred_{x}": f"answers with letter {x}" for x in LETTERS},
    **{f"gt_{x}": f"questions among the n whose correct letter is {x}" for x in LETTERS},
    "top_pred": "most frequent predicted letter (first in letter order on a tie; empty when n_letter = 0)",
    "top_pred_share": "its count / n_letter",
    "chi2_pred": "Pearson chi-square of the predicted-letter counts against uniform guessing among each answered "
    "question's own options (uniform over the n_options letters when all questions have that many)",
    "p_pred": "p-value of chi2_pred (df = n_options - 1; fewer when some letter is an option of no answered question)",
    "chi2_gt": "Pearson chi-square of the ground-truth letter counts against a key uniform over each question's own "
    "options",
    "p_gt": "p-value of chi2_gt (df = n_options - 1)",
    "df": "degrees of freedom of both chi-square tests: n_options - 1",
    "accuracy": "correct answers / n",
    "chance": "accuracy of uniform guessing: the mean of 1 / (the question's options) over the n questions "
    "(1 / n_options when they all have n_options)",
    "expected_from_letters": "accuracy of a question-blind answerer with these letter counts, among questions "
    "of the same option count: sum over option counts k of (n_k / n) * sum over letters of (pred_k / n_k) * "
    "(gt_k / n_k); one option count: sum over letters of (pred / n) * (gt / n); unparsed answers (and errors "
    "under incorrect) never match",
    "letter_share": "(expected_from_letters - chance) / (accuracy - chance): the share of the above-chance "
    "accuracy that letter alignment alone accounts for (meant for black; not clipped, so it can be "
    "negative or above 1); empty when accuracy <= chance",
    "missing_policy": "exclude or incorrect",
}


def _letter_index(values: pd.Series) -> np.ndarray:
    """Position of each value in LETTERS; -1 for a missing value or anything else."""
    codes, uniques = pd.factorize(values)
    lookup = np.array(
        [LETTERS.index(u) if isinstance(u, str) and len(u) == 1 and u in LETTERS else -1 for u in uniques] + [-1]
    )
    return lookup[codes]


def _counts_by(group: np.ndarray, value: np.ndarray, n_groups: int, n_values: int) -> np.ndarray:
    """[g, v]: rows of group g holding value v (values in 0..n_values-1)."""
    return np.bincount(group * n_values + value, minlength=n_groups * n_values).reshape(n_groups, n_values)


def _largest(counts: np.ndarray) -> np.ndarray:
    """Per row of ``_counts_by`` counts, the largest value counted (0 when none)."""
    seen = counts > 0
    return np.where(seen.any(axis=1), counts.shape[1] - 1 - np.argmax(seen[:, ::-1], axis=1), 0)


def _raise_at(frame: pd.DataFrame, mask: np.ndarray, message: str) -> None:
    if mask.any():
        row = frame.iloc[int(np.flatnonzero(mask)[0])]
        raise ValueError(
            f"model {row['model']!r}, condition {row['condition']!r}, question {row['question_id']!r}: "
            + message.format(answer=row["answer"], pred=row["pred"])
        )


def letters_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Predicted and ground-truth letter counts per (model, benchmark, condition), with bias tests."""
    frame = letter_rows(frame)  # a graded answer has no letter and no options
    if frame.empty:
        return empty(COLUMNS)
    status = frame["status"].to_numpy(dtype=object)
    has_pred = status == "ok"
    is_error = status == "error"
    gt = _letter_index(frame["answer"])
    pred = _letter_index(frame["pred"])
    _raise_at(frame, gt < 0, f"answer {{answer!r}} is not one of the option letters {', '.join(LETTERS)}")
    _raise_at(frame, has_pred & frame["pred"].isna().to_numpy(), "status is 'ok' but pred holds no letter")
    _raise_at(frame, has_pred & (pred < 0), f"pred {{pred!r}} is not one of the option letters {', '.join(LETTERS)}")
    options_of = option_counts(frame).to_numpy(dtype=np.int64)
    _raise_at(frame, gt >= options_of, "answer {answer!r} is beyond the question's option count")
    _raise_at(
        frame,
        has_pred & (pred >= options_of),
        "pred {pred!r} is beyond the question's option count (postprocess.reading.lmms_eval_logs.load_frame makes it "
        "unparsed)",
    )
    pred = np.where(has_pred, pred, -1)
    rules = rule_codes(frame).astype(np.int64)

    group, key_table = cell_index(frame)
    groups = list(key_table.itertuples(index=False, name=None))
    n_groups = len(groups)

    counted = ~is_error if options.missing == "exclude" else np.ones(len(frame), dtype=bool)
    hit = frame["correct"].fillna(False).to_numpy(dtype=bool) & counted

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(group[mask], minlength=n_groups)

    n = count(counted)
    n_letter = count(has_pred)
    n_unparsed = count(status == "unparsed")
    n_error = count(is_error)
    n_hit = count(hit)
    pred_counts = _counts_by(group[has_pred], pred[has_pred], n_groups, len(LETTERS))
    gt_counts = _counts_by(group[counted], gt[counted], n_groups, len(LETTERS))
    # Expected letter counts of uniform guessing among each question's own options: per group, its questions
    # with k options (columns k) times 1/k for each of the first k letters.
    sizes = options_of.max(initial=0) + 1
    guess = (np.arange(len(LETTERS))[None, :] < np.arange(sizes)[:, None]) / np.maximum(np.arange(sizes), 1)[:, None]
    pred_by_size = _counts_by(group[has_pred], options_of[has_pred], n_groups, sizes)
    counted_by_size = _counts_by(group[counted], options_of[counted], n_groups, sizes)
    pred_expected = pred_by_size @ guess
    gt_expected = counted_by_size @ guess
    top_counted = _largest(counted_by_size)
    top_any = _largest(_counts_by(group, options_of, n_groups, sizes))
    inverse_options = np.bincount(group[counted], weights=1.0 / options_of[counted], minlength=n_groups)
    # A question-blind answerer with the model's letter counts among questions of the same option count: question
    # i's reply goes to question j of the same size, every such (i, j) equally likely (a uniform guesser's excess
    # over chance is then 0 whatever the mix of option counts).
    cell = group * sizes + options_of
    pred_by_cell = _counts_by(cell[has_pred], pred[has_pred], n_groups * sizes, len(LETTERS))
    gt_by_cell = _counts_by(cell[counted], gt[counted], n_groups * sizes, len(LETTERS))
    matches = np.einsum("cl,cl->c", pred_by_cell, gt_by_cell).reshape(n_groups, sizes)
    blind_hits = (matches / np.maximum(counted_by_size, 1)).sum(axis=1)
    counted_rules = _counts_by(group[counted], rules[counted], n_groups, len(RULES))
    any_rules = _counts_by(group, rules, n_groups, len(RULES))

    rows = []
    for i, (model, benchmark, condition) in enumerate(groups):
        k = int(top_counted[i] or top_any[i])
        p, g = pred_counts[i], gt_counts[i]
        row: dict[str, object] = {
            "model": model,
            "benchmark": benchmark,
            "condition": condition,
            "n_options": k,
            "n_options_rule": rules_label(np.flatnonzero(counted_rules[i] if n[i] else any_rules[i])),
            "n": int(n[i]),
            "n_letter": int(n_letter[i]),
            "n_unparsed": int(n_unparsed[i]),
            "n_error": int(n_error[i]),
            **{f"pred_{x}": int(v) for x, v in zip(LETTERS, p, strict=True)},
            **{f"gt_{x}": int(v) for x, v in zip(LETTERS, g, strict=True)},
            "top_pred": LETTERS[int(np.argmax(p))] if n_letter[i] else "",
            "top_pred_share": p.max() / n_letter[i] if n_letter[i] else np.nan,
            "chi2_pred": np.nan,
            "p_pred": np.nan,
            "chi2_gt": np.nan,
            "p_gt": np.nan,
            "df": k - 1,
            "accuracy": n_hit[i] / n[i] if n[i] else np.nan,
            "chance": inverse_options[i] / n[i] if n[i] else np.nan,
            "expected_from_letters": blind_hits[i] / n[i] if n[i] else np.nan,
            "letter_share": np.nan,
            **conventions(COLUMNS, options),
        }
        if n_letter[i]:
            res = chi2_counts(p[:k], pred_expected[i, :k])
            row["chi2_pred"], row["p_pred"] = res.chi2, res.p
        if n[i]:
            res = chi2_counts(g[:k], gt_expected[i, :k])
            row["chi2_gt"], row["p_gt"] = res.chi2, res.p
            if row["accuracy"] > row["chance"]:
                row["letter_share"] = (row["expected_from_letters"] - row["chance"]) / (row["accuracy"] - row["chance"])
        rows.append(row)
    rows.sort(key=lambda r: (r["model"], r["benchmark"], condition_sort_key(str(r["condition"]))))
    return pd.DataFrame(rows, columns=list(COLUMNS))


ANALYSES = (
    Analysis(
        "letters",
        "Predicted and ground-truth answer letters per condition, bias against uniform, and how much of the "
        "above-chance accuracy letter alignment alone explains.",
        COLUMNS,
        letters_table,
        shares=(cell_index,),
    ),
)
