"""GUI tests: the real app (window, embedded server, client) on one session-wide qasync loop.

Tests are synchronous and wait with qtbot (signals or waitUntil), never sleep; the loop is
never stopped between tests; each test's leftover tasks are cancelled at teardown.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from desktop.app import App
from desktop.embedded import launch_settings
from desktop.event_loop import WindowEventLoop
from desktop.settings.config import DesktopConfig
from tests.support.parley import MODEL
from tests.support.tools import ToolLog, tool_server, write_config
from tests.support.upstream import ScriptedUpstream

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Qt Quick draws with its software renderer there: no GPU, the same pixels on every machine.
os.environ.setdefault("QT_QUICK_BACKEND", "software")


@pytest.fixture(scope="session")
def _session_loop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    qapp.setQuitOnLastWindowClosed(False)
    loop = WindowEventLoop(qapp, already_running=True)
    executor = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="gui-test")
    loop.set_default_executor(executor)
    asyncio.events._set_running_loop(None)  # marked running only during GUI tests
    yield loop
    executor.shutdown(wait=True)


@pytest.fixture
def qt_loop(_session_loop: asyncio.AbstractEventLoop) -> Iterator[asyncio.AbstractEventLoop]:
    """The session's qasync loop, seen as running by asyncio for this test only.

    (Other tests in the session use asyncio.run, which refuses to start inside a running loop.)
    """
    asyncio.set_event_loop(_session_loop)
    asyncio.events._set_running_loop(_session_loop)
    # run_forever would install these; an "already running" loop never calls it, and
    # without them an unfinished async generator is finalized outside any loop.
    old_hooks = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(
        firstiter=_session_loop._asyncgen_firstiter_hook,  # type: ignore[attr-defined]
        finalizer=_session_loop._asyncgen_finalizer_hook,  # type: ignore[attr-defined]
    )
    yield _session_loop
    for task in asyncio.all_tasks(_session_loop):
        task.cancel()
    sys.set_asyncgen_hooks(*old_hooks)
    asyncio.events._set_running_loop(None)
    asyncio.set_event_loop(None)


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARLEY_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("PARLEY_RUNTIME_DIR", str(tmp_path / "runtime"))


@pytest.fixture(autouse=True)
def _clipboard_left_empty() -> Iterator[None]:
    """A test that puts a QMimeData it made on the clipboard leaves it to Qt's clipboard, a
    global that is destroyed after the interpreter: deleting a Python-made object then takes
    the process down at exit (SIGSEGV). Emptied after each test, while Python lives."""
    yield
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is not None:
        QApplication.clipboard().clear()


def run(qtbot: QtBot, coroutine: Coroutine[Any, Any, Any], timeout_ms: int = 20_000) -> Any:
    """Run a coroutine on the Qt loop from a synchronous test and return its result."""
    task = asyncio.ensure_future(coroutine)
    qtbot.waitUntil(task.done, timeout=timeout_ms)
    return task.result()


class GuiApp:
    """A running App and the task that runs it."""

    def __init__(self, qtbot: QtBot, args: list[str]) -> None:
        self.qtbot = qtbot
        self.app = App(launch_settings(args), DesktopConfig.load())
        self.window = self.app.window
        self.task = asyncio.ensure_future(self.app.run())
        qtbot.waitUntil(lambda: self.window.client is not None, timeout=20_000)
        qtbot.waitSignal(self.window.conversations_shown, timeout=10_000).wait()

    def close(self, timeout_ms: int = 15_000) -> None:
        """Close the window as a user does; wait until the app's quit path has finished."""
        self.window.close()
        self.qtbot.waitUntil(self.task.done, timeout=timeout_ms)
        self.task.result()

    def send(self, text: str) -> None:
        self.window.composer.set_text(text)
        self.window.composer.editor.setFocus()
        from PySide6.QtCore import Qt

        self.qtbot.keyClick(self.window.composer.editor, Qt.Key.Key_Return)

    def transcript_text(self) -> str:
        return str(self.window.transcript.toPlainText())

    def ending_notes(self) -> list[str]:
        """From now on, the notes the view shows while a reply's ending is being saved
        (e.g. which tool a Stop interrupted), in order."""
        notes: list[str] = []
        end_reply = self.window.transcript.end_reply

        def spy(end: Any, note: str = "") -> None:
            notes.append(note)
            end_reply(end, note)

        self.window.transcript.end_reply = spy  # type: ignore[method-assign]
        return notes


@pytest.fixture
def gui_factory(
    qt_loop: asyncio.AbstractEventLoop, qtbot: QtBot, data_dir: Path, upstream: ScriptedUpstream
) -> Iterator[Any]:
    started: list[GuiApp] = []

    def start(*extra: str) -> GuiApp:
        args = ["--data-dir", str(data_dir), "--upstream", upstream.base_url,
                "--upstream-model", MODEL, *extra]  # fmt: skip
        gui = GuiApp(qtbot, args)
        started.append(gui)
        return gui

    yield start
    for gui in started:
        if not gui.task.done():
            gui.close()
        gui.window.deleteLater()


@pytest.fixture
def gui(gui_factory: Any) -> GuiApp:
    app: GuiApp = gui_factory()
    return app


@pytest.fixture
def tool_log(tmp_path: Path) -> ToolLog:
    """What the tests' MCP server records (tests/support/mcp_tools.py)."""
    return ToolLog(tmp_path / "tools.log")


def with_tools(
    gui_factory: Any, data_dir: Path, log: ToolLog, qtbot: QtBot, trust: str | None = "allow"
) -> GuiApp:
    """The app with one MCP server `t` (the tests' tools) configured and running; `trust`:
    its entry's (None: left out, the default: ask)."""
    write_config(data_dir / "mcp.json", {"t": tool_server(log.path, trust=trust)})
    gui: GuiApp = gui_factory()
    client = gui.window.client
    assert client is not None
    qtbot.waitUntil(lambda: run(qtbot, client.status())["tools"]["ready"] == 1, timeout=30_000)
    return gui


@pytest.fixture
def asking_gui(gui_factory: Any, data_dir: Path, tool_log: ToolLog, qtbot: QtBot) -> GuiApp:
    """The app with the tests' MCP server `t` running, its tools trusted as by default: ask."""
    return with_tools(gui_factory, data_dir, tool_log, qtbot, trust=None)


def danger(target: str) -> dict[str, str]:
    """A call of the tests' tool that acts (the upstream's tool call, scripted)."""
    return {"name": "t__danger", "arguments": json.dumps({"target": target})}


def calls(log: ToolLog) -> list[str]:
    """The targets of the tool calls that really ran, in order (the server's own log)."""
    return [e["target"] for e in log.events() if e["event"] == "call"]
