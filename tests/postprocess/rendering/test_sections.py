"""postprocess.rendering.sections: what each headline section declaration selects (table, aliases, rows, columns,
intro)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import TABLES
from postprocess.analyses.base import ReportSettings
from postprocess.analyses.chance import chance_table
from postprocess.rendering.formatting import CI_METHODS
from postprocess.rendering.pages import render_markdown
from postprocess.rendering.sections import (
    GROUPS,
    HEADLINE,
    OFFLINE_JUDGE_NOTE,
    TRACKING,
    TRACKING_SECTIONS,
    Section,
    blind_sentence,
    ci_text,
    judge_labels,
)
from tests.helpers.frames import make_frame


def _section(table: str) -> Section:
    return next(s for s in HEADLINE if s.table == table)


# ---------------------------------------------------------------------------------------- declarations


def test_each_headline_section_names_one_declared_analysis_once():
    names = [s.table for s in HEADLINE]
    assert len(names) == len(set(names))
    assert set(names) <= {t.name for t in TABLES}


def test_tracking_sections_close_the_headline_under_their_group():
    assert HEADLINE[-len(TRACKING_SECTIONS) :] == TRACKING_SECTIONS
    assert all(s.group == TRACKING for s in TRACKING_SECTIONS)
    assert all(s.group == "" for s in HEADLINE[: -len(TRACKING_SECTIONS)])
    assert set(GROUPS) == {TRACKING}


# ------------------------------------------------------------------------------------------------ pick


def test_pick_returns_the_named_table_when_it_has_rows():
    table = pd.DataFrame({"x": [1, 2]})
    section = Section("a", "A", aliases=("b",))
    name, rows = section.pick({"a": table, "b": pd.DataFrame({"x": [3]})})
    assert name == "a" and rows is table


def test_pick_falls_back_to_an_alias_when_the_table_is_absent_or_empty():
    alias = pd.DataFrame({"x": [3]})
    section = Section("a", "A", aliases=("b", "c"))
    assert section.pick({"b": alias})[0] == "b"
    assert section.pick({"a": pd.DataFrame({"x": []}), "b": pd.DataFrame({"x": []}), "c": alias})[0] == "c"
    assert section.pick({}) is None
    assert section.pick({"a": pd.DataFrame({"x": []})}) is None


def test_pick_skips_a_table_whose_rows_the_filter_removes():
    def positive(table: pd.DataFrame) -> pd.DataFrame:
        return table[table["x"] > 0]

    section = Section("a", "A", filter=positive, aliases=("b",))
    name, rows = section.pick({"a": pd.DataFrame({"x": [-1, 0]}), "b": pd.DataFrame({"x": [-2, 5, 6]})})
    assert name == "b" and rows["x"].tolist() == [5, 6]
    assert section.pick({"a": pd.DataFrame({"x": [-1]})}) is None


# ------------------------------------------------------------------------------------------ row filters


def test_the_ladder_shows_only_rows_with_some_delta():
    table = pd.DataFrame(
        {
            "model": ["a", "b", "c"],
            "spatial": [0.1, np.nan, np.nan],
            "temporal": [np.nan, np.nan, -0.2],
            "sampling": [np.nan, np.nan, np.nan],
        }
    )
    name, rows = _section("ladder").pick({"ladder": table})
    assert name == "ladder" and rows["model"].tolist() == ["a", "c"]  # b: black and orig only, no delta
    no_deltas = pd.DataFrame({"model": ["a", "b"], "acc_orig": [0.5, 0.6]})
    assert _section("ladder").pick({"ladder": no_deltas})[1]["model"].tolist() == ["a", "b"]


def test_compression_flips_show_overall_rows_and_accept_the_old_table_name():
    table = pd.DataFrame({"model": ["m", "m", "m"], "task_type": ["T1", "Overall", "T2"], "net": [1, -2, 0]})
    section = _section("crf_flips")
    assert section.pick({"crf_flips": table})[1]["net"].tolist() == [-2]
    name, rows = section.pick({"flips": table})
    assert name == "flips" and rows["task_type"].tolist() == ["Overall"]
    without_task_type = pd.DataFrame({"model": ["m", "n"]})
    assert len(section.pick({"crf_flips": without_task_type})[1]) == 2
    only_types = table[table["task_type"] != "Overall"]
    assert section.pick({"crf_flips": only_types}) is None


def test_above_chance_shows_orig_and_black_rows():
    table = pd.DataFrame({"condition": ["orig", "crf28", "black", "shuffled"], "acc": [0.6, 0.5, 0.4, 0.55]})
    rows = _section("above_chance").pick({"above_chance": table})[1]
    assert rows["condition"].tolist() == ["orig", "black"]


# ----------------------------------------------------------------------------------------- columns


def test_the_letters_section_shows_the_letters_some_answer_or_key_uses():
    table = pd.DataFrame(
        {
            "model": ["m", "m"],
            "pred_A": [6, 1],
            "pred_B": [0, 2],
            "pred_C": [0, 0],  # never predicted, but a key: shown
            "pred_D": [0, 0],  # neither: left out
            "pred_E": ["x", None],  # not a number: counted as 0, left out
            "gt_A": [2, 0],
            "gt_C": [3, 0],
            "gt_D": [0, 0],
        }
    )
    columns = _section("letters").columns(table)
    assert columns == [
        *("model", "benchmark", "condition", "n", "n_letter", "n_unparsed"),
        *("pred_A", "pred_B", "pred_C"),
        *("top_pred", "top_pred_share", "p_pred", "p_gt", "accuracy", "chance", "expected_from_letters"),
        "letter_share",
    ]


def test_letters_section_shows_the_letters_in_use():
    row = {"model": "m", "benchmark": "b", "condition": "black", "n": 10, "n_letter": 10, "n_unparsed": 0}
    row |= {f"pred_{x}": c for x, c in zip("ABCDEF", (6, 2, 0, 2, 0, 0), strict=True)}
    row |= {f"gt_{x}": c for x, c in zip("ABCDEF", (2, 3, 3, 2, 0, 0), strict=True)}
    row |= {"top_pred": "A", "p_pred": 0.0123, "missing_policy": "exclude"}
    section = render_markdown({"letters": pd.DataFrame([row])}).split("## Answer-letter bias", 1)[1]
    header = section.split("\n|", 1)[1].splitlines()[0]
    assert "pred_C" in header and "pred_D" in header and "pred_E" not in header and "gt_A" not in header
    assert "0.0123" in section


# ------------------------------------------------------------------------------------------ intros


@pytest.mark.parametrize(
    ("judge", "labels"),
    [
        (["gpt-4o; offline overlap", "gpt-4o", np.nan], ["gpt-4o", "offline overlap"]),  # split, deduplicated
        (["a; ", "b"], ["a", "b"]),  # an empty label is no label
        ([np.nan], []),
    ],
)
def test_judge_labels_are_the_distinct_labels_in_first_seen_order(judge, labels):
    assert judge_labels(pd.DataFrame({"judge": judge})) == labels


def test_a_table_without_a_judge_column_has_no_judge_labels():
    assert judge_labels(pd.DataFrame({"model": ["m"]})) == []


def test_the_open_ended_intro_names_its_judge_and_flags_the_offline_scorer():
    intro = _section("open_ended").intro
    assert intro(pd.DataFrame({"model": ["m"]})).startswith("Judge: no judge label recorded. Options removed:")
    assert intro(pd.DataFrame({"judge": ["gpt-4o"]})).startswith("Judge: gpt-4o. Options removed:")
    offline = intro(pd.DataFrame({"judge": ["Offline token overlap"]}))
    assert offline.startswith(f"Judge: Offline token overlap ({OFFLINE_JUDGE_NOTE}). Options removed:")
    # a label that already says it is not an LLM judge gets no second note
    honest = intro(pd.DataFrame({"judge": ["offline scorer, not an LLM judge"]}))
    assert honest.startswith("Judge: offline scorer, not an LLM judge. Options removed:")


def test_the_above_chance_intro_starts_with_what_is_answered_blind():
    intro = _section("above_chance").intro
    table = pd.DataFrame(
        {
            "model": ["m", "m", "m", "m"],
            "benchmark": ["b"] * 4,
            "condition": ["black", "black", "black", "orig"],
            "task_type": ["T1", "T2", "Overall", "T1"],
            "above_chance": [True, False, True, True],
        }
    )
    # black rows other than Overall: T1 above chance, T2 not -> "T1 (1 of 2 tested)"
    assert intro(table).startswith(
        "Without the video (black), above chance after Holm: m on b: T1 (1 of 2 tested). Per "
    )
    orig_only = table[table["condition"] == "orig"]
    assert intro(orig_only).startswith("No model was run without the video (black)")


def test_the_blind_count_leaves_untested_strata_out_of_its_denominator():
    # Under black: T0 always right (above chance), T1 never right, T2 and T3 with 5 questions each (below
    # min_stratum 30: no test). The old sentence said "T0 (1 of 4)"; the tested task types are those with at least
    # min_stratum questions, recomputed here from the frame, and the untested ones are counted apart.
    records = []
    for i in range(40):
        records += [("m", "black", f"a{i}", "T0", True), ("m", "black", f"b{i}", "T1", False)]
    for i in range(5):
        records += [("m", "black", f"c{i}", "T2", True), ("m", "black", f"d{i}", "T3", True)]
    frame = make_frame(records)
    table = chance_table(frame, ReportSettings())
    sizes = frame[frame["condition"] == "black"].groupby("task_type").size()
    tested, untested = (
        int((sizes >= ReportSettings().min_stratum).sum()),
        int((sizes < ReportSettings().min_stratum).sum()),
    )
    assert (tested, untested) == (2, 2)
    above = table[(table["condition"] == "black") & (table["task_type"] != "Overall")]["above_chance"]
    assert int(above.fillna(False).astype(bool).sum()) == 1
    assert blind_sentence(table) == (
        f"Without the video (black), above chance after Holm: m on b: T0 (1 of {tested} tested; {untested} too "
        "small to test)."
    )
    assert _section("above_chance").intro(table).startswith(blind_sentence(table))


@pytest.mark.parametrize("method", ["tango score", "tango score (design effect)", "exact", "monte carlo"])
def test_ci_intros_name_the_tables_own_ci_method(method):
    # Each paired-difference section names its CI from the rows' ci_method (formatting.CI_METHODS), never a fixed
    # "percentile bootstrap": a table of score intervals reads as one.
    table = pd.DataFrame({"ci_method": [method, method, ""]})
    for name in ("vdg", "no_vision", "probes", "added_conditions", "dissociation", "sampling_sweep"):
        text = _section(name).intro(table)
        assert CI_METHODS[method] in text, name
        assert "percentile bootstrap" not in text.replace(CI_METHODS[method], ""), name
    assert ci_text(pd.DataFrame({"ci_method": ["tango score", "exact + monte carlo"]})) == (
        f"by row (ci_method): {CI_METHODS['tango score']} or {CI_METHODS['exact']} or {CI_METHODS['monte carlo']}"
    )
    assert ci_text(pd.DataFrame({"x": [1]})) == "method not recorded"


def test_sections_without_an_intro_function_declare_their_text():
    assert _section("vdg").intro(pd.DataFrame()).startswith("VDG = correct(orig) - correct(black)")
    assert "Rows with no delta" in _section("ladder").intro(pd.DataFrame())
