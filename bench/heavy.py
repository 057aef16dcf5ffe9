"""Heavy replies and slow readers (issue 19): how responsive and how big the server stays.

1. A 40 MB reply from an upstream at full speed, with the reply limit raised above it
   (`--max-reply-chars 50000000`), and with the default limit (the reply is cut at 4 MB):
   `/healthz` latency on another connection meanwhile, the server's peak RSS, the time from
   the upstream's last byte to the reply's final event, and the database's size after.
2. A gzip bomb upstream (~50 KB inflating to 50 MB of SSE lines): how long until the reply
   ends, `/healthz` and RSS meanwhile.
3. A 20 MB reply read by a client at ~100 KB/s for 10 s (then it hangs up), against one that
   reads at full speed: the server's peak RSS.

    python -m bench.heavy
"""

from __future__ import annotations

import socket
import threading
import time

from bench.harness import (
    TOKEN,
    ParleyProcess,
    Upstream,
    parley_server,
    processes,
    show,
    summary,
)
from tests.support.hostile_upstream import GzipBombUpstream

TOKEN_CHARS = 1_000


class Sampler:
    """Polls `/healthz` (its latency) and the server's RSS until stopped."""

    def __init__(self, parley: ParleyProcess) -> None:
        self.parley = parley
        self.healthz = (
            f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{parley.port}\r\nConnection: close\r\n\r\n"
        ).encode()
        self.latencies_ms: list[float] = []
        self.rss_mb: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.rss_mb.append(self.parley.rss_mb())
            started = time.perf_counter()
            with socket.create_connection(("127.0.0.1", self.parley.port), timeout=120) as sock:
                sock.sendall(self.healthz)
                while sock.recv(65536):
                    pass
            self.latencies_ms.append((time.perf_counter() - started) * 1000)
            self._stop.wait(0.05)


def send_raw(parley: ParleyProcess, conversation_id: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", parley.port))
    body = b'{"content": "go"}'
    sock.sendall(
        f"POST /api/conversations/{conversation_id}/messages HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{parley.port}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    return sock


def offer_reply(upstream: Upstream, parley: ParleyProcess, megabytes: int) -> tuple[str, float]:
    """Script a reply of that size; a new conversation for it, and the server's idle RSS."""
    upstream.script(tokens=megabytes * 1_000_000 // TOKEN_CHARS, token_chars=TOKEN_CHARS)
    return parley.new_conversation(), parley.rss_mb()


def big_reply(megabytes: int, *flags: str) -> None:
    with processes(*flags) as (upstream, parley):
        conversation_id, idle_rss = offer_reply(upstream, parley, megabytes)
        with Sampler(parley) as sampler:
            sock = send_raw(parley, conversation_id)
            received = 0
            while piece := sock.recv(1 << 20):
                received += len(piece)
            final_at = time.perf_counter()
            sock.close()
        record = upstream.records()[-1]
        upstream_end = record["sent"][-1] if record["sent"] else final_at
        label = f"{megabytes} MB reply {' '.join(flags) or '(default limit)'}"
        show(f"{label}: /healthz meanwhile (ms)", summary(sampler.latencies_ms))
        db = parley.data_dir
        assert db is not None
        sizes = {p.name: round(p.stat().st_size / 1e6, 1) for p in db.glob("parley.sqlite3*")}
        show(
            f"{label}: server",
            {
                "idle_rss_mb": round(idle_rss, 1),
                "peak_rss_mb": round(max(sampler.rss_mb), 1),
                "bytes_to_client_mb": round(received / 1e6, 1),
                "upstream_tokens_sent": len(record["sent"]),
                "final_after_upstream_end_s": round(final_at - upstream_end, 2),
                **{f"{name}_mb": size for name, size in sizes.items()},
            },
        )


def gzip_bomb() -> None:
    bomb = GzipBombUpstream().start()
    try:
        with parley_server(bomb.base_url) as parley, Sampler(parley) as sampler:
            conversation_id = parley.new_conversation()
            started = time.perf_counter()
            sock = send_raw(parley, conversation_id)
            received = b""
            while piece := sock.recv(1 << 20):
                received += piece
            ended_s = time.perf_counter() - started
            sock.close()
        refused = b"compressed stream" in received
        show("gzip bomb: /healthz meanwhile (ms)", summary(sampler.latencies_ms))
        show(
            "gzip bomb: server",
            {
                "reply_ended_s": round(ended_s, 3),
                "refused": refused,
                "peak_rss_mb": round(max(sampler.rss_mb), 1),
            },
        )
    finally:
        bomb.stop()


def slow_reader(megabytes: int, rate_kb_s: int | None, seconds: float) -> None:
    flags = ("--max-reply-chars", str(megabytes * 2_000_000))
    with processes(*flags) as (upstream, parley):
        conversation_id, idle_rss = offer_reply(upstream, parley, megabytes)
        with Sampler(parley) as sampler:
            sock = send_raw(parley, conversation_id)
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                if rate_kb_s is None:
                    if not sock.recv(1 << 20):
                        break
                else:
                    sock.recv(rate_kb_s * 100)
                    time.sleep(0.1)
            sock.close()
            parley.wait_idle(30)
        speed = f"{rate_kb_s} KB/s" if rate_kb_s else "full speed"
        label = f"{megabytes} MB reply, reader at {speed}"
        show(
            label,
            {
                "idle_rss_mb": round(idle_rss, 1),
                "peak_rss_mb": round(max(sampler.rss_mb), 1),
                "healthz_max_ms": round(max(sampler.latencies_ms), 1),
            },
        )


def main() -> None:
    big_reply(40, "--max-reply-chars", "50000000")
    big_reply(40)
    gzip_bomb()
    slow_reader(20, 100, 10.0)
    slow_reader(20, None, 60.0)


if __name__ == "__main__":
    main()
