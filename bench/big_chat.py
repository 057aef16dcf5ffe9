"""One 100,000-message chat, read while another chat streams at 50 tok/s (issue 38 item 2).

Each operation on the big chat — its newest page (what the window opens), the whole branch,
the JSON and Markdown exports, selecting another version of its first reply — is timed, with
`/healthz` latency on another connection meanwhile and the largest gap between two
checkpoints of the other reply (read from the database file by a reader of its own).

    python -m bench.big_chat [messages]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import TOKEN, ParleyProcess, processes, show
from bench.imports import Checkpoints
from tests.support.client import request


def generate(path: Path, messages: int) -> int:
    """A Parley export of one chat: a chain of `messages` messages, and a second version of
    its first reply (so there is a branch to select); its size in bytes."""
    items = []
    parent = None
    for m in range(messages):
        mid = f"m{m}"
        role = "user" if m % 2 == 0 else "assistant"
        text = f"message {m} of the long chat, with a few words more to read " * 3
        items.append({"id": mid, "parent_id": parent, "role": role, "content": text,
                      "created_at": 1.7e9 + m})  # fmt: skip
        parent = mid
    items.append({"id": "m1b", "parent_id": "m0", "role": "assistant",
                  "content": "another version", "created_at": 1.8e9})  # fmt: skip
    document = {"format": "parley", "version": 1, "conversations": [
        {"id": "big", "title": "the long chat", "created_at": 1.7e9, "updated_at": 1.7e9,
         "leaf_id": parent, "messages": items}]}  # fmt: skip
    path.write_text(json.dumps(document, separators=(",", ":")))
    return path.stat().st_size


def timed(parley: ParleyProcess, method: str, path: str, body: bytes | None = None) -> dict:
    started = time.perf_counter()
    reply = request(parley.port, method, path, token=TOKEN, body=body, timeout=600,
                    headers={"Content-Type": "application/json"} if body else None)  # fmt: skip
    took = time.perf_counter() - started
    return {"status": reply.status, "ms": round(took * 1000), "bytes": len(reply.body)}


def main(messages: int) -> None:
    from bench.heavy import Sampler

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        size = generate(path, messages)
        with processes() as (upstream, parley):
            reply = request(parley.port, "POST", "/api/import", token=TOKEN,
                            body=path.read_bytes(), timeout=600,
                            headers={"Content-Type": "application/json"})  # fmt: skip
            assert reply.status == 201, reply.body
            cid = next(c["id"] for c in reply_list(parley) if c["title"] == "the long chat")
            upstream.script(tokens=200_000, rate=50)
            other = parley.new_conversation()
            stream = parley.stream(other, "talk")
            assert parley.data_dir is not None
            base = f"/api/conversations/{cid}"
            operations = [
                ("GET newest page (limit=200)", "GET", f"{base}?limit=200", None),
                ("GET whole branch", "GET", base, None),
                ("export JSON", "GET", f"{base}/export?format=json", None),
                ("export Markdown", "GET", f"{base}/export?format=md", None),
                ("select the other version", "POST", f"{base}/select?limit=200",
                 b'{"message_id": "m1b"}'),
                ("select back", "POST", f"{base}/select?limit=200",
                 b'{"message_id": "m1"}'),
            ]  # fmt: skip
            with Sampler(parley) as sampler, Checkpoints(parley.data_dir / "parley.sqlite3") as cps:
                while len(cps.changes) < 5:  # the other reply is being checkpointed
                    time.sleep(0.01)
                figures = {}
                for label, method, url, body in operations:
                    before = len(sampler.latencies_ms)
                    started = time.perf_counter()
                    result = timed(parley, method, url, body)
                    ended = time.perf_counter()
                    time.sleep(0.3)  # a healthz sample and a checkpoint after it
                    during = sampler.latencies_ms[before:] or [0.0]
                    result["healthz_max_ms"] = round(max(during), 1)
                    gaps = cps.gaps(started, ended)
                    result["checkpoint_gap_ms"] = gaps["other_reply_max_checkpoint_gap_ms"]
                    figures[label] = result
            stream.close()
        show(f"a chat of {messages:,} messages ({size / 1e6:.0f} MB as JSON)", figures)


def reply_list(parley: ParleyProcess) -> list[dict]:
    listed = request(parley.port, "GET", "/api/conversations", token=TOKEN, timeout=60)
    return list(listed.json()["conversations"])


if __name__ == "__main__":
    main(int(sys.argv[1]) if sys.argv[1:] else 100_000)
