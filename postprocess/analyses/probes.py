"""The probes, each against orig, per question: what the option order, a missing right answer, the question text and
the options themselves change.

Each condition declared to be read by a probe's measure (``Condition.measure``: vdg's five probes, and a user's
condition declaring one of those measures) is paired with ``orig`` per (model,
benchmark, task type), on the questions answered under both (shared across the benchmark's models as the vdg
table's, ``ReportSettings.question_set``): its accuracy change with the vdg table's paired bootstrap CI, how often the
model chose the same option under both, and the probe's own measure with a Wilson CI:

- ``options_shuffled`` -> ``content_share``: of the questions whose orig choice was moved by the shuffle (so that
  following the option's text and following its letter give different answers), the share where the model chose
  the same option text again rather than the same letter (``n_measure`` counts those that did either). 1: the model
  reads the options; 0: it answers by position.
- ``none_option`` -> ``none_rate``: the share choosing the option whose text became "None" (the answer), rather than
  a distractor: whether the model sees that the right answer is missing.
- ``no_question`` -> ``question_dependency``: acc(orig) - acc(no_question), the mirror of VDG; its CI is the
  paired one of ``diff`` (negated).
- ``video_only`` -> ``above_chance``: acc(video_only) - chance (the mean of 1 / options): the answer key the video
  alone gives away.
- ``numbered`` -> ``format_gap``: acc(orig) - acc(numbered), what labelling the options 1-N instead of A-N costs;
  its CI is the paired one of ``diff`` (negated).

``agreement`` compares the option chosen: the same letter under both, except under ``options_shuffled``, where it
is the same option text (the letter mapped back through ``shuffled_from``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.analyses._paired import SCALE_CORRECT, by_model_benchmark
from postprocess.analyses.base import Analysis, ReportSettings, empty, memo_by_frame
from postprocess.analyses.paired_contrast import Cell, Contrast, choices_by_arm, paired_cells, same_choice
from postprocess.analyses.vdg import CI_COLUMNS, ci_or_none, conventions, question_set_cache
from postprocess.reading.frame import original_letter
from postprocess.stats import BootstrapCI, DifferenceCI, wilson
from vdg_tasks.vocabulary.conditions import CONDITIONS, CORE

#: The measures this table computes (``Condition.measure``; module docstring), in the order its probes are listed.
PROBE_MEASURES: tuple[str, ...] = ("content_share", "none_rate", "question_dependency", "above_chance", "format_gap")


def probes() -> list[str]:
    """The conditions declared to be read by a probe's measure, in registry order."""
    return [c.name for c in CONDITIONS.values() if c.measure in PROBE_MEASURES]


COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "probe": "the probe condition (options_shuffled, none_option, no_question, video_only, numbered)",
    "n": "questions paired under orig and the probe (and in the shared question set), as the vdg table pairs them: "
    "answered under both, or under missing_policy=incorrect every question, one without an answer counted wrong",
    "acc_orig": "accuracy under orig over the n questions",
    "acc_probe": "accuracy under the probe over the n questions",
    "diff": "acc_probe - acc_orig (mean per-question difference)",
    "ci_low": "lower bound of the paired bootstrap CI of diff (empty when too_small)",
    "ci_high": "upper bound of the paired bootstrap CI of diff (empty when too_small)",
    "agreement": "share of the n questions where the model chose the same option under both (the same text under "
    "options_shuffled, else the same letter); empty when n is 0",
    "measure": "the probe's own measure: content_share, none_rate, question_dependency, above_chance or format_gap",
    "value": "its value (module docstring)",
    "value_low": "lower bound of its CI: Wilson for a share, the paired bootstrap of diff (negated) for "
    "question_dependency and format_gap, the bootstrap of correct - 1/options for above_chance; empty when too_small",
    "value_high": "upper bound of its CI",
    "n_measure": "questions the measure counts (content_share: those whose orig choice the shuffle moved and that "
    "were answered by content or by position; otherwise n)",
    "reading": "the sentence a reader needs",
    "n_unparsed": "of the n, replies under the probe no option could be read from (scored wrong: under video_only a "
    "model that declines to guess, under numbered one that answers with a letter)",
    "n_error": "questions excluded because an arm has no answer",
    "too_small": "n is below min_stratum: descriptive values only, no CI",
    "ci_level": "confidence level of the CIs",
    **CI_COLUMNS,
    "missing_policy": "exclude or incorrect",
    "question_rule": "which questions the rows share: orig and the probe, question_set and missing_policy",
    "scale": f"{SCALE_CORRECT!r} (probes need options: a graded question has none)",
}


def _needs(present: frozenset[str]) -> str | None:
    declared = probes()
    if "orig" in present and set(declared) & present:
        return None
    return "needs orig and a probe (" + ", ".join(declared) + ")"


def _agreement(measure: str, orig: np.ndarray, asked: np.ndarray, order: np.ndarray) -> np.ndarray:
    if measure == "content_share":
        asked = np.array([original_letter(p, o) for o, p in zip(order, asked, strict=True)], dtype=object)
    return same_choice(orig, asked)


def _content_counts(orig: np.ndarray, asked: np.ndarray, order: np.ndarray) -> tuple[int, int]:
    """(by content, by content or by position) over the questions whose orig choice the shuffle moved."""
    content = position = 0
    for chosen, shuffled, from_ in zip(orig, asked, order, strict=True):
        if not isinstance(chosen, str) or not isinstance(shuffled, str) or original_letter(chosen, from_) == chosen:
            continue  # no choice to follow, or its option stayed at its letter: both readings agree
        content += original_letter(shuffled, from_) == chosen
        position += shuffled == chosen
    return content, content + position


def _share(k: int, n: int, options: ReportSettings) -> tuple[float, float, float]:
    """k / n with its Wilson CI (none below ``min_stratum``)."""
    if n == 0:
        return np.nan, np.nan, np.nan
    if n < options.min_stratum:
        return k / n, np.nan, np.nan
    interval = wilson(k, n, options.ci_level)
    return k / n, interval.low, interval.high


def _reading(measure: str, value: float, low: float, high: float, n_measure: int) -> str:
    if np.isnan(value):
        return "no question to measure"
    value, low, high = value + 0.0, low + 0.0, high + 0.0  # no "-0.000"
    ci = "" if np.isnan(low) else f" [{low:.2f}, {high:.2f}]"
    if measure == "content_share":
        return (
            f"follows the option's content on {value:.0%}{ci} of {n_measure} questions whose choice the shuffle "
            "moved (the rest, its letter)"
        )
    if measure == "none_rate":
        return (
            f"picks the 'None' that replaced the right answer on {value:.0%}{ci}, otherwise a distractor (a model that "
            "prefers 'None' whatever the question also scores high: read it beside agreement)"
        )
    if measure == "question_dependency":
        return f"question dependency {value:+.3f}{ci}: what the question text adds over the video and options"
    if measure == "format_gap":
        return f"format gap {value:+.3f}{ci}: the accuracy lost when the options are numbered 1-N instead of lettered"
    return (
        f"{value:+.3f}{ci} above chance with neither question nor options: the answer key the video alone gives away "
        "(unparsed replies, a refusal to guess, count as wrong)"
    )


def _measure(
    measure: str, cell: Cell, choices: pd.DataFrame, probe: str, benchmark: str, options: ReportSettings
) -> tuple[float, float, float, int, BootstrapCI | DifferenceCI | None]:
    """(value, value_low, value_high, n_measure, the CI drawn for it beside diff's) of ``measure`` on ``cell``."""
    kept = cell.kept
    if measure == "content_share":
        orig, asked = choices["pred_orig"].to_numpy(dtype=object), choices[f"pred_{probe}"].to_numpy(dtype=object)
        order = choices[f"shuffled_from_{probe}"].fillna("").to_numpy(dtype=object)
        k, n_measure = _content_counts(orig[kept], asked[kept], order[kept])
        return (*_share(k, n_measure, options), n_measure, None)
    if measure == "none_rate":
        return (*_share(int(cell.arms.correct[probe][kept].sum()), cell.n, options), cell.n, None)
    if measure in ("question_dependency", "format_gap"):
        low, high = (-cell.ci.high, -cell.ci.low) if cell.ci else (np.nan, np.nan)
        return (-cell.differences.mean() if cell.n else np.nan), low, high, cell.n, None
    n_options = pd.to_numeric(choices[f"n_options_{probe}"], errors="coerce").to_numpy(dtype=float)
    above = cell.arms.score[probe][kept] - 1.0 / n_options[kept]
    known = ~np.isnan(above)  # a question whose option count is not logged has no chance level
    seed = ("probes_chance", benchmark, cell.task_type, *(() if probe in CORE else (probe,)))
    ids, videos = cell.arms.question_ids[kept][known], cell.arms.videos[kept][known]
    above_ci = ci_or_none(above[known], options, seed, ids, videos, difference=False)
    value = float(above[known].mean()) if known.any() else np.nan
    low, high = (above_ci.low, above_ci.high) if above_ci else (np.nan, np.nan)
    return value, low, high, cell.n, above_ci


@memo_by_frame
def probes_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Each probe against orig per (model, benchmark, task type); columns as in ``COLUMNS``."""
    rows = []
    fields = ("pred", "shuffled_from", "n_options")
    for (model, benchmark), group in by_model_benchmark(frame):
        present = set(group["condition"].unique())
        if "orig" not in present:
            continue
        ran = [p for p in probes() if p in present]
        if not ran:
            continue
        every_arm = choices_by_arm(frame, str(model), str(benchmark), ["orig", *ran], fields)
        for probe in ran:
            measure = CONDITIONS[probe].measure
            contrast = Contrast(probe, probe, "orig", (probe,))
            choices = None
            for cell in paired_cells(frame, group, str(benchmark), ["orig", probe], [contrast], options, "probes"):
                if choices is None:
                    choices = every_arm.reindex(cell.arms.question_ids.astype(str))
                orig_pred = choices["pred_orig"].to_numpy(dtype=object)
                probe_pred = choices[f"pred_{probe}"].to_numpy(dtype=object)
                order = choices[f"shuffled_from_{probe}"].fillna("").to_numpy(dtype=object)
                kept = cell.kept
                agree = _agreement(measure, orig_pred[kept], probe_pred[kept], order[kept])
                value, low, high, n_measure, above_ci = _measure(measure, cell, choices, probe, str(benchmark), options)
                rows.append(
                    {
                        "model": model,
                        "benchmark": benchmark,
                        "task_type": cell.task_type,
                        "probe": probe,
                        "n": cell.n,
                        "acc_orig": cell.accuracy("orig"),
                        "acc_probe": cell.accuracy(probe),
                        "diff": cell.diff,
                        "ci_low": cell.ci_low,
                        "ci_high": cell.ci_high,
                        "agreement": agree.mean() if cell.n else np.nan,
                        "measure": measure,
                        "value": value,
                        "value_low": low,
                        "value_high": high,
                        "n_measure": n_measure,
                        "reading": _reading(measure, value, low, high, n_measure),
                        "n_unparsed": cell.n_unparsed(probe),
                        "n_error": cell.n_error,
                        "too_small": cell.too_small(options),
                        **conventions(COLUMNS, options, rule=cell.arms.rule, scale=cell.scale, cis=[cell.ci, above_ci]),
                    }
                )
    if not rows:
        return empty(COLUMNS)
    return pd.DataFrame(rows, columns=list(COLUMNS))


ANALYSES = (
    Analysis(
        "probes",
        "Each probe (options shuffled, the right answer replaced by None, no question, video only, numbered options) "
        "against orig per "
        "model and task type: accuracy change with paired bootstrap CIs, agreement, and the probe's own measure.",
        COLUMNS,
        probes_table,
        needs=_needs,
        shares=(probes_table, question_set_cache),
    ),
)
