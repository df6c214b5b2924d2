"""Tests for vdg_tasks.vocabulary.parse: which option letter a reply chose."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vdg_tasks.vocabulary.parse import LETTERS, NUMBER_RULES, RULES, ParsedAnswer, parse_answer, parse_number

OPTIONS = ["A. a red car", "B. a blue bicycle", "C. the man is cooking", "D. nobody"]

# (reply, n_options, expected letter, expected rule); letter None means unparsed.
CASES = [
    # The seed's example: a naive `"A" in reply` scores this A.
    ("Looking at option A, that seems wrong. The answer is C.", 4, "C", "answer_is"),
    # 1. explicit statements
    ("The answer is (C)", 4, "C", "answer_is"),
    ("the answer is C", 4, "C", "answer_is"),
    ("answer: C", 4, "C", "answer_is"),
    ("Answer: (C)", 4, "C", "answer_is"),
    ("ANSWER: C", 4, "C", "answer_is"),
    ("The correct option is C", 4, "C", "answer_is"),
    ("The best answer is B.", 4, "B", "answer_is"),
    ("best answer is C.", 4, "C", "answer_is"),
    ("Answer: (D) red", 4, "D", "answer_is"),
    ("I think the answer is A because the man turns left.", 4, "A", "answer_is"),
    ("The answer is: Option B", 4, "B", "answer_is"),
    ("The answer would be D.", 4, "D", "answer_is"),
    ("The answer is likely B", 4, "B", "answer_is"),
    ("**Answer:** B", 4, "B", "answer_is"),
    ("Answer: **C**", 4, "C", "answer_is"),
    ("The final answer is $\\boxed{C}$.", 4, "C", "answer_is"),
    ("C is the correct answer.", 4, "C", "answer_is"),
    ("Option (B) is correct.", 4, "B", "answer_is"),
    ("answer is (c)", 4, "C", "answer_is"),
    ("answer: c", 4, "C", "answer_is"),
    ("Answer: A. The man opens the door.", 4, "A", "answer_is"),
    ("Answer: B\n\nThe man walks in, so the answer is B.", 4, "B", "answer_is"),
    ("I first thought the answer is A, but the answer is D.", 4, "D", "answer_is"),  # last wins
    ("The answer is C, not A.", 4, "C", "answer_is"),
    ("The answer isn't B; the answer is D", 4, "D", "answer_is"),
    # 1. explicit but not a valid choice: unparsed, never searched past.
    ("The answer is E", 4, None, None),
    ("Looking at option A... the answer is E.", 4, None, None),
    ("The answer is E", 5, "E", "answer_is"),
    ("The answer is A or B.", 4, None, None),
    ("Answer: B/C", 4, None, None),
    ("the answer is a man opening the door", 4, None, None),  # the article, not option A
    # 2. the whole reply is a letter
    ("C", 4, "C", "bare_letter"),
    ("(C)", 4, "C", "bare_letter"),
    ("(A)", 4, "A", "bare_letter"),
    ("C.", 4, "C", "bare_letter"),
    ("C)", 4, "C", "bare_letter"),
    ("**C**", 4, "C", "bare_letter"),
    ("  [B]  \n", 4, "B", "bare_letter"),
    ("c", 4, "C", "bare_letter"),  # a one-letter reply cannot be the article
    ("a", 4, "A", "bare_letter"),
    ("E", 4, None, None),
    ("E", 5, "E", "bare_letter"),
    ("F", 6, "F", "bare_letter"),
    ("C", 2, None, None),
    ("（Ｃ）", 4, "C", "bare_letter"),  # full-width, NFKC
    # 3. a letter at the very start
    ("B. The man is cooking", 4, "B", "leading_letter"),
    ("C. a red car", 4, "C", "leading_letter"),
    ("C) a red car", 4, "C", "leading_letter"),
    ("C: a red car", 4, "C", "leading_letter"),
    ("(C) a red car", 4, "C", "leading_letter"),
    ("**C** a red car", 4, "C", "leading_letter"),
    ("**C.** a red car", 4, "C", "leading_letter"),
    ("C - a red car", 4, "C", "leading_letter"),
    ("c) a red car", 4, "C", "leading_letter"),
    ("D. The man is cooking, not A.", 4, "D", "leading_letter"),
    ("E. a red car", 4, None, None),
    ("A. red car\nB. blue car\nC. green car\nD. van", 4, None, None),  # an echo of the list
    ("(B) isn't it, it is (C)", 4, "C", "parenthesized"),
    # 4. "(C)" anywhere
    ("The man is cooking (C).", 4, "C", "parenthesized"),
    ("Based on the video I would say (B), the bicycle.", 4, "B", "parenthesized"),
    ("It is either (A) or (B).", 4, None, None),
    # 5. option mentions
    ("Option C", 4, "C", "option_mention"),
    ("I would go with option D.", 4, "D", "option_mention"),
    ("Option A is wrong", 4, None, None),
    # 7. the standalone letter, never the article
    ("I think it's B.", 4, "B", "standalone_letter"),
    ("B, because the man is cooking.", 4, "B", "standalone_letter"),
    ("A is wrong, so B.", 4, "B", "standalone_letter"),
    ("A man opens the door.", 4, None, None),
    ("A man opens the door. A woman sits down.", 4, None, None),
    ("A or B", 4, None, None),
    ("A, B", 4, None, None),
    ("I don't know.", 4, None, None),
    ("I", 4, None, None),
    ("e.g. the man", 5, None, None),
    ("At 7 A.M. the man leaves.", 4, None, None),
    ("He lives in the U.S.A.", 4, None, None),
    ("An A-frame house", 4, None, None),
    ("It is D.", 4, "D", "standalone_letter"),
    ("It is E.", 4, None, None),
    # reasoning models: only what follows the scratchpad counts
    ("<think>the answer is A? No.</think>\nC", 4, "C", "bare_letter"),
    ("<think>hmm</think>", 4, None, None),
    # empty
    ("", 4, None, None),
    ("   \n", 4, None, None),
    (None, 4, None, None),
]


@pytest.mark.parametrize(("reply", "n_options", "letter", "rule"), CASES)
def test_examples(reply: str | None, n_options: int, letter: str | None, rule: str | None) -> None:
    parsed = parse_answer(reply, n_options)
    assert parsed == ParsedAnswer(letter, "ok" if letter else "unparsed", rule)


OPTION_CASES = [
    ("The man is cooking.", "C", "option_text"),
    ("the man is cooking", "C", "option_text"),
    ("Nobody", "D", "option_text"),
    ("I see a blue bicycle in the video.", "B", "option_text"),
    ("C the man is cooking", "C", "leading_letter"),
    ("A red car.", "A", "option_text"),  # equals option A's text, article and all
    ("A red car, not a blue bicycle.", None, None),  # two options named
    ("A man opens the door.", None, None),
    ("The answer is B. The man is cooking.", "B", "answer_is"),  # rule 1 beats the option text
]


@pytest.mark.parametrize(("reply", "letter", "rule"), OPTION_CASES)
def test_option_text(reply: str, letter: str | None, rule: str | None) -> None:
    parsed = parse_answer(reply, 4, OPTIONS)
    assert parsed == ParsedAnswer(letter, "ok" if letter else "unparsed", rule)


def test_option_text_prefers_the_longer_match() -> None:
    options = ["red", "red car", "blue", "green"]
    assert parse_answer("It is the red car.", 4, options).letter == "B"
    assert parse_answer("It is red.", 4, options).letter == "A"


def test_option_labels_are_stripped_only_when_they_are_labels() -> None:
    options = ["a.m. train", "p.m. train"]
    assert parse_answer("the a.m. train", 2, options).letter == "A"
    assert parse_answer("the p.m. train", 2, options).letter == "B"


def test_rules_are_declared_in_order() -> None:
    assert RULES[0] == "answer_is" and RULES[-1] == "standalone_letter"
    assert {rule for *_, rule in CASES + OPTION_CASES} - {None} <= set(RULES)


@pytest.mark.parametrize("n_options", [0, 1, 9, -3, True, 4.0, "4"])
def test_rejects_bad_n_options(n_options: object) -> None:
    with pytest.raises(ValueError, match="n_options=.* is not supported"):
        parse_answer("C", n_options)  # type: ignore[arg-type]


def test_rejects_options_of_the_wrong_length() -> None:
    with pytest.raises(ValueError, match="3 options were given but n_options=4"):
        parse_answer("C", 4, ["x", "y", "z"])


def test_rejects_a_string_as_options() -> None:
    with pytest.raises(TypeError, match="sequence of option strings"):
        parse_answer("C", 4, "ABCD")


def test_rejects_non_string_text() -> None:
    with pytest.raises(TypeError, match="got int"):
        parse_answer(3, 4)  # type: ignore[arg-type]


# ---------------------------------------------------------------- properties

n_options_st = st.integers(min_value=2, max_value=len(LETTERS))
WORDS = (
    "the man woman car door red blue opens closes walks into kitchen video shows then after before "
    "first second it is was scene camera left right slowly quickly because of in on at with"
).split()
# Lowercase prose that cannot spell a keyword (no "w", "p", "h": answer, option, choice, think).
prose_st = st.text(alphabet="abcdefgijklmnoqrstuvxyz ,.;:!?'\n", max_size=200)
phrase_st = st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join)
TEMPLATES = [
    "The answer is {L}.",
    "{L}",
    "({L})",
    "Answer: {L}",
    "{L}. {text}",
    "The best answer is ({L}) {text}",
    "**{L}**",
    "{text}. The correct option is {L}",
    "{text} ({L})",
]


@settings(max_examples=500)
@given(st.text(max_size=300), n_options_st)
def test_never_raises_and_stays_in_range(text: str, n_options: int) -> None:
    parsed = parse_answer(text, n_options)
    assert parsed.letter is None or parsed.letter in LETTERS[:n_options]
    assert (parsed.status == "ok") == (parsed.letter is not None) == (parsed.rule is not None)
    assert parsed.rule is None or parsed.rule in RULES


@settings(max_examples=200)
@given(st.text(alphabet=st.characters(codec="ascii"), max_size=300), n_options_st)
def test_never_raises_on_ascii_with_options(text: str, n_options: int) -> None:
    options = [f"{LETTERS[i]}. {WORDS[i]} {WORDS[i + 10]}" for i in range(n_options)]
    parsed = parse_answer(text, n_options, options)
    assert parsed.letter is None or parsed.letter in LETTERS[:n_options]
    assert (parsed.status == "ok") == (parsed.letter is not None)


@given(st.data(), n_options_st, st.sampled_from(TEMPLATES), phrase_st)
def test_templates_give_the_letter(data: st.DataObject, n_options: int, template: str, text: str) -> None:
    letter = data.draw(st.sampled_from(LETTERS[:n_options]))
    reply = template.format(L=letter, text=text)
    assert parse_answer(reply, n_options).letter == letter, reply


@given(st.data(), n_options_st, prose_st)
def test_lowercase_prose_before_the_answer_does_not_matter(data: st.DataObject, n_options: int, prose: str) -> None:
    letter = data.draw(st.sampled_from(LETTERS[:n_options]))
    reply = f"{prose} The answer is {letter}"
    assert parse_answer(reply, n_options).letter == letter, reply


@given(prose_st, n_options_st)
def test_lowercase_prose_is_unparsed(prose: str, n_options: int) -> None:
    # A reply that is a single letter is an answer ("c" -> C); any longer lowercase prose
    # without a keyword or bracket has no letter in an answer-like position.
    last = LETTERS[n_options - 1].lower()
    assume(not re.match(rf"\s*[a-{last}][.:)]", prose))  # "c) ..." (or "g: ..." with 7 options) is a leading letter
    if len(prose.strip(" ,.;:!?'\n")) <= 1:
        prose += " the man"
    assert parse_answer(prose, n_options) == ParsedAnswer(None, "unparsed", None)


@given(st.lists(st.sampled_from(WORDS + ["I", "J", "Z", "OK", "A man", "A woman"]), max_size=15), n_options_st)
def test_articles_and_letters_out_of_range_are_unparsed(words: list[str], n_options: int) -> None:
    # Every "A" is the article (a lowercase noun follows); "I" and J-Z are never answers (at most 8 options: A-H).
    reply = " ".join(words)
    assert parse_answer(reply, n_options) == ParsedAnswer(None, "unparsed", None), reply


NUMBERED_OPTIONS = ["1. blue bike", "2. red car", "3. green tree", "4. white house"]


@pytest.mark.parametrize(
    ("reply", "letter", "rule"),
    [
        ("2", "B", "bare_number"),
        ("(3).", "C", "bare_number"),
        ("**4**", "D", "bare_number"),
        ("The answer is 2.", "B", "number_answer_is"),
        ("Option 1 looks odd. The answer is 3", "C", "number_answer_is"),
        ("Answer: (1)", "A", "number_answer_is"),
        ("2. red car", "B", "leading_number"),
        ("(4) white house", "D", "leading_number"),
        ("red car", "B", "option_text"),
        ("I think 3 is right", "C", "standalone_number"),
        ("<think>1? no</think>2", "B", "bare_number"),
    ],
)
def test_a_numbered_reply_is_read_as_its_option_s_letter(reply, letter, rule):
    assert parse_number(reply, 4, NUMBERED_OPTIONS) == ParsedAnswer(letter, "ok", rule)
    assert rule in NUMBER_RULES


@pytest.mark.parametrize("reply", ["1 or 2", "5", "The answer is 5.", "", None, "12 people", "3.5 seconds", "B"])
def test_a_numbered_reply_that_names_no_single_option_number_is_unparsed(reply):
    assert parse_number(reply, 4, NUMBERED_OPTIONS) == ParsedAnswer(None, "unparsed", None)


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("The answer is: 2", "B"),
        ("I pick 3", "C"),
        ("1. He opens the door.\n2. He walks.\nSo I pick 3", "C"),  # a numbered list of reasons, then the choice
        ("3 because the car is red", "C"),
        ("3 people", None),  # a count
        ("At 3:45", None),  # a time
        ("There are 2 cats and 2 dogs", None),
        ("1. He opens the door.\n2. He walks.", None),  # reasons, no choice
    ],
)
def test_a_numbered_reply_s_counts_times_and_lists_are_not_read_as_choices(reply, letter):
    assert parse_number(reply, 4, NUMBERED_OPTIONS).letter == letter
