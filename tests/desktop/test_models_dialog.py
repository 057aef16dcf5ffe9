"""The Models dialog against the real app and its embedded server: it lists every model with
its state, adds a GGUF file (a bad one is refused with the server's reason), removes it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox

from desktop.models.models_dialog import ModelsDialog
from server.models.bundled import BUNDLED_MODEL_NAME, bundled_gguf
from tests.desktop.conftest import GuiApp, run
from tests.support.upstream import Script, ScriptedUpstream


def names(dialog: ModelsDialog) -> list[str]:
    return [str(dialog.table.item(row, 0).text()) for row in range(dialog.table.rowCount())]


def test_the_dialog_lists_adds_and_removes_models(
    gui: GuiApp, qtbot: Any, tmp_path: Path, data_dir: Path
) -> None:
    gui.window.chat_bar.models_button.click()
    dialog = gui.window.findChild(ModelsDialog, "models-dialog")
    assert dialog is not None
    qtbot.waitUntil(lambda: BUNDLED_MODEL_NAME in names(dialog), timeout=10_000)
    assert any(name.startswith("scripted") for name in names(dialog))
    bundled_row = names(dialog).index(BUNDLED_MODEL_NAME)
    assert "Q4_1" in dialog.table.item(bundled_row, 5).text()
    fits = dialog.table.item(bundled_row, 3)
    assert fits.text() in ("fits", "slow", "won't fit")
    assert "KV cache" in fits.toolTip() and "memory free now" in fits.toolTip()
    assert dialog.table.item(bundled_row, 4).text() == "no"  # SmolLM2's template: no tools
    dialog.table.selectRow(bundled_row)
    assert not dialog.remove_button.isEnabled()  # the bundled model stays
    box = dialog.local_settings
    assert box.isVisibleTo(dialog) and box.n_ctx.value() == 4096
    box.n_ctx.setValue(2048)
    box.apply_button.click()
    qtbot.waitUntil(lambda: "starts with these settings" in dialog.message.text(), timeout=10_000)
    saved = json.loads((data_dir / "models.json").read_text())["settings"]
    assert saved[BUNDLED_MODEL_NAME]["n_ctx"] == 2048  # the server has it, and remembers it
    assert box.n_ctx.value() == 2048
    dialog.table.selectRow(names(dialog).index("scripted (default)"))
    assert not box.isVisibleTo(dialog)  # an upstream has none

    text = tmp_path / "notes.gguf"
    text.write_text("not a model\n" * 50)
    dialog.add_requested.emit(str(text))
    qtbot.waitUntil(lambda: "not a GGUF model file" in dialog.message.text(), timeout=10_000)
    assert "notes" not in names(dialog)

    # The bundled file again, by a link: refused, naming the model it already is.
    link = tmp_path / "again.gguf"
    os.symlink(bundled_gguf(), link)
    dialog.add_requested.emit(str(link))
    qtbot.waitUntil(lambda: "is already the model" in dialog.message.text(), timeout=10_000)
    assert BUNDLED_MODEL_NAME in dialog.message.text() and "again" not in names(dialog)

    copy = tmp_path / "my-model.gguf"
    shutil.copyfile(bundled_gguf(), copy)
    dialog.add_requested.emit(str(copy))
    qtbot.waitUntil(lambda: "my-model" in names(dialog), timeout=10_000)
    dialog.table.selectRow(names(dialog).index("my-model"))
    assert dialog.remove_button.isEnabled()
    # Set as default: the server remembers it, the list says so.
    assert dialog.default_button.isEnabled()
    dialog.default_button.click()
    qtbot.waitUntil(lambda: "my-model (default)" in names(dialog), timeout=10_000)
    assert json.loads((data_dir / "models.json").read_text())["default"] == "my-model"
    assert not dialog.default_button.isEnabled()
    qtbot.waitUntil(lambda: "my-model (default)" in names(dialog), timeout=10_000)
    dialog.table.selectRow(names(dialog).index("my-model (default)"))
    # The picker lists it too (the window's status poll).
    picker = gui.window.model_picker.combo
    qtbot.waitUntil(lambda: picker.findText("my-model") >= 0, timeout=10_000)

    dialog.remove_button.click()
    qtbot.waitUntil(lambda: not any("my-model" in n for n in names(dialog)), timeout=10_000)
    assert "Removed my-model" in dialog.message.text()
    dialog.reject()
    qtbot.waitUntil(lambda: gui.app.models.dialog is None, timeout=5_000)


def test_removing_a_model_a_reply_uses_asks_to_stop_it_first(
    gui: GuiApp, qtbot: Any, tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    # Issue 41: the reply's sub-agent uses the added model; Remove asks, and "Stop and
    # remove" ends the reply as its Stop would, then the model goes.
    copy = tmp_path / "helper-model.gguf"
    shutil.copyfile(bundled_gguf(), copy)
    client = gui.window.client
    assert client is not None
    run(qtbot, client.models.add_local(str(copy)))
    task = "Write a long story about a lighthouse keeper, in many chapters."
    upstream.queue = [Script(tokens=0, tool_calls=[{"name": "delegate", "arguments":
        json.dumps({"task": task, "model": "helper-model"})}])]  # fmt: skip
    upstream.script = Script(texts=["never said"])
    gui.send("Ask a helper for a story.")

    def in_use() -> bool:
        found = {m["name"]: m for m in run(qtbot, client.models.all())}
        return bool(found["helper-model"]["in_use"])

    qtbot.waitUntil(in_use, timeout=30_000)
    gui.window.chat_bar.models_button.click()
    dialog = gui.window.findChild(ModelsDialog, "models-dialog")
    assert dialog is not None
    qtbot.waitUntil(lambda: "helper-model" in names(dialog), timeout=10_000)
    dialog.table.selectRow(names(dialog).index("helper-model"))
    dialog.remove_button.click()
    qtbot.waitUntil(lambda: dialog.findChild(QMessageBox, "stop-and-remove") is not None,
                    timeout=10_000)  # fmt: skip
    ask = dialog.findChild(QMessageBox, "stop-and-remove")
    assert ask is not None and "helper-model is replying" in ask.text()
    assert "helper-model" in names(dialog)  # nothing removed before the answer
    (stop,) = [b for b in ask.buttons() if b.text() == "Stop and remove"]
    stop.click()
    qtbot.waitUntil(lambda: "Removed helper-model" in dialog.message.text(), timeout=15_000)
    qtbot.waitUntil(lambda: "helper-model" not in names(dialog), timeout=5_000)
    qtbot.waitUntil(lambda: "Stopped" in gui.transcript_text(), timeout=10_000)
    assert not any("never said" in str(r.body) for r in upstream.records)
    dialog.reject()


def test_the_picker_says_when_the_model_cannot_call_tools(gui: GuiApp, qtbot: Any) -> None:
    picker = gui.window.model_picker
    qtbot.waitUntil(lambda: picker.combo.findText(BUNDLED_MODEL_NAME) >= 0, timeout=10_000)
    picker.combo.setCurrentIndex(picker.combo.findText(BUNDLED_MODEL_NAME))
    qtbot.waitUntil(lambda: "cannot call tools" in picker.state.text(), timeout=10_000)
    picker.combo.setCurrentIndex(picker.combo.findText("scripted"))
    qtbot.waitUntil(lambda: "cannot call tools" not in picker.state.text(), timeout=10_000)
