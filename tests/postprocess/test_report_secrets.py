"""Secret-looking settings (``api_key=``, ``access_key=``, ``auth=``, ``hf_token=``, a URL's credentials) never
reach a message or a file vdg writes: the report (md, html, json, CSVs), its refusals, provenance, the cache's
sidecars, and hostile run labels write nothing outside ``--out``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from postprocess.reading.files import LogError
from postprocess.reading.frame_checks import check_settings
from postprocess.reading.run_labels import model_settings, model_source
from tests.helpers.fakelogs import sample, write_run
from tests.helpers.frames import tidy_frame, tidy_row
from vdg_tasks.cli import main as vdg_main
from vdg_tasks.perturb.provenance import provenance

SECRETS = "api_key=SECRET1,access_key=SECRET2,auth=SECRET3,hf_token=SECRET4,base_url=https://u:SECRET5@h"
FAST = ["--no-plots", "--resamples", "100"]


def _run(folder: Path, model_args: str, model: str = "vdg_probe") -> Path:
    return write_run(
        folder,
        model,
        {
            "vdgsynth_vdg_orig": [sample("q1-1", "orig", "A"), sample("q2-1", "orig", "B")],
            "vdgsynth_vdg_black": [sample("q1-1", "black", "B"), sample("q2-1", "black", "B")],
        },
        model_args=f"pretrained=org/model,{model_args}",
    )


def _files_holding_a_secret(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and b"SECRET" in p.read_bytes()] + [
        str(p) for p in root.rglob("*SECRET*")
    ]


def test_the_report_writes_no_secret_anywhere(tmp_path, capsys):
    # Two labelled runs of one model at two frame budgets: the settings reach the report's tables.
    a = _run(tmp_path / "runs" / "a", f"{SECRETS},max_num_frames=32")
    b = _run(tmp_path / "runs" / "b", f"{SECRETS},max_num_frames=16")
    out = tmp_path / "report"
    assert vdg_main(["report", f"m32={a}", f"m16={b}", "--out", str(out), *FAST]) == 0
    captured = capsys.readouterr()
    assert (out / "report.md").is_file() and (out / "report.json").is_file()
    assert _files_holding_a_secret(out) == []
    assert "SECRET" not in captured.out + captured.err
    # The frame (in memory: vdg's Python API) keeps the settings as read, so runs are compared on what they were.
    from postprocess.reading.lmms_eval_logs import load_frame
    from postprocess.reading.run_labels import RunDir

    frame = load_frame(runs=[RunDir(a, "m32"), RunDir(b, "m16")])
    assert set(frame["model_settings"].str.contains("api_key=SECRET1")) == {True}


#: Secrets the first redaction missed: one-word names, a Basic header, a query string, a --flag and its value.
MISSED = "secretkey=SECRET_A,accesstoken=SECRET_B,headers=Authorization: Basic SECRET_C"
ERROR = "HTTPError: GET https://hub/x?token=SECRET_D failed; Authorization: Basic SECRET_E; --api-key SECRET_F"


def test_no_secret_of_any_spelling_reaches_the_report(tmp_path, capsys):
    run = write_run(
        tmp_path / "runs" / "a",
        "vdg_probe",
        {
            "vdgsynth_vdg_orig": [sample("q1-1", "orig", "A"), sample("q2-1", "orig", "B")],
            "vdgsynth_vdg_black": [sample("q1-1", "black", None, error=ERROR), sample("q2-1", "black", "B")],
        },
        model_args=f"pretrained=https://u:SECRET_G@hub/org/model,{MISSED},max_num_frames=8",
    )
    out = tmp_path / "report"
    assert vdg_main(["report", f"m={run}", "--out", str(out), *FAST]) == 0
    captured = capsys.readouterr()
    assert _files_holding_a_secret(out) == [] and "SECRET" not in captured.out + captured.err
    assert "@hub/org/model" in (out / "sources.csv").read_text()  # the model behind the file, its credentials hidden


def test_runs_differing_in_a_setting_that_only_looks_secret_are_not_pooled(tmp_path, capsys):
    # llava_onevision's token_strategy was read redacted: single and multiple were pooled as one model's answers.
    a = _run(tmp_path / "runs" / "a", "token_strategy=single,max_frames_num=32", model="llava_onevision")
    b = _run(tmp_path / "runs" / "b", "token_strategy=multiple,max_frames_num=32", model="llava_onevision")
    assert vdg_main(["report", str(a), str(b), "--out", str(tmp_path / "out"), *FAST]) == 2
    err = capsys.readouterr().err
    assert "different settings" in err and "token_strategy=single" in err and "token_strategy=multiple" in err


def test_a_failure_message_is_always_said_in_one_line(capsys, monkeypatch):
    from vdg_tasks.cli import common

    assert common.fail("derive", ValueError("a=" * 600 + " api_key=SECRET1")) == 2
    err = capsys.readouterr().err
    assert err.startswith("vdg derive: a=a=") and "SECRET" not in err and "<redacted>" in err

    def broken(text):
        raise RecursionError("deep")

    monkeypatch.setattr(common, "redact", broken)
    assert common.fail("derive", ValueError("api_key=SECRET1")) == 2
    err = capsys.readouterr().err
    assert err == "vdg derive: failed (ValueError; its message is not shown: it could not be checked for secrets)\n"


def test_a_command_given_a_deeply_nested_argument_fails_in_one_line(tmp_path, capsys):
    # `vdg derive "a=a=...=" ...` ended in a RecursionError traceback: fail() redacts what it says.
    nested = "/".join(["a=" * 60] * 10)  # 600 levels, in file names of a length the filesystem takes
    code = vdg_main(["report", str(tmp_path / nested), "--out", str(tmp_path / "x"), *FAST])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.startswith("vdg report:") and err.count("\n") == 1


def test_the_hooks_log_and_record_no_secret(caplog, monkeypatch):
    from loguru import logger

    from vdg_tasks.lmms import hooks

    sink = logger.add(caplog.handler, level="WARNING", format="{message}")
    try:
        failed = hooks._exported_visual({"name": "e", "error": "GET https://u:SECRET1@hub/x?token=SECRET2"})
        assert "SECRET" not in str(failed.error) and "@hub/x" in str(failed.error)

        def refused(info):
            raise OSError(f"GET https://hub/{info['video_file']}?sig=SECRET3 failed")

        monkeypatch.setattr(hooks, "exported_row_video", refused)
        visual = hooks._exported_visual({"name": "e", "revision": "r", "video_file": "v.mp4"})
        assert "SECRET" not in str(visual.error) and "sig=<redacted>" in str(visual.error)

        def broken(*args):
            raise OSError("Authorization: Basic SECRET4 refused")

        import vdg_tasks.perturb.cache as cache

        monkeypatch.setattr(cache, "materialize", broken)
        hooks._resolve.cache_clear()
        request = type("R", (), {"applied": None, "condition": type("C", (), {"name": "black"})(), "source": "s"})
        request.video_id = "hf_token=SECRET5"
        resolved = hooks._resolve.__wrapped__("b", request())
        assert "SECRET" not in str(resolved.error)
    finally:
        logger.remove(sink)
        hooks._resolve.cache_clear()
    assert "SECRET" not in caplog.text and "<redacted>" in caplog.text


def test_the_different_settings_refusal_names_no_secret(tmp_path, capsys):
    a = _run(tmp_path / "runs" / "a", f"{SECRETS},max_num_frames=32")
    b = _run(tmp_path / "runs" / "b", f"{SECRETS},max_num_frames=16")
    out = tmp_path / "report"
    assert vdg_main(["report", str(a), str(b), "--out", str(out), *FAST]) == 2
    err = capsys.readouterr().err
    assert "different settings" in err and "max_num_frames=16" in err and "<redacted>" in err
    assert "SECRET" not in err and "Traceback" not in err
    assert not out.exists() or _files_holding_a_secret(out) == []


def test_a_frame_built_elsewhere_has_its_settings_redacted_in_the_refusal():
    frame = tidy_frame(
        [
            tidy_row("m", "orig", "q1", model_settings="apikey=SECRET1,max_num_frames=32", source="a:1"),
            tidy_row(
                "m", "black", "q1", model_settings="access_key=SECRET2,auth=SECRET3,max_num_frames=16", source="b:1"
            ),
        ]
    )
    with pytest.raises(LogError, match="different settings") as caught:
        check_settings(frame)
    assert "SECRET" not in str(caught.value) and "max_num_frames=16" in str(caught.value)


def test_model_settings_and_source_are_read_whole_and_redacted_where_shown():
    # Read whole, so two runs are compared on what they were run with (postprocess.reading.frame_checks redacts its
    # words).
    config = {"model": "openai", "model_args": f"model_version=gpt,{SECRETS},visual_key=v", "gen_kwargs": "auth=S6"}
    assert "api_key=SECRET1" in model_settings(config) and "auth=S6" in model_settings(config)
    source = model_source({"config": {"model": "m", "model_args": "pretrained=https://u:SECRET7@hub/org/x"}})
    assert source == "m https://u:SECRET7@hub/org/x"


def test_provenance_records_no_secret():
    record = provenance(
        "digest",
        "black",
        {"api_key": "SECRET1", "n": 3},
        2,
        {"vdg": "1"},
        export={"name": "e", "revision": "r", "repo": "https://u:SECRET2@hub/x"},
        declared={"module": "m", "source_digest": "d", "hf_token": "SECRET3"},
    )
    assert "SECRET" not in json.dumps(record)
    assert record["params"]["n"] == 3 and record["export"]["name"] == "e" and record["source_digest"] == "digest"


def test_the_cache_names_its_files_by_key_and_its_sidecar_holds_no_secret(tmp_path, monkeypatch):
    from tests.helpers.videos import write_source
    from vdg_tasks.perturb.cache import clear_memos, materialize
    from vdg_tasks.vocabulary.conditions import CONDITIONS

    cache = tmp_path / "deep" / "er" / "cache"
    monkeypatch.setenv("VDG_CACHE", str(cache))
    folder = tmp_path / "src" / "hf_token=SECRET1"
    folder.mkdir(parents=True)
    src = write_source(folder / "v.mp4", n_frames=8)
    clear_memos()
    before = {p for p in tmp_path.rglob("*")}
    for video_id in ("../../x", "/abs/x", "a/../../b", "auth=SECRET2"):
        made = materialize(src, CONDITIONS["black"], video_id)
        assert made.path.parent.parent == cache.resolve() or made.path.parent.parent == cache
    new = {p for p in tmp_path.rglob("*")} - before
    assert new and all(cache in p.parents or p == cache or p in cache.parents for p in new)
    assert not Path("/abs/x").exists()
    assert _files_holding_a_secret(cache) == []
    sidecars = [json.loads(p.read_text()) for p in cache.rglob("*.json")]
    assert {s["video_id"] for s in sidecars} >= {"../../x", "auth=<redacted>"}
    assert all(len(s["key"]) == 32 for s in sidecars)  # the key is vdg's own: kept


@pytest.mark.parametrize("label", ["../../x", "/abs/x", "a/../../b", "Qwen/Qwen2-VL", "..", "auth=SECRET9"])
def test_a_hostile_run_label_writes_nothing_outside_the_report(tmp_path, label, capsys):
    run = _run(tmp_path / "work" / "runs" / "a", "max_num_frames=8")
    out = tmp_path / "work" / "deep" / "report"
    out.parent.mkdir(parents=True)
    before = {p for p in tmp_path.rglob("*")}
    code = vdg_main(["report", f"{label}={run}", "--out", str(out), *FAST])
    captured = capsys.readouterr()
    assert code in (0, 2) and "Traceback" not in captured.err
    new = {p for p in tmp_path.rglob("*")} - before
    assert all(out in p.parents or p == out for p in new), sorted(new)
    assert not Path("/abs/x").exists()
    if code == 0 and "SECRET" not in label:
        assert label in (out / "report.json").read_text()  # a label is shown as given, never a path
