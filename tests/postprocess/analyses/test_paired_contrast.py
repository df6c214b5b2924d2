"""The one paired contrast (postprocess.analyses.paired_contrast) against a count written here, and the convention
columns every table fills one way (vdg.conventions)."""

from __future__ import annotations

import numpy as np
import pytest

from postprocess.analyses import TABLES, ReportSettings, run_all, skip_reason
from postprocess.analyses._paired import by_model_benchmark
from postprocess.analyses.added import added_table
from postprocess.analyses.paired_contrast import Contrast, choices_by_arm, paired_cells, same_choice
from postprocess.analyses.vdg import CI_COLUMNS, CONVENTIONS, conventions
from tests.helpers.frames import make_frame

FAST = ReportSettings(n_resamples=200, stability_resamples=50)


def _records(seed: int, models=("m1", "m2"), conditions=("orig", "black", "blind"), n=40):
    """Random outcomes; m1 has errors under black on its first three questions."""
    rng = np.random.default_rng(seed)
    out = []
    for model in models:
        for condition in conditions:
            for i in range(n):
                value: object = bool(rng.random() < (0.7 if condition == "orig" else 0.45))
                if model == "m1" and condition == "black" and i < 3:
                    value = "e"
                elif rng.random() < 0.05:
                    value = "u"
                out.append((model, condition, f"v{i // 2:02d}-{i % 2}", f"T{i % 3}", value))
    return out


@pytest.mark.parametrize("question_set", ["shared", "per-model"])
def test_each_cell_is_the_mean_difference_over_the_questions_answered_under_every_arm(question_set):
    records = _records(0)
    frame = make_frame(records)
    options = ReportSettings(n_resamples=200, question_set=question_set)
    outcome = {(m, c, q): v for m, c, q, _, v in records}
    task = {q: t for _, _, q, t, _ in records}
    arms = ["orig", "black", "blind"]
    errored = {q for (m, c, q), v in outcome.items() if v == "e" and c in arms}  # m1's, shared with m2 as well
    contrast = Contrast("orig_blind", "orig", "blind", ("orig_blind",))
    seen = 0
    for (model, benchmark), group in by_model_benchmark(frame):
        for cell in paired_cells(frame, group, benchmark, arms, [contrast], options, "test"):
            asked = sorted(q for q in task if cell.task_type == "Overall" or task[q] == cell.task_type)
            own_errors = {q for q in asked if any(outcome[(model, c, q)] == "e" for c in arms)}
            left_out = errored if question_set == "shared" else own_errors
            kept = [q for q in asked if q not in left_out]
            score = {c: [outcome[(model, c, q)] is True for q in kept] for c in arms}
            assert cell.n == len(kept)
            assert cell.n_error == len(own_errors)
            assert cell.n_not_shared == len(left_out & set(asked)) - len(own_errors)
            assert cell.diff == pytest.approx(np.mean(score["orig"]) - np.mean(score["blind"]), abs=1e-12)
            assert cell.accuracy("black") == pytest.approx(np.mean(score["black"]), abs=1e-12)
            assert cell.mean_difference("black", "blind") == pytest.approx(
                np.mean(score["black"]) - np.mean(score["blind"]), abs=1e-12
            )
            assert cell.n_unparsed("blind") == sum(outcome[(model, "blind", q)] == "u" for q in kept)
            assert (cell.ci is None) == (len(kept) < options.min_stratum)
            seen += 1
    assert seen == 2 * 4  # two models x (three task types and Overall)


def test_the_choice_under_each_arm_and_whether_two_agree():
    frame = make_frame([("m", "orig", "q1", "T", True), ("m", "black", "q1", "T", False),
                        ("m", "orig", "q2", "T", "e"), ("m", "black", "q2", "T", True)])  # fmt: skip
    frame["pred"] = ["A", "B", None, "A"]
    chosen = choices_by_arm(frame, "m", "b", ["orig", "black"], ("pred", "shuffled_from", "n_options"))
    assert chosen.loc["q1", "pred_orig"] == "A" and chosen.loc["q2", "pred_orig"] is None
    assert same_choice(chosen["pred_orig"].to_numpy(), chosen["pred_black"].to_numpy()).tolist() == [False, False]
    assert same_choice(np.array(["C", None], dtype=object), np.array(["C", None], dtype=object)).tolist() == [
        True,
        False,
    ]


def test_conventions_fill_what_a_table_declares_and_refuse_what_it_forgot():
    options = ReportSettings(ci_level=0.9, missing="incorrect")
    columns = {"n": "", "ci_level": "", "missing_policy": "", "question_rule": ""}
    assert conventions(columns, options, rule="r") == {"ci_level": 0.9, "missing_policy": "incorrect",
                                                       "question_rule": "r"}  # fmt: skip
    with pytest.raises(ValueError, match="declares question_rule"):
        conventions(columns, options)
    with pytest.raises(ValueError, match="declares ci_method"):
        conventions({**columns, **CI_COLUMNS}, options, rule="r")
    assert conventions({"scale": ""}, options, later=("scale",)) == {}
    with pytest.raises(ValueError, match="not a convention column: n"):
        conventions(columns, options, rule="r", n=3)


def test_every_table_states_the_settings_it_was_computed_under():
    """Whatever computed a table, its convention columns say the report's settings (here not the defaults)."""
    conditions = ("orig", "black", "blind", "mute", "single", "ordered", "shuffled", "crf23", "crf28", "no_question")
    frame = make_frame(_records(1, models=("m1", "m2", "m3"), conditions=conditions, n=60))
    options = ReportSettings(n_resamples=200, stability_resamples=50, ci_level=0.9, missing="incorrect")
    tables = run_all(frame, options, workers=1)
    declared = {analysis.name: analysis.columns for analysis in TABLES}
    filled = 0
    for name, table in tables.items():
        if not len(table):
            assert skip_reason(table) or name, name
            continue
        if "ci_level" in table.columns:
            assert (table["ci_level"].dropna() == 0.9).all(), name
            filled += 1
        if "missing_policy" in table.columns:
            assert (table["missing_policy"] == "incorrect").all(), name
            filled += 1
        if "question_rule" in table.columns and "whatever missing_policy" not in declared[name]["question_rule"]:
            rules = table["question_rule"].dropna().astype(str)
            # under missing=incorrect no question is dropped for an error, except where a table says otherwise
            assert rules.str.contains("every question|errors scored wrong").all(), (name, set(rules))
    assert filled >= 30
    assert set(CONVENTIONS) >= {"ci_level", "missing_policy", "question_rule", "scale"}


def test_a_question_answered_twice_under_one_arm_is_refused_naming_it():

    frame = make_frame(
        [("m", "orig", "q0", "T", True), ("m", "blur", "q0", "T", True), ("m", "blur", "q0", "T", False)]
    )
    with pytest.raises(ValueError, match="model 'm': question 'q0' appears twice under 'blur'"):
        added_table(frame, FAST)
