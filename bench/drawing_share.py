"""What the window's drawing of a reply adds to its frame gaps, and what it does not (issue 16).

    python -m bench.drawing_share [TOKENS] [--pairs N] [--competing] [--watch-vm] [--slow-cores]

Max-rate replies of TOKENS tokens (default 3,000) from the scripted upstream, the app in this
process (offscreen) as in bench/desktop.py, alternated reply by reply: drawn as always, or not
drawn (the transcript drops the reply's text and draws no ending; the window still reads the
whole stream, and the server still relays and saves it). On a noisy VM only replies
alternated within one process compare. Per side it prints each reply's p99 frame gap and
longest stall (less the VM's pauses with --watch-vm, root), their medians and how many
stalls were over 16 ms, and how long the window's thread and the server's ran and waited for a
core in a reply (bench/thread_times.py, medians). `--competing`: a CPU-bound process beside
the app throughout. `--slow-cores`: every core slowed to about half speed (bench/slow_cores.py,
root), the issue's slower machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import sys
from typing import Any

import bench.desktop as desktop_bench
from bench.gui_ticker import STALL_GOAL_MS
from bench.slow_cores import slow_cores
from bench.thread_times import since, thread_times
from bench.vm_pauses import Pauses, watching_vm
from desktop.app import App
from desktop.client import ReplyEnd
from desktop.transcript.surface import TranscriptSurface

SIDES = ("drawn", "not drawn")


def _not_grown() -> None:
    """The transcript's reply_grew while a reply is not drawn (the reply still holds it)."""


def _not_drawn(transcript: TranscriptSurface) -> None:
    """The transcript draws none of the next reply: its text is dropped, and its ending only
    says it ended (drawn, it would draw the whole reply the view never received)."""

    def ended(_end: ReplyEnd | None, _note: str = "") -> None:
        transcript.reply_ended.emit()

    transcript.reply_grew = _not_grown  # type: ignore[method-assign]
    transcript.end_reply = ended  # type: ignore[method-assign,assignment]


Threads = dict[str, tuple[float, float]]  # thread_times.since: (run_ms, wait_ms) by thread


async def _one_reply(
    app: App, upstream: Any, tokens: int, drawn: bool
) -> tuple[float, float, Threads]:
    """(p99 frame gap, longest stall, the threads' run and wait) of one max-rate reply, the
    first two less the VM's pauses if watched."""
    transcript = app.window.transcript
    if not drawn:
        _not_drawn(transcript)
    before = thread_times()
    try:
        stall = await desktop_bench.stream_and_measure(app, upstream, tokens, None, quiet=True)
    finally:
        if not drawn:
            del transcript.reply_grew, transcript.end_reply
    spent = since(before)
    if desktop_bench.PAUSES:
        return desktop_bench.P99_UNPAUSED[-1], desktop_bench.UNPAUSED[-1], spent
    return desktop_bench.P99_GAPS[-1], stall, spent


def _threads_line(replies: list[Threads]) -> str:
    """The median per reply of each thread's run and wait (ms), as one clause each."""
    clauses = []
    for label in ("window", "server"):
        read = [spent[label] for spent in replies if label in spent]
        if read:
            run = statistics.median(run for run, _ in read)
            wait = statistics.median(wait for _, wait in read)
            ran = f"the {label}'s thread ran {run:.0f} ms"
            clauses.append(f"{ran}, waited for a core {wait:.0f} ms")
    return "; ".join(clauses) if clauses else "no thread times on this system"


async def _alternate(app: App, upstream: Any, tokens: int, pairs: int, competing: bool) -> None:
    try:
        while app.window.client is None:
            await asyncio.sleep(0.05)
        await _one_reply(app, upstream, tokens, True)  # a first reply warms the path up
        results: dict[str, list[tuple[float, float, Threads]]] = {side: [] for side in SIDES}
        beside = desktop_bench.competing_process() if competing else contextlib.nullcontext()
        with beside:
            for pair in range(pairs):
                for side in SIDES if pair % 2 == 0 else reversed(SIDES):
                    results[side].append(await _one_reply(app, upstream, tokens, side == "drawn"))
        less = " less the VM's pauses" if desktop_bench.PAUSES else ""
        label = f"{tokens} tokens at max rate{' with a competing process' if competing else ''}"
        for side in SIDES:
            gaps = [gap for gap, _, _ in results[side]]
            stalls = [stall for _, stall, _ in results[side]]
            over = sum(stall > STALL_GOAL_MS for stall in stalls)
            print(f"{label}, {side}: p99 frame gap{less} per reply (ms): "
                  f"{' '.join(f'{gap:.1f}' for gap in gaps)}; median "
                  f"{statistics.median(gaps):.2f} ms")  # fmt: skip
            print(f"{label}, {side}: longest stall{less} per reply (ms): "
                  f"{' '.join(f'{stall:.1f}' for stall in stalls)}; median "
                  f"{statistics.median(stalls):.1f} ms; "
                  f"over 16 ms: {over}/{len(stalls)}")  # fmt: skip
            threads = _threads_line([spent for _, _, spent in results[side]])
            print(f"{label}, {side}: per reply, median: {threads}")
    finally:
        app.request_close()


def main(tokens: int, pairs: int, competing: bool, watch_vm: bool, slowed: bool = False) -> None:
    async def run(app: App, upstream: Any, tokens: int) -> None:
        await _alternate(app, upstream, tokens, pairs, competing)

    desktop_bench.in_process = run
    desktop_bench.launch_times = lambda *args, **kwargs: None
    watched: contextlib.AbstractContextManager[Pauses | None] = contextlib.nullcontext()
    if watch_vm:
        watched = watching_vm()
    slowing: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if slowed:
        slowing = slow_cores()
    with slowing, watched as pauses:
        if pauses is not None:
            desktop_bench.PAUSES.append(pauses)
        desktop_bench.main(tokens)


if __name__ == "__main__":
    if "--help" in sys.argv or "-h" in sys.argv:
        print(__doc__)
        sys.exit(0)
    args = sys.argv[1:]
    pairs = int(args[args.index("--pairs") + 1]) if "--pairs" in args else 6
    numbers = [
        a for i, a in enumerate(args) if a.isdigit() and (i == 0 or args[i - 1] != "--pairs")
    ]
    main(
        int(numbers[0]) if numbers else 3000,
        pairs,
        "--competing" in args,
        "--watch-vm" in args,
        "--slow-cores" in args,
    )
