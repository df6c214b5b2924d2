"""Sampling sweeps as a report axis: accuracy and VDG per frame budget or frame rate.

``vdg sweep --frames 8,16,32,64`` (or ``--fps 0.5,1,2``) runs one model at several sampling settings,
labelling each run ``<model>@<N>f`` (``<model>@<F>fps``) and logging ``sampling`` = ``frames:<N>``
(``fps:<F>``) in every record. ``sampling_axis`` lays the VDG table's Overall row of each such run out
along the axis, so a flat VDG across settings (the paper's section 5.3: 0.5 to 24 fps) reads off one
table.

A run's setting, from the first of these that says it (``setting_source``):

- ``sampling``: the logged ``sampling`` column ("frames:16", "fps:0.5"); absent or "" for a run that
  was not part of a sweep (and in logs written before the column existed);
- ``label``: the run label's sweep suffix, ``@<N>f`` or ``@<F>fps``;
- ``frames``: the frames per video named in the model settings (the ``frames`` column), as
  ``frames:<N>``.

The model of a run is its label up to the ``@`` (a quantization mark ``†...`` after the suffix is
kept). A (model, benchmark, axis) enters the table with at least two distinct values; the table is
empty when no model has two. Every number is the VDG table's (``postprocess.analyses.vdg``): the same
question set (shared by every run of the benchmark under question_set=shared), missing-answer policy and
bootstrap; the held-condition accuracies are the ladder table's (``postprocess.analyses.ladder``, on the
whole frame, so on its question sets).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from postprocess.analyses._paired import OVERALL
from postprocess.analyses.base import Analysis, ReportSettings, empty
from postprocess.analyses.ladder import ladder_table
from postprocess.analyses.vdg import CI_COLUMNS, per_question, vdg_table
from postprocess.reading.frame import QUANTIZED_MARK
from vdg_tasks.vocabulary.conditions import CORE, LADDER

#: The sampling axes: frames per video, frames per second.
AXES: tuple[str, ...] = ("frames", "fps")
#: Held conditions whose accuracy the table carries (from the ladder table) when a run has them.
HELD: tuple[str, ...] = tuple(r for r in LADDER if CORE[r].transform == "hold")

COLUMNS: dict[str, str] = {
    "model": "the model: the run label up to its '@' (a sweep labels each setting <model>@<N>f or <model>@<F>fps)",
    "benchmark": "benchmark name",
    "axis": "frames (frames per video) or fps (frames per second)",
    "value": "the setting's frames per video or frames per second, as a number",
    "setting": "the setting as logged: frames:<N> or fps:<F>",
    "setting_source": "where the setting was read: sampling (the logged column), label (the @<N>f / @<F>fps suffix) "
    "or frames (the frame argument in the model settings)",
    "label": "the run label (the model of the vdg table)",
    "n": "questions compared under orig and black (as the vdg table's Overall row)",
    "acc_orig": "accuracy on the original video over the n questions",
    "acc_black": "accuracy on the black video over the n questions",
    "vdg": "mean per-question VDG = acc_orig - acc_black (the vdg table's Overall row)",
    "vdg_ci_low": "lower bound of the vdg table's paired CI of vdg (ci_method; empty when too_small)",
    "vdg_ci_high": "upper bound of the vdg table's paired CI of vdg (ci_method; empty when too_small)",
    "d": "questions with VDG = +1 (right only with the video)",
    "c": "questions with VDG = -1 (right only without it)",
    "n_error": "questions excluded because an arm has no answer (missing or undecodable video)",
    "n_not_shared": "questions the run answered in both arms but left out because another run or model of the "
    "benchmark has an error on them (question_set=shared)",
    "too_small": "n is below min_stratum: no CI",
    **{
        f"acc_{held}": f"accuracy under {held} from the ladder table's Overall row (questions answered under every "
        "ladder rung the run has); empty when not run"
        for held in HELD
    },
    "ci_level": "confidence level of the CI",
    **CI_COLUMNS,
    "missing_policy": "exclude (errors dropped from both arms) or incorrect (errors scored wrong)",
    "question_rule": "which questions the benchmark's rows share (the vdg table's)",
}

_SETTING = re.compile(r"^(?P<axis>frames|fps):(?P<value>\S+)$")
_LABEL_SUFFIX = re.compile(r"@(?:(?P<frames>\d+)f|(?P<fps>\d+(?:\.\d+)?(?:e[-+]?\d+)?)fps)$")


def _split_label(label: str) -> tuple[str, str]:
    """(model, sweep suffix) of a run label: "m@16f" -> ("m", "16f"); "m@8f†int4" -> ("m†int4", "8f")."""
    head, mark, quant = label.partition(QUANTIZED_MARK)
    if "@" not in head:
        return label, ""
    model, _, suffix = head.partition("@")
    return model + mark + quant, suffix


def parse_setting(text: str) -> tuple[str, float]:
    """``"frames:16"`` -> ("frames", 16.0); ``"fps:0.5"`` -> ("fps", 0.5); ValueError otherwise."""
    match = _SETTING.match(text.strip())
    value = math.nan
    if match:
        try:
            value = float(match["value"])
        except ValueError:
            pass
    if not match or not math.isfinite(value) or value <= 0 or (match["axis"] == "frames" and not value.is_integer()):
        raise ValueError(f"sampling {text!r} is not frames:<N> (a positive integer) or fps:<F> (a positive number)")
    return match["axis"], value


def _label_setting(label: str) -> str:
    """``frames:<N>`` / ``fps:<F>`` from a label's ``@<N>f`` / ``@<F>fps`` suffix, or ""."""
    head = label.partition(QUANTIZED_MARK)[0]
    match = _LABEL_SUFFIX.search(head)
    if not match:
        return ""
    return f"frames:{match['frames']}" if match["frames"] else f"fps:{match['fps']}"


def run_settings(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (label, benchmark) whose orig and black rows state one setting.

    Columns: label, benchmark, model, setting, setting_source, axis, value. Raises ValueError for a
    logged ``sampling`` that is not ``frames:<N>`` / ``fps:<F>``, or a sweep label (``<model>@...``)
    whose orig and black rows state different settings; any other label with several is left out.
    """
    arms = frame[frame["condition"].isin(["orig", "black"])]
    columns = ["label", "benchmark", "model", "setting", "setting_source", "axis", "value"]
    if arms.empty:
        return pd.DataFrame(columns=columns)
    logged = pd.Series("", index=arms.index, dtype=object)
    if "sampling" in arms.columns:
        logged = arms["sampling"].astype(object).where(arms["sampling"].notna(), "").astype(str).str.strip()
    labels = arms["model"].astype(str)
    from_label = labels.map({label: _label_setting(label) for label in labels.unique()})
    frames = pd.to_numeric(arms["frames"], errors="coerce") if "frames" in arms.columns else None
    from_frames = pd.Series("", index=arms.index, dtype=object)
    if frames is not None:
        known = frames.notna() & (frames > 0)
        from_frames[known] = "frames:" + frames[known].astype(int).astype(str)
    setting = logged.where(logged != "", from_label.where(from_label != "", from_frames))
    source = np.select([logged != "", from_label != "", from_frames != ""], ["sampling", "label", "frames"], "")
    table = pd.DataFrame(
        {"label": labels, "benchmark": arms["benchmark"], "setting": setting, "setting_source": source}
    )
    table = table[table["setting"] != ""].drop_duplicates()
    rows = []
    for (label, benchmark), group in table.groupby(["label", "benchmark"], sort=True):
        settings = sorted(set(group["setting"]))
        model, suffix = _split_label(str(label))
        if len(settings) > 1:
            if suffix:
                raise ValueError(
                    f"run {label!r} of {benchmark} states several sampling settings ({', '.join(settings)}) across "
                    "orig and black; give each setting its own label"
                )
            continue
        axis, value = parse_setting(settings[0])
        rows.append(
            {
                "label": label,
                "benchmark": benchmark,
                "model": model,
                "setting": settings[0].strip(),
                "setting_source": group["setting_source"].iloc[0],
                "axis": axis,
                "value": value,
            }
        )
    return pd.DataFrame(rows, columns=columns)


def sampling_axis(frame: pd.DataFrame, options: ReportSettings = ReportSettings()) -> pd.DataFrame:
    """Accuracy and VDG per sampling setting of each swept model; columns as in ``COLUMNS``.

    Sorted by model, benchmark, axis (frames, then fps) and value; empty when no (model, benchmark, axis)
    has two values.
    """
    if frame.empty:
        return empty(COLUMNS)
    runs = run_settings(frame)
    if runs.empty:
        return empty(COLUMNS)
    swept = runs.groupby(["model", "benchmark", "axis"])["value"].transform("nunique") >= 2
    runs = runs[swept]
    if runs.empty:
        return empty(COLUMNS)
    vdg = vdg_table(frame, options)
    overall = vdg[vdg["task_type"] == OVERALL].rename(
        columns={"model": "label", "ci_low": "vdg_ci_low", "ci_high": "vdg_ci_high"}
    )
    table = runs.merge(overall, on=["label", "benchmark"], how="inner")
    if table.empty:
        return empty(COLUMNS)
    held = frame["model"].isin(set(table["label"])) & frame["condition"].isin(HELD)
    ladder = ladder_table(frame, options) if held.any() else None
    for rung in HELD:
        table[f"acc_{rung}"] = np.nan
    if ladder is not None and len(ladder):
        rungs = ladder[ladder["task_type"] == OVERALL].set_index(["model", "benchmark"])
        keys = pd.MultiIndex.from_frame(table[["label", "benchmark"]])
        for rung in HELD:
            table[f"acc_{rung}"] = rungs[f"acc_{rung}"].reindex(keys).to_numpy(dtype=float)
    order = table.assign(_axis=table["axis"].map(AXES.index))
    table = table.loc[order.sort_values(["model", "benchmark", "_axis", "value", "label"], kind="stable").index]
    return table.reset_index(drop=True)[list(COLUMNS)]


ANALYSES = (
    Analysis(
        "sampling_sweep",
        "Sampling sweeps: accuracy on orig and black, VDG with its CI, and held-condition accuracy per frame budget "
        "(frames per video) or frame rate (fps) of each model run at two or more settings (`vdg sweep`).",
        COLUMNS,
        sampling_axis,
        shares=(per_question, vdg_table, ladder_table),
    ),
)
