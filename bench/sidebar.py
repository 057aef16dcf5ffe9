"""Short replies in a window whose sidebar lists a long history (part of bench.desktop).

The sidebar is refreshed when a reply starts (a new chat's title, a chat moved to the top)
and marks the chats replying: with 1,000 chats that was 80-175 ms of the window's thread at
every reply's start (issue 16). After the streams, bench.desktop imports CHATS chats (two
messages each, bench/history.py) and sends ROUNDS 300-token replies in new chats, then
ROUNDS in the same chat: the GUI thread's longest stall from Enter until the reply has
ended and the sidebar has caught up.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from bench.gui_ticker import Ticker
from bench.harness import show, summary
from bench.history import history
from desktop.app import App
from desktop.chats.chat_list import LIST_AFTER_START_MS

CHATS = 1000
ROUNDS = 8


async def one_reply(app: App, upstream: Any, new_chat: bool) -> tuple[float, float]:
    """The reply's longest stall, and its longest with no hypervisor steal counted in it."""
    window = app.window
    upstream.script(tokens=300, rate=None)
    if new_chat:
        window.new_chat()
    window.composer.set_text("A short reply, please")
    await asyncio.sleep(0.1)
    ticker = Ticker()
    finished = asyncio.Event()
    ended = window.reply_finished.connect(lambda _id: finished.set())
    ticker.start()
    started = time.monotonic()
    window.composer.editor.submitted.emit()
    await finished.wait()
    left = LIST_AFTER_START_MS / 1000 - (time.monotonic() - started)
    await asyncio.sleep(max(0.0, left) + 0.2)  # the sidebar's refresh, if still to come
    ticker.stop()
    window.reply_finished.disconnect(ended)
    clean = ticker.longest_without_steal()
    return max(gap.stall for gap in ticker.details), clean.stall if clean is not None else 0.0


async def replies_beside_history(app: App, upstream: Any) -> None:
    client = app.window.client
    assert client is not None
    await client.import_history(json.dumps(history(CHATS, CHATS * 2)).encode())
    await app.window.chat_list.refresh()
    await asyncio.sleep(0.5)
    label = f"{CHATS:,} chats in the sidebar, a 300-token reply"
    for new_chat, where in ((True, "in a new chat"), (False, "in the same chat")):
        measured = [await one_reply(app, upstream, new_chat) for _ in range(ROUNDS)]
        stalls = [stall for stall, _clean in measured]
        worst = max(stalls)
        show(f"{label} {where}: longest GUI stall per reply (ms)", summary(stalls))
        cleans = " ".join(f"{clean:.1f}" for _stall, clean in measured)
        print(f"{label} {where}: worst {worst:.1f} ms "
              f"({'met' if worst <= 16 else 'MISSED'} <= 16 ms); the longest with no "
              f"hypervisor steal in it, per reply (ms): {cleans}")  # fmt: skip
