"""Models already on this computer (issue 39): Models → "On this computer…" lists the GGUFs
Ollama and LM Studio keep (laid out by the test as they lay them out), and "Use this model"
adds one where it is — nothing copied — so the picker offers it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop.models.found_dialog import FoundDialog
from desktop.models.models_dialog import ModelsDialog
from server.models.bundled import bundled_gguf
from tests.desktop.conftest import GuiApp, run
from tests.server.models.discovery.layouts import Home, tiny_gguf

CLEARED = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME", "APPDATA")


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Home:
    made = Home(tmp_path_factory.mktemp("home"))
    for name in CLEARED:
        monkeypatch.delenv(name, raising=False)
    for name, value in made.environ().items():
        monkeypatch.setenv(name, value)
    return made


def names(table: Any) -> list[str]:
    return [str(table.item(row, 0).text()) for row in range(table.rowCount())]


def test_a_model_ollama_keeps_is_listed_and_used_in_place(
    home: Home, gui_factory: Any, qtbot: Any, tmp_path: Path, data_dir: Path
) -> None:
    copy = tmp_path / "own-copy.gguf"  # not the bundled file itself (that is a model already)
    shutil.copyfile(bundled_gguf(), copy)
    blob = home.ollama_model("smollm2", "135m", source=copy)
    tiny = tiny_gguf(tmp_path / "tiny.gguf")
    home_file = home.lmstudio_file("someone", "Tiny-GGUF", "tiny-Q8_0.gguf")
    home_file.parent.mkdir(parents=True)
    shutil.copyfile(tiny, home_file)

    gui: GuiApp = gui_factory()
    window = gui.window
    window.chat_bar.models_button.click()
    models = window.findChild(ModelsDialog, "models-dialog")
    assert models is not None
    models.found_button.click()
    dialog = window.findChild(FoundDialog, "found-dialog")
    assert dialog is not None
    qtbot.waitUntil(lambda: "smollm2:135m" in names(dialog.table), timeout=15_000)
    row = names(dialog.table).index("smollm2:135m")
    assert "Ollama" in dialog.table.item(row, 1).text()
    assert any(
        "LM Studio" in dialog.table.item(r, 1).text() for r in range(dialog.table.rowCount())
    )
    dialog.table.selectRow(row)
    assert dialog.use_button.isEnabled()
    dialog.use_button.click()
    qtbot.waitUntil(lambda: "nothing was copied" in dialog.message.text(), timeout=15_000)
    qtbot.waitUntil(
        lambda: (
            dialog.table.item(names(dialog.table).index("smollm2:135m"), 4).text() == "smollm2:135m"
        ),
        timeout=15_000,
    )
    assert not dialog.use_button.isEnabled()  # a model already

    assert window.client is not None
    listed = run(qtbot, window.client.models.all())
    added = next(m for m in listed if m["name"] == "smollm2:135m")
    gguf = added.get("gguf")
    assert gguf is not None and Path(gguf["path"]).stat().st_ino == blob.stat().st_ino
    assert not list(data_dir.rglob("*.gguf"))  # nothing copied into Parley's data
    picker = window.model_picker
    qtbot.waitUntil(lambda: picker.combo.findText("smollm2:135m") >= 0, timeout=10_000)
    dialog.reject()
    models.reject()
