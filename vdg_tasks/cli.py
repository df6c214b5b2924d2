"""The ``vdg`` command: thin wrappers over the package's functions."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path

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


def _cmd_synth(args: argparse.Namespace) -> int:
    from vdg_tasks.synth import generate

    path = generate(Path(args.out), n_videos=args.videos, seed=args.seed)
    print(path)
    return 0


def _cmd_synth_episodes(args: argparse.Namespace) -> int:
    from vdg_tasks.episodes import generate_episodes
    from vdg_tasks.infinibench import prepare

    out = Path(args.out)
    annotations = generate_episodes(out, n_episodes=args.episodes, seed=args.seed)
    path, n = prepare(annotations, out / "videos", Path(args.questions), subtitles_root=out / "subtitles")
    print(path)
    print(f"{n} questions over {args.episodes} synthetic episodes", file=sys.stderr)
    return 0


def _cmd_infinibench(args: argparse.Namespace) -> int:
    from vdg_tasks.infinibench import prepare

    try:
        path, n = prepare(
            Path(args.annotations),
            Path(args.videos),
            Path(args.out),
            subtitles_root=Path(args.subtitles) if args.subtitles else None,
            roster_file=Path(args.roster) if args.roster else None,
            split=args.split,
        )
    except (ValueError, OSError) as exc:
        return _fail("infinibench", exc)
    print(path)
    print(f"{n} global-appearance questions prepared", file=sys.stderr)
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    import os
    import shlex
    import subprocess

    from vdg_tasks.sweep import sampling_sweep

    try:
        runs = sampling_sweep(
            model=args.model,
            model_args=args.model_args,
            tasks=args.tasks,
            output_path=Path(args.output_path),
            frames=args.frames,
            fps=args.fps,
            frames_arg=args.frames_arg,
            fps_arg=args.fps_arg,
            label=args.label,
            extra=args.lmms_eval_args,
            include_path=Path(args.include_path) if args.include_path else None,
        )
    except ValueError as exc:
        return _fail("sweep", exc)
    for run in runs:
        assignments = [f"{key}={shlex.quote(value)}" for key, value in run.env.items()]
        print(" ".join([*assignments, shlex.join(run.command)]), flush=True)
        if not args.dry_run:
            code = subprocess.call(run.command, env={**os.environ, **run.env})
            if code != 0:
                print(f"vdg sweep: lmms-eval exited {code} at {run.setting}", file=sys.stderr)
                return code
    report = [
        "vdg",
        "report",
        *(f"{run.label}={run.output}" for run in runs),
        "--out",
        str(Path(args.output_path) / "report"),
    ]
    print(("then: " if args.dry_run else "report with: ") + shlex.join(report), file=sys.stderr)
    return 0


def _cmd_tasks_path(args: argparse.Namespace) -> int:
    from vdg_tasks.yamlgen import YAML_ROOT

    print(YAML_ROOT)
    return 0


def _cmd_register(args: argparse.Namespace) -> int:
    from vdg_tasks.register import RegisterError, lmms_eval_tasks_dir, problems, register, unregister
    from vdg_tasks.yamlgen import YAML_ROOT

    try:
        tasks_dir = Path(args.tasks_dir) if args.tasks_dir else lmms_eval_tasks_dir()
        if args.undo:
            done = unregister(tasks_dir, force=args.force)
            if done.source is None:
                print(f"nothing registered in {tasks_dir}", file=sys.stderr)
                return 0
            print(f"removed {done.removed} entries from {done.folder}", file=sys.stderr)
            if done.foreign:
                print(f"left what vdg did not place there: {', '.join(done.foreign)}", file=sys.stderr)
            return 0
        if args.check:
            stale = problems(YAML_ROOT, tasks_dir)
            for line in stale:
                print(line, file=sys.stderr)
            if not stale:
                print(f"{tasks_dir / 'vdg'} is up to date with {YAML_ROOT}")
            return 1 if stale else 0
        done = register(YAML_ROOT, tasks_dir, force=args.force)
    except RegisterError as exc:
        return _fail("register", exc)
    print(done.folder)
    print(
        f"registered {done.tasks} tasks, copied from {done.source} ({done.added} added, {done.updated} updated, "
        f"{done.removed} removed, {done.kept} unchanged): lmms-eval finds them with no --include_path; "
        "rerun `vdg register` after upgrading vdg; undo with `vdg register --undo`",
        file=sys.stderr,
    )
    for rel in done.missing_data:
        print(f"note: {done.folder / rel} links to {done.source / rel}, not written yet", file=sys.stderr)
    if done.foreign:
        print(f"left what vdg did not place there: {', '.join(done.foreign)}", file=sys.stderr)
    return 0


def _cmd_write_yamls(args: argparse.Namespace) -> int:
    from vdg_tasks.yamlgen import YAML_ROOT, render_all, write_all

    if args.check:
        stale = [
            str(rel)
            for rel, text in render_all().items()
            if not (YAML_ROOT / rel).is_file() or (YAML_ROOT / rel).read_text() != text
        ]
        if stale:
            print("out of date: " + ", ".join(stale), file=sys.stderr)
            return 1
        print("yaml_tasks/ is up to date")
        return 0
    for path in write_all():
        print(path)
    return 0


def _cmd_materialize(args: argparse.Namespace) -> int:
    from vdg_tasks.cache import CacheUnwritable
    from vdg_tasks.materialize import (
        TaskError,
        parse_shard,
        plan,
        run_jobs,
        shard_jobs,
        shard_outcomes,
        summarize,
        write_manifest,
    )

    tasks = args.tasks.split(",")
    try:
        shard = parse_shard(args.shard) if args.shard else None
        jobs, unavailable = plan(tasks)
        if shard is not None:
            jobs, unavailable = shard_jobs(jobs, *shard), shard_outcomes(unavailable, *shard)
        outcomes = run_jobs(jobs, workers=args.workers, progress=not args.quiet)
    except TaskError as exc:  # its own lines: a missing dataset's message ends with the expected layout
        print(f"vdg materialize: {exc}", file=sys.stderr)
        return 2
    except (ValueError, CacheUnwritable) as exc:
        return _fail("materialize", exc)
    except KeyboardInterrupt:
        print("vdg materialize: interrupted; finished videos stay cached, rerun to continue", file=sys.stderr)
        return 130
    summary = summarize(outcomes, unavailable)
    print(summary.line() + (f" (shard {shard[0]}/{shard[1]})" if shard else ""))
    for line in summary.failure_lines():
        print(line, file=sys.stderr)
    if args.manifest:
        try:
            path = write_manifest(args.manifest, outcomes, unavailable, shard, tasks)
        except OSError as exc:
            return _fail("materialize", OSError(f"the manifest {args.manifest} cannot be written: {exc}"))
        print(f"manifest written to {path}", file=sys.stderr)
    if summary.failed:  # a Slurm `afterok` dependency must not start the evaluation on a partial cache
        print(
            f"vdg materialize: {len(summary.failed)} failed (listed above); fix them and rerun "
            "(finished videos stay cached)",
            file=sys.stderr,
        )
        return 1
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from vdg_tasks.cache import CacheUnwritable
    from vdg_tasks.export import export, push_to_hub

    try:
        result = export(
            args.tasks.split(","), Path(args.out), name=args.name, workers=args.workers, progress=not args.quiet
        )
    except (ValueError, CacheUnwritable) as exc:  # ExportError and TaskError are ValueErrors
        return _fail("export", exc)
    print(result.out)
    print(
        f"export {result.name} revision {result.revision}: {result.n_rows} rows, {result.n_errors} with errors; "
        f"evaluate with lmms-eval --include_path {result.tasks_dir}",
        file=sys.stderr,
    )
    if args.push_to_hub:
        try:
            commit = push_to_hub(result.out, args.push_to_hub, private=args.private)
        except Exception as exc:  # the network, credentials: the export itself stays on disk
            return _fail("export", RuntimeError(f"pushing {result.out} to {args.push_to_hub} failed: {exc}"))
        print(f"pushed to https://huggingface.co/datasets/{args.push_to_hub} (commit {commit})", file=sys.stderr)
    return 0


def _cmd_export_tasks(args: argparse.Namespace) -> int:
    from vdg_tasks.export import write_export_tasks

    try:
        written = write_export_tasks(
            args.export,
            Path(args.out),
            name=args.name,
            revision=args.revision,
            tasks=args.tasks.split(",") if args.tasks else None,
        )
    except (ValueError, OSError) as exc:
        return _fail("export-tasks", exc)
    print(Path(args.out))
    print(f"{len(written)} files; evaluate with lmms-eval --include_path {Path(args.out)}", file=sys.stderr)
    return 0


def _cmd_derive(args: argparse.Namespace) -> int:
    from vdg_tasks.derive import DeriveError, derive

    fields = ("question_id", "options", "answer", "video_id", "task_type", "question")
    try:
        written = derive(
            args.task,
            Path(args.out),
            conditions=args.conditions.split(",") if args.conditions else None,
            include_path=args.include_path,
            frame_folder_fps=args.frame_folder_fps,
            **{field: getattr(args, field) for field in fields},
        )
    except DeriveError as exc:
        return _fail("derive", exc)
    folders = list(dict.fromkeys(p.parent for p in written))
    for folder in folders:
        print(folder)
    n_tasks = sum(1 for p in written if p.suffix == ".yaml")
    print(
        f"{n_tasks} tasks derived from {args.task}; evaluate with lmms-eval --include_path {Path(args.out)} "
        f"--tasks {args.task}_vdg",
        file=sys.stderr,
    )
    return 0


def _cmd_subset(args: argparse.Namespace) -> int:
    from vdg_tasks import question_sets
    from vdg_tasks.materialize import load_docs

    try:
        docs = question_sets.read_docs(args.docs) if args.docs else load_docs(args.benchmark)
        chosen = question_sets.stratified_subset(docs, args.per_task_type, args.seed, args.benchmark)
        path = question_sets.write(chosen, Path(args.out))
    except (ValueError, OSError) as exc:
        return _fail("subset", exc)
    print(path)
    for task_type, n in chosen.counts:
        print(f"{n:6d}  {task_type}", file=sys.stderr)
    for task_type, n in chosen.short_task_types:
        print(
            f"vdg subset: warning: task type {task_type!r} has only {n} questions (fewer than {chosen.per_task_type}); "
            "all of them are in the set",
            file=sys.stderr,
        )
    print(
        f"{len(chosen)} questions of {chosen.benchmark}, digest {chosen.digest}; "
        f"restrict runs to them with VDG_QUESTION_SET={path}",
        file=sys.stderr,
    )
    return 0


def _fail(command: str, exc: BaseException) -> int:
    message = " ".join(str(exc).split()) or type(exc).__name__
    print(f"vdg {command}: {message}", file=sys.stderr)
    return 2


def _predictions(specs: list[str] | None) -> list[tuple[str, str]]:
    out = []
    for spec in specs or []:
        model, sep, path = spec.partition("=")
        if not sep or not model or not path:
            raise ValueError(f"--predictions expects MODEL=FILE, got {spec!r}")
        out.append((model, path))
    return out


def _read_mapping(path: str, option: str) -> dict[str, str]:
    """A task_type -> value map from a JSON object or a two-column CSV (header optional)."""
    import csv
    import json

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


def _options(args: argparse.Namespace):
    from postprocess.options import Options

    extra = {}
    if getattr(args, "tier_map", None):
        extra["tier_map"] = _read_mapping(args.tier_map, "--tier-map")
    if getattr(args, "temporal_map", None):
        extra["temporal_map"] = _read_mapping(args.temporal_map, "--temporal-map")
    return Options(
        missing=args.missing,
        n_resamples=args.resamples,
        ci_level=args.ci_level,
        cluster=args.cluster,
        alpha=args.alpha,
        equivalence_margin=args.equivalence_margin,
        stability_resamples=args.stability_resamples,
        tier_high=args.tier_high,
        tier_low=args.tier_low,
        group_by=args.group_by,
        seed=args.seed,
        task_types=tuple(t.strip() for t in (getattr(args, "task_types", None) or "").split(",") if t.strip()),
        min_stratum=getattr(args, "min_stratum", 30),
        question_set=getattr(args, "question_set", "shared"),
        ci_method=getattr(args, "ci_method", "exact"),
        mc_se_target=getattr(args, "mc_se_target", 0.002),
        align=getattr(args, "align", "strict"),
        by=tuple(getattr(args, "by", None) or ()),
        **extra,
    )


def _load(args: argparse.Namespace):
    """The tidy frame of the inputs, its open-ended answers judged when ``--judge`` names a judge.

    Raises:
        ValueError: unreadable inputs, or ``--judge api`` with no endpoint configured.
        postprocess.judge.JudgeError: an answer could not be judged.
    """
    from postprocess.io import load_frame

    frame = load_frame(
        runs=args.runs,
        predictions=_predictions(args.predictions),
        benchmark=args.benchmark,
        on_duplicate=args.on_duplicate,
        mixed_exports=args.mixed_exports,
        align=getattr(args, "align", "strict"),
        options_file=getattr(args, "options_file", None),
    )
    if getattr(args, "judge", None):
        from postprocess.judge import judge_frame, make_judge

        frame = judge_frame(frame, make_judge(args.judge))
    return frame


def _inputs(args: argparse.Namespace) -> dict[str, object]:
    return {
        "runs": list(args.runs),
        "predictions": [list(p) for p in _predictions(args.predictions)],
        "benchmark": args.benchmark,
        "on_duplicate": args.on_duplicate,
        "options_file": getattr(args, "options_file", None),
    }


def _judge_errors() -> tuple[type[Exception], ...]:
    """JudgeError once the judge is loaded (only --judge loads it, and only it raises one); not imported otherwise."""
    judge = sys.modules.get("postprocess.judge")
    return (judge.JudgeError,) if judge is not None else ()


def _cmd_report(args: argparse.Namespace) -> int:
    from postprocess.pipeline import make_report

    if args.workers is not None and args.workers < 1:
        return _fail("report", ValueError(f"--workers {args.workers}: give at least 1"))
    try:
        written = make_report(
            lambda: _load(args),
            args.out,
            options=_options(args),
            inputs=_inputs(args),
            plots=not args.no_plots,
            workers=args.workers,
        )
    except (ValueError, *_judge_errors()) as exc:  # postprocess.io.LogError is a ValueError
        return _fail("report", exc)
    print(written)
    print(f"report written to {written.path}", file=sys.stderr)  # stdout is report.md itself
    return 0


def _merge_leaderboard(args: argparse.Namespace, theirs, table, names):
    """merge_leaderboard, its refusal naming the file at fault."""
    from postprocess.leaderboard import MergeError, merge_leaderboard

    try:
        return merge_leaderboard(theirs, table, args.on, names)
    except MergeError as exc:
        if exc.source == "ours":
            raise
        where = f"--map {args.map}" if exc.source == "names" and args.map else f"--merge {args.merge}"
        raise ValueError(f"{where}: {exc}") from None


def _cmd_leaderboard(args: argparse.Namespace) -> int:
    from postprocess import leaderboard as lb
    from postprocess.report import compute_tables

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
        tables = compute_tables(_load(args), options, names=lb.SOURCE_TABLES)
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
        return _fail("leaderboard", exc)
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


def _cmd_stats(args: argparse.Namespace) -> int:
    import json

    from postprocess import stats
    from postprocess.stats import json_ready as json_value

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
        return _fail(f"stats {args.test}", exc)
    print(json.dumps(json_value(result), indent=1))
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from postprocess.schema import SCHEMA_PATH, schema_is_current, write_schema

    path = Path(args.out) if args.out else SCHEMA_PATH
    if args.check:
        if not schema_is_current(path):
            print(f"out of date: {path} (run `vdg schema`)", file=sys.stderr)
            return 1
        print(f"{path} is up to date")
        return 0
    print(write_schema(path))
    return 0


def _input_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="*", metavar="RUN_DIR", help="lmms-eval --output_path folders; NAME=DIR labels one")
    p.add_argument(
        "--predictions",
        action="append",
        metavar="MODEL=FILE",
        help="a predictions file (JSON array, JSONL or CSV) of MODEL; repeatable",
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


def _option_arguments(p: argparse.ArgumentParser) -> None:
    from postprocess.options import Options

    d = Options()
    p.add_argument(
        "--missing",
        choices=["exclude", "incorrect"],
        default=d.missing,
        help="exclude: a question with an error in a compared condition leaves both arms; "
        "incorrect: errors are scored wrong",
    )
    p.add_argument("--resamples", type=int, default=d.n_resamples, help="bootstrap resamples per CI")
    p.add_argument("--ci-level", type=float, default=d.ci_level, help="confidence level of every CI")
    p.add_argument("--cluster", action="store_true", help="resample whole videos in the bootstraps")
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
        choices=["shared", "per-model"],
        default=d.question_set,
        help="shared: the rows a table compares (models, conditions) share one question set per benchmark, the "
        "questions no compared model has an error for; per-model: each model on its own answered questions (the "
        "published paper's convention)",
    )
    p.add_argument(
        "--ci-method",
        choices=["exact", "resample"],
        default=d.ci_method,
        help="exact: bootstrap CIs whose distribution follows in closed form from the data are computed exactly; "
        "resample: every CI by Monte Carlo resampling (the published paper's convention)",
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


def _judge_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--judge",
        choices=["offline", "api"],
        help="score open-ended answers: api = the OpenAI-compatible endpoint in VDG_JUDGE_BASE_URL, VDG_JUDGE_MODEL "
        "(key: VDG_JUDGE_API_KEY); offline = deterministic token overlap, labelled as such (default: not judged)",
    )


def _subcommand(sub, name: str, help: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=help, formatter_class=_HelpFormatter)


def build_parser() -> argparse.ArgumentParser:
    # vdg_tasks.materialize.default_workers and vdg_tasks.yamlgen.YAML_ROOT, without importing those modules
    # (with vdg_tasks.benchmarks and .hooks: ~0.3 s every command would pay); tests/test_cli_imports.py checks.
    def default_workers() -> int:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):
            return max(1, os.cpu_count() or 1)

    parser = argparse.ArgumentParser(prog="vdg", description=SUMMARY, formatter_class=_HelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")
    _add = functools.partial(_subcommand, sub)

    p = _add("synth", help="generate the synthetic benchmark vdgsynth")
    YAML_ROOT = Path(__file__).resolve().parent.parent / "yaml_tasks"  # noqa: N806 (vdg_tasks.yamlgen's)

    p.add_argument(
        "--out",
        default=str(YAML_ROOT / "vdgsynth" / "data"),
        help="folder (default: where the vdgsynth_vdg_* tasks read it)",
    )
    p.add_argument(
        "--videos", type=int, default=30, help="number of synthetic videos (8 questions each; synth.N_VIDEOS)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the generated benchmark")
    p.set_defaults(func=_cmd_synth)

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
    p.set_defaults(func=_cmd_synth_episodes)

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
    p.set_defaults(func=_cmd_infinibench)

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
    p.set_defaults(func=_cmd_sweep)

    p = _add("tasks-path", help="print the folder to pass to lmms-eval --include_path")
    p.set_defaults(func=_cmd_tasks_path)

    p = _add("register", help="copy vdg's tasks into lmms-eval's own task folder: no --include_path needed")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--undo", action="store_true", help="remove exactly what `vdg register` placed")
    mode.add_argument("--check", action="store_true", help="only check the registration is there and up to date")
    p.add_argument("--force", action="store_true", help="replace (or with --undo remove) copies edited since")
    p.add_argument("--tasks-dir", help="lmms-eval's task folder (default: <lmms_eval>/tasks of this environment)")
    p.set_defaults(func=_cmd_register)

    p = _add("write-yamls", help="regenerate yaml_tasks/ from the condition declarations")
    p.add_argument("--check", action="store_true", help="only check the committed files are up to date")
    p.set_defaults(func=_cmd_write_yamls)

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
    p.set_defaults(func=_cmd_materialize)

    p = _add("export", help="write tasks' questions with their perturbed videos as a datasets dataset (hub-ready)")
    p.add_argument("--tasks", required=True, help="comma-separated task names or tags, e.g. videomme_vdg_crf")
    p.add_argument("--out", required=True, help="the export folder (replaced whole when it is this export)")
    p.add_argument("--name", help="export name (default: the folder's name)")
    p.add_argument("--workers", type=int, default=default_workers(), help="parallel encoding processes")
    p.add_argument("--push-to-hub", metavar="REPO", help="then upload it as the Hugging Face dataset REPO")
    p.add_argument("--private", action="store_true", help="with --push-to-hub: create the repo private")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_export)

    p = _add("export-tasks", help="write the lmms-eval tasks that evaluate an export folder or hub dataset")
    p.add_argument("export", help="an export folder, or a Hugging Face dataset repo id")
    p.add_argument("--out", required=True, help="task folder to write (pass it to lmms-eval --include_path)")
    p.add_argument("--name", help="export name (default: the export's own)")
    p.add_argument("--revision", help="hub revision (commit) to evaluate (default: main)")
    p.add_argument("--tasks", help="comma-separated subset of the export's tasks (default: all)")
    p.set_defaults(func=_cmd_export_tasks)

    p = _add(
        "derive",
        help="write vdg condition variants (<task>_vdg_<condition>) of an lmms-eval video multiple-choice task",
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
        help="doc field of the options: a list, a newline-separated string, or FIELD{i} for numbered fields",
    )
    p.add_argument("--answer", metavar="FIELD", help="doc field of the answer: a letter, a 0-based index or the text")
    p.add_argument("--video-id", dest="video_id", metavar="FIELD", help="doc field of the video id")
    p.add_argument("--task-type", dest="task_type", metavar="FIELD", help="doc field of the task type")
    p.add_argument("--question", metavar="FIELD", help="doc field of the question text")
    p.add_argument("--frame-folder-fps", type=float, default=1.0, help="rate of a source that is a folder of frames")
    p.set_defaults(func=_cmd_derive)

    p = _add("subset", help="write a fixed question set, N per task type, to restrict runs to (VDG_QUESTION_SET)")
    p.add_argument("benchmark", metavar="BENCHMARK", help="the benchmark, as vdg names it (e.g. videomme)")
    p.add_argument("--per-task-type", type=int, default=100, help="questions drawn per task type (the paper's 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the draw")
    p.add_argument("--out", required=True, metavar="FILE", help="question-set file to write (JSON)")
    p.add_argument(
        "--docs",
        metavar="FILE",
        help="read the questions (question_id, task_type) from this JSON, JSON-lines, CSV or parquet file "
        "instead of the benchmark's own data",
    )
    p.set_defaults(func=_cmd_subset)

    p = _add("report", help="join per-question answers and write every table, report.md/.html/.json")
    _input_arguments(p)
    p.add_argument("--out", required=True, help="output folder")
    _option_arguments(p)
    p.add_argument("--no-plots", action="store_true", help="write no plots/*.png")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes for the analyses (default: one per CPU, at most 4, from 20,000 rows); 1 also draws the "
        "plots in the report's own process. The tables are the same for any number",
    )
    _judge_argument(p)
    p.set_defaults(func=_cmd_report)

    p = _add("leaderboard", help="one row per model: accuracy, VDG with CI, D:C, ladder deltas, flags")
    _input_arguments(p)
    p.add_argument("--out", required=True, help="FILE.md, FILE.csv or FILE.json")
    p.add_argument(
        "--merge",
        metavar="TABLE",
        help="add vdg's columns to this table (.csv, or .json: a list of records or pandas orient='split'), "
        "one row per model; its rows, columns and order are kept",
    )
    p.add_argument("--on", metavar="COLUMN", help="--merge: the table's model-name column, matched to vdg's labels")
    p.add_argument(
        "--map", metavar="NAMES_CSV", help="--merge: CSV with header their_name,vdg_model for names that differ"
    )
    _option_arguments(p)
    p.set_defaults(func=_cmd_leaderboard)

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
    p.set_defaults(func=_cmd_stats)

    p = _add("schema", help="regenerate docs/report-schema.md from the declared columns")
    p.add_argument("--check", action="store_true", help="only check the committed file is up to date")
    p.add_argument("--out", help="write here instead of docs/report-schema.md")
    p.set_defaults(func=_cmd_schema)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
