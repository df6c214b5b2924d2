"""The benchmarks vdg derives condition tasks for.

A benchmark spec says where a question's source video is, which of lmms-eval's own pieces
(dataset, prompt builder, scorer) the derived tasks reuse, and what its docs carry (``provides``: a
condition applies to a benchmark when the benchmark provides what it ``requires``). Hooks and
transforms read a benchmark's docs through its ``view``: the Video-MME fields ``question_id``,
``videoID``, ``task_type``, ``duration``, ``options`` (lettered, "A. ...") and ``answer`` (a letter),
whatever the benchmark's own columns are (MVBench: ``video``, ``candidates``, the answer's text;
EgoSchema: ``question_idx``, ``video_idx``, ``option``, the answer's index).

A benchmark with sub-tasks (MVBench) is one spec per sub-task (``mvbench_action_count``...) that
share a ``group`` (``mvbench``): the name in task tags, logs and reports; the sub-task is the
question's task type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from vdg_tasks.data.local_copies import (
    LocalLayout,
    VideoUnavailable,
    check_id_path,
    local_dir,
    local_video,
    require_video_path,
)
from vdg_tasks.vocabulary.catalogue import DOCS, MVBENCH_SUB_TASKS, OPTIONS_ONLY
from vdg_tasks.vocabulary.conditions import Condition, Requirement, conditions_for
from vdg_tasks.vocabulary.parse import LETTERS
from vdg_tasks.vocabulary.scoring import LETTER, scoring
from vdg_tasks.vocabulary.seeding import stable_seed

__all__ = ["BENCHMARKS", "Benchmark", "VideoUnavailable", "members", "open_prompt", "parse_task_name", "task_name"]


#: lmms-eval's Video-MME prompt builder; reused (not copied) by every benchmark here.
VIDEOMME_DOC_TO_TEXT = "lmms_eval.tasks.videomme.utils.videomme_doc_to_text"


def _same(doc: Mapping[str, Any]) -> dict[str, Any]:
    return dict(doc)


def _sys_exit_lookup(lookup: Callable[[Mapping[str, Any]], list[str]], doc: Mapping[str, Any]) -> Path:
    # lmms-eval's own lookups call sys.exit on a missing file; here that is an error for this question only.
    try:
        path = Path(lookup(doc)[0])
    except SystemExit as exc:
        raise VideoUnavailable(str(exc.code)) from None
    return require_video_path(path)


def _videomme_source(doc: Mapping[str, Any]) -> Path:
    # $HF_HOME/videomme/data/<videoID>.mp4|.MP4|.mkv
    # lmms_eval (torch, transformers; ~10 s) only inside an lmms-eval run, not on import of lmms.hooks or vdg --help
    from lmms_eval.tasks.videomme.utils import videomme_doc_to_visual

    return _sys_exit_lookup(videomme_doc_to_visual, doc)


def _videomme_native_results(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
    # lmms-eval's own Video-MME score, so a videomme_vdg_orig run reads like a videomme run.
    # lmms_eval (torch, transformers; ~10 s) only inside an lmms-eval run, not on import of lmms.hooks or vdg --help
    from lmms_eval.tasks.videomme.utils import videomme_process_results

    return videomme_process_results(doc, results)


def _videomme_prompt(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    # lmms_eval (torch, transformers; ~10 s) only inside an lmms-eval run, not on import of lmms.hooks or vdg --help
    from lmms_eval.tasks.videomme.utils import videomme_doc_to_text

    return videomme_doc_to_text(doc, dict(lmms_eval_specific_kwargs or {}))


def infinibench_prompt(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    """The InfiniBench multiple-choice prompt: question, one lettered option per line, post prompt."""
    kwargs = dict(lmms_eval_specific_kwargs or {})
    options = "\n".join(str(o) for o in doc.get("options") or [])
    return f"{kwargs.get('pre_prompt', '')}{doc['question']}\n{options}\n{kwargs.get('post_prompt', '')}".rstrip("\n")


def _local_source(doc: Mapping[str, Any]) -> Path:
    return require_video_path(Path(doc["video"]))


def lettered(options: list[Any]) -> list[str]:
    """Options as "A. text"; options already lettered in order are kept as they are."""
    out = []
    for letter, option in zip(LETTERS, options, strict=False):
        text = str(option).strip()
        out.append(text if text[:2] in (f"{letter}.", f"{letter})") else f"{letter}. {text}")
    return out


def unlettered(options: list[Any]) -> list[str]:
    """ "A. text" -> "text" (the inverse of ``lettered``)."""
    return [str(o).strip()[2:].strip() if str(o).strip()[1:2] in (".", ")") else str(o).strip() for o in options]


# --- MVBench (lmms-eval's `mvbench_<sub_task>` tasks) ------------------------------------------------

#: TVQA frames, extracted at 3 fps: MVBench's episodic_reasoning ships frame folders, not videos.
MVBENCH_FRAME_FOLDER_FPS = 3.0


def _mvbench_folder(sub_task: str) -> str:
    # lmms_eval (torch, transformers; ~10 s) only inside an lmms-eval run, not on import of lmms.hooks or vdg --help
    from lmms_eval.tasks.mvbench.utils import DATA_LIST

    return DATA_LIST[sub_task]


def mvbench_question_id(sub_task: str, doc: Mapping[str, Any]) -> str:
    """``<sub_task>/<video>#<8 hex>``: MVBench logs no id; the digest of the question and its candidates
    tells apart the questions asked about one video, in any row order."""
    content = stable_seed(doc.get("question", ""), *(doc.get("candidates") or []))
    return f"{sub_task}/{doc.get('video', '')}#{content & 0xFFFFFFFF:08x}"


def _mvbench_view(sub_task: str) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    def view(doc: Mapping[str, Any]) -> dict[str, Any]:
        candidates = [str(c) for c in doc.get("candidates") or []]
        truth = str(doc.get("answer", ""))
        answer = LETTERS[candidates.index(truth)] if truth in candidates else ""
        return {
            **doc,
            "question_id": mvbench_question_id(sub_task, doc),
            "videoID": str(doc.get("video", "")),
            "task_type": sub_task,
            "duration": "",
            "options": lettered(candidates),
            "answer": answer,
            "answer_text": truth,
        }

    return view


def _mvbench_source(sub_task: str) -> Callable[[Mapping[str, Any]], Path]:
    def source(doc: Mapping[str, Any]) -> Path:
        # lmms_eval (torch, transformers; ~10 s) only inside an lmms-eval run, not on import of lmms.hooks or vdg --help
        from lmms_eval.tasks.mvbench.utils import mvbench_doc_to_visual

        return require_video_path(Path(mvbench_doc_to_visual(doc, {"sub_task": sub_task})[0]))

    return source


def _mvbench_prompt(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    # lmms_eval (torch, transformers; ~10 s) only inside an lmms-eval run, not on import of lmms.hooks or vdg --help
    from lmms_eval.tasks.mvbench.utils import mvbench_doc_to_text

    kwargs = {"post_prompt": "Only give the best option.\n", **dict(lmms_eval_specific_kwargs or {})}
    native = {**doc, "candidates": unlettered(list(doc.get("options") or []))}
    return mvbench_doc_to_text(native, kwargs)


def _mvbench_native_results(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
    # lmms_eval (torch, transformers; ~10 s) only inside an lmms-eval run, not on import of lmms.hooks or vdg --help
    from lmms_eval.tasks.mvbench.utils import mvbench_process_results

    return mvbench_process_results(doc, results)


# --- EgoSchema (lmms-eval's `egoschema` and `egoschema_subset`) --------------------------------------


def _egoschema_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    raw = doc.get("answer")
    text = "" if raw is None else str(raw).strip()
    options = lettered(list(doc.get("option") or []))
    answer = LETTERS[int(text)] if text.isdigit() and int(text) < len(options) else ""
    return {
        **doc,
        "question_id": str(doc.get("question_idx", "")),
        "videoID": str(doc.get("video_idx", "")),
        "task_type": "egoschema",  # one kind of question: long-form egocentric video understanding
        "duration": "",
        "options": options,
        "answer": answer,
    }


def _egoschema_source(doc: Mapping[str, Any]) -> Path:
    # $HF_HOME/egoschema/videos/<video_idx>.mp4|.MP4
    # lmms_eval (torch, transformers; ~10 s) only inside an lmms-eval run, not on import of lmms.hooks or vdg --help
    from lmms_eval.tasks.egoschema.utils import egoschema_doc_to_visual

    return _sys_exit_lookup(egoschema_doc_to_visual, doc)


def _egoschema_prompt(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    # lmms_eval (torch, transformers; ~10 s) only inside an lmms-eval run, not on import of lmms.hooks or vdg --help
    from lmms_eval.tasks.egoschema.utils import egoschema_doc_to_text

    native = {**doc, "option": list(doc.get("options") or [])}
    return egoschema_doc_to_text(native, dict(lmms_eval_specific_kwargs or {}))


def _egoschema_native_results(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
    # lmms_eval (torch, transformers; ~10 s) only inside an lmms-eval run, not on import of lmms.hooks or vdg --help
    from lmms_eval.tasks.egoschema.utils import egoschema_process_results_generation

    return egoschema_process_results_generation(doc, results)


@dataclass(frozen=True)
class Upstream:
    """The lmms-eval task a benchmark's vdg tasks copy their settings from.

    Attributes:
        folder: the task's folder under ``lmms_eval/tasks``.
        config: its YAML file there (``include`` resolved).
        metrics: lmms-eval's own metrics kept beside vdg's accuracy: (metric, aggregation function).
    """

    folder: str
    config: str
    metrics: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Benchmark:
    """How vdg reaches one benchmark.

    Attributes:
        name: the prefix of derived task names (``<name>_vdg_<condition>``).
        source_video: view -> path of the original video on the hub layout (lmms-eval's lookup);
            raises ``VideoUnavailable``.
        description: one sentence for the task folder's README.
        native_results: the benchmark's own lmms-eval ``process_results`` (on the raw doc), logged
            beside the vdg record for answered questions (None when the benchmark has none).
        prompt: the multiple-choice prompt builder ``(view, lmms_eval_specific_kwargs) -> str`` the
            text conditions apply to their changed doc.
        open_instruction: what an open-ended question asks for instead of a letter.
        provides: what its docs carry (``options``, ``characters``, ``outfit_windows``, ``title``,
            ``subtitles``): a built-in benchmark's comes from ``vdg_tasks.vocabulary.catalogue.DOCS``.
        view: raw doc -> the doc with the Video-MME fields (see the module docstring).
        group: the name logged and reported for a sub-task's questions (``mvbench``); "" = ``name``.
        sub_task: the sub-task this spec is (``action_count``), "" for none.
        local: how a local copy is laid out under ``$VDG_LOCAL_DATA`` (``vdg_tasks.data.local_copies``).
        upstream: the lmms-eval task whose dataset, generation settings, prompt kwargs and scorer are
            reused (None: read from a local file written by vdg).
        frame_folder_fps: the rate of a source that is a folder of frames (MVBench's TVQA frames):
            vdg encodes it to a video at that rate first.
        scoring: how a reply is scored (``vdg_tasks.vocabulary.scoring``): ``letter`` for multiple choice; a
            graded task's docs carry no options and its view's ``answer`` is the reference answer itself.
        frames: view -> the decoded frames or images the task shows (its own ``doc_to_visual``), for a task that
            gives frames rather than a video file: the conditions apply to them (``vdg_tasks.perturb.frames``)
            and no video is built; None for a task that gives a video file.
        aggregate_one: for a ``mean:<key>`` scoring, the base's aggregation of ``<key>`` over one question's value
            (its process_results output under ``<key>``); None otherwise.
    """

    name: str
    source_video: Callable[[Mapping[str, Any]], Path]
    description: str
    native_results: Callable[[Mapping[str, Any], list[str]], dict[str, Any]] | None = None
    prompt: Callable[..., str] = _videomme_prompt
    open_instruction: str = "Answer the question in your own words, in one short sentence."
    provides: frozenset[Requirement] = OPTIONS_ONLY
    view: Callable[[Mapping[str, Any]], dict[str, Any]] = _same
    group: str = ""
    sub_task: str = ""
    local: LocalLayout | None = None
    upstream: Upstream | None = None
    frame_folder_fps: float | None = None
    scoring: str = LETTER
    frames: Callable[[Mapping[str, Any]], list[Any]] | None = None
    aggregate_one: Callable[[Any], Any] | None = None

    @property
    def graded(self) -> bool:
        """Whether its replies are scored on a graded scale (no options: ``vdg_tasks.vocabulary.scoring``)."""
        return scoring(self.scoring).graded

    @property
    def report_name(self) -> str:
        """The benchmark as logs, tags and reports name it (the group of a sub-task)."""
        return self.group or self.name

    def conditions(self) -> list[Condition]:
        """The declared conditions this benchmark provides for, in declaration order."""
        return conditions_for(self.provides)

    def video(self, view: Mapping[str, Any]) -> Path:
        """The question's original video: from the local copy when ``$VDG_LOCAL_DATA`` has one, else
        where lmms-eval keeps it.

        Raises:
            VideoUnavailable: no such file.
            UntrustedPath: the doc's ids make a path that leaves the folder of videos (absolute, ``..``, a
                symbolic link out of a local copy).
        """
        folder = local_dir(self.local)
        if folder is not None and self.local is not None:
            return local_video(folder, self.local, view)
        if self.local is not None:  # lmms-eval's lookup joins the same ids under its folder: none may lead out
            check_id_path(self.local.video(view))
        return self.source_video(view)


def _mvbench(sub_task: str) -> Benchmark:
    return Benchmark(
        f"mvbench_{sub_task}",
        _mvbench_source(sub_task),
        f"MVBench {sub_task} (lmms-eval's `mvbench_{sub_task}`: same dataset, prompt and video lookup).",
        _mvbench_native_results,
        prompt=_mvbench_prompt,
        view=_mvbench_view(sub_task),
        provides=DOCS["mvbench"],
        group="mvbench",
        sub_task=sub_task,
        local=LocalLayout(
            "mvbench", (f"json/{sub_task}", sub_task), lambda d: f"{_mvbench_folder(sub_task)}/{d['video']}"
        ),
        upstream=Upstream(
            "mvbench",
            f"mvbench_{sub_task}.yaml",
            (("mvbench_accuracy", "lmms_eval.tasks.mvbench.utils.mvbench_aggregate_results"),),
        ),
        frame_folder_fps=MVBENCH_FRAME_FOLDER_FPS if sub_task == "episodic_reasoning" else None,
    )


def _egoschema(name: str, config: str, hub_name: str, what: str, metrics: tuple[tuple[str, str], ...]) -> Benchmark:
    return Benchmark(
        name,
        _egoschema_source,
        f"EgoSchema {what} (lmms-eval's `{name}`: same dataset, prompt and video lookup; five options, A-E).",
        _egoschema_native_results if metrics else None,
        prompt=_egoschema_prompt,
        view=_egoschema_view,
        provides=DOCS[name],
        local=LocalLayout("egoschema", (hub_name,), lambda d: f"{d['video_idx']}.mp4", (".MP4",)),
        upstream=Upstream("egoschema", config, metrics),
    )


_VIDEOMME = Benchmark(
    "videomme",
    _videomme_source,
    "Video-MME (lmms-eval's `videomme`: same dataset, prompt and video lookup).",
    _videomme_native_results,
    provides=DOCS["videomme"],
    local=LocalLayout("videomme", ("videomme", "test"), lambda d: f"{d['videoID']}.mp4", (".MP4", ".mkv")),
    upstream=Upstream(
        "videomme",
        "videomme.yaml",
        (("videomme_perception_score", "lmms_eval.tasks.videomme.utils.videomme_aggregate_results"),),
    ),
)

BENCHMARKS: Mapping[str, Benchmark] = MappingProxyType(
    {
        "videomme": _VIDEOMME,
        "vdgsynth": Benchmark(
            "vdgsynth",
            _local_source,
            "vdg's synthetic benchmark, generated locally by `vdg synth` (no download).",
            provides=DOCS["vdgsynth"],
        ),
        "infinibench_ga": Benchmark(
            "infinibench_ga",
            _local_source,
            "InfiniBench global appearance (outfit order of a named character over an episode), from local files "
            "prepared by `vdg infinibench`, or synthetic episodes from `vdg synth-episodes` (no download).",
            prompt=infinibench_prompt,
            open_instruction="Describe each of the character's outfits in the order they appear in the episode, "
            "separated by commas.",
            provides=DOCS["infinibench_ga"],
        ),
        **{f"mvbench_{sub}": _mvbench(sub) for sub in MVBENCH_SUB_TASKS},
        # The full set's answers are private (lmms-eval scores it by uploading to EgoSchema's server):
        # its vdg records are errors ("no ground-truth answer"); the 500-question subset has answers.
        "egoschema": _egoschema("egoschema", "egoschema.yaml", "GENERATION", "full set (5,031 questions)", ()),
        "egoschema_subset": _egoschema(
            "egoschema_subset",
            "egoschema_subset.yaml",
            "Subset",
            "subset (500 questions with public answers)",
            (("score", "lmms_eval.tasks.egoschema.utils.egoschema_aggregate_score"),),
        ),
    }
)


def members(name: str) -> list[Benchmark]:
    """The specs a benchmark name covers: itself, or every sub-task of a group (``mvbench``)."""
    return [b for b in BENCHMARKS.values() if name in (b.name, b.report_name)]


def open_prompt(
    benchmark: Benchmark, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
) -> str:
    """The open-ended prompt: the question and the benchmark's instruction, no options, no letter request."""
    pre = str((lmms_eval_specific_kwargs or {}).get("pre_prompt", "") or "")
    return f"{pre}{doc['question']}\n{benchmark.open_instruction}"


def task_name(benchmark: str, condition: str) -> str:
    return f"{benchmark}_vdg_{condition}"


def parse_task_name(task: str) -> tuple[str, str]:
    """``videomme_vdg_black`` -> (``videomme``, ``black``); ValueError for other names."""
    benchmark, sep, condition = task.rpartition("_vdg_")
    if not sep or benchmark not in BENCHMARKS:
        raise ValueError(f"{task!r} is not a vdg task (expected <benchmark>_vdg_<condition>)")
    return benchmark, condition
