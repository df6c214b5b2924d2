"""postprocess.reading.run_labels: who wrote a run: ``NAME=DIR`` labels, lmms-eval's model_args, the model's label,
settings, precision and frames per video, the model behind a results file, the extra columns of a table of records,
and finding the results file and samples logs (each refusal naming the file)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from postprocess.reading.files import LogError, samples_logs
from postprocess.reading.frame import EXTRA_COLUMNS
from postprocess.reading.lmms_eval_logs import load_frame
from postprocess.reading.run_labels import (
    RunDir,
    extra_columns,
    frames_setting,
    is_quantized,
    mark_quantized,
    model_label,
    model_settings,
    model_source,
    parse_model_args,
    precision,
    results_of,
    text_columns,
)
from tests.helpers.fakelogs import two_conditions

# ----------------------------------------------------------------------------------- RunDir.parse and model_label


def test_label_from_command_line_and_from_pretrained(tmp_path):
    run = two_conditions(tmp_path)
    assert set(load_frame([RunDir.parse(f"mine={run}")]).model) == {"mine"}
    assert (
        model_label({"model": "qwen2_vl", "model_args": "pretrained=/w/Qwen2-VL-7B/,device=cpu"})
        == "qwen2_vl:Qwen2-VL-7B"
    )


@pytest.mark.parametrize(
    ("text", "path", "label"),
    [
        ("mine=runs/a", "runs/a", "mine"),
        ("a=b=c", "b=c", "a"),  # the label ends at the first "="
        ("=runs/a", "=runs/a", None),  # no name before "=": a path
        ("runs/a", "runs/a", None),
    ],
)
def test_name_equals_dir_labels_a_folder(tmp_path, monkeypatch, text, path, label):
    monkeypatch.chdir(tmp_path)
    assert RunDir.parse(text) == RunDir(Path(path), label)


def test_an_existing_folder_whose_name_holds_an_equals_sign_is_not_split(tmp_path):
    folder = tmp_path / "lr=1e-4"
    folder.mkdir()
    assert RunDir.parse(str(folder)) == RunDir(folder, None)


def test_a_name_too_long_for_the_filesystem_is_parsed_not_raised():
    text = "m=" + "a" * 300  # Path.exists raised OSError (File name too long)
    assert RunDir.parse(text) == RunDir(Path("a" * 300), "m")


# ----------------------------------------------------------------------------------- parse_model_args


def test_model_args_text_is_split_on_commas_and_the_first_equals_sign():
    assert parse_model_args(" pretrained = /w/M ,flag,max_num_frames=8,gen=a=b") == {
        "pretrained": "/w/M",
        "max_num_frames": "8",
        "gen": "a=b",
    }  # "flag" has no value: left out


def test_model_args_as_a_mapping_are_taken_as_text():
    assert parse_model_args({"max_num_frames": 8, "x": None}) == {"max_num_frames": "8", "x": "None"}


@pytest.mark.parametrize("empty", [None, "", ",,"])
def test_no_model_args_parse_to_nothing(empty):
    assert parse_model_args(empty) == {}


# ----------------------------------------------------------------------------------- precision and its mark


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"quantization": " NF4 "}, "nf4"),
        ({"quantization": "int4"}, "int4"),
        ({"quantization": "awq", "dtype": "float16"}, "fp16"),  # not one the reader knows: the dtype then
        ({"load_in_4bit": "True"}, "nf4"),  # bitsandbytes' default 4-bit type
        ({"load_in_4bit": "1", "bnb_4bit_quant_type": "FP4"}, "fp4"),
        ({"load_in_8bit": "true"}, "int8"),
        ({"load_in_4bit": "false", "torch_dtype": "torch.bfloat16"}, "bf16"),
        ({"dtype": "half"}, "fp16"),
        ({"dtype": "float", "torch_dtype": "bf16"}, "fp32"),  # dtype is read before torch_dtype
        ({"dtype": "auto"}, ""),
        ({}, ""),
    ],
)
def test_precision_is_the_quantization_else_the_dtype(args, expected):
    assert precision(args) == expected


def test_only_a_quantization_is_marked_and_only_once():
    assert [is_quantized(v) for v in ("nf4", "fp4", "int8", "int4", "bf16", "")] == [True] * 4 + [False] * 2
    assert mark_quantized("m", "nf4") == "m†nf4"
    assert mark_quantized("m†nf4", "nf4") == "m†nf4"
    assert mark_quantized("m", "bf16") == "m" and mark_quantized("m", "") == "m"


# ----------------------------------------------------------------------------------- model_label


@pytest.mark.parametrize(
    ("config", "label"),
    [
        ({"model": "qwen2_vl", "model_args": "pretrained=/w/Qwen2-VL-7B/,device=cpu"}, "qwen2_vl:Qwen2-VL-7B"),
        ({"model": "openai", "model_args": {"model": "gpt-4o"}}, "openai:gpt-4o"),  # "model" when no pretrained
        ({"model": "x", "model_args": "pretrained=x"}, "x"),  # the checkpoint is the model name: said once
        ({"model": "q", "model_args": "pretrained=Org/Big,load_in_4bit=True"}, "q:Big†nf4"),
        ({"model": "q", "model_args": "pretrained=Org/Big,dtype=bf16"}, "q:Big"),  # a dtype is not marked
        ({}, "model"),
    ],
)
def test_the_label_is_the_model_name_and_checkpoint_basename_marked_when_quantized(config, label):
    assert model_label(config) == label


# ----------------------------------------------------------------------------------- model_settings


def test_settings_leave_out_placement_sort_the_rest_and_append_gen_kwargs():
    config = {
        "model_args": "pretrained=x,device=cuda:0,batch_size=4,max_num_frames=8,attn_implementation=sdpa,device_map=a",
        "gen_kwargs": "temperature=0",
    }
    assert model_settings(config) == "max_num_frames=8,pretrained=x;gen_kwargs=temperature=0"
    assert model_settings({"model_args": "b=2,a=1", "gen_kwargs": ""}) == "a=1,b=2"
    assert model_settings({}) == ""


def test_settings_are_kept_as_read_so_two_settings_never_read_alike():
    # token_strategy is llava_onevision's; a redacted read made single and multiple one setting. Secrets are hidden
    # where the settings are written or printed (postprocess.reading.frame_checks, the report), not here.
    single = model_settings({"model_args": "pretrained=x,token_strategy=single,api_key=K1"})
    multiple = model_settings({"model_args": "pretrained=x,token_strategy=multiple,api_key=K1"})
    assert single == "api_key=K1,pretrained=x,token_strategy=single" and single != multiple
    assert model_source({"config": {"model": "m", "model_args": "pretrained=https://u:K2@hub/x"}}) == (
        "m https://u:K2@hub/x"
    )


# ----------------------------------------------------------------------------------- frames_setting


@pytest.mark.parametrize(
    ("settings", "frames"),
    [
        ("max_num_frames=32,pretrained=x", 32),
        ("frames=8,max_num_frames=16", 16),  # max_num_frames comes first in FRAME_ARGS
        ("nframes=auto,num_frames=12", 12),  # a value that is no count is passed over
        ("pretrained=x;gen_kwargs=max_frames=4", None),  # gen_kwargs (after ";") are not model args
        ("max_num_frames= 24 ", 24),
        ("", None),
    ],
)
def test_frames_are_read_from_the_first_frame_argument_with_a_count(settings, frames):
    assert frames_setting(settings) == frames


# ----------------------------------------------------------------------------------- model_source


@pytest.mark.parametrize(
    ("results", "source"),
    [
        ({"config": {"model": "qwen2_vl", "model_args": "pretrained=Qwen/Qwen2-VL-2B/"}}, "qwen2_vl Qwen/Qwen2-VL-2B"),
        ({"config": {"model": "q", "model_args": "pretrained=/w/base,peft=/w/lora"}}, "q /w/lora"),  # peft first
        ({"model_name": "Org/M/", "config": {"model": "q", "model_args": "pretrained=/w/x"}}, "q Org/M"),
        ({"model_name": "Org/M"}, "Org/M"),
        ({"config": {"model": "q", "model_args": "device=cpu"}}, "q"),
        ({}, ""),
    ],
)
def test_the_model_behind_a_results_file_is_its_class_and_checkpoint(results, source):
    assert model_source(results) == source


# ----------------------------------------------------------------------------------- extra_columns / text_columns


def test_extra_columns_read_each_field_blank_where_absent():
    raw = pd.DataFrame(
        {
            "character": ["Ann", None],
            "duration_s": ["12.5", "long"],
            "provenance": [{"export": {"name": "synth", "revision": "r1"}}, "not a mapping"],
            "domain": ["  Knowledge ", None],
        }
    )
    settings = pd.Series(["max_num_frames=8,dtype=bf16", "nframes=16,load_in_8bit=True"])
    out = extra_columns(raw, settings)
    assert list(out) == list(EXTRA_COLUMNS)
    assert list(out["character"]) == ["Ann", ""] and list(out["swap_to"]) == ["", ""]
    assert out["duration_s"].iloc[0] == 12.5 and math.isnan(out["duration_s"].iloc[1])
    assert out["frames"].tolist() == [8, 16] and list(out["precision"]) == ["bf16", "int8"]
    assert list(out["export"]) == ["synth@r1", ""]  # name@revision
    assert list(out["domain"]) == ["Knowledge", ""] and list(out["sampling"]) == ["", ""]
    assert out["judge_score"].isna().all() and list(out["judge"]) == ["", ""]


def test_extra_columns_with_one_settings_string_and_no_fields():
    raw = pd.DataFrame(index=[3, 4])
    out = extra_columns(raw, "max_frames_num=4,quantization=int8;gen_kwargs=x")
    assert out["frames"].tolist() == [4, 4] and list(out["precision"]) == ["int8", "int8"]
    assert out["duration_s"].isna().all() and list(out["export"]) == ["", ""]
    assert all(list(column.index) == [3, 4] for column in out.values())
    assert extra_columns(raw)["frames"].isna().all()  # no settings: no frame count


def test_an_export_without_a_mapping_is_blank():
    raw = pd.DataFrame({"provenance": [{"export": "synth"}, {"source_digest": "d"}, None]})
    assert list(extra_columns(raw)["export"]) == ["", "", ""]


def test_text_columns_give_text_blank_for_missing_values_and_absent_fields():
    raw = pd.DataFrame({"n": pd.Series([1, 2.5, None], dtype=object), "s": pd.Series(["a", "b", "c"], dtype=str)})
    out = text_columns(raw, ["n", "s", "absent"])
    assert list(out["n"]) == ["1", "2.5", ""] and list(out["s"]) == ["a", "b", "c"]
    assert list(out["absent"]) == ["", "", ""]


# ------------------------------------------------------------------------------------ results_of / samples_logs


def _log(folder: Path, name: str = "20261130_120000_samples_vdgsynth_vdg_orig.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("{}\n")
    return path


def test_the_results_file_beside_a_samples_log_is_read(tmp_path):
    log = _log(tmp_path)
    data = {"config": {"model": "m", "model_args": ""}, "results": {}}
    (tmp_path / "20261130_120000_results.json").write_text(json.dumps(data))
    assert results_of(log) == data


def test_a_file_not_named_like_a_samples_log_is_refused(tmp_path):
    path = _log(tmp_path, "predictions.jsonl")
    with pytest.raises(
        LogError, match=rf"^{re.escape(str(path))}: not an lmms-eval samples file \(<stamp>_samples_<task>\.jsonl\)$"
    ):
        results_of(path)


def test_a_samples_log_without_its_results_file_is_refused_naming_it(tmp_path):
    log = _log(tmp_path)
    with pytest.raises(
        LogError, match=rf"^{re.escape(str(log))}: no 20261130_120000_results\.json beside it, so the model"
    ):
        results_of(log)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"{not json", "Expecting property name"),
        (b"[1, 2]", "'config'"),  # JSON, but no object
        (b'{"config": "m"}', "'config'"),  # config is no object
        (b'{"config": {"model": "\xff"}}', "can't decode byte 0xff"),
    ],
)
def test_an_unreadable_results_file_is_refused_naming_it(tmp_path, content, why):
    log = _log(tmp_path)
    results = tmp_path / "20261130_120000_results.json"
    results.write_bytes(content)
    with pytest.raises(LogError, match=rf"^{re.escape(str(results))}: unreadable lmms-eval results file \(.*{why}"):
        results_of(log)


def test_samples_files_of_a_file_is_that_file_and_of_a_folder_every_log_under_it_sorted(tmp_path):
    b = _log(tmp_path / "run" / "b" / "deep", "x_samples_u.jsonl")
    a = _log(tmp_path / "run" / "a", "y_samples_t.jsonl")
    _log(tmp_path / "run", "notes.jsonl")  # not a samples log
    assert samples_logs(tmp_path / "run") == [a, b]  # "a/..." sorts before "b/..."
    assert samples_logs(b) == [b]


def test_a_missing_path_or_a_folder_without_logs_is_refused(tmp_path):
    with pytest.raises(LogError, match=rf"^{re.escape(str(tmp_path / 'gone'))}: no such file or folder$"):
        samples_logs(tmp_path / "gone")
    (tmp_path / "empty").mkdir()
    with pytest.raises(LogError, match=r"empty: holds no lmms-eval samples log .*was --log_samples set\?$"):
        samples_logs(tmp_path / "empty")
