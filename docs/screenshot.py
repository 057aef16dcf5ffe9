"""Render Parley's window as a user sees it; save PNGs, light and dark.

    QT_QPA_PLATFORM=offscreen QT_QUICK_BACKEND=software python docs/screenshot.py [OUT_DIR]

Runs the real app (its window, its embedded server) with its data and settings in a temporary
directory, offering two models: a scripted OpenAI-compatible upstream (tests/support/upstream.py)
that calls tools, with an MCP server of made-up project tools (docs/screenshot_tools.py; one of
them, git_push, asks first), and the bundled model, not loaded until its first question. Every
message is typed into the composer and sent with Enter; the model is picked in the model
picker; Stop, Compact now and the theme come from the menus; the approval is answered on its
card. Each theme is a launch of its own (`--theme`: only that one, in this process;
`--scenes a,b`: only those scenes). OUT_DIR
(default docs/screenshots/) gets, in this order, NAME.png (light) and NAME-dark.png:

    welcome         a new chat's page under the chat bar
    actions         an earlier reply's actions, shown while the pointer is on it
    tool-steps      tool steps, and a sub-agent running one that reports its progress
    stopped-tools   that reply stopped: what the Stop ended, what may have acted
    approval        a call waiting for the user's approval
    compaction      the marker where earlier messages were summarised (Compact now)
    loading         a question waiting for the bundled model to load
    chat-code       a conversation with code, on the bundled model
    stopped         a story of the bundled model stopped mid-way
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_QUICK_BACKEND", "software")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from desktop.app import App, finish_qt
from desktop.embedded import launch_settings
from desktop.event_loop import WindowEventLoop
from desktop.settings.config import DesktopConfig
from server.models.bundled import BUNDLED_MODEL_NAME
from tests.support.upstream import Script, ScriptedUpstream

DOCS = Path(__file__).resolve().parent
UPSTREAM_MODEL = "scripted"  # what the scripted upstream is called in the picker
CONTEXT = 2000  # its context, in tokens: small, so that Compact now has a part to summarise
SIZE = (1280, 860)
# Seconds the bundled model stays loaded after a reply: its scenes follow one another sooner.
KEEP_ALIVE = 5
RATE = 120  # tokens a second, of the scripted model
THEMES = ("light", "dark")  # the dark one's files: NAME-dark.png

CHAT = [  # what is asked, and what the answer should hold (else it is regenerated)
    ("What is the capital of France? Answer in one sentence.", "Paris"),
    # (Asked this way, the bundled model puts its code in a fenced block.)
    ("Write a Python function that adds two numbers. Put the code in a ```python code block.",
     "```"),
]  # fmt: skip
ACTIONS_CHAT = [  # what is asked, and the answer then the regenerated one
    ("What does a hash table do?",
     ("It maps keys to values: each key is hashed to the bucket that holds its value, so a "
      "lookup takes about the same time however many entries there are.",
      "A **hash table** stores values under keys. It runs each key through a hash function "
      "to pick a bucket, so finding a key costs about the same with ten entries or ten "
      "million.")),
    ("And when two keys land in the same bucket?",
     ("That is a *collision*. The usual answers are **chaining** (the bucket holds a short "
      "list) and **open addressing** (try the next free bucket). Python's `dict` uses open "
      "addressing.", "")),
]  # fmt: skip
# The scenes, in the order they are shot: the bundled model's first use is `loading`.
SCENES = ("welcome", "tool-steps", "approval", "compaction", "actions", "loading", "chat-code",
          "stopped")  # fmt: skip
STORY = "Tell me a long story about a dragon who learns to bake bread."
STOP_AFTER = 300  # characters of the story's reply before Stop
LOADING = "Give me three tips for a good night's sleep."


def said(text: str, **fields: Any) -> Script:
    """What the scripted model says: `text`, a word a token, at a local model's pace."""
    return Script(texts=re.findall(r"\s*\S+\s*", text), rate=RATE, **fields)


def call(name: str, **arguments: Any) -> dict[str, str]:
    return {"name": name, "arguments": json.dumps(arguments)}


def tool(name: str, **arguments: Any) -> dict[str, str]:
    return call(f"workspace__{name}", **arguments)


TASK = "Run the tests in tests/auth and report which fail."
FIX = (
    "Found it. `expires_at` compares a **local** time with the token's UTC timestamp:\n\n"
    "```python\n"
    "def expires_at(issued: datetime, ttl: int) -> datetime:\n"
    "    return issued.astimezone(timezone.utc) + timedelta(seconds=ttl)\n"
    "```\n"
)

# A chat about a trip: its long first exchange is what Compact now summarises; the short
# second one stays above the last question, with the marker between them on screen.
TRIP = [
    (
        "I'm planning three days in Lisbon in May with my partner. We like walking, old "
        "neighbourhoods, seafood and a bit of music in the evening, and we'd rather avoid "
        "long queues. We arrive on a Thursday morning and fly out on Sunday evening. "
        "Could you suggest a plan for each day, with a rough idea of the walking distances "
        "and where to eat? We don't mind hills but would like one slower day in the middle. "
        "Our hotel is near Rossio, and we have a budget of about 120 euros a day for food "
        "and tickets together. We'd also like a day trip option in case the weather is bad "
        "in the city: Sintra or Cascais, which is easier by public transport?",
        "Here is a plan that keeps the hills in the mornings and the evenings free for food "
        "and music. Day one: Baixa and Alfama. Walk from Rossio down Rua Augusta to Praça do "
        "Comércio, then up through Alfama to the Miradouro de Santa Luzia and the castle; "
        "about six kilometres with stops. Lunch at a tasca on Rua de São Miguel, and in the "
        "evening fado at a small house in Alfama, booked ahead. Day two, the slower one: "
        "Belém by tram 15, the monastery early before the queues, the pastéis de Belém, the "
        "riverside walk to the MAAT, and back for a long seafood dinner in Cais do Sodré. "
        "Day three: Chiado and Bairro Alto in the morning, the Gulbenkian in the afternoon, "
        "and a last dinner at a rooftop. The Lisboa Card pays off on day two only.\n\n"
        "For the day trip, Sintra is forty minutes by train from Rossio, a few steps from "
        "your hotel; trains leave every twenty minutes. Cascais is forty minutes from Cais "
        "do Sodré. Choose Sintra if you want palaces and forest, Cascais if you want the "
        "sea. With time for one palace, take Pena for its colours and views, and book the "
        "first entry online: in May the queues by eleven are an hour long. Wear shoes that "
        "grip: the paths are steep and often damp under the trees, even on a sunny day.",
    ),
    (
        "Which day would you swap for Sintra if it rains?",
        "Swap day three: Chiado and the Gulbenkian are easy to fit into Sunday morning "
        "before your flight, and Sintra's forest is at its best just after rain.",
    ),
]
SUMMARY = (
    "The user and their partner spend three days in Lisbon in May (Thursday morning to "
    "Sunday evening), staying near Rossio, about 120 euros a day; they like walking, old "
    "neighbourhoods, seafood and music. Plan: Alfama and fado, a slower Belém day with the "
    "Lisboa Card, Chiado and the Gulbenkian; a Sintra day trip with Pena booked ahead."
)
TRIP_LAST = "Great, thanks! Can you turn all of this into a short checklist?"
CHECKLIST = (
    "- Book fado in Alfama for Thursday\n"
    "- Lisboa Card for Friday only\n"
    "- Pena's first entry, if Saturday goes to Sintra\n"
    "- Shoes that grip"
)


class Shots:
    """The app on screen, driven as a user drives it; grabs its window."""

    def __init__(self, app: App, upstream: ScriptedUpstream, out: Path, bundled: str) -> None:
        self.app = app
        self.window = app.window
        self.upstream = upstream
        self.out = out
        self.bundled = bundled
        self.suffix = ""
        self.finished: list[str] = []
        self.window.reply_finished.connect(self.finished.append)

    async def until(self, what: str, predicate: Callable[[], object], limit: float = 60) -> None:
        """Wait (the window's loop runs meanwhile) until `predicate()`; at most `limit` s."""
        deadline = time.monotonic() + limit
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {limit:g} s for {what}")
            await asyncio.sleep(0.05)

    async def grab(self, name: str, widget: QWidget | None = None, settle: float = 0.6) -> None:
        await asyncio.sleep(settle)  # (the list settles: the last rows laid out, scrolled down)
        path = self.out / f"{name}{self.suffix}.png"
        (widget or self.window).grab().save(str(path))
        print(f"saved {path}", flush=True)

    def text(self) -> str:
        return str(self.window.transcript.toPlainText())

    def last_row_text(self) -> str:
        """The words of the last message shown (a reply's text so far)."""
        rows = self.window.transcript.rows
        ids = rows.ids()
        return str(rows.text_at(len(ids) - 1)) if ids else ""

    def last_reply_source(self) -> str:
        """The Markdown of the last message shown."""
        rows = self.window.transcript.rows
        ids = rows.ids()
        row = rows.row(ids[-1]) if ids else None
        if row is None:
            return ""
        return "".join(p if isinstance(p, str) else p.get("text", "") for p in row.parts)

    def new_chat(self) -> None:
        QTest.keyClick(self.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)

    def pick_model(self, name: str) -> None:
        """Pick `name` in the model picker, as a click in its list does."""
        combo = self.window.model_picker.combo
        index = combo.findText(name)
        assert index >= 0, f"no model {name!r} in the picker"
        combo.setCurrentIndex(index)
        combo.activated.emit(index)

    def send(self, text: str) -> int:
        """Type `text` in the composer and press Enter; the number of replies finished before."""
        before = len(self.finished)
        composer = self.window.composer
        composer.set_text(text)
        composer.editor.setFocus()
        QTest.keyClick(composer.editor, Qt.Key.Key_Return)
        return before

    async def say(self, text: str) -> None:
        before = self.send(text)
        await self.until(f"the reply to {text[:30]!r}", lambda: len(self.finished) > before, 120)

    def bundled_unloaded(self) -> bool:
        return "loads on first use" in self.window.model_picker.state.text()

    async def replied(self, before: int) -> None:
        """Until a reply ends after the `before`th."""
        await self.until("the reply", lambda: len(self.finished) > before, 120)

    async def regenerate(self) -> None:
        before = len(self.finished)
        self.window.menus.regenerate.trigger()
        await self.until("the regenerated reply", lambda: len(self.finished) > before, 120)

    async def stop(self) -> None:
        before = len(self.finished)
        self.window.menus.stop.trigger()
        await self.until("the stopped reply saved", lambda: len(self.finished) > before)

    # -- the scenes --------------------------------------------------------------------------

    async def welcome(self) -> None:
        self.new_chat()
        await self.until("the welcome page", lambda: self.window.transcript.welcome_shown)
        await self.grab("welcome")

    async def actions(self) -> None:
        """Two questions, the first reply regenerated once (its versions: ‹ 2/2 ›); the
        pointer rests on that reply, whose actions show."""
        self.new_chat()
        self.pick_model(UPSTREAM_MODEL)
        if self.window.tools_switch.isChecked():
            self.window.tools_switch.click()
        for question, answer in ACTIONS_CHAT:
            self.upstream.queue = [said(text) for text in answer if text]
            await self.say(question)
            if question == ACTIONS_CHAT[0][0]:
                await self.regenerate()
        transcript = self.window.transcript
        rows = transcript.rows.ids()
        first_reply = next(
            item for item in _items(transcript.list, f"message-{rows[1]}")
        )  # fmt: skip
        (regenerate,) = [
            item for item in _items(first_reply, "action-regenerate") if item.isVisible()
        ]
        at = regenerate.mapToScene(QPointF(regenerate.width() / 2, regenerate.height() / 2))
        QTest.mouseMove(transcript, QPoint(int(at.x()), int(at.y())))  # its tooltip shows
        await self.grab("actions", settle=1.2)
        QTest.mouseMove(transcript, QPoint(2, 2))  # off the messages, for the next scenes

    async def chat_code(self) -> None:
        self.new_chat()
        self.pick_model(self.bundled)
        for question, wanted in CHAT:
            await self.say(question)
            for _ in range(2):  # a small model: asked again when its answer misses
                if wanted in self.last_reply_source():
                    break
                await self.regenerate()
        await self.grab("chat-code")

    async def tool_steps(self) -> None:
        self.new_chat()
        self.upstream.queue = [
            said("I'll look for the code that checks the token first. ",
                   tool_calls=[tool("search_code", query="def expires_at")]),
            said("Now the tests: I'll ask a helper to run them while I read "
                 "the function. ",
                   tool_calls=[call("delegate", task=TASK),
                               tool("read_file", path="app/auth/tokens.py")]),
            said(FIX),
        ]  # fmt: skip
        self.upstream.by_task["tests/auth"] = [
            said("Running the auth suite. ",
                   tool_calls=[tool("run_tests", path="tests/auth")]),
            said("2 of 48 fail: test_login_expired_token, test_refresh_rotates_token."),
        ]  # fmt: skip
        self.send("Why does the login test fail since yesterday? Find the cause.")
        card = self.window.approval_card

        def running() -> bool:
            # The search's result is text the user did not write: the injection guard asks
            # before the calls that follow it, and is answered as a user would.
            if card.isVisible() and card.allow_once.isEnabled():
                card.allow_once.click()
            return "run_tests(" in self.text()

        await self.until("the sub-agent's tests running", running)
        await asyncio.sleep(2.5)  # a few of its files done: the progress bar part way
        await self.grab("tool-steps")
        await self.stop()
        await self.grab("stopped-tools")

    async def approval(self) -> None:
        self.new_chat()
        card = self.window.approval_card
        self.upstream.queue = [
            said("The fix is committed on release/2.4; pushing it needs your "
                 "go-ahead. ",
                   tool_calls=[tool("git_push", branch="release/2.4", force=True)]),
            said("Understood: nothing was pushed."),
        ]  # fmt: skip
        before = self.send("Push the fix to the release branch.")
        await self.until("the approval card", card.isVisible)
        await self.grab("approval")
        QTest.mouseClick(card.deny, Qt.MouseButton.LeftButton)
        await self.until("the reply after Deny", lambda: len(self.finished) > before)

    async def compaction(self) -> None:
        self.new_chat()
        if self.window.tools_switch.isChecked():
            self.window.tools_switch.click()  # a chat about a trip: no tools
        for question, answer in TRIP:
            self.upstream.queue = [said(answer)]
            await self.say(question)
        self.upstream.queue = [said(SUMMARY)]
        self.window.menus.compact.trigger()  # Chat → Compact now
        await self.until("the marker", lambda: "Earlier messages summarised" in self.text())
        self.upstream.queue = [said(CHECKLIST)]
        await self.say(TRIP_LAST)
        await self.grab("compaction")

    async def stopped(self) -> None:
        self.new_chat()
        self.pick_model(self.bundled)
        before = self.send(STORY)
        await self.until("the story's text",
                         lambda: len(self.last_row_text()) >= STOP_AFTER
                         or len(self.finished) > before)  # fmt: skip
        if len(self.finished) == before:
            await self.stop()
        else:
            print("the model ended its story before Stop: stopped.png is not stopped")
        await self.grab("stopped")

    async def loading(self) -> None:
        """The bundled model loads in a second or two on an idle machine: the row is grabbed
        as soon as it is drawn, and the question asked again (in a new chat, once the model
        is unloaded again: KEEP_ALIVE) if the reply began before the grab."""
        composer = self.window.composer
        for attempt in range(3):
            self.new_chat()
            self.pick_model(self.bundled)
            await self.until("the model unloaded", self.bundled_unloaded, KEEP_ALIVE + 30)
            before = self.send(LOADING)
            await self.until("the loading row", lambda: "Loading " in self.text(), 10)
            # The turn has begun (the composer is cleared then) and waits for the model.
            with contextlib.suppress(TimeoutError):
                await self.until("the turn begun", lambda: not composer.text, 2)
            await asyncio.sleep(0.1)
            if "Loading " in self.text() or attempt == 2:
                await self.grab("loading", settle=0)
                await self.replied(before)
                return
            print("the model loaded before the grab: asked again", flush=True)
            await self.replied(before)

    async def run(self, theme: str, scenes: list[str]) -> None:
        window = self.window
        await self.until("the server", lambda: window.client is not None)
        await self.until("the models", lambda: self.bundled in window.model_picker.names())
        window.menus.themes[theme].trigger()  # View → Theme
        self.suffix = "" if theme == "light" else f"-{theme}"
        await asyncio.sleep(1.0)
        for scene in scenes:  # (loading: the bundled model's first use, loaded from there on)
            await getattr(self, scene.replace("-", "_"))()


async def drive(shots: Shots, theme: str, scenes: list[str], failed: list[BaseException]) -> None:
    try:
        await shots.run(theme, scenes)
    except Exception as exc:
        traceback.print_exc()
        failed.append(exc)
    finally:
        shots.app.request_close()


def _items(root: Any, name: str) -> list[Any]:
    """The Qt Quick items under `root` of that objectName (delegates are visual children)."""
    found, stack = [], [root]
    while stack:
        item = stack.pop()
        if item.objectName() == name:
            found.append(item)
        stack.extend(item.childItems())
    return found


def tools_config(path: Path) -> None:
    entry = {
        "command": sys.executable,
        "args": [str(DOCS / "screenshot_tools.py")],
        "trust": "allow",
        "toolTrust": {"git_push": "ask"},  # the one that asks first
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": {"workspace": entry}}), encoding="utf-8")


def shoot(out: Path, theme: str, scenes: list[str]) -> None:
    """One launch of the app, in a temporary home, on `theme`: every scene's PNG."""
    upstream = ScriptedUpstream().start()
    upstream.script = said("(no more scripted answers)")
    failed: list[BaseException] = []
    try:
        with tempfile.TemporaryDirectory() as temp:
            data = Path(temp) / "data"
            os.environ["PARLEY_CONFIG_DIR"] = str(Path(temp) / "config")
            os.environ["PARLEY_LOG_DIR"] = str(Path(temp) / "log")
            os.environ["PARLEY_RUNTIME_DIR"] = str(Path(temp) / "runtime")
            tools_config(data / "mcp.json")
            qapp = QApplication(sys.argv[:1])
            qapp.setQuitOnLastWindowClosed(False)
            loop = WindowEventLoop(qapp)
            asyncio.set_event_loop(loop)
            args = launch_settings([
                "--data-dir", str(data), "--keep-alive", str(KEEP_ALIVE),
                "--upstream", upstream.base_url, "--upstream-model", UPSTREAM_MODEL,
                "--upstream-context", str(CONTEXT),
            ])  # fmt: skip
            app = App(args, DesktopConfig(max_tokens=200))
            app.window.resize(*SIZE)
            shots = Shots(app, upstream, out, BUNDLED_MODEL_NAME)
            with loop:
                loop.create_task(drive(shots, theme, scenes, failed))
                loop.run_until_complete(app.run())
                loop.run_until_complete(loop.shutdown_asyncgens())
            finish_qt(qapp, app)
    finally:
        upstream.stop()
    if failed:
        raise SystemExit(f"screenshots on the {theme} theme: {failed[0]!r}")


def main() -> None:
    """Each theme in a launch of its own (a fresh app: its sidebar holds only its own chats)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=DOCS / "screenshots")
    parser.add_argument("--theme", choices=THEMES, help="only this theme, in this process")
    parser.add_argument("--scenes", default=",".join(SCENES), help="only these, comma-separated")
    options = parser.parse_args()
    out = options.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    scenes = [scene for scene in options.scenes.split(",") if scene]
    unknown = set(scenes) - set(SCENES)
    if unknown:
        parser.error(f"no such scene: {', '.join(sorted(unknown))}")
    if options.theme:
        shoot(out, options.theme, scenes)
        return
    started = time.monotonic()
    for theme in THEMES:
        subprocess.run(
            [sys.executable, __file__, str(out), "--theme", theme, "--scenes", options.scenes],
            check=True,
        )
    print(f"done in {time.monotonic() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
