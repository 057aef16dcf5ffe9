"""Requests on a kept-alive connection (how every pooled client talks to Parley: the window's
own client, the OpenAI SDK): GET /api/status and the time to the first token of a reply, on one
kept-alive connection and with a new connection each time.

    python -m bench.keepalive [ROUNDS]
"""

from __future__ import annotations

import sys
import time

import httpx

from bench.harness import TOKEN, processes, show, summary


def main(rounds: int = 50) -> None:
    with processes() as (upstream, parley):
        upstream.script(tokens=3)
        base = f"http://127.0.0.1:{parley.port}"
        headers = {"Authorization": f"Bearer {TOKEN}"}
        for label, extra in (("kept alive", {}), ("new connection each", {"Connection": "close"})):
            status_ms, ttft_ms = [], []
            with httpx.Client(base_url=base, headers={**headers, **extra}, timeout=30) as client:
                client.get("/api/status").raise_for_status()
                conversation = client.post("/api/conversations", json={}).json()["id"]
                for _ in range(rounds):
                    started = time.perf_counter()
                    client.get("/api/status").raise_for_status()
                    status_ms.append((time.perf_counter() - started) * 1000)
                    started = time.perf_counter()
                    path = f"/api/conversations/{conversation}/messages"
                    with client.stream("POST", path, json={"content": "hi"}) as reply:
                        for line in reply.iter_lines():
                            if '"content": "t0' in line:
                                ttft_ms.append((time.perf_counter() - started) * 1000)
                        # read to the end: the next message needs this reply settled
            show(f"GET /api/status, {label} (ms)", summary(status_ms))
            show(f"time to first token, {label} (ms)", summary(ttft_ms))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
