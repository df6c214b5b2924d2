"""vdg_tasks.lmms.dataset_fields: the dataset fields a hub benchmark's task reads, and what to say when the hub fails.

``<benchmark>__dataset_path|kwargs|name`` resolved against a ``$VDG_LOCAL_DATA`` made in tmp (the local copy's
files; the hub's fields, with a warning, when the folder lacks the benchmark; an error for a copy without
question files; an AttributeError for a name that is no hub benchmark's field), ``missing_dataset_message`` (the
root cause of a failed load), ``hub_problem`` (a local copy, a cached download, an offline or unreachable hub)
and the stop of an lmms-eval run. The hub is never asked: ``HF_HUB_OFFLINE`` is set and the one call that
would ask it is replaced. Expected hub values are copied from lmms-eval's own task YAMLs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import huggingface_hub
import huggingface_hub.constants
import pytest
from huggingface_hub.errors import HfHubHTTPError
from loguru import logger

import vdg_tasks.data.local_copies as local_copies
import vdg_tasks.lmms.dataset_fields as sources
from tests.helpers.offline_hub import no_hub
from vdg_tasks.data.benchmarks import BENCHMARKS

#: lmms_eval/tasks/videomme/videomme.yaml
VIDEOMME_HUB = {
    "dataset_path": "lmms-eval/Video-MME",
    "dataset_kwargs": {"token": True, "cache_dir": "videomme", "video": True},
    "dataset_name": None,
}
#: lmms_eval/tasks/mvbench/_default_template_yaml and mvbench_action_count.yaml (test_split: train)
MVBENCH_HUB = {
    "dataset_path": "OpenGVLab/MVBench",
    "dataset_kwargs": {
        "token": True,
        "cache_dir": "mvbench_video",
        "video": True,
        "revision": "video",
        "create_link": True,
    },
    "dataset_name": "action_count",
}


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch):
    """No hub, empty hub caches in tmp, no local copies, not an lmms-eval run; the per-process caches cleared."""
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    yield from no_hub(tmp_path, monkeypatch)


@pytest.fixture
def hub_says(monkeypatch):
    """Replace the one question to the hub: ``hub_says(exc)`` makes it raise ``exc`` (None: it answers)."""
    calls = []

    def install(exc: BaseException | None):
        def dataset_info(self, repo_id, timeout=None):
            calls.append(repo_id)
            if exc is not None:
                raise exc

        monkeypatch.setattr(huggingface_hub.HfApi, "dataset_info", dataset_info)
        return calls

    return install


@pytest.fixture
def warnings():
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="WARNING")
    yield messages
    logger.remove(sink)


def local_copy(root: Path, folder: str, question_file: str) -> Path:
    path = root / folder / question_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")  # only its name is read here
    return path


def http_error(message: str) -> HfHubHTTPError:
    error = HfHubHTTPError.__new__(HfHubHTTPError)  # the hub's answer; no HTTP response needed to raise it
    Exception.__init__(error, message)
    return error


# -- the dataset fields ---------------------------------------------------------------------------------------


def test_without_a_local_copy_the_fields_are_lmms_eval_s_own():
    for field, value in VIDEOMME_HUB.items():
        assert getattr(sources, f"videomme__{field}") == value, field
    for field, value in MVBENCH_HUB.items():
        assert getattr(sources, f"mvbench_action_count__{field}") == value, field


def test_a_local_copy_of_video_mme_is_read_from_its_parquet_files(tmp_path, monkeypatch, warnings):
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path / "data"))
    parquet = local_copy(tmp_path / "data", "videomme", "videomme/test-00000-of-00001.parquet")
    assert sources.videomme__dataset_path == "parquet"
    assert sources.videomme__dataset_kwargs == {"data_files": {"test": [str(parquet)]}}  # Video-MME's test_split
    assert sources.videomme__dataset_name is None
    assert warnings == []


def test_a_local_copy_of_an_mvbench_sub_task_is_read_under_lmms_eval_s_split(tmp_path, monkeypatch):
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path))
    questions = local_copy(tmp_path, "mvbench", "json/action_count.json")
    assert sources.mvbench_action_count__dataset_path == "json"
    assert sources.mvbench_action_count__dataset_kwargs == {"data_files": {"train": [str(questions)]}}
    assert sources.mvbench_action_count__dataset_name is None


def test_a_local_folder_without_the_benchmark_reads_the_hub_and_warns_with_the_near_miss(
    tmp_path, monkeypatch, warnings
):
    root = tmp_path / "data"
    local_copy(root / "nested", "videomme", "videomme/test.parquet")  # one level too deep
    monkeypatch.setenv("VDG_LOCAL_DATA", str(root))
    assert sources.videomme__dataset_path == VIDEOMME_HUB["dataset_path"]
    assert warnings == [
        "vdg: videomme is read from the hub dataset lmms-eval/Video-MME, which lmms-eval downloads: "
        f"VDG_LOCAL_DATA={root} holds {root / 'nested' / 'videomme'}: set VDG_LOCAL_DATA={root / 'nested'}"
    ]


def test_a_local_copy_without_question_files_raises_and_says_so_once(tmp_path, monkeypatch, warnings):
    (tmp_path / "egoschema" / "videos").mkdir(parents=True)
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path))
    for _ in range(2):
        with pytest.raises(sources.LocalCopyError, match=re.escape(f"no question file in {tmp_path / 'egoschema'}")):
            _ = sources.egoschema_subset__dataset_path
    assert len(warnings) == 1 and warnings[0].startswith("vdg: VDG_LOCAL_DATA: no question file in")
    assert "looked for Subset/ or Subset.parquet|.jsonl|.json" in warnings[0]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("videomme__doc_to_text", "has no attribute 'videomme__doc_to_text'$"),  # not a dataset field
        ("dataset_path", "has no attribute 'dataset_path'$"),  # no benchmark part
        ("vdgsynth__dataset_path", r"\(no hub benchmark 'vdgsynth'\)"),  # read from vdg's own file
        ("infinibench_ga__dataset_kwargs", r"\(no hub benchmark 'infinibench_ga'\)"),
        ("mvbench__dataset_path", r"\(no hub benchmark 'mvbench'\)"),  # a group, not a spec
    ],
)
def test_a_name_that_is_no_hub_benchmarks_field_is_no_attribute(name, message):
    with pytest.raises(AttributeError, match=message):
        getattr(sources, name)
    assert not hasattr(sources, name)


def test_the_local_copy_names_are_those_of_local_copies():
    for name in sources.__all__:
        if name not in ("hub_problem", "missing_dataset_message"):
            assert getattr(sources, name) is getattr(local_copies, name), name


# -- missing_dataset_message ---------------------------------------------------------------------------------


def failed_load(root: BaseException) -> Exception:
    """lmms-eval's download error: tenacity's RetryError raised from the hub's error ``root``."""
    try:
        try:
            raise root
        except BaseException as exc:
            raise RuntimeError("RetryError[<Future state=finished raised OSError>]") from exc
    except RuntimeError as outer:
        return outer


def test_a_load_that_failed_by_an_os_error_names_the_dataset_the_reason_and_the_local_layout():
    message = sources.missing_dataset_message("videomme", failed_load(OSError("Connection   refused\n by host")))
    layout = BENCHMARKS["videomme"].local
    assert message == (
        "videomme: the dataset lmms-eval/Video-MME was not found. lmms-eval downloads it from the Hugging Face hub, "
        "which failed here (OSError: Connection refused by host).\n"  # the reason's whitespace collapsed
        "To read a local copy instead, set VDG_LOCAL_DATA to the folder holding videomme/ (VDG_LOCAL_DATA is not "
        f"set), laid out as:\n{local_copies.layout_tree(layout)}"
    )


def test_the_message_names_a_configs_dataset_by_path_and_name():
    message = sources.missing_dataset_message("egoschema_subset", ConnectionError("down"))
    # lmms_eval/tasks/egoschema: dataset_path lmms-eval/egoschema, dataset_name "Subset"
    assert message.startswith("egoschema_subset: the dataset lmms-eval/egoschema (Subset) was not found.")
    assert "(ConnectionError: down)" in message  # ConnectionError is an OSError


def test_the_reason_is_cut_at_300_characters_and_an_empty_one_is_the_errors_type():
    long = sources.missing_dataset_message("videomme", OSError("x" * 400))
    assert f"(OSError: {'x' * 300})" in long
    assert "(TimeoutError: TimeoutError)" in sources.missing_dataset_message("videomme", TimeoutError())


def test_an_implicit_context_is_followed_to_the_root_cause():
    try:
        try:
            raise FileNotFoundError("no such dataset")
        except FileNotFoundError:
            raise ValueError("while loading") from None  # suppressed, yet kept as __context__
    except ValueError as exc:
        assert "(FileNotFoundError: no such dataset)" in sources.missing_dataset_message("videomme", exc)


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("a bad config"),
        failed_load(KeyError("split")),
        failed_load(failed_load(ValueError("root")).__cause__),
    ],
)
def test_a_load_that_failed_otherwise_than_by_an_os_error_has_no_message(exc):
    assert sources.missing_dataset_message("videomme", exc) is None


def test_a_cycle_of_causes_ends():
    first, second = RuntimeError("a"), RuntimeError("b")
    first.__cause__, second.__cause__ = second, first
    assert sources.missing_dataset_message("videomme", first) is None


def test_no_message_for_a_benchmark_with_a_local_copy_or_no_hub_dataset(tmp_path, monkeypatch):
    assert sources.missing_dataset_message("vdgsynth", OSError("x")) is None
    assert sources.missing_dataset_message("no_such_benchmark", OSError("x")) is None
    local_copy(tmp_path, "videomme", "videomme.parquet")
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path))
    assert sources.missing_dataset_message("videomme", OSError("x")) is None


# -- hub_problem ----------------------------------------------------------------------------------------------


def test_an_unreachable_hub_is_a_problem_asked_once_per_process(hub_says):
    calls = hub_says(ConnectionError("no route to host"))
    problem = sources.hub_problem("videomme")
    assert problem.startswith("videomme: the dataset lmms-eval/Video-MME was not found.")
    assert "(ConnectionError: no route to host)" in problem
    assert sources.hub_problem("videomme") == problem and calls == ["lmms-eval/Video-MME"]


def test_a_hub_that_answers_even_with_a_refusal_is_no_problem(hub_says):
    hub_says(None)
    assert sources.hub_problem("videomme") is None
    sources._unreachable.cache_clear()
    hub_says(http_error("401 gated dataset"))
    assert sources.hub_problem("videomme") is None  # lmms-eval's own message says what to do


def test_with_datasets_offline_the_hub_is_not_asked(hub_says, monkeypatch):
    calls = hub_says(None)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    assert "(ConnectionError: HF_DATASETS_OFFLINE is set and the dataset is not cached)" in sources.hub_problem(
        "videomme"
    )
    assert calls == []


@pytest.mark.parametrize(
    ("cache", "entry"),
    [
        ("hf-hub", "datasets--lmms-eval--Video-MME"),  # huggingface_hub's name for the download
        ("hf-datasets", "lmms-eval___video-mme"),  # datasets' name for the prepared dataset
    ],
)
def test_a_cached_download_is_no_problem_and_the_hub_is_not_asked(tmp_path, hub_says, cache, entry):
    calls = hub_says(ConnectionError("offline"))
    (tmp_path / cache / entry).mkdir(parents=True)
    assert sources.hub_problem("videomme") is None and calls == []


def test_another_datasets_cache_is_not_this_ones(tmp_path, hub_says):
    hub_says(ConnectionError("offline"))
    (tmp_path / "hf-hub" / "datasets--lmms-eval--egoschema").mkdir(parents=True)
    assert sources.hub_problem("videomme") is not None


def test_a_local_copy_or_a_local_benchmark_is_never_a_hub_problem(tmp_path, monkeypatch, hub_says):
    calls = hub_says(ConnectionError("offline"))
    assert sources.hub_problem("vdgsynth") is None and sources.hub_problem("no_such_benchmark") is None
    local_copy(tmp_path / "data", "videomme", "videomme.jsonl")
    monkeypatch.setenv("VDG_LOCAL_DATA", str(tmp_path / "data"))
    assert sources.hub_problem("videomme") is None and calls == []


# -- the stop of an lmms-eval run -----------------------------------------------------------------------------


@pytest.mark.parametrize("program", ["/venv/bin/lmms-eval", "lmms_eval"])
def test_an_lmms_eval_run_with_no_dataset_stops_with_status_2_and_the_message(monkeypatch, capsys, hub_says, program):
    hub_says(ConnectionError("no route to host"))
    monkeypatch.setattr(sys, "argv", [program, "--tasks", "videomme_vdg_black"])
    with pytest.raises(SystemExit) as stop:
        _ = sources.videomme__dataset_kwargs
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("vdg: videomme: the dataset lmms-eval/Video-MME was not found.")
    assert err == f"vdg: {sources.hub_problem('videomme')}\n"


def test_outside_an_lmms_eval_run_the_hub_is_not_asked(hub_says):
    calls = hub_says(ConnectionError("no route to host"))
    assert sources.videomme__dataset_path == VIDEOMME_HUB["dataset_path"] and calls == []
