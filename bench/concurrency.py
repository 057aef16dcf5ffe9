"""32 simultaneous streams against the bundled model, round after round: memory stays flat?

    python -m bench.concurrency [ROUNDS]

parley-server runs as its own process on the bundled model. Each round: one stream holds the
model, 31 line up behind it (4 hang up while queued), all are read concurrently. Printed per
round (the holder steps aside once the queue has formed): wall time, whether they were served
in arrival order, and the server's resident memory,
threads and open file descriptors (from /proc) once it is idle again.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import TOKEN, ParleyProcess, _spawn
from tests.support.queueing import line_up, overtakes, read_concurrently

STREAMS = 32
HANG_UP = {9, 17, 25, 31}


def proc_figures(pid: int) -> tuple[float, int, int]:
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    rss_mb = int(fields["VmRSS"].split()[0]) / 1024
    return rss_mb, int(fields["Threads"]), len(os.listdir(f"/proc/{pid}/fd"))


def main(rounds: int = 10) -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        proc, line = _spawn([sys.executable, "-m", "server", "--data-dir", data_dir])
        parley = ParleyProcess(int(line.rsplit(":", 1)[1]))
        try:
            deadline = time.monotonic() + 120
            while parley.call("GET", "/api/status")["models"][0]["state"] != "ready":
                assert time.monotonic() < deadline, "the model did not load"
                time.sleep(0.1)
            rss, threads, fds = proc_figures(proc.pid)
            print(f"idle before: rss {rss:.1f} MB, threads {threads}, fds {fds}")
            slots = parley.call("GET", "/api/status")["models"][0]["slots"]
            served = [n for n in range(slots, STREAMS) if n not in HANG_UP]
            rss_by_round = []
            for number in range(rounds):
                started = time.perf_counter()
                streams = line_up(
                    parley.port, TOKEN, STREAMS, queue_length(parley), HANG_UP, slots=slots
                )
                order = read_concurrently({n: streams[n] for n in served})
                parley.wait_idle(30)
                elapsed = time.perf_counter() - started
                rss, threads, fds = proc_figures(proc.pid)
                rss_by_round.append(rss)
                ordered = sorted(order) == served and overtakes(order, served) < slots
                print(f"round {number + 1}: {elapsed:.1f} s, in arrival order {ordered}, "
                      f"rss {rss:.1f} MB, threads {threads}, fds {fds}")  # fmt: skip
            half = len(rss_by_round) // 2
            print(f"rss growth from round {half + 1} to {rounds}: "
                  f"{rss_by_round[-1] - rss_by_round[half]:+.1f} MB")  # fmt: skip
        finally:
            proc.terminate()
            proc.wait(20)


def queue_length(parley: ParleyProcess) -> object:
    return lambda: int(parley.call("GET", "/api/status")["models"][0]["queue_length"])


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
