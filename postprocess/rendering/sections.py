"""The report's headline sections (``HEADLINE``): which tables, which rows and columns, and the sentence above each;
the character-tracking group among them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

import postprocess.analyses as _analyses

#: Version of the report.json layout.


# ------------------------------------------------------------------------------ headline sections


@dataclass(frozen=True)
class Section:
    """A headline table of report.md: which table, its title, its columns and what it shows."""

    table: str
    title: str
    columns: tuple[str, ...] | Callable[[pd.DataFrame], Sequence[str]] = ()
    """Columns shown (those present, in this order), or a function of the rows giving them; empty: every
    non-convention column."""
    intro: str | Callable[[pd.DataFrame], str] = ""
    """What the table shows, before the conventions sentence; default: the analysis description."""
    filter: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    aliases: tuple[str, ...] = ()
    """Other table names this section renders when ``table`` is absent or empty (the first non-empty one)."""
    group: str = ""
    """The group heading (``GROUPS``) the section sits under, one level down; empty: a top-level section."""

    def pick(self, tables: Mapping[str, pd.DataFrame]) -> tuple[str, pd.DataFrame] | None:
        """(name, rows to show) of the first non-empty table among ``table`` and ``aliases``, or None."""
        for name in (self.table, *self.aliases):
            table = tables.get(name)
            if table is None or not len(table):
                continue
            rows = self.filter(table) if self.filter else table
            if len(rows):
                return name, rows
        return None


def _ladder_intro(table: pd.DataFrame) -> str:
    return (
        "Accuracy at each rung (black > single > shuffled > ordered > orig) on the questions answered under "
        "all of a model's rungs; spatial = single - black, diversity = shuffled - single, temporal = ordered - "
        "shuffled (orig - shuffled when there is no ordered rung, as the paper), sampling = orig - ordered. "
        "Rows with no delta (a model run on black and orig only) are omitted here; see ladder.csv."
    )


def _ladder_rows(table: pd.DataFrame) -> pd.DataFrame:
    deltas = [c for c in ("spatial", "diversity", "temporal", "sampling") if c in table.columns]
    return table[table[deltas].notna().any(axis=1)] if deltas else table


def _letters_columns(table: pd.DataFrame) -> list[str]:
    """The letters section's columns: predicted counts of the letters some answer or key uses."""

    def used(column: str) -> bool:
        return column in table.columns and bool((pd.to_numeric(table[column], errors="coerce").fillna(0) > 0).any())

    letters = [c for c in table.columns if c.startswith("pred_") and (used(c) or used(f"gt_{c[5:]}"))]
    return [
        *("model", "benchmark", "condition", "n", "n_letter", "n_unparsed"),
        *letters,
        *("top_pred", "top_pred_share", "p_pred", "p_gt", "accuracy", "chance", "expected_from_letters"),
        "letter_share",
    ]


def ci_text(table: pd.DataFrame, column: str = "ci_method") -> str:
    """How the table's CIs were computed, in words, from its ``ci_method`` values (``formatting.CI_METHODS``): one
    method, or each of several (``column`` then says which row used which); "method not recorded" without one."""
    words = _analyses.findings.methods_words(table[column].tolist()) if column in table.columns else []
    if not words:
        return "method not recorded"
    if len(words) == 1:
        return words[0]
    return f"by row ({column}): " + " or ".join(words)


def _overall_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["task_type"] == "Overall"] if "task_type" in table.columns else table


def blind_sentence(table: pd.DataFrame) -> str:
    """One sentence naming, per model and benchmark, the task types answered above chance under black (Holm), out of
    the task types tested; those too small to test (no ``above_chance``: fewer than min_stratum questions) are
    counted apart, never in the denominator."""
    if "condition" not in table.columns or "task_type" not in table.columns:
        return "No model was run without the video (black), so nothing is known about answering blind."
    black = table[(table["condition"] == "black") & (table["task_type"] != "Overall")]
    if black.empty:
        return "No model was run without the video (black), so nothing is known about answering blind."
    parts = []
    for (model, benchmark), group in black.groupby(["model", "benchmark"], sort=True):
        tested = group[group["above_chance"].notna()]
        above = tested.loc[tested["above_chance"].astype(bool), "task_type"].tolist()
        what = ", ".join(str(t) for t in above) if above else "no task type"
        untested = len(group) - len(tested)
        apart = f"; {untested} too small to test" if untested else ""
        parts.append(f"{model} on {benchmark}: {what} ({len(above)} of {len(tested)} tested{apart})")
    return "Without the video (black), above chance after Holm: " + "; ".join(parts) + "."


def _chance_intro(table: pd.DataFrame) -> str:
    return (
        blind_sentence(table)
        + " Per condition and task type: accuracy against chance (the mean of 1 / options), p_chance: exact "
        "one-sided test (binomial, or Poisson-binomial when option counts differ), p_holm: Holm over the task "
        "types and Overall of one model, benchmark and condition; above_chance_black: that task type is above "
        "chance without the video. Orig and black rows here; every condition is in above_chance.csv."
    )


def _orig_black_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["condition"].isin(["orig", "black"])] if "condition" in table.columns else table


# ------------------------------------------------------------------------------- character tracking

TRACKING = "Character tracking"
#: Group heading -> the sentence under it.
GROUPS: dict[str, str] = {
    TRACKING: "Is the score earned by following the named character through the video? Each table perturbs one "
    "thing and compares with orig on the same questions: text only (black), one frame per ground-truth outfit "
    "window (oracle), dialogue added (subtitles), the name replaced (nameswap), options removed (open), only the "
    "show and episode title (metadata), an abstain option (abstain), and the frame budget. Accuracy per condition "
    "(accuracy), the letters picked (letters) and whole episodes right (collective) are in their own tables.",
}

#: Shown for a judge label naming the offline scorer, wherever the label is shown.
OFFLINE_JUDGE_NOTE = "the offline scorer is deterministic token overlap, not an LLM judge"


def judge_labels(table: pd.DataFrame) -> list[str]:
    """The distinct judge labels of an open_ended table (its ``judge`` column, split on '; ')."""
    if "judge" not in table.columns:
        return []
    labels: list[str] = []
    for value in table["judge"].dropna().tolist():
        for label in str(value).split("; "):
            if label and label not in labels:
                labels.append(label)
    return labels


def _open_intro(table: pd.DataFrame) -> str:
    labels = judge_labels(table)
    judged = "; ".join(labels) if labels else "no judge label recorded"
    offline = any("offline" in label.lower() for label in labels)
    note = f" ({OFFLINE_JUDGE_NOTE})" if offline and not any("not an llm" in label.lower() for label in labels) else ""
    return (
        f"Judge: {judged}{note}. Options removed: each free-text answer is scored 0, 0.5 or 1 against the ground-truth "
        "text. mc_acc is orig multiple-choice accuracy on the n_mc questions that also have a judged answer; gap = "
        "open_score_mc - mc_acc on those questions (negative: the options were doing part of the work); "
        "fully_correct / half_correct: answers scored 1 / 0.5."
    )


TRACKING_SECTIONS: tuple[Section, ...] = (
    Section(
        "tracking_tests",
        "Perturbed conditions against orig",
        (
            "model",
            "benchmark",
            "comparison",
            "n",
            "n_excluded",
            "acc_a",
            "acc_a_ci_low",
            "acc_a_ci_high",
            "acc_b",
            "acc_b_ci_low",
            "acc_b_ci_high",
            "diff",
            "b01",
            "b10",
            "p_mcnemar",
            "cohen_h",
            "mean_spacing_s",
        ),
        "a is the first-named arm: orig for full_vs_text (b = black), else the perturbed condition (b = orig); "
        "b01 = questions a got wrong and b right, b10 the reverse; p_mcnemar: exact McNemar on b01 and b10; "
        "cohen_h = 2 asin(sqrt acc_a) - 2 asin(sqrt acc_b). A large full_vs_text gap says the video matters; an "
        "oracle row near orig says uniform frames already catch the outfit windows (mean_spacing_s: seconds between "
        "uniform frames); nameswap is scored against the original key.",
        group=TRACKING,
    ),
    Section(
        "metadata_chance",
        "Title only: accuracy against chance",
        ("model", "benchmark", "n", "correct", "acc", "ci_low", "ci_high", "chance", "n_options", "p_binomial"),
        "The model sees the show and episode title and the question, no video. Accuracy reliably above chance "
        "(p_binomial: exact binomial test against chance) means the answer is recoverable without watching: from "
        "memory of the show (contamination) or from the options.",
        group=TRACKING,
    ),
    Section(
        "name_swap",
        "Name-swap sensitivity",
        (
            "model",
            "benchmark",
            "split",
            "n",
            "n_excluded",
            "changed",
            "sensitivity",
            "ci_low",
            "ci_high",
            "acc_orig",
            "acc_swap",
        ),
        "A model that conditions on the name changes its letter when the name changes; a name-blind model never "
        "does. sensitivity = changed / n over the questions with a letter in both orig and nameswap; same / cross: "
        "the character replaced by one of the same / the other gender; acc_swap is scored against the original key.",
        group=TRACKING,
    ),
    Section(
        "name_swap_pairs",
        "Name-swap sensitivity by character",
        (
            "model",
            "benchmark",
            "character",
            "swap_to",
            "swap_gender",
            "n",
            "changed",
            "sensitivity",
            "ci_low",
            "ci_high",
        ),
        "Per original character and the character put in its place, most sensitive first: a pair with sensitivity "
        "near 0 is one the model does not tell apart by name.",
        group=TRACKING,
    ),
    Section(
        "open_ended",
        "Open-ended answers against multiple choice",
        (
            "model",
            "benchmark",
            "n_mc",
            "mc_acc",
            "n_open",
            "open_score",
            "open_score_mc",
            "gap",
            "fully_correct",
            "half_correct",
            "n_unjudged",
            "judge",
        ),
        _open_intro,
        group=TRACKING,
    ),
    Section(
        "abstention",
        "Abstention",
        (
            "model",
            "benchmark",
            "n",
            "abstained_added",
            "abstained_benchmark",
            "abstain_rate",
            "ci_low",
            "ci_high",
            "n_committed",
            "acc_committed",
            "n_orig",
            "acc_orig",
            "idk_rate_orig",
        ),
        "An option 'I cannot determine this from the video.' is added. abstained_added: answers picking it; "
        "abstained_benchmark: answers picking the benchmark's own 'I don't know' option; abstaining is never "
        "counted correct. acc_committed: accuracy on the answers that commit to an option; acc_orig and "
        "idk_rate_orig: the same questions in orig (how often it already said 'I don't know' there).",
        group=TRACKING,
    ),
    Section(
        "frame_budget",
        "Frame budget",
        (
            "model",
            "benchmark",
            "frames",
            "n",
            "acc_orig",
            "ci_low",
            "ci_high",
            "mean_spacing_s",
            "n_swap",
            "sensitivity",
            "sensitivity_ci_low",
            "sensitivity_ci_high",
        ),
        "One row per run with a known frame budget (frames per video, from its model settings), by budget: orig "
        "accuracy and name-swap sensitivity. Accuracy flat in the budget says more frames add nothing the model uses.",
        group=TRACKING,
    ),
)


def _vdg_intro(table: pd.DataFrame) -> str:
    return (
        "VDG = correct(orig) - correct(black), per question, averaged over the n questions compared; CI: "
        f"paired, {ci_text(table)}. d / c: questions right only with / only without the video (dc_ratio = d / c)."
    )


def _no_vision_intro(table: pd.DataFrame) -> str:
    return (
        "Two no-vision arms: black keeps the visual tokens (black frames of the source's duration and size), "
        "blind gives the model no visual input at all (lmms-eval's no_visual setting). vdg_black = orig - black "
        "(the VDG), vdg_blind = orig - blind, black_blind = black - blind (what a screen of black frames itself "
        "changes); acc_upper and acc_lower are the two arms' accuracies on the n questions answered under every "
        f"arm the model ran. CI: paired, {ci_text(table)}."
    )


def _probes_intro(table: pd.DataFrame) -> str:
    return (
        "lmms-eval's probing variants, on every benchmark with options and read per question against orig: "
        "options_shuffled (the options reordered so that the right one moves), none_option (the right option's "
        "text replaced by None), no_question (the options without the question), video_only (neither), numbered "
        f"(options 1-N). diff = acc_probe - acc_orig, CI: paired, {ci_text(table)}; agreement: the same option chosen "
        "under both; reading: the probe's own measure (per task type in probes.csv)."
    )


def _added_intro(table: pd.DataFrame) -> str:
    return (
        "Conditions declared through vdg_tasks.extend (vdg's downscale112/224/448, blur and mute, and any of "
        "yours), each read per question against orig: diff = acc_condition - acc_orig (negative: the condition "
        f"costs accuracy), CI: paired, {ci_text(table)}. mute sits beside black, on the n_beside questions "
        "answered under orig, mute and black: -diff_same_questions is what the sound carries, -diff_beside what "
        "the pictures carry (black keeps the sound). Per task type in added_conditions.csv."
    )


def _dissociation_intro(table: pd.DataFrame) -> str:
    return (
        "McNemar on orig and on black for each pair of models on their shared question set (the same p and Holm "
        "family as the mcnemar table); pattern (descriptive): where each difference alone is significant after "
        "Holm; interaction: the mean per-question difference of differences (a_orig - b_orig) - (a_black - "
        f"b_black) with its paired CI ({ci_text(table)}; unadjusted) and exact sign-flip p, Holm-adjusted over "
        "the benchmark's pairs; dissociation: a significant interaction with an 'orig only' or 'black only' "
        "pattern (a difference significant on one condition and not the other is not by itself evidence that the "
        "two differ); TOST: are the orig accuracies equivalent within the margin; share_pattern: how often "
        "bootstrap resamples of the questions give the same pattern; share_black_p01 and "
        "share_black_only_unadjusted: unadjusted events on the pair's own resamples (the paper's stability)."
    )


def _sampling_intro(table: pd.DataFrame) -> str:
    return (
        "One row per sampling setting (frames:<N> frames per video, fps:<F> frames per second) of each model run "
        "at two or more (`vdg sweep --frames` / `--fps`): accuracy with (orig) and without (black) the video and "
        f"VDG with its paired CI ({ci_text(table)}), as the vdg table's Overall row of that run; acc_single / "
        "acc_shuffled / acc_ordered from the ladder table when run. A VDG flat across settings says how densely "
        "the video is sampled does not change how much the answers depend on it."
    )


HEADLINE: tuple[Section, ...] = (
    Section(
        "vdg",
        "Visual Dependency Gap by task type",
        (
            "model",
            "benchmark",
            "task_type",
            "n",
            "acc_orig",
            "acc_black",
            "vdg",
            "ci_low",
            "ci_high",
            "d",
            "c",
            "dc_ratio",
            "n_error",
            "n_unparsed",
        ),
        _vdg_intro,
    ),
    Section(
        "no_vision",
        "Black frames or no visual input",
        (
            "model",
            "benchmark",
            "task_type",
            "contrast",
            "n",
            "acc_upper",
            "acc_lower",
            "diff",
            "ci_low",
            "ci_high",
        ),
        _no_vision_intro,
    ),
    Section(
        "probes",
        "Probes",
        (
            "model",
            "benchmark",
            "probe",
            "n",
            "acc_orig",
            "acc_probe",
            "diff",
            "ci_low",
            "ci_high",
            "agreement",
            "reading",
        ),  # fmt: skip
        _probes_intro,
        _overall_rows,
    ),
    Section(
        "added_conditions",
        "Added conditions",
        (
            "model",
            "benchmark",
            "condition",
            "n",
            "acc_orig",
            "acc_condition",
            "diff",
            "ci_low",
            "ci_high",
            "beside",
            "n_beside",
            "diff_same_questions",
            "diff_beside",
            "reading",
        ),  # fmt: skip
        _added_intro,
        _overall_rows,
    ),
    Section(
        "shortcut_types",
        "Text-only shortcuts",
        ("benchmark", "task_type", "n", "accuracy", "ci_low", "ci_high", "chance", "p_holm", "above_chance"),
        "What the question text alone gives away, before any model: answerers trained on the benchmark's own "
        "questions and options (vdg shortcuts: a linear model over the words of each question-option pair and a "
        "random forest over the options' lengths, overlaps, positions and numbers, cross-validated with questions "
        "about one video kept in one fold), combined. accuracy: share of questions whose right option they pick; "
        "chance: picking at random; CI: Wilson; p_holm: the one-sided binomial p against chance, Holm-adjusted over "
        "the benchmark's task types (above_chance: below the level). A task type far above chance is answerable "
        "without the video.",
        lambda table: table[table["answerer"] == "combined"],
    ),
    Section(
        "shortcut_links",
        "Do the models take the text's shortcuts?",
        ("model", "benchmark", "condition", "n", "accuracy", "r", "p", "acc_low", "acc_mid", "acc_high"),
        "Each question's s(q) (the text-only answerers' probability for its right option) against the model's "
        "correctness: r is the point-biserial correlation; acc_low / acc_mid / acc_high the accuracy on the thirds "
        "of the questions with the lowest, middle and highest s(q). Under black and blind a positive r means the "
        "model guesses from the same cues the text-only answerers find.",
    ),
    Section(
        "vdg_by_shortcut",
        "VDG by text-shortcut tercile",
        ("model", "benchmark", "tercile", "s_min", "s_max", "n", "acc_orig", "acc_black", "vdg", "ci_low", "ci_high"),
        "The VDG on the thirds of the questions with the lowest, middle and highest s(q): where the text gives the "
        "answer away, the video has less left to add.",
    ),
    Section(
        "question_set_comparison",
        "Question sets compared",
        (
            "model",
            "benchmark",
            "question_set",
            "n",
            "acc_orig",
            "acc_black",
            "acc_blind",
            "vdg",
            "ci_low",
            "ci_high",
            "vdg_blind",
            "above_controls",
        ),
        "Accuracy and VDG on each --question-set beside every compared question (all). For vdg debias: a "
        "debiased set whose VDG exceeds every uniform control's (as many questions removed at random) did more "
        "than shrink the set; one that also exceeds the matched controls' (as many of each task type) chose better "
        "questions within task types, not only another mix of task types (above_controls).",
    ),
    Section(
        "ladder",
        "Ladder",
        (
            "model",
            "benchmark",
            "task_type",
            "n",
            "acc_black",
            "acc_single",
            "acc_shuffled",
            "acc_ordered",
            "acc_orig",
            "spatial",
            "spatial_ci_low",
            "spatial_ci_high",
            "diversity",
            "diversity_ci_low",
            "diversity_ci_high",
            "temporal",
            "temporal_ci_low",
            "temporal_ci_high",
            "sampling",
            "sampling_ci_low",
            "sampling_ci_high",
        ),
        _ladder_intro,
        _ladder_rows,
    ),
    Section(
        "mcnemar",
        "McNemar tests between models",
        (
            "model_a",
            "model_b",
            "benchmark",
            "condition",
            "task_type",
            "n",
            "n_excluded",
            "acc_a",
            "acc_b",
            "diff",
            "diff_ci_low",
            "diff_ci_high",
            "b01",
            "b10",
            "p",
            "test",
            "p_cc",
            "p_holm",
            "family",
        ),
        "Each pair of models on each condition both ran, on the questions both answered: b01 = model_a wrong and "
        "model_b right, b10 the reverse; p: McNemar's test (exact binomial below 25 discordant pairs, 1 when "
        "b01 = b10, else the continuity-corrected chi-square p_cc); p_holm: p Holm-adjusted within its family "
        "(orig+black: every pair's orig and black tests of the benchmark; each other condition its own), so running "
        "CRF levels never changes an orig/black conclusion (mcnemar.csv has b00, b11 and the family size).",
    ),
    Section(
        "dissociation",
        "Dissociation: do two models differ with the video, without it, or both?",
        (
            "model_a",
            "model_b",
            "benchmark",
            "n",
            "n_excluded",
            "acc_a_orig",
            "acc_b_orig",
            "acc_a_black",
            "acc_b_black",
            "b01_orig",
            "b10_orig",
            "p_orig",
            "p_holm_orig",
            "b01_black",
            "b10_black",
            "p_black",
            "p_holm_black",
            "pattern",
            "interaction",
            "interaction_ci_low",
            "interaction_ci_high",
            "p_interaction",
            "p_holm_interaction",
            "dissociation",
            "p_tost_orig",
            "equivalent_orig",
            "share_black_p01",
            "share_pattern",
            "share_black_only_unadjusted",
        ),
        _dissociation_intro,
    ),
    Section(
        "crf_flips",
        "Answer flips under compression (CRF)",
        (),
        "Per CRF level against orig on the same questions (Overall rows; per task type in the CSV): c_to_i = right "
        "at orig and wrong at the level, i_to_c the reverse, net = i_to_c - c_to_i; stable_pct = 100 * share with "
        "the same correctness; acc_orig and acc_level: the two accuracies on those questions; p: McNemar's paired "
        "test of c_to_i against i_to_c (exact binomial below 25 changed answers, else the continuity-corrected "
        "chi-square; test says which).",
        _overall_rows,
        aliases=("flips",),
    ),
    Section(
        "sampling_sweep",
        "Sampling sweep",
        (
            "model",
            "benchmark",
            "setting",
            "n",
            "acc_orig",
            "acc_black",
            "vdg",
            "vdg_ci_low",
            "vdg_ci_high",
            "d",
            "c",
            "n_error",
            "acc_single",
            "acc_shuffled",
            "acc_ordered",
        ),
        _sampling_intro,
    ),
    Section(
        "letters",
        "Answer-letter bias",
        _letters_columns,
        "Predicted-letter counts per condition (letters no question or answer uses are left out; all are in "
        "letters.csv); p_pred / p_gt: chi-square of the predicted / correct letters against uniform guessing among "
        "each question's options; chance: the mean of 1 / options; "
        "expected_from_letters: accuracy a question-blind answerer with these letter counts gets; letter_share: "
        "the share of the above-chance accuracy that letter alignment alone explains (meant for black).",
    ),
    Section(
        "above_chance",
        "Above chance, and what is answered without the video",
        (
            "model",
            "benchmark",
            "condition",
            "task_type",
            "n",
            "acc",
            "ci_low",
            "ci_high",
            "n_options",
            "chance",
            "p_chance",
            "p_holm",
            "above_chance",
            "above_chance_black",
        ),
        _chance_intro,
        _orig_black_rows,
    ),
    Section(
        "kappa",
        "Agreement between models (Cohen's kappa)",
        (
            "benchmark",
            "condition",
            "model_a",
            "model_b",
            "n",
            "both_right",
            "a_only",
            "b_only",
            "both_wrong",
            "p_observed",
            "p_expected",
            "kappa",
            "ci_low",
            "ci_high",
            "p_zero",
        ),
        "Per pair of models and condition, on correct / incorrect per question: kappa = (p_observed - p_expected) / "
        "(1 - p_expected); CI: asymptotic (Fleiss, Cohen & Everitt SE); p_zero: test of kappa = 0. Kappa near 0 "
        "means the two models are right on unrelated questions; near 1, on the same ones.",
    ),
    Section(
        "categories_by_task",
        "Is grounding task-dependent? Categories I-IV by task type",
        (),
        "Per model: test of independence of the outcome categories (I right only with the video, II both, III "
        "only without it, IV neither) and the task type, over the task types with at least min_stratum questions "
        "(smaller ones: too_small); p: the chi-square, or a Monte Carlo permutation p (p_method) when an expected "
        "count is below 5 (Cochran's rule); a small p_holm (Holm over the benchmark's models) says the share of "
        "grounded answers depends on the task type.",
    ),
    Section(
        "models_right",
        "How many models are right, against independent models",
        (),
        "On the questions every model has: how many of the M models answer right, under orig and under black, "
        "against the Poisson-binomial of their accuracies (what independent models would give). Excess at 0 and M "
        "means the models succeed and fail on the same questions.",
    ),
    Section(
        "models_right_transition",
        "Models right: from black to orig",
        ("benchmark", "n_models", "n", "right_black", "right_orig", "n_questions", "share_of_black"),
        "Questions by the number of models right without the video (right_black) and with it (right_orig); "
        "share_of_black: the share of the right_black row.",
    ),
    Section(
        "vdg_across",
        "VDG across benchmarks",
        (),
        "Each model's Overall VDG on two benchmarks and their difference; CI: percentile bootstrap with each "
        "benchmark's questions resampled independently (the same model on both; the questions differ).",
    ),
    Section(
        "letters_across",
        "Answer letters across benchmarks",
        (),
        "Per model and condition: chi-square test of homogeneity of the predicted letters on two benchmarks, "
        "over the letters of their shared option count; sets whose option counts differ, or that mix counts, are "
        "not compared (not_compared says why).",
    ),
    Section(
        "crf_vdg",
        "Compression flips against VDG",
        (),
        "Per model: Spearman correlation over task types between the answer flips summed over the CRF levels "
        "(and the flip rate) and the task type's VDG. Positive: the task types that need the video are also those "
        "compression breaks.",
    ),
    *TRACKING_SECTIONS,
)
