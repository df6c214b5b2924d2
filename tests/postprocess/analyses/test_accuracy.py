"""accuracy: per-condition accuracy with a Wilson interval, under both missing-answer policies."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from postprocess.analyses.accuracy import ANALYSES, COLUMNS, accuracy_table
from postprocess.analyses.base import ReportSettings
from tests.helpers.frames import make_frame, outcome_fields, tidy_frame, tidy_row
from tests.helpers.reference_data import ORIG_BLACK, expected_rows, reference_frame


def random_records(seed: int = 1, n: int = 90) -> list[tuple[str, str, str, str, object]]:
    rng = np.random.default_rng(seed)
    outcomes = np.array([True, False, "u", "e"], dtype=object)
    records = []
    for model in ("m1", "m2"):
        for condition in ("orig", "black", "crf23"):
            for i in range(n):
                outcome = outcomes[rng.choice(4, p=[0.5, 0.35, 0.05, 0.1])]
                records.append((model, condition, f"v{i // 2:03d}-{i % 2}", f"T{i % 3}", outcome))
    return records


def naive(records, model, condition, task_type, missing, question_set="per-model"):
    """Count question by question (task_type None: all); question_set="shared" (under exclude) also leaves out
    the questions any model has an error for under the condition."""
    failed = {q for _, c, q, _, outcome in records if c == condition and outcome == "e"}
    n = correct = n_error = n_unparsed = 0
    for m, c, q, t, outcome in records:
        if m != model or c != condition or (task_type is not None and t != task_type):
            continue
        if outcome == "e":
            n_error += 1
            if missing == "exclude":
                continue
        if missing == "exclude" and question_set == "shared" and q in failed:
            continue
        n += 1
        correct += outcome is True
        n_unparsed += outcome == "u"
    return n, correct, n_error, n_unparsed


@pytest.mark.parametrize("question_set", ["shared", "per-model"])
@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_counts_match_a_question_by_question_count(missing, question_set):
    records = random_records()
    table = accuracy_table(
        make_frame(records), ReportSettings(missing=missing, question_set=question_set, min_stratum=1)
    )
    assert list(table.columns) == list(COLUMNS)
    assert len(table) == 2 * 3 * 4
    for row in table.itertuples():
        task = None if row.task_type == "Overall" else row.task_type
        n, correct, n_error, n_unparsed = naive(records, row.model, row.condition, task, missing, question_set)
        assert (row.n, row.correct, row.n_error, row.n_unparsed) == (n, correct, n_error, n_unparsed)
        assert row.acc == pytest.approx(correct / n, abs=1e-12)
        # statsmodels' Wilson interval, as an independent implementation.
        low, high = proportion_confint(correct, n, alpha=0.05, method="wilson")
        np.testing.assert_allclose([row.ci_low, row.ci_high], [low, high], atol=1e-12)
        assert row.ci_level == 0.95 and row.missing_policy == missing


def test_policies_differ_only_in_how_errors_count():
    records = random_records()
    frame = make_frame(records)
    exclude = accuracy_table(frame, ReportSettings(missing="exclude", question_set="per-model"))
    incorrect = accuracy_table(frame, ReportSettings(missing="incorrect"))
    np.testing.assert_array_equal(incorrect["n"], exclude["n"] + exclude["n_error"])
    np.testing.assert_array_equal(incorrect["correct"], exclude["correct"])
    shared = accuracy_table(frame, ReportSettings(missing="exclude", question_set="shared"))
    np.testing.assert_array_equal(exclude["n"], shared["n"] + shared["n_not_shared"])
    assert (shared["n_not_shared"] > 0).any() and (exclude["n_not_shared"] == 0).all()
    assert (exclude["n_error"] > 0).any()


def test_row_order_conditions_as_declared_task_types_then_overall():
    records = [
        (m, c, "v0-0", t, True) for m in ("b", "a") for c in ("crf38", "zz", "black", "orig") for t in ("Y", "X")
    ]
    table = accuracy_table(make_frame(records))
    assert table["model"].tolist()[:12] == ["a"] * 12
    first = table[table["model"] == "a"]
    assert first["condition"].tolist()[::3] == ["orig", "black", "crf38", "zz"]
    assert first["task_type"].tolist()[:3] == ["X", "Y", "Overall"]


def test_all_errors_give_empty_accuracy_under_exclude():
    table = accuracy_table(make_frame([("m", "orig", "v0-0", "T", "e"), ("m", "orig", "v1-0", "T", "e")]))
    overall = table[table["task_type"] == "Overall"].iloc[0]
    assert overall["n"] == 0 and overall["n_error"] == 2
    assert math.isnan(overall["acc"]) and math.isnan(overall["ci_low"]) and math.isnan(overall["ci_high"])


def test_ci_level_is_passed_through():
    table = accuracy_table(make_frame(random_records()), ReportSettings(ci_level=0.9, min_stratum=1))
    row = table.iloc[0]
    low, high = proportion_confint(row["correct"], row["n"], alpha=0.1, method="wilson")
    np.testing.assert_allclose([row["ci_low"], row["ci_high"]], [low, high], atol=1e-12)
    assert (table["ci_level"] == 0.9).all()


def test_empty_frame_gives_the_declared_columns():
    table = accuracy_table(make_frame(random_records()).iloc[:0])
    assert table.empty and list(table.columns) == list(COLUMNS)


def test_unknown_status_is_rejected():
    frame = make_frame(random_records())
    frame.loc[5, "status"] = "timeout"
    with pytest.raises(ValueError, match=r"question 'v.*' has status 'timeout'"):
        accuracy_table(frame)


def test_answer_without_a_correct_flag_is_rejected():
    frame = make_frame(random_records())
    ok = frame.index[frame["status"] == "ok"][0]
    frame.loc[ok, "correct"] = pd.NA
    with pytest.raises(ValueError, match="has an answer .* but no correct flag"):
        accuracy_table(frame)


def test_analysis_declares_the_table():
    (analysis,) = ANALYSES
    assert analysis.name == "accuracy" and analysis.columns == COLUMNS
    assert list(analysis.run(make_frame(random_records()), ReportSettings()).columns) == list(COLUMNS)


# ------------------------------------------------------------------------------- reference rows


def test_reference_t3_qwen_original_accuracy():
    """expected.csv T3: Qwen2-VL accuracy on the original video, all 600 questions, error = incorrect."""
    frame = reference_frame(files=ORIG_BLACK)
    table = accuracy_table(frame, ReportSettings(missing="incorrect")).set_index(["model", "condition", "task_type"])
    rows = [r for r in expected_rows() if r["table"] == "T3"]
    assert len(rows) == 7
    for row in rows:
        task = re.fullmatch(r"Qwen (.+) original", row["quantity"]).group(1)
        cell = table.loc[("qwen2vl", "orig", task)]
        assert cell["n"] == (600 if task == "Overall" else 100)
        assert abs(cell["acc"] - float(row["value"])) <= float(row["tolerance"]), row["quantity"]
    # The 53 Qwen2-VL errors in orig are scored wrong, not dropped.
    assert table.loc[("qwen2vl", "orig", "Overall"), "n_error"] == 53


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_chance_per_task_type_from_each_questions_option_count(missing):
    # Task types with 3-, 4- and 5-option questions (one task type mixes 4 and 5); errors leave n under exclude.
    spec = {"three": [3] * 6, "four": [4] * 8, "mixed": [4, 5, 5, 5, 4]}
    rows, counted = [], {}
    for task_type, counts in spec.items():
        for i, n_opt in enumerate(counts):
            outcome = "e" if i == 0 else (i % 2 == 0)
            rows.append(
                tidy_row(
                    "m",
                    "orig",
                    f"{task_type}-{i}",
                    "b",
                    task_type=task_type,
                    n_options=n_opt,
                    **outcome_fields(outcome),
                )
            )
            if outcome != "e" or missing == "incorrect":
                counted.setdefault(task_type, []).append(n_opt)
    table = accuracy_table(tidy_frame(rows), ReportSettings(missing=missing)).set_index("task_type")
    for task_type, counts in counted.items():
        assert math.isclose(table.loc[task_type, "chance"], sum(1 / n for n in counts) / len(counts), rel_tol=1e-12)
    every = [n for counts in counted.values() for n in counts]
    assert math.isclose(table.loc["Overall", "chance"], sum(1 / n for n in every) / len(every), rel_tol=1e-12)
    assert math.isclose(table.loc["three", "chance"], 1 / 3) and math.isclose(table.loc["four", "chance"], 1 / 4)


def test_chance_of_the_reference_is_a_quarter():
    table = accuracy_table(reference_frame(("qwen2vl",), ORIG_BLACK))
    assert np.allclose(table["chance"], 0.25)


def test_a_graded_benchmark_counts_a_score_of_one_half_or_more_as_right_and_has_no_chance_level():
    scores = [0.0, 0.2, 0.5, 0.8, 1.0, 0.4]
    rows = [
        tidy_row(
            "m",
            "orig",
            f"q{i}",
            "graded",
            status="ok",
            pred=None,
            answer="red",
            correct=s >= 0.5,
            score=s,
            scoring="judge",
        )  # fmt: skip
        for i, s in enumerate(scores)
    ]
    rows += [tidy_row("m", "orig", f"l{i}", "lettered", status="ok", pred="A", answer="AB"[i % 2], correct=i % 2 == 0,
                      n_options=4) for i in range(4)]  # fmt: skip
    table = accuracy_table(tidy_frame(rows)).set_index(["benchmark", "task_type"])
    graded = table.loc[("graded", "Overall")]
    assert (graded["n"], graded["correct"]) == (6, sum(s >= 0.5 for s in scores))
    assert graded["scale"] == "graded score, correct when at least 0.5" and pd.isna(graded["chance"])
    lettered = table.loc[("lettered", "Overall")]
    assert lettered["scale"] == "correct (0/1)" and lettered["chance"] == 0.25
