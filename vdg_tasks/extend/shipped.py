"""vdg's own conditions written only through the public API (``vdg_tasks.extend``), as a user's module is.

- ``downscale112``, ``downscale224``, ``downscale448``: the detail above a short side of 112 / 224 / 448 px removed
  (swscale's area average down to that size, its Mitchell-Netravali bicubic back up to the source's size, on the
  frames' YUV planes),
  so a model gets as many visual tokens as under ``orig``: what the resolution a model is shown carries. A frame
  whose short side is already at most that size is left as it is.
- ``blur``: a Gaussian blur of each frame (``sigma`` pixels; libavfilter's ``gblur``, ``steps`` passes of its
  recursive approximation, on each YUV plane: a 4:2:0 chroma plane by ``sigma / 2`` of its samples).
- ``mute``: the audio removed, the video stream copied packet for packet (the frames, their timestamps and rotation
  untouched); on benchmarks whose videos have sound. Beside ``black`` it separates what an audio-visual model takes
  from the sound (``orig - mute``) from what it takes from the pictures (``orig - black``, whose sound is kept).
- ``options_rotated1`` ... ``options_rotated7`` (family ``circular``): circular evaluation's rotations. Rotation
  ``k`` asks a question with ``N`` options with its option ``i`` at position ``(i + k) mod N``, the labels still
  A, B, ... in order and the answer letter moved with its option; no seed (the rotation is the same on every machine
  and in every process). A question with ``N`` options is circular-evaluated on ``orig`` and its own rotations
  ``1 .. N-1``; under a rotation ``k >= N`` it is asked rotated by ``k mod N`` (``N`` = 4: ``options_rotated4`` asks
  it as ``orig``, ``options_rotated5`` as ``options_rotated1``), a repeat the report's ``circular`` table leaves out.
  Tag ``<benchmark>_vdg_circular<N>`` runs the rotations a benchmark of at most ``N`` options needs
  (``videomme_vdg_circular4``: rotations 1-3), ``<benchmark>_vdg_circular`` all seven (vdg reads at most eight
  options, A-H).

``downscale*`` and ``blur`` are filter conditions (``vdg_tasks.extend.filter_condition``): their re-encode is
``crf18``'s, so ``crf18`` is their control.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vdg_tasks.extend import CIRCULAR, ROTATION, Context, Picture, container_condition, filter_condition, text_condition

#: Short sides ``downscale<N>`` keeps the detail of, from least to most.
SHORT_SIDES = (112, 224, 448)
#: The standard deviation of ``blur``'s Gaussian, in pixels of the frame it blurs.
BLUR_SIGMA = 4.0


#: ``blur``'s Gaussian is libavfilter's ``gblur`` (a recursive approximation): more steps, closer to a true Gaussian.
BLUR_STEPS = 3
#: Bumped whenever a graph below changes what it does for the same frames: part of each condition's params, so of its
#: cache key. 2: FFmpeg filter graphs on the frames as encoded (``gblur``; swscale area and bicubic) replaced the
#: per-frame Python in RGB (scipy ``gaussian_filter``; Pillow box and bicubic).
KERNEL_VERSION = 2
#: The cubic ``downscale*`` scales back up with (Mitchell-Netravali's B and C): the smooth bicubic, without the
#: overshoot of Keys' (B = 0, C = 0.5: Pillow's, before kernel version 2), whose ringing moves with the picture and
#: cost the encode 15 % more bits than ``crf18``'s of the same frames.
UPSCALE_B = 1 / 3
UPSCALE_C = 1 / 3


def downscale(picture: Picture, context: Context) -> str:
    """The filter chain removing the frame's detail above ``context.params["short_side"]`` px, at the frame's own size:
    swscale's area average down to that short side, its bicubic (``UPSCALE_B``, ``UPSCALE_C``) back up (the range
    named: nothing is converted)."""
    width, height = picture.width, picture.height
    short = int(context.params["short_side"])
    if min(height, width) <= short:
        return "null"
    scale = short / min(height, width)
    small_w, small_h = max(1, round(width * scale)), max(1, round(height * scale))
    same = f"in_range={picture.range_name}:out_range={picture.range_name}"
    cubic = f"flags=bicubic:param0={UPSCALE_B:.4g}:param1={UPSCALE_C:.4g}"
    return f"scale=w={small_w}:h={small_h}:flags=area:{same},scale=w={width}:h={height}:{cubic}:{same}"


def blur(picture: Picture, context: Context) -> str:
    """The filter chain blurring each plane by a Gaussian of ``context.params["sigma"]`` px of the picture (``gblur``;
    a subsampled chroma plane by the same distance in its own samples)."""
    sigma = float(context.params["sigma"])
    steps = int(context.params["steps"])
    shift_x, shift_y = picture.chroma_shift
    luma = f"gblur=sigma={sigma:g}:sigmaV={sigma:g}:steps={steps}:planes=1"
    chroma = f"gblur=sigma={sigma / 2**shift_x:g}:sigmaV={sigma / 2**shift_y:g}:steps={steps}:planes=6"
    return f"{luma},{chroma}"


def mute(source: Path, destination: Path, context: Context) -> None:
    """``source``'s video stream (the one the models decode), packet for packet, and nothing else."""
    # PyAV (~0.3 s) only when a file is written, not when the registry reads this module
    import av

    with av.open(str(source)) as reader, av.open(str(destination), "w", format="mp4") as writer:
        stream = reader.streams[context.video_stream if context.video_stream is not None else 0]
        copied = writer.add_stream_from_template(stream, opaque=True)
        # mp4 takes a sample's duration from the next one's timestamp, the last one's from its packet: a packet
        # without one (as some muxers write them) would end the video a frame early.
        rate = stream.average_rate or stream.guessed_rate
        frame_ticks = max(1, round(1 / (rate * stream.time_base))) if rate and stream.time_base else 1
        # The first frame shown at time 0, as decoders show the source: an MPEG-TS stream starts anywhere (10 s, or
        # just before its 33-bit clock wraps); frames an mp4 edit list hides keep their negative times (still hidden).
        start = stream.start_time or 0
        for packet in reader.demux(stream):
            if not packet.size:  # the demuxer's end-of-stream marker
                continue
            if packet.pts is not None:
                packet.pts -= start
            if packet.dts is not None:
                packet.dts -= start
            if not packet.duration:
                packet.duration = frame_ticks
            packet.stream = copied
            writer.mux(packet)


#: The option letters vdg reads, in order: a question has at most eight options.
OPTION_LETTERS = "ABCDEFGH"
#: The rotations declared: every one a question of at most eight options can need.
ROTATIONS = tuple(range(1, len(OPTION_LETTERS)))
#: An option's own letter label ("B. ", "(B) ", "B) ") before its text.
_LABEL = re.compile(r"^\s*\(?[A-H][.)]\s*")


def rotation_order(n: int, k: int) -> list[int]:
    """Position -> the original position of the option asked there, when ``n`` options are rotated by ``k``: option
    ``i`` goes to ``(i + k) mod n``, so position ``j`` holds option ``(j - k) mod n``."""
    return [(j - k) % n for j in range(n)]


def rotate_options(doc: dict[str, Any], context: Context) -> Mapping[str, Any]:
    """The question with its options rotated by ``context.params["rotation"]`` (modulo their number), relabelled
    A, B, ... in order, and its answer the letter its option now has.

    Raises:
        ValueError: fewer than two options, or an answer that names none of them (the question's error row).
    """
    question = doc.get("question_id", "?")
    options = [str(o) for o in doc.get("options") or []]
    n = len(options)
    if not 2 <= n <= len(OPTION_LETTERS):
        raise ValueError(f"question {question}: has {n} option(s); a rotation needs 2 to {len(OPTION_LETTERS)}")
    answer = str(doc.get("answer", ""))
    if len(answer) != 1 or answer not in OPTION_LETTERS[:n]:
        raise ValueError(f"question {question}: its answer {answer!r} is none of its {n} options")
    k = int(context.params[ROTATION])
    texts = [_LABEL.sub("", option, count=1).strip() for option in options]
    rotated = [f"{OPTION_LETTERS[j]}. {texts[i]}" for j, i in enumerate(rotation_order(n, k))]
    return {**doc, "options": rotated, "answer": OPTION_LETTERS[(OPTION_LETTERS.index(answer) + k) % n]}


CONDITIONS = [
    *(
        filter_condition(
            f"downscale{side}",
            downscale,
            description=f"Each frame's detail above a {side} px short side removed (area average down, bicubic back "
            "up to the source's size: as many visual tokens as orig), re-encoded as crf18.",
            family="detail",
            params={
                "short_side": side,
                "down": "area",
                "up": f"bicubic B={UPSCALE_B:.4g} C={UPSCALE_C:.4g}",
                "kernel_version": KERNEL_VERSION,
            },
        )
        for side in SHORT_SIDES
    ),
    filter_condition(
        "blur",
        blur,
        description=f"Each frame blurred by a Gaussian of sigma {BLUR_SIGMA:g} px, re-encoded as crf18.",
        family="detail",
        params={"sigma": BLUR_SIGMA, "steps": BLUR_STEPS, "kernel_version": KERNEL_VERSION},
    ),
    container_condition(
        "mute",
        mute,
        description="The sound removed, the video stream copied packet for packet: beside black, what the model "
        "takes from the sound rather than the pictures.",
        family="audio",
        requires={"audio"},
        beside="black",
        beside_reading="the sound carries {own:+.3f} of the accuracy, the pictures {beside:+.3f} (black keeps it)",
    ),
    *(
        text_condition(
            f"options_rotated{k}",
            rotate_options,
            description=f"Circular evaluation's rotation {k}: option i of a question's N options asked at position "
            f"(i + {k}) mod N, labels A.. in order, the answer moved with its option (no seed).",
            family=CIRCULAR,
            params={ROTATION: k},
            requires={"options"},
            protocols=[f"{CIRCULAR}{n}" for n in range(k + 1, len(OPTION_LETTERS) + 1)],
        )
        for k in ROTATIONS
    ),
]
