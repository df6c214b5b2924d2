"""Compression analyses: golden hand-made frames, a naive second implementation, and the paper's rows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from postprocess.analyses import crf
from postprocess.analyses._paired import paired
from postprocess.analyses.base import Options
from postprocess.stats import fisher, wilson
from tests.frames import answer_fields, tidy_frame, tidy_row
from tests.reference_data import MODEL, expected_rows, reference_frame

EXCLUDE, INCORRECT = Options(missing="exclude"), Options(missing="incorrect")


# ------------------------------------------------------------------------------------ helpers


def make_frame(records: list[tuple[str, str, str, str, str | None]], benchmark: str = "bench") -> pd.DataFrame:
    """(model, condition, question_id, task_type, pred) -> a tidy frame; the answer is always "A".

    pred: a letter (ok), "?" (unparsed: answered, no letter) or None (error: no answer).
    """
    rows = []
    for model, condition, qid, task_type, pred in records:
        status = "error" if pred is None else "unparsed" if pred == "?" else "ok"
        fields = answer_fields("A", pred if status == "ok" else None, status, error="decode failed")
        rows.append(tidy_row(model, condition, qid, benchmark, video_id=f"v{qid}", task_type=task_type, **fields))
    return tidy_frame(rows)


def random_records(seed: int) -> list[tuple[str, str, str, str, str | None]]:
    """Three models: m1 has everything (CRF levels out of lexical order), m2 has no black, m3 no CRF level."""
    rng = np.random.default_rng(seed)
    plan = {
        "m1": ["orig", "black", "crf5", "crf23", "crf100", "shuffled"],
        "m2": ["orig", "crf18", "crf38"],
        "m3": ["orig", "black"],
    }
    records = []
    for model, conditions in plan.items():
        for i in range(60):
            for condition in conditions:
                u = rng.random()
                pred = None if u < 0.08 else "?" if u < 0.12 else str(rng.choice(["A", "A", "B", "C"]))
                records.append((model, condition, f"q{i:02d}", ["Alpha", "Beta", "Gamma"][i % 3], pred))
    return records


def naive(records, missing):
    """A second, per-question implementation of all four tables, as {key: row dict}."""
    by_model: dict[str, dict[str, dict[str, tuple[str, str | None]]]] = {}
    for model, condition, qid, task, pred in records:
        by_model.setdefault(model, {}).setdefault(qid, {"task": task})[condition] = pred
    acc, flips, stab, enrich = {}, {}, {}, {}
    for model, questions in by_model.items():
        conditions = set().union(*(set(q) - {"task"} for q in questions.values()))
        levels = sorted((c for c in conditions if c.startswith("crf")), key=lambda c: int(c[3:]))
        if "orig" not in conditions or not levels:
            continue
        compared = ["orig", *levels]

        def right(pred):
            return pred == "A"

        tasks = sorted({q["task"] for q in questions.values()})
        for task in [*tasks, "Overall"]:
            qs = [q for q in questions.values() if task in ("Overall", q["task"])]
            errored = [q for q in qs if any(q[c] is None for c in compared)]
            kept = qs if missing == "incorrect" else [q for q in qs if q not in errored]
            n = len(kept)
            n_error = 0 if missing == "incorrect" else len(errored)
            k_orig = sum(right(q["orig"]) for q in kept)
            for c in compared:
                k = sum(right(q[c]) for q in kept)
                acc[(model, task, c)] = {
                    "n": n,
                    "n_error": n_error,
                    "n_correct": k,
                    "acc": k / n if n else math.nan,
                    "delta": (k - k_orig) / n if n else math.nan,
                    "n_unparsed": sum(q[c] == "?" for q in kept),
                }
                if c != "orig":
                    c_to_i = sum(right(q["orig"]) and not right(q[c]) for q in kept)
                    i_to_c = sum(not right(q["orig"]) and right(q[c]) for q in kept)
                    flips[(model, task, c)] = {
                        "n": n,
                        "c_to_i": c_to_i,
                        "i_to_c": i_to_c,
                        "net": i_to_c - c_to_i,
                        "stable_pct": 100 * (n - c_to_i - i_to_c) / n if n else math.nan,
                    }
            same = sum(len({q[c] for c in compared}) == 1 for q in qs)
            stab[(model, task)] = {"n": len(qs), "n_identical": same, "identical_pred_pct": 100 * same / len(qs)}
        if "black" in conditions:
            complete = [q for q in questions.values() if all(q[c] is not None for c in [*compared, "black"])]
            cells = {"a": 0, "b": 0, "c": 0, "d": 0}
            for q in complete:
                sensitive = right(q["orig"]) and not right(q[levels[-1]])
                plus = right(q["orig"]) and not right(q["black"])
                cells["ab"[not plus] if sensitive else "cd"[not plus]] += 1
            enrich[model] = {"n": len(complete), "strongest": levels[-1], **cells}
    return acc, flips, stab, enrich


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    return reference_frame()


@pytest.fixture(scope="module")
def expected() -> dict[tuple[str, str], tuple[float, float]]:
    return {(r["table"], r["quantity"]): (float(r["value"]), float(r["tolerance"])) for r in expected_rows()}


def one(table: pd.DataFrame, **where) -> pd.Series:
    mask = np.ones(len(table), dtype=bool)
    for column, value in where.items():
        mask &= (table[column] == value).to_numpy()
    assert mask.sum() == 1, f"expected one row for {where}, got {mask.sum()}"
    return table[mask].iloc[0]


# ------------------------------------------------------------------------------------ schema


def test_every_analysis_returns_its_declared_columns(reference):
    assert [a.name for a in crf.ANALYSES] == ["crf", "crf_flips", "crf_stability", "crf_enrichment", "crf_vdg"]
    for analysis in crf.ANALYSES:
        for options in (EXCLUDE, INCORRECT):
            table = analysis.run(reference, options)
            assert list(table.columns) == list(analysis.columns)
            assert len(table)


def test_empty_tables_when_the_data_lack_crf_or_orig_or_black():
    no_crf = make_frame([("m", c, "q1", "T", "A") for c in ("orig", "black")])
    no_orig = make_frame([("m", c, "q1", "T", "A") for c in ("black", "crf18")])
    for frame in (no_crf, no_orig, make_frame([])):
        for analysis in crf.ANALYSES:
            table = analysis.run(frame, EXCLUDE)
            assert table.empty and list(table.columns) == list(analysis.columns)
    no_black = make_frame([("m", c, "q1", "T", "A") for c in ("orig", "crf18")])
    assert crf.enrichment_table(no_black).empty
    assert list(crf.enrichment_table(no_black).columns) == list(crf.ENRICHMENT_COLUMNS)
    assert len(crf.crf_table(no_black)) == 4  # (T, Overall) x (orig, crf18)


# ------------------------------------------------------------------------------------ golden: by hand


def hand_frame() -> pd.DataFrame:
    # answer "A" everywhere; None = error, "?" = unparsed.
    table = {
        #      orig  crf18 crf38 black
        "q1": ("A", "A", "B", "B"),  # C->I at crf38, VDG +1 -> sensitive, a
        "q2": ("A", "A", "A", "B"),  # stable, VDG +1 -> c
        "q3": ("B", "A", "A", "B"),  # I->C at 18 and 38, VDG 0 -> d
        "q4": (None, "A", "A", "A"),  # error at orig: excluded under exclude, wrong under incorrect
        "q5": ("A", "?", "C", "A"),  # unparsed at crf18; C->I at 38, VDG 0 -> sensitive, b
        "q6": (None, None, None, "A"),  # error at every CRF level and orig: prediction stable
    }
    tasks = {"q1": "X", "q2": "X", "q3": "X", "q4": "Y", "q5": "Y", "q6": "Y"}
    records = [
        ("m", cond, qid, tasks[qid], pred)
        for qid, preds in table.items()
        for cond, pred in zip(("orig", "crf18", "crf38", "black"), preds, strict=True)
    ]
    return make_frame(records)


def test_crf_table_by_hand():
    frame = hand_frame()
    ex = crf.crf_table(frame, EXCLUDE)
    assert list(ex["task_type"].unique()) == ["X", "Y", "Overall"]
    assert list(ex["condition"].unique()) == ["orig", "crf18", "crf38"]
    assert list(ex["crf"].unique()) == [0, 18, 38]
    assert set(ex["levels"]) == {"orig>crf18>crf38"}
    # exclude: Overall keeps q1, q2, q3, q5 (q4 and q6 have an error at orig)
    row = one(ex, task_type="Overall", condition="orig")
    assert (row["n"], row["n_error"], row["n_correct"]) == (4, 2, 3)
    assert_allclose(row["acc"], 0.75)
    assert row["delta"] == 0
    row = one(ex, task_type="Overall", condition="crf18")
    assert (row["n_correct"], row["n_unparsed"]) == (3, 1)
    assert_allclose(row["delta"], 0.0)
    row = one(ex, task_type="Overall", condition="crf38")
    assert row["n_correct"] == 2
    assert_allclose(row["delta"], -0.25)
    ci = wilson(2, 4, 0.95)
    assert_allclose([row["ci_low"], row["ci_high"]], [ci.low, ci.high])
    row = one(ex, task_type="Y", condition="orig")
    assert (row["n"], row["n_error"], row["n_correct"]) == (1, 2, 1)
    # incorrect: all 6, errors wrong
    inc = crf.crf_table(frame, INCORRECT)
    row = one(inc, task_type="Overall", condition="crf18")
    assert (row["n"], row["n_error"], row["n_correct"]) == (6, 0, 4)
    assert_allclose(row["delta"], (4 - 3) / 6)
    assert set(inc["missing_policy"]) == {"incorrect"} and set(ex["missing_policy"]) == {"exclude"}


def test_an_all_error_task_type_has_n_zero_and_empty_statistics():
    frame = make_frame(
        [("m", c, "q1", "X", "A") for c in ("orig", "crf18")]
        + [("m", "orig", "q2", "Y", None), ("m", "crf18", "q2", "Y", "A")]
    )
    row = one(crf.crf_table(frame, EXCLUDE), task_type="Y", condition="crf18")
    assert (row["n"], row["n_error"]) == (0, 1)
    assert all(math.isnan(row[c]) for c in ("acc", "ci_low", "ci_high", "delta"))
    assert math.isnan(one(crf.flips_table(frame, EXCLUDE), task_type="Y")["stable_pct"])


def test_flips_by_hand():
    frame = hand_frame()
    ex = crf.flips_table(frame, EXCLUDE)
    assert list(ex["condition"].unique()) == ["crf18", "crf38"]
    row = one(ex, task_type="Overall", condition="crf38")
    assert (row["n"], row["c_to_i"], row["i_to_c"], row["net"]) == (4, 2, 1, -1)
    assert_allclose(row["stable_pct"], 25.0)
    row = one(ex, task_type="Overall", condition="crf18")
    assert (row["c_to_i"], row["i_to_c"], row["net"]) == (1, 1, 0)  # q5 unparsed: C->I; q3: I->C
    inc = crf.flips_table(frame, INCORRECT)
    row = one(inc, task_type="Overall", condition="crf38")
    assert (row["n"], row["c_to_i"], row["i_to_c"]) == (6, 2, 2)  # q4: wrong (error) -> right
    assert_allclose(row["stable_pct"], 100 * 2 / 6)


def test_stability_by_hand():
    table = crf.stability_table(hand_frame())
    assert list(table.columns) == list(crf.STABILITY_COLUMNS)
    # X: q2 only (q1 changes at 38, q3 at 18); Y: q6 (error at every level); q4 error -> letter; q5 letter/?/letter
    assert one(table, task_type="X")[["n", "n_identical"]].tolist() == [3, 1]
    assert one(table, task_type="Y")[["n", "n_identical"]].tolist() == [3, 1]
    row = one(table, task_type="Overall")
    assert (row["n"], row["n_identical"]) == (6, 2)
    assert_allclose(row["identical_pred_pct"], 100 * 2 / 6)
    # policy independent
    pd.testing.assert_frame_equal(table, crf.stability_table(hand_frame(), INCORRECT))


def test_stability_tells_an_error_from_an_unparsed_answer():
    frame = make_frame([("m", "orig", "q1", "T", None), ("m", "crf18", "q1", "T", "?")])
    assert one(crf.stability_table(frame), task_type="Overall")["n_identical"] == 0
    frame = make_frame([("m", "orig", "q1", "T", "?"), ("m", "crf18", "q1", "T", "?")])
    assert one(crf.stability_table(frame), task_type="Overall")["n_identical"] == 1


def test_enrichment_by_hand():
    frame = hand_frame()
    for options in (EXCLUDE, INCORRECT):  # always the complete set
        row = crf.enrichment_table(frame, options).iloc[0]
        assert row["strongest"] == "crf38" and row["levels"] == "crf18>crf38"
        assert row["sensitive_definition"] == "C->I: right at orig, wrong at crf38"
        assert row["question_set"] == crf.COMPLETE_SET
        assert (row["n"], row["n_error"], row["n_sensitive"]) == (4, 2, 2)
        assert [row[c] for c in "abcd"] == [1, 1, 1, 1]
        test = fisher(1, 1, 1, 1)
        assert_allclose([row["odds_ratio"], row["p_greater"], row["p_two_sided"]], [1.0, test.p_greater, 1.0])
        assert_allclose([row["vdg_plus_rate_sensitive_pct"], row["vdg_plus_rate_base_pct"]], [50.0, 50.0])


def test_enrichment_without_sensitive_questions_reports_cells_and_no_test():
    records = [("m", c, f"q{i}", "T", p) for i, p in enumerate("AAB") for c in ("orig", "crf18", "crf38")]
    records += [("m", "black", "q0", "T", "B"), ("m", "black", "q1", "T", "A"), ("m", "black", "q2", "T", "A")]
    row = crf.enrichment_table(make_frame(records)).iloc[0]
    assert [row[c] for c in "abcd"] == [0, 0, 1, 2]
    assert all(math.isnan(row[c]) for c in ("odds_ratio", "p_greater", "p_two_sided", "vdg_plus_rate_sensitive_pct"))
    assert_allclose(row["vdg_plus_rate_base_pct"], 100 / 3)


def test_levels_order_by_number_and_the_largest_is_strongest():
    records = [("m", c, "q1", "T", "A") for c in ("orig", "black", "crf100", "crf5", "crf23", "shuffled")]
    frame = make_frame(records)
    assert list(crf.crf_table(frame)["condition"].unique()) == ["orig", "crf5", "crf23", "crf100"]
    assert crf.enrichment_table(frame).iloc[0]["strongest"] == "crf100"
    assert crf.crf_levels(["crf38", "crf18", "orig", "crfX", "black"]) == [(18, "crf18"), (38, "crf38")]


# ------------------------------------------------------------------------------------ golden: naive implementation


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_matches_a_naive_per_question_implementation(seed, missing):
    records = random_records(seed)
    frame = make_frame(records)
    options = Options(missing=missing)
    acc, flips, stab, enrich = naive(records, missing)

    table = crf.crf_table(frame, options)
    assert set(table["model"]) == {"m1", "m2"}  # m3 has no CRF level
    assert len(table) == len(acc)
    for _, row in table.iterrows():
        want = acc[(row["model"], row["task_type"], row["condition"])]
        for column, value in want.items():
            assert_allclose(row[column], value, err_msg=f"{column} {row['model']} {row['task_type']}")
        ci = wilson(row["n_correct"], row["n"], options.ci_level)
        assert_allclose([row["ci_low"], row["ci_high"]], [ci.low, ci.high])

    table = crf.flips_table(frame, options)
    assert len(table) == len(flips)
    for _, row in table.iterrows():
        for column, value in flips[(row["model"], row["task_type"], row["condition"])].items():
            assert_allclose(row[column], value, err_msg=column)

    table = crf.stability_table(frame, options)
    assert len(table) == len(stab)
    for _, row in table.iterrows():
        for column, value in stab[(row["model"], row["task_type"])].items():
            assert_allclose(row[column], value, err_msg=column)

    table = crf.enrichment_table(frame, options)
    assert list(table["model"]) == list(enrich) == ["m1"]
    row = table.iloc[0]
    want = enrich["m1"]
    assert row["strongest"] == want["strongest"] == "crf100"
    assert [row["n"], *(row[c] for c in "abcd")] == [want[k] for k in ("n", "a", "b", "c", "d")]
    assert row["n"] + row["n_error"] == 60


def test_net_over_n_equals_delta(reference):
    for options in (EXCLUDE, INCORRECT):
        acc = crf.crf_table(reference, options)
        flips = crf.flips_table(reference, options)
        merged = flips.merge(acc, on=["model", "benchmark", "task_type", "condition"], suffixes=("", "_acc"))
        assert len(merged) == len(flips) == 3 * 7 * 5
        assert (merged["n"] == merged["n_acc"]).all()
        assert_allclose(merged["net"] / merged["n"], merged["delta"], atol=1e-12)


def test_counts_agree_with_paired(reference):
    """The vectorized join equals postprocess.analyses._paired.paired on the reference data."""
    for options in (EXCLUDE, INCORRECT):
        table = crf.crf_table(reference, options)
        for model, group in reference.groupby("model"):
            conditions = ["orig", "crf18", "crf23", "crf28", "crf33", "crf38"]
            joined = paired(group, conditions, options.missing)
            kept = joined[~joined["error"]]
            for condition in conditions:
                row = one(table, model=model, task_type="Overall", condition=condition)
                assert (row["n"], row["n_error"]) == (len(kept), int(joined["error"].sum()))
                assert row["n_correct"] == int(kept[f"correct_{condition}"].sum())


# ------------------------------------------------------------------------------------ validation


def test_duplicate_rows_raise():
    frame = make_frame([("m", "orig", "q1", "T", "A"), ("m", "crf18", "q1", "T", "A"), ("m", "crf18", "q1", "T", "B")])
    for analysis in crf.ANALYSES:
        with pytest.raises(ValueError, match=r"model 'm'.*condition 'crf18' has more than one row for question 'q1'"):
            analysis.run(frame, EXCLUDE)


def test_a_question_without_a_row_at_some_level_raises():
    frame = make_frame(
        [("m", "orig", "q1", "T", "A"), ("m", "orig", "q2", "T", "A"), ("m", "crf18", "q1", "T", "A")]
        + [("m", "crf38", "q1", "T", "A"), ("m", "crf38", "q2", "T", "A")]
    )
    with pytest.raises(
        ValueError, match=r"model 'm', benchmark 'bench': condition 'crf18' has no row for question 'q2'"
    ):
        crf.crf_table(frame)


def test_two_names_for_one_crf_level_raise():
    frame = make_frame([("m", c, "q1", "T", "A") for c in ("orig", "crf18", "crf018")])
    with pytest.raises(ValueError, match=r"'crf018' and 'crf18' are both CRF 18"):
        crf.crf_table(frame)


# ------------------------------------------------------------------------------------ the paper (expected.csv)

TASK_TYPES = (
    "OCR Problems",
    "Action Recognition",
    "Action Reasoning",
    "Temporal Reasoning",
    "Attribute Perception",
    "Object Recognition",
    "Overall",
)


def test_s12_flips_missing_incorrect_orig_vs_crf38(reference, expected):
    """Table S12 (provenance data): all 600, null = incorrect, original vs crf38."""
    table = crf.flips_table(reference, INCORRECT)
    column = {"C->I": "c_to_i", "I->C": "i_to_c", "net": "net", "stable%": "stable_pct"}
    checked = 0
    for (section, quantity), (value, tol) in expected.items():
        if section != "S12":
            continue
        label, measure = quantity.split(" ", 1)
        row = one(table, model=MODEL[label], task_type="Overall", condition="crf38")
        assert row["n"] == 600
        assert_allclose(row[column[measure]], value, atol=tol, err_msg=quantity)
        checked += 1
    assert checked == 12


def test_44_prediction_stability(reference, expected):
    """Section 4.4: Qwen, identical prediction across orig and crf18..crf38 (null is a value)."""
    table = crf.stability_table(reference)
    for task_type in ("OCR Problems", "Object Recognition"):
        value, tol = expected[("4.4", f"Qwen stability {task_type}")]
        row = one(table, model="qwen2vl", task_type=task_type)
        assert row["levels"] == "orig>crf18>crf23>crf28>crf33>crf38"
        assert_allclose(row["identical_pred_pct"], value, atol=tol)


def test_t3_original_accuracy_missing_incorrect(reference, expected):
    """Table 3's original column: Qwen, all 600 (100 per task), null = incorrect."""
    table = crf.crf_table(reference, INCORRECT)
    for task_type in TASK_TYPES:
        value, tol = expected[("T3", f"Qwen {task_type} original")]
        row = one(table, model="qwen2vl", task_type=task_type, condition="orig")
        assert row["n"] == (600 if task_type == "Overall" else 100)
        assert_allclose(row["acc"], value, atol=tol, err_msg=task_type)


def test_44_fisher_enrichment(reference, expected):
    """Section 4.4 footnote: Qwen, 545 questions with no error at orig or any CRF level (black has none)."""
    row = one(crf.enrichment_table(reference), model="qwen2vl")
    assert (row["n"], row["n_error"], row["strongest"]) == (545, 55, "crf38")
    measured = {
        "Fisher cell sens&VDG+1 (n=545)": row["a"],
        "Fisher cell sens&VDG<=0 (n=545)": row["b"],
        "Fisher cell stable&VDG+1 (n=545)": row["c"],
        "Fisher cell stable&VDG<=0 (n=545)": row["d"],
        "Fisher OR": row["odds_ratio"],
        "Fisher p (one-sided greater)": row["p_greater"],
        "VDG=+1 rate in sensitive %": row["vdg_plus_rate_sensitive_pct"],
        "VDG=+1 base rate %": row["vdg_plus_rate_base_pct"],
    }
    for quantity, got in measured.items():
        value, tol = expected[("4.4", quantity)]
        assert_allclose(got, value, atol=tol, err_msg=quantity)
    assert_allclose(row["p_two_sided"], fisher(11, 7, 159, 368).p_two_sided)


# ------------------------------------------------------------------------------------ crf_vdg


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_crf_vdg_matches_a_naive_spearman(missing):
    from scipy import stats

    records = random_records(7)
    table = crf.crf_vdg_table(make_frame(records), Options(missing=missing))
    assert list(table.columns) == list(crf.VDG_COLUMNS)
    assert table["model"].tolist() == ["m1"]  # m2 has no black, m3 no CRF level
    row = table.iloc[0]
    assert row["levels"] == "crf5>crf23>crf100"
    by = {}
    for model, condition, qid, task, pred in records:
        if model == "m1":
            by.setdefault(qid, {"task": task})[condition] = pred
    levels = ["crf5", "crf23", "crf100"]
    flips, sizes, gap_sum, gap_n = {}, {}, {}, {}
    for q in by.values():
        task = q["task"]
        right = {c: q[c] == "A" for c in ["orig", "black", *levels]}
        if missing == "incorrect" or all(q[c] is not None for c in ["orig", *levels]):
            flips[task] = flips.get(task, 0) + sum(right["orig"] != right[c] for c in levels)
            sizes[task] = sizes.get(task, 0) + 1
        if missing == "incorrect" or (q["orig"] is not None and q["black"] is not None):
            gap_sum[task] = gap_sum.get(task, 0) + int(right["orig"]) - int(right["black"])
            gap_n[task] = gap_n.get(task, 0) + 1
    tasks = sorted(flips)
    count = [flips[t] for t in tasks]
    rate = [flips[t] / (sizes[t] * len(levels)) for t in tasks]
    vdg = [gap_sum[t] / gap_n[t] for t in tasks]
    assert row["n_task_types"] == 3
    ref = stats.spearmanr(count, vdg)
    assert row["flip_spearman"] == pytest.approx(ref.statistic) and row["flip_p"] == pytest.approx(ref.pvalue)
    ref = stats.spearmanr(rate, vdg)
    assert row["flip_rate_spearman"] == pytest.approx(ref.statistic)
    assert row["flip_rate_p"] == pytest.approx(ref.pvalue)


def test_crf_vdg_is_empty_below_three_task_types_or_without_black():
    conditions = ("orig", "black", "crf18")
    two = make_frame([("m", c, f"q{i}", f"T{i % 2}", "A" if i % 3 else "B") for i in range(8) for c in conditions])
    row = crf.crf_vdg_table(two).iloc[0]
    assert row["n_task_types"] == 2 and math.isnan(row["flip_spearman"])
    no_black = make_frame([("m", c, "q1", "T", "A") for c in ("orig", "crf18")])
    assert crf.crf_vdg_table(no_black).empty
