"""postprocess.reading.frame_checks: what the reader refuses to join (two answers to one question, one label run with
two
settings or two models, runs on different question sets or exports, a condition short of questions, a question
with two answer keys or two videos), each refusal naming the question and the files; and what it accepts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postprocess.reading.files import LogError
from postprocess.reading.frame_checks import (
    check_exports,
    check_fixed_sets,
    check_keys,
    check_models,
    check_one_video_per_question,
    check_question_sets,
    check_settings,
    dedupe,
    fill_scores,
    none_for_missing,
)
from tests.helpers.frames import tidy_frame, tidy_row


def _row(model="m", condition="orig", question_id="q1", benchmark="b", **columns):
    return tidy_row(model, condition, question_id, benchmark, **columns)


# ----------------------------------------------------------------------------------- dedupe


def test_a_frame_without_duplicates_is_returned_as_it_is():
    frame = tidy_frame([_row(question_id="q1", pred="A", status="ok"), _row(question_id="q2", pred="B", status="ok")])
    assert dedupe(frame) is frame


@pytest.mark.parametrize("error_first", [True, False])
def test_a_valid_record_supersedes_an_error_record_whichever_comes_first(error_first):
    error = _row(pred=None, status="error", error="VideoDecodeError", source="retry:1")
    valid = _row(pred="A", status="ok", source="first:1")
    rows = [error, valid] if error_first else [valid, error]
    frame = tidy_frame([*rows, _row(question_id="q2", pred="B", status="ok", source="other:1")])
    out = dedupe(frame)
    valid_at = 1 if error_first else 0
    assert list(out.index) == sorted([valid_at, 2])  # the valid row and the other question, in frame order
    assert list(out.status) == ["ok", "ok"] and out.loc[valid_at, "source"] == "first:1"


def test_of_two_error_records_the_last_read_is_kept():
    frame = tidy_frame(
        [_row(pred=None, status="error", error="OOM", source="a:1"), _row(pred=None, status="error", source="b:1")]
    )
    out = dedupe(frame)
    assert list(out.index) == [1] and out.source.iloc[0] == "b:1"


def test_two_records_giving_the_same_answer_are_one_row_the_last_one():
    frame = tidy_frame([_row(pred="A", status="ok", source="a:1"), _row(pred="A", status="ok", source="b:4")])
    assert list(dedupe(frame).source) == ["b:4"]


def test_two_different_answers_are_an_error_naming_the_question_its_run_and_both_files():
    frame = tidy_frame(
        [
            _row(model="m1", condition="black", question_id="q7", pred="A", status="ok", source="/r/1.jsonl:3"),
            _row(model="m1", condition="black", question_id="q7", pred="B", status="ok", source="/r/2.jsonl:9"),
        ]
    )
    with pytest.raises(
        LogError,
        match=r"^question q7 \(m1, b, black\) has two different answers: 'A' at /r/1\.jsonl:3 and 'B' at "
        r"/r/2\.jsonl:9$",
    ):
        dedupe(frame)


def test_of_three_answers_the_error_names_two_that_differ():
    frame = tidy_frame([_row(pred=p, status="ok", source=f"s{i}:1") for i, p in enumerate("AAB", start=1)])
    with pytest.raises(LogError, match=r"two different answers: 'A' at s1:1 and 'B' at s3:1$"):
        dedupe(frame)


def test_the_same_letter_read_as_ok_and_as_unparsed_is_an_error_too():
    frame = tidy_frame([_row(pred="A", status="ok", source="a:1"), _row(pred="A", status="unparsed", source="b:1")])
    with pytest.raises(LogError, match=r"question q1 .* 'A' at a:1 and 'A' \(unparsed\) at b:1$"):
        dedupe(frame)


def test_on_duplicate_last_keeps_the_last_valid_answer_read():
    frame = tidy_frame(
        [
            _row(pred="A", status="ok", source="a:1"),
            _row(pred="B", status="ok", source="b:1"),
            _row(pred=None, status="error", source="c:1"),
        ]
    )
    out = dedupe(frame, on_duplicate="last")
    assert list(out.index) == [1] and out.pred.iloc[0] == "B"  # the error row read after it does not win


def test_a_duplicate_in_another_model_or_condition_is_not_a_duplicate():
    frame = tidy_frame([_row(pred="A", status="ok"), _row(model="m2", pred="B"), _row(condition="black", pred="C")])
    assert dedupe(frame) is frame


# ----------------------------------------------------------------------------------- check_settings


def test_one_model_run_with_two_settings_is_refused_naming_both_and_the_fix():
    frame = tidy_frame(
        [
            _row(model_settings="max_num_frames=32", source="a/s.jsonl:1"),
            _row(condition="black", model_settings="max_num_frames=32", source="a/t.jsonl:1"),
            _row(condition="single", model_settings="max_num_frames=16", source="b/s.jsonl:1"),
        ]
    )
    with pytest.raises(
        LogError,
        match=r"^model 'm' was run with different settings: 'max_num_frames=32' \(a/s\.jsonl:1\) vs "
        r"'max_num_frames=16' \(b/s\.jsonl:1\)\. Label them apart with NAME=DIR, or rerun one\.$",
    ):
        check_settings(frame)


def test_different_models_may_have_different_settings():
    frame = tidy_frame([_row(model="a", model_settings="k=1"), _row(model="b", model_settings="k=2")])
    assert check_settings(frame) is None


def test_settings_that_only_look_like_secrets_are_compared_whole():
    frame = tidy_frame(
        [
            _row(model_settings="pretrained=x,token_strategy=single", source="a/s.jsonl:1"),
            _row(condition="black", model_settings="pretrained=x,token_strategy=multiple", source="b/s.jsonl:1"),
        ]
    )
    with pytest.raises(LogError, match="token_strategy=single.* vs 'pretrained=x,token_strategy=multiple'"):
        check_settings(frame)


def test_settings_differing_in_a_secret_are_refused_without_naming_it():
    frame = tidy_frame(
        [
            _row(model_settings="api_key=SECRET1,max_num_frames=8", source="a/s.jsonl:1"),
            _row(condition="black", model_settings="api_key=SECRET2,max_num_frames=8", source="b/s.jsonl:1"),
        ]
    )
    with pytest.raises(LogError, match=r"differ only in values hidden here \(secret-looking\)") as caught:
        check_settings(frame)
    assert "SECRET" not in str(caught.value) and "api_key=<redacted>,max_num_frames=8" in str(caught.value)


# ----------------------------------------------------------------------------------- check_fixed_sets


def test_runs_of_a_benchmark_on_different_question_sets_are_refused_naming_the_files():
    frame = tidy_frame(
        [
            _row(model="m1", condition="orig", question_set="", source="/x/a_samples_t.jsonl:3"),
            _row(model="m2", condition="black", question_set="abc123", source="/y/p.csv[#2]"),
        ]
    )
    # the file is the source without its ":line" or "[#row]"
    with pytest.raises(
        LogError,
        match=r"^b: runs were made on different question sets, so their question lists differ: m1 / orig on no "
        r"question set \(every question\) \(/x/a_samples_t\.jsonl\) vs m2 / black on question set abc123 "
        r"\(/y/p\.csv\)\. Rerun them with the same VDG_QUESTION_SET",
    ):
        check_fixed_sets(frame)


def test_a_file_name_holding_a_colon_keeps_it_in_the_message():
    frame = tidy_frame([_row(question_set="s1", source="/r/a:b.jsonl:12"), _row(question_set="s2", source="c:4")])
    with pytest.raises(LogError, match=r"on question set s1 \(/r/a:b\.jsonl\) vs m / orig on question set s2 \(c\)"):
        check_fixed_sets(frame)


def test_one_question_set_per_benchmark_passes_even_if_benchmarks_differ():
    frame = tidy_frame([_row(question_set="s1"), _row(condition="black", question_set="s1"), _row("m", benchmark="c")])
    assert check_fixed_sets(frame) is None


# ----------------------------------------------------------------------------------- check_exports


def test_runs_from_two_exports_of_a_benchmark_are_refused_naming_both():
    frame = tidy_frame([_row(export="synth@r1", source="a:1"), _row(model="m2", export="synth@r2", source="b:2")])
    with pytest.raises(
        LogError,
        match=r"^b: runs were evaluated from different exports, synth@r1 \(a:1\) and synth@r2 \(b:2\), so their "
        r"videos may differ; pass --mixed-exports to join them anyway$",
    ):
        check_exports(frame)


def test_a_run_that_names_no_export_does_not_conflict_with_one_that_does():
    assert check_exports(tidy_frame([_row(export=""), _row(model="m2", export="synth@r1")])) is None
    assert check_exports(tidy_frame([_row(export=""), _row(model="m2", export="")])) is None


def test_different_benchmarks_may_come_from_different_exports():
    assert check_exports(tidy_frame([_row(export="x@1"), _row(benchmark="c", export="y@2")])) is None


# ----------------------------------------------------------------------------------- check_question_sets


def test_a_condition_short_of_questions_is_refused_with_the_count_and_three_examples():
    rows = [_row(condition="orig", question_id=f"q{i}") for i in range(1, 6)] + [_row(condition="black")]
    # black has q1 of the five: it lacks q2..q5, the first three named in sorted order
    with pytest.raises(
        LogError,
        match=r"^m / b: condition 'black' lacks 4 of 5 questions the other conditions have \(e\.g\. q2, q3, q4\); "
        r"was it run with --limit or on another split\?$",
    ):
        check_question_sets(tidy_frame(rows))


def test_each_model_may_have_its_own_questions_if_its_conditions_agree():
    rows = [_row(model="m1", condition=c, question_id=q) for c in ("orig", "black") for q in ("q1", "q2")]
    rows += [_row(model="m2", condition=c, question_id="q3") for c in ("orig", "black")]
    assert check_question_sets(tidy_frame(rows)) is None


# ----------------------------------------------------------------------------------- check_keys


def test_one_question_with_two_answer_keys_is_refused_naming_both():
    frame = tidy_frame(
        [
            _row(answer="A", source="a:1"),
            _row(condition="black", answer="A"),
            _row(model="m2", answer="C", source="b:5"),
        ]
    )
    with pytest.raises(
        LogError,
        match=r"^question 'q1' of b has two different answer keys: 'A' at a:1 and 'C' at b:5; is the question id "
        r"field unique per question",
    ):
        check_keys(frame)


def test_the_same_question_id_in_two_benchmarks_may_have_different_keys():
    assert check_keys(tidy_frame([_row(answer="A"), _row(benchmark="c", answer="D")])) is None


# ----------------------------------------------------------------------------------- check_one_video_per_question


def test_a_question_id_naming_two_videos_is_refused_naming_both():
    frame = tidy_frame([_row(video_id="v1", source="p.csv[#1]"), _row(video_id="v2", source="p.csv[#2]")])
    with pytest.raises(
        LogError,
        match=r"^question id 'q1' \(orig\) names two videos: 'v1' at p\.csv\[#1\] and 'v2' at p\.csv\[#2\]; the "
        r"question id field must be unique per question",
    ):
        check_one_video_per_question(frame)


def test_a_record_without_a_video_id_and_another_condition_do_not_conflict():
    frame = tidy_frame([_row(video_id="v1"), _row(video_id=""), _row(condition="black", video_id="v2")])
    assert check_one_video_per_question(frame) is None


# ----------------------------------------------------------------------------------- none_for_missing


def test_every_missing_pred_and_error_becomes_none():
    table = pd.DataFrame(
        {"pred": pd.Series([np.nan, "A", None, pd.NA], dtype=object), "error": [None, np.nan, "OOM", np.nan]}
    )
    out = none_for_missing(table)
    assert [v is None for v in out.pred] == [True, False, True, True] and out.pred.iloc[1] == "A"
    assert [v is None for v in out.error] == [True, True, False, True] and out.error.iloc[2] == "OOM"


# ----------------------------------------------------------------------------------- check_models


def test_one_label_holding_two_models_is_refused_naming_both_and_their_files():
    runs = [
        {"model": "m", "source": "qwen2_vl /w/Tiny", "where": "/a/x_samples_t.jsonl:1"},
        {"model": "other", "source": "llava_vid /w/Tiny", "where": "/c/y.jsonl:1"},
        {"model": "m", "source": "qwen2_vl /w/Tiny", "where": "/a/x_samples_u.jsonl:1"},
        {"model": "m", "source": "llava_vid /w/Tiny", "where": "/b/p.csv[#3]"},
    ]
    with pytest.raises(
        LogError,
        match=r"^label 'm' holds answers of two different models: qwen2_vl /w/Tiny \(/a/x_samples_t\.jsonl\) and "
        r"llava_vid /w/Tiny \(/b/p\.csv\); give each model its own label",
    ):
        check_models(runs)


def test_the_two_models_refusal_names_no_secret():
    runs = [
        {"model": "m", "source": "q https://u:SECRET1@hub/a", "where": "/a/x.jsonl:1"},
        {"model": "m", "source": "q https://u:SECRET2@hub/b", "where": "/b/y.jsonl:1"},
    ]
    with pytest.raises(LogError, match="two different models") as caught:
        check_models(runs)
    assert "SECRET" not in str(caught.value) and "@hub/b" in str(caught.value)


def test_one_model_per_label_passes():
    runs = [{"model": "a", "source": "s1", "where": "f:1"}, {"model": "b", "source": "s2", "where": "g:1"}]
    assert check_models(runs) is None and check_models([]) is None


# ----------------------------------------------------------------------------------- scores


def test_a_source_without_scores_scores_a_letter_by_its_correct_flag_and_keeps_a_graded_score():
    frame = tidy_frame(
        [
            _row(question_id="q1", correct=True, status="ok"),
            _row(question_id="q2", correct=False, status="unparsed"),
            _row(question_id="q3", correct=None, status="error", error="gone"),
            _row(question_id="q4", correct=False, status="ok", score=0.25, scoring="metric:mra"),
            _row(question_id="q5", correct=None, status="open", scoring="judge"),
        ]
    )
    out = fill_scores(frame)
    assert out["scoring"].tolist() == ["letter", "letter", "letter", "metric:mra", "judge"]
    np.testing.assert_array_equal(out["score"].to_numpy(), [1.0, 0.0, np.nan, 0.25, np.nan])


def test_two_graded_answers_of_one_question_that_differ_in_score_or_reference_are_an_error():
    def graded(score, answer, source):
        return _row(pred=None, status="ok", score=score, scoring="metric:mra", answer=answer, source=source)

    with pytest.raises(LogError, match=r"two different answers: score 0\.4 against '6' at a:1 and score 1 against"):
        dedupe(tidy_frame([graded(0.4, "6", "a:1"), graded(1.0, "6", "b:1")]))
    with pytest.raises(LogError, match=r"score 1 against '3' at a:1 and score 1 against '4' at b:1$"):
        dedupe(tidy_frame([graded(1.0, "3", "a:1"), graded(1.0, "4", "b:1")]))
    assert len(dedupe(tidy_frame([graded(1.0, "3", "a:1"), graded(1.0, "3", "b:1")]))) == 1


def test_two_judge_graded_replies_of_one_question_are_an_error_before_they_are_judged():
    def reply(text, source):
        return _row(pred=None, status="open", score=None, scoring="judge", answer="red", response=text, source=source)

    differ = r"two different answers: reply 'a cat' \(open\) at a:1 and reply 'a dog' \(open\) at b:1$"
    with pytest.raises(LogError, match=differ):
        dedupe(tidy_frame([reply("a cat", "a:1"), reply("a dog", "b:1")]))
