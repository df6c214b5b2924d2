"""The sampling-sweep axis: accuracy and VDG per frame budget / frame rate, and `vdg sweep` -> `vdg report`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postprocess.analyses import run_all, skip_reason
from postprocess.analyses.base import ReportSettings
from postprocess.analyses.sampling import COLUMNS, parse_setting, run_settings, sampling_axis
from postprocess.analyses.vdg import vdg_table
from postprocess.rendering.pages import render_markdown
from postprocess.rendering.plots import plot_sampling
from tests.helpers.frames import outcome_fields, tidy_frame, tidy_row

OPTIONS = ReportSettings(n_resamples=200, min_stratum=1)  # a few questions per run: CIs even so
N_QUESTIONS = 24
PNG = b"\x89PNG\r\n\x1a\n"


def _outcomes(seed: int, p_orig: float, p_black: float) -> dict[str, list[object]]:
    """Per condition, each question's outcome (True right, False wrong, "e" error); question 0 errs on black."""
    rng = np.random.default_rng(seed)
    orig = [bool(x) for x in rng.random(N_QUESTIONS) < p_orig]
    black: list[object] = [bool(x) for x in rng.random(N_QUESTIONS) < p_black]
    black[0] = "e"
    shuffled = [bool(x) for x in rng.random(N_QUESTIONS) < (p_orig + p_black) / 2]
    return {"orig": orig, "black": black, "shuffled": shuffled}


def sweep_frame(
    runs: dict[str, dict[str, list[object]]],
    frames: dict[str, int | None] | None = None,
    sampling: dict[str, str] | None = None,
    benchmark: str = "b",
) -> pd.DataFrame:
    """label -> condition -> outcomes, as a tidy frame; ``frames`` / ``sampling`` per label (None: column absent)."""
    rows = []
    for label, conditions in runs.items():
        for condition, outcomes in conditions.items():
            for i, value in enumerate(outcomes):
                extra = {"frames": (frames or {}).get(label, pd.NA), "task_type": "t", **outcome_fields(value)}
                rows.append(tidy_row(label, condition, f"v{i // 2}-{i % 2}", benchmark, **extra))
    frame = tidy_frame(rows)
    if sampling is not None:
        frame["sampling"] = frame["model"].map(lambda label: sampling.get(label, ""))
    elif "sampling" in frame.columns:  # the io column once it lands: absent here means "not a sweep"
        frame = frame.drop(columns=["sampling"])
    return frame


def expected(conditions: dict[str, list[object]]) -> dict[str, float]:
    """The numbers by hand: questions with an answer in both orig and black, their accuracies and mean VDG."""
    kept = [(o, b) for o, b in zip(conditions["orig"], conditions["black"], strict=True) if "e" not in (o, b)]
    orig = [int(o is True) for o, _ in kept]
    black = [int(b is True) for _, b in kept]
    return {
        "n": len(kept),
        "acc_orig": sum(orig) / len(kept),
        "acc_black": sum(black) / len(kept),
        "vdg": sum(o - b for o, b in zip(orig, black, strict=True)) / len(kept),
        "d": sum(o > b for o, b in zip(orig, black, strict=True)),
        "c": sum(o < b for o, b in zip(orig, black, strict=True)),
    }


FRAMES_RUNS = {
    "m@16f": _outcomes(1, 0.7, 0.4),
    "m@8f": _outcomes(2, 0.6, 0.4),
    "m@32f": _outcomes(3, 0.8, 0.3),
}


def test_frames_sweep_rows_match_a_hand_count():
    sampling = {"m@8f": "frames:8", "m@16f": "frames:16", "m@32f": "frames:32"}
    frame = sweep_frame(FRAMES_RUNS, sampling=sampling)
    table = sampling_axis(frame, OPTIONS)
    assert list(table.columns) == list(COLUMNS)
    assert table["value"].tolist() == [8.0, 16.0, 32.0]  # numeric order, not the labels' text order
    assert table["label"].tolist() == ["m@8f", "m@16f", "m@32f"]
    assert set(table["model"]) == {"m"} and set(table["axis"]) == {"frames"}
    assert table["setting"].tolist() == ["frames:8", "frames:16", "frames:32"]
    assert set(table["setting_source"]) == {"sampling"}
    vdg = vdg_table(frame, OPTIONS).set_index(["model", "task_type"])
    for row in table.to_dict("records"):
        want = expected(FRAMES_RUNS[row["label"]])
        assert row["n"] == want["n"] == N_QUESTIONS - 1 and row["n_error"] == 1
        assert row["d"] == want["d"] and row["c"] == want["c"]
        for column in ("acc_orig", "acc_black", "vdg"):
            assert row[column] == pytest.approx(want[column])
        assert row["vdg"] == pytest.approx(row["acc_orig"] - row["acc_black"])
        overall = vdg.loc[(row["label"], "Overall")]  # the VDG table's CI, same bootstrap and seed
        assert (row["vdg_ci_low"], row["vdg_ci_high"]) == (overall["ci_low"], overall["ci_high"])
        assert row["vdg_ci_low"] <= row["vdg"] <= row["vdg_ci_high"]
        assert row["ci_level"] == 0.95 and row["missing_policy"] == "exclude"
        # a VDG's CI is the vdg table's: Tango's score interval (no resampling) on the row's own questions
        assert row["ci_method"] == overall["ci_method"] and row["n_resamples"] == 0 and row["mc_se"] == 0
        assert row["ci_method"].startswith("tango score")
        assert row["question_rule"] == overall["question_rule"] and not row["too_small"]
        shuffled = [s for s, b in zip(FRAMES_RUNS[row["label"]]["shuffled"], FRAMES_RUNS[row["label"]]["black"],
                                      strict=True) if b != "e"]  # fmt: skip
        assert row["acc_shuffled"] == pytest.approx(np.mean(shuffled))  # ladder: answered under every rung
        assert np.isnan(row["acc_single"]) and np.isnan(row["acc_ordered"])


def test_missing_sampling_column_falls_back_to_the_frames_column():
    runs = {"m@low": FRAMES_RUNS["m@8f"], "m@high": FRAMES_RUNS["m@32f"], "solo": FRAMES_RUNS["m@16f"]}
    frame = sweep_frame(runs, frames={"m@low": 8, "m@high": 32, "solo": 16})
    assert "sampling" not in frame.columns
    table = sampling_axis(frame, OPTIONS)
    assert table["label"].tolist() == ["m@low", "m@high"]  # "solo" has one setting: not a sweep
    assert table["setting"].tolist() == ["frames:8", "frames:32"] and set(table["setting_source"]) == {"frames"}
    assert table["vdg"].tolist() == pytest.approx([expected(runs[k])["vdg"] for k in ("m@low", "m@high")])
    # an empty logged sampling ("not part of a sweep") reads the same way
    blank = sampling_axis(sweep_frame(runs, frames={"m@low": 8, "m@high": 32, "solo": 16}, sampling={}), OPTIONS)
    pd.testing.assert_frame_equal(blank, table)


def test_labels_give_the_setting_when_nothing_is_logged_and_fps_is_log_ordered():
    runs = {"q@2fps": _outcomes(4, 0.7, 0.2), "q@0.5fps": _outcomes(5, 0.5, 0.2), "q@24fps": _outcomes(6, 0.7, 0.3)}
    frame = sweep_frame(runs, frames={"q@2fps": 768, "q@0.5fps": 768, "q@24fps": 768})  # a frame cap, not the axis
    table = sampling_axis(frame, OPTIONS)
    assert table["value"].tolist() == [0.5, 2.0, 24.0] and set(table["axis"]) == {"fps"}
    assert table["setting"].tolist() == ["fps:0.5", "fps:2", "fps:24"] and set(table["setting_source"]) == {"label"}
    assert table["acc_orig"].tolist() == pytest.approx([expected(runs[k])["acc_orig"] for k in table["label"]])


def test_two_models_two_axes_and_a_quantized_label():
    runs = {
        "a@8f": FRAMES_RUNS["m@8f"],
        "a@16f": FRAMES_RUNS["m@16f"],
        "a@1fps": FRAMES_RUNS["m@32f"],  # one fps setting only: no fps row for a
        "b@8f†int4": FRAMES_RUNS["m@16f"],
        "b@16f†int4": FRAMES_RUNS["m@8f"],
    }
    table = sampling_axis(sweep_frame(runs), OPTIONS)
    assert list(zip(table["model"], table["setting"], strict=True)) == [
        ("a", "frames:8"),
        ("a", "frames:16"),
        ("b†int4", "frames:8"),
        ("b†int4", "frames:16"),
    ]


def test_fewer_than_two_settings_gives_an_empty_table(tmp_path):
    frame = sweep_frame({"m@8f": FRAMES_RUNS["m@8f"], "other": FRAMES_RUNS["m@16f"]}, frames={"other": 16})
    table = sampling_axis(frame, OPTIONS)
    assert table.empty and list(table.columns) == list(COLUMNS)
    assert sampling_axis(frame.iloc[:0], OPTIONS).empty
    tables = run_all(frame, OPTIONS)
    assert tables["sampling_sweep"].empty and skip_reason(tables["sampling_sweep"]) is None
    assert "## Sampling sweep" not in render_markdown(tables)
    assert plot_sampling(tables["sampling_sweep"], tmp_path) is None and not any(tmp_path.iterdir())


def test_a_sweep_label_mixing_settings_is_skipped_with_the_reason():
    frame = sweep_frame(FRAMES_RUNS, sampling={"m@8f": "frames:8", "m@16f": "frames:16", "m@32f": "frames:32"})
    frame.loc[(frame["model"] == "m@8f") & (frame["condition"] == "black"), "sampling"] = "frames:12"
    with pytest.raises(ValueError, match="several sampling settings"):
        sampling_axis(frame, OPTIONS)
    tables = run_all(frame, OPTIONS, names=["sampling_sweep"])
    assert "several sampling settings" in skip_reason(tables["sampling_sweep"])


@pytest.mark.parametrize("text", ["frames:0", "frames:8.5", "fps:-1", "fps:nan", "fps", "8", "frames:"])
def test_bad_logged_sampling_is_refused(text):
    with pytest.raises(ValueError, match="is not frames"):
        parse_setting(text)
    frame = sweep_frame(FRAMES_RUNS, sampling=dict.fromkeys(FRAMES_RUNS, text))
    with pytest.raises(ValueError, match="is not frames"):
        run_settings(frame)


def test_report_section_and_plot(tmp_path):
    sampling = {"m@8f": "frames:8", "m@16f": "frames:16", "m@32f": "frames:32"}
    frame = sweep_frame(FRAMES_RUNS, sampling=sampling)
    fps = sweep_frame({"m@0.5fps": _outcomes(7, 0.6, 0.3), "m@4fps": _outcomes(8, 0.7, 0.3)})
    tables = run_all(pd.concat([frame, fps], ignore_index=True), OPTIONS)
    table = tables["sampling_sweep"]
    assert table["setting"].tolist() == ["frames:8", "frames:16", "frames:32", "fps:0.5", "fps:4"]
    markdown = render_markdown(tables)
    section = markdown.split("## Sampling sweep", 1)[1].split("\n## ", 1)[0]
    assert "frames:16" in section and "fps:0.5" in section and "vdg [CI]" in section
    path = plot_sampling(table, tmp_path)
    assert path == tmp_path / "sampling_sweep.png" and path.read_bytes().startswith(PNG)


# ------------------------------------------------------------------------------------ end to end


@pytest.mark.slow
def test_vdg_sweep_then_vdg_report_on_vdgsynth(tmp_path, monkeypatch):
    """`vdg sweep --frames 8,16` with vdg_probe through the real lmms-eval, then `vdg report` on both runs.

    The sampling column is read when the runs log it; otherwise each run's setting comes from its label
    (``probe@<N>f``) or its frames argument, so this passes either way.
    """
    from tests.helpers.runs import offline_env
    from vdg_tasks.cli import main as vdg_main
    from vdg_tasks.lmms.yamlgen import write_all
    from vdg_tasks.synthetic.synth import generate

    synth = generate(tmp_path / "synth", n_videos=2, seed=0)
    write_all(tmp_path / "tasks", synth_data=str(synth))
    for key, value in offline_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    out = tmp_path / "sweep"
    code = vdg_main(["sweep", "--model", "vdg_probe", "--tasks", "vdgsynth_vdg_orig,vdgsynth_vdg_black",
                     "--frames", "8,16", "--output_path", str(out), "--label", "probe",
                     "--include_path", str(tmp_path / "tasks"), "--", "--verbosity", "WARNING"])  # fmt: skip
    assert code == 0
    for n in (8, 16):
        assert sorted((out / f"frames{n}").rglob("*_samples_*.jsonl")), f"no samples at {n} frames"
    report = tmp_path / "report"
    runs = [f"probe@{n}f={out / f'frames{n}'}" for n in (8, 16)]
    assert vdg_main(["report", *runs, "--out", str(report), "--resamples", "200", "--min-n", "1"]) == 0
    table = pd.read_csv(report / "sampling_sweep.csv")
    assert table["setting"].tolist() == ["frames:8", "frames:16"] and table["label"].tolist() == [
        "probe@8f",
        "probe@16f",
    ]
    assert (table["model"] == "probe").all() and (table["benchmark"] == "vdgsynth").all()
    assert (table["n"] > 0).all() and table[
        ["acc_orig", "acc_black", "vdg", "vdg_ci_low", "vdg_ci_high"]
    ].notna().all().all()
    assert table["vdg"].tolist() == pytest.approx((table["acc_orig"] - table["acc_black"]).tolist())
    section = (report / "report.md").read_text().split("## Sampling sweep", 1)[1].split("\n## ", 1)[0]
    assert "frames:8" in section and "frames:16" in section
    assert (report / "plots" / "sampling_sweep.png").read_bytes().startswith(PNG)
