"""Hang-up -> upstream connection closed, and upstream tokens sent after the hang-up.

Through Parley and directly against the scripted upstream, interleaved in the same run.
Goals: p95 through Parley <= direct p95 + 5 ms; <= 2 upstream tokens after the hang-up
at 200 tok/s.

    python -m bench.hangup [ROUNDS]
"""

from __future__ import annotations

import sys

from bench.harness import processes, show, summary

RATE = 200


def main(rounds: int = 50) -> None:
    direct_ms: list[float] = []
    direct_after: list[float] = []
    parley_ms: list[float] = []
    parley_after: list[float] = []
    with processes() as (upstream, parley):
        upstream.script(tokens=1_000_000, rate=RATE)
        for _ in range(rounds):
            stream = upstream.stream()
            stream.read_until(lambda text: text.count(" ") >= 3)
            moment = stream.hang_up()
            record = upstream.wait_record(lambda r: r["hung_up_at"] is not None)
            direct_ms.append((record["hung_up_at"] - moment) * 1000)
            direct_after.append(sum(1 for t in record["sent"] if t > moment))

            conversation_id = parley.new_conversation()
            stream = parley.stream(conversation_id)
            stream.read_until(lambda text: text.count(" ") >= 3)
            moment = stream.hang_up()
            record = upstream.wait_record(lambda r: r["hung_up_at"] is not None)
            parley_ms.append((record["hung_up_at"] - moment) * 1000)
            parley_after.append(sum(1 for t in record["sent"] if t > moment))
            parley.wait_idle()

    direct = summary(direct_ms)
    through = summary(parley_ms)
    show("hang-up -> upstream closed, direct (ms)", direct)
    show("hang-up -> upstream closed, via Parley (ms)", through)
    show(f"upstream tokens sent after hang-up at {RATE} tok/s, direct", summary(direct_after))
    show(f"upstream tokens sent after hang-up at {RATE} tok/s, via Parley", summary(parley_after))
    print(
        f"goal p95 <= direct + 5 ms: {through['p95']:.2f} vs {direct['p95'] + 5:.2f} -> "
        f"{'met' if through['p95'] <= direct['p95'] + 5 else 'MISSED'}"
    )
    print(
        f"goal <= 2 tokens after hang-up: max {max(parley_after):.0f} -> "
        f"{'met' if max(parley_after) <= 2 else 'MISSED'}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
