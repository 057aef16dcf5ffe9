"""File → Export: the file is named after the chat, made safe for a file name, and the
dialogs open in the folder last chosen, also after a relaunch (issue 43)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog

from desktop.file_names import file_name_for
from tests.desktop.conftest import GuiApp
from tests.support.upstream import Script, ScriptedUpstream


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("What is basalt?", "What is basalt"),
        ("a/b\\c: <d> | *e*", "a b c d e"),
        ("../../etc/passwd", "etc passwd"),
        (".hidden. ", "hidden"),
        ("line\nbreak\ttab\x00nul", "line break tab nul"),
        ("", "chat"),
        (None, "chat"),
        ("???", "chat"),
        ("CON", "chat"),
        ("é" * 200, "é" * 80),
    ],
)
def test_a_title_becomes_a_safe_file_name(title: str | None, name: str) -> None:
    assert file_name_for(title) == name


def test_export_offers_the_chats_title_in_the_folder_last_chosen(
    gui_factory: Any, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    gui: GuiApp = gui_factory()
    upstream.script = Script(texts=["Basalt is volcanic."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("What is basalt? A/B test")
    qtbot.waitUntil(gui.window.menus.export_chat.isEnabled, timeout=5_000)
    qtbot.waitUntil(lambda: gui.window.sidebar.list.count() == 1, timeout=5_000)
    offered: list[str] = []  # (the first start's folder: tests/desktop/test_file_folders.py)
    out = tmp_path / "exports"
    out.mkdir()

    def save_as(_parent: Any, _caption: str, start: str, _filters: str) -> tuple[str, str]:
        offered.append(start)
        return str(out / Path(start).name), "Markdown (*.md)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_as)
    files = gui.window.history_files
    with qtbot.waitSignal(files.done, timeout=5_000):
        gui.window.menus.export_chat.trigger()
    assert [Path(start).name for start in offered] == ["What is basalt A B test.md"]
    assert (out / "What is basalt A B test.md").read_text().startswith("#")

    with qtbot.waitSignal(files.done, timeout=5_000):
        gui.window.menus.export_chat.trigger()
    assert offered[-1] == str(out / "What is basalt A B test.md")  # the folder kept
    opened: list[str] = []

    def open_from(_parent: Any, _caption: str, start: str, _filters: str) -> tuple[str, str]:
        opened.append(start)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", open_from)
    gui.window.history_files.import_file()
    assert opened == [str(out)]

    gui.close()  # and at the next launch
    relaunched: GuiApp = gui_factory()
    relaunched.window.history_files.import_file()
    assert opened[-1] == str(out)
