"""Carry a source's first audio stream into a perturbed output, so every condition has the same sound."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from fractions import Fraction

import av

__all__ = ["AudioCarrier", "interleave"]

#: Codec for sources whose audio codec the mp4 muxer cannot store (rare: DTS, mu-law, WMA, ...).
FALLBACK_AUDIO_CODEC = "aac"


class AudioCarrier:
    """The source's first audio stream in an output: copied packet for packet, or re-encoded to AAC.

    Stream copy (the packets' bytes unchanged) whenever the mp4 muxer can store the codec; otherwise
    the audio is decoded and encoded with AAC at its own sample rate and layout. Timestamps are
    shifted by the source video's start time, since every output's video starts at 0.
    """

    def __init__(self, out: av.container.OutputContainer, source: av.audio.stream.AudioStream, shift: Fraction):
        self.source = source
        self._shift = int(round(shift / source.time_base))  # in the source audio's time base
        self.copy = source.codec_context.codec.canonical_name in out.supported_codecs
        if self.copy:
            self.stream = out.add_stream_from_template(source)
        else:
            ctx = source.codec_context
            self.stream = out.add_stream(FALLBACK_AUDIO_CODEC, rate=ctx.sample_rate, layout=ctx.layout)

    def convert(self, packet: av.Packet) -> list[av.Packet]:
        """The output packets for one demuxed packet of the source's audio stream (an empty one flushes)."""
        if self.copy:
            return [] if packet.size == 0 else [self._shifted(packet)]
        out: list[av.Packet] = []
        for frame in packet.decode():
            if frame.pts is not None:
                frame.pts -= self._shift
            out.extend(self.stream.encode(frame))
        return out

    def flush(self) -> list[av.Packet]:
        """The packets an encoder still holds (none for a stream copy)."""
        return [] if self.copy else list(self.stream.encode(None))

    def packets(self, demuxed: Iterable[av.Packet]) -> Iterator[av.Packet]:
        """The output packets for the source's audio packets ``demuxed``, in order, ending with the flush."""
        for packet in demuxed:
            yield from self.convert(packet)
        yield from self.flush()

    def _shifted(self, packet: av.Packet) -> av.Packet:
        if packet.pts is not None:
            packet.pts -= self._shift
        if packet.dts is not None:
            packet.dts -= self._shift
        packet.stream = self.stream
        return packet


def _seconds(packet: av.Packet) -> Fraction:
    ts = packet.dts if packet.dts is not None else packet.pts
    return Fraction(ts or 0) * packet.time_base


def interleave(*streams_of_packets: Iterable[av.Packet]) -> Iterator[av.Packet]:
    """Merge time-ordered packet streams by decode time, so the muxer need not buffer one stream's packets."""
    return heapq.merge(*streams_of_packets, key=_seconds)
