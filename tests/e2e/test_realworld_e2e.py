"""Real-world sources through real lmms-eval runs: what the model sees under a condition is what it sees under orig,
or the question is an error row.

vdgsynth questions plus one question per real-world source (full colour range, two video streams, MPEG-TS
with a non-zero start and across the 33-bit wrap, edit lists hiding one frame and five, a PNG renamed .mp4, a 1x1
video) run through every condition with ``vdg_probe``, and through orig, black, single and crf28 with
the tiny Qwen2-VL through lmms-eval's ``qwen2_vl`` class reading videos with decord
(``FORCE_QWENVL_VIDEO_READER=decord``: the reader that dies on a file decord cannot read). Every
question has one row per condition; the sources decord cannot read are ``error`` rows naming decord; those it
misreads are error rows under the conditions built from their decoded pictures; the others are answered, and every
video built from them is read by decord as it reads the source.
"""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest

from postprocess.reading.lmms_eval_logs import load_frame
from tests.helpers.colour_range import write_half_black_source
from tests.helpers.mpegts import STARTS, write_ts
from tests.helpers.runs import lmms_eval, offline_env, synth_with_sources
from tests.helpers.two_streams import write_two_streams
from tests.helpers.videos import X264_FIXED_GOP, shifted_copy, write_indexed_source
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.perturb.cache import materialize
from vdg_tasks.vocabulary.conditions import CIRCULAR, CONDITIONS

pytestmark = pytest.mark.slow
decord = pytest.importorskip("decord")

#: The sources the model's decoder cannot read as vdg would show them (decord cannot read a picture named .mp4 or a
#: 1x1 video; an edit list hiding 5 frames makes decord show 45 frames where PyAV plays 40): error rows under every
#: condition, the reason naming decord.
UNREADABLE = ("png_renamed", "one_by_one", "edit_list_hides_5")
#: The sources decord reads, but presents other pictures of on random access than PyAV decodes (frame i + 12 of these
#: transport streams; one frame off past an edit list): orig and black show them, every condition built from their
#: decoded pictures is an error row naming the disagreement and a re-encode command.
MISREAD = ("mpegts_start", "mpegts_wrap", "edit_list_hides_1")
#: The rotations of circular evaluation (their own tag) change only the options' order; test_circular_e2e runs them.
SYNTH_CONDITIONS = [c.name for c in BENCHMARKS["vdgsynth"].conditions() if c.family != CIRCULAR]
#: The tags that run them all: the core audit, blind, and the conditions written through the public API.
EVERY_TASK = "vdgsynth_vdg,vdgsynth_vdg_blind,vdgsynth_vdg_detail,vdgsynth_vdg_audio"
QWEN_CONDITIONS = ("orig", "black", "blind", "single", "crf28")


def _png_renamed(path: Path) -> Path:
    from PIL import Image

    Image.fromarray(np.zeros((48, 64, 3), np.uint8)).save(path, format="PNG")
    return path


def _one_by_one(path: Path) -> Path:
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = 1, 1, "yuv444p"
        for i in range(20):
            frame = av.VideoFrame.from_ndarray(np.full((1, 1, 3), 10 * i, np.uint8), format="rgb24")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


def make_real_world_sources(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    plain = write_indexed_source(folder / "plain45.mp4", 45, options=X264_FIXED_GOP)
    return {
        "edit_list_hides_1": shifted_copy(plain, folder / "hide1.mp4", start=1),
        "edit_list_hides_5": shifted_copy(plain, folder / "hide5.mov", start=5),
        "full_range": write_half_black_source(folder / "full_range.mp4", "full"),
        "two_streams": write_two_streams(folder / "two_streams.mp4"),
        "mpegts_start": write_ts(folder / "start.ts", STARTS["start_10s"], "libx264"),
        "mpegts_wrap": write_ts(folder / "wrap.ts", STARTS["wrap"], "libx264"),
        "png_renamed": _png_renamed(folder / "picture.mp4"),
        "one_by_one": _one_by_one(folder / "one_by_one.mp4"),
    }


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("realworld_e2e")
    sources = make_real_world_sources(root / "sources")
    good = [q["question_id"] for q in synth_with_sources(root, sources, "real", n_videos=2)]
    env = offline_env(root)
    out = lmms_eval(env, root / "runs", root / "tasks", "vdg_probe", EVERY_TASK)
    return {"root": root, "env": env, "good": good, "sources": sources, "frame": load_frame([f"probe={out}"])}


def _check_rows(frame, world, conditions) -> None:
    asked = set(world["good"]) | {f"real-{n}" for n in world["sources"]}
    assert set(frame.condition) == set(conditions)
    indexed = frame.set_index(["question_id", "condition"])
    for condition, rows in frame.groupby("condition"):
        assert sorted(rows.question_id) == sorted(asked), condition
    for name in world["sources"]:
        for condition in conditions:
            row = indexed.loc[(f"real-{name}", condition)]
            if name in UNREADABLE and CONDITIONS[condition].shows_video:
                assert row.status == "error" and "decord" in row.error, (name, condition, row.error)
            elif name in MISREAD and CONDITIONS[condition].decodes_source:
                assert row.status == "error" and "the source's decoders disagree" in row.error, (name, condition)
                assert "ffmpeg -fflags +genpts" in row.error
            else:
                assert row.status != "error", (name, condition, row.error)
    good = frame[frame.question_id.isin(world["good"])]
    assert (good.status != "error").all()


def test_probe_run_has_one_row_per_question_and_condition_and_errors_only_for_unreadable_sources(world):
    _check_rows(world["frame"], world, SYNTH_CONDITIONS)


def _decord_view(path: Path) -> tuple[tuple[int, ...], int]:
    reader = decord.VideoReader(str(path))
    return reader[0].shape, len(reader)


@pytest.mark.parametrize("condition", ["black", "single", "ordered", "crf28"])
def test_every_built_video_is_read_by_decord_as_it_reads_the_source(world, condition, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(world["root"] / "cache"))
    for name, source in world["sources"].items():
        if name in UNREADABLE or (name in MISREAD and CONDITIONS[condition].decodes_source):
            continue
        built = materialize(source, CONDITIONS[condition], f"real-{name}")
        assert built.hit, f"{name}: the lmms-eval run should have built {condition} already"
        shape, _ = _decord_view(built.path)
        assert shape == _decord_view(source)[0], (name, condition)
        if name == "full_range":
            first = decord.VideoReader(str(built.path))[0].asnumpy().astype(float)
            dark = first[:, : first.shape[1] // 2].mean()
            assert dark <= 4, (condition, dark)  # black stays 0 in full range, never lifted to 16
            if condition != "black":
                assert first[:, first.shape[1] // 2 :].mean() >= 250, condition


def test_tiny_qwen2_vl_reading_with_decord_answers_every_readable_source(world, tmp_path):
    from tests.helpers.tiny_qwen2vl import TINY_QWEN_MODEL_ARGS, build_tiny_qwen2vl

    model_dir = build_tiny_qwen2vl(tmp_path / "tiny-qwen2vl")
    out = lmms_eval(
        world["env"],
        tmp_path / "qwen",
        world["root"] / "tasks",
        "qwen2_vl",
        ",".join(f"vdgsynth_vdg_{c}" for c in QWEN_CONDITIONS),
        "--model_args",
        f"pretrained={model_dir},{TINY_QWEN_MODEL_ARGS}",
    )
    frame = load_frame([out])
    assert set(frame.model) == {"qwen2_vl:tiny-qwen2vl"}
    _check_rows(frame, world, QWEN_CONDITIONS)
