"""Tests for postprocess.judge: the offline scorer, reply parsing, the API judge against a local server, the cache."""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from postprocess import judge as J
from postprocess.judge import (
    OFFLINE_LABEL,
    PROMPT_SHA256,
    PROMPT_VERSION,
    ApiJudge,
    Judge,
    JudgeCache,
    JudgeError,
    JudgeItem,
    Judgement,
    JudgeNotConfigured,
    OfflineJudge,
    cache_key,
    judge_answers,
    make_judge,
    parse_score,
    prompt_template,
    render_prompt,
)
from tests.helpers.judge_server import FakeServer, Reply, chat_reply

KEY = "sk-test-SECRET-4f9a1c"
OUTFITS = "red jacket; blue shirt; green coat"
QUESTION = "What is the correct sequence of changing the outfits for Sheldon in this episode?"


def offline(truth: str, answer: str) -> float:
    return OfflineJudge().score(QUESTION, truth, answer)


# --- offline scorer ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "He wears a red jacket, then a blue shirt and then a green coat.",
        "red jacket -> blue shirt -> green coat",
        "First a red jacket. Then a blue shirt. Finally a green coat.",
        "red jacket\nblue shirt\ngreen coat",
        "Red jacket; blue shirt; green coat",
        "a red jacket, a grey hat, a blue shirt, then a green coat",  # extra items are not penalised
    ],
)
def test_offline_full_sequence_scores_1(answer):
    assert offline(OUTFITS, answer) == 1.0


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("A red jacket, then a blue shirt.", 0.5),  # 2 of 3 items, in order
        ("red jacket, then a purple dress, then a green coat", 0.5),  # 2 of 3
        ("a red jacket", 0.0),  # 1 of 3
        ("a purple dress, then a yellow hat", 0.0),
    ],
)
def test_offline_partial(answer, expected):
    assert offline(OUTFITS, answer) == expected


@pytest.mark.parametrize(
    "answer",
    [
        "green coat, then red jacket, then blue shirt",
        "He wears a blue shirt, then a red jacket, then a green coat",
    ],
)
def test_offline_all_items_wrong_order_scores_half(answer):
    assert offline(OUTFITS, answer) == 0.5


def test_offline_two_items_half_matched_is_half():
    assert offline("red jacket; blue shirt", "a red jacket") == 0.5
    assert offline("red jacket; blue shirt", "blue shirt, then red jacket") == 0.5
    assert offline("red jacket; blue shirt", "red jacket, then blue shirt") == 1.0


@pytest.mark.parametrize(
    "answer",
    ["", "   ", "I don't know.", "i do not know", "I'm not sure!", "Unknown", "cannot be determined", "?!", None],
)
def test_offline_no_answer_scores_0(answer):
    assert offline(OUTFITS, answer) == 0.0
    assert offline("He is cooking dinner", answer) == 0.0


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("cooking dinner", 1.0),
        ("The man is COOKING his dinner in the kitchen.", 1.0),
        ("he is cooking", 0.5),  # 1 of 2 content tokens (cooking, dinner)
        ("he is sleeping", 0.0),
    ],
)
def test_offline_single_item(answer, expected):
    assert offline("He is cooking dinner", answer) == expected


def test_offline_single_item_half_threshold():
    truth = "red leather jacket"  # 3 content tokens: 2 are needed for 0.5
    assert offline(truth, "a jacket") == 0.0
    assert offline(truth, "a red jacket") == 0.5
    assert offline(truth, "a jacket of red leather") == 1.0


def test_offline_punctuation_and_case():
    assert offline("Red Jacket; Blue-Shirt", "RED JACKET -> blue shirt!!!") == 1.0
    assert offline("red jacket; blue shirt", "Red-Jacket, BLUE (shirt)") == 1.0
    assert offline("Café au lait", "CAFÉ AU LAIT") == 1.0


def test_offline_best_segment_wins_over_first_half_match():
    # "red shirt" half-matches "red jacket" (the first segment) but fully matches the second one.
    assert offline("red shirt; red jacket", "red jacket, red shirt") == 0.5
    assert offline("red shirt; red jacket", "red shirt, red jacket") == 1.0


def test_offline_one_segment_matches_one_item():
    # "and" does not separate segments: one segment cannot stand for two items, and gives no order.
    assert offline("red jacket; blue shirt", "a red jacket and a blue shirt") == 0.5


def test_offline_repeated_items_need_their_own_segments():
    truth = "red jacket; blue shirt; red jacket"
    assert offline(truth, "red jacket, blue shirt, red jacket") == 1.0
    assert offline(truth, "red jacket, blue shirt") == 0.5


def test_offline_stop_word_only_item_keeps_its_words():
    assert offline("Them", "them") == 1.0  # every token is a stop word: all are compared
    assert offline("To Be", "to go") == 0.5
    assert offline("To Be", "the doors") == 0.0


def test_offline_truth_without_words_raises():
    with pytest.raises(JudgeError, match="no words"):
        offline(" ; ,", "red jacket")


def test_offline_label_and_protocol():
    judge = OfflineJudge()
    assert judge.label == OFFLINE_LABEL == "offline token-overlap scorer (deterministic; not an LLM judge)"
    assert isinstance(judge, Judge)
    assert isinstance(make_judge("offline"), OfflineJudge)


def test_make_judge_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown judge"):
        make_judge("gpt")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no options"):
        make_judge("offline", cache="x")


def test_judge_answers_offline():
    items = [
        JudgeItem("q1", QUESTION, OUTFITS, "red jacket, blue shirt, green coat"),
        JudgeItem("q2", QUESTION, OUTFITS, "green coat, red jacket, blue shirt"),
        JudgeItem("q3", QUESTION, OUTFITS, "I don't know"),
    ]
    out = judge_answers(iter(items), OfflineJudge())
    assert out == [
        Judgement("q1", 1.0, OFFLINE_LABEL, False),
        Judgement("q2", 0.5, OFFLINE_LABEL, False),
        Judgement("q3", 0.0, OFFLINE_LABEL, False),
    ]
    assert out[0].as_dict() == {"question_id": "q1", "score": 1.0, "judge_label": OFFLINE_LABEL, "cached": False}


def test_judge_answers_rejects_a_score_outside_the_scale():
    class Generous:
        label = "generous"

        def score(self, question: str, truth: str, answer: str) -> float:
            return 0.7

    with pytest.raises(JudgeError, match=r"question q9: generous gave the score 0\.7") as info:
        judge_answers([JudgeItem("q9", "q", "t", "a")], Generous())
    assert info.value.question_id == "q9"


def test_judge_answers_names_the_question_of_a_failure():
    with pytest.raises(JudgeError, match="question q2: the reference answer has no words") as info:
        judge_answers([JudgeItem("q1", "q", "red", "red"), JudgeItem("q2", "q", ";", "red")], OfflineJudge())
    assert info.value.question_id == "q2"


# --- prompt and reply parsing --------------------------------------------------------------------


def test_prompt_has_placeholders_and_json_instructions():
    template = prompt_template()
    for placeholder in ("{question}", "{truth}", "{answer}"):
        assert template.count(placeholder) == 1
    assert '{"score": <0|0.5|1>, "reason":' in template
    assert PROMPT_VERSION == "vdg-judge/1"


def test_prompt_sha_matches_version():
    text = (Path(J.__file__).parent / "judge_prompt.txt").read_bytes().replace(b"\r\n", b"\n")
    assert hashlib.sha256(text).hexdigest() == PROMPT_SHA256, (
        "judge_prompt.txt changed: bump PROMPT_VERSION (old API scores must not be reused) and update PROMPT_SHA256"
    )


def test_render_prompt_substitutes_once():
    prompt = render_prompt("Q? {answer}", "red jacket; blue shirt", 'He said "{truth}" {score}')
    assert "Q? {answer}" in prompt
    assert "red jacket; blue shirt" in prompt
    assert 'He said "{truth}" {score}' in prompt
    assert "{question}" not in prompt


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"score": 1, "reason": "all items, right order"}', 1.0),
        ('{"score": 0.5, "reason": "one item missing"}', 0.5),
        ('```json\n{"score": 0, "reason": "wrong"}\n```', 0.0),
        ('```\n{"score": 0.5}\n```', 0.5),
        ('Here is my grade: {"score": 1, "reason": "fine"}', 1.0),
        ('{"score": "0.5", "reason": "string score"}', 0.5),
        ("0.5", 0.5),
        (" 1 ", 1.0),
        ('<think>order differs</think>\n{"score": 0.5}', 0.5),
        ('{"score": 1.0}', 1.0),
    ],
)
def test_parse_score_accepts(content, expected):
    assert parse_score(content, "q") == expected


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ('{"score": 0.7, "reason": "mostly"}', "not one of 0, 0.5, 1"),
        ('{"score": 2}', "not one of 0, 0.5, 1"),
        ("The answer is good.", "no readable score"),
        ('{"reason": "no score"}', "no readable score"),
        ('{"score": true}', "no readable score"),
        ('{"score": null}', "no readable score"),
        ("", "no readable score"),
    ],
)
def test_parse_score_rejects_and_names_the_question(content, match):
    with pytest.raises(JudgeError, match=match) as info:
        parse_score(content, "Which outfit comes first?")
    assert "Which outfit comes first?" in str(info.value)


# --- a local OpenAI-compatible server ------------------------------------------------------------


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("NO_PROXY", "*")


@pytest.fixture
def server() -> Iterator[FakeServer]:
    srv = FakeServer()
    yield srv
    srv.close()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def env(monkeypatch, server, tmp_path):
    monkeypatch.setenv("VDG_JUDGE_BASE_URL", server.base_url)
    monkeypatch.setenv("VDG_JUDGE_MODEL", "judge-model")
    monkeypatch.setenv("VDG_JUDGE_API_KEY", KEY)
    monkeypatch.setenv("VDG_CACHE", str(tmp_path / "vdg-cache"))


@pytest.fixture
def make(env, sleeps, tmp_path):
    """A fresh ApiJudge from the environment, caching in tmp_path, recording its sleeps."""

    def build(**kwargs: Any) -> ApiJudge:
        kwargs.setdefault("cache", tmp_path / "judge.sqlite")
        return ApiJudge.from_env(sleep=sleeps.append, **kwargs)

    return build


ITEMS = [
    JudgeItem("q1", QUESTION, OUTFITS, "He wears a red jacket, then a blue shirt"),
    JudgeItem("q2", "What does the man cook?", "pasta with tomato sauce", "He cooks pasta."),
]


# --- API judge -----------------------------------------------------------------------------------


def test_api_request_shape_and_headers(server, make):
    judge = make()
    out = judge_answers(ITEMS, judge)
    assert out == [Judgement("q1", 0.5, "api:judge-model", False), Judgement("q2", 0.5, "api:judge-model", False)]
    assert len(server.requests) == 2
    for req, item in zip(server.requests, ITEMS, strict=True):
        assert req.path == "/v1/chat/completions"
        assert req.body["model"] == "judge-model"
        assert req.body["temperature"] == 0
        assert 0 < req.body["max_tokens"] <= 400
        (message,) = req.body["messages"]
        assert message["role"] == "user"
        assert message["content"] == render_prompt(item.question, item.truth, item.answer)
        for text in (item.question, item.truth, item.answer):
            assert text in message["content"]
        assert req.headers["authorization"] == f"Bearer {KEY}"
        assert req.headers["content-type"] == "application/json"


def test_api_second_run_sends_no_request(server, make, tmp_path):
    first = judge_answers(ITEMS, make())
    assert len(server.requests) == 2
    server.default = Reply(500, {"error": "the cache should have answered"})
    second = judge_answers(ITEMS, make())  # a fresh judge on the same cache file
    assert len(server.requests) == 2
    assert [j.score for j in second] == [j.score for j in first]
    assert [j.cached for j in second] == [True, True]
    # what the cache holds: the label, never the key
    db = tmp_path / "judge.sqlite"
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, score, judge, created FROM judgements ORDER BY key").fetchall()
    assert sorted(r[0] for r in rows) == sorted(cache_key(i.question, i.truth, i.answer, "judge-model") for i in ITEMS)
    assert {(r[1], r[2]) for r in rows} == {(0.5, "api:judge-model")}
    assert all(r[3] for r in rows)
    assert KEY.encode() not in db.read_bytes()


def test_api_cache_key_covers_model_and_inputs(server, make, monkeypatch):
    judge_answers(ITEMS[:1], make())
    judge_answers([JudgeItem("q1", QUESTION, OUTFITS, "He wears a red jacket")], make())
    monkeypatch.setenv("VDG_JUDGE_MODEL", "other-model")
    out = judge_answers(ITEMS[:1], make())
    assert len(server.requests) == 3
    assert out[0].judge_label == "api:other-model" and not out[0].cached
    assert cache_key("q", "t", "a", "m") != cache_key("q", "t", "a", "n")
    # the cache outlives the process: the key is the same in one whose str hashes differ
    code = "from postprocess.judge import cache_key; print(cache_key('q', 't', 'a', 'm'))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert other.stdout.strip() == cache_key("q", "t", "a", "m")


def test_api_default_cache_is_in_vdg_cache(server, env, tmp_path):
    judge = ApiJudge.from_env()
    assert judge.score(QUESTION, OUTFITS, "red jacket") == 0.5
    assert (tmp_path / "vdg-cache" / "judge.sqlite").is_file()
    assert ApiJudge.from_env().score_cached(QUESTION, OUTFITS, "red jacket") == (0.5, True)
    assert len(server.requests) == 1


def test_api_without_key_sends_no_authorization(server, make, monkeypatch):
    monkeypatch.delenv("VDG_JUDGE_API_KEY")
    make().score(QUESTION, OUTFITS, "red jacket")
    assert "authorization" not in server.requests[0].headers


def test_api_use_cache_false_always_asks(server, make, tmp_path):
    judge = make(use_cache=False)
    judge.score(QUESTION, OUTFITS, "red jacket")
    judge.score(QUESTION, OUTFITS, "red jacket")
    assert len(server.requests) == 2
    assert not (tmp_path / "judge.sqlite").exists()


def test_api_blank_answer_scores_0_without_request(server, make):
    out = judge_answers([JudgeItem("q1", QUESTION, OUTFITS, "  ")], make())
    assert out == [Judgement("q1", 0.0, "api:judge-model", False)]
    assert server.requests == []


def test_api_retries_503_then_succeeds(server, make, sleeps):
    server.queue = [Reply(503, {"error": {"message": "overloaded"}}), Reply(503, b"busy"), Reply()]
    assert make().score(QUESTION, OUTFITS, "red jacket") == 0.5
    assert len(server.requests) == 3
    assert sleeps == [1.0, 2.0]


def test_api_retry_after_is_honoured(server, make, sleeps):
    server.queue = [Reply(429, {"error": {"message": "rate limited"}}, {"Retry-After": "7"}), Reply()]
    assert make().score(QUESTION, OUTFITS, "red jacket") == 0.5
    assert sleeps == [7.0]


def test_api_gives_up_after_max_attempts(server, make, sleeps, caplog):
    server.default = Reply(500, {"error": {"message": f"internal error for {KEY}"}})
    with caplog.at_level(logging.WARNING, logger="postprocess.judge"):
        with pytest.raises(JudgeError) as info:
            judge_answers(ITEMS[:1], make())
    message = str(info.value)
    assert message.startswith("question q1: ")
    assert "failed 5 times" in message and "HTTP 500" in message
    assert len(server.requests) == 5
    assert sleeps == [1.0, 2.0, 4.0, 8.0]
    assert KEY not in message
    assert KEY not in caplog.text
    assert "HTTP 500" in caplog.text


def test_api_backoff_is_capped(server, make, sleeps):
    server.default = Reply(502, b"bad gateway")
    with pytest.raises(JudgeError):
        make(max_attempts=6, backoff_base=2.0, backoff_cap=10.0).score(QUESTION, OUTFITS, "x")
    assert sleeps == [2.0, 4.0, 8.0, 10.0, 10.0]


def test_api_401_fails_at_once_without_the_key(server, make, sleeps):
    server.default = Reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    with pytest.raises(JudgeError) as info:
        judge_answers(ITEMS, make())
    assert len(server.requests) == 1
    assert sleeps == []
    message = str(info.value)
    assert message.startswith("question q1: ")
    assert "401" in message and "Unauthorized" in message
    assert "VDG_JUDGE_API_KEY" in message
    full = "".join(traceback.format_exception(info.value))
    assert KEY not in full and KEY not in repr(info.value)


def test_api_other_4xx_fails_at_once_and_redacts_the_key(server, make, sleeps):
    server.default = Reply(400, {"error": {"message": f"bad request from {KEY}: unknown model"}})
    with pytest.raises(JudgeError, match="HTTP 400") as info:
        make().score(QUESTION, OUTFITS, "x")
    assert len(server.requests) == 1 and sleeps == []
    assert "unknown model" in str(info.value)
    assert KEY not in "".join(traceback.format_exception(info.value))


def test_api_connection_errors_are_retried(env, sleeps, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    judge = ApiJudge(f"http://127.0.0.1:{port}/v1", "m", KEY, cache=tmp_path / "j.sqlite", sleep=sleeps.append)
    with pytest.raises(JudgeError, match="failed 5 times") as info:
        judge.score(QUESTION, OUTFITS, "x")
    assert sleeps == [1.0, 2.0, 4.0, 8.0]
    assert KEY not in str(info.value)


def test_api_timeouts_are_retried(server, make, sleeps):
    server.queue = [Reply(delay=1.0), Reply()]
    assert make(timeout=0.2).score(QUESTION, OUTFITS, "x") == 0.5
    assert sleeps == [1.0]
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    "body",
    [
        {"unexpected": True},
        {"choices": []},
        {"choices": [{"message": {"role": "assistant", "content": None}}]},
        b"<html>not json</html>",
    ],
)
def test_api_malformed_response_raises(server, make, sleeps, body):
    server.default = Reply(200, body)
    with pytest.raises(JudgeError, match="question q1: malformed reply"):
        judge_answers(ITEMS[:1], make())
    assert sleeps == []


@pytest.mark.parametrize(
    ("content", "match"),
    [("That answer looks right to me.", "no readable score"), ('{"score": 0.75}', "not one of 0, 0.5, 1")],
)
def test_api_bad_score_raises_and_is_not_cached(server, make, content, match):
    server.queue = [Reply(200, chat_reply(content))]
    with pytest.raises(JudgeError, match=match) as info:
        judge_answers(ITEMS[:1], make())
    assert QUESTION in str(info.value) and str(info.value).startswith("question q1: ")
    out = judge_answers(ITEMS[:1], make())  # nothing was cached: asked again
    assert out[0].score == 0.5 and not out[0].cached
    assert len(server.requests) == 2


def test_api_fenced_json_is_tolerated(server, make):
    server.default = Reply(200, chat_reply('```json\n{"score": 1, "reason": "all three, in order"}\n```'))
    assert make().score(QUESTION, OUTFITS, "red jacket, blue shirt, green coat") == 1.0


def test_api_results_so_far_are_kept_after_a_failure(server, make):
    items = [JudgeItem(f"q{i}", QUESTION, OUTFITS, f"answer {i}") for i in range(3)]
    server.queue = [Reply(), Reply(), Reply(401, {"error": "no"})]
    with pytest.raises(JudgeError, match="question q2"):
        judge_answers(items, make())
    out = judge_answers(items, make())
    assert [j.cached for j in out] == [True, True, False]
    assert len(server.requests) == 4


def test_api_many_items_with_progress(server, make):
    items = [JudgeItem(f"q{i}", QUESTION, OUTFITS, f"answer {i}") for i in range(25)]
    out = judge_answers(items, make())
    assert [j.question_id for j in out] == [i.question_id for i in items]
    assert all(j.score == 0.5 for j in out)


def test_api_label_and_repr_hold_no_key(make):
    judge = make()
    assert judge.label == "api:judge-model"
    assert isinstance(judge, Judge)
    assert KEY not in repr(judge) and "api_key=set" in repr(judge)


def test_base_url_forms():
    assert ApiJudge("http://h:1/v1/", "m").url == "http://h:1/v1/chat/completions"
    assert ApiJudge("http://h:1/v1/chat/completions", "m").url == "http://h:1/v1/chat/completions"
    with pytest.raises(ValueError, match="http:// or https://"):
        ApiJudge("api.openai.com/v1", "m")
    with pytest.raises(ValueError, match="model name is empty"):
        ApiJudge("http://h/v1", " ")


# --- configuration -------------------------------------------------------------------------------


def test_not_configured_names_missing_variables(monkeypatch):
    monkeypatch.delenv("VDG_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("VDG_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("VDG_JUDGE_API_KEY", KEY)
    with pytest.raises(JudgeNotConfigured) as info:
        ApiJudge.from_env()
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert "VDG_JUDGE_BASE_URL" in message and "VDG_JUDGE_MODEL" in message
    assert "--judge offline" in message
    assert KEY not in message

    monkeypatch.setenv("VDG_JUDGE_BASE_URL", "https://api.example.com/v1")
    monkeypatch.setenv("VDG_JUDGE_MODEL", "   ")
    with pytest.raises(JudgeNotConfigured, match="set VDG_JUDGE_MODEL ") as info:
        make_judge("api")
    assert "VDG_JUDGE_BASE_URL" not in str(info.value).split("(")[0]


def test_make_judge_api_from_env(env):
    judge = make_judge("api")
    assert isinstance(judge, ApiJudge) and judge.label == "api:judge-model"


# --- cache ---------------------------------------------------------------------------------------


def test_cache_roundtrip_and_sharing(tmp_path):
    path = tmp_path / "sub" / "judge.sqlite"
    with JudgeCache(path) as a, JudgeCache(path) as b:
        assert a.get("k") is None
        a.put("k", 0.5, "api:m")
        assert b.get("k") == 0.5
        b.put("k", 1.0, "api:m")
        assert a.get("k") == 1.0
        assert len(a) == 1
    with pytest.raises(JudgeError, match="closed"):
        a.get("k")


def test_cache_ignores_values_outside_the_scale(tmp_path):
    with JudgeCache(tmp_path / "j.sqlite") as cache:
        cache.put("k", 0.7, "api:m")
        assert cache.get("k") is None


def test_cache_threads(tmp_path):
    cache = JudgeCache(tmp_path / "j.sqlite")

    def work(n: int) -> None:
        for i in range(10):
            cache.put(f"{n}-{i}", 1.0, "api:m")
            assert cache.get(f"{n}-{i}") == 1.0

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 40
    cache.close()


def test_cache_not_a_database(tmp_path):
    path = tmp_path / "judge.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(JudgeError, match="not a usable SQLite database"):
        JudgeCache(path)


def test_cache_unwritable_folder(tmp_path):
    from vdg_tasks.vocabulary.paths import CacheUnwritable

    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(CacheUnwritable):
        JudgeCache(blocker / "judge.sqlite")


def test_judging_makes_a_graded_task_s_answers_scored_and_leaves_open_condition_answers_open():
    import pandas as pd

    from postprocess.judge import judge_frame
    from tests.helpers.frames import tidy_frame, tidy_row

    def answer(condition, question_id, scoring, truth, response):
        return tidy_row(
            "m", condition, question_id, "b", status="open", correct=None, scoring=scoring, question="Q?",
            truth=truth, response=response,
        )  # fmt: skip

    frame = tidy_frame(
        [
            answer("orig", "q1", "judge", "red", "The border is red."),
            answer("black", "q1", "judge", "red", "I don't know."),
            answer("orig", "q2", "judge", "red car", "A red bus."),
            answer("open", "q3", "judge", "blue", "blue"),
        ]
    )
    out = judge_frame(frame, OfflineJudge()).set_index(["condition", "question_id"])
    expected = {key: OfflineJudge().score("Q?", truth, reply) for key, truth, reply in [
        (("orig", "q1"), "red", "The border is red."), (("black", "q1"), "red", "I don't know."),
        (("orig", "q2"), "red car", "A red bus."), (("open", "q3"), "blue", "blue"),
    ]}  # fmt: skip
    assert sorted(set(expected.values())) == [0.0, 0.5, 1.0]
    for key, score in expected.items():
        assert out.loc[key, "score"] == out.loc[key, "judge_score"] == score
    graded = out.drop(index=("open", "q3"))
    assert (graded["status"] == "ok").all()
    assert graded["correct"].tolist() == [s >= 0.5 for k, s in expected.items() if k != ("open", "q3")]
    assert out.loc[("open", "q3"), "status"] == "open" and pd.isna(out.loc[("open", "q3"), "correct"])
