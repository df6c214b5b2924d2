"""tracking: the character-tracking tables, on a hand-built frame whose every number is worked out below.

The golden frame (benchmark ``ib``, 4 options, answers q1..q8 = A B C D A B C D; videos v1 = q1-q4,
1280 s, and v2 = q5-q8, 640 s):

model m1 (32 frames): ``u`` = unparsed, ``e`` = error, ``*`` = right

    question   orig  black  oracle  nameswap  abstain  metadata  open (judge score)
    q1 A       A*    B      A*      A*        A*       A*        1
    q2 B       B*    B*     B*      C         E (vdg)  A         0.5
    q3 C       C*    D      C*      A         E (vdg)  C*        0
    q4 D       A     A      D*      A         D*       D*        1
    q5 A       A*    B      A*      A*        D (idk)  B         0.5
    q6 B       D     C      B*      u         B*       B*        0
    q7 C       C*    u      C*      B         u        A         unjudged
    q8 D       e     D*     D*      D*        e        A         e

    nameswap: q1, q2 Ross -> Joey (same), q3, q4 Rachel -> Ross (cross), q5 Monica -> Gunther (gender
    unknown), q6 Monica -> Phoebe (same), q7 Chandler -> Rachel (cross), q8 Chandler -> Monica (cross).
    abstain: vdg's option is E (n_options 5); the benchmark's own "I don't know" is D on q5-q7.

model m2 (64 frames): orig A B C D A B C A (7 of 8 right, q8 wrong), nameswap the same letters,
black all A (q1, q5 right). Model m3 (benchmark ``other``, frames unknown): orig and metadata on two
questions with 4 and 5 options.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats as sps

from postprocess.analyses import ANALYSES, multiple_choice_frame, run_all
from postprocess.analyses.base import ReportSettings, skip_reason
from postprocess.analyses.tracking import (
    ABSTAIN_COLUMNS,
    BUDGET_COLUMNS,
    METADATA_COLUMNS,
    NAME_SWAP_COLUMNS,
    OPEN_COLUMNS,
    PAIRS_COLUMNS,
    TESTS_COLUMNS,
    TRACKING_CONDITIONS,
    UNJUDGED_MESSAGE,
    abstention,
    frame_budget,
    metadata_chance,
    name_swap,
    name_swap_pairs,
    open_ended,
    tracking_benchmarks,
    tracking_tests,
)
from postprocess.reading.frame import SAMPLE_COLUMNS
from postprocess.rendering.pages import render_html, render_markdown
from postprocess.stats import cohen_h, wilson
from tests.helpers.reference_data import reference_frame

#: The columns postprocess.reading.lmms_eval_logs adds for the tracking protocol (defined here until io's
#: EXTRA_COLUMNS lands),
#: with their "not applicable" value.
EXTRA: dict[str, object] = {
    "character": "",
    "swap_to": "",
    "swap_gender": "",
    "abstain_letter": "",
    "idk_letter": "",
    "response": "",
    "truth": "",
    "duration_s": np.nan,
    "frames": pd.NA,
    "judge_score": np.nan,
    "judge": "",
}
OFFLINE = "offline token-overlap scorer (deterministic; not an LLM judge)"
FAST = ReportSettings(n_resamples=50, stability_resamples=20)
#: The tables of the character-tracking group.
TRACKING_TABLES = (
    "tracking_tests",
    "metadata_chance",
    "name_swap",
    "name_swap_pairs",
    "open_ended",
    "abstention",
    "frame_budget",
)

ANSWERS = dict(zip([f"q{i}" for i in range(1, 9)], "ABCDABCD", strict=True))
SWAPS = {
    "q1": ("Ross", "Joey", "same"),
    "q2": ("Ross", "Joey", "same"),
    "q3": ("Rachel", "Ross", "cross"),
    "q4": ("Rachel", "Ross", "cross"),
    "q5": ("Monica", "Gunther", ""),
    "q6": ("Monica", "Phoebe", "same"),
    "q7": ("Chandler", "Rachel", "cross"),
    "q8": ("Chandler", "Monica", "cross"),
}
M1 = {
    "orig": "ABCAADCe",
    "black": "BBDABCuD",
    "oracle": "ABCDABCD",
    "nameswap": "ACAAAuBD",
    "abstain": "AEEDDBue",
    "metadata": "AACDBBAA",
}
M1_OPEN = [1.0, 0.5, 0.0, 1.0, 0.5, 0.0, None, "e"]
M2 = {"orig": "ABCDABCA", "nameswap": "ABCDABCA", "black": "AAAAAAAA"}


def row(model: str, condition: str, qid: str, pred: str | None, benchmark: str = "ib", **extra: object) -> dict:
    """One tidy row; pred "u" = unparsed, "e" = error, "open" = a free-text answer."""
    answer = ANSWERS.get(qid, "A")
    status = {"u": "unparsed", "e": "error", "open": "open"}.get(str(pred), "ok")
    letter = pred if status == "ok" else None
    video = "v1" if qid in ("q1", "q2", "q3", "q4") else "v2"
    base = {
        "model": model,
        "model_settings": "",
        "benchmark": benchmark,
        "condition": condition,
        "question_id": qid,
        "video_id": video,
        "task_type": "global_appearance",
        "duration": "long",
        "n_options": 4,
        "answer": answer,
        "pred": letter,
        "status": status,
        "error": "OOM" if status == "error" else None,
        "correct": pd.NA if status in ("error", "open") else (status == "ok" and letter == answer),
        "source": "test",
    }
    character = SWAPS.get(qid, ("", "", ""))[0]
    return {**base, **EXTRA, "character": character, "duration_s": 1280.0 if video == "v1" else 640.0, **extra}


def frame_of(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=[*SAMPLE_COLUMNS, *(c for c in EXTRA if c not in SAMPLE_COLUMNS)])
    frame["correct"] = frame["correct"].astype("boolean")
    frame["frames"] = frame["frames"].astype("Int64")
    frame["duration_s"] = frame["duration_s"].astype(float)
    frame["judge_score"] = frame["judge_score"].astype(float)
    return frame


def golden_rows(judged: bool = True) -> list[dict]:
    rows = []
    for condition, preds in M1.items():
        for i, pred in enumerate(preds, start=1):
            qid = f"q{i}"
            extra: dict[str, object] = {"frames": 32}
            if condition == "nameswap":
                _, to, gender = SWAPS[qid]
                extra |= {"swap_to": to, "swap_gender": gender}
            if condition == "abstain":
                extra |= {"abstain_letter": "E", "n_options": 5}
            if i in (5, 6, 7):
                extra["idk_letter"] = "D"
            rows.append(row("m1", condition, qid, pred, **extra))
    for i, score in enumerate(M1_OPEN, start=1):
        qid = f"q{i}"
        if score == "e":
            rows.append(row("m1", "open", qid, "e", frames=32))
            continue
        extra = {"frames": 32, "response": f"reply {i}", "truth": f"truth {i}"}
        if judged and score is not None:
            extra |= {"judge_score": score, "judge": OFFLINE}
        rows.append(row("m1", "open", qid, "open", **extra))
    for condition, preds in M2.items():
        for i, pred in enumerate(preds, start=1):
            qid = f"q{i}"
            extra = {"frames": 64}
            if condition == "nameswap":
                _, to, gender = SWAPS[qid]
                extra |= {"swap_to": to, "swap_gender": gender}
            rows.append(row("m2", condition, qid, pred, **extra))
    for condition in ("orig", "metadata"):
        rows.append(row("m3", condition, "q1", "A", benchmark="other", n_options=4))
        rows.append(row("m3", condition, "q2", "A", benchmark="other", n_options=5))
    return rows


@pytest.fixture(scope="module")
def golden() -> pd.DataFrame:
    return frame_of(golden_rows())


def one(table: pd.DataFrame, **match: object) -> pd.Series:
    hit = table
    for column, value in match.items():
        hit = hit[hit[column] == value]
    assert len(hit) == 1, (match, hit)
    return hit.iloc[0]


def test_every_table_has_its_declared_columns(golden):
    for fn, columns in (
        (tracking_tests, TESTS_COLUMNS),
        (metadata_chance, METADATA_COLUMNS),
        (name_swap, NAME_SWAP_COLUMNS),
        (name_swap_pairs, PAIRS_COLUMNS),
        (open_ended, OPEN_COLUMNS),
        (abstention, ABSTAIN_COLUMNS),
        (frame_budget, BUDGET_COLUMNS),
    ):
        assert list(fn(golden, FAST).columns) == list(columns)
    names = [a.name for a in ANALYSES]
    tracking = ["tracking_tests", "metadata_chance", "name_swap", "name_swap_pairs", "open_ended", "abstention"]
    assert names.index("collective") < names.index("tracking_tests")
    assert names[names.index("tracking_tests") : names.index("tracking_tests") + 7] == [*tracking, "frame_budget"]


def test_local_extra_columns_are_declared_columns_of_the_frame():
    from postprocess.reading.frame import EXTRA_COLUMNS

    assert set(EXTRA) <= set(EXTRA_COLUMNS)


# ------------------------------------------------------------------------------------ tracking_tests


def test_tracking_tests_rows_and_mcnemar(golden):
    table = tracking_tests(golden, FAST)
    # m1: full_vs_text, oracle, nameswap, abstain (no subtitles); m2: full_vs_text, nameswap; m3: none.
    assert list(zip(table["model"], table["comparison"], strict=True)) == [
        ("m1", "full_vs_text"),
        ("m1", "oracle"),
        ("m1", "nameswap_accuracy"),
        ("m1", "abstain_accuracy"),
        ("m2", "full_vs_text"),
        ("m2", "nameswap_accuracy"),
    ]
    # full_vs_text, m1: q8 has an error in orig -> dropped (n 7). orig right q1 q2 q3 q5 q7 (5/7); black right q2
    # (1/7); orig right and black wrong (b10): q1 q3 q5 q7 = 4; the reverse (b01): none. Exact p = 2 / 2^4.
    r = one(table, model="m1", comparison="full_vs_text")
    assert (r["condition_a"], r["condition_b"]) == ("orig", "black")
    assert (r["n"], r["n_excluded"], r["b01"], r["b10"]) == (7, 1, 0, 4)
    assert_allclose([r["acc_a"], r["acc_b"], r["diff"]], [5 / 7, 1 / 7, 4 / 7])
    assert_allclose(r["p_mcnemar"], 0.125)
    assert_allclose(r["cohen_h"], 2 * math.asin(math.sqrt(5 / 7)) - 2 * math.asin(math.sqrt(1 / 7)))
    iv = wilson(5, 7)
    assert_allclose([r["acc_a_ci_low"], r["acc_a_ci_high"]], [iv.low, iv.high])
    assert np.isnan(r["mean_spacing_s"])
    # oracle (a) against orig (b): oracle right on all 7, orig wrong on q4 q6 -> b10 = 2, b01 = 0, p = 2 / 4.
    # Spacing of orig's uniform frames: q1-q4 1280 / 32 = 40 s, q5-q7 640 / 32 = 20 s -> (4*40 + 3*20) / 7.
    r = one(table, model="m1", comparison="oracle")
    assert (r["condition_a"], r["condition_b"], r["n"], r["b01"], r["b10"]) == ("oracle", "orig", 7, 0, 2)
    assert_allclose([r["acc_a"], r["acc_b"], r["p_mcnemar"]], [1.0, 5 / 7, 0.5])
    assert_allclose(r["mean_spacing_s"], 220 / 7)
    # nameswap against the original key: right q1 q5 (q6 unparsed = wrong) -> 2/7; orig right, swap wrong
    # (b01): q2 q3 q7 = 3; b10 = 0; p = 2 / 2^3.
    r = one(table, model="m1", comparison="nameswap_accuracy")
    assert (r["n"], r["b01"], r["b10"]) == (7, 3, 0)
    assert_allclose([r["acc_a"], r["acc_b"], r["p_mcnemar"]], [2 / 7, 5 / 7, 0.25])
    assert_allclose(r["cohen_h"], cohen_h(2 / 7, 5 / 7))
    # abstain: right q1 q4 q6 (abstentions wrong) -> 3/7; b01 (abstain wrong, orig right): q2 q3 q5 q7 = 4;
    # b10: q4 q6 = 2; exact p = 2 * (C(6,0) + C(6,1) + C(6,2)) / 2^6 = 44 / 64.
    r = one(table, model="m1", comparison="abstain_accuracy")
    assert (r["n"], r["b01"], r["b10"]) == (7, 4, 2)
    assert_allclose([r["acc_a"], r["p_mcnemar"]], [3 / 7, 44 / 64])
    assert_allclose(r["p_mcnemar"], sps.binomtest(2, 6, 0.5).pvalue)
    # m2 asks the same question with no name sensitivity: no discordant pair -> no McNemar p.
    r = one(table, model="m2", comparison="nameswap_accuracy")
    assert (r["n"], r["b01"], r["b10"]) == (8, 0, 0) and np.isnan(r["p_mcnemar"])
    assert (table["ci_level"] == 0.95).all() and (table["missing_policy"] == "exclude").all()


def test_tracking_tests_missing_incorrect_scores_errors_wrong(golden):
    table = tracking_tests(golden, ReportSettings(missing="incorrect"))
    # q8 kept: orig (error) wrong, black right -> b01 = 1; b10 = 4; p = 2 * (1 + 5) / 2^5.
    r = one(table, model="m1", comparison="full_vs_text")
    assert (r["n"], r["n_excluded"], r["b01"], r["b10"]) == (8, 0, 1, 4)
    assert_allclose([r["acc_a"], r["acc_b"], r["p_mcnemar"]], [5 / 8, 2 / 8, 12 / 32])


# ----------------------------------------------------------------------------------------- name swap


def test_name_swap_sensitivity_split_by_gender(golden):
    table = name_swap(golden, FAST)
    assert list(zip(table["model"], table["split"], strict=True)) == [
        ("m1", "all"),
        ("m1", "same"),
        ("m1", "cross"),
        ("m2", "all"),
        ("m2", "same"),
        ("m2", "cross"),
    ]
    # all: a letter in both for q1-q5, q7 (q6 unparsed in nameswap, q8 an error in orig): n 6, changed q2 q3 q7.
    r = one(table, model="m1", split="all")
    assert (r["n"], r["n_excluded"], r["changed"]) == (6, 2, 3)
    assert_allclose([r["sensitivity"], r["acc_orig"], r["acc_swap"]], [3 / 6, 5 / 6, 2 / 6])
    iv = wilson(3, 6)
    assert_allclose([r["ci_low"], r["ci_high"]], [iv.low, iv.high])
    # same: q1 q2 (q6 excluded): changed q2 -> 1/2; orig right on both, nameswap on q1.
    r = one(table, model="m1", split="same")
    assert (r["n"], r["n_excluded"], r["changed"]) == (2, 1, 1)
    assert_allclose([r["sensitivity"], r["acc_orig"], r["acc_swap"]], [1 / 2, 1.0, 1 / 2])
    # cross: q3 q4 q7 (q8 excluded): changed q3 q7 -> 2/3; orig right q3 q7, nameswap none.
    r = one(table, model="m1", split="cross")
    assert (r["n"], r["n_excluded"], r["changed"]) == (3, 1, 2)
    assert_allclose([r["sensitivity"], r["acc_orig"], r["acc_swap"]], [2 / 3, 2 / 3, 0.0])
    # m2 never changes its letter: a name-blind model.
    r = one(table, model="m2", split="all")
    assert (r["n"], r["changed"], r["sensitivity"]) == (8, 0, 0.0)
    assert r["ci_low"] == 0.0 and r["ci_high"] > 0


def test_name_swap_pairs_sorted_by_sensitivity(golden):
    table = name_swap_pairs(golden, FAST)
    m1 = table[table["model"] == "m1"]
    # Chandler -> Rachel: q7 changed (1/1); Rachel -> Ross: q3 of q3 q4; Ross -> Joey: q2 of q1 q2; Monica ->
    # Gunther: q5 unchanged. Monica -> Phoebe (q6) and Chandler -> Monica (q8) have no question with two letters.
    assert list(zip(m1["character"], m1["swap_to"], m1["swap_gender"], m1["n"], m1["changed"], strict=True)) == [
        ("Chandler", "Rachel", "cross", 1, 1),
        ("Rachel", "Ross", "cross", 2, 1),
        ("Ross", "Joey", "same", 2, 1),
        ("Monica", "Gunther", "", 1, 0),
    ]
    assert_allclose(m1["sensitivity"], [1.0, 0.5, 0.5, 0.0])
    assert (table.loc[table["model"] == "m2", "sensitivity"] == 0).all()
    assert list(table["model"]) == ["m1"] * 4 + ["m2"] * 6


def test_name_swap_without_the_protocol_columns_has_only_the_all_split(golden):
    bare = golden.drop(columns=list(EXTRA))
    table = name_swap(bare, FAST)
    assert list(table["split"]) == ["all", "all"]
    pairs = name_swap_pairs(bare, FAST)
    assert list(pairs["character"]) == ["", ""] and list(pairs["n"]) == [6, 8]


# ------------------------------------------------------------------------------------------ metadata


def test_metadata_against_chance(golden):
    table = metadata_chance(golden, FAST)
    assert list(table["model"]) == ["m1", "m3"]
    # m1: right q1 q3 q4 q6 -> 4/8 against chance 1/4. Exact two-sided binomial by hand: P(X = 4) =
    # C(8,4) 0.25^4 0.75^4; every outcome at most that likely is k >= 4 (P(X = 0) = 0.75^8 is larger).
    r = one(table, model="m1")
    assert (r["n"], r["correct"], r["n_options"], r["n_error"], r["n_unparsed"]) == (8, 4, 4, 0, 0)
    assert_allclose([r["acc"], r["chance"]], [0.5, 0.25])
    tail = sum(math.comb(8, k) * 0.25**k * 0.75 ** (8 - k) for k in range(4, 9))
    assert_allclose(r["p_binomial"], tail, rtol=1e-10)
    iv = wilson(4, 8)
    assert_allclose([r["ci_low"], r["ci_high"]], [iv.low, iv.high])
    # m3: 4 and 5 options -> chance (1/4 + 1/5) / 2, no single n_options; the binomial at that mean.
    r = one(table, model="m3")
    assert (r["n"], r["correct"]) == (2, 1) and pd.isna(r["n_options"])
    assert_allclose([r["chance"], r["p_binomial"]], [0.225, sps.binomtest(1, 2, 0.225).pvalue])


# ---------------------------------------------------------------------------------------- open-ended


def test_open_ended_gap_and_scores(golden):
    table = open_ended(golden, FAST)
    assert list(table["model"]) == ["m1"]
    r = table.iloc[0]
    # Judged q1-q6: scores 1 .5 0 1 .5 0 -> mean 3/6; two 1s, two 0.5s; q7 unjudged, q8 an error.
    assert (r["n_open"], r["fully_correct"], r["half_correct"], r["n_unjudged"], r["n_error"]) == (6, 2, 2, 1, 0 + 1)
    assert_allclose(r["open_score"], 0.5)
    # orig on the same q1-q6: right q1 q2 q3 q5 -> 4/6; gap = 0.5 - 4/6.
    assert r["n_mc"] == 6
    assert_allclose([r["mc_acc"], r["open_score_mc"], r["gap"]], [4 / 6, 0.5, 0.5 - 4 / 6])
    assert r["judge"] == OFFLINE
    # incorrect: q8's error is scored 0 in open and wrong in orig -> 3/7 against 4/7.
    r = open_ended(golden, ReportSettings(missing="incorrect")).iloc[0]
    assert (r["n_open"], r["n_mc"]) == (7, 7)
    assert_allclose([r["open_score"], r["mc_acc"], r["gap"]], [3 / 7, 4 / 7, -1 / 7])


def test_open_ended_unjudged_is_skipped_with_how_to_judge():
    frame = frame_of(golden_rows(judged=False))
    with pytest.raises(ValueError, match="not judged") as info:
        open_ended(frame, FAST)
    assert str(info.value) == UNJUDGED_MESSAGE
    assert "--judge offline" in UNJUDGED_MESSAGE and "VDG_JUDGE_BASE_URL" in UNJUDGED_MESSAGE
    tables = run_all(frame, FAST, names=["open_ended", "skipped"])
    assert "--judge offline" in skip_reason(tables["open_ended"])
    assert tables["skipped"]["reason"].str.contains("open_ended was skipped: open-ended answers are not judged").any()


# ---------------------------------------------------------------------------------------- abstention


def test_abstention_counts_both_kinds(golden):
    table = abstention(golden, FAST)
    assert list(table["model"]) == ["m1"]
    r = table.iloc[0]
    # Scored q1-q7 (q8 an error): vdg's option E on q2 q3, the benchmark's idk D on q5 (q4's D is its answer, idk
    # only on q5-q7) -> 3/7 abstain. Committed q1 q4 q6 q7: right q1 q4 q6 (q7 unparsed) -> 3/4.
    assert (r["n"], r["abstained_added"], r["abstained_benchmark"], r["n_committed"]) == (7, 2, 1, 4)
    assert_allclose([r["abstain_rate"], r["acc_committed"]], [3 / 7, 3 / 4])
    iv = wilson(3, 7)
    assert_allclose([r["ci_low"], r["ci_high"]], [iv.low, iv.high])
    # orig on q1-q7: right 5/7; it picked the idk option D on q6 -> 1/7.
    assert r["n_orig"] == 7
    assert_allclose([r["acc_orig"], r["idk_rate_orig"]], [5 / 7, 1 / 7])
    # incorrect: q8's error is committed and wrong; orig's q8 error is scored wrong.
    r = abstention(golden, ReportSettings(missing="incorrect")).iloc[0]
    assert (r["n"], r["n_committed"], r["n_orig"]) == (8, 5, 8)
    assert_allclose([r["acc_committed"], r["acc_orig"], r["idk_rate_orig"]], [3 / 5, 5 / 8, 1 / 8])


# -------------------------------------------------------------------------------------- frame budget


def test_frame_budget_by_frames(golden):
    table = frame_budget(golden, FAST)
    assert list(zip(table["model"], table["frames"], strict=True)) == [("m1", 32), ("m2", 64)]
    r = one(table, model="m1")
    assert (r["n"], r["correct"], r["n_swap"]) == (7, 5, 6)
    assert_allclose([r["acc_orig"], r["mean_spacing_s"], r["sensitivity"]], [5 / 7, 220 / 7, 0.5])
    # m2: 7 of 8; spacing q1-q4 1280/64 = 20 s, q5-q8 640/64 = 10 s -> 15 s; never changes its letter.
    r = one(table, model="m2")
    assert (r["n"], r["correct"], r["n_swap"]) == (8, 7, 8)
    assert_allclose([r["acc_orig"], r["mean_spacing_s"], r["sensitivity"]], [7 / 8, 15.0, 0.0])
    iv = wilson(0, 8)
    assert_allclose([r["sensitivity_ci_low"], r["sensitivity_ci_high"]], [iv.low, iv.high])


def test_frame_budget_is_empty_when_no_model_states_its_frames(golden):
    table = frame_budget(golden.assign(frames=pd.array([pd.NA] * len(golden), dtype="Int64")), FAST)
    assert table.empty and list(table.columns) == list(BUDGET_COLUMNS)


# ------------------------------------------------------------------------------------------- run_all


def test_models_lacking_a_condition_are_absent_and_named(golden):
    tables = run_all(golden, FAST)
    for name in ("metadata_chance", "name_swap", "open_ended", "abstention", "frame_budget", "tracking_tests"):
        assert skip_reason(tables[name]) is None, name
    assert "m2" not in set(tables["abstention"]["model"]) and "m2" not in set(tables["open_ended"]["model"])
    assert "m3" not in set(tables["tracking_tests"]["model"]) and "m3" not in set(tables["frame_budget"]["model"])
    reasons = set(tables["skipped"]["reason"])
    assert "no abstention for m2: abstain not run" in reasons
    assert "no open_ended for m2: open not run" in reasons
    assert "no metadata_chance for m2: metadata not run" in reasons
    assert "no name_swap for any model of other: nameswap not run" in reasons


def test_open_rows_do_not_reach_the_multiple_choice_tables(golden):
    with_open = run_all(golden, FAST)
    without = golden[golden["condition"] != "open"].reset_index(drop=True)
    plain = run_all(without, FAST)
    for name in ("accuracy", "letters", "coverage", "collective", "mcnemar"):
        assert skip_reason(with_open[name]) is None, name
        assert "open" not in set(with_open[name]["condition"]), name
        pd.testing.assert_frame_equal(with_open[name], plain[name], check_dtype=False)
    # The open cell is dropped whole, its error row (q8) included; everything else is untouched.
    mc = multiple_choice_frame(golden)
    assert len(mc) == len(without) and "open" not in set(mc["condition"])
    assert multiple_choice_frame(without) is without


def test_tracking_on_a_plain_orig_black_run():
    # The published reference data: orig and black (and the ladder and CRF levels), no tracking condition. No
    # tracking table has a row: full_vs_text (orig against black) is not emitted for a benchmark the protocol did
    # not run on, and the report shows no character-tracking section. Nothing is skipped (the data are fine, the
    # conditions absent): the skipped table says why the protocol's own tables are empty.
    frame = reference_frame()
    assert not set(frame["condition"]) & TRACKING_CONDITIONS and tracking_benchmarks(frame) == frozenset()
    tables = run_all(frame, FAST)
    for name in TRACKING_TABLES:
        assert skip_reason(tables[name]) is None and tables[name].empty, name
    reasons = set(tables["skipped"]["reason"])
    for name, condition in (("metadata_chance", "metadata"), ("name_swap", "nameswap"), ("open_ended", "open")):
        assert f"no {name} for any model of videomme: {condition} not run" in reasons
    assert "## Character tracking" not in render_markdown(tables)
    assert "group-character-tracking" not in render_html(tables)
    # Without any protocol column at all, the tables still compute.
    bare = frame[[c for c in frame.columns if c not in EXTRA]]
    pd.testing.assert_frame_equal(tracking_tests(bare, FAST), tables["tracking_tests"])


def test_a_benchmark_without_tracking_conditions_has_no_tracking_rows(golden):
    # Beside the golden frame (benchmarks ib and other, which ran the protocol), a plain benchmark "plain" run on
    # orig and black with its frames known: full_vs_text and frame_budget would have rows for it. They have none,
    # and the rows of ib and other are those of the golden frame alone.
    plain = [
        row(model, condition, f"q{i}", pred, benchmark="plain", frames=16)
        for model in ("m1", "m4")
        for condition, preds in (("orig", "ABCDABCD"), ("black", "AAAABBBB"))
        for i, pred in enumerate(preds, start=1)
    ]
    mixed = frame_of(golden_rows() + plain)
    assert tracking_benchmarks(mixed) == {"ib", "other"}
    for table in (tracking_tests, name_swap, name_swap_pairs, metadata_chance, frame_budget, abstention, open_ended):
        got = table(mixed, FAST)
        assert "plain" not in set(got["benchmark"]), table.__name__
        pd.testing.assert_frame_equal(got, table(golden, FAST), obj=table.__name__)
    # Which benchmarks: recomputed here from the frame's conditions (every protocol condition but orig and black).
    protocol = {"oracle", "subtitles", "nameswap", "abstain", "metadata", "open"}
    assert TRACKING_CONDITIONS == protocol
    assert tracking_benchmarks(mixed) == set(mixed.loc[mixed["condition"].isin(protocol), "benchmark"])
    # On the plain benchmark alone, the report has no character-tracking group.
    alone = run_all(frame_of(plain), FAST)
    assert all(alone[name].empty for name in TRACKING_TABLES)
    assert "## Character tracking" not in render_markdown(alone)


# -------------------------------------------------------------------------------------------- report


def test_report_groups_the_tracking_sections_and_names_the_judge(golden):
    tables = run_all(golden, FAST)
    md = render_markdown(tables)
    group = md.split("## Character tracking", 1)[1].split("\n## ", 1)[0]
    for title in (
        "### Perturbed conditions against orig",
        "### Title only: accuracy against chance",
        "### Name-swap sensitivity",
        "### Name-swap sensitivity by character",
        "### Open-ended answers against multiple choice",
        "### Abstention",
        "### Frame budget",
    ):
        assert title in group
    assert "a name-blind model never does" in group
    open_section = group.split("### Open-ended answers against multiple choice", 1)[1].split("\n### ", 1)[0]
    assert f"Judge: {OFFLINE}" in open_section and open_section.count(OFFLINE) >= 2  # intro and the judge column
    page = render_html(tables)
    assert 'id="group-character-tracking"' in page and '<h3 id="open_ended">' in page
    assert f"Judge: {OFFLINE}" in page


def test_open_intro_labels_a_bare_offline_label():
    table = pd.DataFrame([{"model": "m", "benchmark": "b", "n_open": 1, "open_score": 1.0, "judge": "offline"}])
    section = render_markdown({"open_ended": table}).split("### Open-ended", 1)[1]
    assert "Judge: offline (the offline scorer is deterministic token overlap, not an LLM judge)" in section


def test_rows_of_other_conditions_change_no_tracking_table(golden):
    # Interleaved rows of conditions no tracking table reads (a CRF level, shuffled), with 3-option
    # questions: the tables are those of the protocol rows alone.
    others = golden[golden["condition"].isin(["orig", "metadata"])].assign(n_options=3)
    noise = pd.concat([others.assign(condition="crf28"), others.assign(condition="shuffled")])
    mixed = pd.concat([noise.iloc[::2], golden, noise.iloc[1::2]], ignore_index=True)
    for table in (tracking_tests, name_swap, name_swap_pairs, metadata_chance, frame_budget, abstention, open_ended):
        pd.testing.assert_frame_equal(table(mixed, FAST), table(golden, FAST), obj=table.__name__)
