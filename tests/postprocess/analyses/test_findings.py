"""The findings paragraph: every number of every sentence is the number of the table row it names, the task-type
contrast is Welch's test with Holm over the model's pairs (recomputed here), and a difference that does not survive
Holm is never called one."""

from __future__ import annotations

import functools
import itertools
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from postprocess.analyses import Options, run_all
from postprocess.render import render_html, render_markdown
from tests.helpers.reference_data import ORIG_BLACK, reference_frame

FAST = Options(n_resamples=200, stability_resamples=50)


@functools.lru_cache(maxsize=1)
def _tables() -> dict[str, pd.DataFrame]:
    return run_all(reference_frame(), FAST)


def _source_row(tables, finding) -> pd.Series:
    table = tables[finding["source_table"]]
    mask = (table["model"] == finding["model"]) & (table["benchmark"] == finding["benchmark"])
    for pair in finding["source_row"].split(", "):
        column, value = pair.split("=", 1)
        mask &= table[column].astype(str) == value
    assert mask.sum() == 1, finding
    return table[mask].iloc[0]


def _pts(x: float) -> str:
    return "%+.1f" % (x * 100)


def _pct(x: float) -> str:
    return "%.1f%%" % (x * 100)


def test_every_finding_restates_its_source_row():
    tables = _tables()
    findings = tables["findings"]
    assert set(findings["topic"]) == {"video", "task_types", "temporal", "compression", "letters"}
    for finding in findings.to_dict("records"):
        row = _source_row(tables, finding)
        assert finding["value"] == pytest.approx(float(row[finding["source_column"]]))
        text = finding["sentence"]
        topic = finding["topic"]
        if topic == "video":
            for number in (_pct(row["acc_orig"]), _pct(row["acc_black"]), _pts(row["vdg"]), _pts(row["ci_low"])):
                assert number in text, (number, text)
            assert _pts(row["ci_high"]) in text and f"n = {int(row['n'])} " in text
            assert (finding["ci_low"], finding["ci_high"]) == pytest.approx((row["ci_low"], row["ci_high"]))
        elif topic == "task_types":
            for number in (_pts(row["vdg_a"]), _pts(row["vdg_b"]), _pts(row["diff"]), _pts(row["ci_low"])):
                assert number in text, (number, text)
            assert row["task_type_a"] in text and row["task_type_b"] in text
            assert f"{row['p_holm']:.2g}" in text
            assert text.startswith("Most and least") == bool(row["significant"])
        elif topic == "temporal":
            assert _pts(row["temporal"]) in text and _pts(row["temporal_ci_high"]) in text
        elif topic == "compression":
            flips = tables["crf_flips"]
            flip = flips[
                (flips["model"] == finding["model"])
                & (flips["condition"] == row["condition"])
                & (flips["task_type"] == "Overall")
            ].iloc[0]
            changed = int(flip["c_to_i"] + flip["i_to_c"])
            assert f"CRF {int(row['crf'])} " in text and _pct(row["acc"]) in text and _pct(row["ci_low"]) in text
            assert f"{changed} of {int(flip['n'])} questions" in text
            assert int(row["crf"]) == max(int(c[3:]) for c in tables["crf"]["condition"] if c.startswith("crf"))
        elif topic == "letters":
            assert f"letter is {row['top_pred']}," in text and _pct(row["top_pred_share"]) in text
            assert f"{row['p_pred']:.2g}" in text
    # every (model, benchmark) with a VDG gets the video sentence first
    firsts = findings.groupby("model", sort=False)["topic"].first()
    assert set(firsts) == {"video"} and len(firsts) == tables["vdg"]["model"].nunique()


def _per_question_vdg(frame: pd.DataFrame, model: str) -> pd.DataFrame:
    mine = frame[frame["model"] == model]
    wide = mine.pivot_table(index=["question_id", "task_type"], columns="condition", values="correct", aggfunc="first")
    wide = wide.dropna(subset=["orig", "black"]).reset_index()
    wide["vdg"] = wide["orig"].astype(int) - wide["black"].astype(int)
    return wide


def test_contrast_is_welch_with_holm_over_the_models_pairs():
    frame = reference_frame(("qwen2vl",), ORIG_BLACK)
    table = run_all(frame, FAST)["task_type_contrast"]
    questions = _per_question_vdg(frame, "qwen2vl")
    groups = {t: g["vdg"].to_numpy(float) for t, g in questions.groupby("task_type") if len(g) >= FAST.min_stratum}
    expected = []
    for a, b in itertools.combinations(sorted(groups), 2):
        x, y = groups[a], groups[b]
        se = np.sqrt(x.var(ddof=1) / len(x) + y.var(ddof=1) / len(y))
        t = (x.mean() - y.mean()) / se
        df = se**4 / ((x.var(ddof=1) / len(x)) ** 2 / (len(x) - 1) + (y.var(ddof=1) / len(y)) ** 2 / (len(y) - 1))
        expected.append((frozenset((a, b)), abs(x.mean() - y.mean()), 2 * stats.t.sf(abs(t), df)))
    assert len(table) == len(expected) == len(groups) * (len(groups) - 1) // 2
    # Holm by hand: sorted p times (m - rank), running maximum, capped at 1
    ps = np.array([p for *_, p in expected])
    order = np.argsort(ps)
    holm = np.empty_like(ps)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (len(ps) - rank) * ps[i])
        holm[i] = min(running, 1.0)
    for (pair, diff, p), p_holm in zip(expected, holm, strict=True):
        pairs = [frozenset(both) for both in zip(table["task_type_a"], table["task_type_b"], strict=True)]
        row = table.iloc[pairs.index(pair)]
        assert row["diff"] == pytest.approx(diff) and row["diff"] >= 0
        assert row["p"] == pytest.approx(p, rel=1e-6)
        assert row["p_holm"] == pytest.approx(p_holm, rel=1e-6)
        assert bool(row["significant"]) == (p_holm < FAST.alpha)
        assert row["ci_low"] <= row["diff"] <= row["ci_high"]


def test_task_types_of_equal_vdg_are_never_called_most_and_least_visual():
    frame = reference_frame(("qwen2vl",), ORIG_BLACK)
    questions = _per_question_vdg(frame, "qwen2vl").sort_values(["vdg", "question_id"])
    # alternate two labels within each VDG value: both task types get (nearly) the same VDG distribution
    relabel = dict(zip(questions["question_id"], np.where(np.arange(len(questions)) % 2, "even", "odd"), strict=True))
    frame["task_type"] = frame["question_id"].map(relabel)
    tables = run_all(frame, FAST)
    finding = tables["findings"].set_index("topic").loc["task_types"]
    assert finding["sentence"].startswith("No two task types differ reliably")
    assert tables["task_type_contrast"]["p_holm"].iloc[0] > 0.5


def test_report_md_opens_with_the_findings():
    tables = _tables()
    markdown = render_markdown(tables)
    headings = re.findall(r"^## (.+)$", markdown, flags=re.M)
    assert headings[0] == "Findings"
    first = tables["findings"]["sentence"].iloc[0]
    assert markdown.index(first) < markdown.index("## Summary")
    assert "Findings" in render_html(tables) and first in render_html(tables)


def test_not_computed_names_only_what_the_benchmark_offers():
    from postprocess.render import _skip_lines
    from vdg_tasks.data.benchmarks import BENCHMARKS

    tables = _tables()
    offered = {c.name for c in BENCHMARKS["videomme"].conditions()}
    assert "nameswap" not in offered and "metadata" not in offered and "open" in offered
    skipped = tables["skipped"].set_index("analysis")
    # the CSV keeps every row and says which the benchmark could not have offered
    assert not skipped.loc["name_swap", "offered"] and not skipped.loc["metadata_chance", "offered"]
    assert skipped.loc["open_ended", "offered"]
    lines = " ".join(_skip_lines(tables))
    assert "name_swap" not in lines and "metadata_chance" not in lines
    assert "open_ended" in lines and "abstention" in lines


def test_a_significant_narrower_pair_is_never_hidden_behind_a_widest_pair_that_is_not():
    from postprocess.analyses import findings as findings_module

    def pair(a, b, vdg_a, vdg_b, p_holm):
        return {"model": "m", "benchmark": "b", "task_type_a": a, "task_type_b": b, "vdg_a": vdg_a, "vdg_b": vdg_b,
                "diff": vdg_a - vdg_b, "ci_low": 0.01, "ci_high": 0.2, "p_holm": p_holm, "n_family": 3,
                "significant": p_holm < 0.05}  # fmt: skip

    contrast = pd.DataFrame(
        [pair("A", "C", 0.6, 0.1, 0.2), pair("B", "C", 0.3, 0.1, 0.01), pair("A", "B", 0.6, 0.3, 0.5)]
    )
    (row,) = findings_module._task_types({"task_type_contrast": contrast}, ("m", "b"), 0.95)
    assert not row["sentence"].startswith("No two task types")
    assert "1 of 3 pairs do" in row["sentence"] and "B (VDG +30.0) and C (VDG +10.0)" in row["sentence"]
    assert row["source_row"] == "task_type_a=B, task_type_b=C" and row["value"] == pytest.approx(0.2)
    none = contrast.assign(significant=False)
    (row,) = findings_module._task_types({"task_type_contrast": none}, ("m", "b"), 0.95)
    assert row["sentence"].startswith("No two task types differ reliably") and "A (VDG +60.0) and C" in row["sentence"]
