"""The report's first screen in words: per model and benchmark, one sentence per finding, each with its number.

Every sentence restates values of one row of another table (``source_table``, the row picked by
``source_row``, the headline value in ``source_column``); nothing here computes a statistic. Every sentence names
its own question count (n), and ``test`` and ``question_rule`` name the test or interval behind its numbers and the
questions they are computed on (the source row's own ``question_rule`` where it has one). Topics, in report order,
each only where its table has the row:

- ``video``: the Overall VDG (``vdg``): accuracy with the video and with the black screen, the gap and
  its paired CI, the interval's method named in words (the row's ``ci_method``).
- ``task_types``: the most and the least visual task type (largest and smallest VDG among those with a
  CI) and whether they differ by Welch's test, Holm-adjusted over every pair (``task_type_contrast``);
  without a significant difference the sentence says that no pair differs. The pair is picked among
  ``n_family``, so the CI quoted is the Bonferroni one at the family's size (``ci_low_adjusted``), consistent with
  the Holm decision (a Bonferroni CI that excludes 0 implies Holm rejects), not the unadjusted one.
- ``tiers``: every task type named under its tier (``tiers``, the model's own rows: each VDG's CI against the tier
  thresholds), the task type with the largest VDG as the source row.
- ``temporal``: what temporal order adds (``ladder``'s Overall ``temporal`` with its CI).
- ``compression``: at the strongest CRF level (``crf_flips``, Overall): accuracy at orig and at the level on the
  flips' own questions, how many answers change correctness each way, and McNemar's paired test of the change (a
  within-model change is stated with the paired test, not with two unpaired accuracy intervals).
- ``tracking``: how often swapping the character's name changes the answer (``name_swap``, split ``all``, its
  Wilson CI).
- ``probes``: each probe's own measure in one sentence (``probes``, Overall: the row's ``reading``, its n).
- ``added``: each added condition's accuracy change against orig with its paired CI (``added_conditions``,
  Overall); where the condition is declared beside another (mute beside black), a second sentence gives that one's
  change on the questions answered under all three.
- ``circular``: accuracy right under every rotation of the options against single-pass accuracy, and the drop with
  its paired CI (``circular``, Overall); the rotations get no ``added`` sentence of their own.
- ``shortcuts``: which task types the question text alone answers above chance (``shortcut_types``, the combined
  answerer, Holm over the benchmark's task types; a benchmark-wide row, the same for every model), and under black,
  how the model's correctness follows the text-only score s(q) (``shortcut_links``: Pearson r, its p).
- ``leakage``: the model with no visual input against its own language backbone on the same prompts (``leakage``,
  Overall): both accuracies, the multi-modal leakage (blind - backbone) with its paired CI and MMStar's max(0, .),
  and the backbone's text prior over chance.
- ``letters``: the most chosen letter with the video and the chi-square test against uniform
  guessing among each question's options (``letters``, the orig row); the option count is a range ("3-5 options")
  where the questions' counts differ (the ``above_chance`` table's Overall orig row).

Percentages are of questions; "points" are percentage points (a difference of two accuracies).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from postprocess.analyses._paired import OVERALL
from postprocess.analyses.base import Digest, ReportSettings, empty, skip_reason
from postprocess.rendering.formatting import CI_METHODS
from vdg_tasks.vocabulary.conditions import circular_rotations

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "topic": "video, task_types, tiers, temporal, compression, tracking, probes, added, circular, shortcuts, "
    "leakage or letters",
    "sentence": "the finding in words, with its numbers",
    "value": "the headline number of the sentence (a proportion, a difference of proportions or, for shortcuts, "
    "Pearson's r)",
    "ci_low": "lower bound of its CI, as in the source table (empty where the source has none)",
    "ci_high": "upper bound of its CI",
    "source_table": "the table the numbers come from",
    "source_row": "the row of source_table, as column=value pairs joined by ', ' (with model and benchmark, where "
    "source_table has them)",
    "source_column": "the column of that row holding value",
    "test": "the test or interval behind the sentence's numbers, as the source row states it (its ci_method, test or "
    "Holm family)",
    "question_rule": "the questions the sentence's numbers are computed on: the source row's question_rule, or a "
    "description where the source table has none",
}

#: Each ``ci_method`` value (``formatting.CI_METHODS``'s keys) as ``test`` names it.
CI_TESTS: dict[str, str] = {
    "tango score": "Tango score interval (paired)",
    "tango score (design effect)": "Tango score interval (paired, variance scaled by the video design effect)",
    "exact": "exact percentile bootstrap (paired)",
    "monte carlo": "Monte Carlo percentile bootstrap (paired)",
}


def method_words(method: str) -> str:
    """One ``ci_method`` value in words (``formatting.CI_METHODS``; the value itself when it has none)."""
    return CI_METHODS.get(method, method)


def methods_words(values: object) -> list[str]:
    """The distinct ``ci_method`` values among ``values`` (each maybe several joined by ' + '), in words, in first-seen
    order; none for empty values."""
    seen: dict[str, None] = {}
    for value in values if isinstance(values, (list, tuple, pd.Series, np.ndarray)) else [values]:
        if isinstance(value, str):
            for part in value.split(" + "):
                if part:
                    seen[method_words(part)] = None
    return list(seen)


def points(value: float) -> str:
    """A difference of proportions in signed percentage points: 0.123 -> '+12.3'."""
    return f"{100 * value:+.1f}"


def percent(value: float) -> str:
    """A proportion as a percentage: 0.5 -> '50.0%'."""
    return f"{100 * value:.1f}%"


def _ci_points(row: Mapping, low: str = "ci_low", high: str = "ci_high", level: float = 0.95) -> str:
    if pd.isna(row.get(low)) or pd.isna(row.get(high)):
        return "no CI: fewer questions than min_stratum"
    return f"{level:.0%} CI {points(row[low])} to {points(row[high])}"


def _methods(row: Mapping) -> list[str]:
    """The row's ``ci_method`` values (several joined by ' + '); none without one."""
    value = row.get("ci_method")
    return [part for part in value.split(" + ") if part] if isinstance(value, str) else []


def _videos(row: Mapping) -> bool:
    """Whether the row's CI treated a video's questions as one unit (``resample_unit``) by resampling videos (a
    score interval says so in its method: ``design effect``)."""
    return row.get("resample_unit") == "video" and any(m in ("exact", "monte carlo") for m in _methods(row))


def ci_words(row: Mapping) -> str:
    """How the row's CI was computed, in words (``formatting.CI_METHODS``); empty without a ``ci_method``."""
    words = " and ".join(method_words(m) for m in _methods(row))
    return f"{words}, resampling whole videos" if words and _videos(row) else words


def ci_test(row: Mapping) -> str:
    """``test`` of a finding whose interval is the row's paired CI (``CI_TESTS``)."""
    text = " + ".join(CI_TESTS.get(m, m) for m in _methods(row))
    return f"{text}, resampling whole videos" if text and _videos(row) else text


def _paired_ci(row: Mapping, low: str, high: str, level: float) -> str:
    """The CI with its method in words: '95% CI +1.0 to +2.0, Tango's score interval ...'."""
    text, words = _ci_points(row, low, high, level), ci_words(row)
    return f"{text}, {words}" if words and pd.notna(row.get(low)) else text


def _usable(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame | None:
    table = tables.get(name)
    if table is None or not len(table) or skip_reason(table) is not None:
        return None
    return table


def _finding(
    run: tuple[str, str],
    topic: str,
    sentence: str,
    row: Mapping,
    table: str,
    where: Mapping,
    column: str,
    ci: tuple[str, str] | None = ("ci_low", "ci_high"),
    *,
    test: str,
    rule: str | None = None,
) -> dict[str, object]:
    """One finding; ``rule``: the question set where the source row has no ``question_rule``."""
    own = row.get("question_rule")
    return {
        "model": run[0],
        "benchmark": run[1],
        "topic": topic,
        "sentence": sentence,
        "value": float(row[column]),
        "ci_low": float(row[ci[0]]) if ci and pd.notna(row.get(ci[0])) else np.nan,
        "ci_high": float(row[ci[1]]) if ci and pd.notna(row.get(ci[1])) else np.nan,
        "source_table": table,
        "source_row": ", ".join(f"{k}={v}" for k, v in where.items()),
        "source_column": column,
        "test": test,
        "question_rule": own if isinstance(own, str) and own else (rule or ""),
    }


def _row(table: pd.DataFrame | None, run: tuple[str, str], **where: object) -> Mapping | None:
    if table is None:
        return None
    mask = (table["model"] == run[0]) & (table["benchmark"] == run[1])
    for column, value in where.items():
        mask &= table[column] == value
    rows = table[mask]
    return rows.iloc[0].to_dict() if len(rows) else None


def _video(tables, run, level) -> list[dict]:
    row = _row(_usable(tables, "vdg"), run, task_type=OVERALL)
    if row is None or pd.isna(row["vdg"]):
        return []
    sentence = (
        f"{points(row['vdg'])} points of accuracy need the video: {percent(row['acc_orig'])} right with it, "
        f"{percent(row['acc_black'])} with a black screen, on n = {int(row['n'])} questions "
        f"({_paired_ci(row, 'ci_low', 'ci_high', level)})."
    )
    return [_finding(run, "video", sentence, row, "vdg", {"task_type": OVERALL}, "vdg", test=ci_test(row))]


def _task_types(tables, run, level) -> list[dict]:
    contrast = _usable(tables, "task_type_contrast")
    if contrast is None:
        return []
    pairs = contrast[(contrast["model"] == run[0]) & (contrast["benchmark"] == run[1])]
    if not len(pairs):
        return []
    widest = pairs.loc[pairs["diff"].idxmax()].to_dict()
    reliable = pairs[pairs["significant"].astype(bool)]
    if widest["significant"]:
        row, sentence = widest, f"Most and least visual task types: {_pair_text(widest, level)}."
    elif len(
        reliable
    ):  # a narrower pair with more questions (or less spread) can survive Holm where the widest does not
        row = reliable.loc[reliable["diff"].idxmax()].to_dict()
        sentence = (
            f"The widest pair of task types does not differ reliably in VDG, but {len(reliable)} of "
            f"{int(row['n_family'])} pairs do; the widest of those: {_pair_text(row, level)}."
        )
    else:
        row = widest
        sentence = (
            f"No two task types differ reliably in VDG: even the widest pair, {_pair_text(widest, level)}, "
            "is not significant."
        )
    where = {"task_type_a": row["task_type_a"], "task_type_b": row["task_type_b"]}
    adjusted = _bonferroni(row)
    test = f"Welch t, Holm over {int(row['n_family'])} pairs; " + ("Bonferroni CI" if adjusted else "unadjusted CI")
    ci = ("ci_low_adjusted", "ci_high_adjusted") if adjusted else ("ci_low", "ci_high")
    return [_finding(run, "task_types", sentence, row, "task_type_contrast", where, "diff", ci, test=test)]


def _bonferroni(row: Mapping) -> bool:
    """Whether the contrast row has its Bonferroni CI (``ci_low_adjusted``, at ``ci_level_adjusted``)."""
    return all(pd.notna(row.get(c)) for c in ("ci_low_adjusted", "ci_high_adjusted", "ci_level_adjusted"))


def _pair_text(row: Mapping, level: float) -> str:
    family = int(row["n_family"])
    p = f"Holm-adjusted p = {row['p_holm']:.2g} over {family} pairs"
    if _bonferroni(row):
        ci = (
            f"{100 * row['ci_level_adjusted']:.4g}% Bonferroni CI over the {family} pairs "
            f"{points(row['ci_low_adjusted'])} to {points(row['ci_high_adjusted'])}"
        )
    else:
        ci = f"unadjusted {_ci_points(row, level=level)}"

    def size(side: str) -> str:
        return f", n = {int(row[f'n_{side}'])}" if pd.notna(row.get(f"n_{side}")) else ""

    return (
        f"{row['task_type_a']} (VDG {points(row['vdg_a'])}{size('a')}) and {row['task_type_b']} "
        f"(VDG {points(row['vdg_b'])}{size('b')}) differ by {points(row['diff'])} points ({ci}; {p})"
    )


def _temporal(tables, run, level) -> list[dict]:
    row = _row(_usable(tables, "ladder"), run, task_type=OVERALL)
    if row is None or pd.isna(row.get("temporal")):
        return []
    sentence = (
        f"Temporal order adds {points(row['temporal'])} points ({row['temporal_definition']}; "
        f"{_paired_ci(row, 'temporal_ci_low', 'temporal_ci_high', level)}; n = {int(row['n'])} questions)."
    )
    return [
        _finding(
            run,
            "temporal",
            sentence,
            row,
            "ladder",
            {"task_type": OVERALL},
            "temporal",
            ("temporal_ci_low", "temporal_ci_high"),
            test=ci_test(row),
        )
    ]


def _compression(tables, run, level) -> list[dict]:
    flips = _usable(tables, "crf_flips")
    if flips is None or "p" not in flips.columns:
        return []
    mine = flips[(flips["model"] == run[0]) & (flips["benchmark"] == run[1]) & (flips["task_type"] == OVERALL)]
    if not len(mine):
        return []
    flip = mine.loc[mine["crf"].idxmax()].to_dict()
    if not flip["n"]:
        return []
    n, c_to_i, i_to_c = int(flip["n"]), int(flip["c_to_i"]), int(flip["i_to_c"])
    changed = c_to_i + i_to_c
    if changed:
        test = f"McNemar {flip['test']} (paired)"
        p = f"McNemar {flip['test']} p = {flip['p']:.2g}"
    else:
        test, p = "none: no answer changes", "no answer changes, so there is nothing to test"
    sentence = (
        f"At CRF {int(flip['crf'])}, accuracy goes from {percent(flip['acc_orig'])} to {percent(flip['acc_level'])} "
        f"on n = {n} questions (those answered at orig and every CRF level): {c_to_i} right to wrong and {i_to_c} "
        f"wrong to right ({p})."
    )
    where = {"task_type": OVERALL, "condition": flip["condition"]}
    return [_finding(run, "compression", sentence, flip, "crf_flips", where, "acc_level", None, test=test)]


def _options_text(tables, run, row: Mapping) -> str:
    """The orig questions' option count: the above_chance table's Overall orig row ('4', or '3-5' when the counts
    differ) where it counts the same questions, else 'at most' the letters row's largest count."""
    chance = _row(_usable(tables, "above_chance"), run, condition="orig", task_type=OVERALL)
    if chance is not None and chance.get("n") == row.get("n") and str(chance.get("n_options") or ""):
        return f"{chance['n_options']} options"
    return f"at most {int(row['n_options'])} options"


def _letters(tables, run, level) -> list[dict]:
    row = _row(_usable(tables, "letters"), run, condition="orig")
    if row is None or not row.get("n_letter") or not isinstance(row.get("top_pred"), str) or not row["top_pred"]:
        return []
    p = row["p_pred"]
    tested = not math.isnan(p)
    test = f"chi-square against uniform guessing p = {p:.2g}" if tested else "no chi-square test"
    sentence = (
        f"With the video the most chosen letter is {row['top_pred']}, in {percent(row['top_pred_share'])} of "
        f"n = {int(row['n_letter'])} answers with a letter ({_options_text(tables, run, row)}; {test})."
    )
    counted = "answered (ok + unparsed)" + (", errors scored wrong" if row.get("missing_policy") == "incorrect" else "")
    rule = (
        f"orig, the {int(row['n_letter'])} answers with a readable letter among the {int(row['n'])} questions {counted}"
    )
    return [
        _finding(
            run,
            "letters",
            sentence,
            row,
            "letters",
            {"condition": "orig"},
            "top_pred_share",
            None,
            test="chi-square against uniform guessing among each question's options" if tested else "",
            rule=rule,
        )
    ]


#: Tiers in the order a sentence names them (``tiers``' values without their reasons).
TIER_ORDER = ("high", "high/mid", "mid", "mid/low", "low", "too small")


def _tiers(tables, run, level) -> list[dict]:
    tiers = _usable(tables, "tiers")
    if tiers is None or "n_models" not in tiers.columns:
        return []
    mine = tiers[(tiers["model"] == run[0]) & (tiers["benchmark"] == run[1]) & (tiers["n_models"] == 1)]
    mine = mine[(mine["task_type"] != OVERALL) & mine["tier"].astype(str).ne("") & mine["vdg"].notna()]
    if not len(mine):
        return []
    short = mine["tier"].astype(str).str.split(" (", n=1, regex=False).str[0]
    groups = [
        f"{tier}: {', '.join(sorted(mine.loc[short == tier, 'task_type'].astype(str)))}"
        for tier in [*TIER_ORDER, *sorted(set(short) - set(TIER_ORDER))]
        if (short == tier).any()
    ]
    top = mine.loc[mine["vdg"].astype(float).idxmax()].to_dict()
    sizes = mine["n"].astype(int)
    n_text = f"n = {sizes.min()}" + (f"-{sizes.max()}" if sizes.max() != sizes.min() else "")
    low, high = float(top["tier_low"]), float(top["tier_high"])
    sentence = (
        f"Task types by tier ({n_text} questions each; a tier from the VDG's {level:.0%} CI against {100 * low:g} and "
        f"{100 * high:g} points): " + "; ".join(groups) + "."
    )
    test = f"{level:.0%} CI of each task type's VDG against the tier thresholds (tiers table)"
    vdg_row = _row(_usable(tables, "vdg"), run, task_type=top["task_type"])
    rule = str(vdg_row["question_rule"]) if vdg_row else "each task type's questions in the vdg table"
    where = {"task_type": top["task_type"], "n_models": 1}
    return [_finding(run, "tiers", sentence, top, "tiers", where, "vdg", test=test, rule=rule)]


def _share_ci(row: Mapping, low: str, high: str, level: float) -> str:
    if pd.isna(row.get(low)) or pd.isna(row.get(high)):
        return "no CI: fewer questions than min_stratum"
    return f"{level:.0%} CI {percent(row[low])} to {percent(row[high])}"


def _tracking(tables, run, level) -> list[dict]:
    row = _row(_usable(tables, "name_swap"), run, split="all")
    if row is None or not row.get("n") or pd.isna(row.get("sensitivity")):
        return []
    sentence = (
        f"Swapping the character's name changes the answer on {percent(row['sensitivity'])} of n = {int(row['n'])} "
        f"questions ({_share_ci(row, 'ci_low', 'ci_high', level)})."
    )
    rule = "orig and nameswap: the questions answered with a readable letter under both"
    return [
        _finding(
            run,
            "tracking",
            sentence,
            row,
            "name_swap",
            {"split": "all"},
            "sensitivity",
            test="Wilson interval",
            rule=rule,
        )
    ]


def _overall_rows(tables: Mapping[str, pd.DataFrame], name: str, run: tuple[str, str], column: str) -> list[dict]:
    """The run's Overall rows of table ``name`` that have questions and a ``column`` value, in the table's order."""
    table = _usable(tables, name)
    if table is None:
        return []
    mine = table[(table["model"] == run[0]) & (table["benchmark"] == run[1]) & (table["task_type"] == OVERALL)]
    return [row for row in mine.to_dict("records") if pd.notna(row.get(column)) and row.get("n")]


def _probes(tables, run, level) -> list[dict]:
    out = []
    for row in _overall_rows(tables, "probes", run, "value"):
        sentence = f"Probe {row['probe']} (n = {int(row['n_measure'])}): {row['reading']}."
        share = row["measure"] in ("content_share", "none_rate")
        test = "Wilson interval" if share else ci_test(row)
        where = {"task_type": OVERALL, "probe": row["probe"]}
        out.append(
            _finding(run, "probes", sentence, row, "probes", where, "value", ("value_low", "value_high"), test=test)
        )
    return out


def _added(tables, run, level) -> list[dict]:
    out = []
    rotations = circular_rotations()  # the circular sentence speaks for them
    for row in _overall_rows(tables, "added_conditions", run, "diff"):
        if row["condition"] in rotations:
            continue
        where = {"task_type": OVERALL, "condition": row["condition"]}
        sentence = (
            f"Under {row['condition']}, accuracy changes by {points(row['diff'])} points against orig "
            f"(n = {int(row['n'])}; {_ci_points(row, level=level)})."
        )
        out.append(_finding(run, "added", sentence, row, "added_conditions", where, "diff", test=ci_test(row)))
        if row.get("beside") and pd.notna(row.get("diff_beside")) and row.get("n_beside"):
            sentence = (
                f"On the n = {int(row['n_beside'])} questions also run under {row['beside']}, {row['condition']} "
                f"changes accuracy by {points(row['diff_same_questions'])} points and {row['beside']} by "
                f"{points(row['diff_beside'])} ({_ci_points(row, 'beside_ci_low', 'beside_ci_high', level)})."
            )
            arms = f"orig, {row['condition']} and {row['beside']}, the n_beside questions of all three"
            rule = f"{arms}: {row['question_rule']}" if row.get("question_rule") else arms
            beside = _finding(
                run,
                "added",
                sentence,
                row,
                "added_conditions",
                where,
                "diff_beside",
                ("beside_ci_low", "beside_ci_high"),
                test=ci_test(row),
            )
            out.append({**beside, "question_rule": rule})  # not the row's: its beside columns pair three arms
    return out


def _circular(tables, run, level) -> list[dict]:
    row = _row(_usable(tables, "circular"), run, task_type=OVERALL)
    if row is None or not row.get("n") or pd.isna(row.get("drop")):
        return []
    sentence = (
        f"Right under every rotation of the options on {percent(row['acc_circular'])} of n = {int(row['n'])} "
        f"questions against {percent(row['acc_single'])} in one pass: {points(row['drop'])} points depend on where "
        f"the options stand ({_ci_points(row, level=level)})."
    )
    return [_finding(run, "circular", sentence, row, "circular", {"task_type": OVERALL}, "drop", test=ci_test(row))]


#: The text-only answerer a shortcuts sentence quotes (``vdg shortcuts``: linear, forest, combined).
SHORTCUT_ANSWERER = "combined"


def _shortcuts(tables, run, level) -> list[dict]:
    out = []
    types = _usable(tables, "shortcut_types")
    if types is not None and "above_chance" in types.columns:
        mine = types[(types["benchmark"] == run[1]) & (types["answerer"] == SHORTCUT_ANSWERER)]
        overall = mine[mine["task_type"] == OVERALL]
        per_type = mine[(mine["task_type"] != OVERALL) & mine["p_holm"].notna()]
        if len(overall) and len(per_type):
            row = overall.iloc[0].to_dict()
            above = sorted(per_type.loc[per_type["above_chance"].astype(bool), "task_type"].astype(str))
            family = f"Holm over {len(per_type)} task types"
            named = ", ".join(above) if above else "no task type"
            sentence = (
                f"The question text alone answers {named} above chance ({SHORTCUT_ANSWERER} text-only answerer, "
                f"{family}); over all n = {int(row['n'])} questions it scores {percent(row['accuracy'])} against "
                f"{percent(row['chance'])} chance."
            )
            where = {"benchmark": run[1], "task_type": OVERALL, "answerer": SHORTCUT_ANSWERER}
            test = f"one-sided exact binomial test against chance per task type, {family}; Wilson interval"
            rule = "the benchmark's questions, cross-validated by vdg shortcuts (text only, no model)"
            finding = _finding(run, "shortcuts", sentence, row, "shortcut_types", {}, "accuracy", test=test, rule=rule)
            finding["source_row"] = ", ".join(f"{k}={v}" for k, v in where.items())
            out.append(finding)
    row = _row(_usable(tables, "shortcut_links"), run, condition="black")
    if row is not None and row.get("n") and pd.notna(row.get("r")):
        sentence = (
            f"Under black, correctness follows the text-only score s(q) with r = {row['r']:+.2f} "
            f"(Pearson, p = {row['p']:.2g}, n = {int(row['n'])})."
        )
        rule = "black: the questions answered that have an s(q)"
        out.append(
            _finding(
                run,
                "shortcuts",
                sentence,
                row,
                "shortcut_links",
                {"condition": "black"},
                "r",
                None,
                test="Pearson correlation, two-sided p",
                rule=rule,
            )
        )
    return out


def _leakage(tables, run, level) -> list[dict]:
    row = _row(_usable(tables, "leakage"), run, task_type=OVERALL)
    if row is None or not row.get("n") or pd.isna(row.get("leakage")):
        return []
    prior = (
        ""
        if pd.isna(row.get("text_prior"))
        else (f"; the backbone itself is {points(row['text_prior'])} points above the {percent(row['chance'])} chance")
    )
    sentence = (
        f"With no visual input the model scores {percent(row['acc_blind'])}, its language backbone "
        f"{row['backbone']} {percent(row['acc_backbone'])} on the same prompts: a multi-modal leakage of "
        f"{points(row['leakage'])} points ({_paired_ci(row, 'ci_low', 'ci_high', level)}; MMStar's max(0, .) "
        f"{points(row['leakage_mmstar'])}; n = {int(row['n'])} questions){prior}."
    )
    return [_finding(run, "leakage", sentence, row, "leakage", {"task_type": OVERALL}, "leakage", test=ci_test(row))]


_WRITERS = (
    _video,
    _task_types,
    _tiers,
    _temporal,
    _compression,
    _tracking,
    _probes,
    _added,
    _circular,
    _shortcuts,
    _leakage,
    _letters,
)


def findings_table(
    tables: Mapping[str, pd.DataFrame], frame: pd.DataFrame, options: ReportSettings = ReportSettings()
) -> pd.DataFrame:
    """One row per finding, per (model, benchmark) in name order and topic order; columns as in ``COLUMNS``."""
    if frame.empty:
        return empty(COLUMNS)
    runs = sorted(
        {(str(m), str(b)) for m, b in frame[["model", "benchmark"]].drop_duplicates().itertuples(index=False)}
    )
    rows = [row for run in runs for write in _WRITERS for row in write(tables, run, options.ci_level)]
    return pd.DataFrame(rows, columns=list(COLUMNS)) if rows else empty(COLUMNS)


DIGESTS = (
    Digest(
        "findings",
        "The report's first screen in words: per model, how much of the accuracy needs the video, the most and "
        "least visual task types, every task type's tier, what temporal order adds, what compression changes, "
        "name tracking, each probe, each added condition, circular evaluation, text shortcuts, multi-modal leakage "
        "against the language backbone, letter bias; every number taken from the table and row the sentence names.",
        COLUMNS,
        findings_table,
    ),
)
