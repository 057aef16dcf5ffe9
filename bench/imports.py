"""A 1M-message Parley JSON imported while another chat streams at 50 tok/s (issue 38).

Figures: the import's time, the server's peak RSS, `/healthz` latency (p99, max) and the
largest gap between two checkpoints of the other reply, read from the database file by a
reader of its own (WAL: it never waits on the server's writer).

    python -m bench.heavy imports       (1M messages)
    python -m bench.imports [messages]
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

from bench.harness import TOKEN, ParleyProcess, processes, show
from tests.support.client import request

PER_CONVERSATION = 100


def generate(path: Path, messages: int) -> int:
    """A Parley export of `messages` messages, 100 to a conversation; its size in bytes."""
    with path.open("w") as file:
        file.write('{"format": "parley", "version": 1, "conversations": [')
        for c in range(messages // PER_CONVERSATION):
            items, parent = [], None
            for m in range(PER_CONVERSATION):
                mid = f"c{c}m{m}"
                role = "user" if m % 2 == 0 else "assistant"
                text = f"message {m} of chat {c}, a few words"
                item = {"id": mid, "parent_id": parent, "role": role, "content": text}
                items.append({**item, "created_at": 1.7e9 + m})
                parent = mid
            conversation = {"id": f"c{c}", "title": f"chat {c}", "created_at": 1.7e9,
                            "updated_at": 1.7e9, "messages": items}  # fmt: skip
            file.write(("," if c else "") + json.dumps(conversation, separators=(",", ":")))
        file.write("]}")
    return path.stat().st_size


class Checkpoints:
    """Watches the streaming reply's stored text; the times it changed."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.changes: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Checkpoints:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        conn = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=30)
        last = None
        while not self._stop.is_set():
            row = conn.execute(
                "SELECT length(content) FROM messages WHERE status = 'streaming'"
            ).fetchone()
            if row is not None and row[0] != last:
                last = row[0]
                self.changes.append(time.perf_counter())
            self._stop.wait(0.005)
        conn.close()

    def max_gap_ms(self) -> float:
        gaps = [b - a for a, b in zip(self.changes, self.changes[1:], strict=False)]
        return round(max(gaps, default=0.0) * 1000, 1)


def import_while_streaming(messages: int = 1_000_000) -> None:
    from bench.heavy import Sampler

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        size = generate(path, messages)
        with processes() as (upstream, parley):
            upstream.script(tokens=200_000, rate=50)
            other = parley.new_conversation()
            stream = parley.stream(other, "talk")
            assert parley.data_dir is not None
            idle_rss = parley.rss_mb()
            with Sampler(parley) as sampler, Checkpoints(parley.data_dir / "parley.sqlite3") as cps:
                while len(cps.changes) < 5:  # the other reply is being checkpointed
                    time.sleep(0.01)
                started = time.perf_counter()
                reply = _post_file(parley, path)
                took = time.perf_counter() - started
            stream.close()
        ordered = sorted(sampler.latencies_ms)
        p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
        show(
            f"import of {messages:,} messages ({size / 1e6:.0f} MB Parley JSON)",
            {
                "status": reply[0],
                "seconds": round(took, 1),
                "idle_rss_mb": round(idle_rss, 1),
                "peak_rss_mb": round(max(sampler.rss_mb), 1),
                "healthz_p99_ms": round(p99, 1),
                "healthz_n": len(ordered),
                "healthz_max_ms": round(max(sampler.latencies_ms), 1),
                "other_reply_max_checkpoint_gap_ms": cps.max_gap_ms(),
            },
        )


def _post_file(parley: ParleyProcess, path: Path) -> tuple[int, str]:
    reply = request(
        parley.port, "POST", "/api/import", token=TOKEN, body=path.read_bytes(),
        headers={"Content-Type": "application/json"}, timeout=600,
    )  # fmt: skip
    return reply.status, str(reply.body)[:200]


if __name__ == "__main__":
    import sys

    import_while_streaming(int(sys.argv[1]) if sys.argv[1:] else 1_000_000)
