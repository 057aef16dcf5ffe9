"""Models already on this computer: the models page lists the GGUFs Ollama and
LM Studio keep (laid out by the test as they lay them out) among its rows, and "Use" adds
one where it is — nothing copied — so the picker offers it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop.models.found_row import FoundRow
from desktop.models.page import ModelsPage
from server.models.bundled import bundled_gguf
from tests.desktop.conftest import GuiApp, run
from tests.desktop.models.pages import model_names, open_page
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


def found_names(page: ModelsPage) -> list[str]:
    return [row.title.text() for row in page.list.found.rows.values()]


def found_row(page: ModelsPage, name: str) -> FoundRow:
    return next(row for row in page.list.found.rows.values() if row.title.text() == name)


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
    page = open_page(gui, qtbot)
    qtbot.waitUntil(lambda: "smollm2:135m" in found_names(page), timeout=15_000)
    row = found_row(page, "smollm2:135m")
    assert "Found in Ollama" in row.state.text()
    assert any("LM Studio" in r.state.text() for r in page.list.found.rows.values())
    row.use_button.click()
    qtbot.waitUntil(lambda: "nothing was copied" in page.message.text(), timeout=15_000)
    # A model now: its row is among the models, no longer among the files found.
    qtbot.waitUntil(lambda: "smollm2:135m" in model_names(page), timeout=15_000)
    qtbot.waitUntil(lambda: "smollm2:135m" not in found_names(page), timeout=15_000)

    assert window.client is not None
    listed = run(qtbot, window.client.models.all())
    added = next(m for m in listed if m["name"] == "smollm2:135m")
    gguf = added.get("gguf")
    assert gguf is not None and Path(gguf["path"]).stat().st_ino == blob.stat().st_ino
    assert not list(data_dir.rglob("*.gguf"))  # nothing copied into Parley's data
    picker = window.model_picker
    qtbot.waitUntil(lambda: picker.combo.findText("smollm2:135m") >= 0, timeout=10_000)
    page.reject()
