from pathlib import Path

import pytest

from tests.helpers.condition_modules import INVERT, condition_modules
from vdg_tasks.vocabulary.conditions import (
    CONDITIONS,
    DEFAULT_KEY_FRAMES,
    LADDER,
    LADDER_DELTAS,
    LADDER_PROBES,
    Condition,
    conditions_for,
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
        "downscale112",
        "downscale224",
        "downscale448",
        "blur",
        "mute",
        *(f"options_rotated{k}" for k in range(1, 8)),
    ]
    for name in ("single", "shuffled", "ordered"):
        assert CONDITIONS[name].params["k"] == DEFAULT_KEY_FRAMES == 32
    assert CONDITIONS["crf28"].params_dict() == {"crf": 28, "preset": "medium"}
    assert CONDITIONS["jpeg50"].params_dict() == {"quality": 50} and CONDITIONS["jpeg50"].requires == {"frames"}
    assert CONDITIONS["jpeg50"].family == "crf"
    text = {name for name, c in CONDITIONS.items() if c.modality == "text"}
    probes = {"options_shuffled", "none_option", "no_question", "video_only", "numbered"}
    rotations = {f"options_rotated{k}" for k in range(1, 8)}  # circular evaluation (vdg_tasks.extend.shipped)
    assert text == {"nameswap", "open", "abstain", "metadata", "subtitles", *probes, *rotations}
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


# --------------------------------------------------------------------------------------------
# The registry: modules of conditions named by $VDG_CONDITIONS (entry points: tests/e2e/test_user_conditions.py)


@pytest.fixture()
def modules(tmp_path, monkeypatch):
    yield from condition_modules(tmp_path, monkeypatch)


def test_a_module_in_the_environment_adds_its_condition_after_vdg_s_own(modules):
    import hashlib

    write, load = modules
    path = write("colour_probe", INVERT.format(name="inverted", family="colour"))
    registry = load("colour_probe")
    assert registry.problems == ()
    assert list(registry.conditions)[-1] == "inverted"
    inverted = CONDITIONS["inverted"]
    assert inverted.declared_in == "colour_probe"
    file_digest = hashlib.sha256(path.read_bytes()).hexdigest()  # one file: the digest of its digest
    assert inverted.source_digest == hashlib.sha256(file_digest.encode()).hexdigest()
    assert families()["colour"] == ["inverted"]
    assert "inverted" in {c.name for c in conditions_for(frozenset())}


def test_a_name_already_declared_is_left_out_and_said(modules):
    write, load = modules
    write("clash_core", INVERT.format(name="black", family="colour"))
    write("clash_shipped", INVERT.format(name="mute", family="colour"))
    write("first", INVERT.format(name="inverted", family="colour"))
    write("second", INVERT.format(name="inverted", family="colour"))
    registry = load("clash_core", "clash_shipped", "first", "second")
    assert CONDITIONS["black"].transform == "black" and CONDITIONS["black"].declared_in == ""
    assert CONDITIONS["mute"].declared_in == "vdg_tasks.extend.shipped"
    assert CONDITIONS["inverted"].declared_in == "first"
    assert len(registry.problems) == 3
    core, shipped, second = registry.problems
    assert "'clash_core'" in core and "'black' is already declared by vdg's core" in core
    assert "'clash_shipped'" in shipped and "'mute' is already declared by vdg_tasks.extend.shipped" in shipped
    assert "'second'" in second and "already declared by first" in second
    assert all(p.endswith("it is left out") for p in registry.problems)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("raise RuntimeError('broken module')", "failed to import: RuntimeError: broken module"),
        ("X = 1", "has no CONDITIONS list"),
        ("CONDITIONS = ['black']", "'black' is not a condition"),
        (INVERT.format(name="Bad-Name", family="colour"), "'Bad-Name' is not lower-case letters"),
        (INVERT.format(name="ladder", family="colour"), "'ladder' is a family or protocol tag's"),
        (INVERT.format(name="inverted", family="black"), "tag 'black' of condition 'inverted' is not a valid tag"),
        (INVERT.format(name="inverted", family="probe"), "tag 'probe' of condition 'inverted' is vdg's core tag"),
        (INVERT.format(name="inverted", family="inverted"), "tag 'inverted' of condition 'inverted' is not a valid"),
        (INVERT.format(name="my_vdg_x", family="colour"), "no vdg_ or _vdg_"),
        (
            INVERT.format(name="inverted", family="colour").replace(
                "family='colour')", "family='colour', params={'f': print})"
            ),
            "its params are not JSON",
        ),
        (
            INVERT.format(name="inverted", family="colour").replace(
                "family='colour')", "family='colour', requires={'smell'})"
            ),
            "unknown requirement or change 'smell'",
        ),
        (
            "import dataclasses\n"
            + INVERT.format(name="inverted", family="colour")
            + "CONDITIONS = [dataclasses.replace(CONDITIONS[0], answer_format='open')]\n",
            "keeps the benchmark's answer",
        ),
    ],
)
def test_a_module_or_declaration_that_cannot_join_is_said_and_nothing_breaks(modules, body, said):
    write, load = modules
    write("bad_module", body)
    registry = load("bad_module")
    assert len(registry.problems) == 1 and said in registry.problems[0] and "'bad_module'" in registry.problems[0]
    assert "black" in CONDITIONS and "mute" in CONDITIONS


def test_a_declared_condition_never_joins_the_core_audit(modules):
    write, load = modules
    write("in_main", "import dataclasses\n" + INVERT.format(name="inverted", family="colour")
          + "CONDITIONS = [dataclasses.replace(CONDITIONS[0], in_main_tag=True)]\n")  # fmt: skip
    assert load("in_main").problems == ()
    assert CONDITIONS["inverted"].in_main_tag is False


def test_a_module_reading_the_conditions_on_import_sees_vdg_s_core(modules):
    write, load = modules
    write(
        "reads_back",
        "from vdg_tasks.vocabulary.conditions import CONDITIONS\nSEEN = list(CONDITIONS)\nCONDITIONS = []\n",
    )
    assert load("reads_back").problems == ()
    import sys

    from vdg_tasks.vocabulary.conditions import CORE

    assert sys.modules["reads_back"].SEEN == list(CORE)


def test_a_module_importing_vdg_s_hooks_on_import_is_refused(tmp_path):
    """In a process of its own: importing the hooks there builds them once, for that process."""
    import os
    import subprocess
    import sys

    (tmp_path / "imports_hooks.py").write_text(
        "import vdg_tasks.lmms.hooks\n" + INVERT.format(name="inverted", family="colour")
    )
    code = "from vdg_tasks.vocabulary.conditions import CONDITIONS as C, registry\n"
    code += "print(registry().problems, 'inverted' in C)"
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "VDG_CONDITIONS": "imports_hooks", "PYTHONPATH": f"{root}{os.pathsep}{tmp_path}"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "imports vdg's hooks (vdg_tasks.lmms.hooks) on import" in done.stdout
    assert done.stdout.strip().endswith("False")


def test_a_module_named_twice_is_loaded_once(modules, monkeypatch):
    from vdg_tasks.vocabulary.conditions import condition_modules

    monkeypatch.setenv("VDG_CONDITIONS", "a_mod, b_mod,a_mod,,")
    named = [m for m, _ in condition_modules()]
    assert named.count("a_mod") == 1 and named[-2:] == ["a_mod", "b_mod"]


def test_a_frames_container_or_doc_transform_needs_a_function():
    with pytest.raises(ValueError, match="has apply"):
        Condition("x", "video", "frames", "x", "y")
    with pytest.raises(ValueError, match="has apply"):
        Condition("x", "video", "black", "x", "y", apply=lambda f, c: f)
