"""Randomized hang-ups (fixed seed, modest count): every invariant after every round."""

from __future__ import annotations

from tests.support import fuzz
from tests.support.parley import Parley
from tests.support.upstream import ScriptedUpstream


def test_random_hang_ups_keep_every_invariant(parley: Parley, upstream: ScriptedUpstream) -> None:
    report = fuzz.run(parley, upstream, rounds=25, seed=20261129)
    assert report.rounds == 25
    assert report.violations == []


def test_random_hang_ups_against_the_local_model(local_parley: Parley) -> None:
    report = fuzz.run_local(local_parley, rounds=8, seed=20261129)
    assert report.rounds == 8
    assert report.violations == []
