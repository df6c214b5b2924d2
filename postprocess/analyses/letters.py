"""Answer-letter bias: which letters a model picks, against the answer key and against uniform.

Without the video (``black``) a model still beats chance when it favours the letters the answer
key favours. ``expected_from_letters`` is what a question-blind answerer with the model's letter
counts would score; ``letter_share`` is the part of the above-chance accuracy that this alone
accounts for.

Conventions (each named in a column):

- ``n_options`` per benchmark: one more than the index of the highest letter seen in that
  benchmark's answer key or predictions (all models and conditions), so ``A..D`` gives 4. A
  benchmark whose questions have different option counts is treated as having the most.
- Question set per (model, benchmark, condition): the answered questions (``ok`` and
  ``unparsed``), plus the ``error`` questions under ``missing=incorrect`` (scored wrong, no letter).
  The ground-truth counts are over that set; the predicted counts over its answers with a letter.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import condition_sort_key, group_index
from postprocess.analyses.base import Analysis, Options, empty
from postprocess.stats import chi2_uniform
from vdg_tasks.parse import LETTERS

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "condition name",
    "n_options": "options per question in this benchmark (highest letter seen in its key or predictions)",
    "n": "questions counted: answered (ok + unparsed), plus errors under missing_policy=incorrect",
    "n_letter": "answers with a readable letter (the predicted-letter counts sum to this)",
    "n_unparsed": "answers with no readable letter (in n, scored wrong, no letter)",
    "n_error": "questions with no answer (excluded under exclude; in n, scored wrong, under incorrect)",
    **{f"pred_{x}": f"answers with letter {x}" for x in LETTERS},
    **{f"gt_{x}": f"questions among the n whose correct letter is {x}" for x in LETTERS},
    "top_pred": "most frequent predicted letter (first in A-F order on a tie; empty when n_letter = 0)",
    "top_pred_share": "its count / n_letter",
    "chi2_pred": "Pearson chi-square of the predicted-letter counts against uniform over the n_options letters",
    "p_pred": "p-value of chi2_pred (df = n_options - 1)",
    "chi2_gt": "Pearson chi-square of the ground-truth letter counts against uniform over the n_options letters",
    "p_gt": "p-value of chi2_gt (df = n_options - 1)",
    "df": "degrees of freedom of both chi-square tests: n_options - 1",
    "accuracy": "correct answers / n",
    "chance": "1 / n_options",
    "expected_from_letters": "accuracy of a question-blind answerer with these letter counts: "
    "sum over letters of (pred / n) * (gt / n); unparsed answers (and errors under incorrect) never match",
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


def _raise_at(frame: pd.DataFrame, mask: np.ndarray, message: str) -> None:
    if mask.any():
        row = frame.iloc[int(np.flatnonzero(mask)[0])]
        raise ValueError(
            f"model {row['model']!r}, condition {row['condition']!r}, question {row['question_id']!r}: "
            + message.format(answer=row["answer"], pred=row["pred"])
        )


def letters_table(frame: pd.DataFrame, options: Options = Options()) -> pd.DataFrame:
    """Predicted and ground-truth letter counts per (model, benchmark, condition), with bias tests."""
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
    pred = np.where(has_pred, pred, -1)

    keys = ["model", "benchmark", "condition"]
    group, key_table = group_index(frame, keys)
    groups = list(key_table.itertuples(index=False, name=None))
    n_groups = len(groups)
    bench_of_group = np.array([g[1] for g in groups], dtype=object)
    # n_options per benchmark: highest letter in its answer key or predictions, over all its rows.
    top_letter = np.full(n_groups, -1)
    np.maximum.at(top_letter, group, np.maximum(gt, pred))
    n_options = {b: max(int(top_letter[bench_of_group == b].max()) + 1, 2) for b in set(bench_of_group)}

    counted = ~is_error if options.missing == "exclude" else np.ones(len(frame), dtype=bool)
    hit = frame["correct"].fillna(False).to_numpy(dtype=bool) & counted

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(group[mask], minlength=n_groups)

    n = count(counted)
    n_letter = count(has_pred)
    n_unparsed = count(status == "unparsed")
    n_error = count(is_error)
    n_hit = count(hit)
    pred_counts = np.zeros((n_groups, len(LETTERS)), dtype=np.int64)
    gt_counts = np.zeros((n_groups, len(LETTERS)), dtype=np.int64)
    np.add.at(pred_counts, (group[has_pred], pred[has_pred]), 1)
    np.add.at(gt_counts, (group[counted], gt[counted]), 1)

    rows = []
    for i, (model, benchmark, condition) in enumerate(groups):
        k = n_options[benchmark]
        p, g = pred_counts[i], gt_counts[i]
        row: dict[str, object] = {
            "model": model,
            "benchmark": benchmark,
            "condition": condition,
            "n_options": k,
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
            "chance": 1.0 / k,
            "expected_from_letters": float(p @ g) / n[i] ** 2 if n[i] else np.nan,
            "letter_share": np.nan,
            "missing_policy": options.missing,
        }
        if n_letter[i]:
            res = chi2_uniform(p[:k])
            row["chi2_pred"], row["p_pred"] = res.chi2, res.p
        if n[i]:
            res = chi2_uniform(g[:k])
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
    ),
)
