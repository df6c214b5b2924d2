"""The benchmarks vdg derives condition tasks for.

A benchmark spec says where a question's source video is, which of lmms-eval's own pieces
(dataset, prompt builder) the derived tasks reuse, and what its docs carry (``provides``: a
condition applies to a benchmark when the benchmark provides what it ``requires``). Every
benchmark's docs carry the Video-MME fields ``question_id``, ``videoID``, ``task_type``,
``duration``, ``options``, ``answer``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from vdg_tasks.conditions import CONDITIONS, Condition, Requirement


class VideoUnavailable(Exception):
    """The source video of a question cannot be found."""


#: lmms-eval's Video-MME prompt builder; reused (not copied) by every benchmark here.
VIDEOMME_DOC_TO_TEXT = "lmms_eval.tasks.videomme.utils.videomme_doc_to_text"


def _videomme_source(doc: Mapping[str, Any]) -> Path:
    # lmms-eval's own lookup ($HF_HOME/videomme/data/<videoID>.mp4|.MP4|.mkv) calls sys.exit on a
    # missing file; here that becomes an error for this question only.
    from lmms_eval.tasks.videomme.utils import videomme_doc_to_visual

    try:
        return Path(videomme_doc_to_visual(doc)[0])
    except SystemExit as exc:
        raise VideoUnavailable(str(exc.code)) from None


def _videomme_native_results(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
    # lmms-eval's own Video-MME score, so a videomme_vdg_orig run reads like a videomme run.
    from lmms_eval.tasks.videomme.utils import videomme_process_results

    return videomme_process_results(doc, results)


def _videomme_prompt(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    from lmms_eval.tasks.videomme.utils import videomme_doc_to_text

    return videomme_doc_to_text(doc, dict(lmms_eval_specific_kwargs or {}))


def infinibench_prompt(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    """The InfiniBench multiple-choice prompt: question, one lettered option per line, post prompt."""
    kwargs = dict(lmms_eval_specific_kwargs or {})
    options = "\n".join(str(o) for o in doc.get("options") or [])
    return f"{kwargs.get('pre_prompt', '')}{doc['question']}\n{options}\n{kwargs.get('post_prompt', '')}".rstrip("\n")


def _local_source(doc: Mapping[str, Any]) -> Path:
    path = Path(doc["video"])
    if not path.is_file():
        raise VideoUnavailable(f"video path:{path} does not exist")
    return path


@dataclass(frozen=True)
class Benchmark:
    """How vdg reaches one benchmark.

    Attributes:
        name: the prefix of derived task names (``<name>_vdg_<condition>``).
        source_video: doc -> path of the original video; raises ``VideoUnavailable``.
        description: one sentence for the task folder's README.
        native_results: the benchmark's own lmms-eval ``process_results``, logged beside the vdg
            record for answered questions (None when the benchmark has none).
        prompt: the multiple-choice prompt builder ``(doc, lmms_eval_specific_kwargs) -> str`` the
            text conditions apply to their changed doc (the template's ``doc_to_text``).
        open_instruction: what an open-ended question asks for instead of a letter.
        provides: what its docs carry (``options``, ``characters``, ``outfit_windows``, ``title``,
            ``subtitles``).
    """

    name: str
    source_video: Callable[[Mapping[str, Any]], Path]
    description: str
    native_results: Callable[[Mapping[str, Any], list[str]], dict[str, Any]] | None = None
    prompt: Callable[..., str] = _videomme_prompt
    open_instruction: str = "Answer the question in your own words, in one short sentence."
    provides: frozenset[Requirement] = frozenset({"options"})

    def conditions(self) -> list[Condition]:
        """The declared conditions this benchmark provides for, in declaration order."""
        return [c for c in CONDITIONS.values() if c.requires <= self.provides]


BENCHMARKS: Mapping[str, Benchmark] = MappingProxyType(
    {
        "videomme": Benchmark(
            "videomme",
            _videomme_source,
            "Video-MME (lmms-eval's `videomme`: same dataset, prompt and video lookup).",
            _videomme_native_results,
        ),
        "vdgsynth": Benchmark(
            "vdgsynth",
            _local_source,
            "vdg's synthetic benchmark, generated locally by `vdg synth` (no download).",
        ),
        "infinibench_ga": Benchmark(
            "infinibench_ga",
            _local_source,
            "InfiniBench global appearance (outfit order of a named character over an episode), from local files "
            "prepared by `vdg infinibench`, or synthetic episodes from `vdg synth-episodes` (no download).",
            prompt=infinibench_prompt,
            open_instruction="Describe each of the character's outfits in the order they appear in the episode, "
            "separated by commas.",
            provides=frozenset({"options", "characters", "outfit_windows", "title", "subtitles"}),
        ),
    }
)


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
