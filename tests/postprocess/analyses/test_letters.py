"""letters: predicted vs ground-truth letter counts, chi-square against uniform, letter share of accuracy."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats as sps

from postprocess.analyses.base import ReportSettings
from postprocess.analyses.letters import ANALYSES, COLUMNS, letters_table
from tests.helpers.frames import answer_fields, tidy_frame, tidy_row
from tests.helpers.reference_data import ORIG_BLACK, reference_frame
from vdg_tasks.vocabulary.parse import LETTERS


def make_frame(records: list[tuple[str, str, str, str, str | None, str]], benchmark: str = "b") -> pd.DataFrame:
    """(model, condition, question_id, answer, pred, status) -> tidy frame; status ok | unparsed | error."""
    return tidy_frame(
        tidy_row(model, condition, qid, benchmark, task_type="T", duration="", **answer_fields(answer, pred, status))
        for model, condition, qid, answer, pred, status in records
    )


def random_records(seed: int = 0, n: int = 80, letters: str = "ABCD"):
    rng = np.random.default_rng(seed)
    answers = rng.choice(list(letters), size=n, p=None)
    records = []
    for model in ("m1", "m2"):
        for condition in ("orig", "black"):
            bias = rng.dirichlet(np.ones(len(letters)))
            for i in range(n):
                status = rng.choice(["ok", "unparsed", "error"], p=[0.8, 0.1, 0.1])
                if status == "ok":
                    pred = answers[i] if rng.random() < 0.4 else rng.choice(list(letters), p=bias)
                else:
                    pred = None
                records.append((model, condition, f"v{i // 2}-{i % 2}", str(answers[i]), pred, str(status)))
    return records


def naive(records, model, condition, missing, k):
    rows = [r for r in records if r[0] == model and r[1] == condition]
    counted = [r for r in rows if missing == "incorrect" or r[5] != "error"]
    n = len(counted)
    pred = Counter(r[4] for r in counted if r[5] == "ok")
    gt = Counter(r[3] for r in counted)
    hits = sum(1 for r in counted if r[5] == "ok" and r[4] == r[3])
    # question-blind answerer: question i's answer goes to question j, every (i, j) equally likely
    blind = sum(1 for i in counted for j in counted if i[5] == "ok" and i[4] == j[3]) / n**2
    acc, chance = hits / n, 1 / k
    return {
        "n": n,
        "n_letter": sum(pred.values()),
        "n_unparsed": sum(1 for r in rows if r[5] == "unparsed"),
        "n_error": sum(1 for r in rows if r[5] == "error"),
        **{f"pred_{x}": pred.get(x, 0) for x in LETTERS},
        **{f"gt_{x}": gt.get(x, 0) for x in LETTERS},
        "accuracy": acc,
        "expected_from_letters": blind,
        "letter_share": (blind - chance) / (acc - chance) if acc > chance else np.nan,
        "chi2_pred": sps.chisquare([pred.get(x, 0) for x in LETTERS[:k]]).statistic,
        "p_pred": sps.chisquare([pred.get(x, 0) for x in LETTERS[:k]]).pvalue,
        "chi2_gt": sps.chisquare([gt.get(x, 0) for x in LETTERS[:k]]).statistic,
        "p_gt": sps.chisquare([gt.get(x, 0) for x in LETTERS[:k]]).pvalue,
    }


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_counts_and_statistics_match_a_naive_count(missing):
    records = random_records()
    table = letters_table(make_frame(records), ReportSettings(missing=missing))
    assert list(table.columns) == list(COLUMNS)
    assert list(zip(table["model"], table["condition"], strict=True)) == [
        ("m1", "orig"),
        ("m1", "black"),
        ("m2", "orig"),
        ("m2", "black"),
    ]
    for row in table.to_dict("records"):
        want = naive(records, row["model"], row["condition"], missing, 4)
        assert row["n_options"] == 4 and row["df"] == 3 and row["chance"] == 0.25
        for key, value in want.items():
            if isinstance(value, float):
                assert_allclose(row[key], value, atol=1e-12, err_msg=key)
            else:
                assert row[key] == value, key
        assert row["top_pred"] == max(LETTERS, key=lambda x: (row[f"pred_{x}"], -LETTERS.index(x)))
        assert_allclose(row["top_pred_share"], row[f"pred_{row['top_pred']}"] / row["n_letter"])
        assert row["missing_policy"] == missing


def test_inferred_option_count_is_the_largest_letter_seen_in_the_task_type_with_no_floor():
    three = [("m", "black", f"v{i}-0", "ABC"[i % 3], "ABC"[(i + 1) % 3], "ok") for i in range(9)]
    five = [("m", "black", f"v{i}-0", "ABCD"[i % 4], "E" if i == 0 else "A", "ok") for i in range(8)]
    frame = pd.concat([make_frame(three, "three"), make_frame(five, "five")], ignore_index=True)
    table = letters_table(frame).set_index("benchmark")
    # Letters A-C only in the task type: 3 options, chance 1/3 (no floor of 4).
    assert table.loc["three", "n_options"] == 3 and table.loc["three", "df"] == 2
    assert_allclose(table.loc["three", "chance"], 1 / 3)
    # v0-0 was answered E: every question of its task type has 5 options, the seven no one answered E included.
    assert table.loc["five", "n_options"] == 5 and table.loc["five", "pred_E"] == 1
    assert_allclose(table.loc["five", "chance"], 1 / 5)
    assert (table["n_options_rule"] == "inferred per task type").all()


def _expected_letter_counts(n_options: list[int]) -> np.ndarray:
    """Uniform guessing among each question's own options: letter L expected sum of 1/n over questions with n > L."""
    out = np.zeros(len(LETTERS))
    for n in n_options:
        for letter in range(n):
            out[letter] += 1 / n
    return out


def test_declared_option_counts_mixing_three_four_and_five():
    # Per question (answer, pred, options): 3-option questions (A-C), 4-option and 5-option ones.
    questions = [
        ("A", "A", 3), ("C", "B", 3), ("B", "B", 3),
        ("D", "D", 4), ("A", "C", 4), ("B", "A", 4), ("C", "C", 4),
        ("E", "E", 5), ("E", "A", 5), ("B", "D", 5), ("A", "E", 5),
    ]  # fmt: skip
    frame = tidy_frame(
        tidy_row("m", "black", f"v{i}-0", "mixed", task_type="T", n_options=n, **answer_fields(a, p, "ok"))
        for i, (a, p, n) in enumerate(questions)
    )
    row = letters_table(frame).iloc[0]
    counts = [n for _, _, n in questions]
    assert row["n_options"] == 5 and row["df"] == 4
    assert_allclose(row["chance"], np.mean([1 / n for n in counts]), atol=1e-12)
    pred = np.array([sum(p == x for _, p, _ in questions) for x in "ABCDE"])
    gt = np.array([sum(a == x for a, _, _ in questions) for x in "ABCDE"])
    want_pred = sps.chisquare(pred, _expected_letter_counts(counts)[:5])
    want_gt = sps.chisquare(gt, _expected_letter_counts(counts)[:5])
    assert_allclose([row["chi2_pred"], row["p_pred"]], [want_pred.statistic, want_pred.pvalue], atol=1e-12)
    assert_allclose([row["chi2_gt"], row["p_gt"]], [want_gt.statistic, want_gt.pvalue], atol=1e-12)
    assert [row[f"pred_{x}"] for x in "ABCDE"] == pred.tolist()


def test_a_letter_beyond_the_declared_count_is_refused_naming_the_question():
    frame = tidy_frame(
        [tidy_row("m", "black", "v0-0", "b", task_type="T", n_options=3, **answer_fields("A", "D", "ok"))]
    )
    with pytest.raises(ValueError, match=r"question 'v0-0': pred 'D' is beyond the question's option count"):
        letters_table(frame)


def test_letter_share_hand_computed_and_empty_at_or_below_chance():
    # 8 questions, key AAAABBCD; a model answering A everywhere is right 4/8 = 0.5.
    key = "AAAABBCD"
    always_a = [("m", "black", f"v{i}-0", key[i], "A", "ok") for i in range(8)]
    row = letters_table(make_frame(always_a)).iloc[0]
    # expected from letters = p_pred(A) * p_gt(A) = 1 * 0.5: all of the gain is letter alignment
    assert_allclose([row["expected_from_letters"], row["letter_share"]], [0.5, 1.0])
    # at chance: 2 of 8 right -> empty share
    two_right = [("m", "black", f"v{i}-0", key[i], "A" if i < 2 else "D" if i < 7 else "C", "ok") for i in range(8)]
    row = letters_table(make_frame(two_right)).iloc[0]
    assert row["accuracy"] == 0.25 and np.isnan(row["letter_share"])


def test_unparsed_have_no_letter_and_errors_follow_the_policy():
    records = [
        ("m", "black", "v0-0", "A", "A", "ok"),
        ("m", "black", "v0-1", "B", None, "unparsed"),
        ("m", "black", "v1-0", "C", None, "error"),
        ("m", "black", "v1-1", "A", "B", "ok"),
    ]
    ex = letters_table(make_frame(records), ReportSettings(missing="exclude")).iloc[0]
    inc = letters_table(make_frame(records), ReportSettings(missing="incorrect")).iloc[0]
    assert (ex["n"], ex["n_letter"], ex["n_unparsed"], ex["n_error"]) == (3, 2, 1, 1)
    assert (inc["n"], inc["n_letter"]) == (4, 2)
    assert (ex["gt_C"], inc["gt_C"]) == (0, 1)
    assert_allclose([ex["accuracy"], inc["accuracy"]], [1 / 3, 1 / 4])
    assert_allclose(ex["expected_from_letters"], (1 * 2 + 1 * 1) / 9)  # pred A,B x gt A,B,A


def test_validation_errors():
    good = [("m", "orig", "v0-0", "A", "A", "ok")]
    with pytest.raises(ValueError, match=r"question 'v0-0': answer 'Z' is not one of the option letters"):
        letters_table(make_frame([("m", "orig", "v0-0", "Z", "A", "ok")]))
    with pytest.raises(ValueError, match=r"model 'm', condition 'orig', question 'v0-1': pred 'Q' is not one"):
        letters_table(make_frame([*good, ("m", "orig", "v0-1", "A", "Q", "ok")]))
    with pytest.raises(ValueError, match=r"status is 'ok' but pred holds no letter"):
        letters_table(make_frame([*good, ("m", "orig", "v0-1", "A", None, "ok")]))


def test_empty_frame_and_registration():
    table = letters_table(make_frame(random_records(n=2)).iloc[:0])
    assert table.empty and list(table.columns) == list(COLUMNS)
    assert [a.name for a in ANALYSES] == ["letters"]


def test_reference_black_letters_against_value_counts():
    frame = reference_frame(("qwen2vl",), ORIG_BLACK)
    table = letters_table(frame).set_index("condition")
    black = frame[frame["condition"] == "black"]
    counts = black["pred"].value_counts()
    assert [table.loc["black", f"pred_{x}"] for x in "ABCD"] == [counts[x] for x in "ABCD"]
    assert table.loc["black", "n_options"] == 4 and table.loc["black", "pred_E"] == 0
    # orig: 53 errors excluded from both distributions
    assert (table.loc["orig", "n"], table.loc["orig", "n_error"]) == (547, 53)
    assert table.loc["orig", "n_letter"] == sum(table.loc["orig", f"gt_{x}"] for x in "ABCD")


def _mixed_frame(rows: list[tuple[int, str, str]]) -> pd.DataFrame:
    """(n_options, answer, pred) per question, one model under black."""
    return tidy_frame(
        tidy_row("m", "black", f"v{i}-0", "mixed", task_type="T", n_options=k, **answer_fields(a, p, "ok"))
        for i, (k, a, p) in enumerate(rows)
    )


def test_expected_from_letters_pairs_questions_of_the_same_option_count():
    """A naive count: question i's reply given to question j, over every (i, j) with as many options, averaged
    within each option count and weighted by its share of the questions."""
    rng = np.random.default_rng(7)
    rows = []
    for _ in range(60):
        k = int(rng.choice([3, 4, 5]))
        rows.append((k, LETTERS[int(rng.integers(k))], LETTERS[int(rng.integers(k))]))
    by_k: dict[int, list[tuple[str, str]]] = {}
    for k, a, p in rows:
        by_k.setdefault(k, []).append((a, p))
    naive = sum(sum(p == a2 for _, p in qs for a2, _ in qs) / len(qs) for qs in by_k.values()) / len(rows)
    row = letters_table(_mixed_frame(rows)).iloc[0]
    assert_allclose(row["expected_from_letters"], naive, atol=1e-12)


def test_a_uniform_guesser_on_mixed_option_counts_has_no_letter_excess():
    """Seeded simulation (issue 40 item 6): questions of 3 to 5 options, answers and replies uniform among each
    question's own options. Over 400 runs the mean of expected_from_letters - chance is 0 within 3 standard errors;
    pairing every question with every other regardless of its option count (the old formula) is biased below 0
    by more than 10 standard errors on the same runs."""
    rng = np.random.default_rng(20261207)
    excess, pooled_excess = [], []
    for _ in range(400):
        ks = rng.choice([3, 4, 5], size=90, p=[0.2, 0.3, 0.5])
        rows = [(int(k), LETTERS[int(rng.integers(k))], LETTERS[int(rng.integers(k))]) for k in ks]
        row = letters_table(_mixed_frame(rows)).iloc[0]
        excess.append(row["expected_from_letters"] - row["chance"])
        pred = Counter(p for _, _, p in rows)
        gt = Counter(a for _, a, _ in rows)
        pooled = sum(pred[x] * gt[x] for x in LETTERS) / len(rows) ** 2
        pooled_excess.append(pooled - row["chance"])
    se = np.std(excess, ddof=1) / np.sqrt(len(excess))
    assert abs(np.mean(excess)) < 3 * se
    pooled_se = np.std(pooled_excess, ddof=1) / np.sqrt(len(pooled_excess))
    assert np.mean(pooled_excess) < -10 * pooled_se
