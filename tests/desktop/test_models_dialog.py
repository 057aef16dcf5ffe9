"""The models page against the real app and its embedded server: it lists every model with
its facts and state, adds a GGUF file (a bad one is refused with the server's reason),
removes it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox

from server.models.bundled import BUNDLED_MODEL_NAME, bundled_gguf
from tests.desktop.conftest import GuiApp, run
from tests.desktop.models.pages import model_names, model_row, open_page
from tests.support.upstream import Script, ScriptedUpstream


def test_the_page_lists_adds_and_removes_models(
    gui: GuiApp, qtbot: Any, tmp_path: Path, data_dir: Path
) -> None:
    page = open_page(gui, qtbot)
    qtbot.waitUntil(lambda: BUNDLED_MODEL_NAME in model_names(page), timeout=10_000)
    assert any(name.startswith("scripted") for name in model_names(page))
    bundled = model_row(page, BUNDLED_MODEL_NAME)
    assert "Q4_1" in bundled.facts.text() and "4,096-token context" in bundled.facts.text()
    assert any(verdict in bundled.facts.text() for verdict in ("fits", "slow", "won't fit"))
    assert "KV cache" in bundled.facts.toolTip() and "memory free now" in bundled.facts.toolTip()
    assert "no tools" in bundled.facts.text()  # SmolLM2's template: no tools
    assert not bundled.remove_button.isVisibleTo(page)  # the bundled model stays
    bundled.settings_button.click()
    box = page.local_settings
    assert box.isVisibleTo(page) and box.n_ctx.value() == 4096
    box.n_ctx.setValue(2048)
    box.apply_button.click()
    qtbot.waitUntil(lambda: "starts with these settings" in page.message.text(), timeout=10_000)
    saved = json.loads((data_dir / "models.json").read_text())["settings"]
    assert saved[BUNDLED_MODEL_NAME]["n_ctx"] == 2048  # the server has it, and remembers it
    qtbot.waitUntil(lambda: "2,048-token context" in bundled.facts.text(), timeout=10_000)
    assert not model_row(page, "scripted").settings_button.isVisibleTo(page)  # an upstream's

    text = tmp_path / "notes.gguf"
    text.write_text("not a model\n" * 50)
    page.add_requested.emit(str(text))
    qtbot.waitUntil(lambda: "not a GGUF model file" in page.message.text(), timeout=10_000)
    assert "notes" not in model_names(page)

    # The bundled file again, by a link: refused, naming the model it already is.
    link = tmp_path / "again.gguf"
    os.symlink(bundled_gguf(), link)
    page.add_requested.emit(str(link))
    qtbot.waitUntil(lambda: "is already the model" in page.message.text(), timeout=10_000)
    assert BUNDLED_MODEL_NAME in page.message.text() and "again" not in model_names(page)

    copy = tmp_path / "my-model.gguf"
    shutil.copyfile(bundled_gguf(), copy)
    page.add_requested.emit(str(copy))
    qtbot.waitUntil(lambda: "my-model" in model_names(page), timeout=10_000)
    mine = model_row(page, "my-model")
    assert mine.remove_button.isVisibleTo(page)
    # Set as default: the server remembers it, the row says so.
    assert mine.default_button.isEnabled()
    mine.default_button.click()
    qtbot.waitUntil(lambda: "my-model · default" in mine.title.text(), timeout=10_000)
    assert json.loads((data_dir / "models.json").read_text())["default"] == "my-model"
    assert not mine.default_button.isEnabled()
    # The picker lists it too (the window's status poll).
    picker = gui.window.model_picker.combo
    qtbot.waitUntil(lambda: picker.findText("my-model") >= 0, timeout=10_000)

    mine.remove_button.click()
    qtbot.waitUntil(lambda: "my-model" not in model_names(page), timeout=10_000)
    assert "Removed my-model" in page.message.text()
    page.reject()
    qtbot.waitUntil(lambda: gui.app.models.dialog is None, timeout=5_000)


def test_removing_a_model_a_reply_uses_asks_to_stop_it_first(
    gui: GuiApp, qtbot: Any, tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    # The reply's sub-agent uses the added model; Remove asks, and "Stop and
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
    page = open_page(gui, qtbot)
    qtbot.waitUntil(lambda: "helper-model" in model_names(page), timeout=10_000)
    model_row(page, "helper-model").remove_button.click()
    qtbot.waitUntil(lambda: page.findChild(QMessageBox, "stop-and-remove") is not None,
                    timeout=10_000)  # fmt: skip
    ask = page.findChild(QMessageBox, "stop-and-remove")
    assert ask is not None and "helper-model is replying" in ask.text()
    assert "helper-model" in model_names(page)  # nothing removed before the answer
    (stop,) = [b for b in ask.buttons() if b.text() == "Stop and remove"]
    stop.click()
    qtbot.waitUntil(lambda: "Removed helper-model" in page.message.text(), timeout=15_000)
    qtbot.waitUntil(lambda: "helper-model" not in model_names(page), timeout=5_000)
    qtbot.waitUntil(lambda: "Stopped" in gui.transcript_text(), timeout=10_000)
    assert not any("never said" in str(r.body) for r in upstream.records)
    page.reject()


def test_the_picker_says_when_the_model_cannot_call_tools(gui: GuiApp, qtbot: Any) -> None:
    picker = gui.window.model_picker
    qtbot.waitUntil(lambda: picker.combo.findText(BUNDLED_MODEL_NAME) >= 0, timeout=10_000)
    picker.combo.setCurrentIndex(picker.combo.findText(BUNDLED_MODEL_NAME))
    qtbot.waitUntil(lambda: "cannot call tools" in picker.state.text(), timeout=10_000)
    picker.combo.setCurrentIndex(picker.combo.findText("scripted"))
    qtbot.waitUntil(lambda: "cannot call tools" not in picker.state.text(), timeout=10_000)
