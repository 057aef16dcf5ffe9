"""Randomized hang-ups against a running Parley and the scripted upstream, with invariant checks.

Used by a small fixed-seed test in the suite and by bench/hangup_fuzz.py for the big run.
Each round: a random upstream script (rate, silence before the first token, stall), a random
moment to hang up (before the first token, after k tokens, while queued behind another
turn, or never), then the invariants: the stored reply starts with everything delivered, it
is settled (never left `streaming`) with an honest ending, the model is free, and no
upstream stream is left open.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass, field

from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


@dataclass
class FuzzReport:
    rounds: int = 0
    violations: list[str] = field(default_factory=list)


def one_round(parley: Parley, upstream: ScriptedUpstream, rng: random.Random) -> list[str]:
    moment = rng.choice(["before_first", "mid", "stalled", "queued", "complete"])
    tokens = rng.randint(1, 40)
    stall_after = rng.randint(0, tokens) if moment in ("stalled", "queued") else None
    upstream.script = Script(
        tokens=tokens,
        rate=rng.choice([None, 500.0, 2000.0]),
        first_delay=rng.choice([0.0, 0.0, 0.01]) if moment != "before_first" else 5.0,
        stall_after=stall_after,
    )
    before = len(upstream.records)
    holder = None
    if moment == "queued":
        holder_conversation = parley.new_conversation()
        holder = parley.send(holder_conversation)
        holder.first  # noqa: B018 - started
        parley.wait_for(lambda: parley.status()["models"][0]["in_use"])
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    message_id = stream.first["message_id"]
    if moment == "queued":
        parley.wait_for(lambda: parley.queue_length() == 1)
        stream.hang_up()
    elif moment == "before_first":
        parley.wait_for(lambda: len(upstream.records) > before)
        stream.hang_up()
    elif moment == "complete":
        stream.read_all()
    else:
        want = rng.randint(0, stall_after if stall_after is not None else tokens)
        # If the reply ends first, it must be stored complete: checked below.
        with contextlib.suppress(AssertionError):
            stream.read_until(lambda text: text.count(" ") >= want)
        stream.hang_up()
    if holder is not None:
        holder.hang_up()
    delivered = stream.delivered
    message = parley.wait_settled(conversation_id, message_id)
    status = parley.wait_idle()
    problems = []
    if not message["content"].startswith(delivered):
        problems.append(f"{moment}: stored {message['content']!r} lacks delivered {delivered!r}")
    ending = (message["status"], message["ended_by"])
    if ending not in (("interrupted", "client_hangup"), ("completed", None)):
        problems.append(f"{moment}: dishonest ending {ending}")
    if ending == ("completed", None) and message["content"] != upstream.script.text():
        problems.append(f"{moment}: completed but not the whole reply")
    if any(m["in_use"] or m["queue_length"] for m in status["models"]):
        problems.append(f"{moment}: model still in use: {status}")
    open_streams = [r for r in upstream.records[before:] if r.hung_up_at is None and not r.finished]
    if open_streams:
        # A hang-up reaches the upstream within milliseconds; give it a moment.
        try:
            upstream.wait_for(
                lambda: all(r.hung_up_at is not None or r.finished for r in open_streams)
            )
        except TimeoutError:
            problems.append(f"{moment}: {len(open_streams)} upstream stream(s) left open")
    return problems


def run(parley: Parley, upstream: ScriptedUpstream, rounds: int, seed: int) -> FuzzReport:
    rng = random.Random(seed)
    report = FuzzReport()
    for _ in range(rounds):
        report.violations.extend(one_round(parley, upstream, rng))
        report.rounds += 1
    return report
