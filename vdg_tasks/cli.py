"""The ``vdg`` command: thin wrappers over the package's functions."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _cmd_synth(args: argparse.Namespace) -> int:
    from vdg_tasks.synth import generate

    path = generate(Path(args.out), n_videos=args.videos, seed=args.seed)
    print(path)
    return 0


def _cmd_tasks_path(args: argparse.Namespace) -> int:
    from vdg_tasks.yamlgen import YAML_ROOT

    print(YAML_ROOT)
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
    from vdg_tasks.materialize import plan, run_jobs

    jobs, unavailable = plan(args.tasks.split(","))
    outcomes = run_jobs(jobs, workers=args.workers, progress=not args.quiet)
    failed = [o for o in outcomes if o.error] + unavailable
    built = sum(1 for o in outcomes if o.path and not o.hit)
    cached = sum(1 for o in outcomes if o.path and o.hit)
    print(
        f"{built} videos built, {cached} already cached, {len(failed)} failed "
        "(those questions are logged as error rows when evaluated)"
    )
    for o in failed:
        print(f"  {o.job.benchmark}/{o.job.condition} {o.job.video_id}: {o.error}", file=sys.stderr)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from postprocess.analyses import Options, run_all
    from postprocess.io import LogError, load_frame
    from postprocess.report import write_report

    try:
        frame = load_frame(args.runs)
    except LogError as exc:
        print(f"vdg report: {exc}", file=sys.stderr)
        return 2
    tables = run_all(frame, Options(missing=args.missing, n_resamples=args.resamples))
    print(write_report(tables, Path(args.out)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from vdg_tasks.materialize import default_workers

    parser = argparse.ArgumentParser(prog="vdg", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("synth", help="generate the synthetic benchmark vdgsynth")
    from vdg_tasks.yamlgen import YAML_ROOT

    p.add_argument(
        "--out",
        default=str(YAML_ROOT / "vdgsynth" / "data"),
        help="folder (default: where the vdgsynth_vdg_* tasks read it)",
    )
    p.add_argument("--videos", type=int, default=12)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_synth)

    p = sub.add_parser("tasks-path", help="print the folder to pass to lmms-eval --include_path")
    p.set_defaults(func=_cmd_tasks_path)

    p = sub.add_parser("write-yamls", help="regenerate yaml_tasks/ from the condition declarations")
    p.add_argument("--check", action="store_true", help="only check the committed files are up to date")
    p.set_defaults(func=_cmd_write_yamls)

    p = sub.add_parser("materialize", help="pre-build every perturbed video a task list needs")
    p.add_argument("--tasks", required=True, help="comma-separated task names or tags, e.g. vdgsynth_vdg")
    p.add_argument("--workers", type=int, default=default_workers())
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_cmd_materialize)

    p = sub.add_parser("report", help="join lmms-eval samples logs per question and write the VDG report")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="lmms-eval --output_path folders; NAME=DIR labels one")
    p.add_argument("--out", required=True)
    p.add_argument("--resamples", type=int, default=2000)
    p.add_argument("--missing", choices=["exclude", "incorrect"], default="exclude")
    p.set_defaults(func=_cmd_report)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
