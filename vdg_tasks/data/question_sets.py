"""Fixed question sets: one stratified list of question ids that every run of a comparison uses.

The paper evaluates a fixed set of 100 questions per task type (6 task types: 600 questions).
``vdg subset BENCHMARK --per-task-type N --seed S --out FILE`` writes such a set
(``stratified_subset`` + ``write``); setting ``VDG_QUESTION_SET=FILE`` restricts every vdg task of
that benchmark to it (``active``, ``restrict_ids``), and every logged sample carries the set's
``digest`` (``postprocess.reading.lmms_eval_logs`` refuses to join runs of one benchmark made on different sets).

The choice is deterministic: per task type the ids are sorted, then drawn without replacement by a
numpy Generator seeded from (seed, benchmark, task type) (``vdg_tasks.vocabulary.seeding``), so neither the
order of the docs nor the other task types change it. A task type with N questions or fewer
contributes all of them (``QuestionSet.short_task_types``).

The file is JSON::

    {"format": "vdg-question-set/1", "benchmark": "videomme", "seed": 0, "per_task_type": 100,
     "digest": "3f2a...", "n_questions": 600, "counts": {"OCR Problems": 100, ...}, "ids": [...]}

with an optional ``"description"`` saying how a set not drawn by ``vdg subset`` was made (``vdg debias``).

A plain text file with one question id per line (blank lines and ``#`` comments skipped) is read as
a set too: it names no benchmark, so it applies to whichever benchmark asks (its digest is then
computed for that benchmark), and its seed and per_task_type are ``UNKNOWN`` (-1).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vdg_tasks.vocabulary.seeding import rng_for

logger = logging.getLogger(__name__)

#: The environment variable naming the active question-set file.
ENV_VAR = "VDG_QUESTION_SET"
FORMAT = "vdg-question-set/1"
#: seed and per_task_type of a set read from a plain list of ids.
UNKNOWN = -1
#: The paper's fixed set: questions per task type.
DEFAULT_PER_TASK_TYPE = 100
DIGEST_CHARS = 12


def digest_of(benchmark: str, ids: Iterable[str]) -> str:
    """A short stable content hash of a benchmark and its question ids (their order does not matter)."""
    text = "\x1f".join([str(benchmark), *sorted(str(i) for i in ids)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGEST_CHARS]


@dataclass(frozen=True)
class QuestionSet:
    """A benchmark's fixed list of question ids.

    ``ids`` are sorted; ``counts`` are (task type, questions chosen) pairs sorted by task type (empty
    for a plain id list); ``description`` says how the set was made when it is not a ``vdg subset`` draw
    (``vdg debias``: "debiased: iterative bias pruning ..."), "" otherwise; ``source`` is the file it was read from
    ("" when built here).
    """

    benchmark: str
    ids: tuple[str, ...]
    seed: int
    per_task_type: int
    digest: str
    counts: tuple[tuple[str, int], ...] = ()
    description: str = ""
    source: str = field(default="", compare=False)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, question_id: object) -> bool:
        return str(question_id) in self._id_set

    @functools.cached_property
    def _id_set(self) -> frozenset[str]:
        return frozenset(self.ids)

    @property
    def short_task_types(self) -> list[tuple[str, int]]:
        """(task type, count) of the task types with fewer than ``per_task_type`` questions (all of them taken)."""
        if self.per_task_type <= 0:
            return []
        return [(t, n) for t, n in self.counts if n < self.per_task_type]

    @property
    def where(self) -> str:
        """How to name this set in a message: its file, else its digest."""
        return self.source or f"question set {self.digest}"


def make_set(
    benchmark: str,
    ids: Iterable[str],
    seed: int = UNKNOWN,
    per_task_type: int = UNKNOWN,
    counts: Iterable[tuple[str, int]] = (),
    source: str = "",
    description: str = "",
) -> QuestionSet:
    """A QuestionSet of these ids, its digest computed."""
    ordered = tuple(sorted(str(i) for i in ids))
    return QuestionSet(
        benchmark=str(benchmark),
        ids=ordered,
        seed=int(seed),
        per_task_type=int(per_task_type),
        digest=digest_of(benchmark, ordered),
        counts=tuple(sorted((str(t), int(n)) for t, n in counts)),
        description=str(description),
        source=source,
    )


def _blank(value: Any) -> bool:
    """None, NaN, pandas' NA or only whitespace."""
    if value is None:
        return True
    try:
        if value != value:  # NaN
            return True
    except TypeError:  # pd.NA: its truth value is ambiguous
        return True
    return str(value).strip() == ""


def _doc_ids(docs: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """task type -> question ids (sorted); an error for a doc lacking either, or a repeated id."""
    by_type: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    for i, doc in enumerate(docs):
        values = {}
        for key in ("question_id", "task_type"):
            value = doc.get(key) if isinstance(doc, Mapping) else None
            if _blank(value):
                raise ValueError(f"doc #{i} has no {key} (every doc needs question_id and task_type)")
            values[key] = str(value).strip()
        qid, task_type = values["question_id"], values["task_type"]
        if qid in seen:
            raise ValueError(
                f"question id {qid!r} appears twice (task types {seen[qid]!r} and {task_type!r}); "
                "a question set needs one id per question"
            )
        seen[qid] = task_type
        by_type.setdefault(task_type, []).append(qid)
    if not seen:
        raise ValueError("no questions to choose from (the docs are empty)")
    return {t: sorted(ids) for t, ids in by_type.items()}


def stratified_subset(docs: Iterable[Mapping[str, Any]], per_task_type: int, seed: int, benchmark: str) -> QuestionSet:
    """``per_task_type`` questions of each task type, drawn deterministically (module docstring).

    A task type with no more than ``per_task_type`` questions contributes all of them (see
    ``QuestionSet.short_task_types``). Raises ValueError for a doc lacking question_id or task_type,
    a question id that appears twice, no docs, or ``per_task_type`` below 1.
    """
    if isinstance(per_task_type, bool) or int(per_task_type) < 1:
        raise ValueError(f"--per-task-type must be at least 1, got {per_task_type}")
    if not str(benchmark).strip():
        raise ValueError("a question set needs a benchmark name")
    per_task_type, seed = int(per_task_type), int(seed)
    chosen: list[str] = []
    counts: list[tuple[str, int]] = []
    for task_type, ids in sorted(_doc_ids(docs).items()):
        if len(ids) <= per_task_type:
            picked = ids
        else:
            rng = rng_for("question_set", seed, benchmark, task_type)
            picked = [ids[i] for i in sorted(rng.choice(len(ids), size=per_task_type, replace=False))]
        chosen += picked
        counts.append((task_type, len(picked)))
    return make_set(benchmark, chosen, seed=seed, per_task_type=per_task_type, counts=counts)


def to_json(question_set: QuestionSet) -> dict[str, Any]:
    described = {"description": question_set.description} if question_set.description else {}
    return {
        "format": FORMAT,
        "benchmark": question_set.benchmark,
        **described,
        "seed": question_set.seed,
        "per_task_type": question_set.per_task_type,
        "digest": question_set.digest,
        "n_questions": len(question_set.ids),
        "counts": dict(question_set.counts),
        "ids": list(question_set.ids),
    }


def write(question_set: QuestionSet, path: str | Path) -> Path:
    """Write the set as JSON (module docstring); returns the path. Its folder is created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(to_json(question_set), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _int_field(data: Mapping[str, Any], key: str, where: str) -> int:
    value = data.get(key, UNKNOWN)
    if isinstance(value, bool) or not isinstance(value, int) or value < UNKNOWN:
        raise ValueError(f"{where}: {key} must be an integer (or -1: unknown), got {value!r}")
    return value


def _unique_ids(ids: Sequence[Any], where: str) -> list[str]:
    if not ids:
        raise ValueError(f"{where}: holds no question ids")
    out, seen = [], set()
    for value in ids:
        if not isinstance(value, (str, int)) or isinstance(value, bool) or str(value).strip() == "":
            raise ValueError(f"{where}: {value!r} is not a question id (expected non-empty strings)")
        text = str(value).strip()
        if text in seen:
            raise ValueError(f"{where}: question id {text!r} is listed twice")
        seen.add(text)
        out.append(text)
    return out


def _from_json(data: Any, where: str) -> QuestionSet:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object with benchmark, ids, ... (a `vdg subset` file)")
    if data.get("format", FORMAT) != FORMAT:
        raise ValueError(f"{where}: format {data.get('format')!r} is not {FORMAT!r}")
    benchmark = data.get("benchmark")
    if not isinstance(benchmark, str) or not benchmark.strip():
        raise ValueError(f"{where}: no benchmark (a non-empty string)")
    ids = data.get("ids")
    if not isinstance(ids, list):
        raise ValueError(f"{where}: no ids (a JSON array of question ids)")
    ids = _unique_ids(ids, where)
    counts = data.get("counts") or {}
    if not isinstance(counts, dict) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts.values()
    ):
        raise ValueError(f"{where}: counts must be an object of task type -> number of questions")
    if counts and sum(counts.values()) != len(ids):
        raise ValueError(f"{where}: counts add up to {sum(counts.values())} but ids lists {len(ids)} questions")
    if "n_questions" in data and data["n_questions"] != len(ids):
        raise ValueError(f"{where}: n_questions is {data['n_questions']!r} but ids lists {len(ids)} questions")
    out = make_set(
        benchmark,
        ids,
        seed=_int_field(data, "seed", where),
        per_task_type=_int_field(data, "per_task_type", where),
        counts=counts.items(),
        source=where,
        description=str(data.get("description") or ""),
    )
    digest = data.get("digest")
    if digest is not None and digest != out.digest:
        raise ValueError(
            f"{where}: digest {digest!r} does not match its benchmark and ids ({out.digest}); the file was edited "
            "or damaged: write it again with `vdg subset`, or delete the digest field to accept the ids as they are"
        )
    return out


def read(path: str | Path) -> QuestionSet:
    """A question set from a ``write`` JSON file, or a text file of one id per line (module docstring).

    Raises ValueError naming the file and what is wrong with it.
    """
    path = Path(path)
    where = str(path)
    if not path.is_file():
        raise ValueError(f"{where}: no such question-set file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{where}: unreadable question-set file ({exc})") from None
    if not text.strip():
        raise ValueError(f"{where}: empty question-set file")
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        return _from_json(data, where)
    lines = [line.strip() for line in text.splitlines()]
    ids = _unique_ids([line for line in lines if line and not line.startswith("#")], where)
    return make_set("", ids, source=where)


@functools.lru_cache(maxsize=16)
def _read_cached(path: str, mtime_ns: int, size: int) -> QuestionSet:
    return read(path)


def read_cached(path: str | Path) -> QuestionSet:
    """``read``, once per version of the file (a hook may ask per sample)."""
    try:
        stat = Path(path).stat()
    except OSError:
        return read(path)  # raises, naming the file
    return _read_cached(str(path), stat.st_mtime_ns, stat.st_size)


def for_benchmark(question_set: QuestionSet, benchmark: str) -> QuestionSet | None:
    """The set as it applies to ``benchmark``: None when it is another benchmark's; a plain id list
    (no benchmark) is bound to this one, its digest computed for it."""
    if not question_set.benchmark:
        return replace(question_set, benchmark=benchmark, digest=digest_of(benchmark, question_set.ids))
    return question_set if question_set.benchmark == benchmark else None


def active(benchmark: str) -> QuestionSet | None:
    """The set ``VDG_QUESTION_SET`` names, for ``benchmark``: None when the variable is unset or empty,
    or when the file is another benchmark's set (one variable can stay set across benchmarks).

    Raises ValueError, naming the file, when it cannot be read as a question set.
    """
    path = os.environ.get(ENV_VAR, "").strip()
    if not path:
        return None
    try:
        question_set = read_cached(path)
    except ValueError as exc:
        raise ValueError(f"{ENV_VAR}={path}: {exc}") from None
    return for_benchmark(question_set, benchmark)


def active_digest(benchmark: str) -> str:
    """The digest of the active set for ``benchmark`` (the ``question_set`` logged per sample); "" when none."""
    question_set = active(benchmark)
    return question_set.digest if question_set else ""


def restrict_ids(question_ids: Sequence[Any], benchmark: str, question_set: QuestionSet | None = None) -> list[bool]:
    """Per question id: keep it? All True when no set applies to ``benchmark``.

    ``question_set`` defaults to ``active(benchmark)``. A set that keeps none of the questions is an
    error (ValueError naming the set): the benchmark would run on nothing. Set ids the docs lack are
    logged as a warning.
    """
    chosen = active(benchmark) if question_set is None else for_benchmark(question_set, benchmark)
    if chosen is None:
        return [True] * len(question_ids)
    keep = [str(q) in chosen for q in question_ids]
    n_kept = sum(keep)
    if n_kept == 0:
        raise ValueError(
            f"{chosen.where}: none of its {len(chosen)} question ids is one of the {len(question_ids)} questions "
            f"of {benchmark}; is it another benchmark's set?"
        )
    if n_kept < len(chosen):
        present = {str(q) for q in question_ids}
        missing = [q for q in chosen.ids if q not in present]
        logger.warning(
            "%s: %d of its %d question ids are not among the questions of %s (e.g. %s); running the %d found",
            chosen.where,
            len(missing),
            len(chosen),
            benchmark,
            ", ".join(missing[:3]),
            n_kept,
        )
    return keep


_DOC_FIELDS = ("question_id", "task_type")


def read_docs(path: str | Path) -> list[dict[str, Any]]:
    """Docs from a local file: a JSON array of objects, JSON lines, parquet or CSV, with question_id and
    task_type. Raises ValueError naming the file."""
    path = Path(path)
    where = f"--docs {path}"
    if not path.is_file():
        raise ValueError(f"{where}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".csv"):
            # pandas (~0.8 s) only for a .parquet/.csv question set, not on import of vdg_tasks.lmms.hooks
            import pandas as pd

            table = (
                pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path, dtype=str, keep_default_na=False)
            )
            records = table.to_dict("records")
        else:
            text = path.read_text(encoding="utf-8")
    except Exception as exc:  # pyarrow, pandas and decoding errors have no common base
        raise ValueError(f"{where}: unreadable ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
    if suffix not in (".parquet", ".csv"):
        records = _json_records(text, where)
    if not records:
        raise ValueError(f"{where}: holds no questions")
    missing = [k for k in _DOC_FIELDS if not any(k in r for r in records[:1])]
    if missing:
        raise ValueError(f"{where}: no {' or '.join(missing)} field (need {', '.join(_DOC_FIELDS)})")
    try:
        _doc_ids(records)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return records


def _json_records(text: str, where: str) -> list[dict[str, Any]]:
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        if not all(isinstance(r, dict) for r in data):
            raise ValueError(f"{where}: expected a JSON array of objects (one per question)")
        return data
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise ValueError(f"{where}:{lineno}: expected a JSON object (one question per line)")
        records.append(record)
    return records
