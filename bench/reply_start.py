"""A reply's start and end in the window: the GUI thread's longest stall from Enter on a
pasted 600-word question until its short reply has ended, alone and beside a CPU-bound
process (the part of bench.desktop that issue 49's goal is missed by; this runs it alone).

    python -m bench.reply_start [ROUNDS]

Prints, for each, the longest stall per reply and the GUI thread's own CPU time within it:
a stall with little CPU of its own was the machine's (another process had the core).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import bench.desktop as desktop_bench
from desktop.app import App


async def start_and_end(app: App, upstream: Any, rounds: int) -> None:
    while app.window.client is None:
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)  # the launch's own work (the list, the status) done
    await desktop_bench.send_long_questions(app, upstream, rounds=rounds)
    with desktop_bench.competing_process():
        print("with a competing process:")
        await desktop_bench.send_long_questions(app, upstream, rounds=rounds)
    app.request_close()


def main(rounds: int = 10) -> None:
    async def run(app: App, upstream: Any, _tokens: int) -> None:
        await start_and_end(app, upstream, rounds)

    desktop_bench.in_process = run
    desktop_bench.launch_times = lambda *args, **kwargs: None
    desktop_bench.main(0)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
