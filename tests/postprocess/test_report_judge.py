"""`vdg report --judge`: open-ended answers of a samples log scored through the report command."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from postprocess.judge import OFFLINE_LABEL
from tests.helpers.fakelogs import sample, write_run
from tests.helpers.judge_server import FakeServer, chat_reply
from vdg_tasks.cli import main as vdg_main

TRUTH = "red jacket; blue shirt"
REPLIES = {"q1": "A red jacket, then a blue shirt.", "q2": "A blue shirt.", "q3": "I don't know."}


def _open(question_id: str, answer: str) -> dict:
    record = sample(question_id, "open", None, answer="B", benchmark="infinibench_ga", video_id="e1")
    record["vdg"].update(
        status="open", correct=None, question="Which outfits, in order?", truth=TRUTH, response=answer, n_options=6
    )
    return record


@pytest.fixture
def run(tmp_path):
    orig = [sample(q, "orig", "B", answer="B", benchmark="infinibench_ga", video_id="e1") for q in REPLIES]
    for record in orig:
        record["vdg"]["n_options"] = 6
    opened = [_open(q, a) for q, a in REPLIES.items()]
    tasks = {"infinibench_ga_vdg_orig": orig, "infinibench_ga_vdg_open": opened}
    return write_run(tmp_path / "run", "vdg_probe", tasks)


@pytest.fixture
def server(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "*")
    fake = FakeServer()
    yield fake
    fake.close()


def _open_table(out) -> pd.Series:
    return pd.read_csv(out / "open_ended.csv").iloc[0]


def test_offline_judge_scores_and_labels_the_open_answers(run, tmp_path):
    out = tmp_path / "report"
    assert vdg_main(["report", str(run), "--out", str(out), "--judge", "offline", "--no-plots"]) == 0
    row = _open_table(out)
    # offline rule: both items in order -> 1; one of two -> 0.5; "I don't know" -> 0
    assert (row.n_open, row.fully_correct, row.half_correct) == (3, 1, 1)
    assert row.open_score == pytest.approx(0.5) and row.judge == OFFLINE_LABEL
    assert OFFLINE_LABEL in (out / "report.md").read_text()


def test_api_judge_through_the_report_and_its_cache(run, tmp_path, server, monkeypatch):
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("VDG_JUDGE_BASE_URL", server.base_url)
    monkeypatch.setenv("VDG_JUDGE_MODEL", "judge-model")
    monkeypatch.setenv("VDG_JUDGE_API_KEY", "sk-secret-test")
    server.default.body = chat_reply(json.dumps({"score": 1, "reason": "all outfits in order"}))
    out = tmp_path / "report"
    assert vdg_main(["report", str(run), "--out", str(out), "--judge", "api", "--no-plots"]) == 0
    assert len(server.requests) == 3  # one per open answer ("I don't know" is asked too: the judge decides)
    assert {r.body["model"] for r in server.requests} == {"judge-model"}
    assert all(r.headers["authorization"] == "Bearer sk-secret-test" for r in server.requests)
    row = _open_table(out)
    assert row.judge == "api:judge-model" and row.fully_correct == 3
    written = "".join(p.read_text(errors="ignore") for p in out.rglob("*") if p.is_file())
    assert "sk-secret-test" not in written
    assert vdg_main(["report", str(run), "--out", str(out), "--judge", "api", "--no-plots"]) == 0
    assert len(server.requests) == 3  # the second report is served from the cache


def test_api_judge_without_an_endpoint_is_a_clear_error(run, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("VDG_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("VDG_JUDGE_MODEL", raising=False)
    assert vdg_main(["report", str(run), "--out", str(tmp_path / "r"), "--judge", "api"]) == 2
    err = capsys.readouterr().err
    assert "VDG_JUDGE_BASE_URL" in err and "VDG_JUDGE_MODEL" in err and "--judge offline" in err


def test_without_a_judge_the_open_table_is_skipped_with_how_to_judge(run, tmp_path):
    out = tmp_path / "report"
    assert vdg_main(["report", str(run), "--out", str(out), "--no-plots"]) == 0
    skipped = pd.read_csv(out / "skipped.csv")
    reason = " ".join(skipped[skipped.analysis == "open_ended"].reason.astype(str))
    assert "--judge offline" in reason
