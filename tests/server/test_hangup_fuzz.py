"""Randomized hang-ups (fixed seed, modest count): every invariant after every round."""

from __future__ import annotations

from tests.support import fuzz
from tests.support.parley import Parley
from tests.support.upstream import ScriptedUpstream


def test_random_hang_ups_keep_every_invariant(parley: Parley, upstream: ScriptedUpstream) -> None:
    report = fuzz.run(parley, upstream, rounds=25, seed=20261129)
    assert report.rounds == 25
    assert report.violations == []
