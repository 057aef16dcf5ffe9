"""Crash safety: SIGKILL parley-server at random moments mid-reply, 50 times on one data dir.

    python -m bench.crash [KILLS] [SEED] [--local]

Each kill: integrity_check on the files as the crash left them; after a restart, every
acknowledged user message present, the reply marked interrupted/crash, its text a prefix of
what the upstream sent; and the delivered text lost, as ms of the stream before the kill
(goal <= 250 ms). The scripted upstream streams 100 tok/s from its own process; `--local`
uses the bundled model instead (its text is not known in advance: the prefix check is skipped).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import Upstream, _spawn, show, summary
from tests.support.crash import CrashRun
from tests.support.upstream import Script

RATE = 100


def main(kills: int = 50, seed: int = 1, local: bool = False) -> None:
    up_proc = None
    upstream_url = None
    expected = None
    if not local:
        up_proc, upstream_url = _spawn([sys.executable, "-m", "tests.support.upstream"])
        port = int(upstream_url.rsplit(":", 1)[1].split("/")[0])
        Upstream(upstream_url, port).script(tokens=2000, rate=RATE)
        expected = Script(tokens=2000).text()
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run = CrashRun(Path(tmp) / "data", upstream_url, expected, seed=seed)
            for _ in range(kills):
                run.round()
    finally:
        if up_proc is not None:
            up_proc.terminate()
            up_proc.wait(20)
    elapsed = time.perf_counter() - started
    rounds = run.rounds
    violations = [v for r in rounds for v in r.violations]
    lost = [r.lost_ms for r in rounds if r.delivered]
    print(f"backend: {'bundled model' if local else f'scripted upstream at {RATE} tok/s'}")
    print(f"kills {len(rounds)}, {elapsed:.0f} s; acknowledged user messages "
          f"{len(run.acknowledged)}, all present after every restart: "
          f"{not any('acknowledged' in v for v in violations)}")  # fmt: skip
    print(f"violations: {len(violations)}")
    for violation in violations[:20]:
        print("   ", violation)
    show("delivered text lost at a kill (ms of stream)", summary(lost))
    delivered = statistics.mean(len(r.delivered) for r in rounds)
    print(f"kills that lost any delivered text: {sum(ms > 0 for ms in lost)}/{len(lost)}; "
          f"mean delivered {delivered:.0f} chars")  # fmt: skip
    verdict = "met" if lost and max(lost) <= 250 else "MISSED"
    print(f"goal <= 250 ms of text lost: max {max(lost, default=0):.0f} ms -> {verdict}")


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if not a.startswith("--")]
    main(*numbers[:2], local="--local" in sys.argv)
