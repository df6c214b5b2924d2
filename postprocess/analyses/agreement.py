"""Do models get the same questions right? Kappa, grounding by task type, and how many models are right.

Four tables:

``kappa``: Cohen's kappa between every pair of models of a benchmark, per condition both ran, on
correct / incorrect per question. Question set: the very set of the ``mcnemar`` row of that pair and
condition (``mcnemar.pair_tests``): under ``missing=exclude`` a question either model has an error for,
under this condition or under orig or black, is dropped; under ``incorrect`` an error is scored wrong.
So kappa, McNemar and the pair's accuracies of one pair and condition count the same n questions.
Kappa is not stratified by task type, so ``min_stratum`` does not apply to it. The CI is the
asymptotic one: kappa +- z * SE, SE the large-sample standard error of Fleiss, Cohen & Everitt
(1969), as ``statsmodels.stats.inter_rater.cohens_kappa`` computes it; ``p_zero`` tests
kappa = 0 with the SE under that null.

``categories_by_task``: per (model, benchmark), Pearson's chi-square test of independence of the
outcome categories I-IV (``categories``: I right with the video only, II both, III black only, IV
neither) and the task type: is grounding task-dependent? Counted on the model's questions of the
``categories`` table (no error under orig and black for this model, missing=exclude). Task types
with fewer than ``options.min_stratum`` questions are left out of the test (and listed with their
n in ``too_small``); categories no tested question falls in carry no information and are dropped.
The statistic is ``scipy.stats.chi2_contingency``'s (no continuity correction). Its chi-square
p-value needs every expected count >= 5 (Cochran's rule); when one is smaller the p-value is a
Monte Carlo permutation one (task-type labels shuffled over the questions, 10,000 permutations,
seeded from the benchmark and the question set; its MC standard error is reported), and
``p_method`` says which. Pooled rows are not tested: pooling counts each question once per model,
and those counts are not independent.

``models_right``: per benchmark, on the questions every model (with orig and black) has and, under
``exclude``, answered in both arms for every model: how many of the M models answer each question
right, under orig and under black, against the distribution independent models with the same
accuracies would give (the Poisson-binomial of the M accuracies on that set). More questions at
0 and M than expected means the models succeed and fail on the same questions. Pearson's chi-square
compares the two; when some n_right value is expected fewer than 5 times (Cochran's rule; the tails,
with many models) adjacent values are pooled until every group is expected at least 5 times, and
``p_method`` says so.

``models_right_transition``: on the same set, the number of questions with r models right under
black and s under orig, for every (r, s): where answers that need no video go when the video comes.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from postprocess.analyses._paired import QUESTION_SET_PER_MODEL, condition_sort_key, question_rule, question_set_seed
from postprocess.analyses.base import Analysis, ReportSettings, conditions_needed, empty, memo_by_frame
from postprocess.analyses.categories import CATEGORIES
from postprocess.analyses.mcnemar import pair_tests, pair_tests_and_sets, paired_wides
from postprocess.analyses.vdg import conventions, per_question
from postprocess.stats import chi2_counts, chi2_independence, holm, normal_sf, two_sided_z

ORIG, BLACK = "orig", "black"

KAPPA_COLUMNS: dict[str, str] = {
    "benchmark": "benchmark name",
    "condition": "condition both models ran",
    "model_a": "first model of the pair (alphabetical)",
    "model_b": "second model of the pair",
    "n": "questions compared (question_rule): the mcnemar row's set of this pair and condition, no error for either "
    "model under this condition, orig and black (missing_policy=exclude), or all (incorrect)",
    "n_excluded": "questions dropped because either model has an error under this condition, orig or black",
    "question_rule": "which questions the row compares (the pair's own set, as mcnemar)",
    "both_right": "questions both models got right",
    "a_only": "questions model_a got right and model_b wrong",
    "b_only": "questions model_a got wrong and model_b right",
    "both_wrong": "questions both models got wrong",
    "acc_a": "model_a's accuracy on the n questions",
    "acc_b": "model_b's accuracy on the n questions",
    "p_observed": "share of the n questions on which the two agree (both right or both wrong)",
    "p_expected": "agreement expected by chance from the two accuracies: acc_a * acc_b + (1 - acc_a) * (1 - acc_b)",
    "kappa": "Cohen's kappa (p_observed - p_expected) / (1 - p_expected); empty when p_expected = 1",
    "kappa_se": "asymptotic standard error of kappa (Fleiss, Cohen & Everitt 1969; statsmodels cohens_kappa)",
    "ci_low": "kappa - z * kappa_se (asymptotic normal CI)",
    "ci_high": "kappa + z * kappa_se",
    "p_zero": "two-sided p-value of kappa = 0 (z test with the SE under that null)",
    "ci_level": "confidence level of the CI",
    "missing_policy": "exclude or incorrect",
}

CATEGORY_TEST_COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "n": "questions counted (the categories table's Overall n)",
    "question_rule": "which questions are counted (the model's own orig/black set, as the categories table)",
    "n_tested": "questions in the test: those of the task types with at least min_stratum questions",
    "n_task_types": "task types in the test (those with at least min_stratum questions)",
    "too_small": "task types left out of the test, fewer than min_stratum questions, each with its n "
    "('T1 (n=7); T2 (n=3)'); empty when none",
    "min_stratum": "fewest questions a task type needs to enter the test",
    "categories": "the categories in the test (those some tested question falls in), joined by ','",
    "chi2": "Pearson chi-square of task type x category counts against independence (no continuity correction)",
    "df": "(task types - 1) * (categories - 1)",
    "p_chi2": "asymptotic p-value of chi2 (chi-square with df; scipy.stats.chi2_contingency), valid only when "
    "every expected count is at least 5",
    "p": "the test's p-value: p_chi2 when every expected count is at least 5 (Cochran's rule), else the Monte Carlo "
    "permutation p-value; empty when fewer than 2 task types or categories",
    "p_method": "how p was computed: 'chi-square' or 'monte carlo permutation' (task-type labels shuffled over the "
    "tested questions, margins fixed; p = (1 + #(permuted chi2 >= chi2)) / (1 + n_permutations))",
    "p_mc_se": "Monte Carlo standard error of p, sqrt(p (1 - p) / n_permutations) (0 for the chi-square)",
    "n_permutations": "permutations of the Monte Carlo p-value (0 for the chi-square)",
    "p_holm": "p Holm-adjusted over the model's own benchmarks (a model's family: it never grows with other models)",
    "cramers_v": "Cramer's V: sqrt(chi2 / (n_tested * (min(task types, categories) - 1)))",
    "min_expected": "smallest expected cell count (below 5 the chi-square approximation fails: p_method says what "
    "was used instead)",
    "missing_policy": "exclude or incorrect",
}

MODELS_RIGHT_COLUMNS: dict[str, str] = {
    "benchmark": "benchmark name",
    "condition": "orig or black",
    "models": "the models counted, joined by ','",
    "n_models": "number of models M",
    "question_rule": "the questions counted: one set for both conditions and every model",
    "n": "questions every model has and (missing_policy=exclude) answered under orig and black",
    "n_right": "number of models that answer the question right (0..M)",
    "observed": "questions with exactly n_right models right",
    "share": "observed / n",
    "expected": "n * P(n_right) for independent models with these accuracies (Poisson-binomial)",
    "expected_share": "expected / n",
    "chi2": "Pearson chi-square of the observed counts against expected over n_categories categories (values "
    "expected 0 and observed 0 left out); empty when some value expected 0 is observed",
    "df": "n_categories - 1 (not reduced for the M accuracies estimated from the same data)",
    "p": "p-value of chi2",
    "p_method": "'chi-square' when every expected count is at least 5 (Cochran's rule); else 'chi-square, sparse "
    "n_right values pooled': adjacent n_right values joined, from 0 up, until each group is expected at least 5 "
    "times (a last short group joins the one before)",
    "n_categories": "categories the chi-square compares (n_right values, or groups of them when pooled)",
    "min_expected": "smallest non-zero expected count of the condition, before pooling",
    "missing_policy": "exclude or incorrect",
}

TRANSITION_COLUMNS: dict[str, str] = {
    "benchmark": "benchmark name",
    "models": "the models counted, joined by ','",
    "n_models": "number of models M",
    "question_rule": "the questions counted (the models_right set)",
    "n": "questions (the models_right set)",
    "right_black": "models right under black (0..M)",
    "right_orig": "models right under orig (0..M)",
    "n_questions": "questions with right_black models right under black and right_orig under orig",
    "share_of_black": "n_questions / questions with right_black models right under black",
    "missing_policy": "exclude or incorrect",
}


def cohen_kappa_2x2(both_right: int, a_only: int, b_only: int, both_wrong: int) -> dict[str, float]:
    """Kappa of a 2x2 table (rows: model_a right / wrong, columns: model_b right / wrong) with its SEs.

    Returns kappa, p_observed, p_expected, se (asymptotic, Fleiss, Cohen & Everitt 1969) and se0
    (under kappa = 0), as ``statsmodels.stats.inter_rater.cohens_kappa`` computes them; NaN where undefined
    (p_expected = 1, no questions).
    """
    table = np.array([[both_right, a_only], [b_only, both_wrong]], dtype=np.float64)
    n = table.sum()
    nan = {"kappa": np.nan, "p_observed": np.nan, "p_expected": np.nan, "se": np.nan, "se0": np.nan}
    if n == 0:
        return nan
    probs = table / n
    row, col = probs.sum(axis=1), probs.sum(axis=0)
    p_o = float(np.trace(probs))
    p_e = float(row @ col)
    if p_e >= 1.0:
        return {**nan, "p_observed": p_o, "p_expected": p_e}
    kappa, var_kappa, var_kappa0 = _simple_kappa(table)
    return {
        "kappa": kappa,
        "p_observed": p_o,
        "p_expected": p_e,
        # a variance of 0 (every question agreed on) comes out a rounding below it, where a square root is NaN
        "se": math.sqrt(max(var_kappa, 0.0)),
        "se0": math.sqrt(max(var_kappa0, 0.0)),
    }


def _simple_kappa(table: np.ndarray) -> tuple[float, float, float]:
    """(kappa, var_kappa, var_kappa0) of a square float table, by the very operations of statsmodels'
    ``cohens_kappa(table)`` (simple kappa; statsmodels 0.14), without the results object whose frozen normal
    distributions cost ten times the arithmetic (tests/postprocess/analyses/test_agreement.py checks the two
    agree to the last bit)."""
    agree = np.diag(table).sum()
    nobs = table.sum()
    probs = table / nobs
    probs_diag = np.diag(probs)
    freq_row = table.sum(1) / nobs
    freq_col = table.sum(0) / nobs
    prob_exp = freq_col * freq_row[:, None]
    agree_exp = np.diag(prob_exp).sum()
    kappa = (agree / nobs - agree_exp) / (1 - agree_exp)
    term_a = probs_diag * (1 - (freq_row + freq_col) * (1 - kappa)) ** 2
    term_a = term_a.sum()
    term_b = probs * (freq_col[:, None] + freq_row) ** 2
    d_idx = np.arange(table.shape[0])
    term_b[d_idx, d_idx] = 0
    term_b = (1 - kappa) ** 2 * term_b.sum()
    term_c = (kappa - agree_exp * (1 - kappa)) ** 2
    var_kappa = (term_a + term_b - term_c) / (1 - agree_exp) ** 2 / nobs
    term_c0 = freq_col * freq_row * (freq_col + freq_row)
    var_kappa0 = agree_exp + agree_exp**2 - term_c0.sum()
    var_kappa0 /= (1 - agree_exp) ** 2 * nobs
    return float(kappa), float(var_kappa), float(var_kappa0)


def _check_unique(group: pd.DataFrame, keys: list[str]) -> None:
    dup = group.duplicated(keys)
    if dup.any():
        row = group[dup.to_numpy()].iloc[0]
        raise ValueError(
            f"model {row['model']!r}, benchmark {row['benchmark']!r}: condition {row['condition']!r} has more than "
            f"one row for question {row['question_id']!r}; de-duplicate the frame"
        )


def kappa_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Cohen's kappa of every pair of models per (benchmark, condition); columns as in ``KAPPA_COLUMNS``.

    The pair's questions and 2x2 counts are ``mcnemar.pair_tests``' (one rule decides a pair's questions), so a
    kappa row and the mcnemar row of that pair and condition count the same n questions.
    """
    tests = pair_tests(frame, options)
    if tests.empty:
        return empty(KAPPA_COLUMNS)
    z = two_sided_z(options.ci_level)
    rows = []
    for t in tests.itertuples(index=False):
        stats = cohen_kappa_2x2(int(t.b11), int(t.b10), int(t.b01), int(t.b00))
        rows.append(
            {
                "benchmark": t.benchmark,
                "condition": t.condition,
                "model_a": t.model_a,
                "model_b": t.model_b,
                "n": int(t.n),
                "n_excluded": int(t.n_excluded),
                "both_right": int(t.b11),
                "a_only": int(t.b10),
                "b_only": int(t.b01),
                "both_wrong": int(t.b00),
                "acc_a": t.acc_a,
                "acc_b": t.acc_b,
                "p_observed": stats["p_observed"],
                "p_expected": stats["p_expected"],
                "kappa": stats["kappa"],
                "kappa_se": stats["se"],
                "ci_low": stats["kappa"] - z * stats["se"],
                "ci_high": stats["kappa"] + z * stats["se"],
                "p_zero": abs(stats["kappa"]) / stats["se0"] if stats["se0"] > 0 else np.nan,  # |z| for now
                **conventions(KAPPA_COLUMNS, options, rule=t.question_rule),
            }
        )
    rows.sort(key=lambda r: (r["benchmark"], condition_sort_key(r["condition"]), r["model_a"], r["model_b"]))
    table = pd.DataFrame(rows, columns=list(KAPPA_COLUMNS))
    table["p_zero"] = 2.0 * normal_sf(table["p_zero"].to_numpy(dtype=float))  # NaN stays NaN
    return table


#: Cochran's rule: the chi-square approximation needs every expected count at least this; below it the p-value is
#: a Monte Carlo permutation one.
MIN_EXPECTED = 5.0
#: Permutations of the Monte Carlo p-value: its standard error sqrt(p (1 - p) / N) is at most 0.005.
N_PERMUTATIONS = 10_000
P_CHI2 = "chi-square"
P_PERMUTATION = "monte carlo permutation"
P_POOLED = "chi-square, sparse n_right values pooled"


def _chi2_statistics(tables: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Pearson's statistic of each of a stack of tables against one expected table (equal margins)."""
    return ((tables - expected) ** 2 / expected).sum(axis=(-2, -1))


def permutation_p(rows: np.ndarray, cols: np.ndarray, observed: float, n_permutations: int, seed: int) -> float:
    """Monte Carlo permutation p-value of Pearson's chi-square of independence of two labels per question: the row
    labels are shuffled over the questions (margins fixed), ``(1 + #(chi2 >= observed)) / (1 + N)``."""
    n_rows, n_cols = int(rows.max()) + 1, int(cols.max()) + 1
    n = rows.shape[0]
    expected = np.outer(np.bincount(rows, minlength=n_rows), np.bincount(cols, minlength=n_cols)) / n
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_permutations, 4_000_000 // max(n, 1)))
    hits, done = 0, 0
    while done < n_permutations:
        size = min(chunk, n_permutations - done)
        shuffled = rng.permuted(np.broadcast_to(rows, (size, n)), axis=1)
        flat = (np.arange(size)[:, None] * (n_rows * n_cols) + shuffled * n_cols + cols[None, :]).ravel()
        tables = np.bincount(flat, minlength=size * n_rows * n_cols).reshape(size, n_rows, n_cols)
        # a relative tolerance: a permuted table equal to the observed one must count, whatever the rounding
        hits += int((_chi2_statistics(tables, expected) >= observed * (1 - 1e-9)).sum())
        done += size
    return (1 + hits) / (1 + n_permutations)


def _too_small(sizes: pd.Series, minimum: int) -> str:
    return "; ".join(f"{t} (n={int(k)})" for t, k in sizes.items() if k < minimum)


def category_test_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Chi-square test of categories I-IV against task type per (model, benchmark); ``CATEGORY_TEST_COLUMNS``."""
    questions = per_question(frame, options)
    if questions.empty:
        return empty(CATEGORY_TEST_COLUMNS)
    questions = questions[~questions["excluded"].to_numpy(dtype=bool)]
    o = questions["correct_orig"].to_numpy(dtype=bool)
    b = questions["correct_black"].to_numpy(dtype=bool)
    category = np.where(o, np.where(b, 1, 0), np.where(b, 2, 3))  # I, II, III, IV
    per_model_rule = question_rule([ORIG, BLACK], options.missing, QUESTION_SET_PER_MODEL)
    questions = questions.assign(category=category)
    names = list(CATEGORIES)
    rows = []
    for (model, benchmark), group in questions.groupby(["model", "benchmark"], sort=True):
        typed = group[group["task_type"].notna()]
        sizes = typed.groupby("task_type", sort=True).size()
        tested = typed[typed["task_type"].isin(sizes.index[sizes >= options.min_stratum])]
        task, _ = pd.factorize(tested["task_type"], sort=True)
        present = np.bincount(tested["category"].to_numpy(dtype=np.int64), minlength=len(names)) > 0
        cat = np.cumsum(present)[tested["category"].to_numpy(dtype=np.int64)] - 1  # categories with a question
        row = {
            "model": model,
            "benchmark": benchmark,
            "n": len(group),
            "n_tested": len(tested),
            "n_task_types": int((sizes >= options.min_stratum).sum()),
            "too_small": _too_small(sizes, options.min_stratum),
            "min_stratum": options.min_stratum,
            "categories": ",".join(c for c, k in zip(names, present, strict=True) if k),
            "chi2": np.nan,
            "df": np.nan,
            "p_chi2": np.nan,
            "p": np.nan,
            "p_method": "",
            "p_mc_se": np.nan,
            "n_permutations": 0,
            "p_holm": np.nan,
            "cramers_v": np.nan,
            "min_expected": np.nan,
            **conventions(CATEGORY_TEST_COLUMNS, options, rule=per_model_rule),
        }
        counts = np.zeros((int(task.max()) + 1 if task.size else 0, int(present.sum())), dtype=np.int64)
        np.add.at(counts, (task, cat), 1)
        if counts.shape[0] >= 2 and counts.shape[1] >= 2:
            res, expected = chi2_independence(counts)
            row["chi2"], row["p_chi2"], row["df"] = res.chi2, res.p, res.df
            row["cramers_v"] = math.sqrt(res.chi2 / (counts.sum() * (min(counts.shape) - 1)))
            row["min_expected"] = float(expected.min())
            if row["min_expected"] >= MIN_EXPECTED:
                row["p"], row["p_method"], row["p_mc_se"] = res.p, P_CHI2, 0.0
            else:
                seed = question_set_seed(options, "categories_by_task", benchmark, question_ids=tested["question_id"])
                p = permutation_p(task, cat, res.chi2, N_PERMUTATIONS, seed)
                row["p"], row["p_method"], row["n_permutations"] = p, P_PERMUTATION, N_PERMUTATIONS
                row["p_mc_se"] = math.sqrt(p * (1 - p) / N_PERMUTATIONS)
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(CATEGORY_TEST_COLUMNS))
    for _, idx in table.groupby("model").groups.items():  # a model's family: its own benchmarks
        tested = [i for i in idx if np.isfinite(table.at[i, "p"])]
        if tested:
            table.loc[tested, "p_holm"] = holm(table.loc[tested, "p"].to_numpy(dtype=float))
    return table


def poisson_binomial_pmf(probabilities: np.ndarray) -> np.ndarray:
    """P(exactly r successes), r = 0..M, of independent Bernoulli(p_i) (exact convolution)."""
    pmf = np.ones(1)
    for p in np.asarray(probabilities, dtype=np.float64):
        pmf = np.convolve(pmf, [1.0 - p, p])
    return pmf


@memo_by_frame
def _shared_counts(frame: pd.DataFrame, options: ReportSettings) -> list[tuple[str, list[str], np.ndarray, np.ndarray]]:
    """``_each_shared_count`` as a list, built once per frame for both models-right tables."""
    return list(_each_shared_count(frame, options))


def _each_shared_count(frame: pd.DataFrame, options: ReportSettings):
    """Per benchmark: (models, question x model right under black, under orig) on the models_right set."""
    sub = frame[frame["condition"].isin([ORIG, BLACK])]
    for benchmark, group in sub.groupby("benchmark", sort=True):
        ran = group.groupby("model")["condition"].nunique() == 2  # both: the group holds orig and black only
        models = sorted(str(m) for m in ran.index[ran.to_numpy(dtype=bool)])
        if len(models) < 2:
            continue
        group = group[group["model"].isin(models)]
        _check_unique(group, ["condition", "model", "question_id"])
        columns = pd.MultiIndex.from_product([[ORIG, BLACK], models])
        status = group.pivot(index="question_id", columns=["condition", "model"], values="status").reindex(
            columns=columns
        )
        correct = group.pivot(index="question_id", columns=["condition", "model"], values="correct").reindex(
            columns=columns
        )
        keep = status.notna().to_numpy().all(axis=1)
        if options.missing == "exclude":
            keep &= ~(status == "error").to_numpy().any(axis=1)
        right = correct.astype("boolean").fillna(False).to_numpy(dtype=bool)[keep]
        m = len(models)
        yield benchmark, models, right[:, m:], right[:, :m]


def pool_sparse_categories(expected: np.ndarray, min_expected: float = 5.0) -> np.ndarray:
    """A group index per category: adjacent categories (in n_right order) joined from the left until each group
    is expected at least ``min_expected`` times; a last group short of it joins the one before. Categories
    expected 0 times get -1 (left out)."""
    groups = np.full(expected.shape[0], -1, dtype=np.int64)
    group, total = 0, 0.0
    for i in np.flatnonzero(expected > 0):
        groups[i] = group
        total += float(expected[i])
        if total >= min_expected:
            group, total = group + 1, 0.0
    if 0 < total < min_expected and group > 0:
        groups[groups == group] = group - 1
    return groups


def _independence_test(right: np.ndarray) -> dict:
    """chi2, df, p and how p was computed for the number of models right per question against independence."""
    n, m = right.shape
    observed = np.bincount(right.sum(axis=1), minlength=m + 1)
    expected = n * poisson_binomial_pmf(right.mean(axis=0))
    out = {"observed": observed, "expected": expected, "chi2": np.nan, "df": np.nan, "p": np.nan, "p_method": ""}
    out |= {"n_categories": 0, "min_expected": float(expected[expected > 0].min())}
    if np.any((expected == 0) & (observed > 0)):
        return out
    method = P_CHI2
    obs, exp = observed[expected > 0], expected[expected > 0]
    if out["min_expected"] < MIN_EXPECTED:
        groups = pool_sparse_categories(expected)
        kept = groups >= 0
        obs = np.bincount(groups[kept], weights=observed[kept]).astype(np.int64)
        exp = np.bincount(groups[kept], weights=expected[kept])
        method = P_POOLED
    out["n_categories"] = int(obs.shape[0])
    if obs.shape[0] < 2:
        return out
    test = chi2_counts(obs, exp)
    return out | {"chi2": test.chi2, "df": test.df, "p": test.p, "p_method": method}


def models_right_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """How many models are right per question, against independence; ``MODELS_RIGHT_COLUMNS``."""
    rows = []
    rule = question_rule([ORIG, BLACK], options.missing)
    for benchmark, models, black, orig in _shared_counts(frame, options):
        n, m = black.shape[0], len(models)
        if n == 0:
            continue
        for condition, right in ((ORIG, orig), (BLACK, black)):
            test = _independence_test(right)
            observed, expected = test.pop("observed"), test.pop("expected")
            for r in range(m + 1):
                rows.append(
                    {
                        "benchmark": benchmark,
                        "condition": condition,
                        "models": ",".join(models),
                        "n_models": m,
                        "n": n,
                        "n_right": r,
                        "observed": int(observed[r]),
                        "share": observed[r] / n,
                        "expected": float(expected[r]),
                        "expected_share": float(expected[r] / n),
                        **test,
                        **conventions(MODELS_RIGHT_COLUMNS, options, rule=rule),
                    }
                )
    if not rows:
        return empty(MODELS_RIGHT_COLUMNS)
    return pd.DataFrame(rows, columns=list(MODELS_RIGHT_COLUMNS))


def transition_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Questions by (models right under black, under orig); columns as in ``TRANSITION_COLUMNS``."""
    rows = []
    rule = question_rule([ORIG, BLACK], options.missing)
    for benchmark, models, black, orig in _shared_counts(frame, options):
        n, m = black.shape[0], len(models)
        if n == 0:
            continue
        counts = np.zeros((m + 1, m + 1), dtype=np.int64)
        np.add.at(counts, (black.sum(axis=1), orig.sum(axis=1)), 1)
        for r in range(m + 1):
            total = counts[r].sum()
            for s in range(m + 1):
                rows.append(
                    {
                        "benchmark": benchmark,
                        "models": ",".join(models),
                        "n_models": m,
                        "n": n,
                        "right_black": r,
                        "right_orig": s,
                        "n_questions": int(counts[r, s]),
                        "share_of_black": counts[r, s] / total if total else np.nan,
                        **conventions(TRANSITION_COLUMNS, options, rule=rule),
                    }
                )
    if not rows:
        return empty(TRANSITION_COLUMNS)
    return pd.DataFrame(rows, columns=list(TRANSITION_COLUMNS))


ANALYSES = (
    Analysis(
        "kappa",
        "Cohen's kappa between every pair of models per condition on correct/incorrect, with an asymptotic CI.",
        KAPPA_COLUMNS,
        kappa_table,
        min_models=2,
        shares=(pair_tests_and_sets, paired_wides),
    ),
    Analysis(
        "categories_by_task",
        "Per model: chi-square test of outcome categories I-IV against task type (is grounding task-dependent?).",
        CATEGORY_TEST_COLUMNS,
        category_test_table,
        needs=conditions_needed("orig", "black"),
        shares=(per_question,),
    ),
    Analysis(
        "models_right",
        "How many models answer each question right, under orig and black, against independent models.",
        MODELS_RIGHT_COLUMNS,
        models_right_table,
        needs=conditions_needed("orig", "black"),
        min_models=2,
        shares=(_shared_counts,),
    ),
    Analysis(
        "models_right_transition",
        "Questions by the number of models right under black and under orig (the black -> orig transition).",
        TRANSITION_COLUMNS,
        transition_table,
        needs=conditions_needed("orig", "black"),
        min_models=2,
        shares=(_shared_counts,),
    ),
)
