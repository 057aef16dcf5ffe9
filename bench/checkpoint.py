"""What a checkpoint costs the server's event loop on a long agent reply.

    python -m bench.checkpoint [ROUNDS] [--quick] [--afresh]

A real ReplyBuffer is driven through a 200-step reply: before each tool step, 20 tokens of
text (some citing one of 20 sources as [n]); the step is added running and then changed to
completed with a result of 2-6 KB; step 100 is a sub-agent with 10 steps of its own and text.
Then the reply goes on streaming text (the tail, 1,000 tokens).

The model: tokens arrive at 50 a second and the run checkpoints every 100 ms
(Limits.checkpoint_interval), so one checkpoint per 5 tokens; a step's start and its end ask
for one each too. Measured on this thread (the event loop's, in the server): the handover,
from the buffer to what is given to the database thread (the reply's `content` and its parts'
JSON), per checkpoint and per token streamed --
- over the whole reply (per checkpoint: the mean; per token: all checkpoints' time over all
  tokens);
- over the tail alone, where each checkpoint carries all 200 steps (per checkpoint: the
  median; per token: the median checkpoint's share, and the mean, which on a busy machine
  holds the few checkpoints the thread was preempted in, 4-12 ms each).
Then the database thread's write (turn_rows.checkpoint, one UPDATE in its transaction, SQLite
in a temp dir) of the tail's last 50 checkpoints, in turn. Each round builds the reply again
(the first round also pays for the process's memory growing); medians of rounds.
--afresh: every part encoded again at each checkpoint, as before the buffer kept their JSON.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.harness import show
from server.agent.buffer import ReplyBuffer
from server.agent.delegate import Asked, SubAgentView
from server.agent.steps import ToolStep
from server.storage import turn_rows
from server.storage.store import Store, TurnStart
from server.types import CitationPartJSON

STEPS = 200
TOKENS_BEFORE_STEP = 20
TAIL_TOKENS = 1_000
TOKENS_PER_CHECKPOINT = 5  # 50 tokens a second, a checkpoint per 100 ms
SOURCES = 20
SUB_AGENT_AT = 100
SUB_AGENT_STEPS = 10
WRITES = 50
WORDS = ("the ", "model ", "reads ", "a ", "file ", "and ", "says ", "what ", "it ", "found. ")


def handover(buffer: ReplyBuffer) -> tuple[str, str | None]:
    """What the run's checkpoint hands the database thread: the content and the parts' JSON
    (server/turns/run.py `_checkpoint`, then Store.checkpoint up to its submit)."""
    return buffer.stored()


def handover_afresh(buffer: ReplyBuffer) -> tuple[str, str | None]:
    """The same, every part encoded again (--afresh)."""
    parts = buffer.json()
    return buffer.text, json.dumps(parts, ensure_ascii=False) if parts is not None else None


def result_text(i: int) -> str:
    line = f"{i:04d} match: src/module_{i % 37}.py: def handler_{i}(request): return 'ok'\n"
    return line * ((2_000 + (i * 97) % 4_000) // len(line))


def source(n: int) -> CitationPartJSON:
    return {
        "type": "citation",
        "n": n,
        "path": f"/home/user/notes/doc_{n}.md",
        "page": None,
        "lines": [n * 10, n * 10 + 8],
        "quote": f"Passage {n}: a few words quoted from the document. " * 3,
    }


class Reply:
    """A reply driven like the agent loop drives one, with a checkpoint when one is due."""

    def __init__(self, hand: Callable[[ReplyBuffer], tuple[str, str | None]]) -> None:
        self.buffer = ReplyBuffer(10_000_000, lambda: None)
        self.hand = hand
        self.tokens = 0
        self.since_checkpoint = 0
        self.costs: list[float] = []  # seconds per checkpoint's handover
        self.handed: list[tuple[str, str | None]] = []  # the last checkpoints' handovers

    def checkpoint(self) -> None:
        started = time.perf_counter()
        handed = self.hand(self.buffer)
        self.costs.append(time.perf_counter() - started)
        self.handed = [*self.handed[-WRITES + 1 :], handed]
        self.since_checkpoint = 0

    def token(self, buffer: ReplyBuffer, text: str) -> None:
        buffer.append(text)
        self.tokens += 1
        self.since_checkpoint += 1
        if self.since_checkpoint >= TOKENS_PER_CHECKPOINT:
            self.checkpoint()

    def text(self, buffer: ReplyBuffer, count: int, cite: int | None) -> None:
        for k in range(count):
            self.token(buffer, WORDS[k % len(WORDS)])
        if cite is not None:
            self.token(buffer, f"[{cite}] ")

    def step(self, buffer: ReplyBuffer, i: int, sub: bool = False) -> ToolStep:
        step = ToolStep(
            id=f"call-{'s' if sub else ''}{i}",
            function="files__grep",
            server="files",
            name="grep",
            arguments=json.dumps({"pattern": f"handler_{i}", "path": "src/"}),
            read_only=True,
        )
        buffer.step_added(step)
        buffer.step_changed(step)
        step.called = True
        return step

    def sub_agent(self, i: int) -> None:
        step = self.step(self.buffer, i)
        child = ReplyBuffer(10_000_000, self.buffer.touched)
        asked = Asked(task="Find every handler", instructions=None, tools=None, model=None)
        step.agent = SubAgentView(asked, "scripted", child)
        for j in range(SUB_AGENT_STEPS):
            self.text(child, TOKENS_BEFORE_STEP, None)
            inner = self.step(child, j, sub=True)
            inner.end("completed", result_text(j))
            child.step_changed(inner)
            self.buffer.touched()
        self.text(child, TOKENS_BEFORE_STEP, None)
        step.end("completed", child.text)
        self.buffer.step_changed(step)

    def build(self) -> None:
        self.buffer.given(tuple(source(n) for n in range(1, SOURCES + 1)))
        for i in range(STEPS):
            cite = 1 + i % (2 * SOURCES) if i % 3 == 0 else None
            self.text(self.buffer, TOKENS_BEFORE_STEP, cite)
            if i == SUB_AGENT_AT:
                self.sub_agent(i)
                continue
            step = self.step(self.buffer, i)
            self.checkpoint()  # the step's start asked for one
            step.end("completed", result_text(i))
            self.buffer.step_changed(step)
            self.checkpoint()


async def write_times(handed: list[tuple[str, str | None]]) -> list[float]:
    """The database thread's time per write of each of these checkpoints (one UPDATE)."""
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "bench.sqlite3")
        await store.open()
        conversation = await store.create_conversation("", None, None)
        await store.open_turn(
            conversation["id"], TurnStart("send", "go"), "m", user_message_id="u", message_id="a"
        )
        times: list[float] = []

        def timed(conn: sqlite3.Connection, content: str, parts: str | None) -> None:
            started = time.perf_counter()
            turn_rows.checkpoint(conn, "a", content, parts, time.time())
            times.append(time.perf_counter() - started)

        for content, parts in handed:
            await store.db.run(timed, content, parts)
        await store.close()
        return times


def one_round(hand: Callable[[ReplyBuffer], tuple[str, str | None]]) -> dict[str, float]:
    reply = Reply(hand)
    reply.build()
    whole_tokens = reply.tokens
    whole_cost = sum(reply.costs)
    whole_count = len(reply.costs)
    reply.costs, tail_from = [], reply.tokens
    reply.text(reply.buffer, TAIL_TOKENS, None)
    tail_tokens = reply.tokens - tail_from
    tail = reply.costs
    writes = asyncio.run(write_times(reply.handed))
    content, parts = reply.handed[-1]
    return {
        "whole_checkpoints": whole_count,
        "whole_ms_per_checkpoint": 1e3 * whole_cost / whole_count,
        "whole_us_per_token": 1e6 * whole_cost / whole_tokens,
        "tail_ms_per_checkpoint": 1e3 * statistics.median(tail),
        "tail_us_per_token": 1e6 * statistics.median(tail) / TOKENS_PER_CHECKPOINT,
        "tail_mean_us_per_token": 1e6 * sum(tail) / tail_tokens,
        "db_write_ms": 1e3 * statistics.median(writes),
        "content_kb": len(content.encode()) / 1e3,
        "parts_kb": len((parts or "").encode()) / 1e3,
    }


def main(rounds: int = 5, afresh: bool = False) -> None:
    hand = handover_afresh if afresh else handover
    results = [one_round(hand) for _ in range(rounds)]
    figures = {key: round(statistics.median(r[key] for r in results), 3) for key in results[0]}
    how = "every part encoded afresh" if afresh else "what changed encoded"
    show(f"checkpoint on a {STEPS}-step reply ({how}), medians of {rounds} rounds", figures)


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if not a.startswith("--")]
    main(1 if "--quick" in sys.argv else (numbers[0] if numbers else 5), "--afresh" in sys.argv)
