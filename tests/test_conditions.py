import pytest

from vdg_tasks.conditions import CONDITIONS, DEFAULT_KEY_FRAMES, LADDER, LADDER_DELTAS, crf, families, get_condition


def test_issue_conditions_are_declared_once_with_their_parameters():
    assert list(CONDITIONS) == [
        "orig",
        "black",
        "single",
        "shuffled",
        "ordered",
        "crf18",
        "crf23",
        "crf28",
        "crf33",
        "crf38",
    ]
    for name in ("single", "shuffled", "ordered"):
        assert CONDITIONS[name].params["k"] == DEFAULT_KEY_FRAMES == 32
    assert CONDITIONS["crf28"].params_dict() == {"crf": 28, "preset": "medium"}
    assert all(c.modality == "video" for c in CONDITIONS.values())


def test_crf_family_expands_in_code():
    assert crf(23) == CONDITIONS["crf23"]
    assert families()["crf"] == ["crf18", "crf23", "crf28", "crf33", "crf38"]


def test_condition_params_are_read_only():
    with pytest.raises(TypeError):
        CONDITIONS["single"].params["k"] = 8  # type: ignore[index]


def test_unknown_condition_suggests_the_near_miss():
    with pytest.raises(KeyError, match="Did you mean 'shuffled'"):
        get_condition("shufled")


def test_ladder_deltas_telescope_to_the_vdg():
    # spatial + diversity + temporal + sampling = orig - black, whatever the accuracies.
    acc = {"black": 0.3, "single": 0.45, "shuffled": 0.61, "ordered": 0.64, "orig": 0.7}
    total = sum(acc[upper] - acc[lower] for _, upper, lower in LADDER_DELTAS)
    assert total == pytest.approx(acc["orig"] - acc["black"])
    assert LADDER[0] == "black" and LADDER[-1] == "orig"
