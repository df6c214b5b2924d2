"""Load local InfiniBench "global appearance" questions into vdg docs.

InfiniBench (Vision-CAIR) asks, per TV episode and main character, "What is the correct sequence of
changing the outfits for <NAME> in this episode?"; every option is an ordering of outfit descriptions,
one option is the literal "I don't know". Nothing is downloaded here: point ``load_questions`` at
annotations and videos already on disk.

Annotations accepted (``annotations``):

- one JSON file holding a list of records (2024 release: ``Benchmark_annotations/Global_appreance.json``);
- one JSON file holding a dict ``{video: [records]}`` (the authors' generator writes per video), or
  ``{key: record}``;
- a JSON-lines file (``.jsonl``/``.ndjson``, or any file whose text is one JSON value per line);
- a folder: ``*/skills_json/*.json`` (2025 release, ``{train,validation,test}/skills_json/``), else any
  ``*.json``/``*.jsonl`` under it; of those, the files whose name mentions the skill ("appear", or the
  2024 spelling "appreance"), or all of them if none does. When the folder holds several splits,
  ``split`` must name one.

Record fields read (others are ignored):

- ``question`` (required); ``character`` (else parsed from "... for <NAME> in this episode");
- ``options``: a list, or a Python-literal string of one (read with ``ast.literal_eval``); 3 to 7
  entries, each an ordering (list of outfit strings), a string, or "I don't know";
- ``answer_idx`` (0-based int or numeric string) or ``answer`` (a letter "B", or a 0-based index);
  a record with neither is an error (the test split hides answers; use validation);
- ``show``, ``season`` ("season_1" or 1), ``episode`` ("episode_3" or 3): each falls back to
  ``video_path_mp4`` (``/<show>/season_N/episode_M.mp4``) and then to the dict key it was listed under;
- ``video_path_mp4``, ``video_subtitles``: resolved under ``videos_root`` / ``subtitles_root``;
- ``temporal_grounding``: a dict outfit -> ``[[start_s, end_s], ...]``, a list aligned with the answer's
  outfits, or missing (then every window list is empty);
- ``question_id`` (else one is made up), ``split`` (compared with ``split`` when both are given),
  ``skill_name`` (a record whose skill_name does not mention appearance is another skill: skipped and
  logged).

A malformed record raises ValueError naming the file, the 0-based record index, the question id (if
any) and the field; no record is silently dropped. A missing video file is *not* an error here (its
path is kept; the hook reports the question later).

The output doc schema is documented in ``load_questions``.
"""

from __future__ import annotations

import ast
import html
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vdg_tasks.data.roster import Roster, load_roster, show_key

__all__ = [
    "IDK_TEXT",
    "LETTERS",
    "MAX_OPTIONS",
    "MIN_OPTIONS",
    "TASK_TYPE",
    "find_annotation_files",
    "load_questions",
    "parse_srt",
    "prepare",
    "probe_duration",
    "write_questions",
]

log = logging.getLogger(__name__)

TASK_TYPE = "global_appearance"
IDK_TEXT = "I don't know"
MIN_OPTIONS, MAX_OPTIONS = 3, 7
LETTERS = "ABCDEFG"

_SKILL_RE = re.compile(r"app(?:ear|rea)", re.IGNORECASE)  # "appearance" and the 2024 file's "appreance"
_PATH_RE = re.compile(r"([^/\\]+)[/\\]season[_ ]?(\d+)[/\\]episode[_ ]?(\d+)", re.IGNORECASE)
_NAME_IN_QUESTION_RE = re.compile(r"\bfor\s+(.+?)\s+in\s+this\s+episode", re.IGNORECASE)
_LETTER_RE = re.compile(r"^\(?([A-Za-z])\)?[.):]?$")
_PREFIX_RE = re.compile(r"^([A-G])[.)]\s+")


# --------------------------------------------------------------------------------------------------
# Reading annotation files


@dataclass(frozen=True)
class _Raw:
    """One record as read, with where it came from."""

    path: Path
    index: int  # 0-based, over the records of ``path`` in file order
    key: str | None  # the dict key it was listed under, if any
    record: object


def find_annotation_files(folder: str | Path, split: str | None = None) -> list[Path]:
    """The global-appearance annotation files under ``folder`` (see the module docstring), sorted.

    Raises:
        ValueError: no JSON files, ``split`` names no folder, or several splits and ``split`` is None.
    """
    root = Path(folder)
    files = sorted(p for p in root.glob("*/skills_json/*.json") if not p.name.startswith("."))
    files += sorted(p for p in root.glob("skills_json/*.json") if not p.name.startswith("."))
    if not files:
        files = sorted(
            p
            for p in root.rglob("*")
            if p.is_file()
            and p.suffix.lower() in (".json", ".jsonl", ".ndjson")
            and not any(part.startswith(".") for part in p.relative_to(root).parts)
        )
    if not files:
        raise ValueError(f"annotations folder {root} holds no *.json or *.jsonl files")
    skill = [p for p in files if _SKILL_RE.search(p.name)]
    files = skill or files
    splits = sorted({p.relative_to(root).parts[0] for p in files if p.parent.name == "skills_json"} - {"skills_json"})
    if split is not None:
        inside = [p for p in files if split in p.relative_to(root).parts[:-1]]
        if splits and not inside:
            raise ValueError(f"annotations folder {root} has no split {split!r}; it has {splits}")
        files = inside or files
    elif len(splits) > 1:
        raise ValueError(
            f"annotations folder {root} holds the splits {splits}; pass split= one of them "
            "(the test split hides answers, so use 'validation' to score)"
        )
    return files


def _load_json_or_jsonl(path: Path) -> tuple[object, bool]:
    """(parsed value, is_jsonl)."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e})") from e
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        try:
            return json.loads(text), False
        except json.JSONDecodeError as e:
            if not e.msg.startswith("Extra data"):
                raise ValueError(f"{path}: invalid JSON ({e})") from e
    records = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise ValueError(f"{path} line {n}: invalid JSON ({e})") from e
    return records, True


def _iter_raw(path: Path) -> Iterator[_Raw]:
    data, _ = _load_json_or_jsonl(path)
    index = 0
    if isinstance(data, list):
        for rec in data:
            yield _Raw(path, index, None, rec)
            index += 1
    elif isinstance(data, Mapping):
        if "question" in data and "options" in data:  # one bare record
            yield _Raw(path, 0, None, data)
            return
        for key, value in data.items():
            items = value if isinstance(value, list) else [value]
            for rec in items:
                yield _Raw(path, index, str(key), rec)
                index += 1
    else:
        raise ValueError(
            f"{path}: expected a list of records, a dict of video -> records, or JSON lines; got {type(data).__name__}"
        )


# --------------------------------------------------------------------------------------------------
# Field parsing


class _FieldError(ValueError):
    """A problem with one field of one record; wrapped with the record's location by the caller."""


def _int_from(value: object, what: str) -> int:
    """An int from 3, "3", "season_3", "Season 3" (the last number in a string)."""
    if isinstance(value, bool):
        raise _FieldError(f"{what} {value!r} is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        m = re.search(r"(\d+)\s*$", value.strip())
        if m:
            return int(m.group(1))
    raise _FieldError(f"{what} {value!r} has no number (expected e.g. 'season_1' or 1)")


def _literal(value: object, what: str) -> object:
    """``value``, or the Python literal a string holds (``ast.literal_eval``, never ``eval``)."""
    if not isinstance(value, str):
        return value
    try:
        return ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
        raise _FieldError(f"{what} is a string that is not a Python literal: {value[:80]!r} ({e})") from e


def _is_idk(text: str) -> bool:
    norm = text.replace("\u2019", "'").strip().rstrip(".").strip().casefold()
    return norm in ("i don't know", "i do not know", "i dont know")


def _parse_options(value: object) -> list[list[str] | str]:
    """Each option as a list of outfits (an ordering) or a plain string."""
    if value is None:
        raise _FieldError("options is missing")
    if isinstance(value, str):
        value = _literal(value, "options")
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list):
        raise _FieldError(f"options must be a list, got {type(value).__name__}")
    if not MIN_OPTIONS <= len(value) <= MAX_OPTIONS:
        raise _FieldError(f"options has {len(value)} entries; expected {MIN_OPTIONS} to {MAX_OPTIONS}")
    out: list[list[str] | str] = []
    for i, opt in enumerate(value):
        if isinstance(opt, str) and opt.strip().startswith("[") and not _is_idk(opt):
            try:
                opt = _literal(opt, f"options[{i}]")
            except _FieldError:
                pass  # a string that merely starts with "[": keep it as text
        if isinstance(opt, str):
            text = opt.strip()
            m = _PREFIX_RE.match(text)
            if m and m.group(1) == LETTERS[i]:
                text = text[m.end() :]
            if not text:
                raise _FieldError(f"options[{i}] is empty")
            out.append(text)
        elif isinstance(opt, (list, tuple)):
            if not opt:
                raise _FieldError(f"options[{i}] is an empty list of outfits")
            bad = [o for o in opt if not isinstance(o, str) or not o.strip()]
            if bad:
                raise _FieldError(f"options[{i}] has outfits that are not non-empty strings: {bad[:3]!r}")
            out.append([o.strip() for o in opt])
        else:
            raise _FieldError(f"options[{i}] is a {type(opt).__name__}; expected a list of outfits or a string")
    return out


def _option_text(opt: list[str] | str) -> str:
    return "; ".join(opt) if isinstance(opt, list) else opt


def _parse_answer(rec: Mapping, options: Sequence[list[str] | str]) -> int:
    """The 0-based index of the correct option from ``answer_idx`` and/or ``answer``."""
    n = len(options)
    found: list[tuple[str, int]] = []
    if rec.get("answer_idx") is not None:
        v = rec["answer_idx"]
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise _FieldError(f"answer_idx {v!r} is not an integer")
        if isinstance(v, str):
            if not re.fullmatch(r"\s*-?\d+\s*", v):
                raise _FieldError(f"answer_idx {v!r} is not an integer")
            v = int(v)
        if not 0 <= v < n:
            raise _FieldError(f"answer_idx {v} is not an index into its {n} options")
        found.append(("answer_idx", v))
    if rec.get("answer") is not None:
        v = rec["answer"]
        idx: int | None = None
        if isinstance(v, int) and not isinstance(v, bool):
            idx = v
        elif isinstance(v, str) and re.fullmatch(r"\s*-?\d+\s*", v):
            idx = int(v)
        elif isinstance(v, str) and _LETTER_RE.match(v.strip()):
            idx = LETTERS.find(_LETTER_RE.match(v.strip()).group(1).upper())  # type: ignore[union-attr]
            if idx < 0:
                raise _FieldError(f"answer {v!r} is not a letter of its {n} options")
        else:
            matches = [i for i, o in enumerate(options) if o == v or _option_text(o) == v]
            if not matches:
                raise _FieldError(f"answer {v!r} is neither a letter, an index, nor the text of an option")
            idx = matches[0]
        if not 0 <= idx < n:
            raise _FieldError(f"answer {v!r} is not an index into its {n} options")
        found.append(("answer", idx))
    if not found:
        raise _FieldError(
            "answer_idx is missing (and there is no 'answer'); the InfiniBench test split hides answers, "
            "use the validation split"
        )
    if len({i for _, i in found}) > 1:
        raise _FieldError(f"answer_idx and answer disagree: {dict(found)}")
    return found[0][1]


def _parse_interval(value: object, what: str) -> list[float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise _FieldError(f"{what} {value!r} is not a [start_s, end_s] pair")
    try:
        start, end = (float(x) for x in value)
    except (TypeError, ValueError) as e:
        raise _FieldError(f"{what} {value!r} has a non-numeric bound") from e
    if not (start == start and end == end) or start < 0 or end < start:  # NaN, negative, reversed
        raise _FieldError(f"{what} {value!r} is not an interval with 0 <= start <= end")
    return [start, end]


def _parse_intervals(value: object, what: str) -> list[list[float]]:
    if value is None:
        return []
    if isinstance(value, str):
        value = _literal(value, what)
    if not isinstance(value, (list, tuple)):
        raise _FieldError(f"{what} must be a list of [start_s, end_s] intervals, got {type(value).__name__}")
    if len(value) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        value = [value]  # one bare interval
    return sorted(_parse_interval(iv, f"{what}[{j}]") for j, iv in enumerate(value))


def _parse_windows(value: object, outfits: Sequence[str]) -> list[list[list[float]]]:
    """Per outfit of ``outfits``, its sorted intervals."""
    if value is None or value == "" or value == {} or value == []:
        return [[] for _ in outfits]
    if isinstance(value, str):
        value = _literal(value, "temporal_grounding")
    if isinstance(value, Mapping):
        exact = {str(k): v for k, v in value.items()}
        folded = {str(k).strip().casefold(): v for k, v in value.items()}
        out = []
        for outfit in outfits:
            v = exact.get(outfit, folded.get(outfit.strip().casefold()))
            out.append(_parse_intervals(v, f"temporal_grounding[{outfit!r}]"))
        unmatched = [k for k in folded if k not in {o.strip().casefold() for o in outfits}]
        if unmatched:
            log.warning("temporal_grounding keys not among the answer's outfits (ignored): %s", unmatched[:3])
        return out
    if isinstance(value, (list, tuple)):
        if len(value) != len(outfits):
            raise _FieldError(
                f"temporal_grounding is a list of {len(value)} entries but the answer has {len(outfits)} outfits"
            )
        return [_parse_intervals(v, f"temporal_grounding[{j}]") for j, v in enumerate(value)]
    raise _FieldError(f"temporal_grounding must be a dict or a list, got {type(value).__name__}")


def _character_as_written(character: str, question: str) -> str:
    m = re.search(r"(?<!\w)" + re.escape(character) + r"(?!\w)", question, re.IGNORECASE)
    return m.group(0) if m else character


# --------------------------------------------------------------------------------------------------
# Paths, durations, subtitles


def _show_dirs(show: str) -> list[str]:
    names = [show, show_key(show), show.lower(), show.replace(" ", "_"), show.lower().replace(" ", "_")]
    return list(dict.fromkeys(n for n in names if n))


def _resolve(root: Path, given: str | None, show: str, season: int, episode: int, suffix: str) -> tuple[Path, bool]:
    """(path, exists): the first existing candidate, else the first candidate.

    Candidates: ``root / given`` (leading ``/`` dropped), then ``root/<show>/season_N/episode_M<suffix>``
    with ``<show>`` as given, its ``show_key``, lowercased, spaces as ``_``, and N, M plain or 2-digit.
    """
    candidates: list[Path] = []
    if given:
        rel = given.replace("\\", "/").lstrip("/")
        candidates.append(root / rel)
    stems = [f"season_{season}/episode_{episode}", f"season_{season:02d}/episode_{episode:02d}"]
    for d in _show_dirs(show):
        candidates.extend(root / d / f"{s}{suffix}" for s in stems)
    # Never a bare ``season_N/episode_M`` or basename under ``root``: that could be another show's episode.
    for c in candidates:
        if c.is_file():
            return c.resolve(), True
    return candidates[0].resolve(), False


_DURATIONS: dict[tuple[str, int, int], float | None] = {}


def probe_duration(path: str | Path) -> float | None:
    """Seconds of the media file at ``path`` from its header (PyAV); None if missing or unreadable."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError:
        return None
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if key in _DURATIONS:
        return _DURATIONS[key]
    import av  # imported here: loading annotations needs no media stack

    duration: float | None = None
    try:
        with av.open(str(p)) as container:
            if container.duration:
                duration = container.duration / av.time_base
            else:
                for stream in container.streams.video:
                    if stream.duration and stream.time_base:
                        duration = float(stream.duration * stream.time_base)
                        break
    except (av.FFmpegError, OSError, ValueError) as e:
        log.warning("cannot read the duration of %s: %s", p, e)
    _DURATIONS[key] = duration
    return duration


def parse_srt(path: str | Path, max_chars: int | None = None) -> str:
    """The dialogue of an ``.srt`` file: one subtitle line per output line, joined with ``"\\n"``.

    Cue indices and ``-->`` timestamp lines are dropped, as are HTML/font tags (``<i>``,
    ``<font color=...>``) and ASS override tags (``{\\an8}``); HTML entities are unescaped and empty
    lines dropped. A UTF-8 BOM and CRLF/CR line ends are tolerated; text that is not UTF-8 is read as
    latin-1. With ``max_chars``, whole lines are kept while the joined text fits in ``max_chars``.
    An empty ``path`` (vdg's "no subtitles") gives ``""``.

    Raises:
        ValueError: ``max_chars`` is negative.
        FileNotFoundError: ``path`` does not exist.
    """
    if max_chars is not None and max_chars < 0:
        raise ValueError(f"max_chars must be >= 0, got {max_chars}")
    if path is None or str(path) == "":
        return ""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        s = line.strip()
        if not s or "-->" in s:
            continue
        if s.isdigit():
            nxt = next((x for x in lines[i + 1 :] if x.strip()), "")
            if "-->" in nxt:
                continue
        s = re.sub(r"\{\\[^}]*\}", "", s)
        s = re.sub(r"</?[A-Za-z][^>]*>", "", s)
        s = html.unescape(s).strip()
        if s:
            out.append(s)
    if max_chars is not None:
        kept: list[str] = []
        total = 0
        for s in out:
            extra = len(s) + (1 if kept else 0)
            if total + extra > max_chars:
                break
            kept.append(s)
            total += extra
        out = kept
    return "\n".join(out)


# --------------------------------------------------------------------------------------------------
# Records -> docs


def _where(raw: _Raw, qid: str | None) -> str:
    parts = []
    if raw.key is not None:
        parts.append(f"video {raw.key!r}")
    if qid:
        parts.append(f"question {qid}")
    return f"{raw.path} record {raw.index}" + (f" ({', '.join(parts)})" if parts else "")


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_")


def _to_doc(
    raw: _Raw,
    videos_root: Path,
    subtitles_root: Path,
    roster: Roster,
) -> dict:
    rec = raw.record
    if not isinstance(rec, Mapping):
        raise _FieldError(f"is a {type(rec).__name__}, not a record (JSON object)")
    question = rec.get("question")
    if not isinstance(question, str) or not question.strip():
        raise _FieldError("question is missing or empty")
    options = _parse_options(rec.get("options"))
    answer = _parse_answer(rec, options)
    correct = options[answer]
    if isinstance(correct, str):
        if _is_idk(correct):
            raise _FieldError(f"answer {LETTERS[answer]} is the {IDK_TEXT!r} option; no outfit sequence")
        correct = [o.strip() for o in correct.split(";") if o.strip()]

    video_rel = rec.get("video_path_mp4")
    if video_rel is not None and not isinstance(video_rel, str):
        raise _FieldError(f"video_path_mp4 {video_rel!r} is not a string")
    from_path = None
    for source in (video_rel, rec.get("video_subtitles"), raw.key):
        if isinstance(source, str) and (m := _PATH_RE.search(source)):
            from_path = m
            break
    show = rec.get("show")
    if show is None or (isinstance(show, str) and not show.strip()):
        if from_path is None:
            raise _FieldError("show is missing and video_path_mp4 does not name it")
        show = from_path.group(1)
    if not isinstance(show, str):
        raise _FieldError(f"show {show!r} is not a string")
    show = show.strip()
    season_v = rec.get("season", from_path.group(2) if from_path else None)
    episode_v = rec.get("episode", from_path.group(3) if from_path else None)
    if season_v is None:
        raise _FieldError("season is missing and video_path_mp4 does not name it")
    if episode_v is None:
        raise _FieldError("episode is missing and video_path_mp4 does not name it")
    season, episode = _int_from(season_v, "season"), _int_from(episode_v, "episode")

    character = rec.get("character")
    if character is None or (isinstance(character, str) and not character.strip()):
        m = _NAME_IN_QUESTION_RE.search(question)
        if not m:
            raise _FieldError("character is missing and the question does not name one")
        character = m.group(1)
    if not isinstance(character, str):
        raise _FieldError(f"character {character!r} is not a string")
    character = _character_as_written(character.strip(), question)

    windows = _parse_windows(rec.get("temporal_grounding"), correct)
    key = show_key(show)
    video, exists = _resolve(videos_root, video_rel, show, season, episode, ".mp4")
    subs_rel = rec.get("video_subtitles")
    subs, subs_exist = _resolve(
        subtitles_root, subs_rel if isinstance(subs_rel, str) else None, show, season, episode, ".srt"
    )
    if not subs_exist and exists and video.with_suffix(".srt").is_file():
        subs, subs_exist = video.with_suffix(".srt"), True
    idk = next((LETTERS[i] for i, o in enumerate(options) if isinstance(o, str) and _is_idk(o)), "")
    video_id = f"{key}/season_{season}/episode_{episode}"
    qid = rec.get("question_id")
    return {
        "question_id": None if qid is None or str(qid).strip() == "" else str(qid),
        "videoID": video_id,
        "video_id": video_id,
        "video": str(video),
        "task_type": TASK_TYPE,
        "duration": "long",
        "duration_s": probe_duration(video) if exists else None,
        "question": question.strip(),
        "options": [f"{LETTERS[i]}. {_option_text(o)}" for i, o in enumerate(options)],
        "answer": LETTERS[answer],
        "n_options": len(options),
        "character": character,
        "show": show,
        "show_key": key,
        "season": season,
        "episode": episode,
        "title": f"{show}, season {season}, episode {episode}",
        "subtitles": str(subs) if subs_exist else "",
        "outfits": list(correct),
        "outfit_windows": windows,
        "idk_letter": idk,
        "cast": roster.cast(show),
    }


def _assign_ids(docs: list[dict], where: list[str]) -> None:
    """Keep given question ids (they must be unique); give the rest ``{show}_s{S}e{E}_{char}[_{k}]``."""
    given: dict[str, int] = {}
    for i, d in enumerate(docs):
        qid = d["question_id"]
        if qid is None:
            continue
        if qid in given:
            raise ValueError(f"{where[i]}: question_id {qid!r} repeats that of {where[given[qid]]}")
        given[qid] = i
    used = set(given)
    for d in docs:
        if d["question_id"] is not None:
            continue
        base = f"{d['show_key']}_s{d['season']}e{d['episode']}_{_slug(d['character']) or 'character'}"
        qid, k = base, 1
        while qid in used:
            k += 1
            qid = f"{base}_{k}"
        used.add(qid)
        d["question_id"] = qid


def _skill_of(rec: object) -> str | None:
    if isinstance(rec, Mapping):
        skill = rec.get("skill_name", rec.get("skill"))
        if isinstance(skill, str) and skill.strip():
            return skill
    return None


def load_questions(
    annotations: str | Path,
    videos_root: str | Path,
    subtitles_root: str | Path | None = None,
    roster: Roster | None = None,
    split: str | None = None,
) -> list[dict]:
    """vdg docs, one per InfiniBench global-appearance record, in file order (files sorted by path).

    Args:
        annotations: a JSON/JSON-lines file or a folder (formats in the module docstring).
        videos_root: folder the ``video_path_mp4`` paths are relative to (e.g. ``TV_shows/videos``);
            ``<videos_root>/<show>/season_N/episode_M.mp4`` variants are tried too.
        subtitles_root: likewise for ``video_subtitles``; default ``videos_root``'s sibling
            ``subtitles`` if it exists, else ``videos_root``.
        roster: casts for the ``cast`` field; default ``load_roster()`` (the built-ins).
        split: for a folder with ``<split>/skills_json``, the split to read; records carrying a
            ``split`` field that differs are skipped (and counted in the log).

    Each doc has exactly these fields:
        question_id (str): the record's, else ``{show_key}_s{S}e{E}_{character_slug}`` (``_2``, ``_3``...
            appended to repeats); videoID / video_id (str): ``{show_key}/season_{S}/episode_{E}``;
        video (str): absolute mp4 path (possibly missing); task_type: ``"global_appearance"``;
        duration: ``"long"``; duration_s (float | None): the mp4's header duration, None if absent;
        question (str); options (list[str]): ``"A. outfit; outfit; ..."``, ``"F. I don't know"``;
        answer (str): the correct letter; n_options (int); character (str): as capitalised in the
        question; show (str): as given; show_key (str); season, episode (int); title (str):
        ``"{show}, season {S}, episode {E}"``; subtitles (str): absolute srt path or ``""``;
        outfits (list[str]): the correct outfit sequence; outfit_windows (list[list[list[float]]]):
        per outfit its sorted ``[start_s, end_s]`` intervals (``[]`` when unknown); idk_letter (str):
        letter of the "I don't know" option or ``""``; cast (dict[str, str]): the show's roster.

    Raises:
        ValueError: a malformed file or record (the message names file, record index, question id,
            field), repeated question ids, or no questions at all.
        FileNotFoundError: ``annotations`` does not exist.
    """
    ann = Path(annotations)
    if not ann.exists():
        raise FileNotFoundError(f"annotations {ann} do not exist")
    files = find_annotation_files(ann, split) if ann.is_dir() else [ann]
    vroot = Path(videos_root).resolve()
    if subtitles_root is not None:
        sroot = Path(subtitles_root).resolve()
    elif (vroot.parent / "subtitles").is_dir():
        sroot = vroot.parent / "subtitles"
    else:
        sroot = vroot
    roster = roster if roster is not None else load_roster()

    docs: list[dict] = []
    where: list[str] = []
    skipped_skill: dict[str, int] = {}
    skipped_split = 0
    for path in files:
        for raw in _iter_raw(path):
            rec = raw.record
            qid = rec.get("question_id") if isinstance(rec, Mapping) else None
            qid = None if qid is None else str(qid)
            skill = _skill_of(rec)
            if skill is not None and not _SKILL_RE.search(skill):
                skipped_skill[skill] = skipped_skill.get(skill, 0) + 1
                continue
            rec_split = rec.get("split") if isinstance(rec, Mapping) else None
            if split is not None and isinstance(rec_split, str) and rec_split.strip().lower() != split.lower():
                skipped_split += 1
                continue
            try:
                doc = _to_doc(raw, vroot, sroot, roster)
            except _FieldError as e:
                raise ValueError(f"{_where(raw, qid)}: {e}") from e
            docs.append(doc)
            where.append(_where(raw, qid))
    if skipped_skill:
        log.info("skipped records of other skills: %s", skipped_skill)
    if skipped_split:
        log.info("skipped %d records of splits other than %r", skipped_split, split)
    if not docs:
        detail = f" (skipped other skills {skipped_skill})" if skipped_skill else ""
        raise ValueError(f"no global-appearance questions in {ann}{detail}")
    _assign_ids(docs, where)
    return docs


def write_questions(docs: Iterable[Mapping], out_path: str | Path) -> Path:
    """Write ``docs`` as JSON lines to ``out_path`` atomically (temporary file, then replace); return its path."""
    out = Path(out_path).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            for d in docs:
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


def prepare(
    annotations: str | Path,
    videos_root: str | Path,
    out: str | Path,
    subtitles_root: str | Path | None = None,
    roster_file: str | Path | None = None,
    split: str | None = None,
) -> tuple[Path, int]:
    """Load the questions and write them as JSON lines; return (jsonl path, number of questions).

    ``out`` is the jsonl file, or an existing folder to write ``questions.jsonl`` into.
    """
    roster = load_roster(roster_file)
    docs = load_questions(annotations, videos_root, subtitles_root=subtitles_root, roster=roster, split=split)
    target = Path(out)
    if target.is_dir():
        target = target / "questions.jsonl"
    return write_questions(docs, target), len(docs)
