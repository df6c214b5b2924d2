"""The task side's commands: synthetic data, InfiniBench, sweeps, registering and writing the tasks,
materializing, exporting, deriving, question sets."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

from vdg_tasks.cli.common import fail
from vdg_tasks.data import infinibench, question_sets
from vdg_tasks.synthetic import episodes, synth
from vdg_tasks.vocabulary.conditions import SHIPPED_MODULES, registry
from vdg_tasks.vocabulary.paths import CacheUnwritable
from vdg_tasks.vocabulary.untrusted import redact


def cmd_synth(args: argparse.Namespace) -> int:
    path = synth.generate(Path(args.out), n_videos=args.videos, seed=args.seed, progress=True)
    print(path)
    return 0


def cmd_synth_episodes(args: argparse.Namespace) -> int:
    out = Path(args.out)
    annotations = episodes.generate_episodes(out, n_episodes=args.episodes, seed=args.seed, progress=True)
    path, n = infinibench.prepare(annotations, out / "videos", Path(args.questions), subtitles_root=out / "subtitles")
    print(path)
    print(f"{n} questions over {args.episodes} synthetic episodes", file=sys.stderr)
    return 0


def cmd_infinibench(args: argparse.Namespace) -> int:
    try:
        path, n = infinibench.prepare(
            Path(args.annotations),
            Path(args.videos),
            Path(args.out),
            subtitles_root=Path(args.subtitles) if args.subtitles else None,
            roster_file=Path(args.roster) if args.roster else None,
            split=args.split,
        )
    except (ValueError, OSError) as exc:
        return fail("infinibench", exc)
    print(path)
    print(f"{n} global-appearance questions prepared", file=sys.stderr)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    # the model side's modules only for this command (tests/vdg_tasks/cli/test_cli_imports.py: vdg --help and the
    # report side load none of them)
    from vdg_tasks.jobs.sweep import sampling_sweep

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
        return fail("sweep", exc)
    for run in runs:
        assignments = [f"{key}={shlex.quote(value)}" for key, value in run.env.items()]
        print(redact(" ".join([*assignments, shlex.join(run.command)])), flush=True)  # the run gets the real key
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


def cmd_tasks_path(args: argparse.Namespace) -> int:
    # the model side's modules only for this command (tests/vdg_tasks/cli/test_cli_imports.py: vdg --help and the
    # report side load none of them)
    from vdg_tasks.lmms.yamlgen import YAML_ROOT

    print(YAML_ROOT)
    return 0


def cmd_register(args: argparse.Namespace) -> int:
    # the model side's modules only for this command (tests/vdg_tasks/cli/test_cli_imports.py: vdg --help and the
    # report side load none of them)
    from vdg_tasks.lmms.register import RegisterError, lmms_eval_tasks_dir, problems, register, unregister
    from vdg_tasks.lmms.yamlgen import YAML_ROOT

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
        return fail("register", exc)
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


def conditions_refused() -> int:
    """2, after saying why on stderr, when a module of conditions failed or declared a name already taken; else 0."""
    problems = registry().problems
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        print("vdg refuses to run until every declared condition can join (vdg_tasks.extend)", file=sys.stderr)
    return 2 if problems else 0


def cmd_write_yamls(args: argparse.Namespace) -> int:
    # the model side's modules only for this command (tests/vdg_tasks/cli/test_cli_imports.py: vdg --help and the
    # report side load none of them)
    from vdg_tasks.lmms.yamlgen import INFINIBENCH_DATA, SYNTH_DATA, YAML_ROOT, render_all, write_all

    yours = [c.name for c in registry().conditions.values() if c.declared_in and c.declared_in not in SHIPPED_MODULES]
    if yours and args.out is None:
        return fail(
            "write-yamls",
            ValueError(
                f"yaml_tasks/ holds vdg's own tasks; with your conditions loaded ({', '.join(yours)}) write them "
                "with --out DIR (lmms-eval --include_path DIR), or unset VDG_CONDITIONS to check or write vdg's"
            ),
        )
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
    try:
        if args.out is not None:
            out = args.out.expanduser().resolve()
            synth, episodes = (str(YAML_ROOT / folder / data) for folder, data in
                               (("vdgsynth", SYNTH_DATA), ("infinibench_ga", INFINIBENCH_DATA)))  # fmt: skip
            written = write_all(out, synth, episodes)
        else:
            written = write_all()
    except (ValueError, OSError) as exc:  # UntrustedPath is a ValueError: a name that would leave the folder
        return fail("write-yamls", exc)
    for path in written:
        print(path)
    return 0


def cmd_materialize(args: argparse.Namespace) -> int:
    # the model side's modules only for this command (tests/vdg_tasks/cli/test_cli_imports.py: vdg --help and the
    # report side load none of them)
    from vdg_tasks.jobs.materialize import (
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
        print(redact(f"vdg materialize: {exc}"), file=sys.stderr)
        return 2
    except (ValueError, CacheUnwritable) as exc:
        return fail("materialize", exc)
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
            return fail("materialize", OSError(f"the manifest {args.manifest} cannot be written: {exc}"))
        print(f"manifest written to {path}", file=sys.stderr)
    unmirrored = 0
    if args.mirror:
        from vdg_tasks.jobs.mirror import MirrorError, mirror  # only --mirror places files: not on the plain path

        try:
            placed = mirror(outcomes, Path(args.mirror))
        except (MirrorError, OSError) as exc:
            return fail("materialize", exc)
        print(placed.line())
        for line in placed.failure_lines():
            print(line, file=sys.stderr)
        unmirrored = len(placed.failed)
    if summary.failed or unmirrored:  # a Slurm `afterok` dependency must not start the evaluation on a partial cache
        print(
            f"vdg materialize: {len(summary.failed) + unmirrored} failed (listed above); fix them and rerun "
            "(finished videos stay cached)",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    # the model side's modules only for this command (tests/vdg_tasks/cli/test_cli_imports.py: vdg --help and the
    # report side load none of them)
    from vdg_tasks.jobs.export import export, push_to_hub

    try:
        result = export(
            args.tasks.split(","), Path(args.out), name=args.name, workers=args.workers, progress=not args.quiet
        )
    except (ValueError, CacheUnwritable) as exc:  # ExportError and TaskError are ValueErrors
        return fail("export", exc)
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
            return fail("export", RuntimeError(f"pushing {result.out} to {args.push_to_hub} failed: {exc}"))
        print(f"pushed to https://huggingface.co/datasets/{args.push_to_hub} (commit {commit})", file=sys.stderr)
    return 0


def cmd_export_tasks(args: argparse.Namespace) -> int:
    # the model side's modules only for this command (tests/vdg_tasks/cli/test_cli_imports.py: vdg --help and the
    # report side load none of them)
    from vdg_tasks.jobs.export import write_export_tasks

    try:
        written = write_export_tasks(
            args.export,
            Path(args.out),
            name=args.name,
            revision=args.revision,
            tasks=args.tasks.split(",") if args.tasks else None,
        )
    except (ValueError, OSError) as exc:
        return fail("export-tasks", exc)
    print(Path(args.out))
    print(f"{len(written)} files; evaluate with lmms-eval --include_path {Path(args.out)}", file=sys.stderr)
    return 0


def cmd_derive(args: argparse.Namespace) -> int:
    # the model side's modules only for this command (tests/vdg_tasks/cli/test_cli_imports.py: vdg --help and the
    # report side load none of them)
    from vdg_tasks.lmms.derive import DeriveError, derive

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
        return fail("derive", exc)
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


def cmd_coverage(args: argparse.Namespace) -> int:
    # lmms-eval's task index (~seconds) only for this command, not vdg --help
    from vdg_tasks.lmms.coverage import coverage, render

    try:
        rows = coverage()
        table = render(rows)
        if args.out:
            Path(args.out).write_text(table)
    except (OSError, ModuleNotFoundError) as exc:
        return fail("coverage", exc)
    if not args.out:
        print(table, end="")
    derived = sum(row.derives for row in rows)
    print(
        f"{derived} of {len(rows)} video task folders derive" + (f"; table: {args.out}" if args.out else ""),
        file=sys.stderr,
    )
    return 0


def cmd_subset(args: argparse.Namespace) -> int:
    # the model side's modules only for this command (tests/vdg_tasks/cli/test_cli_imports.py: vdg --help and the
    # report side load none of them)
    from vdg_tasks.jobs.materialize import load_docs

    try:
        docs = question_sets.read_docs(args.docs) if args.docs else load_docs(args.benchmark)
        chosen = question_sets.stratified_subset(docs, args.per_task_type, args.seed, args.benchmark)
        path = question_sets.write(chosen, Path(args.out))
    except (ValueError, OSError) as exc:
        return fail("subset", exc)
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
