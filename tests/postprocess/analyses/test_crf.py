"""Compression analyses: golden hand-made frames, a naive second implementation, and the paper's rows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from postprocess.analyses import crf
from postprocess.analyses._paired import paired, question_rule
from postprocess.analyses.base import ReportSettings
from postprocess.stats import fisher, wilson
from tests.helpers.frames import answer_fields, tidy_frame, tidy_row
from tests.helpers.reference_data import MODEL, expected_rows, reference_frame

EXCLUDE, INCORRECT = ReportSettings(missing="exclude"), ReportSettings(missing="incorrect")
PER_MODEL = ReportSettings(missing="exclude", question_set="per-model")
SHARED = ReportSettings(missing="exclude", question_set="shared")


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


def naive_mcnemar(b: int, c: int) -> float:
    """McNemar's p by scipy: nan without a discordant pair, 1 when b = c, the exact binomial test below 25
    discordant pairs, else the continuity-corrected chi-square."""
    if b + c == 0:
        return math.nan
    if b == c:
        return 1.0
    if b + c < 25:
        return stats.binomtest(b, b + c, 0.5).pvalue
    return stats.chi2.sf((abs(b - c) - 1) ** 2 / (b + c), 1)


def naive(records, missing, shared=False):
    """A second, per-question implementation of all four tables, as {key: row dict}.

    ``shared``: a question some model (with orig and a CRF level) has an error for at orig or one of its levels is
    dropped for every model (and, for the enrichment, an error at black too among the models with black).
    """
    by_model: dict[str, dict[str, dict[str, tuple[str, str | None]]]] = {}
    for model, condition, qid, task, pred in records:
        by_model.setdefault(model, {}).setdefault(qid, {"task": task})[condition] = pred

    def compared_of(questions):
        conditions = set().union(*(set(q) - {"task"} for q in questions.values()))
        levels = sorted((c for c in conditions if c.startswith("crf")), key=lambda c: int(c[3:]))
        return conditions, levels

    failed, failed_complete = set(), set()
    for questions in by_model.values():
        conditions, levels = compared_of(questions)
        if shared and "orig" in conditions and levels:
            failed |= {qid for qid, q in questions.items() if any(q[c] is None for c in ["orig", *levels])}
            if "black" in conditions:
                failed_complete |= {
                    qid for qid, q in questions.items() if any(q[c] is None for c in ["orig", "black", *levels])
                }
    acc, flips, stab, enrich = {}, {}, {}, {}
    for model, questions in by_model.items():
        conditions, levels = compared_of(questions)
        if "orig" not in conditions or not levels:
            continue
        compared = ["orig", *levels]

        def right(pred):
            return pred == "A"

        tasks = sorted({q["task"] for q in questions.values()})
        for task in [*tasks, "Overall"]:
            members = {qid: q for qid, q in questions.items() if task in ("Overall", q["task"])}
            dropped = {qid for qid, q in members.items() if any(q[c] is None for c in compared) or qid in failed}
            qs = list(members.values())
            kept = qs if missing == "incorrect" else [q for qid, q in members.items() if qid not in dropped]
            n = len(kept)
            n_error = 0 if missing == "incorrect" else len(dropped)
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
                        "acc_orig": k_orig / n if n else math.nan,
                        "acc_level": k / n if n else math.nan,
                        "p": naive_mcnemar(c_to_i, i_to_c),
                    }
            same = sum(len({q[c] for c in compared}) == 1 for q in qs)
            stab[(model, task)] = {"n": len(qs), "n_identical": same, "identical_pred_pct": 100 * same / len(qs)}
        if "black" in conditions:
            complete = [
                q
                for qid, q in questions.items()
                if all(q[c] is not None for c in [*compared, "black"]) and qid not in failed_complete
            ]
            cells = {"a": 0, "b": 0, "c": 0, "d": 0, "d_all": 0}
            for q in complete:
                sensitive = right(q["orig"]) and not right(q[levels[-1]])
                plus = right(q["orig"]) and not right(q["black"])
                cells["ab"[not plus] if sensitive else "cd"[not plus]] += right(q["orig"])
                cells["d_all"] += not sensitive and not plus
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
    assert row["too_small"] and np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])  # 4 < min_stratum
    ci = wilson(2, 4, 0.95)
    row = one(crf.crf_table(frame, ReportSettings(min_stratum=4)), task_type="Overall", condition="crf38")
    assert not row["too_small"]
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


def test_flips_carry_the_paired_mcnemar_test_of_the_change(reference):
    # Every flips row: McNemar's p of c_to_i against i_to_c recomputed with scipy (the exact binomial test below 25
    # discordant questions, the continuity-corrected chi-square from 25), and the two accuracies on the flips' own
    # n questions, from the crf table's rows of the same set.
    flips = crf.flips_table(reference, EXCLUDE)
    acc = crf.crf_table(reference, EXCLUDE).set_index(["model", "task_type", "condition"])
    assert {"exact binomial", "chi-square (continuity corrected)"} <= set(flips["test"])
    for _, row in flips.iterrows():
        b, c = int(row["c_to_i"]), int(row["i_to_c"])
        assert row["p"] == pytest.approx(naive_mcnemar(b, c), rel=1e-9, nan_ok=True)
        expected = "" if b + c == 0 else "exact binomial" if b + c < 25 else "chi-square (continuity corrected)"
        assert row["test"] == expected
        orig = acc.loc[(row["model"], row["task_type"], "orig")]
        level = acc.loc[(row["model"], row["task_type"], row["condition"])]
        assert orig["n"] == level["n"] == row["n"]
        assert_allclose([row["acc_orig"], row["acc_level"]], [orig["acc"], level["acc"]], rtol=1e-12)
        assert_allclose(row["acc_level"] - row["acc_orig"], row["net"] / row["n"], atol=1e-12)


def test_flips_without_a_changed_answer_have_no_mcnemar_test():
    frame = make_frame([("m", c, f"q{i}", "T", "A") for c in ("orig", "crf18") for i in range(3)])
    row = one(crf.flips_table(frame, EXCLUDE), task_type="Overall")
    assert (row["c_to_i"], row["i_to_c"], row["test"]) == (0, 0, "") and math.isnan(row["p"])


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
    for options in (EXCLUDE, INCORRECT, PER_MODEL):  # always the complete set
        row = crf.enrichment_table(frame, options).iloc[0]
        assert row["strongest"] == "crf38" and row["levels"] == "crf18>crf38"
        assert row["sensitive_definition"] == "C->I: right at orig, wrong at crf38"
        scope = "per-model" if options.question_set == "per-model" else "shared"
        assert row["question_rule"] == question_rule(["orig", "black", "crf18", "crf38"], "exclude", scope)
        assert (row["n"], row["n_error"], row["n_sensitive"]) == (4, 2, 2)
        # Right at orig: q1 (sensitive, black wrong), q5 (sensitive, black right), q2 (stable, black wrong).
        assert row["conditioned_on"] == "right at orig" and row["n_orig_correct"] == 3
        assert [row[c] for c in "abcd"] == [1, 1, 1, 0]
        ref = stats.fisher_exact([[1, 1], [1, 0]], alternative="greater")
        assert row["odds_ratio"] == 0.0 and row["p_greater"] == pytest.approx(ref.pvalue)
        assert row["p_two_sided"] == pytest.approx(stats.fisher_exact([[1, 1], [1, 0]]).pvalue)
        assert_allclose([row["vdg_plus_rate_sensitive_pct"], row["vdg_plus_rate_base_pct"]], [50.0, 100.0])
        # The paper's test over all four: q3 (wrong at orig) joins d.
        assert [row[f"{c}_unconditioned"] for c in "abcd"] == [1, 1, 1, 1]
        test = fisher(1, 1, 1, 1)
        got = [row[f"{c}_unconditioned"] for c in ("odds_ratio", "p_greater", "p_two_sided")]
        assert_allclose(got, [1.0, test.p_greater, 1.0])
        assert_allclose(row["vdg_plus_rate_base_pct_unconditioned"], 50.0)


def test_the_headline_enrichment_is_conditioned_on_a_right_orig_answer():
    """A table built by hand: among questions right at orig, sensitivity and VDG = +1 are independent
    (odds ratio 1); the unconditioned test, with every question wrong at orig in its d cell, finds an association."""
    # (orig, crf38, black) -> how many questions
    plan = {
        ("A", "B", "B"): 6,  # right at orig, sensitive, VDG +1: a
        ("A", "B", "A"): 4,  # sensitive, VDG 0: b
        ("A", "A", "B"): 12,  # stable, VDG +1: c
        ("A", "A", "A"): 8,  # stable, VDG 0: d
        ("B", "B", "B"): 20,  # wrong at orig: VDG 0, never sensitive
    }
    records, i = [], 0
    for preds, k in plan.items():
        for _ in range(k):
            records += [("m", c, f"q{i:03d}", "T", p) for c, p in zip(("orig", "crf38", "black"), preds, strict=True)]
            i += 1
    row = crf.enrichment_table(make_frame(records)).iloc[0]
    a, b, c, d = 6, 4, 12, 8
    assert [row[k] for k in "abcd"] == [a, b, c, d] and row["n_orig_correct"] == 30 and row["n"] == 50
    assert row["odds_ratio"] == pytest.approx(a * d / (b * c)) == 1.0
    ref = stats.fisher_exact([[a, b], [c, d]], alternative="greater")
    assert row["p_greater"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert row["p_two_sided"] == pytest.approx(stats.fisher_exact([[a, b], [c, d]]).pvalue, rel=1e-12)
    d_all = d + 20
    assert row["d_unconditioned"] == d_all
    assert row["odds_ratio_unconditioned"] == pytest.approx(a * d_all / (b * c)) == pytest.approx(3.5)
    ref = stats.fisher_exact([[a, b], [c, d_all]], alternative="greater")
    assert row["p_greater_unconditioned"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert row["p_greater_unconditioned"] < row["p_greater"]
    assert_allclose(row["vdg_plus_rate_base_pct"], 100 * c / (c + d))
    assert_allclose(row["vdg_plus_rate_base_pct_unconditioned"], 100 * c / (c + d_all))


def test_enrichment_without_sensitive_questions_reports_cells_and_no_test():
    records = [("m", c, f"q{i}", "T", p) for i, p in enumerate("AAB") for c in ("orig", "crf18", "crf38")]
    records += [("m", "black", "q0", "T", "B"), ("m", "black", "q1", "T", "A"), ("m", "black", "q2", "T", "A")]
    row = crf.enrichment_table(make_frame(records)).iloc[0]
    assert [row[c] for c in "abcd"] == [0, 0, 1, 1]
    assert [row[f"{c}_unconditioned"] for c in "abcd"] == [0, 0, 1, 2]
    empty = ("odds_ratio", "p_greater", "p_two_sided")
    assert all(math.isnan(row[c]) for c in (*empty, *(f"{c}_unconditioned" for c in empty)))
    assert math.isnan(row["vdg_plus_rate_sensitive_pct"])
    assert_allclose([row["vdg_plus_rate_base_pct"], row["vdg_plus_rate_base_pct_unconditioned"]], [50, 100 / 3])


def test_shared_question_set_drops_another_models_errors_from_every_model():
    """question_set=shared: a question one model failed at one CRF level leaves every model's crf, flips and
    enrichment rows; per-model keeps it for the others. The question_rule column says which."""
    conditions = ("orig", "black", "crf18", "crf38")
    records = [
        (m, c, f"q{i}", "T", "A" if (i + j) % 3 else "B")
        for m in ("m1", "m2")
        for j, c in enumerate(conditions)
        for i in range(6)
    ]
    records = [(m, c, q, t, None if (m, c, q) == ("m2", "crf18", "q0") else p) for m, c, q, t, p in records]
    frame = make_frame(records)
    for options, n_m1 in ((SHARED, 5), (PER_MODEL, 6)):
        scope = options.question_set
        for table, conds in (
            (crf.crf_table(frame, options), ["orig", "crf18", "crf38"]),
            (crf.flips_table(frame, options), ["orig", "crf18", "crf38"]),
            (crf.enrichment_table(frame, options), ["orig", "black", "crf18", "crf38"]),
        ):
            rows = table[table.get("task_type", pd.Series("Overall", index=table.index)) == "Overall"]
            by_model = rows.groupby("model")["n"].unique()
            assert by_model["m1"].tolist() == [n_m1] and by_model["m2"].tolist() == [5]
            assert set(rows["question_rule"]) == {question_rule(conds, "exclude", scope)}
    # missing=incorrect drops nothing, for either rule.
    assert set(crf.crf_table(frame, INCORRECT)["question_rule"]) == {"every question; errors scored wrong"}
    assert (one(crf.crf_table(frame, INCORRECT), model="m1", task_type="Overall", condition="orig")["n"]) == 6
    assert set(crf.stability_table(frame)["question_rule"]) == {crf.STABILITY_RULE}


def test_levels_order_by_number_and_the_largest_is_strongest():
    records = [("m", c, "q1", "T", "A") for c in ("orig", "black", "crf100", "crf5", "crf23", "shuffled")]
    frame = make_frame(records)
    assert list(crf.crf_table(frame)["condition"].unique()) == ["orig", "crf5", "crf23", "crf100"]
    assert crf.enrichment_table(frame).iloc[0]["strongest"] == "crf100"
    assert crf.crf_levels(["crf38", "crf18", "orig", "crfX", "black"]) == [(18, "crf18"), (38, "crf38")]


# ------------------------------------------------------------------------------------ golden: naive implementation


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
@pytest.mark.parametrize("question_set", ["shared", "per-model"])
def test_matches_a_naive_per_question_implementation(seed, missing, question_set):
    records = random_records(seed)
    frame = make_frame(records)
    options = ReportSettings(missing=missing, question_set=question_set)
    acc, flips, stab, enrich = naive(records, missing, shared=question_set == "shared")

    table = crf.crf_table(frame, options)
    assert set(table["model"]) == {"m1", "m2"}  # m3 has no CRF level
    assert len(table) == len(acc)
    for _, row in table.iterrows():
        want = acc[(row["model"], row["task_type"], row["condition"])]
        for column, value in want.items():
            assert_allclose(row[column], value, err_msg=f"{column} {row['model']} {row['task_type']}")
        assert row["too_small"] == (row["n"] < options.min_stratum)
        if not row["too_small"]:
            ci = wilson(row["n_correct"], row["n"], options.ci_level)
            assert_allclose([row["ci_low"], row["ci_high"]], [ci.low, ci.high])
        else:
            assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])

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
    assert row["d_unconditioned"] == want["d_all"]
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
    """The vectorized join equals postprocess.analyses._paired.paired on the reference data (per model)."""
    for options in (PER_MODEL, INCORRECT):
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
    """Section 4.4 footnote: Qwen, 545 questions with no error at orig or any CRF level (black has none), each model
    on its own set (question_set=per-model), and the paper's unconditioned test."""
    row = one(crf.enrichment_table(reference, PER_MODEL), model="qwen2vl")
    assert (row["n"], row["n_error"], row["strongest"]) == (545, 55, "crf38")
    measured = {
        "Fisher cell sens&VDG+1 (n=545)": row["a_unconditioned"],
        "Fisher cell sens&VDG<=0 (n=545)": row["b_unconditioned"],
        "Fisher cell stable&VDG+1 (n=545)": row["c_unconditioned"],
        "Fisher cell stable&VDG<=0 (n=545)": row["d_unconditioned"],
        "Fisher OR": row["odds_ratio_unconditioned"],
        "Fisher p (one-sided greater)": row["p_greater_unconditioned"],
        "VDG=+1 rate in sensitive %": row["vdg_plus_rate_sensitive_pct"],
        "VDG=+1 base rate %": row["vdg_plus_rate_base_pct_unconditioned"],
    }
    for quantity, got in measured.items():
        value, tol = expected[("4.4", quantity)]
        assert_allclose(got, value, atol=tol, err_msg=quantity)
    assert_allclose(row["p_two_sided_unconditioned"], fisher(11, 7, 159, 368).p_two_sided)
    # The headline test drops the questions wrong at orig from d (all of them land there by construction).
    n_wrong = row["n"] - row["n_orig_correct"]
    assert row["d"] == 368 - n_wrong and [row[c] for c in "abc"] == [11, 7, 159]
    ref = stats.fisher_exact([[11, 7], [159, row["d"]]], alternative="greater")
    assert row["p_greater"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert row["odds_ratio"] == pytest.approx(11 * row["d"] / (7 * 159))


# ------------------------------------------------------------------------------------ crf_vdg


def vdg_records(sizes: dict[str, int], seed: int = 7, p_error: float = 0.08):
    """m1: orig, black and three CRF levels (m2 has no black, m3 no CRF level), ``sizes[t]`` questions of type t;
    only m1 has errors, so the shared question sets are m1's own."""
    rng = np.random.default_rng(seed)
    plan = {"m1": ["orig", "black", "crf5", "crf23", "crf100"], "m2": ["orig", "crf18"], "m3": ["orig", "black"]}
    records = []
    for model, conditions in plan.items():
        i = 0
        for t, (task, size) in enumerate(sorted(sizes.items())):
            for _ in range(size):
                for condition in conditions:
                    u, p_right = rng.random(), 0.3 + 0.1 * t if condition != "black" else 0.3
                    pred = None if u < p_error and model == "m1" else "A" if rng.random() < p_right else "B"
                    records.append((model, condition, f"q{i:03d}", task, pred))
                i += 1
    return records


def naive_crf_vdg(records, missing, min_stratum):
    """m1's task types with >= min_stratum questions in flips and VDG: (types, flip counts, rates, VDGs), and the
    {type: smaller n} of every type, by hand (m1 is the only model with CRF and black: its own set is the shared)."""
    levels = ["crf5", "crf23", "crf100"]
    by = {}
    for model, condition, qid, task, pred in records:
        if model == "m1":
            by.setdefault(qid, {"task": task})[condition] = pred
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
    smaller = {t: min(sizes[t], gap_n[t]) for t in sizes}
    tasks = sorted(t for t in sizes if smaller[t] >= min_stratum)
    count = [flips[t] for t in tasks]
    rate = [flips[t] / (sizes[t] * len(levels)) for t in tasks]
    vdg = [gap_sum[t] / gap_n[t] for t in tasks]
    return tasks, count, rate, vdg, smaller


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_crf_vdg_matches_a_naive_spearman(missing):
    records = vdg_records({f"T{t}": 20 for t in range(6)})
    table = crf.crf_vdg_table(
        make_frame(records), ReportSettings(missing=missing, min_stratum=1, question_set="shared")
    )
    assert list(table.columns) == list(crf.VDG_COLUMNS)
    assert table["model"].tolist() == ["m1"]  # m2 has no black, m3 no CRF level
    row = table.iloc[0]
    assert row["levels"] == "crf5>crf23>crf100"
    tasks, count, rate, vdg, _ = naive_crf_vdg(records, missing, 1)
    assert row["n_task_types"] == len(tasks) == 6 and row["too_small"] == "" and row["reason"] == ""
    ref = stats.spearmanr(count, vdg)
    assert row["flip_spearman"] == pytest.approx(ref.statistic) and row["flip_p"] == pytest.approx(ref.pvalue)
    ref = stats.spearmanr(rate, vdg)
    assert row["flip_rate_spearman"] == pytest.approx(ref.statistic)
    assert row["flip_rate_p"] == pytest.approx(ref.pvalue)
    # The flips' shared set names every CRF level of the benchmark (m2 ran crf18).
    flips_rule = question_rule(["orig", "crf5", "crf18", "crf23", "crf100"], missing)
    assert row["question_rule"] == f"flips: {flips_rule}; VDG: {question_rule(['orig', 'black'], missing)}"


def test_crf_vdg_uses_task_types_of_at_least_min_stratum_questions_and_needs_five():
    """Exactly 30 questions enter (the default min_stratum), 29 do not; exactly 5 task types give a correlation."""
    sizes = {"T0": 30, "T1": 31, "T2": 30, "T3": 40, "T4": 30, "T5": 29}
    records = vdg_records(sizes, p_error=0.0)
    row = crf.crf_vdg_table(make_frame(records)).iloc[0]
    tasks, count, rate, vdg, _ = naive_crf_vdg(records, "exclude", 30)
    assert tasks == ["T0", "T1", "T2", "T3", "T4"] and row["n_task_types"] == 5 and row["min_stratum"] == 30
    assert row["too_small"] == "T5 (n=29)" and row["reason"] == ""
    ref = stats.spearmanr(count, vdg)
    assert row["flip_spearman"] == pytest.approx(ref.statistic) and row["flip_p"] == pytest.approx(ref.pvalue)
    assert row["flip_rate_spearman"] == pytest.approx(stats.spearmanr(rate, vdg).statistic)
    # Four task types of 30 or more: no correlation, and the reason says so.
    sizes["T4"] = 29
    row = crf.crf_vdg_table(make_frame(vdg_records(sizes, p_error=0.0))).iloc[0]
    assert row["n_task_types"] == 4 and row["too_small"] == "T4 (n=29); T5 (n=29)"
    assert math.isnan(row["flip_spearman"]) and math.isnan(row["flip_rate_p"])
    assert "4 task types with at least 30 questions" in row["reason"] and "needs 5" in row["reason"]


def test_crf_vdg_is_empty_without_black():
    no_black = make_frame([("m", c, "q1", "T", "A") for c in ("orig", "crf18")])
    assert crf.crf_vdg_table(no_black).empty


def test_on_a_graded_benchmark_a_changed_score_is_a_changed_prediction_and_flips_count_at_one_half():
    from postprocess.analyses.crf import flips_table, stability_table

    scores = {"q1": (1.0, 1.0), "q2": (1.0, 0.6), "q3": (0.6, 0.4), "q4": (0.0, 0.8)}  # (orig, crf28)

    def row(condition, question, score):
        return tidy_row("m", condition, question, "graded", status="ok", pred=None, answer="red", correct=score >= 0.5,
                        score=score, scoring="judge", task_type="T")  # fmt: skip

    frame = tidy_frame([row(c, q, s[i]) for q, s in scores.items() for i, c in enumerate(("orig", "crf28"))])
    stable = stability_table(frame).set_index("task_type").loc["Overall"]
    assert (stable["n"], stable["n_identical"]) == (4, 1)  # only q1 kept its score
    flips = flips_table(frame).set_index("task_type").loc["Overall"]
    assert (flips["c_to_i"], flips["i_to_c"]) == (1, 1)  # q3 falls below one half, q4 rises above it
    assert flips["scale"] == "graded score, correct when at least 0.5"
