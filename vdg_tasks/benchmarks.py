"""The benchmarks vdg derives condition tasks for.

A benchmark spec says where a question's source video is and which of lmms-eval's own pieces
(dataset, prompt builder) the derived tasks reuse. Every benchmark's docs carry the Video-MME
fields ``question_id``, ``videoID``, ``task_type``, ``duration``, ``options``, ``answer``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any


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
    """

    name: str
    source_video: Callable[[Mapping[str, Any]], Path]
    description: str
    native_results: Callable[[Mapping[str, Any], list[str]], dict[str, Any]] | None = None


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
    }
)


def task_name(benchmark: str, condition: str) -> str:
    return f"{benchmark}_vdg_{condition}"


def parse_task_name(task: str) -> tuple[str, str]:
    """``videomme_vdg_black`` -> (``videomme``, ``black``); ValueError for other names."""
    benchmark, sep, condition = task.rpartition("_vdg_")
    if not sep or benchmark not in BENCHMARKS:
        raise ValueError(f"{task!r} is not a vdg task (expected <benchmark>_vdg_<condition>)")
    return benchmark, condition
