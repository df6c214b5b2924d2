"""categories and hard_core: the orig x black outcome categories, pooled over models, and the hard core."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from postprocess.analyses.base import ReportSettings
from postprocess.analyses.categories import (
    ANALYSES,
    COLUMNS,
    HARD_CORE_COLUMNS,
    POOLED,
    categories_table,
    hard_core_table,
)
from tests.helpers.frames import make_frame
from tests.helpers.reference_data import MODEL, ORIG_BLACK, expected_rows, reference_frame


def random_records(seed: int = 5, n: int = 120, models=("m1", "m2", "m3")):
    rng = np.random.default_rng(seed)
    outcomes = np.array([True, False, "u", "e"], dtype=object)
    records = []
    for k, model in enumerate(models):
        for condition, p_right in (("orig", 0.6), ("black", 0.35), ("single", 0.5)):
            for i in range(n - 10 * k):  # the models' question sets differ
                p_error = 0.06 if condition == "orig" else 0.02
                outcome = outcomes[rng.choice(4, p=[p_right, 0.98 - p_right - p_error, 0.02, p_error])]
                records.append((model, condition, f"v{i:03d}-0", f"T{i % 4}", outcome))
    return records


def naive_categories(records, missing):
    """(model, task type or 'Overall') -> Counter of I-IV and 'error', question by question."""
    arms: dict[tuple[str, str], dict[str, object]] = {}
    task: dict[str, str] = {}
    for model, condition, qid, task_type, outcome in records:
        arms.setdefault((model, qid), {})[condition] = outcome
        task[qid] = task_type
    out: dict[tuple[str, str], Counter] = {}
    for (model, qid), by_cond in arms.items():
        o, b = by_cond["orig"], by_cond["black"]
        for key in ((model, task[qid]), (model, "Overall")):
            counter = out.setdefault(key, Counter())
            if missing == "exclude" and "e" in (o, b):
                counter["error"] += 1
                continue
            o, b = o is True, b is True
            counter[{(True, False): "I", (True, True): "II", (False, True): "III", (False, False): "IV"}[(o, b)]] += 1
    return out


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_categories_match_a_question_by_question_count(missing):
    records = random_records()
    table = categories_table(make_frame(records), ReportSettings(missing=missing))
    assert list(table.columns) == list(COLUMNS)
    expected = naive_categories(records, missing)
    per_model = table[table["model"] != POOLED]
    assert len(per_model) == 3 * 5
    for row in per_model.itertuples():
        counts = expected[(row.model, row.task_type)]
        got = {c: getattr(row, f"n_{c}") for c in ("I", "II", "III", "IV")}
        assert got == {c: counts[c] for c in got}
        assert row.n == sum(got.values()) and row.n_error == counts["error"] and row.n_models == 1
        for c, k in got.items():
            assert getattr(row, f"share_{c}") == pytest.approx(k / row.n, abs=1e-12)
    if missing == "incorrect":
        assert (per_model["n_error"] == 0).all()
    else:
        assert per_model["n_error"].sum() > 0


def test_pooled_rows_sum_the_models_counts():
    records = random_records()
    table = categories_table(make_frame(records), ReportSettings(missing="incorrect"))
    pooled = table[table["model"] == POOLED].set_index("task_type")
    models = table[table["model"] != POOLED]
    assert pooled.index.tolist() == ["T0", "T1", "T2", "T3", "Overall"]
    sums = models.groupby("task_type")[["n", "n_I", "n_II", "n_III", "n_IV", "n_models"]].sum()
    for task_type, row in pooled.iterrows():
        for column in sums.columns:
            assert row[column] == sums.loc[task_type, column]
        assert row["share_I"] == pytest.approx(row["n_I"] / row["n"])
    # Each model counts its own questions: 120 + 110 + 100.
    assert pooled.loc["Overall", "n"] == 330 and pooled.loc["Overall", "n_models"] == 3


def hand_frame():
    """Two models; q4 only m1 has. VDG per model (orig, black):
    q0: m1 (T, F) m2 (T, F) -> +1 for both; q1: m1 (T, F) m2 (T, T); q2: m1 (T, F) m2 (error, F);
    q3: m1 (T, F) m2 (T, unparsed) -> +1 for both; q4: m1 (T, F).
    """
    m1 = {q: (True, False) for q in ("q0", "q1", "q2", "q3", "q4")}
    m2 = {"q0": (True, False), "q1": (True, True), "q2": ("e", False), "q3": (True, "u")}
    records = []
    for model, arms in (("m1", m1), ("m2", m2)):
        for q, (o, b) in arms.items():
            task = "A" if q in ("q0", "q1") else "B"
            records += [(model, "orig", f"{q}-0", task, o), (model, "black", f"{q}-0", task, b)]
    return make_frame(records)


def test_hard_core_by_hand():
    exclude = hard_core_table(hand_frame(), ReportSettings(missing="exclude"))
    assert list(exclude.columns) == list(HARD_CORE_COLUMNS)
    exclude = exclude.set_index("task_type")
    assert exclude.index.tolist() == ["A", "B", "Overall"]
    assert exclude.loc["Overall", ["n", "n_hard_core", "n_error"]].tolist() == [3, 2, 1]  # q2 dropped
    assert exclude.loc["A", ["n", "n_hard_core"]].tolist() == [2, 1]
    assert exclude.loc["B", ["n", "n_hard_core", "n_error"]].tolist() == [1, 1, 1]
    assert exclude.loc["Overall", "share"] == pytest.approx(2 / 3)
    assert exclude.loc["Overall", "models"] == "m1,m2" and exclude.loc["Overall", "n_models"] == 2
    incorrect = hard_core_table(hand_frame(), ReportSettings(missing="incorrect")).set_index("task_type")
    assert incorrect.loc["Overall", ["n", "n_hard_core", "n_error"]].tolist() == [4, 2, 0]  # q2: m2 VDG 0
    assert (incorrect["missing_policy"] == "incorrect").all()


def test_hard_core_matches_a_naive_count():
    records = random_records()
    table = hard_core_table(make_frame(records), ReportSettings(missing="exclude"))
    arms: dict[str, dict[str, dict[str, object]]] = {}
    for model, condition, qid, _, outcome in records:
        arms.setdefault(qid, {}).setdefault(model, {})[condition] = outcome
    shared = [q for q, by_model in arms.items() if len(by_model) == 3]
    kept = [q for q in shared if all("e" not in (a["orig"], a["black"]) for a in arms[q].values())]
    core = [q for q in kept if all(a["orig"] is True and a["black"] is not True for a in arms[q].values())]
    overall = table[table["task_type"] == "Overall"].iloc[0]
    assert (overall["n"], overall["n_hard_core"], overall["n_error"]) == (len(kept), len(core), len(shared) - len(kept))


def test_one_model_has_no_pooled_rows_and_no_hard_core():
    frame = make_frame([r for r in random_records() if r[0] == "m1"])
    table = categories_table(frame)
    assert set(table["model"]) == {"m1"}
    hard = hard_core_table(frame)
    assert hard.empty and list(hard.columns) == list(HARD_CORE_COLUMNS)


def test_models_without_black_are_skipped_and_no_black_gives_empty_tables():
    records = random_records()
    frame = make_frame([r for r in records if not (r[0] == "m3" and r[1] == "black")])
    assert set(categories_table(frame)["model"]) == {"m1", "m2", POOLED}
    assert hard_core_table(frame)["models"].unique().tolist() == ["m1,m2"]
    none = make_frame([r for r in records if r[1] != "black"])
    for fn, columns in ((categories_table, COLUMNS), (hard_core_table, HARD_CORE_COLUMNS)):
        table = fn(none)
        assert table.empty and list(table.columns) == list(columns)


def test_a_model_labelled_pooled_is_rejected():
    frame = make_frame(random_records())
    frame["model"] = frame["model"].replace("m2", POOLED)
    with pytest.raises(ValueError, match="a model is labelled 'pooled'"):
        categories_table(frame)


def test_analyses_declare_their_tables():
    assert [(a.name, a.columns) for a in ANALYSES] == [("categories", COLUMNS), ("hard_core", HARD_CORE_COLUMNS)]
    frame = make_frame(random_records())
    for analysis in ANALYSES:
        assert list(analysis.run(frame, ReportSettings()).columns) == list(analysis.columns)


# ------------------------------------------------------------------------------- reference rows


@pytest.fixture(scope="module")
def reference_tables():
    frame = reference_frame(files=ORIG_BLACK)
    options = ReportSettings(missing="incorrect")  # all 600, error = incorrect
    return categories_table(frame, options), hard_core_table(frame, options), expected_rows()


def _close(row: dict[str, str], computed: float) -> None:
    assert abs(computed - float(row["value"])) <= float(row["tolerance"]), (row["quantity"], computed)


def test_reference_s4_categories(reference_tables):
    """expected.csv S4: shares of I-IV per model and task type (/100) and Overall (/600)."""
    table = reference_tables[0].set_index(["model", "task_type"])
    rows = [r for r in reference_tables[2] if r["table"] == "S4"]
    assert len(rows) == 84
    for row in rows:
        m = re.fullmatch(r"VME (?P<task>.+) (?P<m>Qwen|LLaVA|IV2) (?P<cat>I|II|III|IV)", row["quantity"])
        cell = table.loc[(MODEL[m["m"]], m["task"])]
        assert cell["n"] == (600 if m["task"] == "Overall" else 100)
        _close(row, cell[f"share_{m['cat']}"])


def test_reference_4_3_pooled_categories(reference_tables):
    """expected.csv 4.3: the three models' category counts summed over 1800."""
    table = reference_tables[0].set_index(["model", "task_type"])
    rows = [r for r in reference_tables[2] if r["table"] == "4.3" and r["quantity"].startswith("VME pooled")]
    assert len(rows) == 4
    cell = table.loc[(POOLED, "Overall")]
    assert cell["n"] == 1800 and cell["n_models"] == 3
    for row in rows:
        _close(row, cell[f"share_{row['quantity'].rsplit(' ', 1)[1]}"])


def test_reference_4_1_hard_core(reference_tables):
    """expected.csv 4.1: questions with VDG = +1 for all three models, all 600: 62/600 = 10.3333%."""
    (row,) = [r for r in reference_tables[2] if r["table"] == "4.1" and r["quantity"].startswith("hard core")]
    overall = reference_tables[1].set_index("task_type").loc["Overall"]
    assert overall["n"] == 600 and overall["n_hard_core"] == 62 and overall["n_models"] == 3
    _close(row, 100 * overall["share"])


def test_reference_hard_core_under_exclude_drops_qwen_errors():
    frame = reference_frame(files=ORIG_BLACK)
    overall = hard_core_table(frame, ReportSettings(missing="exclude")).set_index("task_type").loc["Overall"]
    # Only qwen2vl has errors in orig/black (53); the 62 hard-core questions all survive.
    assert (overall["n"], overall["n_error"], overall["n_hard_core"]) == (547, 53, 62)


def test_the_hard_core_of_a_graded_benchmark_is_category_i_for_every_model():
    from postprocess.analyses.categories import hard_core_table
    from tests.helpers.frames import graded_row, tidy_frame

    # q0: both models right only with the video, one with a partial score; q1: one model right both ways
    scores = {("a", "q0"): (0.75, 0.0), ("b", "q0"): (1.0, 0.25), ("a", "q1"): (1.0, 0.0), ("b", "q1"): (0.5, 0.5)}
    rows = [graded_row(m, c, q, "graded", s[i], task_type="T") for (m, q), s in scores.items()
            for i, c in enumerate(("orig", "black"))]  # fmt: skip
    core = hard_core_table(tidy_frame(rows)).set_index("task_type").loc["Overall"]
    assert (core["n"], core["n_hard_core"]) == (2, 1)
