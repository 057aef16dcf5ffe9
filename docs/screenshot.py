"""Render Parley's window as a user sees it, on the bundled model; save PNGs, light and dark.

    QT_QPA_PLATFORM=offscreen python docs/screenshot.py [OUT_DIR]

Runs the real app (embedded server, bundled model) with its data and settings in a temporary
directory, and grabs: the first launch (a new chat's page), a conversation with code (two
messages typed into the composer as a user would), a reply stopped mid-way, and the About
box; then switches to the dark theme through View → Theme and grabs them again
(NAME-dark.png).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QWidget

from desktop.app import App, finish_qt
from desktop.config import DesktopConfig
from desktop.embedded import launch_settings
from desktop.event_loop import WindowEventLoop

QUESTIONS = [
    "What is the capital of France? Answer in one sentence.",
    "Write a Python function that adds two numbers, in a code block.",
]
LONG = "Tell me a long story about a dragon who learns to bake bread."


async def drive(app: App, out: Path) -> None:
    window = app.window
    while window.client is None or not window.model_picker.state.text().startswith("ready"):
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)

    async def grab(name: str, widget: QWidget | None = None) -> None:
        await asyncio.sleep(0.4)
        path = out / f"{name}.png"
        (widget or window).grab().save(str(path))
        print(f"saved {path}")

    for suffix in ("", "-dark"):
        window.new_chat()
        window.show_welcome()
        await grab(f"first-launch{suffix}")
        for question in QUESTIONS:
            await send(app, question)
        await grab(f"conversation{suffix}")
        window.new_chat()
        finished = asyncio.Event()
        window.reply_finished.connect(lambda _id, f=finished: f.set())
        window.composer.set_text(LONG)
        window.composer.editor.submitted.emit()
        while len(window.transcript.toPlainText()) < len(LONG) + 500 and not finished.is_set():
            await asyncio.sleep(0.05)  # (a model that ends its story sooner: not stopped)
        window.menus.stop.trigger()
        await asyncio.wait_for(finished.wait(), 60)
        await grab(f"stopped{suffix}")
        window.menus.about.trigger()
        about = window.help.dialog
        assert about is not None
        await grab(f"about{suffix}", about)
        about.close()
        window.menus.themes["dark"].trigger()
        await asyncio.sleep(1.0)
    app.request_close()


async def send(app: App, text: str) -> None:
    finished = asyncio.Event()
    app.window.reply_finished.connect(lambda _id, f=finished: f.set())
    app.window.composer.set_text(text)
    app.window.composer.editor.submitted.emit()
    await asyncio.wait_for(finished.wait(), 120)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as temp:
        os.environ["PARLEY_CONFIG_DIR"] = str(Path(temp) / "config")
        os.environ["PARLEY_LOG_DIR"] = str(Path(temp) / "log")
        qapp = QApplication(sys.argv[:1])
        qapp.setQuitOnLastWindowClosed(False)
        loop = WindowEventLoop(qapp)
        asyncio.set_event_loop(loop)
        args = launch_settings(["--data-dir", str(Path(temp) / "data")])
        app = App(args, DesktopConfig(max_tokens=160))
        app.window.resize(1180, 760)
        with loop:
            loop.create_task(drive(app, out))
            loop.run_until_complete(app.run())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finish_qt(qapp, app)


if __name__ == "__main__":
    main()
