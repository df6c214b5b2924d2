"""vdg's leaderboard in OpenVLM.json's layout, fresh and merged into a file holding other results
(postprocess.openvlm)."""

from __future__ import annotations

import json

import pytest

from postprocess.api import run_analysis
from postprocess.leaderboard import DATASET_MAP_HEADER, MergeError, read_name_map
from postprocess.openvlm import MAX_DEPTH, OPENVLM_KEYS, OWNED_KEY, merge_openvlm, openvlm_entries, write_openvlm
from postprocess.settings import ReportSettings
from tests.helpers.frames import make_frame

FAST = ReportSettings(n_resamples=200, stability_resamples=50)
N = 40  # above min_stratum (30): the Overall row gets a CI and a tier

#: A file in OpenVLM.json's layout, with what a merge must keep as written: numbers whose text json.dumps would
#: change (65.30, 1e2, -0.0, 7.0), unicode, nested lists and objects, a model vdg has no data for.
THEIRS = """{
  "time": "240808123456",
  "results": {
    "GPT-4o (0513, detail-high)": {
      "META": {"Method": ["GPT-4o", "https://openai.com/index/hello-gpt-4o/"], "Parameters": "", "OpenSource": "No",
               "Verified": "Yes", "Org": "OpenAI", "Time": "2024/05/13"},
      "MMBench_TEST_EN": {"Overall": 83.40, "AR": 1e2, "Notes": "naïve ✓"},
      "Video-MME": {"Overall": 71.9, "short": 80.0, "medium": 7.0, "long": -0.0, "split": [1, 2.50, {"x": null}]}
    },
    "Qwen2-VL-7B": {
      "META": {"Method": ["Qwen2-VL-7B", "https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct"], "Parameters": "8B"},
      "MMMU_VAL": {"Overall": 54.1}
    },
    "InternVL2-8B": {"META": {"Method": ["InternVL2-8B", ""]}, "Video-MME": {"Overall": 54.0}}
  }
}
"""


def _frame(model: str, orig_right: int, black_right: int, blind_right: int):
    """N questions (task types T1 for the first half, T2 for the rest); the first k right under each condition."""
    records = []
    for i in range(N):
        task = "T1" if i < N // 2 else "T2"
        qid = f"q{i}-1"
        records += [
            (model, "orig", qid, task, i < orig_right),
            (model, "black", qid, task, i < black_right),
            (model, "blind", qid, task, i < blind_right),
        ]
    return make_frame(records, benchmark="videomme")


@pytest.fixture(scope="module")
def tables():
    import pandas as pd

    frame = pd.concat([_frame("gpt4o", 30, 10, 8), _frame("unlisted", 20, 20, 20)], ignore_index=True)
    return {name: run_analysis(name, frame, FAST) for name in ("vdg", "accuracy", "tiers")}


def _raw(text: str):
    """The JSON with every object as its (key, value) pairs in order and every number as its text."""
    return json.loads(text, object_pairs_hook=list, parse_float=str, parse_int=str, parse_constant=str)


def test_the_entries_hold_accuracies_and_the_vdg_columns_in_percent(tables):
    entry = openvlm_entries(tables)["gpt4o"]["videomme"]
    # counted from the rows above: orig 30/40 right, black 10/40, blind 8/40; T1 (first 20) all right at orig
    assert entry["Overall"] == pytest.approx(100 * 30 / 40)
    assert entry["T1"] == pytest.approx(100.0) and entry["T2"] == pytest.approx(100 * 10 / 20)
    assert entry["VDG"] == pytest.approx(100 * (30 - 10) / 40)
    assert entry["VDG Black"] == pytest.approx(100 * 10 / 40)
    assert entry["VDG Blind"] == pytest.approx(100 * 8 / 40)
    assert entry["VDG n"] == N
    low, high = entry["VDG CI"]
    assert low < entry["VDG"] < high
    assert entry["VDG tier"]  # a tier is given above min_stratum questions
    assert list(entry)[:3] == ["Overall", "T1", "T2"] and set(OPENVLM_KEYS) <= set(entry)


def test_a_fresh_file_is_in_the_layout_and_names_what_vdg_owns(tables):
    data = json.loads(
        write_openvlm(tables, time="20261201", names={"GPT-4o": "gpt4o"}, datasets={"Video-MME": "videomme"})
    )
    assert data["time"] == "20261201" and list(data["results"]) == ["GPT-4o", "unlisted"]
    block = data["results"]["GPT-4o"]
    assert block["META"] == {"Method": ["GPT-4o", ""]}
    entry = block["Video-MME"]
    assert entry[OWNED_KEY] == [k for k in entry if k != OWNED_KEY]


def test_the_merge_keeps_every_foreign_key_and_value_byte_for_byte(tables):
    merged = merge_openvlm(
        THEIRS,
        tables,
        names={"GPT-4o (0513, detail-high)": "gpt4o"},
        datasets={"Video-MME": "videomme"},
    )
    before, after = _raw(THEIRS), _raw(merged.text)
    assert after[0] == before[0]  # "time" as it was
    models_before, models_after = before[1][1], after[1][1]
    assert [m for m, _ in models_after] == [m for m, _ in models_before]  # no model added, none moved
    for (model, block), (_, merged_block) in zip(models_before, models_after, strict=True):
        if model != "GPT-4o (0513, detail-high)":
            assert merged_block == block  # a model vdg has no data for: untouched
            continue
        assert [d for d, _ in merged_block] == [d for d, _ in block]
        for (dataset, entry), (_, merged_entry) in zip(block, merged_block, strict=True):
            if dataset != "Video-MME":
                assert merged_entry == entry  # META and the other datasets: untouched
                continue
            # their keys first, as written (numbers' text included), then vdg's keys and the list of them
            assert merged_entry[: len(entry)] == entry
            added = [k for k, _ in merged_entry[len(entry) :]]
            assert added == [*OPENVLM_KEYS, OWNED_KEY]
    for text in ('"Overall": 83.40', '"AR": 1e2', '"long": -0.0', '"medium": 7.0', "2.50", '"naïve ✓"'):
        assert text in merged.text
    assert merged.unmatched_theirs == ["Qwen2-VL-7B", "InternVL2-8B"]
    assert merged.unmatched_ours == ["unlisted"]


def test_a_dataset_the_model_lacks_is_added_whole(tables):
    merged = merge_openvlm(THEIRS, tables, names={"GPT-4o (0513, detail-high)": "gpt4o"})
    entry = json.loads(merged.text)["results"]["GPT-4o (0513, detail-high)"]["videomme"]
    assert entry["Overall"] == pytest.approx(75.0)  # 30 of 40 right at orig
    assert entry[OWNED_KEY] == [k for k in entry if k != OWNED_KEY]


def test_merging_again_replaces_only_what_vdg_wrote(tables):
    names = {"GPT-4o (0513, detail-high)": "gpt4o"}
    once = merge_openvlm(THEIRS, tables, names=names, datasets={"Video-MME": "videomme"}).text
    twice = merge_openvlm(once, tables, names=names, datasets={"Video-MME": "videomme"}).text
    assert twice == once
    # a vdg entry added whole (no dataset map: "videomme") is replaced whole on the next merge too
    whole = merge_openvlm(THEIRS, tables, names=names).text
    assert merge_openvlm(whole, tables, names=names).text == whole


def test_a_foreign_key_with_a_vdg_name_is_refused(tables):
    theirs = json.loads(THEIRS)
    theirs["results"]["InternVL2-8B"]["Video-MME"]["VDG"] = 12.5
    with pytest.raises(MergeError, match=r"results\['InternVL2-8B'\]\['Video-MME'\] already has 'VDG'"):
        merge_openvlm(json.dumps(theirs), tables, names={"InternVL2-8B": "gpt4o"}, datasets={"Video-MME": "videomme"})


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[1, 2]", 'no "results" object'),
        ('{"results": {"a": {"x": 1, "x": 2}}}', "names key 'x' twice"),
        ("{not json", "not JSON"),
        ('{"results": {"gpt4o": {"videomme": [1]}}}', r"\['videomme'\] is not an object"),
        ('{"results": {"gpt4o": {"videomme": {"VDG keys": "VDG"}}}}', "is not a list of key names"),
    ],
)
def test_a_file_out_of_the_layout_is_refused(tables, text, match):
    with pytest.raises(MergeError, match=match):
        merge_openvlm(text, tables)


def test_two_of_their_models_reaching_one_vdg_label_are_refused(tables):
    with pytest.raises(MergeError, match="both name vdg model 'gpt4o'"):
        merge_openvlm(THEIRS, tables, names={"Qwen2-VL-7B": "gpt4o", "InternVL2-8B": "gpt4o"})


def test_the_merge_reads_a_path(tables, tmp_path):
    path = tmp_path / "OpenVLM.json"
    path.write_text(THEIRS, encoding="utf-8")
    assert merge_openvlm(path, tables).text == merge_openvlm(THEIRS, tables).text


def test_a_dataset_map_is_read_with_its_own_header(tmp_path):
    path = tmp_path / "datasets.csv"
    path.write_text(",".join(DATASET_MAP_HEADER) + "\nVideo-MME,videomme\n", encoding="utf-8")
    assert read_name_map(path, DATASET_MAP_HEADER) == {"Video-MME": "videomme"}
    with pytest.raises(ValueError, match="the header must name their_name,vdg_model"):
        read_name_map(path)


def _source_of(call) -> tuple[str, str]:
    with pytest.raises(MergeError) as caught:
        call()
    return caught.value.source, str(caught.value)


def test_a_model_name_given_to_one_label_and_kept_by_another_is_refused(tables):
    # gpt4o written as "unlisted" while vdg's "unlisted" keeps its name: one model, the other's data lost
    source, message = _source_of(lambda: write_openvlm(tables, time="t", names={"unlisted": "gpt4o"}))
    assert source == "names"
    assert "gives vdg's model 'gpt4o' the name 'unlisted', which vdg's model 'unlisted' keeps" in message
    # a swap names both: two models, each with its own VDG (gpt4o: (30 - 10) / 40, unlisted: 20 - 20)
    swapped = json.loads(write_openvlm(tables, time="t", names={"unlisted": "gpt4o", "gpt4o": "unlisted"}))
    assert sorted(swapped["results"]) == ["gpt4o", "unlisted"]
    assert swapped["results"]["unlisted"]["videomme"]["VDG"] == pytest.approx(100 * (30 - 10) / 40)
    assert swapped["results"]["gpt4o"]["videomme"]["VDG"] == pytest.approx(0.0)


@pytest.fixture(scope="module")
def two_benchmarks():
    import pandas as pd

    frames = [_frame("gpt4o", 30, 10, 8)]
    mvbench = _frame("gpt4o", 12, 12, 12)
    mvbench["benchmark"] = "mvbench"
    frame = pd.concat([*frames, mvbench], ignore_index=True)
    return {name: run_analysis(name, frame, FAST) for name in ("vdg", "accuracy", "tiers")}


def test_a_dataset_name_given_to_one_benchmark_and_kept_by_another_is_refused(two_benchmarks):
    datasets = {"mvbench": "videomme"}  # videomme written as "mvbench", where mvbench's own entry goes
    expected = "gives vdg's benchmark 'videomme' the name 'mvbench', which vdg's benchmark 'mvbench' keeps"
    for call in (
        lambda: openvlm_entries(two_benchmarks, datasets=datasets),
        lambda: write_openvlm(two_benchmarks, time="t", datasets=datasets),
        lambda: merge_openvlm('{"results": {"gpt4o": {}}}', two_benchmarks, datasets=datasets),
    ):
        source, message = _source_of(call)
        assert source == "names" and expected in message
    # named apart, each benchmark keeps its own numbers: orig 30/40 and 12/40 right
    entries = openvlm_entries(two_benchmarks, datasets={"Video-MME": "videomme", "MVBench": "mvbench"})["gpt4o"]
    assert entries["Video-MME"]["Overall"] == pytest.approx(75.0) and entries["MVBench"]["Overall"] == 30.0


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,  # past the parser's own limit
        '{"results": {"x": {"d": ' + "[" * 900 + "]" * 900 + "}}}",  # parsed, but past MAX_DEPTH
    ],
)
def test_a_file_nested_too_deeply_is_refused(tables, text):
    source, message = _source_of(lambda: merge_openvlm(text, tables))
    assert source == "theirs" and f"nested too deeply (more than {MAX_DEPTH} levels" in message


def test_a_file_nested_up_to_the_limit_is_kept(tables):
    deep = "[" * (MAX_DEPTH - 3) + "1" + "]" * (MAX_DEPTH - 3)  # inside {"results": {"x": {"d": ...}}}
    merged = merge_openvlm('{"results": {"x": {"d": ' + deep + "}}}", tables)
    assert json.loads(merged.text)["results"]["x"]["d"] == json.loads(deep)
