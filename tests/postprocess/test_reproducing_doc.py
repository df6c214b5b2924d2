"""docs/reproducing.md's numbers, recomputed under the conventions its sentences name: the page cannot go stale."""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import pytest

from postprocess.analyses import ReportSettings, run_all
from tests.helpers.reference_data import reference_frame

DOC = Path(__file__).resolve().parents[2] / "docs" / "reproducing.md"
#: The conventions the page names: the defaults, and the paper's percentile bootstrap over questions.
DEFAULT = ReportSettings()
QUESTION_BOOTSTRAP = ReportSettings(ci_method="exact", cluster="question")
NAMES = ["vdg", "mcnemar", "dissociation", "crf_enrichment"]


@functools.cache
def _tables(convention: str) -> dict[str, pd.DataFrame]:
    options = DEFAULT if convention == "default" else QUESTION_BOOTSTRAP
    return run_all(reference_frame(), options, names=NAMES)


def _text() -> str:
    return " ".join(DOC.read_text().split())  # line breaks are spaces


def _pair(table: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    return table[(table["model_a"] == a) & (table["model_b"] == b)]


def _vdg(convention: str, model: str, task_type: str = "Overall") -> pd.Series:
    return _tables(convention)["vdg"].set_index(["model", "task_type"]).loc[(model, task_type)]


def _ci(low: float, high: float, digits: int = 3) -> str:
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def _percent_ci(low: float, high: float) -> str:
    return f"[{100 * low:.2f} %, {100 * high:.2f} %]"


def _sentences() -> list[str]:
    """Every phrase of the page that quotes a number vdg computes, with that number recomputed here."""
    out = []
    for model, label in (("llava", "LLaVA-Video"), ("qwen2vl", "Qwen2-VL")):
        default, paper = _vdg("default", model), _vdg("question bootstrap", model)
        out.append(
            f"{default['vdg']:.3f} has the default CI {_ci(default['ci_low'], default['ci_high'])} against the "
            f"question-level bootstrap's {_ci(paper['ci_low'], paper['ci_high'])}"
            if model == "llava"
            else f"{label}'s {default['vdg']:.3f} has {_ci(default['ci_low'], default['ci_high'])} against "
            f"{_ci(paper['ci_low'], paper['ci_high'])}"
        )
    out.append(f"0.3375 published, {_vdg('question bootstrap', 'qwen2vl', 'Action Reasoning')['ci_high']:.3f} exact")
    ratios = {m: _vdg("default", m)["dc_ratio"] for m in ("qwen2vl", "llava", "internvl2")}
    out.append(
        f"Qwen2-VL {ratios['qwen2vl']:.2f}, LLaVA-Video {ratios['llava']:.2f}, InternVL2 {ratios['internvl2']:.2f}"
    )
    mcnemar = _pair(_tables("default")["mcnemar"], "internvl2", "qwen2vl").set_index("condition")
    out.append(
        f"giving {mcnemar.loc['orig', 'p_holm']:.3f} (orig) and {mcnemar.loc['black', 'p_holm']:.4f} (black) over "
        f"the {int(mcnemar.loc['orig', 'n_family'])} tests"
    )
    paper = _pair(_tables("question bootstrap")["mcnemar"], "internvl2", "qwen2vl").set_index("condition")
    out.append(f"vdg gives {_percent_ci(paper.loc['orig', 'diff_ci_low'], paper.loc['orig', 'diff_ci_high'])}")
    orig = mcnemar.loc["orig"]
    out.append(f"clustered by video, gives {_percent_ci(orig['diff_ci_low'], orig['diff_ci_high'])}")
    dissociation = _tables("default")["dissociation"]
    iq = _pair(dissociation, "internvl2", "qwen2vl").iloc[0]
    out.append(
        f"is {iq['interaction']:.3f}, with the default (video-clustered, unadjusted) CI "
        f"{_ci(iq['interaction_ci_low'], iq['interaction_ci_high'])}, exact sign-flip p = {iq['p_interaction']:.3f} "
        f"(Holm {iq['p_holm_interaction']:.3f} over the {int(iq['n_family_interaction'])} pairs)"
    )
    lq = _pair(dissociation, "llava", "qwen2vl").iloc[0]
    out.append(f'("orig only", Holm-adjusted interaction p = {lq["p_holm_interaction"]:.3f})')
    il = _pair(dissociation, "internvl2", "llava").iloc[0]
    out.append(
        f"{_ci(il['interaction_ci_low'], il['interaction_ci_high'])}, excludes 0 while its Holm-adjusted "
        f"p = {il['p_holm_interaction']:.3f} does not reject"
    )
    stable = _pair(_tables("question bootstrap")["dissociation"], "internvl2", "qwen2vl").iloc[0]
    out.append(
        f"vdg gives {100 * stable['share_black_p01']:.1f} % and {100 * stable['share_black_only_unadjusted']:.1f} %"
    )
    out.append(f"1,000 question resamples give {100 * stable['share_black_only_unadjusted']:.1f} %")
    out.append(f"{100 * stable['share_pattern']:.1f} % for that pair")
    enrichment = _tables("question bootstrap")["crf_enrichment"].set_index("model").loc["qwen2vl"]
    out.append(
        f"the odds ratio is {enrichment['odds_ratio']:.2f} (one-sided p = {enrichment['p_greater']:.3f}), against "
        f"the paper's {enrichment['odds_ratio_unconditioned']:.2f} (p = {enrichment['p_greater_unconditioned']:.4f})"
    )
    return out


def test_every_number_the_page_quotes_is_what_vdg_computes_under_the_named_convention():
    text = _text()
    missing = [sentence for sentence in _sentences() if sentence not in text]
    assert not missing, "docs/reproducing.md is stale; it should say:\n" + "\n".join(missing)


@pytest.mark.parametrize("convention", ["default", "question bootstrap"])
def test_the_conventions_are_the_ones_the_page_names(convention):
    vdg = _tables(convention)["vdg"]
    overall = vdg[vdg["task_type"] == "Overall"]
    if convention == "default":  # Video-MME asks three questions a video: the default clusters by video
        assert set(overall["ci_method"]) == {"tango score (design effect)"}
        assert set(overall["resample_unit"]) == {"video"}
        assert set(overall["question_rule"]) == {"no error under orig, black for this model"}
    else:
        assert set(overall["ci_method"]) == {"exact"} and set(overall["resample_unit"]) == {"question"}
