"""vdg_tasks.lmms.derive_source: a base task's source read as text, never executed: the doc functions a
config names and what they call, whether they stay offline, and which doc fields they read.

The source lives in small modules written per test module and named by file path, as ``vdg derive`` names
a base task's ``utils.py`` outside lmms-eval's own task folder.
"""

from __future__ import annotations

import textwrap

import pytest

from vdg_tasks.data.upstream import Function
from vdg_tasks.lmms.derive_source import (
    KNOWN_FIELDS,
    base_sources,
    closure_text,
    detect_fields,
    is_fn,
    offline_safe,
    returned_field,
    returns_constant,
)
from vdg_tasks.lmms.derive_spec import Fields, read_options

# Read only, never imported: the names it uses (requests, OpenAI, upload_results, fetch) need not exist.
SOURCE_UTILS = '''\
import requests


def to_text(doc, kw):
    return helper(doc) + doc["question"]


def helper(doc):
    return "\\n".join(doc["candidates"])


def unused(doc):
    return doc["other"]


def score(doc, results):
    return {"acc": doc["answer"] == results[0]}


def score_posting(doc, results):
    return post(doc)


def post(doc):
    return requests.post("x", json=doc)


def score_uploading(doc, results):
    return upload_results(results)


def score_submitting(doc, results):
    return api.submit_answers(results)


def score_fetching(doc, results):
    return fetch("https://example.com/" + doc["id"])


def score_citing(doc, results):
    """Scored as in https://arxiv.org/abs/0000.00000."""
    return {"acc": 1.0}


def score_with_a_client(doc, results):
    return OpenAI().chat(results)


def recursive(doc):
    return recursive(doc)


def target_of(doc):
    """The reference answer."""
    return doc["A"]


def target_got(d):
    return d.get("gt_text", "")


def target_built(doc):
    return "ABCD"[int(doc["correct"])]


def target_of_another(doc):
    other = {"A": 1}
    return other["A"]


def target_for_submission(doc):
    """No answer: the task is scored by submission."""
    return ""


def target_maybe(doc):
    if doc.get("hidden"):
        return None
    return doc["truth"].upper()
'''
OTHER_UTILS = """\
def visual(doc):
    return doc["video"]
"""


@pytest.fixture(scope="module")
def utils(tmp_path_factory) -> str:
    """The file-path module name (``/dir/sourceutils``) of SOURCE_UTILS; OTHER_UTILS and a file that does
    not parse lie beside it."""
    folder = tmp_path_factory.mktemp("derive_source")
    (folder / "sourceutils.py").write_text(SOURCE_UTILS)
    (folder / "otherutils.py").write_text(OTHER_UTILS)
    (folder / "broken.py").write_text("def f(doc:\n")
    return f"{folder}/sourceutils"


# --- reading the base's functions ---------------------------------------------------------------------


def test_closure_is_the_function_and_what_it_calls_in_its_module(utils):
    # to_text first, then helper (what it calls); unused is left out. Each def from "def" to its last line.
    expected = 'def to_text(doc, kw):\n    return helper(doc) + doc["question"]\ndef helper(doc):\n'
    expected += '    return "\\n".join(doc["candidates"])'
    assert closure_text(f"{utils}.to_text") == expected


def test_a_recursive_function_is_read_once(utils):
    assert closure_text(f"{utils}.recursive") == "def recursive(doc):\n    return recursive(doc)"


def test_a_dotted_module_is_read_from_its_file():
    text = closure_text("json.dumps")  # json/__init__.py: dumps calls nothing else defined there
    assert text.startswith("def dumps(") and "def loads(" not in text


@pytest.mark.parametrize(
    "ref",
    [
        "sourceutils.no_such_function",  # a module that has no such function (made absolute below)
        "broken.f",  # a file that does not parse
        "missing.f",  # no such file
    ],
)
def test_an_unreadable_function_has_no_source(utils, ref):
    folder = utils.rpartition("/")[0]
    assert closure_text(f"{folder}/{ref}") == ""


def test_an_unknown_dotted_module_has_no_source():
    assert closure_text("no_such_package_vdg.sub.fn") == ""
    assert closure_text("no_such_module_vdg.fn") == ""


@pytest.mark.parametrize(
    ("function", "safe"),
    [
        ("to_text", True),
        ("score", True),
        ("score_citing", True),  # a URL in a docstring cites a paper
        ("score_posting", False),  # calls post, which uses requests
        ("score_uploading", False),  # a name starting with "upload"
        ("score_submitting", False),  # an attribute starting with "submit"
        ("score_fetching", False),  # a URL string
        ("score_with_a_client", False),  # a network client
        ("no_such_function", True),  # nothing read, nothing unsafe
    ],
)
def test_offline_safe(utils, function, safe):
    assert offline_safe(f"{utils}.{function}") is safe


def test_base_sources_are_the_task_functions_then_their_whole_modules(utils):
    folder = utils.rpartition("/")[0]
    config = {
        "doc_to_text": Function(f"{utils}.to_text"),
        "doc_to_visual": Function(f"{folder}/otherutils.visual"),
        "process_results": Function(f"{utils}.score"),
        "doc_to_target": "answer",  # a field name, not a function: not read
    }
    own, whole = base_sources(config)
    assert own == "\n".join(
        [
            'def to_text(doc, kw):\n    return helper(doc) + doc["question"]',
            'def helper(doc):\n    return "\\n".join(doc["candidates"])',
            'def visual(doc):\n    return doc["video"]',
            'def score(doc, results):\n    return {"acc": doc["answer"] == results[0]}',
        ]
    )
    assert whole == SOURCE_UTILS + "\n" + OTHER_UTILS  # each module once, in the order first named


def test_a_config_without_functions_has_empty_sources():
    assert base_sources({"doc_to_text": "question", "task": "t"}) == ["", ""]


def test_is_fn_is_true_only_for_function_values():
    assert is_fn(Function("m.f")) and not is_fn("m.f") and not is_fn(None)


# --- fields -------------------------------------------------------------------------------------------


def test_detects_fields_read_from_doc():
    source = textwrap.dedent("""
        def to_text(doc, kw):
            return doc["question"] + "\\n".join(doc["candidates"])
        def score(doc, results):
            return {"acc": {"id": doc["qid"], "gt": doc.get("answer"), "cat": doc["category"]}, "clip": doc["clip"]}
    """)
    fields = detect_fields({}, source)
    assert fields == Fields("qid", "candidates", "answer", None, "category", "question")


def test_detection_prefers_config_hints_and_the_task_functions():
    config = {"doc_to_target": "correct_choice", "doc_to_text": Function("m.to_text")}
    own = 'def f(doc):\n    return [doc.get(f"option{i}") for i in range(5)], doc["video_path"]'
    module = 'def g(doc):\n    return doc["options"], doc["question_id"], doc["type"]'
    fields = detect_fields(config, [own, module])
    assert fields.answer == "correct_choice"  # doc_to_target names the field
    assert fields.options == "option{i}"  # only the task's own functions are read for options
    assert (fields.question_id, fields.video_id, fields.task_type) == ("question_id", "video_path", "type")


def test_lettered_option_fields_are_read_from_a_loop_over_letters():
    # EgoPlan: for choice_idx in ["A", "B", "C", "D"]: ... doc[f"choice_{choice_idx.lower()}"]
    own = 'def f(doc):\n    for c in "ABCD":\n        q += doc[f"choice_{c.lower()}"]\n    return q + doc["sample_id"]'
    fields = detect_fields({"doc_to_target": "answer"}, [own])
    assert (fields.options, fields.question_id, fields.answer) == ("choice_{a}", "sample_id", "answer")


def test_ids_and_options_are_never_guessed_from_bare_strings():
    source = 'KEYS = ["id", "choices", "answer", "video"]\ndef f(doc):\n    return doc["question"]'
    fields = detect_fields({}, source)
    assert fields.question_id is None and fields.options is None
    assert (fields.answer, fields.video_id) == ("answer", "video")


def test_alternatives_read_the_field_the_doc_has():
    fields = detect_fields({}, 'def f(doc):\n    return doc.get("candidates", doc.get("options"))')
    assert fields.options == "options|candidates"
    assert read_options({"candidates": ["x", "y"]}, fields.options) == ["x", "y"]


def test_a_doc_to_text_naming_a_field_is_the_question_field():
    fields = detect_fields({"doc_to_text": "question_text", "doc_to_target": "answer-key"}, 'doc["query"]')
    assert (fields.question, fields.answer) == ("question_text", "answer-key")  # a hyphen is allowed in a name


@pytest.mark.parametrize("target", [Function("utils.doc_to_target"), "{{ answer_idx | upper }}", "", 3, None])
def test_a_doc_to_target_that_is_no_field_name_leaves_the_answer_to_detection(target):
    fields = detect_fields({"doc_to_target": target}, 'def f(doc):\n    return doc["gt_answer"]')
    assert fields.answer == "gt_answer"


@pytest.mark.parametrize("target", ["{{reference_answer}}", "{{ reference_answer }}"])
def test_a_doc_to_target_template_of_one_field_names_that_field(target):
    fields = detect_fields({"doc_to_target": target}, 'def f(doc):\n    return doc["gt_answer"]')
    assert fields.answer == "reference_answer"


def test_a_doc_to_target_function_is_not_second_guessed_by_a_name_it_merely_mentions():
    # ExtremeWhenBench's scorer logs {"gt": ...}; its doc_to_target reads correct_interval: the function gives it
    source = 'def ewb_process_results(doc, results):\n    return {"rec": {"gt": list(gt), "iou": 0.0}}'
    fields = detect_fields({"doc_to_target": Function("utils.ewb_doc_to_target")}, source)
    assert fields.answer is None
    assert detect_fields({}, source).answer == "gt"  # without one, the mention is the best guess


def test_the_first_tier_that_reads_a_field_wins_over_later_ones():
    own = 'def f(doc):\n    return doc["answer_idx"], doc["video_id"]'
    module = 'def g(doc):\n    return doc["answer"], doc["question_idx"], doc["skill"]'
    fields = detect_fields({}, [own, module])
    assert fields.answer == "answer_idx"  # read in the first tier; "answer" (more likely) only in the second
    assert fields.question_id == "question_idx" and fields.task_type == "skill"  # only the second reads these
    assert fields.video_id == "video_id"


def test_alternatives_are_ordered_most_likely_first_whatever_the_source_order():
    fields = detect_fields({}, 'doc["choices"], doc["options"], doc[f"option_{k}"], doc["label"], doc["answer"]')
    # KNOWN_FIELDS order: options before choices, answer before label; numbered options come last.
    assert fields.options == "options|choices|option_{i}"
    assert fields.answer == "answer|label"


def test_only_a_variable_named_doc_is_read():
    fields = detect_fields({}, 'def f(raw_doc, mydoc):\n    return raw_doc["qid"], mydoc["options"]')
    assert fields.question_id is None and fields.options is None


def test_a_mentioned_name_is_the_fallback_of_a_field_no_tier_reads():
    own = 'def f(doc):\n    return doc["question"]'
    module = 'COLUMNS = ("category", "video_name")'
    fields = detect_fields({}, [own, module])
    assert (fields.task_type, fields.video_id) == ("category", "video_name")


def test_a_source_with_no_known_names_finds_no_fields():
    assert detect_fields({}, "def f(doc):\n    return doc['zzz']") == Fields()
    assert detect_fields({}, []) == Fields()


def test_every_field_of_a_spec_has_known_names():
    assert set(KNOWN_FIELDS) == {"question_id", "options", "answer", "video_id", "task_type", "question"}
    assert all(KNOWN_FIELDS[f] for f in KNOWN_FIELDS)


@pytest.mark.parametrize(
    ("function", "field"),
    [("target_of", "A"), ("target_got", "gt_text"), ("target_built", None), ("target_of_another", None)],
)
def test_a_doc_to_target_returning_one_field_as_it_is_names_the_answer_field(utils, function, field):
    assert returned_field(f"{utils}.{function}") == field
    config = {"doc_to_target": Function(f"{utils}.{function}")}
    assert detect_fields(config, "").answer == field


@pytest.mark.parametrize(
    ("function", "constant"),
    [("target_for_submission", True), ("target_maybe", False), ("target_of", False), ("missing", False)],
)
def test_a_doc_to_target_returning_a_constant_is_told_apart(utils, function, constant):
    assert returns_constant(f"{utils}.{function}") is constant
