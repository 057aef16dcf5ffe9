"""A backend's context in Settings (issue 42): the Context column is saved with the backend
and reaches the server (the context meter's limit); blank asks the upstream; what is not a
context is refused on Save with a message, and nothing typed is lost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from PySide6.QtWidgets import QDialogButtonBox

from desktop.settings.config import Backend, DesktopConfig
from desktop.settings.settings_dialog import SettingsDialog
from tests.desktop.conftest import GuiApp, run
from tests.desktop.test_settings import MemoryKeyring, fill_row, save
from tests.support.upstream import ScriptedUpstream
from tests.support.upstream_answers import Answer

MODEL = "second-model"


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    """No system keyring is read or written (the server's settings look keys up)."""
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(previous)


def open_settings(gui: GuiApp) -> SettingsDialog:
    gui.window.chat_bar.settings_button.click()
    dialog = gui.window.findChild(SettingsDialog, "settings-dialog")
    assert dialog is not None and dialog.isVisible()
    return dialog


def add_with_context(gui: GuiApp, upstream: ScriptedUpstream, context: str) -> SettingsDialog:
    dialog = open_settings(gui)
    row = fill_row(dialog, upstream.base_url, MODEL, "")
    dialog.table.context_edit(row).setText(context)
    return dialog


def meter_limit(gui: GuiApp, qtbot: Any) -> int | None:
    """The context meter's limit for a new chat on the backend, from the restarted server."""
    old = gui.window.client
    qtbot.waitUntil(lambda: gui.window.client not in (None, old), timeout=20_000)
    qtbot.waitUntil(lambda: not gui.app._restart_pending and gui.app.server is not None)
    client = gui.window.client
    assert client is not None
    chat = run(qtbot, client.create_conversation(model=MODEL))

    def limit() -> int | None:
        found: int | None = run(qtbot, client.context.meter(chat["id"], MODEL))["limit"]
        return found

    qtbot.waitUntil(lambda: limit() is not None, timeout=10_000)
    return limit()


def test_the_context_typed_is_saved_and_is_the_servers_limit(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.answers["/v1/models"] = Answer.of({"data": [{"id": MODEL, "max_model_len": 32_768}]})
    dialog = add_with_context(gui, upstream, " 3,000 ")
    save(dialog)
    assert [(b.model, b.context) for b in DesktopConfig.load().backends] == [(MODEL, 3_000)]
    assert meter_limit(gui, qtbot) == 3_000  # set for the backend: it wins over the upstream's

    again = open_settings(gui)
    assert again.table.context_edit(0).text() == "3000"
    again.reject()


def test_a_blank_context_is_asked_of_the_upstream(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.answers["/v1/models"] = Answer.of({"data": [{"id": MODEL, "max_model_len": 32_768}]})
    save(add_with_context(gui, upstream, ""))
    assert [(b.model, b.context) for b in DesktopConfig.load().backends] == [(MODEL, None)]
    assert meter_limit(gui, qtbot) == 32_768


@pytest.mark.parametrize("typed", ["lots", "4k", "1.5", "-4096", "100", "20000000"])
def test_what_is_not_a_context_is_refused_and_nothing_typed_is_lost(
    qtbot: Any, tmp_path: Path, typed: str
) -> None:
    DesktopConfig(backends=[Backend("http://127.0.0.1:11434/v1", "llama3.2", 8_192)]).save()
    dialog = SettingsDialog(DesktopConfig.load())
    qtbot.addWidget(dialog)
    row = fill_row(dialog, "http://127.0.0.1:8080/v1", "qwen", "")
    dialog.table.context_edit(row).setText(typed)
    with qtbot.assertNotEmitted(dialog.settings_saved):
        buttons = dialog.findChild(QDialogButtonBox)
        assert buttons is not None
        buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert dialog.error.text() == (
        "Row 2: the context must be a whole number of tokens from 256 to 10,000,000 "
        f"(blank: ask the upstream), not {typed!r}."
    )
    assert dialog.table.context_edit(row).text() == typed  # as typed, to mend
    assert dialog.table.backend(row).url == "http://127.0.0.1:8080/v1"
    saved = DesktopConfig.load().backends  # the file as it was
    assert [(b.model, b.context) for b in saved] == [("llama3.2", 8_192)]


def test_the_context_round_trips_through_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "desktop.json"
    backends = [Backend("http://a/v1", "m", 131_072), Backend("http://b/v1", "n")]
    DesktopConfig(backends=backends).save(path)
    assert DesktopConfig.load(path).backends == backends


@pytest.mark.parametrize("saved", ["8192", True, 8_192.0, 100, 10**9, [8_192], None])
def test_a_saved_context_that_is_not_one_asks_the_upstream(tmp_path: Path, saved: Any) -> None:
    path = tmp_path / "desktop.json"
    entry = {"base_url": "http://a/v1", "model": "m", "context": saved}
    path.write_text(json.dumps({"backends": [entry]}), encoding="utf-8")
    assert DesktopConfig.load(path).backends == [Backend("http://a/v1", "m", None)]


def test_a_config_saved_before_the_column_loads_with_blank_contexts(tmp_path: Path) -> None:
    path = tmp_path / "desktop.json"
    path.write_text(json.dumps({"backends": [{"base_url": "http://a/v1", "model": "m"}]}))
    assert DesktopConfig.load(path).backends == [Backend("http://a/v1", "m", None)]
