"""The findings paragraph: every number of every sentence is the number of the table row it names, the task-type
contrast is Welch's test with Holm over the model's pairs (recomputed here), and a difference that does not survive
Holm is never called one."""

from __future__ import annotations

import functools
import html
import itertools
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from postprocess.analyses import ReportSettings, run_all
from postprocess.analyses.findings import CI_TESTS, COLUMNS, findings_table
from postprocess.rendering.formatting import CI_METHODS
from postprocess.rendering.pages import render_html, render_markdown
from tests.helpers.frames import answer_fields, outcome_fields, tidy_frame, tidy_row
from tests.helpers.reference_data import ORIG_BLACK, reference_frame
from vdg_tasks.perturb.text import shuffle_order

FAST = ReportSettings(n_resamples=200, stability_resamples=50)


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


def _mcnemar_scipy(b: int, c: int) -> tuple[float, str]:
    """McNemar's p and test by scipy, by the mcnemar table's rule: 1 when b = c, the exact binomial test below 25
    discordant pairs, else the continuity-corrected chi-square."""
    if b == c:
        return 1.0, "exact binomial" if b + c < 25 else "chi-square (continuity corrected)"
    if b + c < 25:
        return stats.binomtest(b, b + c, 0.5).pvalue, "exact binomial"
    return stats.chi2.sf((abs(b - c) - 1) ** 2 / (b + c), 1), "chi-square (continuity corrected)"


def test_every_finding_restates_its_source_row():
    tables = _tables()
    findings = tables["findings"]
    assert list(findings.columns) == list(COLUMNS)
    assert set(findings["topic"]) == {"video", "task_types", "tiers", "temporal", "compression", "letters"}
    for finding in findings.to_dict("records"):
        row = _source_row(tables, finding)
        assert finding["value"] == pytest.approx(float(row[finding["source_column"]]))
        text = finding["sentence"]
        topic = finding["topic"]
        if "question_rule" in row.index:
            assert finding["question_rule"] == row["question_rule"] != ""
        if topic == "video":
            for number in (_pct(row["acc_orig"]), _pct(row["acc_black"]), _pts(row["vdg"]), _pts(row["ci_low"])):
                assert number in text, (number, text)
            assert _pts(row["ci_high"]) in text and f"n = {int(row['n'])} " in text
            assert (finding["ci_low"], finding["ci_high"]) == pytest.approx((row["ci_low"], row["ci_high"]))
            # The interval named in words, from the row's ci_method (Tango's score interval by default).
            assert row["ci_method"].startswith("tango score")
            assert CI_METHODS[row["ci_method"]] in text and finding["test"] == CI_TESTS[row["ci_method"]]
            assert "bootstrap" not in text
        elif topic == "task_types":
            # The pair is picked among n_family: the CI quoted is the Bonferroni one, not the unadjusted one.
            for number in (_pts(row["vdg_a"]), _pts(row["vdg_b"]), _pts(row["diff"]), _pts(row["ci_low_adjusted"])):
                assert number in text, (number, text)
            assert _pts(row["ci_high_adjusted"]) in text and "Bonferroni" in text
            assert (finding["ci_low"], finding["ci_high"]) == pytest.approx(
                (row["ci_low_adjusted"], row["ci_high_adjusted"])
            )
            assert row["task_type_a"] in text and row["task_type_b"] in text
            assert f"{row['p_holm']:.2g}" in text
            assert f"(VDG {_pts(row['vdg_a'])}, n = {int(row['n_a'])})" in text
            assert f"(VDG {_pts(row['vdg_b'])}, n = {int(row['n_b'])})" in text
            assert text.startswith("Most and least") == bool(row["significant"])
            assert finding["test"] == f"Welch t, Holm over {int(row['n_family'])} pairs; Bonferroni CI"
        elif topic == "tiers":
            # every task type of the model under its tier, the source row the one with the largest VDG
            tiers = tables["tiers"]
            own = tiers[
                (tiers["model"] == finding["model"]) & (tiers["n_models"] == 1) & (tiers["task_type"] != "Overall")
            ]
            assert row["vdg"] == own["vdg"].max()
            named = dict(part.split(": ", 1) for part in text.split("points): ", 1)[1].rstrip(".").split("; "))
            assert {t: tier for tier, types in named.items() for t in types.split(", ")} == {
                r.task_type: r.tier.split(" (")[0] for r in own.itertuples()
            }
            assert f"n = {own['n'].min()}" in text and "against 10 and 30 points" in text
        elif topic == "temporal":
            assert _pts(row["temporal"]) in text and _pts(row["temporal_ci_high"]) in text
            assert f"n = {int(row['n'])} questions" in text and CI_METHODS[row["ci_method"]] in text
            assert finding["test"] == CI_TESTS[row["ci_method"]]
        elif topic == "compression":
            # The within-model change, paired: the flips row of the strongest level, its accuracies on its own n
            # questions, and McNemar's p recomputed here with scipy.
            assert finding["source_table"] == "crf_flips" and row["task_type"] == "Overall"
            assert int(row["crf"]) == max(int(c[3:]) for c in tables["crf"]["condition"] if c.startswith("crf"))
            b, c = int(row["c_to_i"]), int(row["i_to_c"])
            p, test = _mcnemar_scipy(b, c)
            assert row["p"] == pytest.approx(p, rel=1e-9) and row["test"] == test
            assert f"McNemar {test} p = {p:.2g}" in text and finding["test"] == f"McNemar {test} (paired)"
            assert f"n = {int(row['n'])} questions" in text
            assert f"from {_pct(row['acc_orig'])} to {_pct(row['acc_level'])}" in text
            assert f"{b} right to wrong and {c} wrong to right" in text
            crf = tables["crf"]
            mine = crf[(crf["model"] == finding["model"]) & (crf["task_type"] == "Overall")].set_index("condition")
            assert row["acc_orig"] == pytest.approx(mine.loc["orig", "acc"])
            assert row["acc_level"] == pytest.approx(mine.loc[row["condition"], "acc"])
            assert "CI" not in text  # no unpaired interval for a within-model change
        elif topic == "letters":
            assert f"letter is {row['top_pred']}," in text and _pct(row["top_pred_share"]) in text
            assert f"{row['p_pred']:.2g}" in text and f"n = {int(row['n_letter'])} answers" in text
            assert "4 options" in text  # every Video-MME question has 4
            assert finding["test"] == "chi-square against uniform guessing among each question's options"
            assert finding["question_rule"].startswith(f"orig, the {int(row['n_letter'])} answers")
        assert finding["test"] and finding["question_rule"], finding
    # every (model, benchmark) with a VDG gets the video sentence first
    firsts = findings.groupby("model", sort=False)["topic"].first()
    assert set(firsts) == {"video"} and len(firsts) == tables["vdg"]["model"].nunique()


def test_one_question_set_per_sentence_each_naming_its_n():
    # qwen2vl: the VDG compares 547 questions, the CRF flips 545 (an error at a CRF level drops two more). Each
    # sentence names its own n, and no sentence quotes an accuracy of another set than its own: the compression
    # sentence quotes orig accuracy on the flips' 545 questions, never the video sentence's (547) or the crf table's
    # Wilson interval.
    tables = _tables()
    mine = tables["findings"][tables["findings"]["model"] == "qwen2vl"].set_index("topic")
    vdg = tables["vdg"].query("model == 'qwen2vl' and task_type == 'Overall'").iloc[0]
    flips = tables["crf_flips"].query("model == 'qwen2vl' and task_type == 'Overall' and condition == 'crf38'")
    flips = flips.iloc[0]
    assert int(vdg["n"]) == 547 and int(flips["n"]) == 545
    for topic, sentence in mine["sentence"].items():
        assert re.search(r"\bn = \d+", sentence), (topic, sentence)
    assert "n = 547 questions" in mine.loc["video", "sentence"]
    compression = mine.loc["compression", "sentence"]
    assert "n = 545 questions" in compression and _pct(flips["acc_orig"]) in compression
    assert _pct(vdg["acc_orig"]) not in compression and _pct(vdg["acc_orig"]) != _pct(flips["acc_orig"])


def test_the_task_types_ci_is_bonferroni_at_the_familys_size_recomputed_with_scipy():
    frame = reference_frame(("qwen2vl",), ORIG_BLACK)
    tables = run_all(frame, FAST)
    finding = tables["findings"].set_index("topic").loc["task_types"]
    questions = _per_question_vdg(frame, "qwen2vl")
    groups = {t: g["vdg"].to_numpy(float) for t, g in questions.groupby("task_type") if len(g) >= FAST.min_stratum}
    m = len(groups) * (len(groups) - 1) // 2
    row = _source_row(tables, finding)
    x, y = groups[row["task_type_a"]], groups[row["task_type_b"]]
    va, vb = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    df = (va + vb) ** 2 / (va**2 / (len(x) - 1) + vb**2 / (len(y) - 1))
    half = stats.t.ppf(1 - FAST.alpha / m / 2, df) * np.sqrt(va + vb)
    low, high = x.mean() - y.mean() - half, x.mean() - y.mean() + half
    assert (finding["ci_low"], finding["ci_high"]) == pytest.approx((low, high), rel=1e-9)
    assert f"{_pts(low)} to {_pts(high)}" in finding["sentence"]
    assert f"{100 * (1 - FAST.alpha / m):.4g}% Bonferroni CI over the {m} pairs" in finding["sentence"]
    unadjusted = stats.ttest_ind(x, y, equal_var=False).confidence_interval(FAST.ci_level)
    assert _pts(unadjusted.low) not in finding["sentence"]  # the unadjusted CI is not the one quoted


def test_mixed_option_counts_are_said_as_a_range():
    # MVBench-like: task type T3 has 3 options, T5 5 (the record's n_options). The letters sentence says "3-5
    # options", the range of the orig questions' counts recomputed from the frame; a single count stays one number.
    records = []
    for i in range(40):
        for task, k in (("T3", 3), ("T5", 5)):
            for condition, right in (("orig", i % 2 == 0), ("black", i % 3 == 0)):
                fields = outcome_fields(right)
                records.append(tidy_row("m", condition, f"{task}-{i}", "mv", task_type=task, n_options=k, **fields))
    frame = tidy_frame(records)
    frame["n_options"] = [int(r["n_options"]) for r in records]
    tables = run_all(frame, FAST)
    finding = tables["findings"].set_index("topic").loc["letters"]
    orig = frame[frame["condition"] == "orig"]["n_options"]
    assert (orig.min(), orig.max()) == (3, 5)
    assert f"({orig.min()}-{orig.max()} options;" in finding["sentence"]
    assert tables["letters"].query("condition == 'orig'")["n_options"].iloc[0] == 5  # the table's largest
    single = run_all(frame[frame["task_type"] == "T5"].reset_index(drop=True), FAST)["findings"]
    assert "(5 options;" in single.set_index("topic").loc["letters", "sentence"]


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


def test_report_md_opens_with_the_first_screen_then_the_findings():
    tables = _tables()
    markdown = render_markdown(tables)
    headings = re.findall(r"^## (.+)$", markdown, flags=re.M)
    assert headings[:2] == ["At a glance", "Findings"]
    first = tables["findings"]["sentence"].iloc[0]
    assert markdown.index(first) < markdown.index("## Summary")
    assert "Findings" in render_html(tables) and html.escape(first) in render_html(tables)


def test_not_computed_names_only_what_the_benchmark_offers():
    from postprocess.rendering.pages import _skip_lines
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
        return {"model": "m", "benchmark": "b", "task_type_a": a, "task_type_b": b, "n_a": 40, "n_b": 50,
                "vdg_a": vdg_a, "vdg_b": vdg_b, "diff": vdg_a - vdg_b, "ci_low": 0.01, "ci_high": 0.2,
                "ci_low_adjusted": -0.03, "ci_high_adjusted": 0.25, "ci_level_adjusted": 1 - 0.05 / 3,
                "p_holm": p_holm, "n_family": 3, "significant": p_holm < 0.05}  # fmt: skip

    contrast = pd.DataFrame(
        [pair("A", "C", 0.6, 0.1, 0.2), pair("B", "C", 0.3, 0.1, 0.01), pair("A", "B", 0.6, 0.3, 0.5)]
    )
    (row,) = findings_module._task_types({"task_type_contrast": contrast}, ("m", "b"), 0.95)
    assert not row["sentence"].startswith("No two task types")
    assert "1 of 3 pairs do" in row["sentence"]
    assert "B (VDG +30.0, n = 40) and C (VDG +10.0, n = 50)" in row["sentence"]
    assert row["source_row"] == "task_type_a=B, task_type_b=C" and row["value"] == pytest.approx(0.2)
    assert "98.33% Bonferroni CI over the 3 pairs -3.0 to +25.0" in row["sentence"]
    assert (row["ci_low"], row["ci_high"]) == (-0.03, 0.25) and row[
        "test"
    ] == "Welch t, Holm over 3 pairs; Bonferroni CI"
    # a table without the Bonferroni columns: the CI quoted is labelled unadjusted, in the sentence and in test
    bare = contrast.drop(columns=["ci_low_adjusted", "ci_high_adjusted", "ci_level_adjusted"])
    (row,) = findings_module._task_types({"task_type_contrast": bare}, ("m", "b"), 0.95)
    assert "unadjusted 95% CI +1.0 to +20.0" in row["sentence"] and row["test"].endswith("; unadjusted CI")
    none = contrast.assign(significant=False)
    (row,) = findings_module._task_types({"task_type_contrast": none}, ("m", "b"), 0.95)
    assert (
        row["sentence"].startswith("No two task types differ reliably")
        and "A (VDG +60.0, n = 40) and C" in row["sentence"]
    )


def test_every_ci_method_has_its_test_name():
    assert set(CI_TESTS) == set(CI_METHODS)


def test_a_resampled_video_ci_is_named_as_the_bootstrap_it_is():
    # Under ci_method="resample" the vdg row's CI is a Monte Carlo bootstrap of whole videos (Video-MME: three
    # questions per video): the sentence and test say so, from the row's ci_method and resample_unit.
    tables = run_all(reference_frame(("qwen2vl",), ORIG_BLACK), ReportSettings(ci_method="resample", n_resamples=200))
    finding = tables["findings"].set_index("topic").loc["video"]
    row = _source_row(tables, finding)
    assert (row["ci_method"], row["resample_unit"]) == ("monte carlo", "video")
    assert f"{CI_METHODS['monte carlo']}, resampling whole videos)" in finding["sentence"]
    assert finding["test"] == "Monte Carlo percentile bootstrap (paired), resampling whole videos"
    assert "Tango" not in finding["sentence"]


N_PROTOCOL = 40


def _protocol_frame() -> pd.DataFrame:
    """One model on one benchmark under orig, black, options_shuffled, mute and nameswap: question i's answer is
    LETTERS[i % 4]; orig is right unless i % 3 == 0, black right when i % 4 == 0, mute as orig but wrong when
    i % 5 == 0, the shuffle followed by content, the name swap changing the letter when i % 4 == 1."""
    letters = "ABCD"
    rows = []
    for i in range(N_PROTOCOL):
        qid, answer = f"v{i:02d}-1", letters[i % 4]
        after = letters[(i % 4 + 1) % 4]
        orig = answer if i % 3 else after
        order = shuffle_order(qid, 4, i % 4)
        picks = {
            "orig": orig,
            "black": answer if i % 4 == 0 else after,
            "mute": after if i % 5 == 0 else orig,
            "nameswap": letters[(letters.index(orig) + 1) % 4] if i % 4 == 1 else orig,
        }
        common = {"task_type": f"T{i % 2}", "n_options": 4}
        for condition, pick in picks.items():
            extra = {"swap_to": "Ross", "swap_gender": "same"} if condition == "nameswap" else {}
            rows.append(tidy_row("m", condition, qid, **common, **extra, **answer_fields(answer, pick, "ok")))
        moved = letters[order.index(i % 4)]
        content = letters[order.index(letters.index(orig))]
        shuffled_from = "".join(letters[k] for k in order)
        rows.append(tidy_row("m", "options_shuffled", qid, **common, shuffled_from=shuffled_from,
                             **answer_fields(moved, content, "ok")))  # fmt: skip
    return tidy_frame(rows)


def test_tracking_probes_added_conditions_and_shortcuts_each_get_a_sentence_of_their_own_numbers():
    frame = _protocol_frame()
    tables = run_all(frame, FAST, workers=1)
    findings = tables["findings"]
    by_topic = {topic: rows.to_dict("records") for topic, rows in findings.groupby("topic")}
    assert {"tracking", "probes", "added"} <= set(by_topic)
    orig_right = [i % 3 != 0 for i in range(N_PROTOCOL)]
    # tracking: the letter changes on the questions with i % 4 == 1, out of all of them
    (swap,) = by_topic["tracking"]
    changed = sum(i % 4 == 1 for i in range(N_PROTOCOL))
    assert swap["value"] == pytest.approx(changed / N_PROTOCOL)
    assert _pct(changed / N_PROTOCOL) in swap["sentence"] and f"n = {N_PROTOCOL} " in swap["sentence"]
    low, high = stats.binomtest(changed, N_PROTOCOL).proportion_ci(0.95, method="wilson")
    assert (swap["ci_low"], swap["ci_high"]) == pytest.approx((low, high), abs=1e-9)
    # probes: the shuffle is followed by content on every question it moved
    (shuffle,) = [f for f in by_topic["probes"] if "options_shuffled" in f["sentence"]]
    assert shuffle["value"] == 1.0 and shuffle["source_table"] == "probes"
    # added: mute loses the questions orig had right with i % 5 == 0; beside it, black on the same questions
    mute = [f for f in by_topic["added"] if f["sentence"].startswith("Under mute")]
    beside = [f for f in by_topic["added"] if "also run under black" in f["sentence"]]
    lost = sum(orig_right[i] and i % 5 == 0 for i in range(N_PROTOCOL))  # mute's pick is then never right
    assert len(mute) == 1 and mute[0]["value"] == pytest.approx(-lost / N_PROTOCOL)
    assert _pts(-lost / N_PROTOCOL) in mute[0]["sentence"]
    black_right = [i % 4 == 0 for i in range(N_PROTOCOL)]
    black_diff = (sum(black_right) - sum(orig_right)) / N_PROTOCOL
    assert len(beside) == 1 and beside[0]["value"] == pytest.approx(black_diff)
    assert _pts(black_diff) in beside[0]["sentence"] and "of all three" in beside[0]["question_rule"]
    for finding in (swap, shuffle, *mute, *beside):
        row = _source_row(tables, finding)
        assert finding["value"] == pytest.approx(float(row[finding["source_column"]]))


def test_the_shortcuts_sentences_name_the_types_the_text_answers_and_the_black_correlation():
    frame = _protocol_frame()
    types = pd.DataFrame(
        {
            "benchmark": "b",
            "task_type": ["T0", "T1", "Overall", "T0", "T1", "Overall"],
            "answerer": ["combined"] * 3 + ["linear"] * 3,
            "n": [20, 20, 40] * 2,
            "accuracy": [0.9, 0.25, 0.575, 0.3, 0.3, 0.3],
            "ci_low": [0.7, 0.1, 0.4, 0.1, 0.1, 0.2],
            "ci_high": [0.97, 0.45, 0.7, 0.5, 0.5, 0.4],
            "chance": 0.25,
            "p_holm": [1e-6, 0.9, 1e-4, 0.5, 0.5, 0.3],
            "above_chance": [True, False, True, False, False, False],
        }
    )
    links = pd.DataFrame({"model": "m", "benchmark": "b", "condition": ["black", "orig"], "n": 40, "r": [0.41, 0.1],
                          "p": [0.008, 0.5]})  # fmt: skip
    tables = {"shortcut_types": types, "shortcut_links": links}
    found = findings_table(tables, frame, FAST)
    text, link = found[found["topic"] == "shortcuts"].to_dict("records")
    assert "answers T0 above chance" in text["sentence"] and "T1" not in text["sentence"]
    assert "Holm over 2 task types" in text["sentence"] and _pct(0.575) in text["sentence"]
    assert text["value"] == 0.575 and text["source_row"] == "benchmark=b, task_type=Overall, answerer=combined"
    assert "r = +0.41" in link["sentence"] and "p = 0.008" in link["sentence"] and link["value"] == 0.41
    nothing = findings_table({"shortcut_types": types.assign(above_chance=False)}, frame, FAST)
    assert "answers no task type above chance" in nothing["sentence"].iloc[0]
