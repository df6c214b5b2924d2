"""Every row of the published reference (tests/data/awg-videomme/expected.csv), recomputed through the public API.

Rows with provenance `paper` reproduce the printed paper; rows with provenance `data` are where the
printed paper is inconsistent with its own data, and the data decide (see that folder's README).
Each test maps a group of rows (by table and quantity) to the table and cell vdg computes for it.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from postprocess.analyses import Options, run_all
from tests.reference_data import MODEL, expected_rows, reference_frame


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return reference_frame()


@pytest.fixture(scope="module")
def tables(frame):
    """missing=exclude (the paper's matched convention) and missing=incorrect (null = incorrect)."""
    return {
        "exclude": run_all(frame, Options(missing="exclude")),
        "incorrect": run_all(frame, Options(missing="incorrect")),
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


def test_t1_vdg_and_bootstrap_ci(tables):
    vdg = tables["exclude"]["vdg"].set_index(["model", "task_type"])
    rows = _rows("T1", r"(?P<task>.+) (?P<m>Qwen|LLaVA|IV2) (?:VDG \(n=(?P<n>\d+)\)|CI (?P<end>lo|hi))")
    assert len(rows) == 63
    for row, m in rows:
        cell = vdg.loc[(MODEL[m["m"]], m["task"])]
        if m["n"]:
            assert cell["n"] == int(m["n"])
            _check(row, cell["vdg"])
        else:
            _check(row, cell["ci_low" if m["end"] == "lo" else "ci_high"])


def test_dc_ratio_on_each_models_matched_set(tables):
    vdg = tables["exclude"]["vdg"].set_index(["model", "task_type"])
    for row, m in _rows("4.3", r"VME D:C (?P<m>Qwen|LLaVA|IV2)"):
        _check(row, vdg.loc[(MODEL[m["m"]], "Overall"), "dc_ratio"])


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
    fisher = tables["exclude"]["crf_enrichment"].set_index("model").loc["qwen2vl"]
    assert fisher["n"] == 545
    cell = {"sens&VDG+1": "a", "sens&VDG<=0": "b", "stable&VDG+1": "c", "stable&VDG<=0": "d"}
    for row, m in _rows("4.4", r"Fisher cell (?P<c>\S+) \(n=545\)"):
        _check(row, fisher[cell[m["c"]]])
    for row, _ in _rows("4.4", r"Fisher OR"):
        _check(row, fisher["odds_ratio"])
    for row, _ in _rows("4.4", r"Fisher p \(one-sided greater\)"):
        _check(row, fisher["p_greater"])
    for row, _ in _rows("4.4", r"VDG=\+1 rate in sensitive %"):
        _check(row, fisher["vdg_plus_rate_sensitive_pct"])
    for row, _ in _rows("4.4", r"VDG=\+1 base rate %"):
        _check(row, fisher["vdg_plus_rate_base_pct"])


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


def test_t2_mcnemar_and_42_accuracies_on_the_matched_set(tables):
    mcn = _pair_rows(tables["exclude"]["mcnemar"]).set_index("condition")
    assert mcn.loc["orig", "n"] == mcn.loc["black", "n"] == 547
    for row, _ in _rows("T2", r"VME IV2 vs Qwen p_orig"):
        _check(row, mcn.loc["orig", "p_cc"])
    for row, _ in _rows("T2", r"VME IV2 vs Qwen p_black \(n=547\)"):
        _check(row, mcn.loc["black", "p_cc"])
    for row, m in _rows("4.2", r"VME matched (?P<m>IV2|Qwen) orig acc"):
        _check(row, mcn.loc["orig", "acc_a" if m["m"] == "IV2" else "acc_b"])
    for row, m in _rows("4.2", r"IV2-Qwen diff CI (?P<end>lo|hi) \(%\)"):
        _check(row, 100 * mcn.loc["orig", "diff_ci_low" if m["end"] == "lo" else "diff_ci_high"])


# Rows that are one draw of the paper's own 1,000-resample numpy stream rather than a property of
# the data: an independent stream estimates the same probability with Monte Carlo error
# sqrt(p(1-p)/1000) ~ 1.6 points, so two independent estimates differ by up to ~3 * 2.2 = 6.6
# points (3 SD of a difference). Over 200,000 resamples the joint share settles at 54.8 %: the
# published 50.3 is a low draw, reproducible only with the paper's exact stream.
MONTE_CARLO_ALLOWANCE = {"% resamples joint (orig p>.05 & black p<.05)": 6.6}


def test_42_dissociation_stability_shares(tables):
    dis = _pair_rows(tables["exclude"]["dissociation"]).iloc[0]
    assert dis["pattern"] == "black only" and dis["stability_resamples"] == 1000
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
