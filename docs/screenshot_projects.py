"""Screenshots of projects and memory: the sidebar with projects above the chats (one open,
its chats below, a chat of it on screen), and a project's memory dialog (its lines, each with
the chat it came from, Forget, Edit, Open in editor, Delete all). The real app and its embedded
server, on a scripted OpenAI-compatible upstream (tests/support/upstream.py); every chat is
typed into the composer and sent with Enter.

    QT_QPA_PLATFORM=offscreen QT_QUICK_BACKEND=software python docs/screenshot_projects.py \
        [OUT_DIR] [--theme light|dark]

OUT_DIR (default docs/screenshots/) gets projects.png and memory.png (-dark for dark).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_QUICK_BACKEND", "software")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from desktop.app import App
from desktop.embedded import launch_settings
from desktop.event_loop import WindowEventLoop
from desktop.memory.dialog import MemoryDialog
from desktop.settings.config import DesktopConfig
from tests.support.upstream import Script, ScriptedUpstream

SIZE = (1280, 860)
MODEL = "scripted"
PROJECTS = {  # a project, its instructions, and its chats: what is asked, what is answered
    "Lisbon trip": (
        "Three days in May with my partner, staying near Rossio; we like walking and seafood.",
        [
            ("Where should we eat seafood near Rossio?",
             "Try **Cervejaria Ramiro** for the classics (go before 19:00: there is always a "
             "queue), or **Marisqueira Uma** on Rua dos Sapateiros for its rice with seafood, "
             "a few minutes' walk from your hotel."),
            ("Plan a slow middle day in Belém",
             "Take tram 15 early, see the monastery before the queues, have pastéis de Belém, "
             "and walk the river to the MAAT."),
            ("Sintra or Cascais if it rains?",
             "Sintra: forty minutes by train from Rossio, and its forest is at its best "
             "after rain."),
        ],
    ),
    "Garden": (
        "A small north-facing garden in Porto; no pesticides.",
        [("Which tomatoes grow in partial shade?", "Cherry tomatoes such as Sungold cope best."),
         ("When do I sow broad beans?", "In October or November, for a crop in spring.")],
    ),
    "Thesis, chapter 3": (
        "Formal, British spelling, citations in APA.",
        [("Tighten the argument in section 3.2", "Here is a tighter version of 3.2: …")],
    ),
}  # fmt: skip
OUTSIDE = [("What is a good hydration for sourdough?", "Around 70–75 % for a first loaf.")]
MEMORY = [  # a line, and the question of the chat it was remembered in (None: by hand)
    ("We travel in the second week of May.", "Plan a slow middle day in Belém"),
    ("My partner does not eat shellfish.", "Where should we eat seafood near Rossio?"),
    ("We prefer trains to buses.", "Sintra or Cascais if it rains?"),
    ("Budget: about 120 euros a day for food and tickets.", None),
]


def said(text: str) -> Script:
    return Script(texts=re.findall(r"\s*\S+\s*", text), rate=400)


async def until(condition: Callable[[], object], seconds: float = 30) -> None:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise TimeoutError


class Scene:
    def __init__(self, app: App, upstream: ScriptedUpstream) -> None:
        self.app = app
        self.window = app.window
        self.upstream = upstream
        self.finished: list[str] = []
        self.window.reply_finished.connect(self.finished.append)

    async def chat(self, question: str, answer: str) -> str:
        """A new chat (in the open project), asked `question`; its id."""
        window = self.window
        QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        self.upstream.queue = [said(answer)]
        before = len(self.finished)
        window.composer.set_text(question)
        window.composer.editor.setFocus()
        QTest.keyClick(window.composer.editor, Qt.Key.Key_Return)
        await until(lambda: len(self.finished) > before)
        chat_id = window.current_id
        assert chat_id is not None
        return chat_id

    async def run(self, out: Path, data: Path, suffix: str) -> None:
        window = self.window
        await until(lambda: window.client is not None)
        client = window.client
        assert client is not None
        ids: dict[str, str] = {}
        made: dict[str, str] = {}
        for question, answer in OUTSIDE:
            ids[question] = await self.chat(question, answer)
        for name, (instructions, chats) in reversed(PROJECTS.items()):
            project = await client.projects.create(name)
            await client.projects.update(project["id"], instructions=instructions)
            made[name] = project["id"]
            await window.projects.refresh()
            window.projects.open_project(project["id"])
            for question, answer in reversed(chats):
                ids[question] = await self.chat(question, answer)
        lisbon = made["Lisbon trip"]
        window.projects.open_project(lisbon)
        first = PROJECTS["Lisbon trip"][1][0][0]
        await until(lambda: window.sidebar.title_of(ids[first]) is not None)
        await window.projects.refresh()
        window.sidebar.list.setCurrentItem(window.sidebar.list.rows.item(ids[first]))
        await until(lambda: window.current_id == ids[first] and "Ramiro" in window.transcript
                    .toPlainText())  # fmt: skip
        await asyncio.sleep(1.0)
        window.grab().save(str(out / f"projects{suffix}.png"))

        lines = []
        for text, question in MEMORY:
            link = f" <!-- chat:{ids[question]} -->" if question else ""
            lines.append(f"- {text}{link}")
        path = data / "memory" / "projects" / f"{lisbon}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        window.projects.open_memory(lisbon)
        dialog = window.findChild(MemoryDialog, "memory-dialog")
        assert dialog is not None
        await until(lambda: dialog.memory is not None and len(dialog.lines.rows) == len(MEMORY))
        await asyncio.sleep(0.8)
        dialog.grab().save(str(out / f"memory{suffix}.png"))
        dialog.reject()


async def shoot(out: Path, tmp: Path, theme: str) -> None:
    upstream = ScriptedUpstream().start()
    try:
        data = tmp / "data"
        args = ["--data-dir", str(data), "--upstream", upstream.base_url,
                "--upstream-model", MODEL]  # fmt: skip
        app = App(launch_settings(args), DesktopConfig.load())
        app.window.resize(*SIZE)
        task = asyncio.ensure_future(app.run())
        scene = Scene(app, upstream)
        await until(lambda: app.window.client is not None)
        app.window.menus.themes[theme].trigger()
        try:
            await scene.run(out, data, "" if theme == "light" else f"-{theme}")
        finally:
            app.request_close()
            await task
    finally:
        upstream.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=Path(__file__).parent / "screenshots")
    parser.add_argument("--theme", choices=("light", "dark"), default="light")
    options = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="parley-shots-"))
    os.environ.update({"PARLEY_CONFIG_DIR": str(tmp / "config"),
                       "PARLEY_RUNTIME_DIR": str(tmp / "runtime"),
                       "PARLEY_LOG_DIR": str(tmp / "log")})  # fmt: skip
    qt = QApplication(sys.argv[:1])
    qt.setQuitOnLastWindowClosed(False)
    loop = WindowEventLoop(qt)
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(shoot(options.out.resolve(), tmp, options.theme))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
