"""consistency and split_half: agreement of VDG profiles across models and across halves of the data."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from postprocess.analyses import consistency
from postprocess.analyses._paired import question_set_seed
from postprocess.analyses.base import ReportSettings
from postprocess.analyses.consistency import (
    ANALYSES,
    COLUMNS,
    N_SPLITS,
    SPLIT_HALF_COLUMNS,
    consistency_table,
    split_half_correlations,
    split_half_table,
    task_vdgs,
)
from postprocess.analyses.vdg import per_question
from tests.helpers.frames import make_frame
from tests.helpers.reference_data import MODEL, ORIG_BLACK, expected_rows, reference_frame

#: Every task type enters the correlations (the random frames have task types of about 25-30 questions).
ALL_STRATA = ReportSettings(min_stratum=1)


def random_records(seed: int = 11, n: int = 150, models=("m1", "m2", "m3"), n_types: int = 5):
    rng = np.random.default_rng(seed)
    outcomes = np.array([True, False, "u", "e"], dtype=object)
    records = []
    for k, model in enumerate(models):
        for condition in ("orig", "black"):
            for i in range(n - 7 * k):
                task = i % n_types
                p_right = 0.3 + 0.1 * task if condition == "orig" else 0.35
                outcome = outcomes[rng.choice(4, p=[p_right, 0.93 - p_right, 0.02, 0.05])]
                records.append((model, condition, f"v{i:03d}-0", f"T{task}", outcome))
    return records


def naive_vdgs(records, missing):
    """{model: {qid: vdg}} for the kept questions, and {qid: task type}."""
    arms: dict[tuple[str, str], dict[str, object]] = {}
    task = {}
    for model, condition, qid, task_type, outcome in records:
        arms.setdefault((model, qid), {})[condition] = outcome
        task[qid] = task_type
    out: dict[str, dict[str, int]] = {}
    asked: dict[str, set[str]] = {}
    for (model, qid), a in arms.items():
        asked.setdefault(model, set()).add(qid)
        if missing == "exclude" and "e" in (a["orig"], a["black"]):
            continue
        out.setdefault(model, {})[qid] = int(a["orig"] is True) - int(a["black"] is True)
    return out, asked, task


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_pairs_match_a_naive_computation(missing):
    records = random_records()
    table = consistency_table(make_frame(records), ReportSettings(missing=missing, min_stratum=1))
    assert list(table.columns) == list(COLUMNS)
    vdgs, asked, task = naive_vdgs(records, missing)
    assert [(r.model_a, r.model_b) for r in table.itertuples()] == [("m1", "m2"), ("m1", "m3"), ("m2", "m3")]
    for row in table.itertuples():
        a, b = vdgs[row.model_a], vdgs[row.model_b]
        # Task level: exact fractions per task type, then scipy's Spearman.
        profile = {}
        for model, v in ((row.model_a, a), (row.model_b, b)):
            sums: dict[str, list[int]] = {}
            for q, g in v.items():
                sums.setdefault(task[q], []).append(g)
            profile[model] = {t: Fraction(sum(g), len(g)) for t, g in sums.items()}
        types = sorted(profile[row.model_a])
        rho = stats.spearmanr(
            [float(profile[row.model_a][t]) for t in types], [float(profile[row.model_b][t]) for t in types]
        )
        assert row.n_task_types == 5 and row.too_small == "" and row.task_reason == ""
        assert row.task_spearman == pytest.approx(rho.statistic, abs=1e-12)
        assert row.task_p == pytest.approx(rho.pvalue, abs=1e-12)
        # Question level: the questions both kept.
        shared = sorted(set(a) & set(b))
        rho_q = stats.spearmanr([a[q] for q in shared], [b[q] for q in shared])
        assert row.n == len(shared)
        assert row.n_error == len(asked[row.model_a] & asked[row.model_b]) - len(shared)
        assert row.question_spearman == pytest.approx(rho_q.statistic, abs=1e-12)
        assert row.question_p == pytest.approx(rho_q.pvalue, rel=1e-9)
        assert row.agreement == pytest.approx(np.mean([a[q] == b[q] for q in shared]), abs=1e-12)
        assert row.missing_policy == missing


def tie_records():
    """m1's T1 and T2 have the same VDG 3/10, reached as 0.7 - 0.4 and 0.6 - 0.3 (floats differ by an ulp)."""
    accs = {  # task type: (orig right out of 10, black right out of 10) per model
        "m1": {"T1": (7, 4), "T2": (6, 3), "T3": (5, 5), "T4": (9, 1), "T5": (2, 0)},
        "m2": {"T1": (5, 1), "T2": (6, 3), "T3": (4, 4), "T4": (8, 4), "T5": (2, 2)},
    }
    records = []
    for model, per_task in accs.items():
        for task, (k_orig, k_black) in per_task.items():
            for i in range(10):
                qid = f"{task}q{i}-0"
                records += [(model, "orig", qid, task, i < k_orig), (model, "black", qid, task, i < k_black)]
    return records


def test_task_vdgs_are_exact_so_equal_gaps_tie():
    frame = make_frame(tie_records())
    assert 0.7 - 0.4 != 0.6 - 0.3  # what a float difference of means would break
    questions = per_question(frame, ReportSettings())
    profile = task_vdgs(questions[questions["model"] == "m1"])
    assert profile == {
        "T1": Fraction(3, 10),
        "T2": Fraction(3, 10),
        "T3": Fraction(0),
        "T4": Fraction(8, 10),
        "T5": Fraction(2, 10),
    }
    row = consistency_table(frame, ALL_STRATA).iloc[0]
    # m1 VDGs .3, .3, 0, .8, .2 -> ranks 3.5, 3.5, 1, 5, 2; m2 .4, .3, 0, .4, 0 -> 4.5, 3, 1.5, 4.5, 1.5.
    expected = stats.pearsonr([3.5, 3.5, 1, 5, 2], [4.5, 3, 1.5, 4.5, 1.5]).statistic
    assert row["task_spearman"] == pytest.approx(expected, abs=1e-12)


def test_undefined_correlations_are_empty():
    # Two task types only: fewer than MIN_TASK_TYPES.
    two = make_frame([r for r in tie_records() if r[3] in ("T1", "T2")])
    row = consistency_table(two, ALL_STRATA).iloc[0]
    assert row["n_task_types"] == 2 and math.isnan(row["task_spearman"]) and math.isnan(row["task_p"])
    assert math.isnan(row["task_pearson"]) and "needs 5" in row["task_reason"]
    # A constant per-question VDG (m1 right in both arms everywhere); m2's VDG is +1 on even i.
    records = [
        (m, c, f"v{i}-0", f"T{i % 5}", True if m == "m1" else (c == "orig" and i % 2 == 0))
        for m in ("m1", "m2")
        for c in ("orig", "black")
        for i in range(20)
    ]
    row = consistency_table(make_frame(records), ALL_STRATA).iloc[0]
    assert math.isnan(row["question_spearman"]) and math.isnan(row["task_spearman"])
    assert row["n_task_types"] == 5
    assert row["task_reason"] == "a side is constant over the task types (all ranks tied)"
    assert row["agreement"] == pytest.approx(10 / 20)


def sized_records(sizes: dict[str, int], models=("m1", "m2"), seed: int = 3):
    """Models answering every question (no errors), ``sizes[t]`` questions of task type t."""
    rng = np.random.default_rng(seed)
    records = []
    for model in models:
        i = 0
        for t, (task, size) in enumerate(sorted(sizes.items())):
            for _ in range(size):
                qid = f"v{i:03d}-0"
                records += [
                    (model, "orig", qid, task, bool(rng.random() < 0.3 + 0.1 * t)),
                    (model, "black", qid, task, bool(rng.random() < 0.35)),
                ]
                i += 1
    return records


def hand_profiles(records):
    """{model: {task type: VDG}} by hand."""
    arms: dict[tuple[str, str], dict[str, bool]] = {}
    task = {}
    for model, condition, qid, t, right in records:
        arms.setdefault((model, qid), {})[condition] = right
        task[qid] = t
    sums: dict[str, dict[str, list[int]]] = {}
    for (model, qid), a in arms.items():
        sums.setdefault(model, {}).setdefault(task[qid], []).append(int(a["orig"]) - int(a["black"]))
    return {m: {t: sum(g) / len(g) for t, g in per.items()} for m, per in sums.items()}


def test_task_level_correlations_use_task_types_of_at_least_min_stratum_questions_and_need_five():
    """Exactly 30 questions (the default min_stratum) enter, 29 do not; exactly 5 task types give a correlation."""
    sizes = {"T0": 30, "T1": 34, "T2": 30, "T3": 41, "T4": 30, "T5": 29}
    records = sized_records(sizes)
    row = consistency_table(make_frame(records)).iloc[0]
    profiles = hand_profiles(records)
    entered = ["T0", "T1", "T2", "T3", "T4"]
    assert row["n_task_types"] == 5 and row["min_stratum"] == 30 and row["too_small"] == "T5 (n=29)"
    ref = stats.spearmanr([profiles["m1"][t] for t in entered], [profiles["m2"][t] for t in entered])
    assert row["task_spearman"] == pytest.approx(ref.statistic, abs=1e-12)
    assert row["task_p"] == pytest.approx(ref.pvalue, rel=1e-9) and row["task_reason"] == ""
    ref = stats.pearsonr([profiles["m1"][t] for t in entered], [profiles["m2"][t] for t in entered])
    assert row["task_pearson"] == pytest.approx(ref.statistic, abs=1e-12)
    # The question level is not across task types: every question counts.
    assert row["n"] == sum(sizes.values())
    # One more task type below 30: four enter, no correlation, and the reason says so.
    sizes["T4"] = 29
    row = consistency_table(make_frame(sized_records(sizes))).iloc[0]
    assert row["n_task_types"] == 4 and row["too_small"] == "T4 (n=29); T5 (n=29)"
    assert math.isnan(row["task_spearman"]) and math.isnan(row["task_pearson_p"])
    assert row["task_reason"] == "4 task types with at least 30 questions; a correlation across task types needs 5"
    assert not math.isnan(row["question_spearman"])


def test_split_half_needs_five_task_types_of_at_least_min_stratum_questions():
    sizes = {"T0": 30, "T1": 34, "T2": 30, "T3": 41, "T4": 30, "T5": 29}
    row = split_half_table(make_frame(sized_records(sizes, models=("m1",)))).iloc[0]
    assert row["n_task_types"] == 5 and row["n"] == 165 and row["too_small"] == "T5 (n=29)"
    assert row["n_defined"] > 0 and row["reason"] == ""
    sizes["T4"] = 29
    row = split_half_table(make_frame(sized_records(sizes, models=("m1",)))).iloc[0]
    assert row["n_task_types"] == 4 and row["n_defined"] == 0 and math.isnan(row["spearman_mean"])
    assert row["reason"] == "4 task types with at least 30 questions; a correlation across task types needs 5"


def naive_split_half(gaps, codes, rng, n_splits):
    """The same draws, one split and one task type at a time."""
    keys = rng.random((n_splits, len(gaps)))
    out = []
    for s in range(n_splits):
        va, vb = [], []
        for code in np.unique(codes):
            idx = np.flatnonzero(codes == code)
            order = idx[np.argsort(keys[s, idx])]
            half = len(idx) // 2
            va.append(Fraction(int(gaps[order[:half]].sum()), half))
            vb.append(Fraction(int(gaps[order[half:]].sum()), len(idx) - half))
        rho = stats.spearmanr([float(v) for v in va], [float(v) for v in vb]).statistic
        out.append(rho)
    return np.array(out)


def test_split_half_correlations_match_a_loop():
    rng = np.random.default_rng(0)
    gaps = rng.choice([-1, 0, 1], size=101, p=[0.1, 0.5, 0.4])
    codes = rng.integers(0, 6, size=101)
    got = split_half_correlations(gaps, codes, np.random.default_rng(7), n_splits=40)
    want = naive_split_half(gaps, codes, np.random.default_rng(7), 40)
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_split_half_table_summarises_the_splits():
    records = random_records()
    frame = make_frame(records)
    options = ReportSettings(missing="exclude", ci_level=0.9, min_stratum=1)
    table = split_half_table(frame, options)
    assert list(table.columns) == list(SPLIT_HALF_COLUMNS)
    questions = per_question(frame, ReportSettings(missing="exclude"))
    for row in table.itertuples():
        kept = questions[(questions["model"] == row.model) & ~questions["excluded"]]
        codes = pd.factorize(kept["task_type"], sort=True)[0]
        seed = question_set_seed(options, "split_half", row.benchmark, question_ids=kept["question_id"])
        rho = naive_split_half(kept["vdg"].to_numpy(dtype=np.int64), codes, np.random.default_rng(seed), N_SPLITS)
        assert row.n == len(kept) and row.n_task_types == 5 and row.n_splits == N_SPLITS
        assert row.n_defined == N_SPLITS and row.min_stratum == 2  # halves need 2 questions
        assert row.spearman_mean == pytest.approx(rho.mean(), abs=1e-12)
        assert row.spearman_low == pytest.approx(np.quantile(rho, 0.05), abs=1e-12)
        assert row.spearman_high == pytest.approx(np.quantile(rho, 0.95), abs=1e-12)
        assert row.ci_level == 0.9
    # Dropping a model leaves the others' rows unchanged.
    fewer = split_half_table(make_frame([r for r in records if r[0] != "m2"]), options)
    pd.testing.assert_frame_equal(fewer, table[table["model"] != "m2"].reset_index(drop=True))


def test_split_half_seed_depends_on_the_questions_not_the_model_label():
    """Two models with the same answers on the same questions get the same splits, whatever their labels."""
    one_model = random_records(models=("m1",))
    twins = one_model + [("zz-renamed", *r[1:]) for r in one_model]
    table = split_half_table(make_frame(twins), ALL_STRATA)
    values = ["n", "n_task_types", "n_defined", "spearman_mean", "spearman_low", "spearman_high"]
    assert table["model"].tolist() == ["m1", "zz-renamed"]
    assert table.iloc[0][values].tolist() == table.iloc[1][values].tolist()


def test_split_half_leaves_out_singleton_task_types_and_needs_five():
    records = random_records(models=("m1",))
    records += [("m1", c, "solo-0", "Tsolo", True) for c in ("orig", "black")]
    row = split_half_table(make_frame(records), ReportSettings(missing="incorrect", min_stratum=1)).iloc[0]
    assert row["n_task_types"] == 5 and row["n"] == 150  # Tsolo (1 question) is not split
    assert row["too_small"] == "Tsolo (n=1)"
    few = make_frame([r for r in random_records(models=("m1",)) if r[3] in ("T0", "T1")])
    row = split_half_table(few, ALL_STRATA).iloc[0]
    assert row["n_task_types"] == 2 and row["n_defined"] == 0 and math.isnan(row["spearman_mean"])
    assert "needs 5" in row["reason"]


def test_no_black_gives_empty_tables_and_one_model_no_pairs():
    records = random_records()
    none = make_frame([r for r in records if r[1] != "black"])
    for fn, columns in ((consistency_table, COLUMNS), (split_half_table, SPLIT_HALF_COLUMNS)):
        table = fn(none)
        assert table.empty and list(table.columns) == list(columns)
    one = make_frame([r for r in records if r[0] == "m1"])
    assert consistency_table(one).empty and len(split_half_table(one)) == 1


def test_analyses_declare_their_tables():
    assert [(a.name, a.columns) for a in ANALYSES] == [("consistency", COLUMNS), ("split_half", SPLIT_HALF_COLUMNS)]
    frame = make_frame(random_records())
    for analysis in ANALYSES:
        assert list(analysis.run(frame, ReportSettings()).columns) == list(analysis.columns)
    assert consistency.MIN_POINTS == 3 and consistency.MIN_TASK_TYPES == 5


# ------------------------------------------------------------------------------- reference rows


def test_reference_4_1_task_level_spearman():
    """expected.csv 4.1: Spearman over the 6 matched task-type VDGs (missing=exclude), exact fractions."""
    frame = reference_frame(files=ORIG_BLACK)
    table = consistency_table(frame, ReportSettings(missing="exclude"))
    rows = [r for r in expected_rows() if r["table"] == "4.1" and r["quantity"].startswith("task-level")]
    assert len(rows) == 3
    for row in rows:
        a, b = (MODEL[m] for m in row["quantity"].rsplit(" ", 1)[1].split("-"))
        cell = table[
            ((table["model_a"] == a) & (table["model_b"] == b)) | ((table["model_a"] == b) & (table["model_b"] == a))
        ].iloc[0]
        assert cell["n_task_types"] == 6
        assert abs(cell["task_spearman"] - float(row["value"])) <= float(row["tolerance"]), row["quantity"]
    # Question level on the matched sets: qwen2vl keeps 547 of 600.
    assert sorted(table["n"]) == [547, 547, 600]
    assert list(itertools.chain(table["model_a"], table["model_b"])).count("qwen2vl") == 2


def test_pearson_beside_spearman_matches_scipy():
    records = random_records()
    table = consistency_table(make_frame(records), ALL_STRATA)
    questions = per_question(make_frame(records))
    for row in table.itertuples():
        pa = task_vdgs(questions[questions["model"] == row.model_a])
        pb = task_vdgs(questions[questions["model"] == row.model_b])
        shared = sorted(set(pa) & set(pb))
        ref = stats.pearsonr([float(pa[t]) for t in shared], [float(pb[t]) for t in shared])
        assert row.task_pearson == pytest.approx(ref.statistic, abs=1e-12)
        assert row.task_pearson_p == pytest.approx(ref.pvalue, rel=1e-9)
        kept = questions[~questions["excluded"]]
        wide = kept.pivot(index="question_id", columns="model", values="vdg")[[row.model_a, row.model_b]].dropna()
        ref = stats.pearsonr(wide[row.model_a].astype(float), wide[row.model_b].astype(float))
        assert len(wide) == row.n
        assert row.question_pearson == pytest.approx(ref.statistic, abs=1e-12)
        assert row.question_pearson_p == pytest.approx(ref.pvalue, rel=1e-9)


def test_a_graded_task_type_s_vdg_is_its_mean_gap():
    from postprocess.analyses.consistency import task_vdgs

    questions = pd.DataFrame(
        {"task_type": ["A", "A", "A", "B"], "vdg": [0.5, 0.25, -0.1, 1.0], "excluded": [False, False, False, False]}
    )
    vdgs = task_vdgs(questions)
    assert vdgs == {"A": Fraction(65, 100) / 3, "B": Fraction(1)}
