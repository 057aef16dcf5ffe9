"""Settings: a backend added in the dialog is saved, its key goes to the keyring, and the
embedded server restarts with it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import keyring
import pytest
from keyring.backend import KeyringBackend
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QLineEdit, QTableWidgetItem

from desktop.config import DesktopConfig
from desktop.widgets.settings_dialog import KEY, MODEL, URL, SettingsDialog
from tests.desktop.conftest import GuiApp, run
from tests.support.upstream import Script, ScriptedUpstream


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.passwords.pop((service, username), None)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(previous)


def test_a_backend_added_in_settings_is_saved_and_used(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, memory_keyring: MemoryKeyring
) -> None:
    qtbot.mouseClick(gui.window.settings_button, Qt.MouseButton.LeftButton)
    dialog = gui.window.findChild(SettingsDialog, "settings-dialog")
    assert dialog is not None and dialog.isVisible()
    dialog._on_add_clicked()
    row = dialog.table.rowCount() - 1
    dialog.table.setItem(row, URL, QTableWidgetItem(upstream.base_url))
    dialog.table.setItem(row, MODEL, QTableWidgetItem("second-model"))
    key = dialog.table.cellWidget(row, KEY)
    assert isinstance(key, QLineEdit)
    key.setText("sk-test-123")
    dialog.system_prompt.setPlainText("Answer in French.")
    old_client = gui.window.client
    save = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save)
    save.click()

    saved = DesktopConfig.load()
    assert [(b.base_url, b.model) for b in saved.backends] == [(upstream.base_url, "second-model")]
    assert saved.system_prompt == "Answer in French."
    assert memory_keyring.passwords[("parley", upstream.base_url)] == "sk-test-123"
    assert "sk-test-123" not in (gui.app.config.system_prompt + str(saved))

    # The embedded server restarts with the new backend; the API key reaches the upstream.
    qtbot.waitUntil(
        lambda: gui.window.client not in (None, old_client), timeout=20_000
    )  # disconnected while the server restarts, then the new one
    client = gui.window.client
    assert client is not None
    names = [m["name"] for m in run(qtbot, client.status())["models"]]
    assert "second-model" in names
    upstream.script = Script(tokens=1)
    gui.window.model_picker.addItem("second-model")  # the picker refreshes every second
    gui.window.model_picker.setCurrentText("second-model")
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Bonjour")
    assert upstream.records[-1].body["model"] == "second-model"
    assert upstream.records[-1].headers["authorization"] == "Bearer sk-test-123"
    assert upstream.records[-1].body["messages"][0] == {
        "role": "system",
        "content": "Answer in French.",
    }
