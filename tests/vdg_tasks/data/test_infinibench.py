"""Tests for ``vdg_tasks.data.infinibench``: every accepted annotation layout, the doc schema, errors, srt text.

The fixture ``tests/data/infinibench/Global_appreance.json`` is hand-written in the 2024 layout with
three records: (0) options a list, IDK last, ``temporal_grounding`` a dict with unsorted intervals,
lowercase character; (1) options a Python-literal string, ``answer_idx`` a string, show given by its
full name and no ``video_path_mp4``, ``temporal_grounding`` a list; (2) five options with two plain
strings and "I Don't Know" in the middle, no ``temporal_grounding``, a given ``question_id`` and no
video on disk.
"""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from vdg_tasks.data.infinibench import (
    find_annotation_files,
    load_questions,
    parse_srt,
    prepare,
    probe_duration,
    write_questions,
)
from vdg_tasks.data.roster import load_roster

FIXTURE = Path(__file__).parents[2] / "data" / "infinibench" / "Global_appreance.json"
PLACEHOLDER = Path(__file__).parents[3] / "vdg_tasks" / "assets" / "placeholder-64x64-128f.mp4"

FIELDS = [
    "question_id",
    "videoID",
    "video_id",
    "video",
    "task_type",
    "duration",
    "duration_s",
    "question",
    "options",
    "answer",
    "n_options",
    "character",
    "show",
    "show_key",
    "season",
    "episode",
    "title",
    "subtitles",
    "outfits",
    "outfit_windows",
    "idk_letter",
    "cast",
]

SRT = (
    "1\n00:00:01,000 --> 00:00:02,500\n<i>Sheldon:</i> Bazinga.\n\n"
    '2\n00:00:03,000 --> 00:00:04,000\n{\\an8}<font color="#ffff00">Penny:</font> Hi!\nSecond line &amp; more\n\n'
)


def _mp4(path: Path, n_frames: int = 16, fps: int = 8) -> Path:
    """A tiny real H.264 mp4 (``n_frames / fps`` seconds)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), mode="w", format="mp4") as c:
        s = c.add_stream("libx264", rate=Fraction(fps))
        s.width, s.height, s.pix_fmt = 32, 32, "yuv420p"
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(np.full((32, 32, 3), 8 * i, dtype=np.uint8), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, fps)
            c.mux(s.encode(frame))
        c.mux(s.encode(None))
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``TV_shows/{videos,subtitles}`` with bbt s1e1 (a 2 s mp4 + srt); friends s2e5 is absent."""
    root = tmp_path / "TV_shows"
    _mp4(root / "videos" / "bbt" / "season_1" / "episode_1.mp4")
    srt = root / "subtitles" / "bbt" / "season_1" / "episode_1.srt"
    srt.parent.mkdir(parents=True)
    srt.write_text(SRT, encoding="utf-8")
    return root


def _records() -> list[dict]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_fixture_2024_layout(tree: Path) -> None:
    docs = load_questions(FIXTURE, tree / "videos")
    assert len(docs) == 3
    for d in docs:
        assert list(d) == FIELDS
    sheldon, penny, rachel = docs
    video = str((tree / "videos" / "bbt" / "season_1" / "episode_1.mp4").resolve())
    srt = str((tree / "subtitles" / "bbt" / "season_1" / "episode_1.srt").resolve())
    bbt_cast = {
        "Sheldon": "male",
        "Leonard": "male",
        "Howard": "male",
        "Raj": "male",
        "Penny": "female",
        "Bernadette": "female",
        "Amy": "female",
    }

    assert sheldon == {
        "question_id": "bbt_s1e1_sheldon",
        "videoID": "bbt/season_1/episode_1",
        "video_id": "bbt/season_1/episode_1",
        "video": video,
        "task_type": "global_appearance",
        "duration": "long",
        "duration_s": pytest.approx(2.0, abs=1e-6),
        "question": "Choose the correct option for the following question: What is the correct sequence of "
        "changing the outfits for Sheldon in this episode?",
        "options": [
            "A. green lantern t-shirt; red flash t-shirt; blue bathrobe",
            "B. red flash t-shirt; blue bathrobe; green lantern t-shirt",
            "C. blue bathrobe; green lantern t-shirt; red flash t-shirt",
            "D. red flash t-shirt; green lantern t-shirt; blue bathrobe",
            "E. blue bathrobe; red flash t-shirt; green lantern t-shirt",
            "F. I don't know",
        ],
        "answer": "C",
        "n_options": 6,
        "character": "Sheldon",
        "show": "bbt",
        "show_key": "bbt",
        "season": 1,
        "episode": 1,
        "title": "bbt, season 1, episode 1",
        "subtitles": srt,
        "outfits": ["blue bathrobe", "green lantern t-shirt", "red flash t-shirt"],
        "outfit_windows": [[[10.0, 42.0]], [[120.0, 150.0], [300.0, 320.5]], [[900.0, 960.0]]],
        "idk_letter": "F",
        "cast": bbt_cast,
    }

    # options as a Python-literal string; no video_path_mp4: found under <root>/bbt/season_1 via show_key
    assert penny["question_id"] == "bbt_s1e1_penny"
    assert penny["show"] == "The Big Bang Theory" and penny["show_key"] == "bbt"
    assert penny["title"] == "The Big Bang Theory, season 1, episode 1"
    assert penny["video"] == video and penny["subtitles"] == srt
    assert penny["options"][1] == "B. waitress uniform; pink tank top"
    assert penny["options"][5] == "F. I don't know"
    assert penny["answer"] == "B" and penny["outfits"] == ["waitress uniform", "pink tank top"]
    assert penny["outfit_windows"] == [[[700.0, 760.0]], [[55.5, 80.0]]]
    assert penny["cast"] == bbt_cast

    # five options, IDK in the middle, strings kept, no grounding, given id, no video on disk
    assert rachel["question_id"] == "friends_q7"
    assert rachel["options"] == [
        "A. wedding dress; grey sweater",
        "B. grey sweater; wedding dress",
        "C. I Don't Know",
        "D. wedding dress; grey sweater; green apron",
        "E. green apron; wedding dress; grey sweater",
    ]
    assert (rachel["answer"], rachel["n_options"], rachel["idk_letter"]) == ("E", 5, "C")
    assert rachel["character"] == "Rachel"
    assert rachel["outfits"] == ["green apron", "wedding dress", "grey sweater"]
    assert rachel["outfit_windows"] == [[], [], []]
    assert rachel["video"] == str((tree / "videos" / "friends" / "season_2" / "episode_5.mp4").resolve())
    assert rachel["duration_s"] is None and rachel["subtitles"] == ""
    assert rachel["videoID"] == "friends/season_2/episode_5"
    assert list(rachel["cast"]) == ["Ross", "Chandler", "Joey", "Rachel", "Monica", "Phoebe"]


def test_dict_of_video_layout_and_roster(tree: Path, tmp_path: Path) -> None:
    recs = _records()
    by_video: dict[str, list[dict]] = {}
    for r in recs:
        by_video.setdefault(r.get("video_path_mp4", "/bbt/season_1/episode_1.mp4"), []).append(r)
    f = tmp_path / "by_video.json"
    f.write_text(json.dumps(by_video), encoding="utf-8")
    roster_file = tmp_path / "roster.yaml"
    roster_file.write_text("Friends:\n  Rachel: female\n  Gunther: male\n", encoding="utf-8")
    docs = load_questions(f, tree / "videos", roster=load_roster(roster_file))
    assert [d["question_id"] for d in docs] == ["bbt_s1e1_sheldon", "bbt_s1e1_penny", "friends_q7"]
    assert docs[2]["cast"] == {"Rachel": "female", "Gunther": "male"}
    assert [d["answer"] for d in docs] == ["C", "B", "E"]


def test_jsonl_and_generated_ids_unique(tree: Path, tmp_path: Path) -> None:
    recs = _records()
    twin = dict(recs[0], answer_idx=0)  # a second Sheldon question of the same episode
    f = tmp_path / "questions.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [recs[0], twin, recs[2]]) + "\n\n", encoding="utf-8")
    docs = load_questions(f, tree / "videos")
    assert [d["question_id"] for d in docs] == ["bbt_s1e1_sheldon", "bbt_s1e1_sheldon_2", "friends_q7"]
    assert [d["answer"] for d in docs] == ["C", "A", "E"]
    # JSON lines also recognised by content when the suffix says .json
    g = tmp_path / "lines.json"
    g.write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    assert [d["question_id"] for d in load_questions(g, tree / "videos")] == [d["question_id"] for d in docs]


def test_folder_2025_layout_and_split(tree: Path, tmp_path: Path) -> None:
    recs = _records()
    ann = tmp_path / "Infinibench"
    for split, rs in (("validation", recs[:2]), ("test", [recs[2]])):
        d = ann / split / "skills_json"
        d.mkdir(parents=True)
        (d / "global_appearance.json").write_text(json.dumps(rs), encoding="utf-8")
        (d / "summarization.json").write_text('[{"question": "not this skill"}]', encoding="utf-8")
    (ann / "validation.csv").write_text("a,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"splits \['test', 'validation'\]; pass split="):
        load_questions(ann, tree / "videos")
    with pytest.raises(ValueError, match="has no split 'train'"):
        load_questions(ann, tree / "videos", split="train")
    assert find_annotation_files(ann, "validation") == [ann / "validation" / "skills_json" / "global_appearance.json"]
    docs = load_questions(ann, tree / "videos", split="validation")
    assert [d["question_id"] for d in docs] == ["bbt_s1e1_sheldon", "bbt_s1e1_penny"]


def test_folder_any_json_prefers_appearance_files(tree: Path, tmp_path: Path) -> None:
    ann = tmp_path / "Benchmark_annotations"
    ann.mkdir()
    shutil.copy(FIXTURE, ann / "Global_appreance.json")
    (ann / "Character_actions.json").write_text('[{"question": "other skill"}]', encoding="utf-8")
    assert find_annotation_files(ann) == [ann / "Global_appreance.json"]
    assert len(load_questions(ann, tree / "videos")) == 3
    # no file names the skill: all files are read
    other = tmp_path / "plain"
    other.mkdir()
    (other / "part1.json").write_text(json.dumps(_records()[:1]), encoding="utf-8")
    (other / "part2.jsonl").write_text(json.dumps(_records()[2]) + "\n", encoding="utf-8")
    assert [d["question_id"] for d in load_questions(other, tree / "videos")] == ["bbt_s1e1_sheldon", "friends_q7"]


def test_skill_name_and_split_fields_filter(tree: Path, tmp_path: Path) -> None:
    recs = _records()
    tagged = [
        dict(recs[0], skill_name="global_appearance", split="validation"),
        dict(recs[1], skill_name="summarization"),
        dict(recs[2], skill_name="global_appearance", split="test"),
    ]
    f = tmp_path / "mixed.json"
    f.write_text(json.dumps(tagged), encoding="utf-8")
    assert [d["question_id"] for d in load_questions(f, tree / "videos")] == ["bbt_s1e1_sheldon", "friends_q7"]
    assert [d["question_id"] for d in load_questions(f, tree / "videos", split="validation")] == ["bbt_s1e1_sheldon"]
    only_other = tmp_path / "other.json"
    only_other.write_text(json.dumps([tagged[1]]), encoding="utf-8")
    with pytest.raises(ValueError, match="no global-appearance questions"):
        load_questions(only_other, tree / "videos")


def test_answer_letter_and_messy_fields(tree: Path, tmp_path: Path) -> None:
    r = _records()[0]
    del r["answer_idx"]
    r.update(
        answer="d",
        season="Season 01",
        episode=1,
        options=[f"{'ABCDEF'[i]}. " + "; ".join(o) if isinstance(o, list) else o for i, o in enumerate(r["options"])],
        temporal_grounding={"Blue Bathrobe ": [10, 42]},  # one bare interval, key differing in case/space
    )
    f = tmp_path / "a.json"
    f.write_text(json.dumps([r]), encoding="utf-8")
    (d,) = load_questions(f, tree / "videos")
    assert d["answer"] == "D" and d["season"] == 1
    assert d["options"][3] == "D. red flash t-shirt; green lantern t-shirt; blue bathrobe"  # no doubled "D. D."
    assert d["outfits"] == ["red flash t-shirt", "green lantern t-shirt", "blue bathrobe"]
    assert d["outfit_windows"] == [[], [], [[10.0, 42.0]]]
    # answer as an index agrees with answer_idx
    r2 = dict(_records()[0], answer=2)
    f.write_text(json.dumps([r2]), encoding="utf-8")
    assert load_questions(f, tree / "videos")[0]["answer"] == "C"


def _bad(tmp_path: Path, tree: Path, change: dict, drop: tuple[str, ...] = (), index: int = 2) -> str:
    recs = _records()
    recs[index].update(change)
    for k in drop:
        del recs[index][k]
    f = tmp_path / "annotations.json"
    f.write_text(json.dumps(recs), encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_questions(f, tree / "videos")
    return str(info.value)


@pytest.mark.parametrize(
    ("change", "drop", "expected"),
    [
        (
            {"answer_idx": 7},
            (),
            "annotations.json record 2 (question friends_q7): answer_idx 7 is not an index into its 5 options",
        ),
        ({"answer_idx": "x"}, (), "record 2 (question friends_q7): answer_idx 'x' is not an integer"),
        (
            {"options": [["a", "b"], "I don't know"]},
            (),
            "record 2 (question friends_q7): options has 2 entries; expected 3 to 7",
        ),
        ({"options": [["a"]] * 8, "answer_idx": 0}, (), "options has 8 entries; expected 3 to 7"),
        ({"options": "[['a', 'b'], "}, (), "options is a string that is not a Python literal"),
        ({"options": "__import__('os').system('true')"}, (), "options is a string that is not a Python literal"),
        ({}, ("question",), "record 2 (question friends_q7): question is missing or empty"),
        ({}, ("answer_idx",), "answer_idx is missing (and there is no 'answer'); the InfiniBench test split hides"),
        ({"answer": "A"}, (), "answer_idx and answer disagree"),
        ({"answer": "G"}, (), "answer 'G' is not an index into its 5 options"),
        ({"answer_idx": 2}, (), 'answer C is the "I don\'t know" option'),
        ({"season": "pilot"}, (), "season 'pilot' has no number"),
        ({"temporal_grounding": [[[1, 2]]]}, (), "temporal_grounding is a list of 1 entries but the answer has 3"),
        ({"temporal_grounding": {"green apron": [[5, 2]]}}, (), "not an interval with 0 <= start <= end"),
        ({"options": [["a", 3], "b", "c"], "answer_idx": 1}, (), "options[0] has outfits that are not non-empty"),
    ],
)
def test_bad_records(tmp_path: Path, tree: Path, change: dict, drop: tuple[str, ...], expected: str) -> None:
    assert expected in _bad(tmp_path, tree, change, drop)


def test_bad_record_without_id_and_missing_show(tmp_path: Path, tree: Path) -> None:
    msg = _bad(tmp_path, tree, {}, ("show",), index=1)
    assert "annotations.json record 1: show is missing and video_path_mp4 does not name it" in msg
    msg = _bad(tmp_path, tree, {"character": None, "question": "Which outfits?"}, index=0)
    assert "record 0: character is missing" in msg


def test_duplicate_given_ids_and_bad_files(tmp_path: Path, tree: Path) -> None:
    recs = _records()
    recs[0]["question_id"] = "friends_q7"
    f = tmp_path / "dup.json"
    f.write_text(json.dumps(recs), encoding="utf-8")
    with pytest.raises(ValueError, match=r"record 2 \(question friends_q7\): question_id 'friends_q7' repeats"):
        load_questions(f, tree / "videos")
    f.write_text('{"a": 1', encoding="utf-8")
    with pytest.raises(ValueError, match="dup.json: invalid JSON"):
        load_questions(f, tree / "videos")
    f.write_text("3", encoding="utf-8")
    with pytest.raises(ValueError, match="expected a list of records"):
        load_questions(f, tree / "videos")
    f.write_text('[["not", "a", "record"]]', encoding="utf-8")
    with pytest.raises(ValueError, match="dup.json record 0: is a list, not a record"):
        load_questions(f, tree / "videos")
    g = tmp_path / "bad.jsonl"
    g.write_text(json.dumps(recs[1]) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl line 2: invalid JSON"):
        load_questions(g, tree / "videos")
    with pytest.raises(FileNotFoundError):
        load_questions(tmp_path / "nope.json", tree / "videos")


def test_subtitles_root_and_video_variants(tmp_path: Path) -> None:
    # flat layout: <root>/<Show Name>/season_01/episode_01.mp4, subtitles next to the videos
    root = tmp_path / "media"
    mp4 = root / "The Big Bang Theory" / "season_01" / "episode_01.mp4"
    mp4.parent.mkdir(parents=True)
    shutil.copy(PLACEHOLDER, mp4)
    mp4.with_suffix(".srt").write_text(SRT, encoding="utf-8")
    (d,) = load_questions(_one(tmp_path, _records()[1]), root)
    assert d["video"] == str(mp4.resolve())
    assert d["duration_s"] == pytest.approx(8.0, abs=1e-6)  # the placeholder: 128 frames at 16 fps
    assert d["subtitles"] == str(mp4.with_suffix(".srt").resolve())
    # explicit subtitles_root
    subs = tmp_path / "subs" / "bbt" / "season_1"
    subs.mkdir(parents=True)
    (subs / "episode_1.srt").write_text(SRT, encoding="utf-8")
    (d,) = load_questions(_one(tmp_path, _records()[0]), tmp_path / "elsewhere", subtitles_root=tmp_path / "subs")
    assert d["subtitles"] == str((subs / "episode_1.srt").resolve())
    assert d["video"] == str((tmp_path / "elsewhere" / "bbt" / "season_1" / "episode_1.mp4").resolve())
    assert d["duration_s"] is None


def _one(tmp_path: Path, rec: dict) -> Path:
    f = tmp_path / "one.json"
    f.write_text(json.dumps([rec]), encoding="utf-8")
    return f


def test_probe_duration(tmp_path: Path) -> None:
    assert probe_duration(_mp4(tmp_path / "a.mp4", n_frames=8, fps=8)) == pytest.approx(1.0, abs=1e-6)
    assert probe_duration(PLACEHOLDER) == pytest.approx(8.0, abs=1e-6)
    assert probe_duration(tmp_path / "missing.mp4") is None
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video" * 10)
    assert probe_duration(junk) is None


def test_write_and_prepare(tree: Path, tmp_path: Path) -> None:
    docs = load_questions(FIXTURE, tree / "videos")
    out = write_questions(docs, tmp_path / "out" / "q.jsonl")
    assert out == (tmp_path / "out" / "q.jsonl").resolve()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in lines] == json.loads(json.dumps(docs))
    assert sorted(p.name for p in out.parent.iterdir()) == ["q.jsonl"]  # no temporary file left
    roster_file = tmp_path / "r.json"
    roster_file.write_text('{"bbt": {"Sheldon": "male"}}', encoding="utf-8")
    path, n = prepare(FIXTURE, tree / "videos", tmp_path / "out", roster_file=roster_file)
    assert (path, n) == ((tmp_path / "out" / "questions.jsonl").resolve(), 3)
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert first["cast"] == {"Sheldon": "male"}


def test_write_questions_failure_keeps_old_file(tmp_path: Path) -> None:
    out = tmp_path / "q.jsonl"
    out.write_text("old\n", encoding="utf-8")
    with pytest.raises(TypeError):
        write_questions([{"ok": 1}, {"bad": object()}], out)
    assert out.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["q.jsonl"]


def test_parse_srt(tmp_path: Path) -> None:
    f = tmp_path / "a.srt"
    f.write_bytes(("\ufeff" + SRT + "3\n00:00:05,000 --> 00:00:06,000\n42\n").replace("\n", "\r\n").encode("utf-8"))
    expected = "Sheldon: Bazinga.\nPenny: Hi!\nSecond line & more\n42"
    assert parse_srt(f) == expected
    assert parse_srt(str(f), max_chars=len(expected)) == expected
    assert parse_srt(f, max_chars=len("Sheldon: Bazinga.\nPenny: Hi!")) == "Sheldon: Bazinga.\nPenny: Hi!"
    assert parse_srt(f, max_chars=len("Sheldon: Bazinga.\nPenny: Hi!") - 1) == "Sheldon: Bazinga."
    assert parse_srt(f, max_chars=5) == ""
    assert parse_srt("") == ""
    with pytest.raises(ValueError, match="max_chars"):
        parse_srt(f, max_chars=-1)
    latin = tmp_path / "b.srt"
    latin.write_bytes("1\r00:00:01,000 --> 00:00:02,000\rCaf\xe9 ol\xe9\r".encode("latin-1"))
    assert parse_srt(latin) == "Café olé"


def test_no_cross_show_fallback(tmp_path: Path) -> None:
    """A bare ``season_N/episode_M.mp4`` under the root (one show's folder) is never used for another show."""
    root = tmp_path / "bbt_only"
    (root / "season_2").mkdir(parents=True)
    shutil.copy(PLACEHOLDER, root / "season_2" / "episode_5.mp4")
    shutil.copy(PLACEHOLDER, root / "episode_5.mp4")
    (d,) = load_questions(_one(tmp_path, _records()[2]), root)
    assert d["video"] == str((root / "friends" / "season_2" / "episode_5.mp4").resolve())
    assert d["duration_s"] is None
