"""SIGKILL at random moments mid-reply, restart on the same data dir, check what survived.

The big run (50 kills, with the figures for lost text) is bench/crash.py; these are the same
rounds, a few of them, each held to the promise of at most 250 ms of delivered text lost.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.crash import CrashRun
from tests.support.upstream import Script, ScriptedUpstream

CRASH_LOSS_PROMISE_MS = 250


@pytest.mark.slow
def test_random_kills_keep_acknowledged_messages_and_mark_replies_crash(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=2000, rate=100)
    # Kill moments count from the acknowledgement here, so every round has one to check
    # (the bench also kills before it).
    run = CrashRun(
        data_dir,
        upstream.base_url,
        upstream.script.text(),
        seed=7,
        max_kill_after_s=0.6,
        from_ack=True,
    )
    for _ in range(5):
        run.round()
    assert [r.violations for r in run.rounds] == [[]] * 5
    assert len(run.acknowledged) == 5
    for r in run.rounds:
        # Whatever was saved was delivered or about to be: never text from elsewhere.
        assert r.delivered.startswith(r.stored) or r.stored.startswith(r.delivered)
        # The promise: a crash loses at most the last 250 ms of delivered text. Checkpoints
        # every Limits.checkpoint_interval (100 ms) keep a margin for a busy machine.
        assert r.lost_ms <= CRASH_LOSS_PROMISE_MS, r
