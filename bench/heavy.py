"""Heavy replies and slow readers (issue 19): how responsive and how big the server stays.

1. A 40 MB reply from an upstream at full speed, with the reply limit raised above it
   (`--max-reply-chars 50000000`), and with the default limit (the reply is cut at 4 MB):
   `/healthz` latency on another connection meanwhile, the server's peak RSS, the time from
   the upstream's last byte to the reply's final event, and the database's size after.
2. A gzip bomb upstream (~50 KB inflating to 50 MB of SSE lines): how long until the reply
   ends, `/healthz` and RSS meanwhile.
3. A 20 MB reply read by a client at ~100 KB/s for 10 s (then it hangs up), against one that
   reads at full speed: the server's peak RSS.
4. `chunking` (issue 38): passages cut from a log with no blank line, 2 to 18.6 MB (it was
   quadratic: 36 s at 18.6 MB), and from 18.6 MB of odder shapes.
5. `gguf` (issue 38): the time to refuse a hostile GGUF header (a sparse file claiming 64
   million empty strings: read for 59–84 s, then accepted), the worst header the bounds let
   through, the bundled model's real header; six hostile files posted at once to a server,
   with `GET /api/models` and `/healthz` meanwhile.

    python -m bench.heavy [replies] [chunking] [gguf]     (all of them when none is named)
"""

from __future__ import annotations

import random
import socket
import struct
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.harness import (
    TOKEN,
    ParleyProcess,
    Upstream,
    parley_server,
    processes,
    show,
    summary,
)
from server.library.chunking import chunk
from server.library.parsing import Section
from server.limits import GGUFLimits
from server.models import gguf
from server.models.bundled import bundled_gguf
from tests.support.client import request
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


def log_text(megabytes: float) -> str:
    """A log with no blank line in it: one paragraph, as in issue 38."""
    rng = random.Random(38)
    lines: list[str] = []
    size = n = 0
    while size < megabytes * 1_000_000:
        lines.append(
            f"2026-12-02T10:{n // 60 % 60:02d}:{n % 60:02d} INFO worker[{n % 7}] "
            f"request {n} took {rng.randint(1, 999)} ms path=/api/x/{rng.randint(0, 10**6)}"
        )
        size += len(lines[-1]) + 1
        n += 1
    return "\n".join(lines)


def timed_chunks(label: str, text: str) -> None:
    started = time.perf_counter()
    passages = chunk([Section(text)])
    seconds = time.perf_counter() - started
    show(
        label,
        {"mb": round(len(text) / 1e6, 1), "chunk_s": round(seconds, 3), "passages": len(passages)},
    )


def chunking() -> None:
    for megabytes in (2, 4, 8, 18.6):
        timed_chunks(f"chunking a {megabytes} MB log, no blank line", log_text(megabytes))
    size = 18_600_000
    timed_chunks("chunking 18.6 MB on one line", "word " * (size // 5))
    timed_chunks(
        "chunking 18.6 MB, a blank line after every line", log_text(18.4).replace("\n", "\n\n")
    )
    timed_chunks("chunking 18.6 MB of one-character paragraphs", "a\n\n" * (size // 3))


def sparse_gguf(path: Path, keys: int, strings: int, tensors: int = 0) -> Path:
    """A GGUF whose keys each claim `strings` empty strings, and then `tensors` empty tensors:
    everything after the headers of its entries is zeros never written (a sparse file)."""
    with path.open("wb") as file:
        file.write(b"GGUF" + struct.pack("<IQQ", 3, tensors, keys))
        for index in range(keys):
            name = b"k%05d" % index
            file.write(struct.pack("<Q", len(name)) + name + struct.pack("<IIQ", 9, 8, strings))
            file.seek(8 * strings, 1)
        file.seek(24 * tensors, 1)  # name "", 0 dimensions, type 0, offset 0: all zeros
        file.truncate(file.tell() + 4096)
    return path


def time_read(path: Path, rounds: int) -> tuple[list[float], str]:
    times, outcome = [], ""
    for _ in range(rounds):
        started = time.perf_counter()
        try:
            outcome = f"accepted: {gguf.read_gguf(path)}"
        except gguf.GGUFError as exc:
            outcome = f"refused: {exc}"
        times.append((time.perf_counter() - started) * 1000)
    return times, outcome


def gguf_headers() -> None:
    with tempfile.TemporaryDirectory() as folder:
        hostile = sparse_gguf(Path(folder) / "hostile.gguf", 64, 1_000_000)
        times, outcome = time_read(hostile, 5)
        show("GGUF: the hostile header, refused (ms)", summary(times))
        show(
            "GGUF: the hostile header",
            {
                "on_disk_kb": hostile.stat().st_blocks // 2,
                "apparent_mb": round(hostile.stat().st_size / 1e6),
                "outcome": outcome,
            },
        )
        tensors = GGUFLimits.max_tensors
        worst = sparse_gguf(
            Path(folder) / "worst.gguf", 1, GGUFLimits.max_strings - 1 - tensors, tensors
        )
        times, outcome = time_read(worst, 3)
        show("GGUF: the worst header within the bounds (ms)", summary(times))
        show("GGUF: the worst header within the bounds", {"outcome": outcome[:60]})
        times, outcome = time_read(bundled_gguf(), 5)
        show("GGUF: the bundled model's real header (ms)", {**summary(times), "outcome": outcome})
        six = [sparse_gguf(Path(folder) / f"h{n}.gguf", 64, 1_000_000) for n in range(6)]
        six_at_once(six)


def six_at_once(paths: list[Path]) -> None:
    with processes() as (_upstream, parley), Sampler(parley) as sampler:

        def post(path: Path) -> tuple[int, float]:
            started = time.perf_counter()
            reply = request(
                parley.port,
                "POST",
                "/api/models/local",
                token=TOKEN,
                json_body={"path": str(path)},
                timeout=120,
            )
            return reply.status, time.perf_counter() - started

        with ThreadPoolExecutor(7) as pool:
            posts = [pool.submit(post, path) for path in paths]
            started = time.perf_counter()
            listed = request(parley.port, "GET", "/api/models", token=TOKEN, timeout=120)
            listed_s = time.perf_counter() - started
            answers = [future.result() for future in posts]
    show(
        "GGUF: six hostile files posted at once",
        {
            "statuses": [status for status, _ in answers],
            "slowest_answer_s": round(max(seconds for _, seconds in answers), 3),
            "get_api_models_meanwhile_s": round(listed_s, 3),
            "get_status": listed.status,
            "healthz_max_ms": round(max(sampler.latencies_ms), 1),
        },
    )


def replies() -> None:
    big_reply(40, "--max-reply-chars", "50000000")
    big_reply(40)
    gzip_bomb()
    slow_reader(20, 100, 10.0)
    slow_reader(20, None, 60.0)


def _imports() -> None:
    from bench.imports import import_while_streaming  # issue 38: its own module

    import_while_streaming()
    import_while_streaming(kind="chatgpt")


def main() -> None:
    parts = {"replies": replies, "chunking": chunking, "gguf": gguf_headers, "imports": _imports}
    for name in sys.argv[1:] or list(parts):
        parts[name]()


if __name__ == "__main__":
    main()
