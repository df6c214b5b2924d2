"""Temporal gap: accuracy on questions one frame can answer minus accuracy on questions that need time.

Each question's task type puts it in a bucket: ``single-frame`` (answerable from one well-chosen
frame), ``temporal`` (needs several frames, their order, or the whole video) or ``none`` (needs no
frame at all: left out of both). Mis-bucketing a temporal question as single-frame hides exactly
the failure the gap exists to show, so every doubtful type, and every type the map does not know,
goes to ``temporal``: the gap is then, if anything, understated.

Accuracy per bucket and the gap are given for all questions (``duration = "all"``) and per
duration bucket (the frame's ``duration`` column: short/medium/long for Video-MME; questions with
an empty duration appear only under ``all``).

The models of a condition are counted on one question set (``accuracy.shared_rows``: no model has an error
for the question under that condition; ``question_set="per-model"``: each model's own answered questions). A
bucket with fewer than ``ReportSettings.min_stratum`` questions keeps its count and accuracy but no interval, and the
gap then has none either (``too_small``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
import pandas as pd

from postprocess.analyses._paired import cell_index, condition_sort_key
from postprocess.analyses.accuracy import condition_rule, shared_rows
from postprocess.analyses.base import Analysis, ReportSettings, empty
from postprocess.analyses.vdg import conventions
from postprocess.stats import wilson

SINGLE_FRAME, TEMPORAL, NONE = "single-frame", "temporal", "none"
BUCKETS = (SINGLE_FRAME, TEMPORAL, NONE)
ALL_DURATIONS = "all"
DURATION_ORDER = ("short", "medium", "long")

#: Video-MME's twelve task types (Fu et al. 2024, arXiv:2405.21075).
#: Single-frame: what one frame shows. Attribute Perception (colour, clothing), Object Recognition
#: (what object or person is there), OCR Problems (text on screen) and Spatial Perception (where
#: things are relative to each other) are read off one frame, once the right one is found.
#: Temporal: Action Recognition and Action Reasoning (an action unfolds over frames), Temporal
#: Perception and Temporal Reasoning (order, speed, duration), Information Synopsis (summarise the
#: whole video), Object Reasoning and Spatial Reasoning (how objects and scenes change or relate
#: across the video). Counting Problem is temporal too, the conservative side: Video-MME's counts
#: are mostly over the video ("how many times", "how many people appear"), which no single frame
#: holds; a count visible in one frame lands in temporal and at worst narrows the gap.
VIDEO_MME_MAP: Mapping[str, str] = MappingProxyType(
    {
        "Attribute Perception": SINGLE_FRAME,
        "Object Recognition": SINGLE_FRAME,
        "OCR Problems": SINGLE_FRAME,
        "Spatial Perception": SINGLE_FRAME,
        "Counting Problem": TEMPORAL,
        "Action Recognition": TEMPORAL,
        "Action Reasoning": TEMPORAL,
        "Temporal Perception": TEMPORAL,
        "Temporal Reasoning": TEMPORAL,
        "Spatial Reasoning": TEMPORAL,
        "Object Reasoning": TEMPORAL,
        "Information Synopsis": TEMPORAL,
    }
)

#: vdgsynth (``vdg_tasks.synthetic.synth.TASK_TYPES``): single_frame reads the border of any one frame;
#: multi_frame needs a scene the middle frame does not show (several frames) and temporal_order
#: their order, both temporal. text_only is answered from the question itself: no frame is needed,
#: so it measures neither bucket (in single-frame it would inflate the gap by a text prior, in
#: temporal it would mask it) and goes to ``none``, as audio_only does (the soundtrack's pitch: no frame).
VDGSYNTH_MAP: Mapping[str, str] = MappingProxyType(
    {
        "single_frame": SINGLE_FRAME,
        "multi_frame": TEMPORAL,
        "temporal_order": TEMPORAL,
        "text_only": NONE,
        "audio_only": NONE,
    }
)

#: The built-in map; ``ReportSettings.temporal_map`` extends and overrides it.
DEFAULT_MAP: Mapping[str, str] = MappingProxyType({**VIDEO_MME_MAP, **VDGSYNTH_MAP})

COLUMNS: dict[str, str] = {
    "model": "model label",
    "benchmark": "benchmark name",
    "condition": "condition name",
    "duration": "'all', or a duration bucket of the frame's duration column (short, medium, long, ...)",
    "n": "questions in either bucket: n_single_frame + n_temporal",
    "n_single_frame": "questions in the single-frame bucket (answered, or all under missing_policy=incorrect)",
    "acc_single_frame": "accuracy on them (empty when there are none)",
    "single_frame_ci_low": "lower end of the Wilson interval of acc_single_frame (empty below min_stratum questions)",
    "single_frame_ci_high": "upper end of the Wilson interval of acc_single_frame",
    "n_temporal": "questions in the temporal bucket (types the map does not know included)",
    "acc_temporal": "accuracy on them (empty when there are none)",
    "temporal_ci_low": "lower end of the Wilson interval of acc_temporal (empty below min_stratum questions)",
    "temporal_ci_high": "upper end of the Wilson interval of acc_temporal",
    "gap": "acc_single_frame - acc_temporal (positive: worse when time is needed)",
    "gap_ci_low": "lower end of Newcombe's hybrid score interval of gap (from the two Wilson intervals; "
    "questions treated as independent; empty when too_small)",
    "gap_ci_high": "upper end of that interval",
    "n_none": "questions whose type needs no frame (mapped to 'none'), left out of both buckets",
    "n_unknown_type": "questions whose task type the map does not know (counted in temporal)",
    "unknown_types": "those task types, joined by '; '",
    "n_error": "questions with no answer under this condition (dropped under exclude, wrong under incorrect)",
    "too_small": "a bucket has fewer than min_stratum questions: its interval and the gap's are left empty",
    "ci_level": "confidence level of the intervals",
    "missing_policy": "exclude or incorrect",
    "question_rule": "which questions the models' rows of this condition share (question_set and missing_policy)",
}


def task_type_map(options: ReportSettings) -> dict[str, str]:
    """The built-in map, extended and overridden by ``options.temporal_map``; values checked."""
    bad = {t: b for t, b in options.temporal_map.items() if b not in BUCKETS}
    if bad:
        task_type, bucket = next(iter(bad.items()))
        raise ValueError(
            f"temporal_map sends task type {task_type!r} to {bucket!r}; the buckets are {', '.join(BUCKETS)}"
        )
    return {**DEFAULT_MAP, **options.temporal_map}


def _duration_key(duration: str) -> tuple[int, str]:
    if duration == ALL_DURATIONS:
        return (-1, "")
    return (DURATION_ORDER.index(duration), "") if duration in DURATION_ORDER else (len(DURATION_ORDER), duration)


def _newcombe(k1: int, n1: int, k2: int, n2: int, level: float) -> tuple[float, float, float, float, float, float]:
    a, b = wilson(k1, n1, level), wilson(k2, n2, level)
    d = a.estimate - b.estimate
    low = d - np.sqrt((a.estimate - a.low) ** 2 + (b.high - b.estimate) ** 2)
    high = d + np.sqrt((a.high - a.estimate) ** 2 + (b.estimate - b.low) ** 2)
    return a.low, a.high, b.low, b.high, float(low), float(high)


def temporal_gap_table(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Single-frame vs temporal accuracy per (model, benchmark, condition), overall and per duration."""
    mapping = task_type_map(options)
    if frame.empty:
        return empty(COLUMNS)
    type_codes, type_names = pd.factorize(frame["task_type"].fillna("").astype(str))
    type_names = [str(t) for t in type_names]
    bucket = np.array([mapping.get(t, TEMPORAL) for t in type_names], dtype=object)[type_codes]
    unknown = np.array([t not in mapping for t in type_names], dtype=bool)[type_codes]
    is_error = (frame["status"] == "error").to_numpy()
    counted = (~is_error & shared_rows(frame, options)) if options.missing == "exclude" else np.ones(len(frame), bool)
    hit = frame["correct"].fillna(False).to_numpy(dtype=bool) & counted
    duration_codes, duration_names = pd.factorize(frame["duration"].fillna("").astype(str))
    duration_names = [str(d) for d in duration_names]

    group, key_table = cell_index(frame)
    groups = list(key_table.itertuples(index=False, name=None))
    rules = {c: condition_rule(str(c), options) for c in key_table["condition"].unique()}
    parts: list[tuple[str, np.ndarray]] = [(ALL_DURATIONS, np.ones(len(frame), dtype=bool))]
    parts += [
        (d, duration_codes == duration_names.index(d)) for d in sorted(set(duration_names) - {""}, key=_duration_key)
    ]
    # Unknown task types per (group, duration code): from the (usually few) unknown rows only.
    unknown_rows = np.flatnonzero(unknown & counted)
    n_dur, n_type = len(duration_names), len(type_names)
    combined = (group[unknown_rows] * n_dur + duration_codes[unknown_rows]) * n_type + type_codes[unknown_rows]
    seen = np.unique(combined)
    unknown_by: dict[tuple[int, str], set[str]] = {}
    for code in seen:
        g, rest = divmod(int(code), n_dur * n_type)
        d, t = divmod(rest, n_type)
        for key in ((int(g), ALL_DURATIONS), (int(g), duration_names[d])):
            unknown_by.setdefault(key, set()).add(type_names[t])

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(group[mask], minlength=len(groups))

    rows = []
    for duration, in_part in parts:
        sf = in_part & counted & (bucket == SINGLE_FRAME)
        tp = in_part & counted & (bucket == TEMPORAL)
        counts = {
            "n_sf": count(sf),
            "k_sf": count(sf & hit),
            "n_tp": count(tp),
            "k_tp": count(tp & hit),
            "n_none": count(in_part & counted & (bucket == NONE)),
            "n_unknown": count(in_part & counted & unknown),
            "n_error": count(in_part & is_error),
            "n_rows": count(in_part),
        }
        for i, (model, benchmark, condition) in enumerate(groups):
            if counts["n_rows"][i] == 0:
                continue
            n_sf, k_sf, n_tp, k_tp = (int(counts[c][i]) for c in ("n_sf", "k_sf", "n_tp", "k_tp"))
            row = {
                "model": model,
                "benchmark": benchmark,
                "condition": condition,
                "duration": duration,
                "n": n_sf + n_tp,
                "n_single_frame": n_sf,
                "acc_single_frame": k_sf / n_sf if n_sf else np.nan,
                "single_frame_ci_low": np.nan,
                "single_frame_ci_high": np.nan,
                "n_temporal": n_tp,
                "acc_temporal": k_tp / n_tp if n_tp else np.nan,
                "temporal_ci_low": np.nan,
                "temporal_ci_high": np.nan,
                "gap": k_sf / n_sf - k_tp / n_tp if n_sf and n_tp else np.nan,
                "gap_ci_low": np.nan,
                "gap_ci_high": np.nan,
                "n_none": int(counts["n_none"][i]),
                "n_unknown_type": int(counts["n_unknown"][i]),
                "unknown_types": "; ".join(sorted(unknown_by.get((i, duration), ()))),
                "n_error": int(counts["n_error"][i]),
                "too_small": min(n_sf, n_tp) < options.min_stratum,
                **conventions(COLUMNS, options, rule=rules[condition]),
            }
            big_sf, big_tp = n_sf >= options.min_stratum, n_tp >= options.min_stratum
            if big_sf:
                iv = wilson(k_sf, n_sf, options.ci_level)
                row["single_frame_ci_low"], row["single_frame_ci_high"] = iv.low, iv.high
            if big_tp:
                iv = wilson(k_tp, n_tp, options.ci_level)
                row["temporal_ci_low"], row["temporal_ci_high"] = iv.low, iv.high
            if big_sf and big_tp:
                row["gap_ci_low"], row["gap_ci_high"] = _newcombe(k_sf, n_sf, k_tp, n_tp, options.ci_level)[4:]
            rows.append(row)
    if not rows:
        return empty(COLUMNS)
    rows.sort(
        key=lambda r: (
            r["model"],
            r["benchmark"],
            condition_sort_key(str(r["condition"])),
            _duration_key(str(r["duration"])),
        )
    )
    return pd.DataFrame(rows, columns=list(COLUMNS))


ANALYSES = (
    Analysis(
        "temporal_gap",
        "Accuracy on single-frame vs temporal questions (by task type) and their gap, overall and per duration.",
        COLUMNS,
        temporal_gap_table,
        shares=(cell_index, shared_rows),
    ),
)
