"""The window with a long chat open: its memory and the time to show the chat.

    QT_QPA_PLATFORM=offscreen QT_QUICK_BACKEND=software python -m bench.window_memory [MESSAGES]

The real app in this process (embedded server, data in a temporary directory, offscreen): a
chat of MESSAGES messages (default 10,000) is imported, then opened from the sidebar as a
user would. Printed: the process's resident memory (VmRSS) with the window up and no chat
open, and once the chat is on screen and drawn; and the time from the click to its newest
message drawn. Run it alone; run it at an older commit to compare one transcript with another
(it uses only what every version of the window has).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_QUICK_BACKEND", "software")

from PySide6.QtWidgets import QApplication

from desktop.app import App, finish_qt
from desktop.embedded import launch_settings
from desktop.event_loop import WindowEventLoop
from desktop.settings.config import DesktopConfig

TITLE = "the long chat"


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def export_of(messages: int) -> bytes:
    """A Parley export of one chat of `messages` messages, a question and a reply in turn."""
    items, parent = [], None
    for m in range(messages):
        role = "user" if m % 2 == 0 else "assistant"
        text = f"message {m} of the long chat, with a few words more to read " * 3
        items.append({"id": f"m{m}", "parent_id": parent, "role": role, "content": text,
                      "created_at": 1.7e9 + m})  # fmt: skip
        parent = f"m{m}"
    document = {"format": "parley", "version": 1, "conversations": [
        {"id": "big", "title": TITLE, "created_at": 1.7e9, "updated_at": 1.7e9,
         "leaf_id": parent, "messages": items}]}  # fmt: skip
    return json.dumps(document, separators=(",", ":")).encode()


async def drive(app: App, messages: int, figures: dict[str, float]) -> None:
    try:
        await measure(app, messages, figures)
    finally:
        app.request_close()


async def until(fact: Callable[[], bool], what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not fact():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {seconds:.0f} s for {what}")
        await asyncio.sleep(0.005)


async def measure(app: App, messages: int, figures: dict[str, float]) -> None:
    window = app.window
    while window.client is None:
        await asyncio.sleep(0.05)
    await window.client.import_history(export_of(messages), duplicates="copy")
    await window.chat_list.refresh()
    rows = window.sidebar.list
    await until(lambda: any(rows.item(i).text() == TITLE for i in range(rows.count())),
                "the imported chat in the sidebar")  # fmt: skip
    await settle()
    figures["before"] = rss_mb()
    last = f"message {messages - 1} of the long chat"
    began = time.perf_counter()
    row = next(i for i in range(rows.count()) if rows.item(i).text() == TITLE)
    rows.setCurrentRow(row)
    await until(lambda: shown_last(window.transcript, last), "its newest message shown")
    window.grab()  # drawn
    figures["open_ms"] = (time.perf_counter() - began) * 1000
    await settle()
    window.grab()
    figures["after"] = rss_mb()


def shown_last(transcript: object, words: str) -> bool:
    """Whether the transcript's newest message holds `words` (the Qt Quick one's rows, or
    an older transcript's whole text)."""
    rows = getattr(transcript, "rows", None)
    if rows is not None:
        count = rows.rowCount()
        return count > 0 and words in rows.text_at(count - 1)
    return words in transcript.toPlainText()  # type: ignore[attr-defined]


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0.05)


def main(messages: int) -> None:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as temp:
        os.environ["PARLEY_CONFIG_DIR"] = str(Path(temp) / "config")
        os.environ["PARLEY_LOG_DIR"] = str(Path(temp) / "log")
        qapp = QApplication(sys.argv[:1])
        qapp.setQuitOnLastWindowClosed(False)
        loop = WindowEventLoop(qapp)
        asyncio.set_event_loop(loop)
        app = App(launch_settings(["--data-dir", str(Path(temp) / "data")]), DesktopConfig())
        app.window.resize(1180, 760)
        app.window.show()
        with loop:
            loop.create_task(drive(app, messages, figures))
            loop.run_until_complete(app.run())
            loop.run_until_complete(loop.shutdown_asyncgens())
        print(f"window, no chat open: {figures['before']:.0f} MB")
        print(f"{messages:,}-message chat open and drawn: {figures['after']:.0f} MB "
              f"(+{figures['after'] - figures['before']:.0f} MB)")  # fmt: skip
        print(f"click to its newest message drawn: {figures['open_ms']:.0f} ms", flush=True)
        finish_qt(qapp, app)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
