"""A large history against parley-server in its own process: import, search, open.

    python -m bench.history [CHATS] [MESSAGES]

Builds a Parley export of CHATS chats holding MESSAGES messages in all (default 1,000 and
100,000; the first chat has 2,000 of them), words drawn Zipf-like from common English words
and 20,000 made-up ones. Imports it in one `POST /api/import` and prints: the import's time
and the server's peak memory (VmHWM); search latency through the API for common, medium,
rare, missing and prefix words and for several words (p50/p95/max, each query 10 times);
the time to open the 2,000-message chat (`GET /api/conversations/{id}`), and to draw it in
the window's transcript (offscreen).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import uuid
from typing import Any
from urllib.parse import quote

from bench.harness import TOKEN, ParleyProcess, processes, show, summary
from bench.library import peak_mb
from tests.support.client import request

# The commonest English words (a few of them are in almost every message).
COMMON_TEXT = """the of and to a in is it you that he was for on are with as I his they be at one
have this from or had by not word but what some we can out other were all there when up use
your how said an each she which do their time if will way about many then them write would
like so these her long make thing see him two has look more"""
COMMON = COMMON_TEXT.split()
MADE_UP = [f"w{i:05d}" for i in range(20_000)]
BIG_CHAT = 2_000


def zipf_words(rng: random.Random, words: list[str], count: int) -> list[str]:
    # Rank r drawn with probability ~ 1/r: a few words everywhere, most words rare.
    top = len(words)
    return [words[min(top - 1, int(top ** rng.random()) - 1)] for _ in range(count)]


def message_text(rng: random.Random) -> str:
    words = zipf_words(rng, COMMON, 30) + zipf_words(rng, MADE_UP, 30)
    rng.shuffle(words)
    return " ".join(words)


def history(chats: int, messages: int) -> dict[str, Any]:
    rng = random.Random(13)
    rest = messages - BIG_CHAT
    sizes = [BIG_CHAT] + [rest // (chats - 1) + (1 if i < rest % (chats - 1) else 0)
                          for i in range(chats - 1)]  # fmt: skip
    now = time.time() - 86_400 * 365
    conversations = []
    for index, size in enumerate(sizes):
        items = []
        parent = None
        for number in range(size):
            message_id = uuid.uuid4().hex
            role = "user" if number % 2 == 0 else "assistant"
            now += 30
            items.append({
                "id": message_id, "parent_id": parent, "role": role,
                "content": message_text(rng), "parts": None, "status": "completed",
                "ended_by": None, "error": None, "model": None if role == "user" else "m",
                "created_at": now, "completed_at": now, "usage": None, "continued": None,
            })  # fmt: skip
            parent = message_id
        conversations.append({
            "id": uuid.uuid4().hex, "title": f"Chat {index} {rng.choice(MADE_UP)}",
            "model": None, "system": None, "tools": True, "documents": False, "params": {},
            "leaf_id": parent, "created_at": now, "updated_at": now, "messages": items,
        })  # fmt: skip
    return {"format": "parley", "version": 1, "exported_at": now, "conversations": conversations}


QUERIES = {
    "common word": ["the", "and", "is", "of", "you"],
    "medium word": [MADE_UP[i] for i in (20, 50, 100, 200, 400)],
    "rare word": [MADE_UP[i] for i in (9000, 12000, 15000, 18000, 19999)],
    "no match": ["zzqqx", "nothinghere", "qwertyuiop", "xylophonics", "unmatched"],
    "prefix": ["w0", "w01", "th", "wo", "a"],
    "three words": [
        "the w00010 and",
        "you w00500 is",
        "w00001 w00002 w00003",
        "of the and",
        "zzqqx the w00020",
    ],
}


def timed(parley: ParleyProcess, path: str) -> float:
    start = time.perf_counter()
    reply = request(parley.port, "GET", path, token=TOKEN, timeout=60)
    assert reply.status == 200, reply.body
    return (time.perf_counter() - start) * 1000


def main() -> None:
    chats = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000
    messages = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    began = time.perf_counter()
    document = history(chats, messages)
    raw = json.dumps(document).encode()
    big = document["conversations"][0]["id"]
    del document
    print(f"built {chats} chats, {messages} messages ({len(raw) / 1e6:.0f} MB of JSON) "
          f"in {time.perf_counter() - began:.1f} s")  # fmt: skip
    with processes() as (_upstream, parley):
        before = parley.rss_mb()
        began = time.perf_counter()
        reply = request(parley.port, "POST", "/api/import", token=TOKEN, body=raw,
                        headers={"Content-Type": "application/json"}, timeout=600)  # fmt: skip
        assert reply.status == 201, reply.body[:300]
        took = time.perf_counter() - began
        print(f"import {chats} chats / {messages} messages: {took:.1f} s "
              f"({messages / took:,.0f} messages/s); server memory {before:.0f} MB before, "
              f"peak {peak_mb(parley):.0f} MB")  # fmt: skip
        del raw
        every: list[float] = []
        for kind, queries in QUERIES.items():
            latencies = [
                timed(parley, f"/api/conversations?q={quote(query)}")
                for query in queries
                for _ in range(10)
            ]
            every += latencies
            show(f"search, {kind} (ms)", summary(latencies))
        show("search, every query (ms)", summary(every))
        opening = [timed(parley, f"/api/conversations/{big}") for _ in range(20)]
        show(f"open the {BIG_CHAT:,}-message chat (ms)", summary(opening))
        reply = request(parley.port, "GET", f"/api/conversations/{big}", token=TOKEN)
        messages = json.loads(reply.body)["messages"]
        for mode, what in (
            ("newest", "its newest messages"),
            ("pages", 'each page of earlier ones ("Show earlier")'),
            ("all", "all of it at once (Find in an earlier message)"),
        ):
            drawn = drawing_times(messages, mode)
            title = f"draw the {BIG_CHAT:,}-message chat in the window, {what} (ms)"
            show(title, summary(drawn))


def drawing_times(messages: list[dict[str, Any]], mode: str) -> list[float]:
    """Drawing these messages in a TranscriptSurface (offscreen Qt, 900x700), laid out and painted:
    as opening the chat does (its newest messages, 5 times), each page of earlier ones as the
    "Show earlier" link draws them, or all of them at once (5 times)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from desktop.transcript.surface import TranscriptSurface

    app = QApplication.instance() or QApplication([])
    view = TranscriptSurface()
    view.resize(900, 700)
    view.show()
    times = []
    if mode == "pages":
        view.show_conversation(messages)  # type: ignore[arg-type]
        app.processEvents()
        while not view.drawn_whole:
            start = time.perf_counter()
            view.show_earlier()
            app.processEvents()
            times.append((time.perf_counter() - start) * 1000)
        return times
    for _ in range(5):
        start = time.perf_counter()
        view.show_conversation(messages, everything=mode == "all")  # type: ignore[arg-type]
        app.processEvents()
        times.append((time.perf_counter() - start) * 1000)
    return times


if __name__ == "__main__":
    main()
