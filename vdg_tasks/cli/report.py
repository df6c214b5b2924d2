"""The report side's commands: ``vdg report``, ``leaderboard``, ``export-results``, ``stats``, ``schema``, and their
arguments."""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from postprocess import leaderboard as lb
from postprocess import openvlm, stats
from postprocess.judge import JudgeError
from postprocess.leaderboard import MergeError, merge_leaderboard
from postprocess.pipeline import make_report
from postprocess.reading.inputs import ReportInputs, load_inputs
from postprocess.rendering.glance import terminal_lines
from postprocess.rendering.schema import SCHEMA_PATH, schema_is_current, write_schema
from postprocess.report import compute_tables
from postprocess.settings import ReportSettings
from postprocess.stats import json_ready as json_value
from vdg_tasks.cli.common import fail, version

#: Suffixes of a file --predictions takes alone, its label and condition read from its name and folders
#: (VLMEvalKit's ``{model}_{dataset}.xlsx``: ``postprocess.reading.vlmevalkit``).
_NAMED_BY_RULE = (".xlsx", ".tsv", ".json")


def _predictions(specs: list[str] | None) -> list[tuple[str, str]]:
    """(MODEL or LABEL:CONDITION, FILE) of each --predictions; a VLMEvalKit .xlsx / .tsv / .json file may come alone
    (a spec that is itself an existing file is one, whatever it holds: ``runs/lr=1e-5/black/m_Video-MME.xlsx``)."""
    out = []
    for spec in specs or []:
        model, sep, path = spec.partition("=")
        alone = Path(spec).suffix.lower() in _NAMED_BY_RULE and (not sep or Path(spec).is_file())
        if alone:
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


def _backbones(specs: list[str] | None) -> dict[str, str]:
    """LVLM label -> backbone label of each --backbone LVLM=BACKBONE; one backbone per LVLM."""
    out: dict[str, str] = {}
    for spec in specs or []:
        model, sep, backbone = spec.partition("=")
        model, backbone = model.strip(), backbone.strip()
        if not sep or not model or not backbone:
            raise ValueError(f"--backbone expects LVLM_LABEL=BACKBONE_LABEL, got {spec!r}")
        if out.get(model, backbone) != backbone:
            raise ValueError(f"--backbone {spec}: {model!r} already has the backbone {out[model]!r}")
        out[model] = backbone
    return out


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
        backbones=_backbones(getattr(args, "backbone", None)),
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


def _openvlm_theirs(args: argparse.Namespace, names, datasets) -> str | None:
    """The text of --openvlm-merge's file, checked against its layout before the analyses (None without it)."""
    if args.openvlm_merge is None:
        return None
    where = f"--openvlm-merge {args.openvlm_merge}"
    try:
        text = Path(args.openvlm_merge).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{where}: cannot read: {exc}") from None
    try:
        openvlm.merge_openvlm(text, {}, names=names, datasets=datasets)
    except MergeError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return text


def _write_openvlm(args: argparse.Namespace, theirs: str | None, tables, names, datasets) -> Path:
    """--openvlm: a fresh OpenVLM.json, or --openvlm-merge's file with vdg's keys added."""
    if theirs is None:
        when = args.time or datetime.now(timezone.utc).strftime("%y%m%d%H%M%S")
        text = openvlm.write_openvlm(tables, time=when, names=names, datasets=datasets)
    else:
        try:
            merged = openvlm.merge_openvlm(theirs, tables, names=names, datasets=datasets)
        except MergeError as exc:
            raise ValueError(f"--openvlm-merge {args.openvlm_merge}: {exc}") from None
        text = merged.text
        if merged.unmatched_theirs:
            print(f"vdg leaderboard: no vdg data for {len(merged.unmatched_theirs)} model(s) of "
                  f"{args.openvlm_merge}: {', '.join(merged.unmatched_theirs)}", file=sys.stderr)  # fmt: skip
        if merged.unmatched_ours:
            print(f"vdg leaderboard: {len(merged.unmatched_ours)} vdg model(s) not in {args.openvlm_merge} "
                  f"(not added): {', '.join(merged.unmatched_ours)}", file=sys.stderr)  # fmt: skip
    path = Path(args.openvlm)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--openvlm {path}: cannot write: {exc}") from None
    return path


def _check_leaderboard_args(args: argparse.Namespace) -> None:
    if args.out is None and args.openvlm is None:
        raise ValueError("give --out FILE (.md, .csv or .json) and/or --openvlm FILE.json")
    if args.out is not None and Path(args.out).suffix.lower() not in (".md", ".csv", ".json"):
        raise ValueError(f"--out {args.out}: the leaderboard is written as .md, .csv or .json")
    if args.openvlm is not None and Path(args.openvlm).suffix.lower() != ".json":
        raise ValueError(f"--openvlm {args.openvlm}: OpenVLM's layout is written as .json")
    if args.openvlm is None and (args.openvlm_merge or args.dataset_map or args.time):
        raise ValueError("--openvlm-merge, --dataset-map and --time go with --openvlm FILE.json")
    if args.merge is None and args.on:
        raise ValueError("--on goes with --merge")
    if args.merge is None and args.openvlm is None and args.map:
        raise ValueError("--map goes with --merge or --openvlm")
    if args.merge is not None and not args.on:
        raise ValueError(f"--merge {args.merge}: name its model-name column with --on COLUMN")
    if args.merge is not None and args.out is None:
        raise ValueError(f"--merge {args.merge}: name the merged table's file with --out")


def cmd_leaderboard(args: argparse.Namespace) -> int:
    merge = args.merge
    written: list[Path] = []
    try:
        _check_leaderboard_args(args)
        theirs = None
        names = lb.read_name_map(Path(args.map)) if args.map else None
        datasets = lb.read_name_map(Path(args.dataset_map), lb.DATASET_MAP_HEADER) if args.dataset_map else None
        if merge is not None:  # read and check their files before the analyses
            theirs = lb.read_their_table(Path(merge))
            _merge_leaderboard(args, theirs, lb.leaderboard_table({}), names)
        their_openvlm = _openvlm_theirs(args, names, datasets)
        options = _options(args)
        wanted = lb.SOURCE_TABLES + (tuple(t for t in openvlm.SOURCE_TABLES if t not in lb.SOURCE_TABLES)
                                     if args.openvlm else ())  # fmt: skip
        tables = compute_tables(load_inputs(_inputs(args), options), options, names=wanted)
        if args.out is not None:
            table = lb.leaderboard_table(tables)
            if theirs is None:
                written.append(lb.write_leaderboard(table, Path(args.out)))
            else:
                merged, unmatched_theirs, unmatched_ours = _merge_leaderboard(args, theirs, table, names)
                written.append(
                    lb.write_merged_leaderboard(merged, Path(args.out), unmatched_theirs, unmatched_ours, on=args.on)
                )
                if unmatched_theirs:
                    print(f"vdg leaderboard: no vdg data for {len(unmatched_theirs)} row(s) of {merge} (vdg "
                          f"columns left empty): {', '.join(unmatched_theirs)}", file=sys.stderr)  # fmt: skip
                if unmatched_ours:
                    print(f"vdg leaderboard: {len(unmatched_ours)} vdg model(s) not in {merge} (not added): "
                          f"{', '.join(unmatched_ours)}", file=sys.stderr)  # fmt: skip
        if args.openvlm is not None:
            written.append(_write_openvlm(args, their_openvlm, tables, names, datasets))
    except ValueError as exc:
        return fail("leaderboard", exc)
    for path in written:
        print(path)
    return 0


def _model_ids(specs: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for spec in specs or []:
        label, sep, hub_id = spec.partition("=")
        if not sep or not label or not hub_id:
            raise ValueError(f"--model-id expects LABEL=ORG/NAME, got {spec!r}")
        out[label] = hub_id
    return out


#: The sub-folders of ``vdg export-results --out``: the datasets dataset, the Every Eval Ever datastore.
EXPORT_PARTS = {"dataset": "dataset", "eee": "every_eval_ever"}


def _export_folder(out: Path) -> None:
    """Refuse an --out folder holding anything but an earlier export's parts (which are replaced)."""
    if out.is_symlink():
        raise ValueError(f"--out {out}: is a symbolic link; give the folder itself")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: not a folder")
    if out.is_dir():
        foreign = sorted(p.name for p in out.iterdir() if p.name not in EXPORT_PARTS.values())
        if foreign:
            raise ValueError(
                f"--out {out}: holds {', '.join(foreign[:5])}, which an export did not write: give an empty or "
                "new folder"
            )


def cmd_export_results(args: argparse.Namespace) -> int:
    from postprocess import interchange  # datasets and pyarrow: only this command writes with them

    out = Path(args.out)
    parts = ("dataset", "eee") if args.format == "both" else (args.format,)
    try:
        _export_folder(out)
        model_ids = _model_ids(args.model_id)
        options = _options(args)
        frame = load_inputs(_inputs(args), options)
        for part in parts:
            target = out / EXPORT_PARTS[part]
            if target.is_symlink():
                raise ValueError(f"--out {out}: {target.name} is a symbolic link")
            if target.exists() and not target.is_dir():
                raise ValueError(f"--out {out}: {target.name} is a file, not an earlier export's folder")
            if target.exists():
                shutil.rmtree(target)
            if part == "dataset":
                interchange.write_results_dataset(frame, target)
                print(f"datasets dataset: {target} (datasets.load_dataset({str(target)!r}))")
                continue
            export = interchange.write_eee_records(
                frame,
                target,
                model_ids=model_ids,
                organization=args.organization,
                retrieved_timestamp=str(int(time.time())),
                vdg_version=version(),
            )
            print(f"Every Eval Ever records: {target} ({len(export.aggregates)} evaluation(s))")
            for skipped in export.skipped:
                print(f"vdg export-results: not written (no scored answer): {skipped}", file=sys.stderr)
            try:
                problems = interchange.validate_eee_records(target)
            except ImportError as exc:
                print(f"vdg export-results: records not validated: {exc}", file=sys.stderr)
                continue
            if problems:
                print("\n".join(problems), file=sys.stderr)
                raise ValueError(f"{len(problems)} problem(s) found by every-eval-ever's validator in {target}")
    except (ValueError, OSError) as exc:
        return fail("export-results", exc)
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
    p.add_argument(
        "--backbone",
        action="append",
        metavar="LVLM=BACKBONE",
        help="pair a model with its language backbone's run (vdg_text_lm on the blind tasks; model labels as the "
        "report names them; repeatable): table leakage compares them on the same prompts. Without it, a "
        "vdg_text_lm:NAME run is paired by the naming rule of docs/usage.md",
    )


def judge_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--judge",
        choices=["offline", "api"],
        help="score open-ended answers: api = the OpenAI-compatible endpoint in VDG_JUDGE_BASE_URL, VDG_JUDGE_MODEL "
        "(key: VDG_JUDGE_API_KEY); offline = deterministic token overlap, labelled as such (default: not judged)",
    )
