"""Models on the page, each a row: Load and Eject on the row with the state said in words
("Not loaded", "Loading…", "Loaded · 340 MB", "In use by 1 reply"), and an eject of a model
a reply uses asked about first."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox

from server.models.bundled import bundled_gguf
from tests.desktop.conftest import GuiApp, run
from tests.desktop.models.pages import model_row, open_page
from tests.support.upstream import Script, ScriptedUpstream


def added(gui: GuiApp, qtbot: Any, tmp_path: Path, name: str) -> None:
    copy = tmp_path / f"{name}.gguf"
    shutil.copyfile(bundled_gguf(), copy)
    client = gui.window.client
    assert client is not None
    run(qtbot, client.models.add_local(str(copy)))


def test_load_and_eject_on_the_row_say_the_state_in_words(
    gui: GuiApp, qtbot: Any, tmp_path: Path
) -> None:
    added(gui, qtbot, tmp_path, "my-model")
    page = open_page(gui, qtbot)
    qtbot.waitUntil(lambda: "my-model" in page.list.models.rows, timeout=10_000)
    row = model_row(page, "my-model")
    assert row.state.text() == "Not loaded"
    assert row.load_button.isVisibleTo(page) and not row.eject_button.isVisibleTo(page)

    row.load_button.click()
    assert row.state.text() == "Loading…" and row.state.property("tone") == "warning"
    qtbot.waitUntil(lambda: row.state.text().startswith("Loaded · "), timeout=60_000)
    assert row.state.text().endswith(" MB")  # its process's memory
    assert row.state.property("tone") == "success"
    assert row.eject_button.isVisibleTo(page) and not row.load_button.isVisibleTo(page)

    row.eject_button.click()
    qtbot.waitUntil(lambda: row.state.text() == "Not loaded", timeout=30_000)
    assert "Ejected my-model" in page.message.text()
    client = gui.window.client
    assert client is not None
    listed = {m["name"]: m for m in run(qtbot, client.models.all())}
    assert listed["my-model"].get("lifecycle") == "not_loaded"


def test_a_model_a_reply_uses_says_so_and_its_eject_asks_first(
    gui: GuiApp, qtbot: Any, tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    added(gui, qtbot, tmp_path, "helper-model")
    task = "Write a long story about a lighthouse keeper, in many chapters."
    upstream.queue = [Script(tokens=0, tool_calls=[{"name": "delegate", "arguments":
        json.dumps({"task": task, "model": "helper-model"})}])]  # fmt: skip
    upstream.script = Script(texts=["never said"])
    gui.send("Ask a helper for a story.")
    page = open_page(gui, qtbot)
    qtbot.waitUntil(lambda: "helper-model" in page.list.models.rows, timeout=10_000)
    row = model_row(page, "helper-model")
    qtbot.waitUntil(lambda: row.state.text().startswith("In use by 1 reply"), timeout=60_000)

    row.eject_button.click()
    qtbot.waitUntil(lambda: page.findChild(QMessageBox, "stop-and-eject") is not None,
                    timeout=10_000)  # fmt: skip
    ask = page.findChild(QMessageBox, "stop-and-eject")
    assert ask is not None and "helper-model is replying" in ask.text()
    (stop,) = [b for b in ask.buttons() if b.text() == "Stop and eject"]
    stop.click()
    qtbot.waitUntil(lambda: "Ejected helper-model" in page.message.text(), timeout=20_000)
    qtbot.waitUntil(lambda: row.state.text() == "Not loaded", timeout=10_000)
    qtbot.waitUntil(lambda: "Stopped" in gui.transcript_text(), timeout=10_000)
    assert "helper-model" in page.list.models.rows  # ejected, not removed


def test_how_long_a_model_stays_loaded_when_idle_is_set_on_its_row(
    gui: GuiApp, qtbot: Any, tmp_path: Path, data_dir: Path
) -> None:
    added(gui, qtbot, tmp_path, "my-model")
    page = open_page(gui, qtbot)
    qtbot.waitUntil(lambda: "my-model" in page.list.models.rows, timeout=10_000)
    model_row(page, "my-model").settings_button.click()
    box = page.local_settings
    assert box.isVisibleTo(page) and box.name == "my-model"
    box.keep_alive.setValue(5)  # minutes
    box.apply_button.click()
    qtbot.waitUntil(lambda: "time loaded when idle" in page.message.text(), timeout=10_000)
    saved = json.loads((data_dir / "models.json").read_text())["settings"]["my-model"]
    assert saved["keep_alive"] == 300 and "n_ctx" not in saved  # only what changed
    box.keep_alive.setValue(-1)
    assert box.keep_alive.text() == "never"
