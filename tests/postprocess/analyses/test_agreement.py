"""kappa, categories_by_task, models_right and models_right_transition against independent calculations."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa

from postprocess.analyses import ANALYSES
from postprocess.analyses._paired import question_rule
from postprocess.analyses.agreement import (
    CATEGORY_TEST_COLUMNS,
    KAPPA_COLUMNS,
    MODELS_RIGHT_COLUMNS,
    TRANSITION_COLUMNS,
    category_test_table,
    kappa_table,
    models_right_table,
    transition_table,
)
from postprocess.analyses.base import ReportSettings
from postprocess.analyses.mcnemar import mcnemar_table
from tests.helpers.frames import make_frame

MODELS = ("m1", "m2", "m3")


def random_records(seed: int = 5, n: int = 120, ragged: bool = True):
    """Three models on orig and black; with ``ragged`` model k lacks the last 5k questions."""
    rng = np.random.default_rng(seed)
    latent = rng.random(n)  # a shared difficulty, so that the models agree more than chance
    records = []
    for k, model in enumerate(MODELS):
        for condition in ("orig", "black"):
            for i in range(n - 5 * k * ragged):
                task = f"T{i % 4}"
                p = (0.75 if condition == "orig" else 0.4) * (0.4 + latent[i])
                draw = rng.random()
                outcome = "e" if draw < 0.04 else ("u" if draw < 0.06 else bool(rng.random() < min(p, 1)))
                records.append((model, condition, f"v{i:03d}-0", task, outcome))
    return records


def outcomes(records):
    """{(model, condition): {qid: outcome}} and {qid: task}."""
    out: dict[tuple[str, str], dict[str, object]] = {}
    task = {}
    for model, condition, qid, t, value in records:
        out.setdefault((model, condition), {})[qid] = value
        task[qid] = t
    return out, task


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_kappa_matches_statsmodels_on_hand_counted_tables(missing):
    records = random_records(ragged=False)  # a pair's models answer one question set (load_frame aligns them)
    table = kappa_table(make_frame(records), ReportSettings(missing=missing))
    assert list(table.columns) == list(KAPPA_COLUMNS)
    got, _ = outcomes(records)
    assert len(table) == 2 * 3  # 3 pairs x 2 conditions
    for row in table.itertuples():
        a, b = got[(row.model_a, row.condition)], got[(row.model_b, row.condition)]
        shared = sorted(set(a) & set(b))
        if missing == "exclude":  # the pair's mcnemar set: no error for either model under orig and black
            arms = [got[(m, c)] for m in (row.model_a, row.model_b) for c in ("orig", "black")]
            shared = [q for q in shared if all(arm[q] != "e" for arm in arms)]
        assert (row.n, row.n_excluded) == (len(shared), len(a) - len(shared))
        cells = Counter((a[q] is True, b[q] is True) for q in shared)
        t = np.array([[cells[(True, True)], cells[(True, False)]], [cells[(False, True)], cells[(False, False)]]])
        assert (row.both_right, row.a_only, row.b_only, row.both_wrong) == tuple(t.ravel())
        ref = cohens_kappa(t)
        assert row.kappa == pytest.approx(ref.kappa, rel=1e-12)
        assert row.kappa_se == pytest.approx(ref.std_kappa, rel=1e-10)
        assert row.ci_low == pytest.approx(ref.kappa_low, rel=1e-10)
        assert row.ci_high == pytest.approx(ref.kappa_upp, rel=1e-10)
        assert row.p_zero == pytest.approx(ref.pvalue_two_sided, rel=1e-8)


def test_kappa_is_undefined_when_both_models_are_constant():
    records = [(m, "orig", f"q{i}", "T", True) for m in ("a", "b") for i in range(5)]
    row = kappa_table(make_frame(records)).iloc[0]
    assert row["p_observed"] == 1 and math.isnan(row["kappa"]) and math.isnan(row["ci_low"])


def categories_of(records, model, missing):
    got, task = outcomes(records)
    o, b = got[(model, "orig")], got[(model, "black")]
    counts: Counter = Counter()
    for q in o:
        if missing == "exclude" and "e" in (o[q], b[q]):
            continue
        ro, rb = o[q] is True, b[q] is True
        counts[
            (task[q], {(True, False): "I", (True, True): "II", (False, True): "III", (False, False): "IV"}[(ro, rb)])
        ] += 1
    return counts


def test_categories_by_task_matches_scipy_chi2_contingency():
    records = random_records(n=400)
    table = category_test_table(make_frame(records))
    assert list(table.columns) == list(CATEGORY_TEST_COLUMNS)
    ps = []
    for row in table.itertuples():
        assert row.min_expected >= 5 and row.p_method == "chi-square" and row.p_chi2 == row.p
        assert row.too_small == "" and row.n_task_types == 4
        counts = categories_of(records, row.model, "exclude")
        tasks = sorted({t for t, _ in counts})
        cats = [c for c in ("I", "II", "III", "IV") if any(counts[(t, c)] for t in tasks)]
        obs = np.array([[counts[(t, c)] for c in cats] for t in tasks])
        ref = stats.chi2_contingency(obs, correction=False)
        assert row.chi2 == pytest.approx(ref.statistic, rel=1e-10)
        assert row.p == pytest.approx(ref.pvalue, rel=1e-8)
        assert row.df == ref.dof and row.n == obs.sum()
        assert row.cramers_v == pytest.approx(math.sqrt(ref.statistic / (obs.sum() * (min(obs.shape) - 1))))
        ps.append((row.model, ref.pvalue))
    from statsmodels.stats.multitest import multipletests

    # a model's Holm family is its own benchmarks: here one each, so p_holm is p (it never grows with other models)
    for model in table["model"].unique():
        mine = [p for m, p in ps if m == model]
        got = table.loc[table["model"] == model, "p_holm"].to_numpy(dtype=float)
        np.testing.assert_allclose(got, multipletests(mine, method="holm")[1])


def brute_poisson_binomial(ps):
    pmf = [0.0] * (len(ps) + 1)
    for pattern in itertools.product((0, 1), repeat=len(ps)):
        pmf[sum(pattern)] += math.prod(p if x else 1 - p for x, p in zip(pattern, ps, strict=True))
    return pmf


@pytest.mark.parametrize("missing", ["exclude", "incorrect"])
def test_models_right_and_transition_match_a_hand_count(missing):
    records = random_records()
    frame = make_frame(records)
    right = models_right_table(frame, ReportSettings(missing=missing))
    trans = transition_table(frame, ReportSettings(missing=missing))
    assert list(right.columns) == list(MODELS_RIGHT_COLUMNS)
    assert list(trans.columns) == list(TRANSITION_COLUMNS)
    got, _ = outcomes(records)
    shared = sorted(set.intersection(*(set(got[(m, c)]) for m in MODELS for c in ("orig", "black"))))
    if missing == "exclude":
        shared = [q for q in shared if all(got[(m, c)][q] != "e" for m in MODELS for c in ("orig", "black"))]
    n = len(shared)
    counts = {c: [sum(got[(m, c)][q] is True for m in MODELS) for q in shared] for c in ("orig", "black")}
    for condition in ("orig", "black"):
        rows = right[right["condition"] == condition].sort_values("n_right")
        accs = [sum(got[(m, condition)][q] is True for q in shared) / n for m in MODELS]
        pmf = brute_poisson_binomial(accs)
        observed = Counter(counts[condition])
        assert rows["n"].unique().tolist() == [n]
        assert rows["observed"].tolist() == [observed[r] for r in range(4)]
        np.testing.assert_allclose(rows["expected"].to_numpy(dtype=float), [n * p for p in pmf], rtol=1e-10)
        ref = stats.chisquare([observed[r] for r in range(4)], [n * p for p in pmf])
        if min(n * p for p in pmf) >= 5:
            assert rows["chi2"].iloc[0] == pytest.approx(ref.statistic, rel=1e-10)
        assert rows["min_expected"].iloc[0] == pytest.approx(min(n * p for p in pmf if p > 0))
        if min(n * p for p in pmf) >= 5:
            assert rows["p"].iloc[0] == pytest.approx(ref.pvalue, rel=1e-8) and rows["p_method"].iloc[0] == "chi-square"
        else:
            assert rows["p_method"].iloc[0] == "chi-square, sparse n_right values pooled"
        assert (rows["question_rule"] == question_rule(["orig", "black"], missing)).all()
    assert (trans["question_rule"] == question_rule(["orig", "black"], missing)).all()
    pairs = Counter(zip(counts["black"], counts["orig"], strict=True))
    assert len(trans) == 16 and trans["n_questions"].sum() == n
    for row in trans.itertuples():
        assert row.n_questions == pairs[(row.right_black, row.right_orig)]
        row_total = sum(v for (r, _), v in pairs.items() if r == row.right_black)
        if row_total:
            assert row.share_of_black == pytest.approx(row.n_questions / row_total)


def test_models_right_pools_sparse_values_before_the_chi_square():
    # Three models on 40 questions: expected counts at 0 and 3 models right fall below 5.
    rng = np.random.default_rng(11)
    cols = {m: rng.random(40) < p for m, p in (("m1", 0.8), ("m2", 0.85), ("m3", 0.3))}
    records = [
        (m, c, f"v{i:02d}-0", "T", bool(col[i]))
        for c in ("orig", "black")
        for m, col in cols.items()
        for i in range(40)
    ]
    row = models_right_table(make_frame(records)).query("condition == 'orig'").iloc[0]
    observed = np.bincount(sum(col.astype(int) for col in cols.values()), minlength=4)
    expected = 40 * np.array(brute_poisson_binomial([col.mean() for col in cols.values()]))
    assert expected.min() < 5 and row["min_expected"] == pytest.approx(expected.min())
    # Pool by hand, from 0 right up, until each group is expected at least 5 times.
    obs, exp = [], []
    for o, e in zip(observed, expected, strict=True):
        if not exp or exp[-1] >= 5:
            obs.append(0), exp.append(0.0)
        obs[-1] += o
        exp[-1] += e
    if exp[-1] < 5:
        obs[-2:], exp[-2:] = [sum(obs[-2:])], [sum(exp[-2:])]
    ref = stats.chisquare(obs, exp)
    assert row["p_method"] == "chi-square, sparse n_right values pooled" and row["n_categories"] == len(obs)
    assert row["chi2"] == pytest.approx(ref.statistic, rel=1e-10) and row["p"] == pytest.approx(ref.pvalue, rel=1e-8)
    assert row["df"] == len(obs) - 1


def test_kappa_mcnemar_and_accuracy_of_a_pair_count_the_same_questions():
    # m1 has errors on 9 questions under orig only: McNemar drops them from every condition (orig is an anchor).
    rng = np.random.default_rng(3)
    records = [
        (m, c, f"v{i:03d}-0", f"T{i % 2}", "e" if (m == "m1" and c == "orig" and i < 9) else bool(rng.random() < 0.6))
        for m in ("m1", "m2")
        for c in ("orig", "black", "crf28")
        for i in range(80)
    ]
    frame = make_frame(records)
    kappa = kappa_table(frame).set_index(["model_a", "model_b", "condition"])
    mcn = mcnemar_table(frame).set_index(["model_a", "model_b", "condition"])
    assert len(kappa) == len(mcn) == 3
    for key, row in mcn.iterrows():
        assert kappa.loc[key, "n"] == row["n"] == 80 - 9
        assert kappa.loc[key, "question_rule"] == row["question_rule"]
        assert (kappa.loc[key, "acc_a"], kappa.loc[key, "acc_b"]) == (row["acc_a"], row["acc_b"])
        got, _ = outcomes(records)
        kept = [f"v{i:03d}-0" for i in range(9, 80)]
        assert row["acc_b"] == np.mean([got[("m2", key[2])][q] is True for q in kept])


def test_kappa_refuses_pairs_on_different_question_sets():
    with pytest.raises(ValueError, match="answered different question sets"):
        kappa_table(make_frame(random_records()))


def test_categories_by_task_leaves_small_task_types_out_and_permutes_when_expected_counts_are_small():
    rng = np.random.default_rng(8)
    # T0 and T1 (40 questions each) enter; T2 (6) is too small. Category III is rare: expected counts < 5.
    tasks = ["T0"] * 40 + ["T1"] * 40 + ["T2"] * 6
    records = []
    for i, task in enumerate(tasks):
        o = bool(rng.random() < (0.8 if task == "T0" else 0.5))
        b = bool(rng.random() < 0.1) if not o else bool(rng.random() < 0.5)
        records += [("m1", "orig", f"v{i:03d}-0", task, o), ("m1", "black", f"v{i:03d}-0", task, b)]
    row = category_test_table(make_frame(records), ReportSettings(min_stratum=30)).iloc[0]
    assert row["too_small"] == "T2 (n=6)" and row["n_task_types"] == 2 and row["n_tested"] == 80 and row["n"] == 86
    counts = categories_of(records, "m1", "exclude")
    cats = [c for c in ("I", "II", "III", "IV") if any(counts[(t, c)] for t in ("T0", "T1"))]
    obs = np.array([[counts[(t, c)] for c in cats] for t in ("T0", "T1")])
    ref = stats.chi2_contingency(obs, correction=False)
    assert ref.expected_freq.min() < 5 and row["min_expected"] == pytest.approx(ref.expected_freq.min())
    assert row["chi2"] == pytest.approx(ref.statistic) and row["p_chi2"] == pytest.approx(ref.pvalue)
    assert row["p_method"] == "monte carlo permutation" and row["n_permutations"] == 10_000
    # an independent permutation p (scipy's own stream): the two estimates differ by MC error only
    perm = stats.chi2_contingency(
        obs, correction=False, method=stats.PermutationMethod(n_resamples=20_000, rng=np.random.default_rng(1))
    )
    se = math.sqrt(perm.pvalue * (1 - perm.pvalue) / 10_000)
    assert abs(row["p"] - perm.pvalue) < 4 * 1.23 * se + 1e-3
    assert row["p_mc_se"] == pytest.approx(math.sqrt(row["p"] * (1 - row["p"]) / 10_000))
    # renaming the model leaves the seed and so the p unchanged
    renamed = category_test_table(make_frame([("zz", *r[1:]) for r in records]), ReportSettings(min_stratum=30)).iloc[0]
    assert renamed["p"] == row["p"]


def test_registered_in_report_order():
    names = [a.name for a in ANALYSES]
    for name in ("kappa", "categories_by_task", "models_right", "models_right_transition"):
        assert name in names
    one_model = make_frame([("m", c, "q", "T", True) for c in ("orig", "black")])
    assert models_right_table(one_model).empty and transition_table(one_model).empty and kappa_table(one_model).empty


def test_kappa_of_the_textbook_example_and_its_standard_errors_by_formula():
    """Wikipedia's example (50 proposals: 20 both yes, 5 and 10 split, 15 both no): p_o = 0.7, p_e = 0.5, kappa =
    0.4; the standard errors from Fleiss, Cohen & Everitt (1969), written out here."""
    from postprocess.analyses.agreement import cohen_kappa_2x2

    got = cohen_kappa_2x2(20, 5, 10, 15)
    p = np.array([[20, 5], [10, 15]]) / 50
    row, col = p.sum(axis=1), p.sum(axis=0)
    p_e, kappa = 0.5, 0.4
    diag_terms = sum(p[i, i] * (1 - (row[i] + col[i]) * (1 - kappa)) ** 2 for i in range(2))
    off_terms = (1 - kappa) ** 2 * sum(p[i, j] * (col[i] + row[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    var = (diag_terms + off_terms - (kappa - p_e * (1 - kappa)) ** 2) / ((1 - p_e) ** 2 * 50)
    var0 = (p_e + p_e**2 - sum(col[i] * row[i] * (col[i] + row[i]) for i in range(2))) / ((1 - p_e) ** 2 * 50)
    assert got["p_observed"] == pytest.approx(0.7) and got["p_expected"] == pytest.approx(0.5)
    assert got["kappa"] == pytest.approx(0.4, abs=1e-12)
    assert got["se"] == pytest.approx(var**0.5, abs=1e-12)
    assert got["se0"] == pytest.approx(var0**0.5, abs=1e-12)


def test_kappa_arithmetic_is_statsmodels_to_the_last_bit():
    """``cohen_kappa_2x2`` repeats ``cohens_kappa``'s operations without its results object: the same floats."""
    from postprocess.analyses.agreement import cohen_kappa_2x2

    rng = np.random.default_rng(45)
    tables = [rng.integers(0, 400, 4) for _ in range(300)] + [np.array(t) for t in ([5, 0, 0, 5], [1, 2, 3, 0])]
    for cells in tables:
        got = cohen_kappa_2x2(*(int(c) for c in cells))
        if np.isnan(got["kappa"]):
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            ref = cohens_kappa(cells.reshape(2, 2).astype(float))
        assert got["kappa"] == float(ref.kappa)
        assert got["se"] == math.sqrt(max(float(ref.var_kappa), 0.0))
        assert got["se0"] == math.sqrt(max(float(ref.var_kappa0), 0.0))
