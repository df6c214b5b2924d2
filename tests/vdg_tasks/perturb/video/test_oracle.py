"""The oracle condition's video: the source frames at given times, each held for an equal share."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.samplers import SAMPLERS, collapse
from tests.helpers.videos import decode_all, read_index
from vdg_tasks.perturb.video import frames_at, probe, write_held_at

TIMES = (6.9, 0.55, 3.2)  # out of order: the output shows them in time order


def test_frames_at_maps_seconds_to_frames_in_time_order_without_repeats():
    assert frames_at(80, 8.0, [6.9, 0.55, 3.2]).tolist() == [5, 32, 69]
    assert frames_at(80, 8.0, [0.0, 0.01, 9.5]).tolist() == [0, 79]  # same frame once; past the end: the last
    with pytest.raises(ValueError, match="no times given"):
        frames_at(80, 8.0, [])
    with pytest.raises(ValueError, match="duration is 0"):
        frames_at(80, 0, [1.0])


@pytest.fixture(scope="module")
def oracle_output(tmp_path_factory, source_k8):
    out = tmp_path_factory.mktemp("oracle") / "oracle.mp4"
    write_held_at(source_k8, out, TIMES)
    return out


def test_each_time_is_held_for_an_equal_share_in_time_order(oracle_output, source_k8):
    info = probe(source_k8)
    shown = [read_index(rgb) for rgb in decode_all(oracle_output)]
    expected = [int(np.floor(t / info.duration * info.n_frames)) for t in sorted(TIMES)]
    assert collapse(shown) == expected
    runs = [shown.count(i) for i in expected]
    assert max(runs) - min(runs) <= 1  # equal segments (+-1 frame)
    assert probe(oracle_output).duration == pytest.approx(info.duration, abs=0.15)


@pytest.mark.parametrize("sampler", sorted(SAMPLERS))
def test_a_uniform_16_frame_sampler_sees_every_oracle_frame(oracle_output, source_k8, sampler):
    info = probe(source_k8)
    seen = collapse([read_index(rgb) for rgb in SAMPLERS[sampler](oracle_output, 16)])
    assert seen == sorted(int(np.floor(t / info.duration * info.n_frames)) for t in TIMES)
