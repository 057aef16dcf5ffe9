"""Render Parley's window with a real conversation on the bundled model; save a PNG.

    QT_QPA_PLATFORM=offscreen python docs/screenshot.py [OUT.png]

Runs the real app (embedded server, bundled model) in a temporary data directory, types two
messages into the composer as a user would, waits for each reply, and grabs the window.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtWidgets import QApplication

from desktop.app import App, build_parser, finish_qt
from desktop.config import DesktopConfig

QUESTIONS = [
    "What is the capital of France?",
    "Write a Python function that adds two numbers, in a code block.",
]


async def drive(app: App, out: Path) -> None:
    window = app.window
    while window.client is None or window.model_state.text() != "ready":
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
    app.request_close()


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshot.png").resolve()
    with tempfile.TemporaryDirectory() as data_dir:
        qapp = QApplication(sys.argv[:1])
        qapp.setQuitOnLastWindowClosed(False)
        loop = qasync.QEventLoop(qapp)
        asyncio.set_event_loop(loop)
        args = build_parser().parse_args(["--data-dir", data_dir])
        app = App(args, DesktopConfig())
        app.window.resize(1100, 700)
        with loop:
            loop.create_task(drive(app, out))
            loop.run_until_complete(app.run())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finish_qt(qapp, app)


if __name__ == "__main__":
    main()
