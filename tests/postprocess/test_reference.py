"""Every row of the published reference (tests/data/awg-videomme/expected.csv), recomputed through the public API.

Rows with provenance `paper` reproduce the printed paper; rows with provenance `data` are where the
printed paper is inconsistent with its own data, and the data decide (see that folder's README).
Each test maps a group of rows (by table and quantity) to the table and cell vdg computes for it.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.mcnemar import mcnemar_table
from tests.helpers.reference_data import MODEL, expected_rows, reference_frame


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return reference_frame()


@pytest.fixture(scope="module")
def tables(frame):
    """missing=exclude (the paper's matched convention) and missing=incorrect (null = incorrect)."""
    return {
        "exclude": run_all(frame, ReportSettings(missing="exclude")),
        "incorrect": run_all(frame, ReportSettings(missing="incorrect")),
    }


def _check(row: dict[str, str], computed: float) -> None:
    tol = float(row["tolerance"]) if row["tolerance"] else 0.0005
    assert abs(computed - float(row["value"])) <= tol, (
        f"{row['table']} {row['quantity']}: computed {computed:.4f}, expected {row['value']} (+-{tol})"
    )


def _rows(table: str, pattern: str) -> list[tuple[dict[str, str], re.Match[str]]]:
    out = []
    for row in expected_rows():
        match = re.fullmatch(pattern, row["quantity"])
        if row["table"] == table and match:
            out.append((row, match))
    assert out, f"no expected rows for {table} {pattern}"
    return out


# The published T1 and D:C rows were computed on each model's own answered questions (vdg's default,
# question_set="per-model"), with 2,000 Monte Carlo resamples of the questions. vdg's default CI is Tango's score
# interval clustered by video (Video-MME asks three questions a video), which the paper did not use, so every
# published CI row is checked under the convention that reproduces it (docs/reproducing.md):
# - BOOTSTRAP: the paper's percentile bootstrap over questions (ci_method="exact", cluster="question"): the
#   exact bootstrap CI is the limit of the paper's Monte Carlo draws, within the rows' tolerance.
# - MONTE_CARLO: Qwen Action Reasoning CI hi is 0.3375 in the paper; the exact percentile bootstrap gives 0.35
#   (n = 80: P(resampled sum <= 27) = 0.9739 < 0.975), so 0.3375 is a 2,000-resample draw one lattice step
#   (1/80) below: it needs ci_method="resample" with no MC SE target (the paper's 2,000 resamples).
# No T1 stratum has fewer than 30 questions, so none needs min_stratum below its default. Every point estimate
# (VDG, n, D:C) is reproduced by the defaults.
BOOTSTRAP = ReportSettings(missing="exclude", ci_method="exact", cluster="question")
MONTE_CARLO = ReportSettings(missing="exclude", ci_method="resample", cluster="question", mc_se_target=0.0)
MONTE_CARLO_ROWS = {"Action Reasoning Qwen CI hi"}


@pytest.fixture(scope="module")
def conventions(frame):
    """The vdg table under the defaults and under each reproducing convention."""
    options = {"default": ReportSettings(missing="exclude"), "bootstrap": BOOTSTRAP, "monte carlo": MONTE_CARLO}
    return {
        name: run_all(frame, o, names=["vdg"])["vdg"].set_index(["model", "task_type"]) for name, o in options.items()
    }


def _convention(quantity: str) -> str:
    if quantity in MONTE_CARLO_ROWS:
        return "monte carlo"
    return "bootstrap" if " CI " in quantity else "default"


def test_t1_vdg_and_bootstrap_ci(conventions):
    rows = _rows("T1", r"(?P<task>.+) (?P<m>Qwen|LLaVA|IV2) (?:VDG \(n=(?P<n>\d+)\)|CI (?P<end>lo|hi))")
    assert len(rows) == 63
    for row, m in rows:
        key = (MODEL[m["m"]], m["task"])
        cell = conventions[_convention(row["quantity"])].loc[key]
        if m["n"]:
            assert cell["n"] == int(m["n"])
            _check(row, cell["vdg"])
        else:
            _check(row, cell["ci_low" if m["end"] == "lo" else "ci_high"])
    # the exact CI is the limit the paper's draw missed by one step of 1/80
    assert conventions["bootstrap"].loc[("qwen2vl", "Action Reasoning"), "ci_high"] == pytest.approx(0.35)
    # the default interval contains the published point estimate and, clustered by video, is wider than the
    # paper's question-level one (three questions a video are not independent)
    default, paper = conventions["default"], conventions["bootstrap"]
    overall = [(model, "Overall") for model in MODEL.values()]
    assert (default.loc[overall, "resample_unit"] == "video").all()
    wider = default.loc[overall, "ci_high"] - default.loc[overall, "ci_low"]
    assert (wider > paper.loc[overall, "ci_high"] - paper.loc[overall, "ci_low"]).all()


def test_dc_ratio_on_each_models_matched_set(conventions):
    for row, m in _rows("4.3", r"VME D:C (?P<m>Qwen|LLaVA|IV2)"):
        key = (MODEL[m["m"]], "Overall")
        _check(row, conventions["default"].loc[key, "dc_ratio"])
    assert conventions["default"].loc[("qwen2vl", "Overall"), "n_not_shared"] == 0  # per-model: nothing is dropped


def test_s12_flips_orig_vs_strongest_crf(tables):
    flips = tables["incorrect"]["crf_flips"].set_index(["model", "task_type", "condition"])
    column = {"C->I": "c_to_i", "I->C": "i_to_c", "net": "net", "stable%": "stable_pct"}
    rows = _rows("S12", r"(?P<m>Qwen|LLaVA|IV2) (?P<q>C->I|I->C|net|stable%)")
    assert len(rows) == 12
    for row, m in rows:
        _check(row, flips.loc[(MODEL[m["m"]], "Overall", "crf38"), column[m["q"]]])


def test_identical_prediction_across_crf_levels(tables):
    stability = tables["incorrect"]["crf_stability"].set_index(["model", "task_type"])
    for row, m in _rows("4.4", r"Qwen stability (?P<task>.+)"):
        _check(row, stability.loc[("qwen2vl", m["task"]), "identical_pred_pct"])


def test_t3_accuracy_on_the_original_video(tables):
    crf = tables["incorrect"]["crf"].set_index(["model", "task_type", "condition"])
    for row, m in _rows("T3", r"Qwen (?P<task>.+) original"):
        _check(row, crf.loc[("qwen2vl", m["task"], "orig"), "acc"])


def test_fisher_enrichment_of_visually_grounded_questions_among_compression_sensitive_ones(tables):
    """The paper's test is over every question of the complete set: the ``*_unconditioned`` columns (the headline
    columns condition on a right orig answer)."""
    fisher = tables["exclude"]["crf_enrichment"].set_index("model").loc["qwen2vl"]
    assert fisher["n"] == 545
    cell = {"sens&VDG+1": "a", "sens&VDG<=0": "b", "stable&VDG+1": "c", "stable&VDG<=0": "d"}
    for row, m in _rows("4.4", r"Fisher cell (?P<c>\S+) \(n=545\)"):
        _check(row, fisher[f"{cell[m['c']]}_unconditioned"])
    for row, _ in _rows("4.4", r"Fisher OR"):
        _check(row, fisher["odds_ratio_unconditioned"])
    for row, _ in _rows("4.4", r"Fisher p \(one-sided greater\)"):
        _check(row, fisher["p_greater_unconditioned"])
    for row, _ in _rows("4.4", r"VDG=\+1 rate in sensitive %"):
        _check(row, fisher["vdg_plus_rate_sensitive_pct"])
    for row, _ in _rows("4.4", r"VDG=\+1 base rate %"):
        _check(row, fisher["vdg_plus_rate_base_pct_unconditioned"])


def test_s4_categories_and_pooled_shares(tables):
    cats = tables["incorrect"]["categories"].set_index(["model", "task_type"])
    rows = _rows("S4", r"VME (?P<task>.+) (?P<m>Qwen|LLaVA|IV2) (?P<c>I|II|III|IV)")
    assert len(rows) == 84
    for row, m in rows:
        _check(row, cats.loc[(MODEL[m["m"]], m["task"]), f"share_{m['c']}"])
    for row, m in _rows("4.3", r"VME pooled category (?P<c>I|II|III|IV)"):
        _check(row, cats.loc[("pooled", "Overall"), f"share_{m['c']}"])


def test_hard_core_share(tables):
    hard = tables["incorrect"]["hard_core"].set_index("task_type").loc["Overall"]
    assert hard["n_models"] == 3 and hard["n"] == 600
    for row, _ in _rows("4.1", r"hard core VDG=\+1 all three \(%\)"):
        _check(row, 100 * hard["share"])


def test_task_level_spearman_between_models(tables):
    cons = tables["exclude"]["consistency"]
    for row, m in _rows("4.1", r"task-level Spearman (?P<a>Qwen|LLaVA|IV2)-(?P<b>Qwen|LLaVA|IV2)"):
        pair = {MODEL[m["a"]], MODEL[m["b"]]}
        cell = cons[cons.apply(lambda r, pair=pair: {r.model_a, r.model_b} == pair, axis=1)]
        assert len(cell) == 1 and cell.iloc[0]["n_task_types"] == 6
        _check(row, cell.iloc[0]["task_spearman"])


def _pair_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[(table.model_a == "internvl2") & (table.model_b == "qwen2vl")]


def test_t2_mcnemar_and_42_accuracies_on_the_matched_set(tables, frame):
    mcn = _pair_rows(tables["exclude"]["mcnemar"]).set_index("condition")
    assert mcn.loc["orig", "n"] == mcn.loc["black", "n"] == 547
    # The paper used the continuity-corrected chi-square (p_cc). vdg's default p is the same test here
    # (154 and 166 discordant pairs, >= 25), so both rows reproduce under the default p as well as p_cc.
    # p_holm does not: the paper adjusted over all conditions, vdg over the orig+black family.
    for condition in ("orig", "black"):
        assert mcn.loc[condition, "test"] == "chi-square (continuity corrected)"
        assert mcn.loc[condition, "p"] == mcn.loc[condition, "p_cc"]
    for row, _ in _rows("T2", r"VME IV2 vs Qwen p_orig"):
        _check(row, mcn.loc["orig", "p"])
    for row, _ in _rows("T2", r"VME IV2 vs Qwen p_black \(n=547\)"):
        _check(row, mcn.loc["black", "p"])
    for row, m in _rows("4.2", r"VME matched (?P<m>IV2|Qwen) orig acc"):
        _check(row, mcn.loc["orig", "acc_a" if m["m"] == "IV2" else "acc_b"])
    # The paper's CI is one 2,000-resample Monte Carlo draw over questions (seed 42, tolerance 3 points); under
    # its convention vdg's exact bootstrap CI (its Monte Carlo limit) lies within that tolerance, as does the
    # resampled one (ci_method="resample", seeded from the question set, not the model labels). The default,
    # Tango's score interval clustered by video, is another interval (checked in test_model_independence).
    assert mcn.loc["orig", "ci_method"] == "tango score (design effect)"
    exact = _pair_rows(mcnemar_table(frame, BOOTSTRAP)).set_index("condition")
    resampled = _pair_rows(mcnemar_table(frame, MONTE_CARLO)).set_index("condition")
    assert exact.loc["orig", "ci_method"] == "exact" and resampled.loc["orig", "ci_method"] == "monte carlo"
    for row, m in _rows("4.2", r"IV2-Qwen diff CI (?P<end>lo|hi) \(%\)"):
        end = "diff_ci_low" if m["end"] == "lo" else "diff_ci_high"
        _check(row, 100 * exact.loc["orig", end])
        _check(row, 100 * resampled.loc["orig", end])


# Rows that are one draw of the paper's own 1,000-resample numpy stream rather than a property of
# the data: an independent stream estimates the same probability with Monte Carlo error
# sqrt(p(1-p)/1000) ~ 1.6 points, so two independent estimates differ by up to ~3 * 2.2 = 6.6
# points (3 SD of a difference). Over 200,000 resamples the joint share settles at 54.8 %: the
# published 50.3 is a low draw, reproducible only with the paper's exact stream.
MONTE_CARLO_ALLOWANCE = {"% resamples joint (orig p>.05 & black p<.05)": 6.6}


def test_42_dissociation_stability_shares(frame):
    # the paper resampled questions; the default resamples videos on Video-MME (three questions a video)
    dis = _pair_rows(run_all(frame, BOOTSTRAP, names=["dissociation"])["dissociation"]).iloc[0]
    assert dis["resample_unit"] == "question"
    assert dis["pattern"] == "black only" and dis["stability_resamples"] == 1000
    # The paper calls this pair a black-only dissociation. vdg keeps that as the descriptive pattern, but the
    # interaction test (is the orig gap different from the black gap?) does not support it, so vdg's
    # dissociation label is False (see docs/reproducing.md).
    assert dis["p_holm_interaction"] >= 0.05 and not dis["dissociation"]
    # The shares are seeded from the benchmark and the pair's question set (not the model labels, as the paper's
    # stream was): they are new Monte Carlo draws of the same probabilities.
    # The paper's "joint" share is the unadjusted event on the pair's own resamples (share_black_only_unadjusted);
    # share_pattern is the stability of vdg's Holm-adjusted label, another quantity.
    share = {
        "black p<0.01": dis["share_black_p01"],
        "joint (orig p>.05 & black p<.05)": dis["share_black_only_unadjusted"],
    }
    for row, m in _rows("4.2", r"% resamples (?P<q>.+)"):
        computed = 100 * share[m["q"]]
        allowance = MONTE_CARLO_ALLOWANCE.get(row["quantity"])
        if allowance is None:
            _check(row, computed)
        else:
            assert abs(computed - float(row["value"])) <= allowance, (row["quantity"], computed)


def test_every_reference_row_is_covered_by_a_test():
    covered = 63 + 3 + 12 + 2 + 7 + 8 + 84 + 4 + 1 + 3 + 2 + 4 + 2
    assert len(expected_rows()) == covered
