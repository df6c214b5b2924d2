"""Text-only shortcuts: how well a question's own text gives its answer away, before any model runs.

The "test-set stress-test" method: answerers that see only the question and its options are trained by
k-fold cross-validation on the benchmark's own questions, and each question gets a bias score
s(q) = the cross-validated probability given to its right option. Two answerers, fitted per task type
(a shortcut is a property of how a task type's questions were written), folds grouped by video so that
questions about one video never straddle train and test:

- ``linear``: logistic regression over text features of each (question, option) pair: TF-IDF of the option's
  words and bigrams, and of the words it shares with the question;
- ``forest``: a random forest over hand-made features of the options (``FEATURES``): length and its rank,
  word overlap with the question and with the other options, position, how many options share words with it,
  numbers and whether the question names them.

Each scores every option of a held-out question; the scores are normalised over the question's options
(probabilities summing to 1) and the highest is the answerer's pick. ``combined`` is the mean of the two
answerers' distributions. Every random choice (fold assignment, the forest) takes a seed from the benchmark,
the task type and the question ids (``vdg_tasks.vocabulary.seeding``), so the scores are a function of the
questions alone.

Input (``questions``): one row per question, columns ``QUESTION_INPUT``: the option texts without their
letters and the index of the right one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.sparse import hstack
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from tqdm import tqdm

from postprocess.stats import binom_sf, holm, wilson
from vdg_tasks.vocabulary.seeding import stable_seed

#: The columns of the input frame.
QUESTION_INPUT: tuple[str, ...] = ("benchmark", "question_id", "video_id", "task_type", "question", "options", "answer")
ANSWERERS: tuple[str, ...] = ("linear", "forest", "combined")
#: Folds of the cross-validation (fewer when a task type has fewer videos).
N_FOLDS = 5
#: A task type needs questions about at least this many videos to be cross-validated.
MIN_VIDEOS = 2
FOREST_TREES = 100

#: The forest's features of one option (``option_features``).
FEATURES: dict[str, str] = {
    "n_chars": "characters in the option",
    "n_words": "words in the option",
    "length_rank": "rank of its length among the question's options, 0 shortest to 1 longest (ties share a rank)",
    "is_longest": "1 when no other option is longer",
    "is_shortest": "1 when no other option is shorter",
    "length_z": "its length minus the options' mean length, over their standard deviation plus one",
    "question_overlap": "distinct words it shares with the question",
    "question_jaccard": "Jaccard similarity of its words and the question's",
    "others_jaccard": "mean Jaccard similarity with the other options",
    "shares_with_others": "share of the other options with at least one word in common with it",
    "position": "its position, 0 first to 1 last",
    "n_options": "options of the question",
    "has_number": "1 when it holds a number",
    "number_in_question": "1 when a number it holds appears in the question",
}

QUESTION_COLUMNS: dict[str, str] = {
    "benchmark": "benchmark name",
    "question_id": "question id",
    "video_id": "video id (the cross-validation's group)",
    "task_type": "task type (answerers are fitted per task type)",
    "answerer": "linear, forest, or combined (the mean of their option distributions)",
    "n_options": "options of the question",
    "s": "s(q): the cross-validated probability given to the right option (scores normalised over the options)",
    "picked": "the answerer's highest-scored option is the right one",
    "chance": "1 / n_options",
    "fold": "the fold the question was held out in",
}

TYPE_COLUMNS: dict[str, str] = {
    "benchmark": "benchmark name",
    "task_type": "task type, or Overall",
    "answerer": "linear, forest or combined",
    "n": "questions cross-validated",
    "accuracy": "share of questions whose right option the answerer picked (text only)",
    "ci_low": "lower bound of the Wilson interval of accuracy",
    "ci_high": "upper bound of the Wilson interval of accuracy",
    "chance": "mean of 1 / n_options over the questions: accuracy picking at random",
    "p_above_chance": "one-sided exact binomial p of accuracy above chance (chance as the success probability)",
    "p_holm": "p_above_chance Holm-adjusted over the benchmark's task types for this answerer (Overall: a family of "
    "its own)",
    "n_family": "task types in that Holm family",
    "above_chance": "p_holm < alpha (0.05; the report's --alpha): the text gives this task type's answers away",
    "ci_low_adjusted": "lower bound of the Bonferroni interval: Wilson at ci_level_adjusted, simultaneous over the "
    "family",
    "ci_high_adjusted": "upper bound of that interval",
    "mean_s": "mean s(q)",
    "ci_level": "level of the interval",
    "ci_level_adjusted": "1 - (1 - ci_level) / n_family",
    "note": "why a task type has no scores (too few videos to cross-validate); empty otherwise",
}

_WORD = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: Words too common to count as shared between a question and an option.
_STOP = frozenset(
    "a an the of to in on at by for with and or is are was were be been it its this that these those what which "
    "who whom whose when where why how do does did from as into than then there their they he she his her him "
    "i you we our your not no yes".split()
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(str(text).lower()) if w not in _STOP}


def _jaccard(a: set[str], b: set[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def check_questions(questions: pd.DataFrame) -> None:
    """Raise ``ValueError`` naming the question when the input cannot be scored."""
    missing = [c for c in QUESTION_INPUT if c not in questions.columns]
    if missing:
        raise ValueError(f"questions lack column(s) {', '.join(missing)} (need {', '.join(QUESTION_INPUT)})")
    duplicated = questions.duplicated(["benchmark", "question_id"])
    if duplicated.any():
        first = questions[duplicated].iloc[0]
        raise ValueError(f"question {first.question_id!r} of {first.benchmark} appears twice")
    for row in questions.itertuples(index=False):
        options = list(row.options)
        if len(options) < 2:
            raise ValueError(f"question {row.question_id!r}: {len(options)} option(s); a shortcut needs at least 2")
        if not (isinstance(row.answer, (int, np.integer)) and 0 <= int(row.answer) < len(options)):
            raise ValueError(
                f"question {row.question_id!r}: answer index {row.answer!r} is not one of its {len(options)} options"
            )


def option_features(questions: pd.DataFrame) -> pd.DataFrame:
    """One row per (question, option), in question then option order: ``question_id``, ``option`` (its index),
    ``right`` (bool) and the ``FEATURES`` columns."""
    rows: list[dict[str, Any]] = []
    for q in questions.itertuples(index=False):
        options = [str(o) for o in q.options]
        n = len(options)
        lengths = np.array([len(o) for o in options], dtype=float)
        words = [_words(o) for o in options]
        question_words = _words(q.question)
        question_numbers = set(_NUMBER.findall(str(q.question)))
        ranks = pd.Series(lengths).rank(method="average").to_numpy()
        for i, option in enumerate(options):
            others = [words[j] for j in range(n) if j != i]
            numbers = set(_NUMBER.findall(option))
            rows.append(
                {
                    "question_id": q.question_id,
                    "option": i,
                    "right": i == int(q.answer),
                    "n_chars": lengths[i],
                    "n_words": len(option.split()),
                    "length_rank": (ranks[i] - 1) / (n - 1),
                    "is_longest": float(lengths[i] == lengths.max()),
                    "is_shortest": float(lengths[i] == lengths.min()),
                    "length_z": (lengths[i] - lengths.mean()) / (lengths.std() + 1.0),
                    "question_overlap": len(words[i] & question_words),
                    "question_jaccard": _jaccard(words[i], question_words),
                    "others_jaccard": float(np.mean([_jaccard(words[i], o) for o in others])),
                    "shares_with_others": float(np.mean([bool(words[i] & o) for o in others])),
                    "position": i / (n - 1),
                    "n_options": n,
                    "has_number": float(bool(numbers)),
                    "number_in_question": float(bool(numbers & question_numbers)),
                }
            )
    return pd.DataFrame(rows, columns=["question_id", "option", "right", *FEATURES])


def _pair_texts(questions: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Per (question, option): the option's text, and the words it shares with the question (the linear
    answerer's two documents)."""
    options, shared = [], []
    for q in questions.itertuples(index=False):
        question_words = _words(q.question)
        for option in q.options:
            options.append(str(option))
            shared.append(" ".join(sorted(_words(str(option)) & question_words)))
    return options, shared


def _linear_scores(texts: tuple[list[str], list[str]], labels: np.ndarray, train: np.ndarray) -> np.ndarray:
    options, shared = texts
    blocks_train, blocks_all = [], []
    for documents, ngrams in ((options, (1, 2)), (shared, (1, 1))):
        vectorizer = TfidfVectorizer(ngram_range=ngrams, min_df=1, token_pattern=r"(?u)\b\w+\b")
        train_docs = [documents[i] for i in np.flatnonzero(train)]
        if not any(d.strip() for d in train_docs):  # nothing shared in any training pair: an empty block
            continue
        vectorizer.fit(train_docs)
        blocks_train.append(vectorizer.transform(train_docs))
        blocks_all.append(vectorizer.transform(documents))
    if not blocks_train or len(set(labels[train])) < 2:
        return np.full(len(labels), 0.5)
    model = LogisticRegression(C=1.0, max_iter=2000, solver="liblinear")
    model.fit(hstack(blocks_train).tocsr(), labels[train])
    return model.predict_proba(hstack(blocks_all).tocsr())[:, 1]


def _forest_scores(features: np.ndarray, labels: np.ndarray, train: np.ndarray, seed: int) -> np.ndarray:
    if len(set(labels[train])) < 2:
        return np.full(len(labels), 0.5)
    model = RandomForestClassifier(n_estimators=FOREST_TREES, min_samples_leaf=3, random_state=seed % (2**32), n_jobs=1)
    model.fit(features[train], labels[train])
    return model.predict_proba(features)[:, 1]


def _normalised(scores: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Scores divided by their question's sum (uniform where a question's scores sum to 0)."""
    sums = np.add.reduceat(scores, starts)
    per_option = np.repeat(sums, sizes)
    uniform = np.repeat(1.0 / sizes, sizes)
    return np.where(per_option > 0, scores / np.where(per_option > 0, per_option, 1.0), uniform)


def ids_digest(question_ids: Sequence[object]) -> str:
    """A digest of a set of question ids (order does not matter): part of every seed here."""
    text = "\x1f".join(sorted(str(q) for q in question_ids))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _folds(videos: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """The fold of each question: its video's, videos dealt to folds in a seeded order (sorted ids first)."""
    distinct = np.array(sorted(set(videos.tolist())))
    order = np.random.default_rng(seed).permutation(len(distinct))
    fold_of = {video: position % n_folds for position, video in zip(order, distinct, strict=True)}
    return np.array([fold_of[v] for v in videos])


def _score_type(questions: pd.DataFrame, benchmark: str, task_type: str) -> pd.DataFrame:
    # one canonical order (by question id): the forest's bootstrap and the solver see the rows in an order that
    # does not depend on how the docs were listed
    questions = questions.sort_values("question_id", key=lambda ids: ids.astype(str)).reset_index(drop=True)
    seed = stable_seed("shortcuts", benchmark, task_type, ids_digest(questions["question_id"]))
    videos = questions["video_id"].astype(str).to_numpy()
    n_folds = min(N_FOLDS, len(set(videos)))
    folds = _folds(videos, n_folds, seed)
    features = option_features(questions)
    sizes = questions["options"].map(len).to_numpy()
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    option_fold = np.repeat(folds, sizes)
    labels = features["right"].to_numpy(dtype=int)
    matrix = features[list(FEATURES)].to_numpy(dtype=float)
    texts = _pair_texts(questions)
    raw = {name: np.zeros(len(labels)) for name in ("linear", "forest")}
    for fold in range(n_folds):
        held_out = option_fold == fold
        train = ~held_out
        raw["linear"][held_out] = _linear_scores(texts, labels, train)[held_out]
        raw["forest"][held_out] = _forest_scores(matrix, labels, train, stable_seed(seed, fold))[held_out]
    distributions = {name: _normalised(scores, starts, sizes) for name, scores in raw.items()}
    distributions["combined"] = (distributions["linear"] + distributions["forest"]) / 2
    answer = questions["answer"].to_numpy(dtype=int)
    out = []
    for name in ANSWERERS:
        dist = distributions[name]
        s = dist[starts + answer]
        best = np.array([int(np.argmax(dist[a : a + n])) for a, n in zip(starts, sizes, strict=True)])
        out.append(
            pd.DataFrame(
                {
                    "benchmark": benchmark,
                    "question_id": questions["question_id"].to_numpy(),
                    "video_id": videos,
                    "task_type": task_type,
                    "answerer": name,
                    "n_options": sizes,
                    "s": s,
                    "picked": best == answer,
                    "chance": 1.0 / sizes,
                    "fold": folds,
                }
            )
        )
    return pd.concat(out, ignore_index=True)


def shortcut_scores(questions: pd.DataFrame, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-question scores, per-task-type summary) of ``questions`` (columns ``QUESTION_INPUT``).

    Returns ``QUESTION_COLUMNS`` rows (one per question and answerer, task types with fewer than ``MIN_VIDEOS``
    videos left out) and the ``TYPE_COLUMNS`` table of ``type_summary``.

    Raises:
        ValueError: a missing column, a duplicated question, fewer than 2 options, an answer that is no option.
    """
    check_questions(questions)
    parts, notes = [], {}
    groups = questions.groupby(["benchmark", "task_type"], sort=True)
    for (benchmark, task_type), group in tqdm(groups, desc="vdg shortcuts", unit="task type", disable=not progress):
        n_videos = group["video_id"].nunique()
        if n_videos < MIN_VIDEOS:
            notes[(str(benchmark), str(task_type))] = (
                f"questions about {n_videos} video(s): cross-validation grouped by video needs {MIN_VIDEOS}"
            )
            continue
        parts.append(_score_type(group.reset_index(drop=True), str(benchmark), str(task_type)))
    scores = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(QUESTION_COLUMNS))
    return scores[list(QUESTION_COLUMNS)], type_summary(scores, notes)


def _p_above(k: int, n: int, chance: float) -> float:
    """One-sided exact binomial p of ``k`` or more right of ``n`` at ``chance``."""
    return float(binom_sf(k - 1, n, chance)) if k else 1.0


def type_summary(
    scores: pd.DataFrame, notes: dict[tuple[str, str], str] | None = None, level: float = 0.95, alpha: float = 0.05
) -> pd.DataFrame:
    """Text-only accuracy per (benchmark, task type, answerer) and Overall, with its Wilson interval, chance
    level and a one-sided binomial test against chance; columns ``TYPE_COLUMNS``.

    Which task types give their answers away is asked of all of a benchmark's task types at once, so the decision
    (``above_chance``) is Holm-adjusted over them per answerer, and beside the interval of each stands one
    simultaneous over the family (Bonferroni). With five task types and no shortcut at all, about one in five
    benchmarks would show some type outside its unadjusted 95% interval by chance alone."""
    rows = []
    for (benchmark, answerer), group in scores.groupby(["benchmark", "answerer"], sort=True):
        types = [(t, g) for t, g in group.groupby("task_type", sort=True)]
        for family in (types, [("Overall", group)]):
            counts = [(task_type, len(part), int(part["picked"].sum()), part) for task_type, part in family]
            p_values = [_p_above(k, n, float(part["chance"].mean())) for _, n, k, part in counts]
            adjusted = holm(p_values)
            level_adjusted = 1.0 - (1.0 - level) / len(family)
            for (task_type, n, k, part), p, p_holm in zip(counts, p_values, adjusted, strict=True):
                interval, simultaneous = wilson(k, n, level), wilson(k, n, level_adjusted)
                rows.append(
                    {
                        "benchmark": benchmark,
                        "task_type": task_type,
                        "answerer": answerer,
                        "n": n,
                        "accuracy": k / n,
                        "ci_low": interval.low,
                        "ci_high": interval.high,
                        "chance": float(part["chance"].mean()),
                        "p_above_chance": p,
                        "p_holm": float(p_holm),
                        "n_family": len(family),
                        "above_chance": bool(p_holm < alpha),
                        "ci_low_adjusted": simultaneous.low,
                        "ci_high_adjusted": simultaneous.high,
                        "mean_s": float(part["s"].mean()),
                        "ci_level": level,
                        "ci_level_adjusted": level_adjusted,
                        "note": "",
                    }
                )
    for (benchmark, task_type), note in (notes or {}).items():
        for answerer in ANSWERERS:
            rows.append(
                {
                    **dict.fromkeys(TYPE_COLUMNS, np.nan),
                    "benchmark": benchmark,
                    "task_type": task_type,
                    "answerer": answerer,
                    "n": 0,
                    "ci_level": level,
                    "note": note,
                }
            )
    return pd.DataFrame(rows, columns=list(TYPE_COLUMNS))
