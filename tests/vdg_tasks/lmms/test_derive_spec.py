"""vdg_tasks.lmms.derive_spec: the derive spec file (``vdg_derive.json``), reading and writing a base task's
options and answer in whatever layout its docs use, and the derived Benchmark (its view of a raw doc, video
lookup, prompt, scorer) and hooks that a derived folder's ``vdg_derived.py`` hands lmms-eval.

The base task's functions live in a tiny ``baseutils.py`` written per module and named by file path, as
``vdg derive`` names a base task's ``utils.py`` outside lmms-eval's own task folder.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
from loguru import logger

from vdg_tasks.data.benchmarks import VideoUnavailable
from vdg_tasks.lmms.derive_spec import (
    DEFAULT_FRAME_FOLDER_FPS,
    GENERIC_POST_PROMPT,
    IN_TEXT,
    PROVIDES,
    RAW_KEY,
    DeriveError,
    DeriveSpec,
    Fields,
    answer_letter,
    chosen_field,
    derived_benchmark,
    generic_prompt,
    hooks_for,
    load_function,
    native_name,
    option_texts,
    read_options,
    write_options,
)
from vdg_tasks.lmms.hooks import NO_VIDEO, build_record

BASE_UTILS = """\
import sys
from pathlib import Path

HERE = Path(__file__).parent


def one_param_visual(doc):
    return [str(HERE / doc["clip"])]


def two_param_visual(doc, lmms_eval_specific_kwargs):
    return [str(HERE / lmms_eval_specific_kwargs["folder"] / doc["clip"])]


def bare_path_visual(doc):
    return HERE / doc["clip"]


def exiting_visual(doc):
    sys.exit(f"video {doc['clip']} is missing")


def failing_visual(doc):
    raise KeyError("clip")


def silent_failing_visual(doc):
    raise RuntimeError()


def frames_visual(doc):
    return [b"frame bytes"]


def lettered_prompt(doc, lmms_eval_specific_kwargs=None):
    kwargs = lmms_eval_specific_kwargs or {}
    lines = [doc["question"], *(f"({chr(65 + i)}) {c}" for i, c in enumerate(doc["candidates"]))]
    return kwargs.get("pre_prompt", "") + "\\n".join(lines)


def first_two_prompt(doc):
    return doc["question"] + "\\n" + "\\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(doc["candidates"][:2]))


def broken_prompt(doc):
    raise ValueError("the base builder broke")


def scorer(doc, results):
    return {"accuracy": 1.0, "vdg": "theirs", "demo": results[0]}


def keep_first_two(dataset):
    return dataset[:2]


def open_prompt(doc, lmms_eval_specific_kwargs=None):
    return doc["question"].capitalize() + "?" + (lmms_eval_specific_kwargs or {}).get("post_prompt", "")
"""
TASK = "demo_mc"
FIELDS = Fields("qid", "candidates", "answer", "clip", "category", "question")
RAW = {
    "qid": "q0",
    "clip": "c0.mp4",
    "question": "What colour?",
    "candidates": ["red", "blue", "green"],
    "answer": "blue",
    "category": "colour",
}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A folder holding ``baseutils.py`` and the (empty) videos its lookups name; the module's path prefix."""
    folder = tmp_path_factory.mktemp("derive_spec_base")
    (folder / "baseutils.py").write_text(BASE_UTILS)
    (folder / "c0.mp4").write_bytes(b"")
    (folder / "sub").mkdir()
    (folder / "sub" / "c0.mp4").write_bytes(b"")
    return folder


def make_spec(base: Path, **changes) -> DeriveSpec:
    fields = {
        "task": TASK,
        "yaml_path": str(base / "demo.yaml"),
        "fields": FIELDS,
        "doc_to_visual": f"{base}/baseutils.one_param_visual",
        "doc_to_text": f"{base}/baseutils.lettered_prompt",
        "process_results": f"{base}/baseutils.scorer",
        "process_docs": None,
        "visual_kwargs": None,
        "conditions": ("orig", "black", "abstain"),
    }
    return DeriveSpec(**{**fields, **changes})


def question_digest(question: str, *texts: str) -> str:
    """The 8 hex digits a question without an id is named by: the low 32 bits of the 63-bit seed (the first
    8 bytes of sha256 over the parts joined by 0x1f, shifted right once), written here from that recipe."""
    digest = hashlib.sha256("\x1f".join([question, *texts]).encode("utf-8")).digest()
    return f"{(int.from_bytes(digest[:8], 'big') >> 1) & 0xFFFFFFFF:08x}"


# --- the spec file ----------------------------------------------------------------------------------


def test_a_derive_error_s_short_reason_defaults_to_its_message():
    assert DeriveError("cannot derive x: it is a group").short == "cannot derive x: it is a group"
    assert DeriveError("cannot derive x: it is a group", short="a group").short == "a group"
    assert str(DeriveError("cannot derive x: it is a group", short="a group")) == "cannot derive x: it is a group"


def test_spec_json_is_versioned_and_reads_back_equal(base):
    spec = make_spec(base, visual_kwargs={"folder": "sub"}, group="demo_group", frame_folder_fps=2.5)
    data = json.loads(spec.to_json())
    assert data["version"] == 1
    assert data["fields"] == {
        "question_id": "qid",
        "options": "candidates",
        "answer": "answer",
        "video_id": "clip",
        "task_type": "category",
        "question": "question",
    }
    assert data["conditions"] == ["orig", "black", "abstain"]  # a tuple is written as a JSON list
    back = DeriveSpec.from_json(spec.to_json())
    assert back == spec and isinstance(back.fields, Fields) and isinstance(back.conditions, tuple)


def test_spec_defaults_are_no_group_and_one_frame_per_second(base):
    spec = make_spec(base)
    assert spec.group == "" and spec.frame_folder_fps == DEFAULT_FRAME_FOLDER_FPS == 1.0


# --- reading options -----------------------------------------------------------------------------------


def test_chosen_field_is_the_first_alternative_the_doc_has_a_value_for():
    doc = {"options": None, "candidates": ["x"], "choices": ["y"]}
    assert chosen_field(doc, "options|candidates|choices") == "candidates"  # None counts as absent
    assert chosen_field(doc, "choices|candidates") == "choices"
    assert chosen_field(doc, "missing|other") is None
    assert chosen_field(doc, None) is None and chosen_field(doc, "") is None


def test_a_numbered_alternative_is_chosen_when_any_numbered_field_exists():
    doc = {"option1": "red", "options_note": "ignored"}
    assert chosen_field(doc, "candidates|option{i}") == "option{i}"
    assert chosen_field({"options": "x"}, "option{i}") is None  # "s" is not a number


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["A. red", "B. blue"], ["A. red", "B. blue"]),  # a list, labels kept
        (("red", "blue"), ["red", "blue"]),  # a tuple
        ("A. red\n\n  B. blue  \n", ["A. red", "B. blue"]),  # lines, stripped, blank ones dropped
        ({"A": "red", "B": "blue"}, ["red", "blue"]),  # a mapping's values
        (3, []),  # not a container of options
    ],
)
def test_options_read_from_every_container(value, expected):
    assert read_options({"options": value}, "options") == expected


def test_no_options_field_reads_no_options():
    assert read_options({"question": "q"}, "options") == []
    assert read_options({"question": "q"}, None) == []


def test_numbered_options_start_at_one_and_stop_at_the_first_gap_or_blank():
    assert read_options({"option1": "red", "option2": "blue", "option4": "green"}, "option{i}") == ["red", "blue"]
    assert read_options({"option0": "red", "option1": " ", "option2": "blue"}, "option{i}") == ["red"]
    assert read_options({"option0": "red", "option1": None}, "option{i}") == ["red"]


def test_numbered_options_read_and_written_back():
    doc = {"option0": "red", "option1": "blue", "option2": "N/A", "option3": "N/A"}
    assert read_options(doc, "option{i}") == ["red", "blue"]
    new = write_options(doc, "option{i}", ["A. red", "B. blue", "C. I cannot tell"])
    assert [new[f"option{i}"] for i in range(4)] == ["red", "blue", "I cannot tell", "N/A"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["A. red", "B. blue"], ["red", "blue"]),
        (["(A) red", "(B) blue"], ["red", "blue"]),
        (["A) red", "B) blue"], ["red", "blue"]),
        ([" red ", "blue"], ["red", "blue"]),  # plain: only stripped
        (["B. red", "A. blue"], ["B. red", "A. blue"]),  # lettered out of order: the labels are text
        ([], []),
    ],
)
def test_option_texts_drop_labels_only_when_lettered_in_order(options, expected):
    assert option_texts(options) == expected


# --- answers -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("B", "B"),  # a letter
        (2, "C"),  # a 0-based index
        (2.0, "C"),
        ("2", "C"),  # a digit string
        ("blue", "B"),  # the option's text, any case and spacing
        ("  BLUE ", "B"),
        ("C. green", "C"),  # a label
        ("(A)", "A"),
        ("purple", ""),  # not found
        (7, ""),
        ("E", ""),  # a letter beyond the options
        (None, ""),
        (True, ""),
    ],
)
def test_answer_letter(value, expected):
    assert answer_letter(value, ["red", "blue", "green", "black"]) == expected


def test_answer_text_that_is_a_digit_names_that_option():
    assert answer_letter("3", ["1", "2", "3"]) == "C"
    assert answer_letter("1", ["red", "blue"]) == "B"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.int64(1), "B"),  # an integer type with __index__ (numpy, from a parquet column)
        (np.float64(3.0), "D"),  # a float subclass holding an integer
        (-1, ""),  # a negative index names no option
        (2.5, ""),  # a fractional index names no option
        ("4", ""),  # a digit string past the last option
        ("B:", "B"),  # a label with a colon
        ("D) black", "D"),
        ("Because", ""),  # a word starting with a letter is no label
        ("", ""),
    ],
)
def test_answer_letter_other_spellings(value, expected):
    assert answer_letter(value, ["red", "blue", "green", "black"]) == expected


def test_answer_letter_reads_texts_of_lettered_options_and_caps_at_eight_letters():
    assert answer_letter("green", ["A. red", "B. blue", "C. green"]) == "C"  # labels removed before matching
    nine = [f"o{i}" for i in range(9)]
    assert answer_letter(7, nine) == "H" and answer_letter(8, nine) == ""  # LETTERS is "ABCDEFGH"


def test_a_text_shared_by_two_options_is_not_taken_as_either():
    # "2" is the text of two options, so it falls through to a 0-based index: the third option.
    assert answer_letter("2", ["2", "2", "x"]) == "C"
    assert answer_letter("same", ["same", "same"]) == ""


# --- writing options ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("own", "expected"),
    [
        (["(A) red", "(B) blue"], ["(A) red", "(B) blue", "(C) idk"]),
        (["A. red", "B. blue"], ["A. red", "B. blue", "C. idk"]),
        (["red", "blue"], ["red", "blue", "idk"]),
        ("A. red\nB. blue", "A. red\nB. blue\nC. idk"),
    ],
)
def test_options_written_back_in_the_base_format(own, expected):
    new = write_options({"options": own}, "options", ["A. red", "B. blue", "C. idk"])
    assert new["options"] == expected


def test_a_mapping_of_options_is_written_back_keyed_by_letter_and_the_doc_is_not_changed():
    doc = {"choices": {"1": "A) red", "2": "B) blue"}, "question": "q"}
    new = write_options(doc, "choices", ["A. blue", "B. red"])
    assert new["choices"] == {"A": "A) blue", "B": "B) red"}  # the base's "A) " labels kept
    assert doc["choices"] == {"1": "A) red", "2": "B) blue"} and new["question"] == "q"


def test_numbered_options_without_a_filler_drop_the_fields_past_the_new_options():
    doc = {"option1": "red", "option2": "blue", "option3": "green"}
    new = write_options(doc, "option{i}", ["A. green", "B. red"])
    assert new == {"option1": "green", "option2": "red"}


def test_numbered_options_gain_fields_from_the_first_number():
    new = write_options({"option1": "red", "option2": "blue"}, "option{i}", ["A. red", "B. blue", "C. idk"])
    assert new == {"option1": "red", "option2": "blue", "option3": "idk"}


def test_lettered_option_fields_are_read_in_letter_order_and_written_back_in_their_case():
    doc = {"choice_b": "blue", "choice_a": "red", "choice_c": "green", "choice_note": "x", "answer": "B"}
    assert chosen_field(doc, "options|choice_{a}") == "choice_{a}"
    assert read_options(doc, "choice_{a}") == ["red", "blue", "green"]
    new = write_options(doc, "choice_{a}", ["A. red", "B. blue", "C. green", "D. I cannot tell"])
    assert [new[f"choice_{c}"] for c in "abcd"] == ["red", "blue", "green", "I cannot tell"]
    assert new["choice_note"] == "x" and "choice_D" not in new
    upper = write_options({"Choice_A": "red", "Choice_B": "blue"}, "Choice_{a}", ["A. red"])
    assert upper == {"Choice_A": "red"}


def test_options_are_written_to_the_alternative_the_doc_has_or_else_the_first():
    new = write_options({"candidates": "red\nblue"}, "options|candidates", ["A. blue", "B. red"])
    assert new == {"candidates": "blue\nred"}
    assert write_options({"q": 1}, "options|candidates", ["A. x"]) == {"q": 1, "options": ["x"]}


# --- loading the base's functions ------------------------------------------------------------------------


def test_load_function_reads_dotted_and_file_path_names(base):
    assert load_function("os.path.join") is os.path.join
    keep = load_function(f"{base}/baseutils.keep_first_two")
    assert keep([1, 2, 3]) == [1, 2]
    # One module object per file: its functions share module state.
    assert load_function(f"{base}/baseutils.scorer").__globals__ is keep.__globals__


def test_load_function_of_a_missing_name_raises(base):
    with pytest.raises(AttributeError, match="no_such_function"):
        load_function(f"{base}/baseutils.no_such_function")


# --- the generic prompt and metric names ----------------------------------------------------------------


def test_generic_prompt_is_question_options_and_post_prompt():
    view = {"question": "What colour?", "options": ["A. red", "B. blue"]}
    kwargs = {"pre_prompt": "Watch. ", "post_prompt": "\nAnswer now.\n"}
    assert generic_prompt(view, kwargs) == "Watch. What colour?\nA. red\nB. blue\nAnswer now."


@pytest.mark.parametrize("kwargs", [None, {}, {"post_prompt": "  \n"}, {"post_prompt": ["not", "text"]}])
def test_generic_prompt_falls_back_to_vdg_s_post_prompt(kwargs):
    assert generic_prompt({"question": "Q?", "options": ["A. x"]}, kwargs) == f"Q?\nA. x\n{GENERIC_POST_PROMPT}"


def test_generic_prompt_ignores_a_pre_prompt_that_is_not_text_and_missing_fields():
    assert generic_prompt({}, {"pre_prompt": 3, "post_prompt": "Go."}) == "\n\nGo."


def test_base_metrics_named_like_vdg_s_keys_are_renamed():
    assert native_name("accuracy") == "native_accuracy"  # METRIC_KEY
    assert native_name("vdg") == "native_vdg"  # RECORD_KEY
    assert native_name("demo_acc") == "demo_acc"


# --- the derived benchmark: the view ---------------------------------------------------------------------


def test_the_view_holds_the_video_mme_fields_and_the_raw_doc(base):
    view = derived_benchmark(make_spec(base)).view(RAW)
    assert view["question_id"] == "q0" and view["videoID"] == "c0.mp4"
    assert view["task_type"] == "colour" and view["question"] == "What colour?" and view["duration"] == ""
    assert view["options"] == ["A. red", "B. blue", "C. green"]
    assert view["answer"] == "B"  # "blue" is the second candidate
    assert view[RAW_KEY] is RAW and view["candidates"] == RAW["candidates"]  # the doc's own fields kept


def test_a_question_without_an_id_is_named_by_its_video_and_a_digest_of_its_text(base):
    spec = make_spec(base, fields=Fields(None, "candidates", "answer", "clip", None, "question"))
    view = derived_benchmark(spec).view(RAW)
    assert view["question_id"] == "c0.mp4#" + question_digest("What colour?", "red", "blue", "green")
    assert view["task_type"] == ""


def test_a_question_without_an_id_or_a_video_is_named_by_the_digest_alone(base):
    spec = make_spec(base, fields=Fields(None, "candidates", "answer", None, None, "question"))
    view = derived_benchmark(spec).view(RAW)
    digest = question_digest("What colour?", "red", "blue", "green")
    assert view["question_id"] == digest and view["videoID"] == digest  # the id stands in for the video


def test_list_valued_fields_are_joined_with_commas_in_the_view(base):
    doc = {**RAW, "category": ["colour", "static"], "qid": None, "id": 7}
    spec = make_spec(base, fields=Fields("qid|id", "candidates", "answer", "clip", "category", "question"))
    view = derived_benchmark(spec).view(doc)
    assert view["task_type"] == "colour,static" and view["question_id"] == "7"


# --- the derived benchmark: the video lookup -------------------------------------------------------------


def test_the_base_lookup_finds_the_video_from_the_raw_doc(base):
    bench = derived_benchmark(make_spec(base))
    assert bench.source_video(bench.view(RAW)) == base / "c0.mp4"
    assert bench.source_video(RAW) == base / "c0.mp4"  # a doc that is no view is the raw doc


def test_a_two_parameter_lookup_gets_the_task_s_kwargs(base):
    spec = make_spec(base, doc_to_visual=f"{base}/baseutils.two_param_visual", visual_kwargs={"folder": "sub"})
    assert derived_benchmark(spec).source_video(RAW) == base / "sub" / "c0.mp4"


def test_a_one_parameter_lookup_is_called_without_kwargs_and_may_return_a_bare_path(base):
    spec = make_spec(base, doc_to_visual=f"{base}/baseutils.bare_path_visual", visual_kwargs={"folder": "sub"})
    assert derived_benchmark(spec).source_video(RAW) == base / "c0.mp4"


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("exiting_visual", "^video c0.mp4 is missing$"),  # lmms-eval's lookups sys.exit on a missing file
        ("failing_visual", "^demo_mc's doc_to_visual failed: KeyError: 'clip'$"),
        ("silent_failing_visual", "^demo_mc's doc_to_visual failed: RuntimeError$"),
        ("frames_visual", "^demo_mc's doc_to_visual returned bytes, not a video path: vdg perturbs video files$"),
        ("no_such_function", "failed: AttributeError"),
    ],
)
def test_a_failing_lookup_is_this_question_s_video_unavailable(base, function, message):
    spec = make_spec(base, doc_to_visual=f"{base}/baseutils.{function}")
    with pytest.raises(VideoUnavailable, match=message):
        derived_benchmark(spec).source_video(RAW)


def test_a_lookup_naming_a_missing_file_is_video_unavailable(base):
    with pytest.raises(VideoUnavailable, match="c9.mp4 does not exist"):
        derived_benchmark(make_spec(base)).source_video({**RAW, "clip": "c9.mp4"})


# --- the derived benchmark: the prompt -------------------------------------------------------------------


def test_the_base_prompt_builder_shows_a_changed_question_in_its_own_layout(base):
    bench = derived_benchmark(make_spec(base))
    view = bench.view(RAW)
    changed = {**view, "question": "Which colour?", "options": [*view["options"], "D. I cannot tell"]}
    text = bench.prompt(changed, {"pre_prompt": ">> "})
    assert text == ">> Which colour?\n(A) red\n(B) blue\n(C) green\n(D) I cannot tell"
    assert RAW["candidates"] == ["red", "blue", "green"]  # the raw doc itself is not changed


def test_a_builder_that_drops_an_option_is_replaced_by_the_generic_prompt(base):
    bench = derived_benchmark(make_spec(base, doc_to_text=f"{base}/baseutils.first_two_prompt"))
    view = bench.view(RAW)
    kwargs = {"post_prompt": "Letter?"}
    # The generic layout: the question, the view's lettered options, the post prompt.
    assert bench.prompt(view, kwargs) == "What colour?\nA. red\nB. blue\nC. green\nLetter?"
    two = {**RAW, "candidates": ["red", "blue"], "answer": "red"}
    assert bench.prompt(bench.view(two), kwargs) == "What colour?\nA. red\nB. blue"  # all shown: the base's own


def test_a_builder_that_fails_is_warned_about_and_replaced_by_the_generic_prompt(base):
    bench = derived_benchmark(make_spec(base, doc_to_text=f"{base}/baseutils.broken_prompt"))
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="WARNING")
    try:
        text = bench.prompt(bench.view(RAW), None)
    finally:
        logger.remove(sink)
    assert text == f"What colour?\nA. red\nB. blue\nC. green\n{GENERIC_POST_PROMPT}"
    assert len(messages) == 1
    assert "demo_mc: its doc_to_text failed on the changed question" in messages[0]
    assert "the base builder broke" in messages[0]


# --- the derived benchmark: the scorer and the rest -------------------------------------------------------


def test_the_base_scorer_is_kept_with_vdg_s_keys_renamed(base):
    bench = derived_benchmark(make_spec(base))
    assert bench.native_results(RAW, ["B"]) == {"native_accuracy": 1.0, "native_vdg": "theirs", "demo": "B"}


def test_a_base_without_a_kept_scorer_has_none(base):
    assert derived_benchmark(make_spec(base, process_results=None)).native_results is None


def test_the_benchmark_carries_the_task_name_options_only_and_the_frame_rate(base):
    bench = derived_benchmark(make_spec(base, frame_folder_fps=3.0))
    assert bench.name == TASK and bench.provides == PROVIDES and bench.frame_folder_fps == 3.0
    assert "`demo_mc`" in bench.description and "vdg derive" in bench.description


# --- the hooks of a derived folder -------------------------------------------------------------------------


def test_hooks_for_names_every_condition_s_hooks(base, tmp_path, monkeypatch):
    monkeypatch.delenv("VDG_QUESTION_SET", raising=False)
    spec_file = tmp_path / "vdg_derive.json"
    spec_file.write_text(make_spec(base, process_docs=f"{base}/baseutils.keep_first_two").to_json())
    hooks = hooks_for(spec_file)
    per_condition = {f"{c}__{h}" for c in ("orig", "black", "abstain") for h in ("doc_to_visual", "process_results")}
    # abstain is the one text condition of the three: only it rewrites the prompt.
    assert set(hooks) == {"process_docs", "abstain__doc_to_text", *per_condition}
    assert all(callable(h) for h in hooks.values())
    assert hooks["process_docs"].__name__ == "demo_mc__process_docs"
    assert hooks["process_docs"]([RAW, RAW, RAW]) == [RAW, RAW]  # the base's own process_docs, no question set


def test_hooks_are_built_once_per_spec_file_version(base, tmp_path):
    spec_file = tmp_path / "vdg_derive.json"
    spec_file.write_text(make_spec(base).to_json())
    first = hooks_for(spec_file)["process_docs"]
    assert hooks_for(str(spec_file))["process_docs"] is first
    spec_file.write_text(make_spec(base, conditions=("orig",)).to_json())
    stat = spec_file.stat()
    os.utime(spec_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a later version of the file
    again = hooks_for(spec_file)
    assert again["process_docs"] is not first and set(again) == {
        "process_docs",
        "orig__doc_to_visual",
        "orig__process_results",
    }


def test_process_docs_without_a_base_one_passes_the_dataset_through(base, tmp_path, monkeypatch):
    monkeypatch.delenv("VDG_QUESTION_SET", raising=False)
    spec_file = tmp_path / "vdg_derive.json"
    spec_file.write_text(make_spec(base).to_json())
    docs = [RAW, {**RAW, "qid": "q1"}]
    assert hooks_for(spec_file)["process_docs"](docs) is docs


# --- options as lettered lines of the question text ---------------------------------------------------------


def _in_text_benchmark(tmp_path, options: str):
    (tmp_path / "mc_utils.py").write_text(
        "def to_text(doc, kwargs=None):\n"
        "    return doc['question'] + '\\n' + doc.get('prompt', '') + 'Best option: ('\n"
    )
    fields = Fields("qid", options, "answer", "vid", None, "question")
    spec = DeriveSpec(
        task="mc", yaml_path=str(tmp_path / "mc.yaml"), fields=fields,
        doc_to_visual=f"{tmp_path}/mc_utils.to_text", doc_to_text=f"{tmp_path}/mc_utils.to_text",
        process_results=None, process_docs=None, visual_kwargs=None, conditions=("orig", "abstain"),
    )  # fmt: skip
    return derived_benchmark(spec)


def test_options_in_the_question_text_are_read_and_written_back_in_its_layout(tmp_path):
    from vdg_tasks.perturb.text import apply as apply_text
    from vdg_tasks.vocabulary.conditions import CONDITIONS

    bench = _in_text_benchmark(tmp_path, f"{IN_TEXT}question")
    doc = {"qid": "q1", "vid": "v", "question": "What moves?\n(A) car\n(B) dog\n(C) cat", "answer": "(B) dog"}
    view = bench.view(doc)
    assert (view["question"], view["options"], view["answer"]) == ("What moves?", ["A. car", "B. dog", "C. cat"], "B")
    # orig asks exactly what the base asks
    assert bench.prompt(view, {}) == "What moves?\n(A) car\n(B) dog\n(C) cat\nBest option: ("
    # abstain's added option sits in the question, lettered as the benchmark letters
    change = apply_text(CONDITIONS["abstain"], view)
    added = change.doc["options"][-1].split(". ", 1)[1]
    assert bench.prompt(change.doc, {}) == f"What moves?\n(A) car\n(B) dog\n(C) cat\n(D) {added}\nBest option: ("
    # a question without lettered lines has no options, so no answer among them: the hooks log an error row
    bare = bench.view({"qid": "q2", "vid": "v", "question": "What moves?", "answer": "dog"})
    assert bare["options"] == [] and bare["answer"] == ""
    record = build_record(bench, CONDITIONS["orig"], {"qid": "q2", "vid": "v", "question": "What?", "answer": "x"},
                          "A", NO_VIDEO)  # fmt: skip
    assert record["status"] == "error"
    assert record["error"].endswith("it lists none (no options field, no lettered lines)")


def test_options_in_another_text_field_leave_the_question_as_it_is(tmp_path):
    bench = _in_text_benchmark(tmp_path, f"{IN_TEXT}question|prompt")
    doc = {"qid": "q1", "vid": "v", "question": "What moves?", "prompt": "A. car\nB. dog\n", "answer": "A"}
    view = bench.view(doc)
    assert (view["question"], view["options"], view["answer"]) == ("What moves?", ["A. car", "B. dog"], "A")
    assert bench.prompt(view, {}) == "What moves?\nA. car\nB. dog\nBest option: ("


# --- graded tasks (no options) -----------------------------------------------------------------------


def test_a_graded_task_keeps_the_reference_answer_and_asks_the_base_s_own_prompt(base):
    from vdg_tasks.vocabulary.conditions import conditions_for

    spec = make_spec(
        base,
        fields=Fields("qid", None, "answer", "clip", "category", "question"),
        doc_to_text=f"{base}/baseutils.open_prompt",
        scoring="judge",
        conditions=("orig", "black", "blind"),
    )
    bench = derived_benchmark(spec)
    raw = {"qid": "q9", "clip": "c0.mp4", "question": "what colour is the car", "answer": " red ", "category": "c"}
    view = bench.view(raw)
    assert (view["answer"], view["options"], view["question_id"]) == ("red", [], "q9")
    assert bench.prompt(view, {"post_prompt": " Answer briefly."}) == "What colour is the car? Answer briefly."
    assert bench.scoring == "judge" and bench.conditions() == conditions_for(frozenset())
    assert not {"open", "abstain"} & {c.name for c in bench.conditions()}
    # an order, an interval, several counts: no text a judge can read a reply against, so no answer (an error row)
    for structured in ([2, 0, 1], {"start": 1.0, "end": 2.0}):
        assert bench.view({**raw, "answer": structured})["answer"] == ""
    assert bench.view({**raw, "answer": 3})["answer"] == "3"


def test_a_graded_question_without_an_id_is_named_by_a_digest_of_its_whole_doc(base):
    spec = make_spec(base, fields=Fields(None, None, "answer", None, None, "question"), scoring="metric:mra")
    view = derived_benchmark(spec).view
    one = {"scene": "s1", "question": "How many chairs?", "answer": "3"}
    other = {"scene": "s2", "question": "How many chairs?", "answer": "3"}
    reordered = {"answer": "3", "question": "How many chairs?", "scene": "s1"}
    assert view(one)["question_id"] != view(other)["question_id"]
    assert (
        view(one)["question_id"] == view(reordered)["question_id"] == question_digest(json.dumps(one, sort_keys=True))
    )
    # an image (or any object whose text names a memory address) is left out: the id is the same in every process
    assert view({**one, "frame": object()})["question_id"] == view({**one, "frame": object()})["question_id"]


def test_a_doc_to_text_naming_a_field_asks_that_field_s_text_and_a_text_condition_rewrites_it(tmp_path):
    from vdg_tasks.perturb.text import apply as apply_text
    from vdg_tasks.vocabulary.conditions import CONDITIONS

    # TimeScope's config: doc_to_text is the doc's `input` field, whose lines letter the options
    fields = Fields("id", f"{IN_TEXT}input", "answer", "video", None, "input")
    spec = DeriveSpec(
        task="ts", yaml_path=str(tmp_path / "ts.yaml"), fields=fields, doc_to_visual=f"{tmp_path}/x.v",
        doc_to_text="input", process_results=None, process_docs=None, visual_kwargs=None,
        conditions=("orig", "abstain"),
    )  # fmt: skip
    bench = derived_benchmark(spec)
    doc = {"id": "t1", "video": "v.mp4", "input": "When does the dog bark?\nA. 3 s\nB. 9 s", "answer": "B"}
    view = bench.view(doc)
    assert (view["question"], view["options"], view["answer"]) == ("When does the dog bark?", ["A. 3 s", "B. 9 s"], "B")
    assert bench.prompt(view, {"post_prompt": "ignored: lmms-eval reads the field alone"}) == doc["input"]
    change = apply_text(CONDITIONS["abstain"], view)
    added = change.doc["options"][-1].split(". ", 1)[1]
    assert bench.prompt(change.doc, {}) == f"{doc['input']}\nC. {added}"


def test_options_given_as_mappings_are_read_by_their_text_and_written_back_relabelled():
    # physical_conflict: [{"id": "A", "text": "Yes"}, ...]
    doc = {"options": [{"id": "A", "text": "Yes"}, {"id": "B", "text": "No"}], "answer": "B"}
    assert read_options(doc, "options") == ["Yes", "No"]
    new = write_options(doc, "options", ["A. No", "B. Yes", "C. I cannot tell"])
    relabelled = [{"id": "A", "text": "No"}, {"id": "B", "text": "Yes"}, {"id": "C", "text": "I cannot tell"}]
    assert new["options"] == relabelled
    assert doc["options"][0] == {"id": "A", "text": "Yes"}  # the doc itself unchanged
