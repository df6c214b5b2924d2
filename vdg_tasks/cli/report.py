"""The report side's commands: ``vdg report``, ``leaderboard``, ``stats``, ``schema``, and their arguments."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from postprocess import leaderboard as lb
from postprocess import stats
from postprocess.judge import JudgeError
from postprocess.leaderboard import MergeError, merge_leaderboard
from postprocess.pipeline import make_report
from postprocess.reading.inputs import ReportInputs, load_inputs
from postprocess.rendering.glance import terminal_lines
from postprocess.rendering.schema import SCHEMA_PATH, schema_is_current, write_schema
from postprocess.report import compute_tables
from postprocess.settings import ReportSettings
from postprocess.stats import json_ready as json_value
from vdg_tasks.cli.common import fail

#: Suffixes of a file --predictions takes alone, its label and condition read from its name and folders
#: (VLMEvalKit's ``{model}_{dataset}.xlsx``: ``postprocess.reading.vlmevalkit``).
_NAMED_BY_RULE = (".xlsx", ".tsv")


def _predictions(specs: list[str] | None) -> list[tuple[str, str]]:
    """(MODEL or LABEL:CONDITION, FILE) of each --predictions; a VLMEvalKit .xlsx / .tsv file may come alone."""
    out = []
    for spec in specs or []:
        model, sep, path = spec.partition("=")
        if not sep and Path(spec).suffix.lower() in _NAMED_BY_RULE:
            model, path = "", spec
        elif not sep or not model or not path:
            raise ValueError(
                f"--predictions expects MODEL=FILE (a VLMEvalKit file: LABEL:CONDITION=FILE, or FILE), got {spec!r}"
            )
        out.append((model, path))
    return out


def _read_mapping(path: str, option: str) -> dict[str, str]:
    """A task_type -> value map from a JSON object or a two-column CSV (header optional)."""
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"{option} {path}: no such file")
    text = file.read_text()
    if file.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{option} {path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise ValueError(f"{option} {path}: expected a JSON object of task type -> string")
        return {str(k): v for k, v in data.items()}
    rows = [r for r in csv.reader(text.splitlines()) if any(cell.strip() for cell in r)]
    if rows and [c.strip().lower() for c in rows[0][:1]] == ["task_type"]:
        rows = rows[1:]
    out = {}
    for lineno, row in enumerate(rows, 1):
        if len(row) != 2:
            raise ValueError(f"{option} {path}: row {lineno} has {len(row)} cells, expected task_type,value")
        out[row[0].strip()] = row[1].strip()
    return out


#: The values of --question-set that choose the rule rather than name a set to compare.
QUESTION_SET_POLICIES = ("shared", "per-model")


def _question_set_policy(values: list[str] | str | None) -> str:
    """The last of --question-set's values that is a rule (shared, per-model); per-model when none is."""
    values = [values] if isinstance(values, str) else list(values or [])
    rules = [v for v in values if v in QUESTION_SET_POLICIES]
    return rules[-1] if rules else "per-model"


def _options(args: argparse.Namespace):
    extra = {}
    if getattr(args, "tier_map", None):
        extra["tier_map"] = _read_mapping(args.tier_map, "--tier-map")
    if getattr(args, "temporal_map", None):
        extra["temporal_map"] = _read_mapping(args.temporal_map, "--temporal-map")
    return ReportSettings(
        missing=args.missing,
        n_resamples=args.resamples,
        ci_level=args.ci_level,
        cluster=getattr(args, "cluster", "auto"),
        alpha=args.alpha,
        equivalence_margin=args.equivalence_margin,
        stability_resamples=args.stability_resamples,
        tier_high=args.tier_high,
        tier_low=args.tier_low,
        group_by=args.group_by,
        seed=args.seed,
        task_types=tuple(t.strip() for t in (getattr(args, "task_types", None) or "").split(",") if t.strip()),
        min_stratum=getattr(args, "min_stratum", 30),
        question_set=_question_set_policy(getattr(args, "question_set", None)),
        ci_method=getattr(args, "ci_method", "score"),
        mc_se_target=getattr(args, "mc_se_target", 0.002),
        align=getattr(args, "align", "strict"),
        by=tuple(getattr(args, "by", None) or ()),
        **extra,
    )


def _inputs(args: argparse.Namespace) -> ReportInputs:
    """The report's inputs named on the command line (--question-set's rules go to the settings, not here)."""
    return ReportInputs(
        runs=tuple(args.runs or ()),
        predictions=tuple(_predictions(args.predictions)),
        benchmark=args.benchmark,
        on_duplicate=args.on_duplicate,
        mixed_exports=args.mixed_exports,
        options_file=getattr(args, "options_file", None),
        question_sets=tuple(v for v in getattr(args, "question_set", None) or () if v not in QUESTION_SET_POLICIES),
        shortcuts=tuple(getattr(args, "shortcuts", None) or ()),
        judge=getattr(args, "judge", None),
        include_path=getattr(args, "include_path", None),
        derived=tuple(getattr(args, "derived", None) or ()),
    )


def cmd_report(args: argparse.Namespace) -> int:
    if args.workers is not None and args.workers < 1:
        return fail("report", ValueError(f"--workers {args.workers}: give at least 1"))
    try:
        options, inputs = _options(args), _inputs(args)
        written = make_report(
            lambda: load_inputs(inputs, options),
            args.out,
            options=options,
            inputs=inputs.described(),
            plots=not args.no_plots,
            workers=args.workers,
            progress=True,
        )
    except (ValueError, JudgeError) as exc:  # postprocess.reading.lmms_eval_logs.LogError is a ValueError
        return fail("report", exc)
    print("\n".join(terminal_lines(written)))
    print(f"report written to {written.path}", file=sys.stderr)  # report.md, report.html, report.json, the CSVs
    return 0


def _merge_leaderboard(args: argparse.Namespace, theirs, table, names):
    """merge_leaderboard, its refusal naming the file at fault."""
    try:
        return merge_leaderboard(theirs, table, args.on, names)
    except MergeError as exc:
        if exc.source == "ours":
            raise
        where = f"--map {args.map}" if exc.source == "names" and args.map else f"--merge {args.merge}"
        raise ValueError(f"{where}: {exc}") from None


def cmd_leaderboard(args: argparse.Namespace) -> int:
    merge = getattr(args, "merge", None)
    try:
        if Path(args.out).suffix.lower() not in (".md", ".csv", ".json"):
            raise ValueError(f"--out {args.out}: the leaderboard is written as .md, .csv or .json")
        if merge is None and (args.on or args.map):
            raise ValueError("--on and --map go with --merge")
        if merge is not None and not args.on:
            raise ValueError(f"--merge {merge}: name its model-name column with --on COLUMN")
        theirs = names = None
        if merge is not None:  # read and check their files before the analyses
            theirs = lb.read_their_table(Path(merge))
            names = lb.read_name_map(Path(args.map)) if args.map else None
            _merge_leaderboard(args, theirs, lb.leaderboard_table({}), names)
        options = _options(args)
        tables = compute_tables(load_inputs(_inputs(args), options), options, names=lb.SOURCE_TABLES)
        table = lb.leaderboard_table(tables)
        if theirs is None:
            path = lb.write_leaderboard(table, Path(args.out))
        else:
            merged, unmatched_theirs, unmatched_ours = _merge_leaderboard(args, theirs, table, names)
            path = lb.write_merged_leaderboard(merged, Path(args.out), unmatched_theirs, unmatched_ours, on=args.on)
            if unmatched_theirs:
                print(f"vdg leaderboard: no vdg data for {len(unmatched_theirs)} row(s) of {merge} (vdg columns "
                      f"left empty): {', '.join(unmatched_theirs)}", file=sys.stderr)  # fmt: skip
            if unmatched_ours:
                print(f"vdg leaderboard: {len(unmatched_ours)} vdg model(s) not in {merge} (not added): "
                      f"{', '.join(unmatched_ours)}", file=sys.stderr)  # fmt: skip
    except ValueError as exc:
        return fail("leaderboard", exc)
    print(path)
    return 0


def _stat_int(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {text!r}") from None


def _stat_float(text: str, name: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {text!r}") from None


def cmd_stats(args: argparse.Namespace) -> int:
    try:
        if args.test == "wilson":
            result = stats.wilson(_stat_int(args.k, "K"), _stat_int(args.n, "N"), level=args.level).as_dict()
        elif args.test == "mcnemar":
            result = stats.mcnemar(_stat_int(args.b01, "B01"), _stat_int(args.b10, "B10")).as_dict()
        elif args.test == "fisher":
            cells = [_stat_int(v, name) for v, name in zip(args.cells, "ABCD", strict=True)]
            result = stats.fisher(*cells).as_dict()
        elif args.test == "cohen-h":
            p1, p2 = _stat_float(args.p1, "P1"), _stat_float(args.p2, "P2")
            result = {"p1": p1, "p2": p2, "h": stats.cohen_h(p1, p2)}
        else:
            result = stats.chi2_uniform([_stat_int(v, f"C{i}") for i, v in enumerate(args.counts, 1)]).as_dict()
    except ValueError as exc:
        return fail(f"stats {args.test}", exc)
    print(json.dumps(json_value(result), indent=1))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    path = Path(args.out) if args.out else SCHEMA_PATH
    if args.check:
        if not schema_is_current(path):
            print(f"out of date: {path} (run `vdg schema`)", file=sys.stderr)
            return 1
        print(f"{path} is up to date")
        return 0
    print(write_schema(path))
    return 0


def input_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="*", metavar="RUN_DIR", help="lmms-eval --output_path folders; NAME=DIR labels one")
    p.add_argument(
        "--predictions",
        action="append",
        metavar="MODEL=FILE",
        help="a predictions file (JSON array, JSONL or CSV) of MODEL; or a VLMEvalKit prediction or _score file "
        "(.xlsx, .tsv, .json) of one condition as LABEL:CONDITION=FILE, or FILE alone (label from its name "
        "{model}_{dataset}.xlsx, condition from the nearest folder named after one); repeatable",
    )
    p.add_argument("--benchmark", help="benchmark of the --predictions files whose records do not name one")
    p.add_argument(
        "--on-duplicate",
        choices=["error", "last"],
        default="error",
        help="a question logged twice for one model and condition: fail (default) or keep the last",
    )
    p.add_argument(
        "--mixed-exports",
        action="store_true",
        help="join runs evaluated from different exports (or revisions) of one benchmark (refused by default)",
    )
    p.add_argument(
        "--options-file",
        metavar="CSV",
        help="each question's number of options, overriding the records, the benchmark's declared count and the "
        "count inferred per task type: a CSV with columns benchmark, question_id or task_type (a row fills one), "
        "n_options (2-8); a bad row is an error naming its line",
    )
    p.add_argument(
        "--include_path",
        metavar="DIR",
        help="the task folder a plain base-task run was made with (lmms-eval's own flag): its docs are loaded from "
        "there to read the run as orig",
    )
    p.add_argument(
        "--derived",
        action="append",
        metavar="DIR",
        help="a vdg derive output folder: a plain run of one of its base tasks is read as that task's orig; repeatable",
    )


def option_arguments(p: argparse.ArgumentParser) -> None:
    d = ReportSettings()
    p.add_argument(
        "--missing",
        choices=["exclude", "incorrect"],
        default=d.missing,
        help="exclude: a question with an error in a compared condition leaves both arms; "
        "incorrect: errors are scored wrong",
    )
    p.add_argument("--resamples", type=int, default=d.n_resamples, help="bootstrap resamples per CI")
    p.add_argument("--ci-level", type=float, default=d.ci_level, help="confidence level of every CI")
    p.add_argument(
        "--cluster",
        nargs="?",
        const="video",
        choices=["auto", "video", "question"],
        default=d.cluster,
        help="the CIs' independent unit: auto (default): the video where a video has more than one compared "
        "question, else the question; video (also plain --cluster); question",
    )
    p.add_argument("--seed", type=int, default=d.seed, help="mixed into every seed (default: stable ids only)")
    p.add_argument("--alpha", type=float, default=d.alpha, help="significance level (Holm-adjusted tests, TOST)")
    p.add_argument("--equivalence-margin", type=float, default=d.equivalence_margin, help="TOST margin")
    p.add_argument(
        "--stability-resamples",
        type=int,
        default=d.stability_resamples,
        help="resamples for the dissociation stability shares",
    )
    p.add_argument("--tier-high", type=float, default=d.tier_high, help="VDG above this is a high tier")
    p.add_argument("--tier-low", type=float, default=d.tier_low, help="VDG below this is a low tier (review)")
    p.add_argument("--tier-map", metavar="FILE", help="JSON object or CSV: task_type -> predicted tier")
    p.add_argument("--temporal-map", metavar="FILE", help="JSON object or CSV: task_type -> single-frame/temporal")
    p.add_argument("--group-by", default=d.group_by, metavar="COL", help="column grouping questions (collective)")
    p.add_argument(
        "--task-types",
        metavar="A,B",
        help="restrict every table to these task types (comma-separated; default: all)",
    )
    p.add_argument(
        "--min-stratum",
        "--min-n",
        dest="min_stratum",
        type=int,
        default=d.min_stratum,
        metavar="N",
        help="fewest questions a task type needs for CIs, tests and tiers; smaller ones stay in the descriptive "
        "tables, marked too small (listed in the selection table)",
    )
    p.add_argument(
        "--question-set",
        action="append",
        metavar="RULE|NAME=FILE",
        help="per-model (default): each model's tables on the questions it answered under the compared conditions "
        "(a model pair's on those both answered), so adding a model moves no other model's numbers; shared: a "
        "benchmark's rows on the questions no compared model has an error for (a fixed comparison set). "
        "NAME=FILE (repeatable; a vdg subset or vdg debias file): also compare accuracy and VDG on that set beside "
        "every question (table question_set_comparison)",
    )
    p.add_argument(
        "--shortcuts",
        action="append",
        metavar="CSV",
        help="shortcuts.csv of vdg shortcuts (repeatable, one per benchmark): relate each question's text-only "
        "score s(q) to the models' answers (tables shortcut_links, vdg_by_shortcut)",
    )
    p.add_argument(
        "--ci-method",
        choices=["score", "exact", "resample"],
        default=d.ci_method,
        help="score (default): Tango's score interval for paired differences of 0/1 outcomes, the exact bootstrap "
        "for other means; exact: percentile bootstrap CIs, computed in closed form where they can be; resample: "
        "every CI by Monte Carlo resampling (the published paper's convention)",
    )
    p.add_argument(
        "--mc-se-target",
        type=float,
        default=d.mc_se_target,
        metavar="SE",
        help="resampled CIs draw more resamples until each endpoint's Monte Carlo standard error is below SE "
        "(0: exactly --resamples)",
    )
    p.add_argument(
        "--align",
        choices=["strict", "intersect"],
        default=d.align,
        help="strict: refuse conditions of a model holding different questions; intersect: compare them on the "
        "questions present in all of them (drops listed in the selection table)",
    )
    p.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="FIELD",
        help="also stratify VDG, accuracy and the ladder by this question field (repeatable: --by duration "
        "--by domain): tables vdg_by_FIELD, accuracy_by_FIELD, ladder_by_FIELD",
    )


def judge_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--judge",
        choices=["offline", "api"],
        help="score open-ended answers: api = the OpenAI-compatible endpoint in VDG_JUDGE_BASE_URL, VDG_JUDGE_MODEL "
        "(key: VDG_JUDGE_API_KEY); offline = deterministic token overlap, labelled as such (default: not judged)",
    )
