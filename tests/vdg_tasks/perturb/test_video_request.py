"""vdg_tasks.perturb.video_request: the one decision of what video a question is shown under a condition.

``video_request`` per condition (the video ladder, the CRF family, the oracle and the text conditions), the
stability of a ``VideoRequest``'s key, and each of its error branches (``RequestError`` stages "source" and
"params"); the pieces it is made of: ``oracle_times``, ``sampling_setting``/``sampling_label`` (``$VDG_SAMPLING``),
``bound_params``, ``source_path`` (a frame folder encoded first) and ``shown_from`` (a hold's K capped at the
source's frame count, the stream shown). Most requests need only a file that exists (no probe); the tests that
probe or encode a real video are marked slow.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from tests.helpers.videos import write_indexed_source
from vdg_tasks.data.benchmarks import BENCHMARKS, VideoUnavailable
from vdg_tasks.perturb.video import VideoDecodeError, probe
from vdg_tasks.perturb.video_request import (
    SAMPLING_ENV,
    RequestError,
    VideoRequest,
    bound_params,
    oracle_times,
    sampling_label,
    sampling_setting,
    shown_from,
    source_path,
    video_request,
)
from vdg_tasks.vocabulary.conditions import CONDITIONS

#: infinibench_ga provides every declared condition and reads its videos from the doc's own path.
EVERY_CONDITION = BENCHMARKS["infinibench_ga"]
#: The conditions whose transform is "hold" (declared with k=32 and an order): K follows $VDG_SAMPLING.
HELD = {"single", "shuffled", "ordered", "reversed"}
#: Every condition showing a video but the oracle (blind shows none: video_request gives None).
NOT_ORACLE = [name for name, c in CONDITIONS.items() if name != "oracle" and c.shows_video]

#: The generated clip: 16 frames at 8 fps, so 2.0 s.
CLIP_FRAMES, CLIP_FPS = 16, 8


@pytest.fixture(autouse=True)
def _no_sampling(monkeypatch):
    monkeypatch.delenv(SAMPLING_ENV, raising=False)
    monkeypatch.delenv("VDG_LOCAL_DATA", raising=False)


@pytest.fixture
def file(tmp_path) -> Path:
    """A file that exists: enough for every request that does not probe the video."""
    path = tmp_path / "v1.mp4"
    path.write_bytes(b"not decoded by these tests")
    return path


def make_doc(video: Path, **extra) -> dict:
    return {"question_id": "q1", "videoID": "v1", "video": str(video), **extra}


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    """A real 64x32 H.264 clip: 16 frames at 8 fps (2.0 s)."""
    return write_indexed_source(
        tmp_path_factory.mktemp("shown") / "clip.mp4", CLIP_FRAMES, fps=CLIP_FPS, width=64, height=32
    )


@pytest.fixture(scope="module")
def audio_first(tmp_path_factory) -> Path:
    """An mp4 whose stream 0 is audio and stream 1 the (only) video: 8 frames at 8 fps."""
    path = tmp_path_factory.mktemp("shown") / "audio_first.mp4"
    with av.open(str(path), "w") as out:
        sound = out.add_stream("aac", rate=16000, layout="mono")
        video = out.add_stream("libx264", rate=8)
        video.width, video.height, video.pix_fmt = 64, 32, "yuv420p"
        for i in range(8):
            frame = av.VideoFrame.from_ndarray(np.full((32, 64, 3), 30 * i, dtype=np.uint8), format="rgb24")
            frame.pts = i
            out.mux(video.encode(frame))
        out.mux(video.encode(None))
        for start in range(0, 16000, 1024):
            samples = np.zeros((1, min(1024, 16000 - start)), dtype=np.float32)
            chunk = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
            chunk.sample_rate, chunk.pts = 16000, start
            out.mux(sound.encode(chunk))
        out.mux(sound.encode(None))
    return path


# -- oracle_times ------------------------------------------------------------------------------------------


def test_oracle_times_are_the_midpoints_of_each_outfits_longest_window_in_time_order():
    # outfit 1: (1, 3) is 2 s long, (4, 10) is 6 s: midpoint 7.0; outfit 2: (0, 2): midpoint 1.0; sorted by time
    doc = {"question_id": "q", "outfit_windows": [[[1, 3], [4, 10]], [[0, 2]]]}
    assert oracle_times(doc) == (1.0, 7.0)


def test_oracle_times_break_a_tie_by_the_earlier_window_and_round_to_milliseconds():
    assert oracle_times({"outfit_windows": [[[5, 7], [0, 2]]]}) == (1.0,)  # both 2 s long: (0, 2) starts first
    assert oracle_times({"outfit_windows": [[[0.1234, 0.2]]]}) == (0.162,)  # (0.1234 + 0.2) / 2 = 0.1617
    assert oracle_times({"outfit_windows": [[["1.5", "2.5"]]]}) == (2.0,)  # numbers as strings are read


def test_oracle_times_skip_a_reversed_window_but_keep_an_instant():
    # (5, 3) ends before it starts and is dropped; (4, 4) is a zero-length window and kept
    assert oracle_times({"outfit_windows": [[[5, 3], [0, 1]], [[4, 4]]]}) == (0.5, 4.0)


@pytest.mark.parametrize(
    ("windows", "message"),
    [
        (None, "question q9: has no outfit windows \\(field 'outfit_windows'\\)"),
        ([], "question q9: has no outfit windows"),
        ([[[0, 1]], []], "question q9: outfit 2 has no annotated window"),
        ([[[0, 1]], None], "question q9: outfit 2 has no annotated window"),
        ([[[3, 2]]], "question q9: outfit 1 has no annotated window"),
    ],
)
def test_oracle_times_name_the_question_and_outfit_without_a_usable_window(windows, message):
    with pytest.raises(ValueError, match=message):
        oracle_times({"question_id": "q9", "outfit_windows": windows})


# -- $VDG_SAMPLING -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "setting", "label"),
    [
        ("frames:16", ("frames", 16.0), "frames:16"),
        ("  frames:8 ", ("frames", 8.0), "frames:8"),
        ("frames:016", ("frames", 16.0), "frames:16"),
        ("fps:0.5", ("fps", 0.5), "fps:0.5"),
        ("fps:2.0", ("fps", 2.0), "fps:2"),
    ],
)
def test_a_sampling_setting_is_read_as_axis_and_value_and_labelled_canonically(monkeypatch, value, setting, label):
    monkeypatch.setenv(SAMPLING_ENV, value)
    assert sampling_setting() == setting
    assert sampling_label() == label


@pytest.mark.parametrize("value", ["", "   "])
def test_an_unset_or_blank_sampling_setting_is_none_and_an_empty_label(monkeypatch, value):
    monkeypatch.setenv(SAMPLING_ENV, value)
    assert sampling_setting() is None and sampling_label() == ""


@pytest.mark.parametrize(
    "bad",
    ["frames:0", "frames:2.5", "frames:-4", "fps:0", "fps:-1", "fps:x", "fps:nan", "fps:inf", "frames:inf"]
    + ["seconds:3", "FRAMES:8", "8"],
)
def test_a_malformed_sampling_setting_raises_naming_the_variable_and_labels_as_empty(monkeypatch, bad):
    monkeypatch.setenv(SAMPLING_ENV, bad)
    with pytest.raises(ValueError, match=f"{SAMPLING_ENV}='{bad}': expected frames:N"):
        sampling_setting()
    assert sampling_label() == ""


# -- bound_params -------------------------------------------------------------------------------------------


def test_only_the_oracle_and_held_conditions_under_a_sampling_setting_have_per_question_parameters(monkeypatch):
    doc = {"outfit_windows": [[[0, 2]], [[4, 6]]]}
    for name in NOT_ORACLE:
        assert bound_params(CONDITIONS[name], doc) == (), name
    assert bound_params(CONDITIONS["oracle"], doc) == (("times", (1.0, 5.0)),)
    monkeypatch.setenv(SAMPLING_ENV, "frames:8")
    for name in NOT_ORACLE:
        assert bound_params(CONDITIONS[name], doc) == ((("k", 8),) if name in HELD else ()), name
    assert bound_params(CONDITIONS["oracle"], doc) == (("times", (1.0, 5.0)),)  # the oracle ignores the setting


def test_a_frame_setting_gives_an_integer_k(monkeypatch):
    monkeypatch.setenv(SAMPLING_ENV, "frames:12")
    ((name, k),) = bound_params(CONDITIONS["ordered"], {})
    assert (name, k, type(k)) == ("k", 12, int)


def test_a_rate_setting_needs_the_video_to_know_its_duration(monkeypatch):
    monkeypatch.setenv(SAMPLING_ENV, "fps:2")
    with pytest.raises(ValueError, match="VDG_SAMPLING=fps:2: K follows each video's duration, and no video was given"):
        bound_params(CONDITIONS["ordered"], {})


def test_a_malformed_setting_is_only_read_for_held_conditions(monkeypatch):
    monkeypatch.setenv(SAMPLING_ENV, "frames:0")
    assert bound_params(CONDITIONS["black"], {}) == ()
    with pytest.raises(ValueError, match=SAMPLING_ENV):
        bound_params(CONDITIONS["single"], {})


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rate", "k"),
    [
        ("2", 4),  # 2 per second x 2.0 s
        ("1.3", 3),  # round(2.6)
        ("0.1", 1),  # round(0.2) = 0, and at least one key frame
    ],
)
def test_a_rate_setting_holds_rate_times_duration_key_frames(monkeypatch, clip, rate, k):
    monkeypatch.setenv(SAMPLING_ENV, f"fps:{rate}")
    assert bound_params(CONDITIONS["shuffled"], {}, str(clip)) == (("k", k),)


# -- source_path ---------------------------------------------------------------------------------------------


def test_the_source_of_a_file_is_that_file(file):
    assert source_path(BENCHMARKS["vdgsynth"], make_doc(file)) == file


def test_a_missing_source_is_unavailable(tmp_path):
    with pytest.raises(VideoUnavailable, match=r"gone\.mp4 does not exist"):
        source_path(BENCHMARKS["vdgsynth"], make_doc(tmp_path / "gone.mp4"))


def test_a_folder_is_no_source_for_a_benchmark_without_frame_folders(tmp_path):
    assert BENCHMARKS["vdgsynth"].frame_folder_fps is None
    (tmp_path / "frames").mkdir()
    with pytest.raises(VideoUnavailable, match="frames is a folder, not a video"):
        source_path(BENCHMARKS["vdgsynth"], make_doc(tmp_path / "frames"))


@pytest.fixture
def framed(tmp_path, monkeypatch):
    """vdgsynth as a benchmark whose folders of frames are shown at 4 fps; the cache in tmp."""
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    return dataclasses.replace(BENCHMARKS["vdgsynth"], frame_folder_fps=4.0)


def test_an_empty_frame_folder_cannot_be_a_source(tmp_path, framed):
    (tmp_path / "frames").mkdir()
    with pytest.raises(ValueError, match="a frame folder with no .jpg, .jpeg, .png frames"):
        source_path(framed, make_doc(tmp_path / "frames"))


@pytest.mark.slow
def test_a_frame_folder_is_encoded_to_a_video_at_the_benchmarks_rate(tmp_path, framed):
    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(6):
        Image.fromarray(np.full((32, 64, 3), 40 * i, dtype=np.uint8)).save(folder / f"{i:03d}.png")
    video = source_path(framed, make_doc(folder))
    assert video.suffix == ".mp4" and (tmp_path / "cache") in video.parents
    info = probe(video)
    assert (info.n_frames, info.fps, info.duration) == (6, Fraction(4), pytest.approx(1.5))  # 6 frames at 4 fps
    assert video_request(framed, CONDITIONS["black"], make_doc(folder)).source == str(video)


# -- shown_from ----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_hold_shows_at_most_the_sources_frame_count(clip):
    assert shown_from(CONDITIONS["shuffled"], str(clip)) == ({"k": 16, "order": "shuffled"}, 0)  # min(32, 16)
    assert shown_from(CONDITIONS["single"].bound(k=8), str(clip)) == ({"k": 8, "order": "single"}, 0)  # 8 < 16


@pytest.mark.slow
def test_conditions_other_than_a_hold_show_their_declared_parameters(clip):
    assert shown_from(CONDITIONS["orig"], str(clip)) == ({}, 0)
    assert shown_from(CONDITIONS["crf28"], str(clip)) == ({"crf": 28, "preset": "medium"}, 0)
    oracle = CONDITIONS["oracle"].bound(times=(0.5, 1.5))
    assert shown_from(oracle, str(clip))[0] == {"pick": "midpoint of each outfit's longest window", "times": (0.5, 1.5)}


@pytest.mark.slow
def test_the_effective_parameters_are_a_copy_of_the_conditions(clip):
    params, _ = shown_from(CONDITIONS["ordered"], str(clip))
    params["k"] = 1
    assert CONDITIONS["ordered"].params["k"] == 32


@pytest.mark.slow
def test_the_stream_shown_is_the_video_streams_index_among_all_of_the_files_streams(audio_first):
    with av.open(str(audio_first)) as container:  # what the fixture wrote: audio first, video second
        assert [s.type for s in container.streams] == ["audio", "video"]
    assert shown_from(CONDITIONS["black"], str(audio_first)) == ({}, 1)


@pytest.mark.slow
def test_shown_from_an_unreadable_source_raises_the_decode_error(file):
    with pytest.raises(VideoDecodeError):
        shown_from(CONDITIONS["orig"], str(file))


# -- video_request per condition ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NOT_ORACLE)
def test_without_a_sampling_setting_every_condition_but_the_oracle_asks_for_its_declared_video(file, name):
    request = video_request(EVERY_CONDITION, CONDITIONS[name], make_doc(file))
    assert request.key == (name, str(file), "v1", ())
    assert request.condition is CONDITIONS[name] and request.applied is CONDITIONS[name]


@pytest.mark.parametrize("name", NOT_ORACLE)
def test_under_a_frame_setting_only_the_held_conditions_ask_for_that_k(file, monkeypatch, name):
    monkeypatch.setenv(SAMPLING_ENV, "frames:8")
    request = video_request(EVERY_CONDITION, CONDITIONS[name], make_doc(file))
    declared = dict(CONDITIONS[name].params)
    if name in HELD:
        assert request.bound == (("k", 8),)
        assert dict(request.applied.params) == {**declared, "k": 8} and request.applied.name == name
    else:
        assert request.bound == () and dict(request.applied.params) == declared


def test_blind_asks_for_no_video_even_where_the_doc_names_none(file):
    assert video_request(EVERY_CONDITION, CONDITIONS["blind"], make_doc(file)) is None
    assert video_request(EVERY_CONDITION, CONDITIONS["blind"], {"question_id": "q"}) is None


def test_the_oracle_asks_for_one_frame_per_outfit_window(file):
    doc = make_doc(file, outfit_windows=[[[10, 20]], [[2, 4], [30, 31]]])  # midpoints 15.0 and 3.0
    request = video_request(EVERY_CONDITION, CONDITIONS["oracle"], doc)
    assert request.bound == (("times", (3.0, 15.0)),)
    assert request.applied.params["times"] == (3.0, 15.0)
    assert request.applied.params["pick"] == CONDITIONS["oracle"].params["pick"]
    assert "times" not in CONDITIONS["oracle"].params  # the declaration is left as it was


def test_the_video_id_is_the_views_video_id_as_text(file):
    assert video_request(BENCHMARKS["vdgsynth"], CONDITIONS["orig"], make_doc(file, videoID=7)).video_id == "7"


def test_a_benchmarks_view_supplies_the_video_id(file, tmp_path, monkeypatch):
    # egoschema's view takes the id from video_idx; its local copy: <root>/egoschema/videos/<video_idx>.mp4
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path))
    (tmp_path / "egoschema" / "videos").mkdir(parents=True)
    video = tmp_path / "egoschema" / "videos" / "ego1.mp4"
    video.write_bytes(b"x")
    request = video_request(BENCHMARKS["egoschema_subset"], CONDITIONS["orig"], {"video_idx": "ego1"})
    assert (request.source, request.video_id) == (str(video), "ego1")


@pytest.mark.slow
def test_under_a_rate_setting_a_held_condition_asks_for_k_from_the_videos_duration(clip, monkeypatch):
    monkeypatch.setenv(SAMPLING_ENV, "fps:2")
    request = video_request(BENCHMARKS["vdgsynth"], CONDITIONS["ordered"], make_doc(clip))
    assert request.bound == (("k", 4),)  # 2 per second x 2.0 s
    assert video_request(BENCHMARKS["vdgsynth"], CONDITIONS["crf23"], make_doc(clip)).bound == ()


# -- VideoRequest's key --------------------------------------------------------------------------------------


def test_asking_twice_gives_equal_requests_with_equal_keys_and_hashes(file):
    first = video_request(EVERY_CONDITION, CONDITIONS["shuffled"], make_doc(file))
    again = video_request(EVERY_CONDITION, CONDITIONS["shuffled"], make_doc(file))
    assert first is not again and first == again and first.key == again.key and hash(first) == hash(again)
    assert len({first, again}) == 1


def test_two_questions_about_one_video_share_the_key(file):
    one = video_request(EVERY_CONDITION, CONDITIONS["black"], make_doc(file, question_id="q1", answer="A"))
    two = video_request(EVERY_CONDITION, CONDITIONS["black"], make_doc(file, question_id="q2", answer="C"))
    assert one == two


def test_the_key_changes_with_the_condition_the_video_and_the_sampling(file, tmp_path, monkeypatch):
    other = tmp_path / "v2.mp4"
    other.write_bytes(b"x")
    base = video_request(EVERY_CONDITION, CONDITIONS["ordered"], make_doc(file))
    assert base != video_request(EVERY_CONDITION, CONDITIONS["reversed"], make_doc(file))
    assert base != video_request(EVERY_CONDITION, CONDITIONS["ordered"], make_doc(other))
    assert base != video_request(EVERY_CONDITION, CONDITIONS["ordered"], make_doc(file, videoID="v1b"))
    monkeypatch.setenv(SAMPLING_ENV, "frames:8")
    eight = video_request(EVERY_CONDITION, CONDITIONS["ordered"], make_doc(file))
    monkeypatch.setenv(SAMPLING_ENV, "frames:16")
    assert len({base, eight, video_request(EVERY_CONDITION, CONDITIONS["ordered"], make_doc(file))}) == 3


def test_oracle_keys_follow_the_frame_times_not_the_order_outfits_are_listed_in(file):
    def oracle(windows):
        return video_request(EVERY_CONDITION, CONDITIONS["oracle"], make_doc(file, outfit_windows=windows))

    a, b = [[0, 2]], [[6, 8]]
    assert oracle([a, b]) == oracle([b, a])  # times (1.0, 7.0) either way
    assert oracle([a, b]) != oracle([a, [[6, 10]]])  # (1.0, 8.0)


def test_a_request_equals_only_another_request():
    request = VideoRequest(CONDITIONS["black"], "/v.mp4", "v")
    assert request == VideoRequest(CONDITIONS["black"], "/v.mp4", "v")
    assert request != request.key and request != "black"
    assert {request: 1}[VideoRequest(CONDITIONS["black"], "/v.mp4", "v")] == 1  # hashable, though params are not


# -- video_request's errors ----------------------------------------------------------------------------------


def test_a_missing_video_is_a_source_error_that_names_the_file(tmp_path):
    gone = tmp_path / "gone.mp4"
    with pytest.raises(RequestError, match=r"gone\.mp4 does not exist") as info:
        video_request(BENCHMARKS["vdgsynth"], CONDITIONS["black"], make_doc(gone))
    error = info.value
    assert (error.stage, error.source) == ("source", "")
    assert isinstance(error.cause, VideoUnavailable) and error.__cause__ is error.cause
    assert error.describe() == f"VideoUnavailable: video path:{gone} does not exist"


@pytest.mark.parametrize(
    ("doc", "cause"),
    [
        ({"question_id": "q", "videoID": "v"}, KeyError),  # no video field
        (None, TypeError),  # not a doc at all
    ],
)
def test_a_doc_without_a_video_is_a_source_error(doc, cause):
    with pytest.raises(RequestError) as info:
        video_request(BENCHMARKS["vdgsynth"], CONDITIONS["orig"], doc)
    assert info.value.stage == "source" and type(info.value.cause) is cause


def test_a_doc_without_a_video_id_is_a_source_error(file):
    doc = make_doc(file)
    del doc["videoID"]
    with pytest.raises(RequestError, match="videoID") as info:
        video_request(BENCHMARKS["vdgsynth"], CONDITIONS["orig"], doc)
    assert info.value.stage == "source" and info.value.describe() == "KeyError: 'videoID'"


def test_a_folder_without_frame_folder_support_is_a_source_error(tmp_path):
    (tmp_path / "frames").mkdir()
    with pytest.raises(RequestError, match="is a folder, not a video") as info:
        video_request(BENCHMARKS["vdgsynth"], CONDITIONS["orig"], make_doc(tmp_path / "frames"))
    assert info.value.stage == "source"


def test_an_oracle_question_without_windows_is_a_params_error_for_its_source(file):
    with pytest.raises(RequestError, match="question q1: has no outfit windows") as info:
        video_request(EVERY_CONDITION, CONDITIONS["oracle"], make_doc(file))
    error = info.value
    assert (error.stage, error.source) == ("params", str(file))
    assert error.describe().startswith("ValueError: question q1: has no outfit windows")


def test_a_malformed_sampling_setting_is_a_params_error_of_the_held_conditions_only(file, monkeypatch):
    monkeypatch.setenv(SAMPLING_ENV, "frames:2.5")
    with pytest.raises(RequestError, match="VDG_SAMPLING='frames:2.5'") as info:
        video_request(EVERY_CONDITION, CONDITIONS["reversed"], make_doc(file))
    assert (info.value.stage, info.value.source) == ("params", str(file))
    assert video_request(EVERY_CONDITION, CONDITIONS["orig"], make_doc(file)).bound == ()


def test_a_rate_setting_on_an_unreadable_video_is_a_params_error(file, monkeypatch):
    monkeypatch.setenv(SAMPLING_ENV, "fps:1")
    with pytest.raises(RequestError) as info:
        video_request(EVERY_CONDITION, CONDITIONS["single"], make_doc(file))
    assert info.value.stage == "params" and isinstance(info.value.cause, VideoDecodeError)
    assert info.value.describe().startswith("VideoDecodeError: ")
