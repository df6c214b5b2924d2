"""vdg_tasks.extend: declaring a condition, and the guard rails around its transform (errors are rows, outputs are
checked against what the condition declares it changes)."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest

import vdg_tasks.lmms.hooks as hooks
from tests.helpers.videos import write_indexed_source
from vdg_tasks.data.benchmarks import BENCHMARKS
from vdg_tasks.extend import Context, container_condition, frame_condition, text_condition
from vdg_tasks.perturb.frames import apply_to_frames
from vdg_tasks.perturb.text import apply as apply_text
from vdg_tasks.perturb.video import VideoDecodeError, probe, render, validate

SEED = 5


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return write_indexed_source(tmp_path_factory.mktemp("extend") / "src.mp4", 20, fps=10)


def invert(frame, context):
    return 255 - frame


def test_a_frame_condition_has_vdg_s_fields_and_runs_by_its_family_s_tag():
    condition = frame_condition("inverted", invert, description="Inverted.", family="colour", params={"a": 1})
    assert (condition.modality, condition.transform, condition.apply) == ("video", "frames", invert)
    assert (condition.family, dict(condition.params), condition.tagged, condition.in_main_tag) == (
        "colour",
        {"a": 1},
        True,
        False,
    )
    assert condition.declared_in == "" and condition.source_digest == ""  # the registry fills them in
    text = text_condition("shout", lambda doc, context: doc, description="Shouted.", family="text2")
    assert (text.modality, text.text, text.transform) == ("text", "doc", "identity")
    with pytest.raises(TypeError, match="callable"):
        frame_condition("broken", "not a function", description="x", family="y")  # type: ignore[arg-type]


def test_the_context_s_generator_is_seeded_by_the_seed_and_the_frame():
    a, b, c = Context(seed=1, index=2), Context(seed=1, index=2), Context(seed=1, index=3)
    assert a.rng().integers(1 << 30) == b.rng().integers(1 << 30) != c.rng().integers(1 << 30)


def test_a_frame_condition_changes_every_frame_and_keeps_the_rest(source, tmp_path):
    dst = tmp_path / "inverted.mp4"
    render(frame_condition("inverted", invert, description="x", family="y"), source, dst, seed=SEED)
    a, b = probe(source), validate(dst)
    assert (b.width, b.height, b.n_frames, b.fps) == (a.width, a.height, a.n_frames, a.fps)
    with av.open(str(source)) as s, av.open(str(dst)) as d:
        for x, y in zip(s.decode(video=0), d.decode(video=0), strict=True):
            want = 255 - x.to_ndarray(format="rgb24").astype(int)
            assert np.abs(y.to_ndarray(format="rgb24").astype(int) - want).mean() < 3


def test_a_transform_that_raises_is_refused_with_its_reason_and_leaves_no_file(source, tmp_path):
    def explode(frame, context):
        raise RuntimeError("kaboom")

    dst = tmp_path / "out.mp4"
    with pytest.raises(VideoDecodeError, match="kaboom") as caught:
        render(frame_condition("boom", explode, description="x", family="y"), source, dst, seed=SEED)
    assert str(source) in str(caught.value)
    assert not dst.exists()


def test_a_size_the_condition_does_not_declare_is_refused_and_a_declared_one_is_kept(source, tmp_path):
    def crop(frame, context):
        return np.ascontiguousarray(frame[: frame.shape[0] // 2, : frame.shape[1] // 2])

    dst = tmp_path / "crop.mp4"
    with pytest.raises(VideoDecodeError, match=r"80x60, not 160x120"):
        render(frame_condition("crop", crop, description="x", family="y"), source, dst, seed=SEED)
    assert not dst.exists()
    render(frame_condition("crop", crop, description="x", family="y", changes={"size"}), source, dst, seed=SEED)
    out = validate(dst)
    assert (out.width, out.height, out.n_frames) == (80, 60, 20)


def _first_frames(n: int):
    """A container transform writing the first ``n`` frames of the source (a shorter video)."""

    def write(src: Path, dst: Path, context: Context) -> None:
        with av.open(str(src)) as reader, av.open(str(dst), "w", format="mp4") as writer:
            stream = reader.streams[context.video_stream]
            out = writer.add_stream_from_template(stream, opaque=True)
            for packet in list(reader.demux(stream))[:n]:
                if packet.dts is not None:
                    packet.stream = out
                    writer.mux(packet)

    return write


def test_a_container_output_that_is_short_or_missing_or_unreadable_is_refused(source, tmp_path):
    dst = tmp_path / "out.mp4"
    short = container_condition("short", _first_frames(10), description="x", family="y")
    with pytest.raises(VideoDecodeError, match=r"short's output is refused: 10 frames, the source has 20"):
        render(short, source, dst, seed=SEED)
    assert not dst.exists()
    nothing = container_condition("nothing", lambda src, dst, context: None, description="x", family="y")
    with pytest.raises(VideoDecodeError, match="wrote no file"):
        render(nothing, source, dst, seed=SEED)
    garbage = container_condition(
        "garbage", lambda src, dst, context: dst.write_bytes(b"\0" * 4096), description="x", family="y"
    )
    with pytest.raises(VideoDecodeError, match="garbage's output is refused"):
        render(garbage, source, dst, seed=SEED)
    assert not dst.exists()
    whole = container_condition("whole", _first_frames(10**6), description="x", family="y")
    render(whole, source, dst, seed=SEED)
    assert validate(dst).n_frames == 20
    declared = container_condition(
        "half", _first_frames(10), description="x", family="y", changes={"frames", "duration"}
    )
    render(declared, source, dst, seed=SEED)
    assert validate(dst).n_frames == 10


def test_a_frame_condition_on_a_task_that_gives_frames_keeps_their_kind_and_mode():
    from PIL import Image

    condition = frame_condition("inverted", invert, description="x", family="y")
    frames = [Image.fromarray(np.full((4, 6), 10 * i, dtype=np.uint8)) for i in range(3)]  # mode L
    shown = apply_to_frames(condition, frames, SEED)
    assert [f.mode for f in shown] == ["L"] * 3
    assert [int(np.asarray(f)[0, 0]) for f in shown] == [255, 245, 235]
    arrays = [np.full((4, 6, 3), 7, dtype=np.uint8)]
    assert int(apply_to_frames(condition, arrays, SEED)[0][0, 0, 0]) == 248


def test_a_text_condition_s_answer_is_the_one_scored_and_its_question_id_stays():
    def reverse(doc, context):
        options = [o.split(". ", 1)[1] for o in doc["options"]][::-1]
        answer = "ABC"[len(options) - 1 - "ABC".index(doc["answer"])]
        return {**doc, "options": [f"{'ABC'[i]}. {t}" for i, t in enumerate(options)], "answer": answer}

    doc = {"question_id": "q1", "question": "Q?", "options": ["A. a", "B. b", "C. c"], "answer": "A"}
    change = apply_text(text_condition("reversed_options", reverse, description="x", family="y"), doc)
    assert change.doc["options"] == ["A. c", "B. b", "C. a"]
    # the original letter of each option as asked: the report reads the answer key in the question's own order
    assert change.details == {"answer": "C", "shuffled_from": "CBA"}
    unchanged = apply_text(text_condition("same", lambda d, c: d, description="x", family="y"), doc)
    assert unchanged.details == {}
    renamed = text_condition("renamed", lambda d, c: {**d, "question_id": "other"}, description="x", family="y")
    with pytest.raises(ValueError, match="changed the question id"):
        apply_text(renamed, doc)


def test_a_text_condition_changes_a_copy_of_the_doc_seeded_by_the_question():
    seen = []

    def drop_last_option(doc, context):
        seen.append(context.seed)
        doc["options"].pop()  # in place: the caller's doc must not see it
        return doc

    condition = text_condition("fewer", drop_last_option, description="x", family="y")
    doc = {"question_id": "q1", "question": "Q?", "options": ["A. a", "B. b", "C. c"], "answer": "A"}
    change = apply_text(condition, doc)
    assert change.doc["options"] == ["A. a", "B. b"] and doc["options"] == ["A. a", "B. b", "C. c"]
    apply_text(condition, dict(doc))
    apply_text(condition, {**doc, "question_id": "q2"})
    assert seen[0] == seen[1] != seen[2]


@pytest.fixture()
def doc(tmp_path, monkeypatch, source):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    hooks._resolve.cache_clear()
    return {
        "question_id": "v1-1",
        "videoID": "v1",
        "video": str(source),
        "task_type": "single_frame",
        "duration": "short",
        "question": "What colour is the border?",
        "options": ["A. red", "B. green", "C. blue", "D. white"],
        "answer": "C",
    }


def test_inside_lmms_eval_a_transform_that_raises_is_the_question_s_error_row(doc):
    def explode(frame, context):
        raise RuntimeError("kaboom")

    bench = BENCHMARKS["vdgsynth"]
    condition = frame_condition("boom", explode, description="x", family="y")
    shown = hooks.make_doc_to_visual(bench, condition)(doc)
    assert len(shown) == 1 and Path(shown[0]).is_file()  # the placeholder: the model and the run go on
    record = hooks.make_process_results(bench, condition)(doc, ["The answer is C."])["vdg"]
    assert (record["status"], record["correct"]) == ("error", None)
    assert "kaboom" in record["error"]
    text = text_condition("oops", lambda d, c: 1 / 0, description="x", family="y")
    record = hooks.make_process_results(bench, text)(doc, ["The answer is C."])["vdg"]
    assert record["status"] == "error" and "ZeroDivisionError" in record["error"]
    assert "What colour" in hooks.make_doc_to_text(bench, text)(doc)  # asked unchanged


def test_a_declared_condition_s_sample_logs_its_module_and_digest(doc, monkeypatch):
    import dataclasses

    bench = BENCHMARKS["vdgsynth"]
    condition = dataclasses.replace(
        frame_condition("inverted", invert, description="x", family="y"), declared_in="mine", source_digest="ab" * 32
    )
    record = hooks.make_process_results(bench, condition)(doc, ["The answer is C."])["vdg"]
    assert record["status"] == "ok"
    assert record["provenance"]["declared"] == {"module": "mine", "source_digest": "ab" * 32}
    assert record["provenance"]["condition"] == "inverted" and record["provenance"]["built_by"]
