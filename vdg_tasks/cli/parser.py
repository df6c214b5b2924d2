"""The ``vdg`` parser: one sub-command per job, each pointing at its function, and ``main``."""

from __future__ import annotations

import argparse
import difflib
import functools
import os
import sys
from pathlib import Path

from vdg_tasks.cli.audit import cmd_debias, cmd_shortcuts
from vdg_tasks.cli.common import version
from vdg_tasks.cli.report import (
    cmd_export_results,
    cmd_leaderboard,
    cmd_report,
    cmd_schema,
    cmd_stats,
    input_arguments,
    judge_argument,
    option_arguments,
)
from vdg_tasks.cli.tasks import (
    cmd_coverage,
    cmd_derive,
    cmd_export,
    cmd_export_tasks,
    cmd_infinibench,
    cmd_materialize,
    cmd_register,
    cmd_subset,
    cmd_sweep,
    cmd_synth,
    cmd_synth_episodes,
    cmd_tasks_path,
    cmd_write_yamls,
    conditions_refused,
)
from vdg_tasks.data import question_sets

#: What ``vdg --help`` says vdg does, in one line.
SUMMARY = (
    "vdg: does a video benchmark score measure watching the video or guessing from the text? "
    "Build perturbed-video lmms-eval tasks, then join their logs per question and report."
)


class _HelpFormatter(argparse.HelpFormatter):
    """Appends each option's default to its help, unless there is none to show or the help says it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        shown = action.option_strings and not (default is None or default is False or default == argparse.SUPPRESS)
        if shown and "default" not in text:
            text += " (default: %(default)s)"
        return text


def _subcommand(sub, name: str, help: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=help, formatter_class=_HelpFormatter)


#: Commands that maintain vdg itself, listed apart from the user's in ``vdg --help``.
DEVELOPER_COMMANDS: dict[str, str] = {
    "write-yamls": "regenerate yaml_tasks/ from the condition declarations",
    "schema": "regenerate docs/report-schema.md from the declared columns",
}


def _developer(sub, name: str) -> argparse.ArgumentParser:
    """A developer command: parsed as any other, listed in the help's epilog rather than among the user's."""
    sub._choices_actions = [a for a in sub._choices_actions if a.dest != name]  # added below, without a help line
    p = sub.add_parser(name, description=DEVELOPER_COMMANDS[name], formatter_class=_HelpFormatter)
    return p


def build_parser() -> argparse.ArgumentParser:
    # vdg_tasks.jobs.materialize.default_workers and vdg_tasks.lmms.yamlgen.YAML_ROOT, without importing those
    # modules of the model side, which vdg --help does not load (tests/vdg_tasks/cli/test_cli_imports.py checks).
    def default_workers() -> int:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):
            return max(1, os.cpu_count() or 1)

    epilog = "developer commands:\n" + "\n".join(f"  {name:<13} {text}" for name, text in DEVELOPER_COMMANDS.items())
    parser = argparse.ArgumentParser(
        prog="vdg", description=SUMMARY, epilog=epilog, formatter_class=_RawEpilogFormatter
    )
    parser.add_argument("--version", action="version", version=f"vdg {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")
    _add = functools.partial(_subcommand, sub)

    p = _add("synth", help="generate the synthetic benchmark vdgsynth")
    YAML_ROOT = Path(__file__).resolve().parents[2] / "yaml_tasks"  # noqa: N806 (vdg_tasks.lmms.yamlgen's)

    p.add_argument(
        "--out",
        default=str(YAML_ROOT / "vdgsynth" / "data"),
        help="folder (default: where the vdgsynth_vdg_* tasks read it)",
    )
    p.add_argument(
        "--videos",
        type=int,
        default=30,
        help="number of synthetic videos (5 questions each, one per task type; synth.N_VIDEOS)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the generated benchmark")
    p.set_defaults(func=cmd_synth)

    p = _add(
        "synth-episodes",
        help="generate synthetic TV episodes (InfiniBench global-appearance layout) and prepare infinibench_ga on them",
    )
    p.add_argument(
        "--out",
        default=str(YAML_ROOT / "infinibench_ga" / "data" / "episodes"),
        help="folder for the videos, subtitles and annotations (default: episodes/ beside the questions)",
    )
    p.add_argument(
        "--questions",
        default=str(YAML_ROOT / "infinibench_ga" / "data" / "questions.jsonl"),
        help="questions file to write (default: where the infinibench_ga_vdg_* tasks read it)",
    )
    p.add_argument(
        "--episodes", type=int, default=15, help="number of episodes (6 questions each; episodes.N_EPISODES)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the generated episodes")
    p.set_defaults(func=cmd_synth_episodes)

    p = _add("infinibench", help="prepare infinibench_ga from a local copy of InfiniBench's global-appearance data")
    p.add_argument("annotations", help="the annotations: a JSON/JSONL file or a folder (e.g. Global_appreance.json)")
    p.add_argument("--videos", required=True, help="folder holding <show>/season_N/episode_M.mp4")
    p.add_argument("--subtitles", help="folder holding <show>/season_N/episode_M.srt (default: beside the videos)")
    p.add_argument("--roster", help="JSON/YAML file {show: {character: gender}} adding or replacing casts")
    p.add_argument("--split", help="the split to read from a release with several (validation has answers)")
    p.add_argument(
        "--out",
        default=str(YAML_ROOT / "infinibench_ga" / "data" / "questions.jsonl"),
        help="questions file to write (default: where the infinibench_ga_vdg_* tasks read it)",
    )
    p.set_defaults(func=cmd_infinibench)

    p = _add(
        "sweep",
        help="run lmms-eval once per frame budget (--frames) or frame rate (--fps) and print the report command",
    )
    p.add_argument("--model", required=True, help="lmms-eval model name, e.g. qwen2_vl")
    p.add_argument("--model_args", default="", help="lmms-eval --model_args, without the swept argument")
    p.add_argument(
        "--tasks", required=True, help="tasks or tags, e.g. infinibench_ga_vdg_orig,infinibench_ga_vdg_nameswap"
    )
    p.add_argument(
        "--frames",
        help="comma-separated frame budgets (frames per video), e.g. 8,16,32,64; give this or --fps",
    )
    p.add_argument(
        "--fps",
        help="comma-separated frame rates (frames per second), e.g. 0.5,1,2,24; give this or --frames",
    )
    p.add_argument("--frames-arg", default="max_num_frames", help="the model argument that sets frames per video")
    p.add_argument(
        "--fps-arg",
        default="fps",
        help="the model argument that sets frames per second (qwen2_vl, qwen2_5_vl: fps; llava_vid: video_fps)",
    )
    p.add_argument("--output_path", required=True, help="folder; each setting writes OUT/frames<N> or OUT/fps<F>")
    p.add_argument(
        "--label",
        help="model label in the report (default: the model name); <label>@<N>f or <label>@<F>fps per setting",
    )
    p.add_argument("--include_path", help="task folder for lmms-eval (default: vdg's, `vdg tasks-path`)")
    p.add_argument(
        "--dry-run", action="store_true", help="print the lmms-eval commands (with VDG_SAMPLING) without running them"
    )
    p.add_argument("lmms_eval_args", nargs=argparse.REMAINDER, help="after --: more lmms-eval arguments")
    p.set_defaults(func=cmd_sweep)

    p = _add("tasks-path", help="print the folder to pass to lmms-eval --include_path")
    p.set_defaults(func=cmd_tasks_path)

    p = _add("register", help="copy vdg's tasks into lmms-eval's own task folder: no --include_path needed")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--undo", action="store_true", help="remove exactly what `vdg register` placed")
    mode.add_argument("--check", action="store_true", help="only check the registration is there and up to date")
    p.add_argument("--force", action="store_true", help="replace (or with --undo remove) copies edited since")
    p.add_argument("--tasks-dir", help="lmms-eval's task folder (default: <lmms_eval>/tasks of this environment)")
    p.set_defaults(func=cmd_register)

    p = _developer(sub, "write-yamls")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="only check the committed files are up to date")
    mode.add_argument(
        "--out",
        type=Path,
        help="write the task folders here instead (with your conditions: lmms-eval --include_path OUT); vdgsynth and "
        "infinibench_ga read their questions from the package's folders",
    )
    p.set_defaults(func=cmd_write_yamls)

    p = _add("materialize", help="pre-build every perturbed video a task list needs")
    p.add_argument("--tasks", required=True, help="comma-separated task names or tags, e.g. vdgsynth_vdg")
    p.add_argument("--workers", type=int, default=default_workers(), help="parallel encoding processes")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--shard",
        metavar="I/N",
        help="build only shard I (0-based) of N, a deterministic 1/N of the jobs (e.g. $SLURM_ARRAY_TASK_ID/N)",
    )
    p.add_argument("--manifest", metavar="FILE", help="write every job, its outcome and error as JSON")
    p.add_argument(
        "--mirror",
        metavar="DIR",
        help="also place each video at DIR/<condition>/<the source's path in the benchmark's folder of videos> "
        "(hard links to the cache, else copies; a rerun writes nothing) and list them in DIR/vdg-mirror.json: "
        "another harness runs a condition with its video root at DIR/<condition>",
    )
    p.set_defaults(func=cmd_materialize)

    p = _add("export", help="write tasks' questions with their perturbed videos as a datasets dataset (hub-ready)")
    p.add_argument("--tasks", required=True, help="comma-separated task names or tags, e.g. videomme_vdg_crf")
    p.add_argument("--out", required=True, help="the export folder (replaced whole when it is this export)")
    p.add_argument("--name", help="export name (default: the folder's name)")
    p.add_argument("--workers", type=int, default=default_workers(), help="parallel encoding processes")
    p.add_argument("--push-to-hub", metavar="REPO", help="then upload it as the Hugging Face dataset REPO")
    p.add_argument("--private", action="store_true", help="with --push-to-hub: create the repo private")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_export)

    p = _add("export-tasks", help="write the lmms-eval tasks that evaluate an export folder or hub dataset")
    p.add_argument("export", help="an export folder, or a Hugging Face dataset repo id")
    p.add_argument("--out", required=True, help="task folder to write (pass it to lmms-eval --include_path)")
    p.add_argument("--name", help="export name (default: the export's own)")
    p.add_argument("--revision", help="hub revision (commit) to evaluate (default: main)")
    p.add_argument("--tasks", help="comma-separated subset of the export's tasks (default: all)")
    p.set_defaults(func=cmd_export_tasks)

    p = _add(
        "derive",
        help="write vdg condition variants (<task>_vdg_<condition>) of an lmms-eval video task, multiple choice "
        "or graded",
    )
    p.description = (
        "write vdg condition variants (<task>_vdg_<condition>) of an lmms-eval video task: multiple choice (scored "
        "by the option's letter) or without options (graded by the base's own per-question metric where it runs "
        "offline, else by vdg's judge), on its video file or on the frames its doc_to_visual decodes. They read "
        "the base's dataset, or a local copy in $VDG_LOCAL_DATA; where the base needs an environment variable or a "
        "dataset that is not there, lmms-eval stops with vdg's message saying what and how to point vdg at a copy."
    )
    p.add_argument("task", metavar="BASE_TASK", help="an lmms-eval task, or a group or tag (each member derived)")
    p.add_argument("--out", required=True, help="folder; the tasks go to OUT/<task>/ (pass OUT to --include_path)")
    p.add_argument(
        "--conditions",
        help="comma-separated conditions or families (ladder, crf, text) (default: every one derived tasks offer)",
    )
    p.add_argument("--include_path", help="another task folder to find BASE_TASK in, as lmms-eval's own flag")
    p.add_argument("--question-id", dest="question_id", metavar="FIELD", help="doc field of the question id")
    p.add_argument(
        "--options",
        metavar="FIELD",
        help="doc field of the options: a list, a newline-separated string, FIELD{i} for numbered fields "
        "(option0, option1), FIELD{a} for lettered ones (choice_a, choice_b)",
    )
    p.add_argument("--answer", metavar="FIELD", help="doc field of the answer: a letter, a 0-based index or the text")
    p.add_argument("--video-id", dest="video_id", metavar="FIELD", help="doc field of the video id")
    p.add_argument("--task-type", dest="task_type", metavar="FIELD", help="doc field of the task type")
    p.add_argument("--question", metavar="FIELD", help="doc field of the question text")
    p.add_argument("--frame-folder-fps", type=float, default=1.0, help="rate of a source that is a folder of frames")
    p.set_defaults(func=cmd_derive)

    p = _add(
        "coverage",
        help="try vdg derive on every video task folder of the installed lmms-eval and write the table (markdown)",
    )
    p.add_argument("--out", metavar="FILE", help="write the table here (default: print it)")
    p.set_defaults(func=cmd_coverage)

    p = _add("subset", help="write a fixed question set, N per task type, to restrict runs to (VDG_QUESTION_SET)")
    p.add_argument("benchmark", metavar="BENCHMARK", help="the benchmark, as vdg names it (e.g. videomme)")
    p.add_argument(
        "--per-task-type",
        type=int,
        default=question_sets.DEFAULT_PER_TASK_TYPE,
        help=f"questions drawn per task type (the paper's {question_sets.DEFAULT_PER_TASK_TYPE})",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the draw")
    p.add_argument("--out", required=True, metavar="FILE", help="question-set file to write (JSON)")
    p.add_argument(
        "--docs",
        metavar="FILE",
        help="read the questions (question_id, task_type) from this JSON, JSON-lines, CSV or parquet file "
        "instead of the benchmark's own data",
    )
    p.set_defaults(func=cmd_subset)

    docs_help = (
        "read the questions (question_id, videoID or video_id, task_type, question, options, answer) from this "
        "JSON, JSON-lines, CSV or parquet file instead of the benchmark's own data"
    )
    derived_help = (
        "BENCHMARK is a task derived by `vdg derive BENCHMARK --out DIR`: read its questions as that folder's tasks do"
    )
    p = _add("shortcuts", help="text-only answerers, cross-validated on a benchmark's own questions: s(q) per question")
    p.add_argument("benchmark", metavar="BENCHMARK", help="the benchmark, as vdg names it (or any name, with --docs)")
    p.add_argument("--docs", metavar="FILE", help=docs_help)
    p.add_argument("--derived", metavar="DIR", help=derived_help)
    p.add_argument(
        "--out", metavar="DIR", help="folder for shortcuts.csv and shortcut_types.csv (default: shortcuts_BENCHMARK)"
    )
    p.set_defaults(func=cmd_shortcuts)

    p = _add("debias", help="iterative bias pruning to a question set, with random-pruning controls")
    p.add_argument("benchmark", metavar="BENCHMARK", help="the benchmark, as vdg names it (or any name, with --docs)")
    how_many = p.add_mutually_exclusive_group(required=True)
    how_many.add_argument("--budget", type=int, metavar="N", help="questions to remove in all, split by task type size")
    how_many.add_argument("--frac", type=float, metavar="F", help="share of each task type's questions to remove")
    p.add_argument("--rounds", type=int, default=5, help="re-fits of the text-only answerers per task type")
    p.add_argument(
        "--controls", type=int, default=10, help="random-pruning control sets of each kind (uniform, matched)"
    )
    p.add_argument("--docs", metavar="FILE", help=docs_help)
    p.add_argument("--derived", metavar="DIR", help=derived_help)
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="folder for debiased.json, uniform_NN.json, matched_NN.json, pruned.csv",
    )
    p.set_defaults(func=cmd_debias)

    p = _add("report", help="join per-question answers and write every table, report.md/.html/.json")
    input_arguments(p)
    p.add_argument("--out", required=True, help="output folder")
    option_arguments(p)
    p.add_argument("--no-plots", action="store_true", help="write no plots/*.png")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes for the analyses (default: one per CPU, at most 4, from 20,000 rows). The tables are the same "
        "for any number",
    )
    judge_argument(p)
    p.set_defaults(func=cmd_report)

    p = _add("leaderboard", help="one row per model: accuracy, VDG with CI, D:C, ladder deltas, flags")
    input_arguments(p)
    p.add_argument("--out", help="FILE.md, FILE.csv or FILE.json (this, --openvlm, or both)")
    p.add_argument(
        "--merge",
        metavar="TABLE",
        help="add vdg's columns to this table (.csv, or .json: a list of records or pandas orient='split'), "
        "one row per model; its rows, columns and order are kept",
    )
    p.add_argument("--on", metavar="COLUMN", help="--merge: the table's model-name column, matched to vdg's labels")
    p.add_argument(
        "--map",
        metavar="NAMES_CSV",
        help="--merge / --openvlm: CSV with header their_name,vdg_model for names that differ",
    )
    p.add_argument(
        "--openvlm",
        metavar="FILE.json",
        help="also write OpenVLM.json's layout ({time, results: {MODEL: {META, DATASET: {Overall, <task type>, "
        "VDG, VDG CI, VDG Black, VDG Blind, VDG tier, ...}}}}), numbers in percent (docs/sharing.md)",
    )
    p.add_argument(
        "--openvlm-merge",
        metavar="OpenVLM.json",
        help="--openvlm: add vdg's keys to this file's entries instead, keeping every key, value and order it "
        "holds; a key vdg would write that it did not write before is refused",
    )
    p.add_argument(
        "--dataset-map", metavar="CSV", help="--openvlm: CSV with header their_dataset,vdg_benchmark (Video-MME,...)"
    )
    p.add_argument("--time", help="--openvlm: the file's time (default: now, UTC, as YYMMDDhhmmss)")
    option_arguments(p)
    p.set_defaults(func=cmd_leaderboard)

    p = _add(
        "export-results",
        help="every per-question result as a datasets dataset and as Every Eval Ever records (docs/sharing.md)",
    )
    input_arguments(p)
    p.add_argument(
        "--out",
        required=True,
        help="folder: OUT/dataset (datasets.load_dataset reads it; push_to_hub publishes it) and OUT/every_eval_ever "
        "(its datastore layout, checked with every-eval-ever's own validator where installed)",
    )
    p.add_argument("--format", choices=("dataset", "eee", "both"), default="both", help="what to write")
    p.add_argument(
        "--model-id",
        action="append",
        metavar="LABEL=ORG/NAME",
        help="a model's hub id in the records (default: its run's pretrained=); repeatable",
    )
    p.add_argument("--organization", default="vdg", help="who ran the evaluation (the records' source organization)")
    option_arguments(p)
    p.set_defaults(func=cmd_export_results)

    p = _add("stats", help="quick tests from counts, printed as JSON")
    tests = p.add_subparsers(dest="test", required=True, metavar="TEST", help="one of:")
    _add_test = functools.partial(_subcommand, tests)
    t = _add_test("wilson", help="Wilson interval of K successes in N")
    t.add_argument("k", metavar="K", help="successes")
    t.add_argument("n", metavar="N", help="trials")
    t.add_argument("--level", type=float, default=0.95, help="confidence level")
    t = _add_test("mcnemar", help="McNemar from the discordant counts (continuity-corrected and exact p)")
    t.add_argument("b01", metavar="B01", help="pairs right only in the first arm")
    t.add_argument("b10", metavar="B10", help="pairs right only in the second arm")
    t = _add_test("fisher", help="Fisher exact test on ((A, B), (C, D))")
    t.add_argument("cells", nargs=4, metavar="CELL", help="the four cells A B C D of ((A, B), (C, D))")
    t = _add_test("cohen-h", help="Cohen's h between two proportions")
    t.add_argument("p1", metavar="P1", help="first proportion")
    t.add_argument("p2", metavar="P2", help="second proportion")
    t = _add_test("chi2-uniform", help="chi-square of counts against a uniform expectation")
    t.add_argument("counts", nargs="+", metavar="C", help="observed counts, one per category")
    p.set_defaults(func=cmd_stats)

    p = _developer(sub, "schema")
    p.add_argument("--check", action="store_true", help="only check the committed file is up to date")
    p.add_argument("--out", help="write here instead of docs/report-schema.md")
    p.set_defaults(func=cmd_schema)
    return parser


class _RawEpilogFormatter(_HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's lines (the developer commands) as written."""


def _unknown_command(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """The one line for a first word that is no command (with the closest commands), or None."""
    if not argv or argv[0].startswith("-"):
        return None
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    if argv[0] in commands:
        return None
    close = difflib.get_close_matches(argv[0], list(commands), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else "; `vdg --help` lists them"
    return f"vdg: no command {argv[0]!r}{hint}"


def _report_without_inputs(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """The one line for ``vdg report``/``leaderboard``/``export-results`` given neither a run folder nor a predictions
    file."""
    commands = ("report", "leaderboard", "export-results")
    if len(argv) < 1 or argv[0] not in commands or any(a in ("-h", "--help") for a in argv):
        return None
    args, _ = parser.parse_known_args([argv[0], *argv[1:], "--out", "_"])
    if args.runs or args.predictions:
        return None
    return (
        f"vdg {argv[0]}: nothing to read: give lmms-eval output folders (vdg {argv[0]} RUN_DIR ... --out DIR) or "
        "prediction files (--predictions MODEL=FILE)"
    )


def main(argv: list[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    for problem in (_unknown_command(parser, words), _report_without_inputs(parser, words)):
        if problem:
            print(problem, file=sys.stderr)
            return 2
    args = parser.parse_args(words)
    refused = conditions_refused()
    if refused:
        return refused
    return int(args.func(args) or 0)
