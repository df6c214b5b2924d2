"""Scoring open-ended answers against the ground truth on {0, 0.5, 1}.

In vdg's open-ended condition the options are removed and the model answers in free text. Each
answer is scored against ``truth`` (InfiniBench: the outfit sequence joined with ``"; "``, order
matters; other benchmarks: the correct option's text) by a *judge*:

- :class:`OfflineJudge`: a deterministic token-overlap scorer for tests and demos (not an LLM
  judge; its rule is in its docstring). Pure, never cached.
- :class:`ApiJudge`: an LLM behind any OpenAI-compatible chat-completions endpoint, configured
  from the environment only (``VDG_JUDGE_BASE_URL``, ``VDG_JUDGE_MODEL``, optional
  ``VDG_JUDGE_API_KEY``). The key is sent as ``Authorization: Bearer ...`` and nowhere else: it is
  never logged, printed, put in an exception, in the cache or in a label.

:func:`judge_answers` scores many items; :func:`make_judge` builds a judge by name
(``"offline"`` or ``"api"``, as ``--judge`` spells it).

Prompt. ``judge_prompt.txt`` (package data beside this module) holds the fixed judging prompt
with the placeholders ``{question}``, ``{truth}`` and ``{answer}``, substituted in one pass (so
braces inside an answer are never re-substituted). Bump rule for :data:`PROMPT_VERSION`: bump it
whenever anything that can change an API score changes: the prompt text, the request (messages
layout, temperature, max_tokens) or how a reply is read. The version is part of every cache key,
so a bump makes old API scores unreachable instead of silently reused. :data:`PROMPT_SHA256`
records the prompt text the current version was made for; a test fails when they disagree.

Cache. API scores are stored in a SQLite database, ``vdg_tasks.perturb.cache.cache_dir() / "judge.sqlite"``
by default, keyed by the sha256 of (question, truth, answer, judge model, PROMPT_VERSION); table
``judgements(key TEXT PRIMARY KEY, score REAL, judge TEXT, created TEXT)``. Every score is written
(and committed) as soon as it arrives, so a run that fails part way keeps what it paid for, and a
second run with the same inputs sends no request. Concurrent writers are serialised by SQLite's
file lock (connections wait up to ``timeout`` seconds for it).

Retries. HTTP 429, HTTP 5xx, timeouts and connection errors are retried with exponential backoff
(``max_attempts`` tries in all, waits ``backoff_base * 2**k`` capped at ``backoff_cap``, at least
a numeric ``Retry-After`` up to the cap); any other HTTP status fails at once. A failure raises
:class:`JudgeError`, which :func:`judge_answers` prefixes with the question id.
"""

from __future__ import annotations

import functools
import hashlib
import http.client
import json
import logging
import os
import re
import sqlite3
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import pandas as pd
from tqdm.auto import tqdm

from vdg_tasks.vocabulary.conditions import OPEN_ANSWER
from vdg_tasks.vocabulary.paths import CacheUnwritable, cache_dir
from vdg_tasks.vocabulary.record import OPEN_STATUS
from vdg_tasks.vocabulary.scoring import CORRECT_AT, JUDGE
from vdg_tasks.vocabulary.untrusted import redact

__all__ = [
    "CACHE_FILE",
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_MODEL",
    "OFFLINE_LABEL",
    "PROMPT_SHA256",
    "PROMPT_VERSION",
    "SCORES",
    "ApiJudge",
    "Judge",
    "JudgeCache",
    "JudgeError",
    "JudgeItem",
    "JudgeName",
    "JudgeNotConfigured",
    "Judgement",
    "OfflineJudge",
    "cache_key",
    "is_no_answer",
    "judge_answers",
    "make_judge",
    "parse_score",
    "prompt_template",
    "render_prompt",
    "truth_items",
]

logger = logging.getLogger(__name__)

#: Version of the judging prompt and protocol; part of every cache key (bump rule: module docstring).
PROMPT_VERSION = "vdg-judge/1"
#: sha256 of ``judge_prompt.txt`` (``\n`` line endings) that PROMPT_VERSION was made for.
PROMPT_SHA256 = "9b663e789b0e087ffe3b0a4faf67bd7605a4fd675a51ce46cbd36000a01f38af"
#: The only scores a judge may give.
SCORES = (0.0, 0.5, 1.0)
OFFLINE_LABEL = "offline token-overlap scorer (deterministic; not an LLM judge)"
ENV_BASE_URL = "VDG_JUDGE_BASE_URL"
ENV_MODEL = "VDG_JUDGE_MODEL"
ENV_API_KEY = "VDG_JUDGE_API_KEY"
#: File name of the API judge's cache inside the vdg cache folder.
CACHE_FILE = "judge.sqlite"

JudgeName = Literal["offline", "api"]

# judge_answers shows a progress bar for an API judge from this many items on.
_PROGRESS_MIN_ITEMS = 20
_PROMPT_FILE = "judge_prompt.txt"
_PLACEHOLDER = re.compile(r"\{(question|truth|answer)\}")


class JudgeError(RuntimeError):
    """An answer could not be judged: an HTTP failure (after retries), a malformed reply, a score
    outside {0, 0.5, 1}, an unusable reference answer or judge cache.

    Attributes:
        question_id: the question's id when raised by :func:`judge_answers` (else ``None``).
    """

    def __init__(self, message: str, *, question_id: str | None = None):
        super().__init__(message)
        self.question_id = question_id


class JudgeNotConfigured(ValueError):
    """The API judge's environment variables are missing (the message names them and the alternative)."""


@runtime_checkable
class Judge(Protocol):
    """Anything that scores one answer on {0, 0.5, 1}."""

    @property
    def label(self) -> str:
        """Says which judge scored (recorded with every judgement; never holds a secret)."""
        ...

    def score(self, question: str, truth: str, answer: str) -> float:
        """The answer's score against ``truth``: 0.0, 0.5 or 1.0."""
        ...


@dataclass(frozen=True)
class JudgeItem:
    """One open-ended answer to score.

    Attributes:
        question_id: the question's id (named in errors and carried to the :class:`Judgement`).
        question: the question text the model saw (without options).
        truth: the reference answer; items separated by ``";"`` form an ordered sequence.
        answer: the model's free-text answer.
    """

    question_id: str
    question: str
    truth: str
    answer: str


@dataclass(frozen=True)
class Judgement:
    """The score of one :class:`JudgeItem`.

    Attributes:
        question_id: the item's question id.
        score: 0.0, 0.5 or 1.0.
        judge_label: the judge's ``label`` (``"api:<model>"`` or :data:`OFFLINE_LABEL`).
        cached: whether the score came from the judge cache (no request was sent).
    """

    question_id: str
    score: float
    judge_label: str
    cached: bool

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (a table row)."""
        return asdict(self)


# --- prompt -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def prompt_template() -> str:
    """The judging prompt (``judge_prompt.txt`` shipped beside this module), with ``\\n`` line endings."""
    try:
        text = resources.files("postprocess").joinpath(_PROMPT_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"postprocess/{_PROMPT_FILE}: vdg's judging prompt is missing from the installed package"
        ) from None
    return text.replace("\r\n", "\n")


def render_prompt(question: str, truth: str, answer: str) -> str:
    """The prompt with ``{question}``, ``{truth}`` and ``{answer}`` filled in (one pass, no re-substitution)."""
    values = {"question": str(question), "truth": str(truth), "answer": str(answer)}
    return _PLACEHOLDER.sub(lambda m: values[m[1]], prompt_template())


# --- offline scorer ----------------------------------------------------------------------------

#: Words ignored when comparing (articles, pronouns, copulas, common prepositions and conjunctions).
_STOP_WORDS = frozenset(
    "a an the of to in on at for with by from as and or but is are was were be been being it its "
    "he she they him them his her hers their this that these those then".split()
)
_TOKEN = re.compile(r"[^\W_]+")
#: Segment separators: "and then", "then", "->", "→", "," ";" newline, and . ! ? ending a sentence.
_SEGMENT_SPLIT = re.compile(r"\band then\b|\bthen\b|->|→|[,;\n]|[.!?](?=\s|$)", re.IGNORECASE)
#: Whole answers (normalised: lowercase, apostrophes dropped, other punctuation to spaces) meaning "no answer".
_NO_ANSWERS = frozenset(
    {
        "i dont know",
        "i do not know",
        "dont know",
        "do not know",
        "idk",
        "unknown",
        "not sure",
        "im not sure",
        "i am not sure",
        "no idea",
        "i have no idea",
        "cannot determine",
        "i cannot determine",
        "cant determine",
        "i cant determine",
        "cannot be determined",
        "cannot tell",
        "i cannot tell",
        "cant tell",
        "i cant tell",
        "not enough information",
        "no answer",
        "n a",
        "none of the above",
    }
)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def _content_tokens(text: str) -> tuple[str, ...]:
    """Distinct tokens without stop words, in order; all distinct tokens when every token is a stop word."""
    tokens = list(dict.fromkeys(_tokens(text)))
    content = [t for t in tokens if t not in _STOP_WORDS]
    return tuple(content or tokens)


def _normalise(text: str) -> str:
    text = re.sub(r"['’`]", "", text.casefold())
    return " ".join(_tokens(text))


def is_no_answer(answer: str | None) -> bool:
    """Whether the answer is empty, has no letters or digits, or is a bare "I don't know" / refusal phrase."""
    if answer is None:
        return True
    normal = _normalise(str(answer))
    return not normal or normal in _NO_ANSWERS


def truth_items(truth: str) -> list[tuple[str, ...]]:
    """The reference answer's items (split on ``";"``) as content-token tuples; items with no words are dropped."""
    items = (_content_tokens(part) for part in str(truth).split(";"))
    return [item for item in items if item]


def _segments(answer: str) -> list[frozenset[str]]:
    parts = (frozenset(_tokens(part)) for part in _SEGMENT_SPLIT.split(answer))
    return [part for part in parts if part]


class OfflineJudge:
    """Deterministic token-overlap scorer for tests and demos; not an LLM judge.

    Rule, exactly:

    1. Tokens are maximal runs of letters and digits, lowercased (``casefold``). An item's
       *content tokens* are its distinct tokens minus a small stop-word list (articles, pronouns,
       copulas, common prepositions and conjunctions, "then"); if every token of an item is a stop
       word, all its distinct tokens are used.
    2. ``truth`` is split on ``";"`` into items (one item when there is none); items without
       tokens are dropped. A truth without any token raises :class:`JudgeError`.
    3. An answer that is empty, has no token, or is (after lowercasing, dropping apostrophes and
       turning other punctuation into spaces) one of a fixed set of "no answer" phrases ("I don't
       know", "not sure", "cannot determine", "unknown", ...) scores 0.
    4. Single-item truth: 1 if all its content tokens appear anywhere in the answer, 0.5 if at least
       half of them do (``2 * hits >= n``), else 0.
    5. Several items: the answer is split into segments on "and then", "then", "->", "→", ",", ";",
       newlines and sentence-ending ". ! ?" (followed by a space or the end); empty segments are
       dropped. Taking the items in truth order, each item is matched by the not-yet-used segment
       that contains the most of its content tokens, provided it contains at least half of them
       (``2 * hits >= n``); ties go to the segment that comes first in the answer. The matched
       items, sorted by the position of their segments in the answer, form the predicted sequence.
    6. Score 1 if every item is matched and the predicted sequence is the truth order; 0.5 if at
       least half of the items are matched (``2 * matched >= items``; all matched in the wrong
       order gives 0.5); else 0.

    Extra segments in the answer (items not in the truth) are not penalised, and ``question`` is
    not used. Scores of this judge are never cached (it is pure).
    """

    label = OFFLINE_LABEL

    def score(self, question: str, truth: str, answer: str) -> float:
        """The answer's score against ``truth`` by the rule above: 0.0, 0.5 or 1.0."""
        items = truth_items(truth)
        if not items:
            raise JudgeError(f"the reference answer has no words to compare with: {truth!r}")
        if is_no_answer(answer):
            return 0.0
        if len(items) == 1:
            item = items[0]
            present = set(_tokens(answer))
            hits = sum(token in present for token in item)
            return 1.0 if hits == len(item) else 0.5 if 2 * hits >= len(item) else 0.0

        segments = _segments(answer)
        used: set[int] = set()
        matched: list[tuple[int, int]] = []  # (segment position, item position)
        for i, item in enumerate(items):
            best, best_hits = -1, 0
            for j, segment in enumerate(segments):
                if j in used:
                    continue
                hits = sum(token in segment for token in item)
                if 2 * hits >= len(item) and hits > best_hits:
                    best, best_hits = j, hits
            if best >= 0:
                used.add(best)
                matched.append((best, i))
        predicted = [i for _, i in sorted(matched)]
        if len(matched) == len(items) and predicted == list(range(len(items))):
            return 1.0
        return 0.5 if 2 * len(matched) >= len(items) else 0.0

    def __repr__(self) -> str:
        return "OfflineJudge()"


# --- reply parsing ------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def _short(text: object, limit: int = 120) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def parse_score(content: str, question: str = "") -> float:
    """The score in a judge's reply: 0.0, 0.5 or 1.0.

    Accepted: a JSON object with a ``"score"`` (a number or a numeric string), alone, inside a
    fenced block (```` ```json ... ``` ````) or embedded in other text; or a bare number. A
    ``<think>...</think>`` preamble is ignored.

    Raises:
        JudgeError: naming the question, when no score can be read or it is not 0, 0.5 or 1.
    """
    text = _THINK.sub("", str(content)).strip()
    fence = _FENCE.search(text)
    if fence:
        text = fence.group(1).strip()
    data = _loads(text)
    if data is None:
        embedded = _OBJECT.search(text)
        data = _loads(embedded.group(0)) if embedded else None
    value = data.get("score") if isinstance(data, dict) else data
    if isinstance(value, str):
        value = _loads(value.strip())
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise JudgeError(
            f"the judge's reply for question {_short(question)!r} has no readable score "
            f'(expected JSON {{"score": 0|0.5|1, ...}}): {_short(content)!r}'
        )
    score = float(value)
    if score not in SCORES:
        raise JudgeError(f"the judge gave question {_short(question)!r} the score {value!r}, not one of 0, 0.5, 1")
    return score


# --- cache --------------------------------------------------------------------------------------


def cache_key(question: str, truth: str, answer: str, model: str) -> str:
    """sha256 (hex) of (question, truth, answer, judge model, PROMPT_VERSION)."""
    payload = json.dumps([str(question), str(truth), str(answer), str(model), PROMPT_VERSION], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class JudgeCache:
    """SQLite store of API judgements: ``judgements(key TEXT PRIMARY KEY, score REAL, judge TEXT, created TEXT)``.

    Every :meth:`put` commits at once. Several processes may share the file: SQLite's lock
    serialises writers and a connection waits up to ``timeout`` seconds for it. One instance may
    be used from several threads (calls are serialised by a lock).

    Raises (at construction):
        CacheUnwritable: the folder or the database file cannot be created.
        JudgeError: the file exists but is not a usable SQLite database.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = 30.0):
        self.path = Path(path) if path is not None else cache_dir() / CACHE_FILE
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.OperationalError) as exc:
            raise CacheUnwritable(folder, self.path, exc) from exc
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS judgements "
                "(key TEXT PRIMARY KEY, score REAL NOT NULL, judge TEXT NOT NULL, created TEXT NOT NULL)"
            )
        except sqlite3.DatabaseError as exc:
            conn.close()
            if isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc):
                raise CacheUnwritable(folder, self.path, exc) from exc
            raise JudgeError(
                f"the judge cache {self.path} is not a usable SQLite database ({exc}); "
                "delete it or set VDG_CACHE to another folder"
            ) from exc
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise JudgeError(f"the judge cache {self.path} is closed")
        return self._conn

    def get(self, key: str) -> float | None:
        """The stored score for ``key``, or ``None`` (also for a stored value outside {0, 0.5, 1})."""
        with self._lock:
            row = self._connection().execute("SELECT score FROM judgements WHERE key = ?", (key,)).fetchone()
        if row is None or row[0] not in SCORES:
            return None
        return float(row[0])

    def put(self, key: str, score: float, judge: str) -> None:
        """Store (or replace) one score and commit it."""
        created = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO judgements (key, score, judge, created) VALUES (?, ?, ?, ?)",
                (key, float(score), judge, created),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._connection().execute("SELECT COUNT(*) FROM judgements").fetchone()[0])

    def close(self) -> None:
        """Close the database connection (further use raises :class:`JudgeError`)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.path)!r})"


# --- API judge ----------------------------------------------------------------------------------


def _safe_url(url: str) -> str:
    """The URL without user info, query or fragment (what error messages and logs show)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


class ApiJudge:
    """An LLM judge behind an OpenAI-compatible chat-completions endpoint; results cached in SQLite.

    Each answer is sent as one user message (:func:`render_prompt`) to ``POST {base_url}/chat/completions``
    (a ``base_url`` already ending in ``/chat/completions`` is used as is) with temperature 0 and
    ``max_tokens``; the reply's content is read by :func:`parse_score`. A blank answer scores 0
    without a request. The API key, when given, is sent only as ``Authorization: Bearer <key>``.

    Args:
        base_url: e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8000/v1``.
        model: the model name sent in each request; ``label`` is ``"api:<model>"``.
        api_key: optional (local servers usually need none).
        cache: a :class:`JudgeCache`, a database path, or ``None`` for
            ``vdg_tasks.perturb.cache.cache_dir() / "judge.sqlite"`` (opened on first use).
        use_cache: ``False`` sends every request and stores nothing.
        timeout: seconds per HTTP request.
        max_attempts: tries per answer for retryable failures (429, 5xx, timeouts, connection errors).
        backoff_base, backoff_cap: the wait after try k (1-based) is ``min(backoff_cap, backoff_base * 2**(k-1))``,
            raised to a numeric ``Retry-After`` (itself capped at ``backoff_cap``).
        max_tokens: the reply budget sent with each request.
        sleep: the waiting function (tests pass a no-op).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        cache: JudgeCache | str | os.PathLike[str] | None = None,
        use_cache: bool = True,
        timeout: float = 60.0,
        max_attempts: int = 5,
        backoff_base: float = 1.0,
        backoff_cap: float = 30.0,
        max_tokens: int = 200,
        sleep: Callable[[float], None] = time.sleep,
    ):
        base_url = str(base_url).strip()
        if urllib.parse.urlsplit(base_url).scheme not in ("http", "https"):
            raise ValueError(f"the judge base URL must start with http:// or https://, got {_safe_url(base_url)!r}")
        if not str(model).strip():
            raise ValueError("the judge model name is empty")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        base = base_url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.model = str(model).strip()
        self.label = f"api:{self.model}"
        self._api_key = api_key or None
        self._cache_arg = cache
        self._cache: JudgeCache | None = cache if isinstance(cache, JudgeCache) else None
        self.use_cache = use_cache
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.max_tokens = max_tokens
        self._sleep = sleep
        self._opener = urllib.request.build_opener()

    @classmethod
    def from_env(cls, **kwargs: Any) -> ApiJudge:
        """Build from ``VDG_JUDGE_BASE_URL``, ``VDG_JUDGE_MODEL`` and optional ``VDG_JUDGE_API_KEY``.

        ``kwargs`` go to the constructor (cache, timeout, sleep, ...).

        Raises:
            JudgeNotConfigured: the base URL or the model is missing or empty (the message names the
                missing variables and the offline alternative).
        """
        base_url = os.environ.get(ENV_BASE_URL, "").strip()
        model = os.environ.get(ENV_MODEL, "").strip()
        missing = [name for name, value in ((ENV_BASE_URL, base_url), (ENV_MODEL, model)) if not value]
        if missing:
            raise JudgeNotConfigured(
                f"the API judge is not configured: set {' and '.join(missing)} "
                f"(e.g. {ENV_BASE_URL}=https://api.openai.com/v1 and {ENV_MODEL}=<model name>; "
                f"{ENV_API_KEY} too if the endpoint needs a key), "
                "or use the deterministic offline scorer with --judge offline"
            )
        return cls(base_url, model, os.environ.get(ENV_API_KEY, "").strip() or None, **kwargs)

    @property
    def cache(self) -> JudgeCache:
        """The judge cache (opened on first use)."""
        if self._cache is None:
            self._cache = JudgeCache(self._cache_arg)  # type: ignore[arg-type]
        return self._cache

    def score(self, question: str, truth: str, answer: str) -> float:
        """The answer's score (from the cache when present): 0.0, 0.5 or 1.0.

        Raises:
            JudgeError: the request failed after retries, or the reply has no valid score.
        """
        return self.score_cached(question, truth, answer)[0]

    def score_cached(self, question: str, truth: str, answer: str) -> tuple[float, bool]:
        """``(score, cached)``: cached is True when the score came from the cache (no request sent)."""
        if answer is None or not str(answer).strip():
            return 0.0, False
        key = cache_key(question, truth, answer, self.model)
        if self.use_cache:
            hit = self.cache.get(key)
            if hit is not None:
                return hit, True
        score = parse_score(self._complete(render_prompt(question, truth, answer), question), question)
        if self.use_cache:
            self.cache.put(key, score, self.label)
        return score, False

    # The key goes into this header and nowhere else.
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "vdg-judge"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _redact(self, text: str) -> str:
        # the key by value, and anything else that looks secret (credentials in the endpoint's URL)
        return redact(text.replace(self._api_key, "***") if self._api_key else text)

    def _error_detail(self, exc: urllib.error.HTTPError) -> str:
        """A short, key-free excerpt of an error body (the server's message when it is OpenAI-shaped)."""
        if exc.code in (401, 403):
            variable = f"check {ENV_API_KEY}" if self._api_key else f"the endpoint may need a key: set {ENV_API_KEY}"
            return f" ({variable})"
        try:
            raw = exc.read(4096).decode("utf-8", "replace")
        except Exception:  # the body is a courtesy
            return ""
        data = _loads(raw)
        error = data.get("error") if isinstance(data, dict) else None
        message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else raw
        message = self._redact(_short(message or "", 200))
        return f": {message}" if message else ""

    def _complete(self, prompt: str, question: str) -> str:
        """POST one chat completion (with retries) and return the reply's message content."""
        body = json.dumps(
            {
                "model": self.model,
                "messages": [{"role": "user", "content": prompt}],
                "temperature": 0,
                "max_tokens": self.max_tokens,
            }
        ).encode("utf-8")
        where = _safe_url(self.url)
        failure = ""
        for attempt in range(1, self.max_attempts + 1):
            request = urllib.request.Request(self.url, data=body, headers=self._headers(), method="POST")
            retry_after: float | None = None
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    raw = response.read()
            except urllib.error.HTTPError as exc:
                status = f"HTTP {exc.code} {exc.reason}".rstrip()
                detail = self._error_detail(exc)
                retryable = exc.code == 429 or exc.code >= 500
                if retryable:
                    retry_after = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
                exc.close()
                if not retryable:
                    message = f"the judge endpoint {where} refused the request: {status}{detail}"
                    raise JudgeError(self._redact(message)) from None
                failure = f"{status}{detail}"
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
                failure = self._redact(f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__)
            else:
                return self._content(raw, question)
            if attempt == self.max_attempts:
                break
            delay = min(self.backoff_cap, self.backoff_base * 2 ** (attempt - 1))
            if retry_after is not None:
                delay = max(delay, min(self.backoff_cap, retry_after))
            logger.warning(
                "judge: %s from %s; try %d of %d again in %.1f s", failure, where, attempt + 1, self.max_attempts, delay
            )
            self._sleep(delay)
        raise JudgeError(self._redact(f"the judge endpoint {where} failed {self.max_attempts} times; last: {failure}"))

    def _content(self, raw: bytes, question: str) -> str:
        data = _loads(raw.decode("utf-8", "replace"))
        try:
            content = data["choices"][0]["message"]["content"]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            excerpt = self._redact(_short(raw.decode("utf-8", "replace"), 200))
            raise JudgeError(
                f"malformed reply from {_safe_url(self.url)} for question {_short(question)!r}: "
                f"no choices[0].message.content text ({excerpt!r})"
            )
        return content

    def __repr__(self) -> str:
        key = "set" if self._api_key else "unset"
        return f"ApiJudge(url={_safe_url(self.url)!r}, model={self.model!r}, api_key={key})"


def _retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (an HTTP date is ignored)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None


# --- entry points -------------------------------------------------------------------------------


def make_judge(name: JudgeName, **kwargs: Any) -> Judge:
    """The judge ``--judge`` names: ``"offline"`` (:class:`OfflineJudge`) or ``"api"`` (:meth:`ApiJudge.from_env`).

    ``kwargs`` go to :meth:`ApiJudge.from_env` (the offline judge takes none).

    Raises:
        JudgeNotConfigured: ``"api"`` without ``VDG_JUDGE_BASE_URL`` / ``VDG_JUDGE_MODEL``.
        ValueError: an unknown name, or arguments for the offline judge.
    """
    if name == "offline":
        if kwargs:
            raise ValueError(f"the offline judge takes no options, got {sorted(kwargs)}")
        return OfflineJudge()
    if name == "api":
        return ApiJudge.from_env(**kwargs)
    raise ValueError(f"unknown judge {name!r}: expected 'offline' or 'api'")


def judge_answers(items: Iterable[JudgeItem], judge: Judge, *, progress: bool | None = None) -> list[Judgement]:
    """Score every item in order; one :class:`Judgement` per item.

    A judge with a ``score_cached`` method (:class:`ApiJudge`) reports cache hits; other judges
    give ``cached=False``. Each API score is cached as soon as it arrives, so after a failure the
    scores already obtained are kept. ``progress``: show a tqdm bar (default: only for an API judge
    and at least 20 items).

    Raises:
        JudgeError: with the question id first in the message (and in ``question_id``) when an
            item cannot be judged or a judge returns a score outside {0, 0.5, 1}.
    """
    items = list(items)
    label = judge.label
    score_cached = getattr(judge, "score_cached", None)
    if progress is None:
        progress = callable(score_cached) and len(items) >= _PROGRESS_MIN_ITEMS
    results: list[Judgement] = []
    for item in tqdm(items, desc=f"judging ({label})", unit="answer", disable=not progress):
        qid = item.question_id
        try:
            if callable(score_cached):
                score, cached = score_cached(item.question, item.truth, item.answer)
            else:
                score, cached = judge.score(item.question, item.truth, item.answer), False
        except JudgeError as exc:
            raise JudgeError(f"question {qid}: {exc}", question_id=qid) from exc
        if score not in SCORES:
            raise JudgeError(f"question {qid}: {label} gave the score {score!r}, not one of 0, 0.5, 1", question_id=qid)
        results.append(Judgement(qid, float(score), label, bool(cached)))
    return results


def judge_frame(frame: pd.DataFrame, judge: Judge) -> pd.DataFrame:
    """The tidy frame with ``judge_score``, ``judge`` and ``score`` filled for its ``open`` rows (a copy). The
    answers of a graded task (``scoring`` judge under a condition asking its own question, not vdg's ``open``) are
    scored answers from then on: status ``ok``, ``correct`` when ``score >= CORRECT_AT``.

    Raises:
        JudgeError: an answer could not be judged (the question id first in the message).
    """
    out = frame.copy()
    open_rows = out.index[out["status"] == OPEN_STATUS]
    if len(open_rows) == 0:
        return out
    rows = out.loc[open_rows]
    items = [JudgeItem(str(r.question_id), str(r.question), str(r.truth), str(r.response)) for r in rows.itertuples()]
    judged = judge_answers(items, judge)
    out.loc[open_rows, "judge_score"] = [j.score for j in judged]
    out.loc[open_rows, "judge"] = [j.judge_label for j in judged]
    out.loc[open_rows, "score"] = [j.score for j in judged]
    graded = rows.index[((rows["scoring"] == JUDGE) & ~rows["condition"].isin(OPEN_ANSWER)).to_numpy(bool)]
    out.loc[graded, "status"] = "ok"
    out.loc[graded, "correct"] = out.loc[graded, "score"] >= CORRECT_AT
    return out
