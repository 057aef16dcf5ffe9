"""Settings: a backend added in the dialog is saved, its key goes to the keyring, and the
embedded server restarts with it."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Iterator
from typing import Any

import keyring
import pytest
from keyring.backend import KeyringBackend
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QMessageBox, QPushButton

from desktop.client import ParleyClient
from desktop.settings import api_keys
from desktop.settings.config import DesktopConfig
from desktop.settings.settings_dialog import SettingsDialog
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


class BrokenKeyring(KeyringBackend):
    """A system where no keyring works (no Secret Service, locked, refused)."""

    priority = 1  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("no Secret Service on the bus")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise RuntimeError("no Secret Service on the bus")

    def delete_password(self, service: str, username: str) -> None:
        raise RuntimeError("no Secret Service on the bus")


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(previous)


@pytest.fixture
def broken_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(BrokenKeyring())
    yield
    keyring.set_keyring(previous)
    api_keys._session.clear()


def add_backend(gui: GuiApp, upstream: ScriptedUpstream, key_text: str) -> SettingsDialog:
    """Open Settings and fill in a backend with an API key (not saved yet)."""
    gui.window.chat_bar.settings_button.click()
    dialog = gui.window.findChild(SettingsDialog, "settings-dialog")
    assert dialog is not None and dialog.isVisible()
    fill_row(dialog, upstream.base_url, "second-model", key_text)
    return dialog


def fill_row(dialog: SettingsDialog, url: str, model: str, key: str) -> int:
    """Add backend, then type into its cells."""
    add = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Add backend")
    add.click()
    row = dialog.table.rowCount() - 1
    dialog.table.url_edit(row).setText(url)
    dialog.table.model_box(row).setEditText(model)
    dialog.table.key_edit(row).setText(key)
    return row


def pick(gui: GuiApp, qtbot: Any, name: str) -> None:
    """Choose a model in the picker as the user does, once the status lists it."""
    combo = gui.window.model_picker.combo
    qtbot.waitUntil(lambda: combo.findText(name) >= 0, timeout=5_000)  # refreshed every 1 s
    combo.setCurrentIndex(combo.findText(name))
    combo.activated.emit(combo.currentIndex())


def save(dialog: SettingsDialog) -> None:
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()


def key_reaches_the_upstream(gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any) -> str:
    """Once the server has restarted: send on the new backend; the Authorization it got."""
    qtbot.waitUntil(lambda: gui.window.client is not None, timeout=20_000)
    qtbot.waitUntil(lambda: not gui.app._restart_pending and gui.app.server is not None)
    upstream.script = Script(tokens=1)
    pick(gui, qtbot, "second-model")
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Hello")
    return upstream.records[-1].headers.get("authorization", "")


def test_a_backend_added_in_settings_is_saved_and_used(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, memory_keyring: MemoryKeyring
) -> None:
    qtbot.mouseClick(gui.window.chat_bar.settings_button, Qt.MouseButton.LeftButton)
    dialog = gui.window.findChild(SettingsDialog, "settings-dialog")
    assert dialog is not None and dialog.isVisible()
    fill_row(dialog, upstream.base_url, "second-model", "sk-test-123")
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
    pick(gui, qtbot, "second-model")
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Bonjour")
    assert upstream.records[-1].body["model"] == "second-model"
    assert upstream.records[-1].headers["authorization"] == "Bearer sk-test-123"
    assert upstream.records[-1].body["messages"][0] == {
        "role": "system",
        "content": "Answer in French.",
    }


@pytest.mark.parametrize("choice", ["This session only", "Save in a file"])
def test_without_a_keyring_save_asks_where_to_keep_the_key_and_keeps_it(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, broken_keyring: None, choice: str
) -> None:
    dialog = add_backend(gui, upstream, "sk-no-keyring")
    old_client = gui.window.client
    save(dialog)
    ask = dialog.findChild(QMessageBox, "key-fallback")
    assert ask is not None and ask.isVisible()
    assert "no usable keyring" in ask.text() and "Secret Service" in ask.text()
    assert "backups" in ask.informativeText()  # the risk of the file is said
    button = next(b for b in ask.buttons() if b.text() == choice)
    button.click()

    qtbot.waitUntil(lambda: gui.window.client not in (None, old_client), timeout=20_000)
    assert key_reaches_the_upstream(gui, upstream, qtbot) == "Bearer sk-no-keyring"
    assert not gui.window.banner.isVisible(), gui.window.banner.text()  # no false error
    key_file = api_keys.keys_file()
    if choice == "Save in a file":
        assert json.loads(key_file.read_text()) == {upstream.base_url: "sk-no-keyring"}
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    else:
        assert not key_file.exists()
        assert "sk-no-keyring" not in "".join(p.read_text() for p in key_file.parent.glob("*.json"))


def test_without_a_keyring_cancel_says_the_key_was_not_saved(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, broken_keyring: None
) -> None:
    dialog = add_backend(gui, upstream, "sk-dropped")
    old_client = gui.window.client
    save(dialog)
    ask = dialog.findChild(QMessageBox, "key-fallback")
    assert ask is not None
    with qtbot.waitSignal(gui.window.error_shown, timeout=5_000) as shown:
        ask.button(QMessageBox.StandardButton.Cancel).click()
    assert "the API key was not saved" in shown.args[0]
    assert api_keys.api_key(upstream.base_url) is None
    # The server restart that follows shows no error of its own over that message.
    qtbot.waitUntil(lambda: gui.window.client not in (None, old_client), timeout=20_000)
    qtbot.waitUntil(lambda: not gui.window.tasks, timeout=5_000)
    assert "the API key was not saved" in gui.window.banner.text()


def test_test_connection_fetches_the_models_to_pick_from(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, memory_keyring: MemoryKeyring
) -> None:
    gui.window.chat_bar.settings_button.click()
    dialog = gui.window.findChild(SettingsDialog, "settings-dialog")
    assert dialog is not None
    row = fill_row(dialog, upstream.base_url, "", "")
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.check_result.text().startswith("Reachable"), timeout=10_000)
    box = dialog.table.model_box(row)
    assert [box.itemText(i) for i in range(box.count())] == ["scripted"]
    assert box.currentText() == "scripted"

    dialog.table.url_edit(row).setText("http://127.0.0.1:9/v1")  # nothing listens there
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.check_result.text().startswith("Not reachable"))
    dialog.reject()


def test_saving_only_a_prompt_keeps_the_server_and_its_models(
    gui: GuiApp, qtbot: Any, memory_keyring: MemoryKeyring
) -> None:
    server, client = gui.app.server, gui.window.client
    gui.window.chat_bar.settings_button.click()
    dialog = gui.window.findChild(SettingsDialog, "settings-dialog")
    assert dialog is not None
    dialog.system_prompt.setPlainText("Be brief.")
    save(dialog)
    assert DesktopConfig.load().system_prompt == "Be brief."
    assert gui.window.system_prompt == "Be brief."
    qtbot.waitUntil(lambda: not gui.app.tasks, timeout=5_000)
    assert gui.app.server is server and gui.window.client is client  # not restarted


def test_a_running_local_server_is_offered_and_added_only_when_asked(
    gui: GuiApp,
    upstream: ScriptedUpstream,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
) -> None:
    from server.routes import backends as backend_routes

    # The embedded server looks where Ollama listens; here, the scripted upstream answers.
    monkeypatch.setattr(backend_routes, "LOCAL_SERVERS", [("Ollama", upstream.base_url)])
    gui.window.chat_bar.settings_button.click()
    dialog = gui.window.findChild(SettingsDialog, "settings-dialog")
    assert dialog is not None
    rows = dialog.table.rowCount()
    dialog.detect_button.click()
    qtbot.waitUntil(lambda: dialog.findChild(QPushButton, "add-found-Ollama") is not None,
                    timeout=10_000)  # fmt: skip
    assert dialog.table.rowCount() == rows  # offered, not added
    dialog.findChild(QPushButton, "add-found-Ollama").click()
    assert dialog.table.rowCount() == rows + 1
    added = dialog.table.backend(rows)
    assert (added.url, added.model) == (upstream.base_url, "scripted")
    dialog.reject()


def test_what_save_said_of_a_row_goes_once_the_row_is_mended(qtbot: Any) -> None:
    dialog = SettingsDialog(DesktopConfig())
    qtbot.addWidget(dialog)
    row = dialog.table.add_row("127.0.0.1:11434/v1", "llama3.2")
    save = dialog.findChild(QDialogButtonBox)
    assert save is not None
    save.button(QDialogButtonBox.StandardButton.Save).click()
    assert dialog.error.text() == "Row 1: the base URL must start with http(s)://."
    qtbot.keyClicks(dialog.table.url_edit(row), "x")  # typed into: no longer what was said
    assert dialog.error.text() == ""


def test_the_note_that_new_backends_wait_for_the_reply_goes_once_they_apply(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, memory_keyring: MemoryKeyring
) -> None:
    upstream.script = Script(tokens=100, stall_after=3)
    gui.send("Tell me a long story")
    qtbot.waitUntil(lambda: "t2" in gui.transcript_text(), timeout=10_000)
    dialog = add_backend(gui, upstream, "")
    old_client = gui.window.client
    save(dialog)
    assert gui.window.banner.text() == "The new backends apply when the current reply ends."
    assert gui.window.banner.isVisible()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.stop_reply()
    # The reply ended: the server restarts with them, and the note is no longer true.
    qtbot.waitUntil(lambda: gui.window.client not in (None, old_client), timeout=20_000)
    qtbot.waitUntil(lambda: not gui.app._restart_pending and not gui.app.tasks, timeout=10_000)
    assert not gui.window.banner.isVisible(), gui.window.banner.text()


def test_a_context_measure_cut_by_a_server_restart_is_no_error(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    """The context meter is measured again as a reply ends, which is when a restart for new
    backends begins: a measure the restart's closing of the client cut was shown as "cannot
    reach Parley's server" (in place of the note that the backends wait for the reply, which
    then stayed up). Its answer is moot, and so is its failure."""
    upstream.script = Script(tokens=2)
    window = gui.window
    with qtbot.waitSignal(window.reply_finished, timeout=10_000):
        gui.send("Hello")
    live, server = window.client, gui.app.server
    assert live is not None and server is not None
    # A client of the window's own, closed as a restart closes the window's.
    going = ParleyClient(live.base_url, server.settings.token)
    before = asyncio.all_tasks()
    window.connect_client(going)
    begun = asyncio.all_tasks() - before  # the list, the status, the meter: asked with it
    # (the status stream that stays open is not one that ends)
    begun = {task for task in begun if "follow_status" not in task.get_coro().__qualname__}
    qtbot.waitUntil(lambda: all(task.done() for task in begun), timeout=10_000)
    shown: list[str] = []
    window.error_shown.connect(shown.append)
    before = asyncio.all_tasks()
    window.model_view.refresh()  # a measure on its way
    (measure,) = asyncio.all_tasks() - before
    window.disconnect_client()  # what a restart does before it closes the client
    run(qtbot, going.aclose())
    qtbot.waitUntil(measure.done, timeout=10_000)
    assert shown == []
    window.connect_client(live)  # the meter measured again, with the client there is now
    qtbot.waitUntil(window.model_view.meter.isVisible, timeout=10_000)
