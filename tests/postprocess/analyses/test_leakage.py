"""The leakage table: a blind LVLM against its language backbone on the same prompts, counted by hand here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.leakage import (
    BACKBONE_ARM,
    BY_OPTION,
    BY_RULE,
    COLUMNS,
    Pair,
    checkpoint_name,
    leakage_table,
    pairs,
)
from postprocess.stats import paired_difference_ci
from tests.helpers.frames import outcome_fields, tidy_frame, tidy_row

N = 60
LVLM, BACKBONE = "vdg_qwen2_vl:Qwen2-VL-7B-Instruct", "vdg_text_lm:Qwen2-7B-Instruct"


def _outcomes(seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"orig": rng.random(N) < 0.8, "blind": rng.random(N) < 0.5, BACKBONE_ARM: rng.random(N) < 0.3}


def _options(i: int) -> int:
    return 4 if i % 3 else 5  # mixed counts: chance is a mean of 1/4 and 1/5


def _frame(
    outcomes: dict[str, np.ndarray],
    model: str = LVLM,
    backbone: str = BACKBONE,
    errors: dict[str, int] | None = None,
) -> pd.DataFrame:
    """The LVLM's orig and blind rows and the backbone's blind rows (its arm in ``outcomes``), two task types."""
    rows = []
    for arm, right in outcomes.items():
        label, condition = (backbone, "blind") if arm == BACKBONE_ARM else (model, arm)
        for i, value in enumerate(right):
            outcome = "e" if (errors or {}).get(arm) == i else bool(value)
            rows.append(
                tidy_row(
                    label,
                    condition,
                    f"v{i:02d}-1",
                    task_type=f"T{i % 2}",
                    n_options=_options(i),
                    **outcome_fields(outcome, unparsed_pred="zzz"),
                )
            )
    return tidy_frame(rows)


OPTIONS = ReportSettings(min_stratum=10, backbones={LVLM: BACKBONE})


def test_every_value_is_a_count_of_the_questions():
    outcomes = _outcomes()
    table = leakage_table(_frame(outcomes), OPTIONS)
    assert list(table.columns) == list(COLUMNS)
    assert list(table.task_type) == ["T0", "T1", "Overall"]
    row = table.set_index("task_type").loc["Overall"]
    blind, backbone = outcomes["blind"], outcomes[BACKBONE_ARM]
    blind_only, backbone_only = int((blind & ~backbone).sum()), int((backbone & ~blind).sum())
    assert (row.model, row.backbone, row.pairing, row.arms, row.n) == (
        LVLM,
        BACKBONE,
        BY_OPTION,
        "orig,blind,backbone",
        N,
    )
    assert (row.n_blind_only, row.n_backbone_only) == (blind_only, backbone_only)
    np.testing.assert_allclose(row.acc_orig, outcomes["orig"].sum() / N, atol=1e-12)
    np.testing.assert_allclose(row.acc_blind, blind.sum() / N, atol=1e-12)
    np.testing.assert_allclose(row.acc_backbone, backbone.sum() / N, atol=1e-12)
    np.testing.assert_allclose(row.leakage, (blind_only - backbone_only) / N, atol=1e-12)
    np.testing.assert_allclose(row.leakage_mmstar, max(0.0, (blind_only - backbone_only) / N), atol=1e-12)
    chance = np.mean([1 / _options(i) for i in range(N)])  # 20 questions of 5 options, 40 of 4
    np.testing.assert_allclose(row.chance, 0.2 * 20 / 60 + 0.25 * 40 / 60, atol=1e-12)
    np.testing.assert_allclose(row.chance, chance, atol=1e-12)
    np.testing.assert_allclose(row.text_prior, backbone.sum() / N - chance, atol=1e-12)
    assert row.text_prior_ci_low <= row.text_prior <= row.text_prior_ci_high
    per_type = table[table.task_type != "Overall"].set_index("task_type")
    assert per_type.n.to_dict() == {"T0": N // 2, "T1": N // 2}
    assert per_type.n_blind_only.sum() == blind_only and per_type.n_backbone_only.sum() == backbone_only


def test_the_ci_is_the_paired_difference_interval_of_every_vdg_table():
    outcomes = _outcomes(seed=11)
    row = leakage_table(_frame(outcomes), OPTIONS).set_index("task_type").loc["Overall"]
    diff = outcomes["blind"].astype(float) - outcomes[BACKBONE_ARM].astype(float)
    ci = paired_difference_ci(diff, level=0.95)  # Tango's score interval: the default --ci-method
    np.testing.assert_allclose([row.ci_low, row.ci_high], [ci.low, ci.high], atol=1e-12)
    # leakage's interval first, then text_prior's (a mean of values off a lattice with mixed option counts: resampled)
    assert row.ci_method == "tango score + monte carlo" and row.resample_unit == "question"


def test_mmstar_clips_a_negative_leakage_at_zero():
    outcomes = _outcomes()
    outcomes["blind"], outcomes[BACKBONE_ARM] = outcomes[BACKBONE_ARM], outcomes["blind"]
    row = leakage_table(_frame(outcomes), OPTIONS).set_index("task_type").loc["Overall"]
    assert row.leakage < 0 and row.leakage_mmstar == 0.0


def test_an_error_under_any_arm_leaves_the_question_out_of_every_arm():
    outcomes = _outcomes()
    table = leakage_table(_frame(outcomes, errors={BACKBONE_ARM: 4, "orig": 7}), OPTIONS)
    row = table.set_index("task_type").loc["Overall"]
    keep = ~np.isin(np.arange(N), [4, 7])
    assert (row.n, row.n_error) == (N - 2, 2)
    np.testing.assert_allclose(row.acc_blind, outcomes["blind"][keep].mean(), atol=1e-12)
    np.testing.assert_allclose(row.acc_backbone, outcomes[BACKBONE_ARM][keep].mean(), atol=1e-12)


def test_without_orig_the_pair_is_compared_on_blind_and_backbone_alone():
    outcomes = _outcomes()
    del outcomes["orig"]
    row = leakage_table(_frame(outcomes), OPTIONS).set_index("task_type").loc["Overall"]
    assert row.arms == "blind,backbone" and np.isnan(row.acc_orig) and row.n == N


def test_the_naming_rule_pairs_a_known_checkpoint_with_its_backbone_run():
    outcomes = _outcomes()
    table = leakage_table(_frame(outcomes), ReportSettings(min_stratum=10))
    assert set(table.pairing) == {BY_RULE} and set(table.backbone) == {BACKBONE}
    quantized = [LVLM + "†nf4", BACKBONE, BACKBONE + "†nf4", LVLM, "qwen2_vl:other"]
    assert pairs(quantized) == [Pair(LVLM, BACKBONE, BY_RULE), Pair(LVLM + "†nf4", BACKBONE + "†nf4", BY_RULE)]
    assert pairs(["a", "vdg_text_lm:Qwen2-7B-Instruct"], {"a": BACKBONE}) == [Pair("a", BACKBONE, BY_OPTION)]
    assert pairs(["llava_onevision:my-finetune-7b", BACKBONE]) == []  # not in the table: no guess
    assert pairs(["llava_onevision:LLaVA-OneVision-Qwen2-7B-OV", BACKBONE])[0].backbone == BACKBONE  # any case
    assert checkpoint_name("vdg_text_lm:Qwen2-7B-Instruct†int8") == ("vdg_text_lm", "Qwen2-7B-Instruct", "int8")


def test_a_backbone_label_absent_from_the_report_is_refused_with_the_labels():
    frame = _frame(_outcomes())
    with pytest.raises(ValueError, match=r"--backbone .*no model labelled 'typo'.*models: vdg_qwen2_vl"):
        leakage_table(frame, ReportSettings(backbones={LVLM: "typo"}))


def test_a_named_pair_without_a_common_blind_benchmark_is_refused():
    outcomes = _outcomes()
    frame = _frame(outcomes)
    frame = frame[~((frame.model == LVLM) & (frame.condition == "blind"))]
    with pytest.raises(ValueError, match="no benchmark where both ran blind"):
        leakage_table(frame, OPTIONS)


def test_settings_refuse_a_model_paired_with_itself():
    with pytest.raises(ValueError, match="two different"):
        ReportSettings(backbones={"m": "m"})


def test_a_report_without_a_backbone_has_an_empty_table_and_no_skipped_row():
    outcomes = _outcomes()
    del outcomes[BACKBONE_ARM]
    tables = run_all(_frame(outcomes), ReportSettings(min_stratum=10, n_resamples=200), workers=1)
    assert tables["leakage"].empty and list(tables["leakage"].columns) == list(COLUMNS)
    assert not (tables["skipped"].analysis == "leakage").any()


def test_the_report_names_the_leakage_in_findings_and_on_the_leaderboard():
    from postprocess.leaderboard import leaderboard_table

    tables = run_all(_frame(_outcomes()), ReportSettings(min_stratum=10, n_resamples=200), workers=1)
    row = tables["leakage"].set_index("task_type").loc["Overall"]
    findings = tables["findings"]
    leak = findings[findings.topic == "leakage"]
    assert list(leak.model) == [LVLM] and leak.iloc[0].value == row.leakage
    assert leak.iloc[0].source_table == "leakage" and "Qwen2-7B-Instruct" in leak.iloc[0].sentence
    board = leaderboard_table(tables).set_index("model")
    assert board.loc[LVLM, "leakage"] == row.leakage
    assert board.loc[BACKBONE, "flags"] == "backbone" and pd.isna(board.loc[BACKBONE, "leakage"])


def test_the_command_line_reads_each_backbone_once():
    from vdg_tasks.cli.report import _backbones

    assert _backbones(["a=b", " c = d ", "a=b"]) == {"a": "b", "c": "d"}
    with pytest.raises(ValueError, match="expects LVLM_LABEL=BACKBONE_LABEL"):
        _backbones(["a"])
    with pytest.raises(ValueError, match="'a' already has the backbone 'b'"):
        _backbones(["a=b", "a=c"])
