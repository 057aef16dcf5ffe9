"""The window's state is written off the window's thread, in the order asked."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from desktop.settings.config import write_atomically
from desktop.window import state as state_module
from desktop.window.state import StateWriter, WindowState


def test_writes_leave_the_gui_thread_and_the_last_asked_lands_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    write = write_atomically

    def spy(path: Path, text: str) -> None:
        threads.append(threading.current_thread())
        write(path, text)

    monkeypatch.setattr(state_module, "write_atomically", spy)
    path = tmp_path / "window.json"
    writer = StateWriter(path)
    state = WindowState()
    for width in range(200, 300):
        state.sidebar_width = width
        writer.save(state)  # as it is now: the later changes are not in this write
    writer.close()
    assert json.loads(path.read_text())["sidebar_width"] == 299
    assert len(threads) == 100 and threading.main_thread() not in threads


def test_opening_a_chat_writes_nothing_on_the_gui_thread(
    gui: Any, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_gui: list[Path] = []
    elsewhere: list[Path] = []
    write = write_atomically

    def spy(path: Path, text: str) -> None:
        mine = threading.current_thread() is threading.main_thread()
        (on_gui if mine else elsewhere).append(path)
        write(path, text)

    monkeypatch.setattr(state_module, "write_atomically", spy)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("hello")  # a new chat, opened as its turn begins
    qtbot.waitUntil(lambda: bool(elsewhere), timeout=5_000)
    assert on_gui == []
