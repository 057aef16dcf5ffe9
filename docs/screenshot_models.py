"""Screenshots of the models page (Models in the chat bar): its Models tab with a download in
flight (progress, speed, time left) and the bundled model loaded, its Download tab with a
search's results and a repository's files, and its Models tab showing the files found on this
computer — against a local hub (tests/support/hub.py) and a made-up home holding an Ollama
store and an LM Studio folder; the real app and its embedded server.

    QT_QPA_PLATFORM=offscreen QT_QUICK_BACKEND=software python docs/screenshot_models.py [OUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtWidgets import QApplication, QTableWidget

from desktop.app import App
from desktop.embedded import launch_settings
from desktop.event_loop import WindowEventLoop
from desktop.models.page import ModelsPage
from desktop.settings.config import DesktopConfig
from server.models.bundled import bundled_gguf
from tests.server.models.discovery.layouts import Home
from tests.support.hub import HubFile, LocalHub, tiny_gguf

SMOL = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF"
Q4_1 = "SmolLM2-135M-Instruct-Q4_1.gguf"


def local_hub(tmp: Path) -> tuple[LocalHub, HubFile]:
    hub = LocalHub().start()
    # Past 40 MB the file comes a byte at a time: a download in flight, at a slow speed.
    served = HubFile(bundled_gguf(), drip_at=40 * 1024 * 1024, drip_every=0)
    hub.add(SMOL, {
        Q4_1: served,
        "SmolLM2-135M-Instruct-Q8_0.gguf": HubFile(tiny_gguf(tmp / "q8.gguf", 145_000_000, "q8")),
        "SmolLM2-135M-Instruct-F16.gguf": HubFile(tiny_gguf(tmp / "f16.gguf", 271_000_000, "f")),
    }, downloads=48_211)  # fmt: skip
    hub.add("bartowski/Qwen2.5-1.5B-Instruct-GGUF",
            {"Qwen2.5-1.5B-Instruct-Q4_K_M.gguf": HubFile(tiny_gguf(tmp / "q.gguf", 1000, "q"))},
            downloads=120_345)  # fmt: skip
    hub.add("meta-llama/Llama-3.2-3B-Instruct-GGUF",
            {"Llama-3.2-3B-Instruct-Q4_K_M.gguf": HubFile(tiny_gguf(tmp / "l.gguf", 1000, "l"))},
            gated=True, downloads=9_000)  # fmt: skip
    return hub, served


def made_up_home(tmp: Path) -> Home:
    home = Home(tmp / "home")
    copy = tmp / "smollm2.gguf"
    shutil.copyfile(bundled_gguf(), copy)
    home.ollama_model("smollm2", "135m", source=copy)
    lmstudio = home.lmstudio_file("lmstudio-community", "SmolLM2-GGUF", "SmolLM2-Q8_0.gguf")
    lmstudio.parent.mkdir(parents=True)
    shutil.copyfile(tiny_gguf(tmp / "t.gguf", 145_000_000, "lm"), lmstudio)
    return home


async def until(condition: Callable[[], object], seconds: float = 30) -> None:
    for _ in range(int(seconds / 0.1)):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise TimeoutError


def row_of(table: QTableWidget, first: str) -> int:
    """The row whose first cell says `first`."""
    for row in range(table.rowCount()):
        item = table.item(row, 0)
        if item is not None and item.text() == first:
            return row
    raise LookupError(first)


async def shoot(out: Path, tmp: Path, served: HubFile) -> None:
    app = App(launch_settings(["--data-dir", str(tmp / "data")]), DesktopConfig.load())
    task = asyncio.ensure_future(app.run())
    window = app.window
    await until(lambda: window.client is not None)
    window.chat_bar.models_button.click()
    await until(lambda: window.findChild(ModelsPage, "models-page") is not None)
    page = window.findChild(ModelsPage, "models-page")
    assert page is not None
    await until(lambda: bool(page.list.models.rows) and bool(page.list.found.rows))

    # The bundled model, loaded.
    (bundled,) = page.list.models.rows.values()
    bundled.load_button.click()
    await until(lambda: bundled.state.text().startswith("Loaded · "), 120)

    # The Download tab: a search's results, a repository's files.
    page.tabs.setCurrentWidget(page.hub)
    hub = page.hub
    hub.query.setText("instruct")
    hub.search_button.click()
    await until(lambda: hub.repos.rowCount() == 3)
    hub.repos.selectRow(row_of(hub.repos, SMOL))
    await until(lambda: hub.files.rowCount() == 3)
    hub.files.selectRow(row_of(hub.files, Q4_1))
    await asyncio.sleep(0.5)
    page.grab().save(str(out / "models-download.png"))

    # Download it: its row on the Models tab, in flight.
    hub.download_button.click()
    await until(lambda: page.tabs.currentIndex() == 0 and bool(page.list.downloads.rows))
    (row,) = page.list.downloads.rows.values()
    await until(served.held.is_set)
    await until(lambda: "left" in row.figures.text())
    await asyncio.sleep(2)
    page.grab().save(str(out / "models.png"))

    # Done: the files found on this computer, below the models.
    served.release_event.set()
    await until(lambda: not page.list.downloads.rows, 120)
    found = page.list.found
    page.list.ensureWidgetVisible(found, 0, 0)
    page.list.verticalScrollBar().setValue(page.list.verticalScrollBar().maximum())
    await asyncio.sleep(0.5)
    page.grab().save(str(out / "models-on-this-computer.png"))
    page.reject()
    window.close()
    await task


def main() -> None:
    out = Path(sys.argv[1] if sys.argv[1:] else Path(__file__).parent / "screenshots")
    tmp = Path(tempfile.mkdtemp(prefix="parley-shots-"))
    hub, served = local_hub(tmp)
    home = made_up_home(tmp)
    os.environ.update(home.environ())
    os.environ.update({"HF_ENDPOINT": hub.url, "HF_TOKEN": "",
                       "XDG_CONFIG_HOME": str(tmp / "config")})  # fmt: skip
    qt = QApplication([])
    loop = WindowEventLoop(qt)
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(shoot(out, tmp, served))
    finally:
        hub.release()
        hub.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
