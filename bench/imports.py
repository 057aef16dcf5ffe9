"""A 1M-message Parley JSON imported while another chat streams at 50 tok/s (issue 38).

Figures: the import's time, the server's peak RSS, `/healthz` latency (p99, max) and the
largest gap between two checkpoints of the other reply, read from the database file by a
reader of its own (WAL: it never waits on the server's writer).

    python -m bench.heavy imports       (1M messages)
    python -m bench.imports [messages] [parley|chatgpt]
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


def generate_chatgpt(path: Path, messages: int) -> int:
    """ChatGPT's conversations.json of `messages` message nodes (100 to a conversation, under
    a root node with no message, as ChatGPT writes them); its size in bytes."""
    with path.open("w") as file:
        file.write("[")
        for c in range(messages // PER_CONVERSATION):
            mapping: dict[str, object] = {"root": {"id": "root", "message": None, "parent": None,
                                                   "children": ["n0"]}}  # fmt: skip
            parent = "root"
            for m in range(PER_CONVERSATION):
                key = f"n{m}"
                message = {
                    "id": key, "author": {"role": "user" if m % 2 == 0 else "assistant"},
                    "create_time": 1.7e9 + m, "metadata": {},
                    "content": {"content_type": "text", "parts": [f"message {m} of chat {c}"]},
                }  # fmt: skip
                children = [f"n{m + 1}"] if m + 1 < PER_CONVERSATION else []
                mapping[key] = {"id": key, "message": message, "parent": parent,
                                "children": children}  # fmt: skip
                parent = key
            conversation = {"title": f"chat {c}", "create_time": 1.7e9, "update_time": 1.7e9,
                            "mapping": mapping, "current_node": parent}  # fmt: skip
            file.write(("," if c else "") + json.dumps(conversation, separators=(",", ":")))
        file.write("]")
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

    def gaps(self, start: float, end: float) -> dict[str, object]:
        """Between `start` and `end`: the largest gap, when it ended (s after `start`), and
        how many were over 250 ms."""
        pairs = [(b - a, b) for a, b in zip(self.changes, self.changes[1:], strict=False)]
        pairs = [(gap, at) for gap, at in pairs if start <= at <= end + 1.0]
        gap, at = max(pairs, default=(0.0, start))
        return {
            "other_reply_max_checkpoint_gap_ms": round(gap * 1000, 1),
            "max_gap_at_s": round(at - start, 1),
            "gaps_over_250_ms": sum(1 for g, _ in pairs if g > 0.25),
            "checkpoints": len(pairs),
        }


def import_while_streaming(messages: int = 1_000_000, kind: str = "parley") -> None:
    from bench.heavy import Sampler

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        size = (generate_chatgpt if kind == "chatgpt" else generate)(path, messages)
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
                ended = time.perf_counter()
                took = ended - started
                during = len(sampler.latencies_ms)
                # Then its messages enter the search index in the background.
                while _search_backlog(parley):
                    time.sleep(0.1)
                indexed = time.perf_counter()
            stream.close()
        ordered = sorted(sampler.latencies_ms[:during])
        p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
        after = sorted(sampler.latencies_ms[during:]) or [0.0]
        after_p99 = after[min(len(after) - 1, round(0.99 * (len(after) - 1)))]
        show(
            f"import of {messages:,} messages ({size / 1e6:.0f} MB {kind} JSON)",
            {
                "status": reply[0],
                "seconds": round(took, 1),
                "idle_rss_mb": round(idle_rss, 1),
                "peak_rss_mb": round(max(sampler.rss_mb), 1),
                "healthz_p99_ms": round(p99, 1),
                "healthz_n": len(ordered),
                "healthz_max_ms": round(max(sampler.latencies_ms), 1),
                **cps.gaps(started, ended),
            },
        )
        show(
            "  then its search indexing in the background",
            {
                "seconds": round(indexed - ended, 1),
                "healthz_p99_ms": round(after_p99, 1),
                "healthz_max_ms": round(max(after), 1),
                **cps.gaps(ended, indexed),
            },
        )


def _search_backlog(parley: ParleyProcess) -> int:
    reply = request(parley.port, "GET", "/api/status", token=TOKEN, timeout=60)
    return int(reply.json().get("search_backlog", 0))


def _post_file(parley: ParleyProcess, path: Path) -> tuple[int, str]:
    reply = request(
        parley.port, "POST", "/api/import", token=TOKEN, body=path.read_bytes(),
        headers={"Content-Type": "application/json"}, timeout=600,
    )  # fmt: skip
    return reply.status, str(reply.body)[:200]


if __name__ == "__main__":
    import sys

    count = int(sys.argv[1]) if sys.argv[1:] else 1_000_000
    import_while_streaming(count, sys.argv[2] if sys.argv[2:] else "parley")
