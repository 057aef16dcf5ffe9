"""Local models that manage themselves (issue 50): load, evict, unload when idle.

    python -m bench.model_lifecycle [--quick] [--rounds N] [--keep-alive SECONDS]

An in-process Parley (uvicorn on a thread, as the desktop runs it) with the bundled GGUF
under three names, each its own engine process. Figures:
1. three models used one after another, with a memory budget that holds two engines: the
   most engines loaded at any moment (sampled from this process's children), and whether
   each eviction took the least recently used one; one reply streams on a meanwhile and is
   never touched;
2. the time from "unload" to the engine's memory being back (its process gone, its RSS
   with it), and MemAvailable before and after;
3. an idle model unloaded within its keep-alive + 5 s (from the reply's end to the process
   gone);
4. time to first token of a reply that has to unload one model and load another (a budget
   for one), against the same reply with its model loaded.
Run it alone: two cores shared with anything else make every figure slower.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

from bench.harness import show, summary
from server.models import fit
from tests.support.local_models import (
    STORY,
    engine_pid,
    gone,
    lifecycles,
    loaded,
    local_parley,
    one_estimate,
    wait_loaded,
)
from tests.support.parley import Parley
from tests.support.process import child_pids, command_line


def engines() -> int:
    """Engine processes of this process now."""
    return sum(
        1
        for child in child_pids(os.getpid())
        if b"server.models.engine_process" in command_line(child)
    )


class MostEngines:
    """The most engine processes alive at once, sampled every 10 ms on a thread."""

    def __init__(self) -> None:
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> MostEngines:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            self.most = max(self.most, engines())


def first_token(server: Parley, cid: str, text: str, max_tokens: int) -> float:
    """Seconds from the send to the first text; the reply is read to its end."""
    began = time.perf_counter()
    stream = server.send(cid, text, max_tokens=max_tokens)
    stream.read_until(lambda said: len(said) > 0)
    took = time.perf_counter() - began
    stream.read_all()
    return took


def three_in_turn(root: Path, rounds: int, tokens: int) -> None:
    server = local_parley(root / "turns", ["a", "b", "c"], budget=int(one_estimate() * 2.5))
    lru_kept = evictions = 0
    try:
        wait_loaded(server, "a")
        chats = {name: server.new_conversation(model=name) for name in "abc"}
        order: list[str] = ["a"]  # least recently used first
        with MostEngines() as sampler:
            for _ in range(rounds):
                for name in "abc":
                    before = loaded(server)
                    first_token(server, chats[name], "Say hi.", tokens)
                    gone_now = before - loaded(server)
                    if gone_now:
                        evictions += 1
                        lru = next(n for n in order if n in before and n != name)
                        lru_kept += gone_now == {lru}
                    order = [n for n in order if n != name] + [name]
            # A reply in flight on a while b and c take turns: a is never the one to go.
            stream = server.send(chats["a"], STORY)
            stream.read_until(lambda said: len(said) > 20)
            pid = engine_pid(server, "a")
            for name in "bcbc":
                first_token(server, chats[name], "Say hi.", tokens)
            untouched = not gone(pid) and engine_pid(server, "a") == pid
            stream.hang_up()
        show(
            "three models, a budget for two",
            {
                "rounds": rounds,
                "most_engines_at_once": sampler.most,
                "evictions": evictions,
                "evictions_of_the_lru": lru_kept,
                "reply_in_flight_untouched": untouched,
            },
        )
    finally:
        server.stop()


def unload_to_memory_back(root: Path, rounds: int) -> None:
    server = local_parley(root / "unload", ["a"])
    times, freed = [], []
    try:
        for _ in range(rounds):
            assert server.call("POST", "/api/models/local/a/load").status == 200
            pid = engine_pid(server, "a")
            rss = fit.process_rss(pid) or 0
            free_before = fit.available_memory() or 0
            began = time.perf_counter()
            assert server.call("POST", "/api/models/local/a/unload").status == 200
            server.wait_for(lambda pid=pid: gone(pid), timeout=30)
            times.append((time.perf_counter() - began) * 1000)
            freed.append(((fit.available_memory() or 0) - free_before) / 1e6)
        show(
            "unload → memory back (process gone)",
            {
                "engine_rss_mb": round(rss / 1e6),
                "ms": summary(times),
                "mem_available_gain_mb": summary(freed),
            },
        )
    finally:
        server.stop()


def idle_unload(root: Path, keep_alive: int, tokens: int) -> None:
    server = local_parley(root / "idle", ["a"], keep_alive=keep_alive)
    try:
        wait_loaded(server, "a")
        cid = server.new_conversation(model="a")
        stream = server.send(cid, "Say hi.", max_tokens=tokens)
        stream.read_all()
        ended = time.perf_counter()
        pid = engine_pid(server, "a")
        server.wait_for(lambda: gone(pid), timeout=keep_alive + 60)
        after = time.perf_counter() - ended
        show(
            "idle unload",
            {
                "keep_alive_s": keep_alive,
                "unloaded_after_s": round(after, 2),
                "within_keep_alive_plus_5s": after <= keep_alive + 5,
                "state": lifecycles(server)["a"],
            },
        )
    finally:
        server.stop()


def switch_ttft(root: Path, rounds: int, tokens: int) -> None:
    server = local_parley(root / "switch", ["a", "b"], budget=int(one_estimate() * 1.5))
    loaded_ms, switch_ms = [], []
    try:
        wait_loaded(server, "a")
        chats = {name: server.new_conversation(model=name) for name in "ab"}
        current = "a"
        for _ in range(rounds):
            loaded_ms.append(first_token(server, chats[current], "Say hi.", tokens) * 1000)
            current = "b" if current == "a" else "a"
            switch_ms.append(first_token(server, chats[current], "Say hi.", tokens) * 1000)
        show(
            "time to first token: model loaded vs a switch (unload one, load the other)",
            {"loaded_ms": summary(loaded_ms), "switch_ms": summary(switch_ms)},
        )
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round, short replies")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep-alive", type=int, default=10, metavar="SECONDS")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    keep_alive = 1 if args.quick else args.keep_alive
    tokens = 4 if args.quick else 16
    os.environ.setdefault("PARLEY_LOG_DIR", tempfile.mkdtemp(prefix="parley-bench-logs-"))
    with tempfile.TemporaryDirectory(prefix="parley-bench-") as tmp:
        root = Path(tmp)
        three_in_turn(root, rounds, tokens)
        unload_to_memory_back(root, rounds)
        idle_unload(root, keep_alive, tokens)
        switch_ttft(root, rounds, tokens)


if __name__ == "__main__":
    main()
