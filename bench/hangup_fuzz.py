"""The big randomized hang-up run (scripted upstream): how many invariant violations.

    python -m bench.hangup_fuzz [ROUNDS] [SEED] [LOCAL_ROUNDS]

Goal: 0 violations in 1,000 hang-ups. The same rounds as tests/server/test_hangup_fuzz.py:
ROUNDS against the scripted upstream (default 1,000), then LOCAL_ROUNDS against the bundled
model (default 200).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tests.support import fuzz
from tests.support.parley import Parley, wait_model_ready
from tests.support.upstream import ScriptedUpstream


def main(rounds: int = 1000, seed: int = 1, local_rounds: int = 200) -> None:
    upstream = ScriptedUpstream().start()
    with tempfile.TemporaryDirectory() as tmp:
        parley = Parley(Path(tmp) / "data", upstream.base_url).start()
        started = time.perf_counter()
        try:
            report = fuzz.run(parley, upstream, rounds, seed)
        finally:
            parley.stop()
            upstream.stop()
    elapsed = time.perf_counter() - started
    print(f"rounds {report.rounds}, violations {len(report.violations)}, {elapsed:.0f} s")
    for violation in report.violations[:20]:
        print("  ", violation)
    with tempfile.TemporaryDirectory() as tmp:
        parley = Parley(Path(tmp) / "data").start()
        wait_model_ready(parley)
        started = time.perf_counter()
        try:
            report = fuzz.run_local(parley, local_rounds, seed)
        finally:
            parley.stop()
    elapsed = time.perf_counter() - started
    print(f"bundled model: rounds {report.rounds}, violations {len(report.violations)}, "
          f"{elapsed:.0f} s")  # fmt: skip
    for violation in report.violations[:20]:
        print("  ", violation)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
