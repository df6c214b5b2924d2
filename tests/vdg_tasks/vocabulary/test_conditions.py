import pytest

from vdg_tasks.vocabulary.conditions import (
    CONDITIONS,
    DEFAULT_KEY_FRAMES,
    LADDER,
    LADDER_DELTAS,
    LADDER_PROBES,
    Condition,
    crf,
    families,
    get_condition,
    protocol_conditions,
)


def test_issue_conditions_are_declared_once_with_their_parameters():
    assert list(CONDITIONS) == [
        "orig",
        "black",
        "blind",
        "single",
        "shuffled",
        "ordered",
        "reversed",
        "crf18",
        "crf23",
        "crf28",
        "crf33",
        "crf38",
        "jpeg90",
        "jpeg70",
        "jpeg50",
        "jpeg30",
        "jpeg10",
        "oracle",
        "nameswap",
        "open",
        "abstain",
        "options_shuffled",
        "none_option",
        "no_question",
        "video_only",
        "numbered",
        "metadata",
        "subtitles",
    ]
    for name in ("single", "shuffled", "ordered"):
        assert CONDITIONS[name].params["k"] == DEFAULT_KEY_FRAMES == 32
    assert CONDITIONS["crf28"].params_dict() == {"crf": 28, "preset": "medium"}
    assert CONDITIONS["jpeg50"].params_dict() == {"quality": 50} and CONDITIONS["jpeg50"].requires == {"frames"}
    assert CONDITIONS["jpeg50"].family == "crf"
    text = {name for name, c in CONDITIONS.items() if c.modality == "text"}
    probes = {"options_shuffled", "none_option", "no_question", "video_only", "numbered"}
    assert text == {"nameswap", "open", "abstain", "metadata", "subtitles", *probes}
    assert families()["probe"] == [c for c in CONDITIONS if c in probes]
    assert all(CONDITIONS[p].requires == {"options"} and CONDITIONS[p].tagged for p in probes)
    assert CONDITIONS["none_option"].params_dict() == {"option": "None"}  # lmms-eval's gt_none_option wording
    assert CONDITIONS["numbered"].answer_format == "number"
    assert CONDITIONS["subtitles"].params_dict() == {"max_chars": 4000}
    assert CONDITIONS["abstain"].params_dict() == {"option": "I cannot determine this from the video."}
    assert CONDITIONS["open"].answer_format == "open" and CONDITIONS["open"].max_new_tokens == 512
    assert CONDITIONS["metadata"].transform == "black"  # no video content, the title in the question
    assert CONDITIONS["blind"].transform == "none" and not CONDITIONS["blind"].shows_video


def test_crf_family_expands_in_code():
    declared = CONDITIONS["crf23"]
    assert (declared.name, declared.transform, declared.modality) == ("crf23", "crf", "video")
    assert declared.params_dict() == {"crf": 23, "preset": "medium"}  # x264's default preset, as documented
    assert crf(23, preset="slow").params_dict() == {"crf": 23, "preset": "slow"} and crf(23, preset="slow") != declared
    # the compression family: the CRF ladder of a video, the JPEG ladder of a task that gives frames
    assert families()["crf"] == [
        "crf18",
        "crf23",
        "crf28",
        "crf33",
        "crf38",
        *(f"jpeg{q}" for q in (90, 70, 50, 30, 10)),
    ]


def test_condition_params_are_read_only():
    with pytest.raises(TypeError):
        CONDITIONS["single"].params["k"] = 8  # type: ignore[index]


def test_unknown_condition_suggests_the_near_miss():
    with pytest.raises(KeyError, match="Did you mean 'shuffled'"):
        get_condition("shufled")


def test_ladder_deltas_telescope_to_the_vdg():
    # spatial + diversity + temporal + sampling = orig - black, whatever the accuracies.
    acc = {"black": 0.3, "single": 0.45, "shuffled": 0.61, "ordered": 0.64, "orig": 0.7}
    between_rungs = [(u, lo) for _, u, lo in LADDER_DELTAS if u in LADDER and lo in LADDER]
    assert between_rungs == list(zip(LADDER[1:], LADDER[:-1], strict=True))
    total = sum(acc[upper] - acc[lower] for upper, lower in between_rungs)
    assert total == pytest.approx(acc["orig"] - acc["black"])
    assert LADDER[0] == "black" and LADDER[-1] == "orig"
    # a probe is compared with the rung it perturbs: the same key frames, time reversed
    assert [(n, u, lo) for n, u, lo in LADDER_DELTAS if lo in LADDER_PROBES] == [("direction", "ordered", "reversed")]


def test_the_tracking_protocol_groups_c1_to_c6_c8_and_c9():
    assert protocol_conditions("tracking") == [
        "orig",
        "black",
        "oracle",
        "nameswap",
        "open",
        "abstain",
        "metadata",
        "subtitles",
    ]


def test_a_text_condition_must_declare_a_text_transform():
    with pytest.raises(ValueError, match="does not match text transform"):
        Condition("bad", "text", "identity", "no text transform", "text")


def test_bound_conditions_carry_per_question_params_for_the_cache_key():
    oracle = CONDITIONS["oracle"]
    bound = oracle.bound(times=(1.5, 9.0))
    assert bound.params_dict() == {**oracle.params_dict(), "times": (1.5, 9.0)}
    assert "times" not in oracle.params  # the declaration is unchanged
