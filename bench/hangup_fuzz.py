"""The big randomized hang-up run (scripted upstream): how many invariant violations.

    python -m bench.hangup_fuzz [ROUNDS] [SEED]

Goal: 0 violations in 1,000 hang-ups. The same rounds as tests/server/test_hangup_fuzz.py.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tests.support import fuzz
from tests.support.parley import Parley
from tests.support.upstream import ScriptedUpstream


def main(rounds: int = 1000, seed: int = 1) -> None:
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


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
