"""Randomized hang-ups against a running Parley and the scripted upstream, with invariant checks.

Used by a small fixed-seed test in the suite and by bench/hangup_fuzz.py for the big run.
Each round: a random upstream script (rate, silence before the first token, stall), a random
moment to hang up (before the first token, after k tokens, while queued behind another
turn, the instant the last token arrived (while the run settles), several clients at once,
or never), then the invariants: the stored reply starts with everything delivered, it is
settled (never left `streaming`) with an honest ending, the model is free, and no upstream
stream is left open. `local_round` does the same against the bundled model, where "no
worker left" means the generation thread returned.
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


MOMENTS = ["before_first", "mid", "stalled", "queued", "complete", "settling", "many"]


def one_round(parley: Parley, upstream: ScriptedUpstream, rng: random.Random) -> list[str]:
    moment = rng.choice(MOMENTS)
    if moment == "many":
        return many_at_once(parley, upstream, rng)
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
    elif moment == "settling":
        # Everything is delivered; the upstream's end and the settle are under way.
        stream.read_until(lambda text: text == upstream.script.text())
        stream.hang_up()
    else:
        want = rng.randint(0, stall_after if stall_after is not None else tokens)
        # If the reply ends first, it must be stored complete: checked below.
        with contextlib.suppress(AssertionError):
            stream.read_until(lambda text: text.count(" ") >= want)
        stream.hang_up()
    if holder is not None:
        holder.hang_up()
    full_text = upstream.script.text()
    problems = check_settled(
        parley, conversation_id, message_id, stream.delivered, moment, full_text
    )
    problems += check_released(parley, upstream, before, moment)
    return problems


def check_settled(
    parley: Parley,
    conversation_id: str,
    message_id: str,
    delivered: str,
    moment: str,
    full_text: str | None,
) -> list[str]:
    """Stored ⊇ delivered, settled once with an honest ending; complete means all of it."""
    message = parley.wait_settled(conversation_id, message_id)
    problems = []
    if not message["content"].startswith(delivered):
        problems.append(f"{moment}: stored {message['content']!r} lacks delivered {delivered!r}")
    ending = (message["status"], message["ended_by"])
    if ending not in (("interrupted", "client_hangup"), ("completed", None)):
        problems.append(f"{moment}: dishonest ending {ending}")
    if ending == ("completed", None) and full_text is not None and message["content"] != full_text:
        problems.append(f"{moment}: completed but not the whole reply")
    return problems


def check_released(
    parley: Parley, upstream: ScriptedUpstream, before: int, moment: str
) -> list[str]:
    status = parley.wait_idle()
    problems = []
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


def many_at_once(parley: Parley, upstream: ScriptedUpstream, rng: random.Random) -> list[str]:
    """Several clients (one streaming, the rest queued) hang up in the same instant."""
    upstream.script = Script(tokens=rng.randint(5, 40), rate=rng.choice([500.0, 2000.0]))
    before = len(upstream.records)
    turns = []
    for _ in range(rng.randint(2, 6)):
        conversation_id = parley.new_conversation()
        stream = parley.send(conversation_id)
        turns.append((conversation_id, stream.first["message_id"], stream))
    first = turns[0][2]
    want = rng.randint(0, 4)
    with contextlib.suppress(AssertionError):
        first.read_until(lambda text: text.count(" ") >= want)
    for _, _, stream in rng.sample(turns, len(turns)):
        stream.hang_up()
    problems = []
    for conversation_id, message_id, stream in turns:
        problems += check_settled(
            parley, conversation_id, message_id, stream.delivered, "many", upstream.script.text()
        )
    return problems + check_released(parley, upstream, before, "many")


def run(parley: Parley, upstream: ScriptedUpstream, rounds: int, seed: int) -> FuzzReport:
    rng = random.Random(seed)
    report = FuzzReport()
    for _ in range(rounds):
        report.violations.extend(one_round(parley, upstream, rng))
        report.rounds += 1
    return report


LOCAL_MOMENTS = ["queued", "prefill", "early", "late"]
LONG_PROMPT = "Summarize the following notes. " + "The river rose and fell with the seasons. " * 120


def local_round(parley: Parley, rng: random.Random) -> list[str]:
    """One round against the bundled model (`parley` runs it as its default)."""
    moment = rng.choice(LOCAL_MOMENTS)
    generations = parley.services.models.resolve(None).backend.generations  # type: ignore[attr-defined]
    ran_before = generations[-1] if generations else None
    holders = []
    slots = int(parley.status()["models"][0]["slots"])
    if moment == "queued":  # every slot busy, so the next one waits
        for _ in range(slots):
            holder = parley.send(parley.new_conversation(), "Write a long story about a ship.")
            holder.read_until(lambda text: len(text) > 0)
            holders.append(holder)
    conversation_id = parley.new_conversation()
    content = LONG_PROMPT if moment == "prefill" else "Say hello."
    stream = parley.send(conversation_id, content)
    message_id = stream.first["message_id"]
    if moment == "queued":
        parley.wait_for(lambda: parley.queue_length() == 1)
        stream.hang_up()
        for holder in holders:
            holder.hang_up()
    elif moment == "prefill":
        parley.wait_for(
            lambda: (
                generations
                and generations[-1] is not ran_before
                and generations[-1].prefill_started is not None
            )
        )
        stream.hang_up()
    else:
        # The model's replies are unbounded: "late" reads up to 60 words (or to the end).
        # Words or characters: a reply may run for thousands of tokens with no space
        # ("1,2,3,…" was seen: 52 s of reading before its 60th space).
        want = rng.randint(0, 10) if moment == "early" else 60
        with contextlib.suppress(AssertionError):  # a short reply may end first
            stream.read_until(lambda text: text.count(" ") >= want or len(text) >= want * 8)
        stream.hang_up()
    problems = check_settled(
        parley, conversation_id, message_id, stream.delivered, f"local {moment}", None
    )
    status = parley.wait_idle()
    if any(m["in_use"] or m["queue_length"] for m in status["models"]):
        problems.append(f"local {moment}: model still in use: {status}")
    new = list(generations)
    if ran_before is not None:
        new = new[new.index(ran_before) + 1 :] if ran_before in new else new
    # Exactly the expected generations ran: in "queued", the holders'; the queued one never.
    expected = slots if moment == "queued" else 1
    if len(new) != expected:
        problems.append(f"local {moment}: {len(new)} generations ran, expected {expected}")
    if any(g.returned_at is None for g in new):
        problems.append(f"local {moment}: a generation thread is still running")
    return problems


def run_local(parley: Parley, rounds: int, seed: int) -> FuzzReport:
    rng = random.Random(seed)
    report = FuzzReport()
    for _ in range(rounds):
        report.violations.extend(local_round(parley, rng))
        report.rounds += 1
    return report
