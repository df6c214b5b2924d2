"""postprocess.analyses.contrast: every pair of task types compared on per-question VDG, checked against Welch's
test and CI from scipy, Holm from statsmodels and VDG values computed in the test; the no-variance case, the
orientation of a pair, which task types and questions enter."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from postprocess.analyses.base import ReportSettings
from postprocess.analyses.contrast import ANALYSES, COLUMNS, NO_VARIANCE, WELCH, contrast_table, pair_test
from tests.helpers.frames import make_frame

T, F, E = True, False, "e"

#: Task type -> (orig, black) outcome per question. VDG = orig - black: A [1, 1, 0, 0, 1] (mean 0.6; its sixth
#: question has an orig error and is dropped), B [0, -1, 1, 0] (0), C [1, 0, 0, 1] (0.5), D [1, 1] (too few).
TYPES: dict[str, list[tuple[object, object]]] = {
    "A": [(T, F), (T, F), (T, T), (F, F), (T, F), (E, F)],
    "B": [(T, T), (F, T), (T, F), (F, F)],
    "C": [(T, F), (F, F), (T, T), (T, F)],
    "D": [(T, F), (T, F)],
}
OPTIONS = ReportSettings(min_stratum=3)


def frame_of(models: dict[str, dict[str, list[tuple[object, object]]]], benchmark: str = "b") -> pd.DataFrame:
    """{model: {task type: [(orig, black) outcome per question]}} -> a tidy frame; question ids ``<type><i>-0``."""
    return make_frame(
        [
            (model, condition, f"{name}{i}-0", name, outcome)
            for model, types in models.items()
            for name, pairs in types.items()
            for i, pair in enumerate(pairs)
            for condition, outcome in zip(("orig", "black"), pair, strict=True)
        ],
        benchmark,
    )


def vdg_values(pairs: list[tuple[object, object]]) -> np.ndarray:
    """Per-question VDG of the questions with no error in either arm."""
    return np.array([int(o is T) - int(b is T) for o, b in pairs if E not in (o, b)], dtype=float)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return contrast_table(frame_of({"m": TYPES}), OPTIONS)


def test_the_table_has_the_declared_columns_and_one_row_per_pair_of_large_enough_task_types(table):
    assert list(table.columns) == list(COLUMNS)
    # D has 2 questions < min_stratum 3; pairs in name order, each oriented so that the larger VDG comes first
    assert list(zip(table.task_type_a, table.task_type_b, strict=True)) == [("A", "B"), ("A", "C"), ("C", "B")]
    assert table[["n_a", "n_b"]].values.tolist() == [[5, 4], [5, 4], [4, 4]]  # A's errored question is dropped


def test_each_pair_matches_welchs_test_and_ci_from_scipy(table):
    for _, row in table.iterrows():
        a, b = vdg_values(TYPES[row.task_type_a]), vdg_values(TYPES[row.task_type_b])
        reference = sps.ttest_ind(a, b, equal_var=False)
        low, high = reference.confidence_interval(confidence_level=OPTIONS.ci_level)
        assert_allclose([row.vdg_a, row.vdg_b, row["diff"]], [a.mean(), b.mean(), a.mean() - b.mean()], atol=1e-12)
        assert_allclose([row.p, row.ci_low, row.ci_high], [reference.pvalue, low, high], rtol=1e-9)
        assert row.test == WELCH and row["diff"] >= 0


def test_each_pair_has_welchs_bonferroni_ci_at_the_familys_size_from_scipy(table):
    # The family holds 3 pairs: the adjusted CI is Welch's t interval at 1 - alpha / 3, recomputed here from the
    # t quantile (scipy.stats.t) and the Welch-Satterthwaite degrees of freedom.
    level = 1 - OPTIONS.alpha / 3
    assert_allclose(table["ci_level_adjusted"].to_numpy(dtype=float), level, rtol=1e-15)
    for _, row in table.iterrows():
        a, b = vdg_values(TYPES[row.task_type_a]), vdg_values(TYPES[row.task_type_b])
        va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
        df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
        half = sps.t.ppf(1 - OPTIONS.alpha / 3 / 2, df) * np.sqrt(va + vb)
        diff = a.mean() - b.mean()
        assert_allclose([row.ci_low_adjusted, row.ci_high_adjusted], [diff - half, diff + half], rtol=1e-9)
        assert row.ci_low_adjusted < row.ci_low and row.ci_high < row.ci_high_adjusted  # wider than unadjusted


def test_a_bonferroni_ci_that_excludes_zero_means_holm_rejects():
    # Many task types of strongly different VDG: some Bonferroni CIs exclude 0; each such pair is significant
    # after Holm (Holm's adjusted p never exceeds n_family * p < alpha), and the adjusted CI excludes 0 exactly when
    # n_family * p < alpha.
    rng = np.random.default_rng(4)
    types = {}
    for k, share in enumerate((0.05, 0.2, 0.4, 0.6, 0.8, 0.95)):
        types[f"T{k}"] = [(bool(rng.random() < share), bool(rng.random() < 0.1)) for _ in range(40)]
    table = contrast_table(frame_of({"m": types}), ReportSettings(min_stratum=30))
    m = len(table)
    assert m == 15 and (table["n_family"] == m).all()
    excludes = (table["ci_low_adjusted"] > 0) | (table["ci_high_adjusted"] < 0)
    assert excludes.any() and not excludes.all()
    assert table.loc[excludes, "significant"].all()
    assert (excludes == (m * table["p"] < ReportSettings().alpha)).all()


def test_the_pairs_of_a_model_form_one_holm_family(table):
    adjusted = multipletests(table["p"].to_numpy(dtype=float), method="holm")[1]
    assert_allclose(table["p_holm"].to_numpy(dtype=float), adjusted, rtol=1e-12)
    assert (table["n_family"] == 3).all()
    assert table["significant"].tolist() == (adjusted < OPTIONS.alpha).tolist()
    loose = contrast_table(frame_of({"m": TYPES}), ReportSettings(min_stratum=3, alpha=0.99))
    assert loose["significant"].tolist() == (adjusted < 0.99).tolist() and loose["alpha"].eq(0.99).all()


def test_descriptive_columns_name_the_level_policy_and_question_rule(table):
    assert (table["ci_level"] == 0.95).all() and (table["alpha"] == 0.05).all()
    assert (table["missing_policy"] == "exclude").all()
    assert (table["question_rule"] == "no error under orig, black for this model").all()  # per-model by default
    assert (table["model"] == "m").all() and (table["benchmark"] == "b").all()


def test_task_types_without_variance_get_p_zero_or_one_and_the_difference_as_ci():
    # X: every question +1; Y and Z: every question 0
    flat = {"X": [(T, F)] * 3, "Y": [(T, T)] * 3, "Z": [(F, F)] * 3}
    table = contrast_table(frame_of({"m": flat}), OPTIONS)
    assert list(zip(table.task_type_a, table.task_type_b, strict=True)) == [("X", "Y"), ("X", "Z"), ("Y", "Z")]
    assert table["diff"].tolist() == [1.0, 1.0, 0.0]
    assert table["p"].tolist() == [0.0, 0.0, 1.0]  # means differ: 0; equal: 1
    assert table[["ci_low", "ci_high"]].values.tolist() == [[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    assert (table["test"] == NO_VARIANCE).all()
    # Holm on (0, 0, 1): sorted 3 * 0, 2 * 0, 1 * 1, running maximum -> (0, 0, 1)
    assert table["p_holm"].tolist() == [0.0, 0.0, 1.0] and table["significant"].tolist() == [True, True, False]


def test_the_larger_vdg_comes_first_and_a_tie_keeps_name_order():
    unequal = {"Q": [(T, F), (F, F), (T, T)], "P": [(F, F), (T, F), (F, T)]}  # Q mean 1/3, P mean 0
    equal = {"Q": [(T, F), (F, F), (F, F)], "P": [(F, F), (T, F), (F, F)]}  # both 1/3
    assert contrast_table(frame_of({"m": unequal}), OPTIONS)[["task_type_a", "task_type_b"]].values.tolist() == [
        ["Q", "P"]
    ]
    row = contrast_table(frame_of({"m": equal}), OPTIONS).iloc[0]
    assert (row.task_type_a, row.task_type_b, row["diff"]) == ("P", "Q", 0.0)


def test_min_stratum_never_lets_in_a_task_type_of_one_question():
    types = {"A": TYPES["A"], "S": [(T, F)]}
    assert contrast_table(frame_of({"m": types}), ReportSettings(min_stratum=1)).empty
    with_two = contrast_table(frame_of({"m": {**types, "S": [(T, F), (F, F)]}}), ReportSettings(min_stratum=1))
    assert with_two[["task_type_a", "task_type_b", "n_a", "n_b"]].values.tolist() == [["A", "S", 5, 2]]


def test_another_models_error_takes_the_question_out_and_each_model_is_its_own_family():
    other = {name: list(pairs) for name, pairs in TYPES.items()}
    other["B"] = [(T, T), (F, E), (T, F), (F, F)]  # z has an error on B1 under black
    table = contrast_table(frame_of({"m": TYPES, "z": other}), ReportSettings(min_stratum=3, question_set="shared"))
    assert table["model"].tolist() == ["m"] * 3 + ["z"] * 3 and (table["n_family"] == 3).all()
    m_ab = table[(table.model == "m") & (table.task_type_a == "A") & (table.task_type_b == "B")].iloc[0]
    b_kept = vdg_values([p for i, p in enumerate(TYPES["B"]) if i != 1])  # [0, 1, 0]
    assert m_ab.n_b == 3 and m_ab.vdg_b == pytest.approx(b_kept.mean(), abs=1e-12)
    per_model = contrast_table(
        frame_of({"m": TYPES, "z": other}), ReportSettings(min_stratum=3, question_set="per-model")
    )
    assert per_model[per_model.model == "m"]["n_b"].tolist() == [4, 4, 4]
    assert (per_model["question_rule"] == "no error under orig, black for this model").all()


def test_errors_scored_wrong_keep_the_errored_question():
    table = contrast_table(frame_of({"m": TYPES}), ReportSettings(min_stratum=3, missing="incorrect"))
    ab = table[(table.task_type_a == "A") & (table.task_type_b == "B")].iloc[0]
    # A's sixth question: orig error scored wrong, black wrong -> VDG 0; A = [1, 1, 0, 0, 1, 0], mean 1/2
    assert ab.n_a == 6 and ab.vdg_a == pytest.approx(0.5, abs=1e-12)
    assert (table["question_rule"] == "every question; errors scored wrong").all()


def test_no_rows_without_black_or_with_a_single_task_type():
    no_black = make_frame([("m", "orig", f"q{i}-0", "A", T) for i in range(4)])
    one_type = frame_of({"m": {"A": TYPES["A"]}})
    for frame in (no_black, one_type):
        table = contrast_table(frame, OPTIONS)
        assert table.empty and list(table.columns) == list(COLUMNS)


# ----------------------------------------------------------------------------------- pair_test


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")  # scipy on the constant side
def test_pair_test_is_welch_when_either_side_varies():
    a, b = np.array([1.0, 1.0, 1.0]), np.array([0.0, 1.0, -1.0, 0.0])  # only b varies
    p, low, high, test = pair_test(a, b, 0.9)
    reference = sps.ttest_ind(a, b, equal_var=False)
    assert test == WELCH
    assert_allclose([p, low, high], [reference.pvalue, *reference.confidence_interval(0.9)], rtol=1e-9)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1.0, 1.0], [0.0, 0.0, 0.0], (0.0, 1.0, 1.0)),
        ([-1.0, -1.0], [0.0, 0.0], (0.0, -1.0, -1.0)),  # the difference keeps its sign
        ([0.0, 0.0], [0.0, 0.0], (1.0, 0.0, 0.0)),
    ],
)
def test_pair_test_without_variance_gives_p_zero_or_one_and_the_difference(a, b, expected):
    assert pair_test(np.array(a), np.array(b), 0.95) == (*expected, NO_VARIANCE)


def test_the_declared_analysis_needs_orig_and_black():
    (analysis,) = ANALYSES
    assert analysis.name == "task_type_contrast" and analysis.columns is COLUMNS
    assert analysis.compute is contrast_table
    assert analysis.needs(frozenset({"orig", "black", "single"})) is None
    assert analysis.needs(frozenset({"orig"})) == "black not run"
