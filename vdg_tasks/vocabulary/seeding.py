"""Seeds derived from stable identifiers.

Every random choice in vdg (frame shuffles, chance guesses, bootstrap resamples, synthetic data)
takes a seed computed here from strings that mean something (a video id, a question id, a model
name). Python's ``hash()`` is salted per process and a shared global stream couples unrelated
draws (a chance baseline that replays the data generator's stream scores 100%), so neither is used.
"""

from __future__ import annotations

import hashlib

import numpy as np


def stable_seed(*parts: object) -> int:
    """A 63-bit seed from the given parts; equal parts give equal seeds on every machine."""
    text = "\x1f".join(str(p) for p in parts)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def rng_for(*parts: object) -> np.random.Generator:
    """An independent numpy Generator for the given stable ids."""
    return np.random.default_rng(stable_seed(*parts))
