"""vdg_tasks.perturb.video.audio: AudioCarrier (stream copy or AAC re-encode, shifted timestamps) and interleave.

Sources are audio-only files with a one-second 440 Hz tone at 16 kHz mono written here: AAC in an .m4a (the
mp4 muxer stores it, so it is copied) and mu-law PCM in a .mov (the mp4 muxer cannot store it, so it is
re-encoded). No video is encoded.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from vdg_tasks.perturb.video.audio import AudioCarrier, interleave

RATE, SECONDS, AMPLITUDE = 16000, 1.0, 0.3
N_SAMPLES = int(RATE * SECONDS)
AAC_FRAME = 1024  # samples per AAC frame


def write_tone(path: Path, codec: str) -> Path:
    with av.open(str(path), "w") as out:
        stream = out.add_stream(codec, rate=RATE, layout="mono")
        for start in range(0, N_SAMPLES, 1024):
            t = np.arange(start, min(start + 1024, N_SAMPLES)) / RATE
            samples = (AMPLITUDE * np.sin(2 * np.pi * 440 * t)).astype(np.float32)[None]
            frame = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
            frame.sample_rate, frame.pts = RATE, start
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


@pytest.fixture(scope="module")
def aac_source(tmp_path_factory) -> Path:
    return write_tone(tmp_path_factory.mktemp("audio") / "tone.m4a", "aac")


@pytest.fixture(scope="module")
def mulaw_source(tmp_path_factory) -> Path:
    return write_tone(tmp_path_factory.mktemp("audio") / "tone.mov", "pcm_mulaw")


def source_packets(path: Path) -> list[tuple[bytes, int, int]]:
    """(bytes, pts, dts) of every non-empty audio packet, read before any carrier touches them."""
    with av.open(str(path)) as container:
        return [(bytes(p), p.pts, p.dts) for p in container.demux(audio=0) if p.size]


def carry(source: Path, out_path: Path, shift: Fraction) -> tuple[bool, list[tuple[bytes, int, int]]]:
    """Run every packet of ``source``'s audio through a carrier into ``out_path``; (copy?, output packets)."""
    with av.open(str(source)) as inp, av.open(str(out_path), "w") as out:
        carrier = AudioCarrier(out, inp.streams.audio[0], shift)
        packets = list(carrier.packets(inp.demux(inp.streams.audio[0])))
        got = [(bytes(p), p.pts, p.dts) for p in packets]
        for packet in packets:
            out.mux(packet)
    return carrier.copy, got


def decoded_audio(path: Path) -> tuple[av.AudioStream, np.ndarray]:
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        samples = np.concatenate([f.to_ndarray() for f in container.decode(stream)], axis=1)
        return stream, samples


# --------------------------------------------------------------------------------------------
# Stream copy


def test_a_codec_the_mp4_muxer_stores_is_copied_packet_for_packet(aac_source, tmp_path):
    want = source_packets(aac_source)
    copied, got = carry(aac_source, tmp_path / "copy.mp4", Fraction(0))
    assert copied
    assert got == want
    with av.open(str(tmp_path / "copy.mp4")) as container:
        stream = container.streams.audio[0]
        assert (stream.codec_context.name, stream.sample_rate, stream.layout.name) == ("aac", RATE, "mono")
        assert [bytes(p) for p in container.demux(stream) if p.size] == [data for data, _, _ in want]


@pytest.mark.parametrize(
    ("shift", "ticks"),
    [
        (Fraction(1, 2), 8000),  # 0.5 s at 16 kHz
        (Fraction(1, 3), 5333),  # 5333.33 ticks, rounded
        (Fraction(-1, 4), -4000),  # a source whose video starts before its audio
    ],
)
def test_copied_packets_are_shifted_by_the_video_start_in_the_audio_time_base(aac_source, tmp_path, shift, ticks):
    want = source_packets(aac_source)
    _, got = carry(aac_source, tmp_path / "shifted.mp4", shift)
    assert [data for data, _, _ in got] == [data for data, _, _ in want]
    assert [(pts, dts) for _, pts, dts in got] == [(pts - ticks, dts - ticks) for _, pts, dts in want]


def test_a_copy_drops_the_empty_flush_packet_and_has_nothing_to_flush(aac_source, tmp_path):
    with av.open(str(aac_source)) as inp, av.open(str(tmp_path / "flush.mp4"), "w") as out:
        carrier = AudioCarrier(out, inp.streams.audio[0], Fraction(0))
        assert carrier.copy
        assert carrier.convert(av.Packet(b"")) == []
        assert carrier.flush() == []


def test_a_copied_packet_keeps_a_missing_timestamp_missing(aac_source, tmp_path):
    with av.open(str(aac_source)) as inp, av.open(str(tmp_path / "none.mp4"), "w") as out:
        carrier = AudioCarrier(out, inp.streams.audio[0], Fraction(1, 2))
        packet = av.Packet(b"\x01\x02")
        (shifted,) = carrier.convert(packet)
        assert (shifted.pts, shifted.dts) == (None, None)
        assert shifted.stream is carrier.stream


# --------------------------------------------------------------------------------------------
# Re-encode


def test_a_codec_the_mp4_muxer_cannot_store_is_reencoded_to_aac_at_its_own_rate_and_layout(mulaw_source, tmp_path):
    with av.open(str(mulaw_source)) as inp:
        assert inp.streams.audio[0].codec_context.name == "pcm_mulaw"
    copied, _ = carry(mulaw_source, tmp_path / "aac.mp4", Fraction(0))
    assert not copied
    stream, samples = decoded_audio(tmp_path / "aac.mp4")
    assert (stream.codec_context.name, stream.sample_rate, stream.layout.name) == ("aac", RATE, "mono")
    # every source sample is there, padded at most to a whole AAC frame
    assert N_SAMPLES <= samples.shape[1] < N_SAMPLES + AAC_FRAME
    # the tone survives: a sine of amplitude 0.3 has RMS 0.3 / sqrt(2)
    rms = float(np.sqrt(np.mean(samples[0, :N_SAMPLES] ** 2)))
    assert rms == pytest.approx(AMPLITUDE / np.sqrt(2), rel=0.05)


def test_reencoded_frames_are_shifted_by_the_video_start(mulaw_source, tmp_path):
    _, unshifted = carry(mulaw_source, tmp_path / "s0.mp4", Fraction(0))
    _, shifted = carry(mulaw_source, tmp_path / "s1.mp4", Fraction(1, 2))
    assert len(shifted) == len(unshifted)
    # the same frames encoded 0.5 s (8000 ticks at 16 kHz) earlier
    assert [pts for _, pts, _ in shifted] == [pts - 8000 for _, pts, _ in unshifted]


def test_the_encoder_holds_packets_until_the_flush(mulaw_source, tmp_path):
    with av.open(str(mulaw_source)) as inp, av.open(str(tmp_path / "held.mp4"), "w") as out:
        stream = inp.streams.audio[0]
        carrier = AudioCarrier(out, stream, Fraction(0))
        converted = [p for packet in inp.demux(stream) for p in carrier.convert(packet)]
        flushed = carrier.flush()
    # the 16000 samples and the encoder's 1024 samples of priming make ceil(17024 / 1024) = 17 AAC packets
    assert flushed
    assert len(converted) + len(flushed) == -(-(N_SAMPLES + AAC_FRAME) // AAC_FRAME) == 17


# --------------------------------------------------------------------------------------------
# interleave


def packet(tag: bytes, time_base: Fraction, dts: int | None, pts: int | None = None) -> av.Packet:
    p = av.Packet(tag)
    p.time_base, p.dts, p.pts = time_base, dts, pts
    return p


def test_interleave_orders_packets_by_decode_time_across_time_bases():
    video = [packet(b"v0", Fraction(1, 10), 0), packet(b"v1", Fraction(1, 10), 1), packet(b"v2", Fraction(1, 10), 2)]
    audio = [packet(b"a0", Fraction(1, 1000), 50), packet(b"a1", Fraction(1, 1000), 150)]
    # seconds: v 0, 0.1, 0.2; a 0.05, 0.15
    assert [bytes(p) for p in interleave(video, audio)] == [b"v0", b"a0", b"v1", b"a1", b"v2"]


def test_interleave_uses_pts_without_a_dts_and_0_without_either():
    first = [packet(b"x", Fraction(1, 10), None, pts=3)]  # 0.3 s from its pts
    second = [packet(b"y", Fraction(1, 10), None), packet(b"z", Fraction(1, 10), 5)]  # 0 s, then 0.5 s
    assert [bytes(p) for p in interleave(first, second)] == [b"y", b"x", b"z"]


def test_interleave_keeps_the_first_streams_packet_first_on_a_tie():
    video = [packet(b"v", Fraction(1, 10), 1)]
    audio = [packet(b"a", Fraction(1, 1000), 100)]  # also 0.1 s
    assert [bytes(p) for p in interleave(video, audio)] == [b"v", b"a"]
    assert [bytes(p) for p in interleave(audio, video)] == [b"a", b"v"]


def test_interleave_pulls_packets_lazily():
    pulled = []

    def stream(tag: bytes, n: int):
        for i in range(n):
            pulled.append(tag + bytes([i]))
            yield packet(tag, Fraction(1, 10), i)

    merged = interleave(stream(b"v", 100), stream(b"a", 100))
    next(merged)
    assert len(pulled) <= 3  # one packet ahead per stream, not the whole of either


def test_interleave_of_nothing_is_empty():
    assert list(interleave()) == []
    assert list(interleave([], [])) == []
