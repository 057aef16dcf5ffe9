"""Render Parley's window with a real conversation on the bundled model; save two PNGs.

    QT_QPA_PLATFORM=offscreen python docs/screenshot.py [OUT.png]

Runs the real app (embedded server, bundled model) in a temporary data directory, types two
messages into the composer as a user would, waits for each reply, and grabs the window; then
switches the application to a dark palette, as a system theme change would, waits for the
conversation to be redrawn, and grabs it again (OUT-dark.png).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from desktop.app import App, finish_qt
from desktop.config import DesktopConfig
from desktop.embedded import launch_settings

QUESTIONS = [
    "What is the capital of France?",
    "Write a Python function that adds two numbers, in a code block.",
]


async def drive(app: App, out: Path) -> None:
    window = app.window
    while window.client is None or window.model_picker.state.text() != "ready":
        await asyncio.sleep(0.05)
    for question in QUESTIONS:
        finished = asyncio.Event()
        window.reply_finished.connect(lambda _id, f=finished: f.set())
        window.composer.set_text(question)
        window.composer.editor.submitted.emit()
        await asyncio.wait_for(finished.wait(), 120)
    await asyncio.sleep(0.3)
    window.grab().save(str(out))
    print(f"saved {out}")
    QApplication.setPalette(dark_palette())
    while "#272822" not in window.transcript.toHtml():  # the code block, redrawn dark
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    dark = out.with_name(f"{out.stem}-dark{out.suffix}")
    window.grab().save(str(dark))
    print(f"saved {dark}")
    app.request_close()


def dark_palette() -> QPalette:
    palette = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#2b2b2e",
        QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#1e1e20",
        QPalette.ColorRole.AlternateBase: "#2b2b2e",
        QPalette.ColorRole.Text: "#e6e6e6",
        QPalette.ColorRole.Button: "#3a3a3d",
        QPalette.ColorRole.ButtonText: "#e6e6e6",
        QPalette.ColorRole.Highlight: "#3d6fb6",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.PlaceholderText: "#9a9a9a",
        QPalette.ColorRole.Link: "#8ab4f8",
    }
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    return palette


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshot.png").resolve()
    with tempfile.TemporaryDirectory() as data_dir:
        qapp = QApplication(sys.argv[:1])
        qapp.setQuitOnLastWindowClosed(False)
        loop = qasync.QEventLoop(qapp)
        asyncio.set_event_loop(loop)
        args = launch_settings(["--data-dir", data_dir])
        app = App(args, DesktopConfig())
        app.window.resize(1100, 700)
        with loop:
            loop.create_task(drive(app, out))
            loop.run_until_complete(app.run())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finish_qt(qapp, app)


if __name__ == "__main__":
    main()
